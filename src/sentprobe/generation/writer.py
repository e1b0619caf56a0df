"""Writing generated tasks plus a ``manifest.json`` that records provenance.

Two layouts: SentEval (``<out>/<task file>``, lines ``split<TAB>label<TAB>sentence``) and
X-Probe (``<out>/<lang>/<task folder>/{tr,va,te}.txt``, lines ``sentence<TAB>label``, with
X-Probe's label names). Each file goes to a temporary name first and is moved into place
with ``os.replace``, so an interrupted run never leaves a half-written task; the manifest
is written last.

A task with a lexical split (every item has a target form: Tense, SubjNum, ObjNum) also gets
a sidecar of target forms beside each task file, with the same stem and the suffix
``.forms`` (``subj_number.txt`` -> ``subj_number.forms``; ``fr/subj_number/te.txt`` ->
``te.forms``): UTF-8, one line per line of the task file, in the same order, holding that
item's target form (the lower-cased word the split keeps in one partition), each line ended
by ``\n``. The manifest's task entry lists them (``forms``: paths relative to the suite
folder, in split order), so statistics can resample forms rather than items and audits can
count the forms of each class.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.datasets.loaders.common import FORMS_SUFFIX
from sentprobe.datasets.task import SPLITS
from sentprobe.io import atomic_write_text, inside

from .base import SPLIT_CODES, GeneratedTask


def senteval_lines(task: GeneratedTask) -> str:
    """``split<TAB>label<TAB>sentence`` lines, train then dev then test."""
    out = []
    for split in SPLITS:
        for sentence, label in task.splits.get(split, []):
            if any(c in sentence or c in label for c in "\t\n\r"):
                raise ValueError(f"{task.name}: tab or newline in example {sentence!r}")
            out.append(f"{SPLIT_CODES[split]}\t{label}\t{sentence}\n")
    return "".join(out)


def item_forms(task: GeneratedTask) -> dict[str, list[str]] | None:
    """``{split: [target form of each example]}`` in split order when every example has one
    (a lexical split), else None (no sidecar: SOMO's originals have no target)."""
    forms = task.target_forms
    if forms is None:
        return None
    out: dict[str, list[str]] = {}
    for split in SPLITS:
        column = forms.get(split, [])
        if any(f is None for f in column):
            return None
        strings = [str(f) for f in column]
        bad = next((f for f in strings if not f or any(c in f for c in "\t\n\r")), None)
        if bad is not None:
            raise ValueError(f"{task.name}: target form {bad!r} is empty or holds a tab or newline")
        out[split] = strings
    return out


def forms_text(forms: Iterable[str]) -> str:
    """A sidecar's text: one form a line."""
    return "".join(f"{form}\n" for form in forms)


def forms_paths(task: GeneratedTask, layout: str, lang: str | None = None) -> list[str]:
    """The sidecar paths of ``task`` relative to the suite folder (``[]`` without one)."""
    forms = item_forms(task)
    if forms is None:
        return []
    if layout == "xprobe":
        folder = Path(lang or "") / Path(task.file).stem
        return [str(folder / f"{SPLIT_CODES[s]}{FORMS_SUFFIX}") for s in SPLITS]
    return [str(Path(task.file).with_suffix(FORMS_SUFFIX))]


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
    for t in tasks:
        if paths := forms_paths(t, "senteval"):
            manifest["tasks"][t.name]["forms"] = paths
    return manifest


def write_suite(out_dir: str | Path, tasks: Sequence[GeneratedTask], manifest: dict) -> Path:
    """Write every task file, then ``manifest.json``; returns the manifest path. A target
    that leads outside ``out_dir`` (an existing suite folder holding a link elsewhere) is
    refused before anything is written."""
    out_dir = Path(out_dir)
    targets = [inside(out_dir, task.file) for task in tasks]  # all checked before any write
    for task, target in zip(tasks, targets):
        atomic_write_text(target, senteval_lines(task))
        forms = item_forms(task)
        if forms is not None:
            column = [f for split in SPLITS for f in forms[split]]
            atomic_write_text(target.with_suffix(FORMS_SUFFIX), forms_text(column))
    path = out_dir / "manifest.json"
    atomic_write_text(path, json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    return path


def xprobe_files(task: GeneratedTask, lang: str) -> dict[str, str]:
    """``{relative path: text}`` of a task in X-Probe's layout, labels renamed X-Probe's way."""
    from .suite import XPROBE_LABELS  # suite imports the generators; keep writer light

    mapping = XPROBE_LABELS.get(task.name, {})
    folder = Path(lang) / Path(task.file).stem
    out = {}
    for split in SPLITS:
        lines = []
        for sentence, label in task.splits.get(split, []):
            label = mapping.get(label, label)
            if any(c in sentence or c in label for c in "\t\n\r"):
                raise ValueError(f"{task.name}: tab or newline in example {sentence!r}")
            lines.append(f"{sentence}\t{label}\n")
        out[str(folder / f"{SPLIT_CODES[split]}.txt")] = "".join(lines)
    forms = item_forms(task)
    if forms is not None:
        for split in SPLITS:
            name = f"{SPLIT_CODES[split]}{FORMS_SUFFIX}"
            out[str(folder / name)] = forms_text(forms[split])
    return out


def corpus_sha256(sentences: Iterable[AnnotatedSentence | Sequence[str]]) -> str:
    """SHA-256 of the corpus as given: records as sorted-key JSON lines (annotations
    included, so a re-annotation changes it), token sequences as space-joined lines."""
    return sha256_lines(
        json.dumps(s.to_json(), sort_keys=True, ensure_ascii=False)
        if isinstance(s, AnnotatedSentence)
        else " ".join(s)
        for s in sentences
    )


def suite_manifest(
    tasks: Sequence[GeneratedTask],
    *,
    corpus_sha256: str,
    annotator: dict,
    seed: int,
    lang: str,
    layout: Literal["senteval", "xprobe"] = "senteval",
    generator_version: str | None = None,
    **fields,
) -> dict:
    """Manifest of a generated suite: corpus hash, annotator (name/version from the caller),
    seed, and per task its parameters, counts per class and split, and rejection stats."""
    manifest = build_manifest(
        tasks,
        language=lang,
        layout=layout,
        corpus_sha256=corpus_sha256,
        annotator=dict(annotator),
        generator={"version": generator_version, "seed": seed},
        **fields,
    )
    for t in tasks:
        entry = manifest["tasks"][t.name]
        entry["params"] = _jsonable(t.params)
        entry["stats"] = dict(sorted(t.stats.items()))
        if layout == "xprobe":
            entry["file"] = str(Path(lang) / Path(t.file).stem)
            if paths := forms_paths(t, "xprobe", lang):
                entry["forms"] = paths
    return manifest


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def write_generated_suite(
    out_dir: str | Path,
    tasks: Sequence[GeneratedTask],
    manifest: dict,
    layout: Literal["senteval", "xprobe"] = "senteval",
    lang: str | None = None,
) -> Path:
    """Write a suite in either layout, every file atomically, the manifest last; a folder
    that leads outside ``out_dir`` is refused before anything is written (a file that is a
    link is replaced, never written through)."""
    if layout == "senteval":
        return write_suite(out_dir, tasks, manifest)
    if layout != "xprobe":
        raise ValueError(f"layout must be 'senteval' or 'xprobe', not {layout!r}")
    lang = lang or manifest.get("language")
    if not lang:
        raise ValueError("the X-Probe layout needs a language (lang=...)")
    out_dir = Path(out_dir)
    for task in tasks:  # every task folder checked before any write
        inside(out_dir, Path(lang) / Path(task.file).stem)
    for task in tasks:
        for rel, text in xprobe_files(task, lang).items():
            atomic_write_text(inside(out_dir, rel), text)
    path = out_dir / "manifest.json"
    atomic_write_text(path, json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    return path
