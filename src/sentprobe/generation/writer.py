"""Writing generated tasks as SentEval files plus a ``manifest.json`` that records provenance.

Each file goes to a temporary name first and is moved into place with ``os.replace``, so an
interrupted run never leaves a half-written task; the manifest is written last.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from sentprobe.datasets.task import SPLITS

from .base import SPLIT_CODES, GeneratedTask


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write UTF-8 text with ``\\n`` line ends, replacing ``path`` only once complete."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; package data must be world-readable
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def senteval_lines(task: GeneratedTask) -> str:
    """``split<TAB>label<TAB>sentence`` lines, train then dev then test."""
    out = []
    for split in SPLITS:
        for sentence, label in task.splits.get(split, []):
            if any(c in sentence or c in label for c in "\t\n\r"):
                raise ValueError(f"{task.name}: tab or newline in example {sentence!r}")
            out.append(f"{SPLIT_CODES[split]}\t{label}\t{sentence}\n")
    return "".join(out)


def sha256_lines(lines: Iterable[str]) -> str:
    """SHA-256 of the lines joined with ``\\n`` (each line terminated), streaming."""
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def build_manifest(tasks: Sequence[GeneratedTask], **fields) -> dict:
    """The manifest dict: the given top-level ``fields`` plus one entry per task."""
    manifest = dict(fields)
    manifest["tasks"] = {
        t.name: {"file": t.file, "labels": list(t.labels), "counts": t.counts()} for t in tasks
    }
    return manifest


def write_suite(out_dir: str | Path, tasks: Sequence[GeneratedTask], manifest: dict) -> Path:
    """Write every task file, then ``manifest.json``; returns the manifest path."""
    out_dir = Path(out_dir)
    for task in tasks:
        atomic_write_text(out_dir / task.file, senteval_lines(task))
    path = out_dir / "manifest.json"
    atomic_write_text(path, json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    return path
