"""Annotating a corpus once, on disk, resumable: parsing 100k+ sentences takes a while.

Layout of ``out_dir``::

    manifest.json            annotator name/versions, chunk size, chunk list, source hash
    chunk-000000.jsonl.gz    one ``AnnotatedSentence.to_json()`` per line, ``chunk_size`` lines
    chunk-000001.jsonl.gz    ...

Every chunk and every manifest update is written to a temporary file and moved into place
with ``os.replace``, so a killed run leaves only whole chunks. Each chunk records the SHA-256
of its *input* sentences: a rerun skips the finished chunks whose input is unchanged (they are
read from the source again, but not parsed), and re-annotates from the first chunk whose input
changed. The source hash in the manifest is the hash over all chunk hashes, known at the end.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from sentprobe.annotation.backends import Annotator, ConlluAnnotator, Sentence, get_annotator
from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.errors import DataError, SentprobeError
from sentprobe.io import (
    atomic_write_bytes,
    inside,
    iter_lines,
    make_dirs,
    read_text,
    write_problem,
)

FORMAT = "sentprobe-annotations/1"
MANIFEST = "manifest.json"


def _chunk_name(k: int) -> str:
    return f"chunk-{k:06d}.jsonl.gz"


_CHUNK = re.compile(r"chunk-\d{6,}\.jsonl\.gz")


def _key(item: Sentence | AnnotatedSentence) -> str:
    if isinstance(item, AnnotatedSentence):
        return (item.sent_id or "") + "\t" + " ".join(item.tokens)
    return item if isinstance(item, str) else " ".join(item)


def _hash(items: Iterable[Sentence | AnnotatedSentence]) -> str:
    h = hashlib.sha256()
    for item in items:
        h.update(_key(item).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def _is_conllu(path: Path) -> bool:
    name = path.name.lower()
    return name.endswith((".conllu", ".conllu.gz", ".conll", ".conllu.bz2", ".conllu.xz"))


def _source_items(source: str | Path | Iterable[Sentence], annotator: Annotator) -> Iterator:
    """Inputs: sentences, or gold records for the ``conllu`` annotator."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        if isinstance(annotator, ConlluAnnotator):
            return annotator.read(path)
        if _is_conllu(path):
            raise DataError(path, None, "a CoNLL-U file is gold annotation: use annotator='conllu'")
        return (line for _, line in iter_lines(path) if line.strip())
    if isinstance(annotator, ConlluAnnotator):
        raise DataError(None, None, "annotator 'conllu' needs the path of a CoNLL-U file")
    return iter(source)


def _load_manifest(out_dir: Path) -> dict[str, Any] | None:
    path = out_dir / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(read_text(inside(out_dir, MANIFEST)))  # no FIFO waited on
    except (OSError, ValueError) as e:
        raise DataError(path, None, f"unreadable annotation manifest: {e}") from None
    if manifest.get("format") != FORMAT:
        raise DataError(path, None, f"not a sentprobe annotation manifest ({FORMAT})")
    for entry in manifest.get("chunks", []):
        # chunks are read, and deleted when stale: only this folder's own chunk files
        name = entry.get("file") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not _CHUNK.fullmatch(name):
            raise DataError(path, None, f"chunk entry {name!r} is not a chunk file name")
        inside(out_dir, name, path)
    return manifest


def annotate_corpus(
    source: str | Path | Iterable[Sentence],
    out_dir: str | Path,
    annotator: str | Annotator = "spacy",
    *,
    chunk_size: int = 5000,
    pretokenized: bool = False,
    progress: bool = True,
    total: int | None = None,
) -> dict[str, Any]:
    """Annotate ``source`` into ``out_dir`` and return the manifest; resumes a stopped run.

    ``source``: sentences (strings, or token lists), a text file with one sentence per line,
    or, with ``annotator="conllu"``, a CoNLL-U file whose gold annotation is stored as is.
    ``pretokenized=True`` keeps space-separated tokens (Moses output) as the tokens.
    A run that fails before its first chunk (bad input on line 2) leaves no directory behind.
    """
    out_dir = Path(out_dir)
    created = not out_dir.exists()
    make_dirs(out_dir)
    try:
        return _annotate(source, out_dir, annotator, chunk_size, pretokenized, progress, total)
    except BaseException:
        if created and not any(out_dir.glob("chunk-*")):
            shutil.rmtree(out_dir, ignore_errors=True)
        raise


def _annotate(
    source: str | Path | Iterable[Sentence],
    out_dir: Path,
    annotator: str | Annotator,
    chunk_size: int,
    pretokenized: bool,
    progress: bool,
    total: int | None,
) -> dict[str, Any]:
    if annotator == "conllu" and isinstance(source, (str, Path)):
        annotator = ConlluAnnotator(str(source))
    ann = get_annotator(annotator)
    version = ann.version()
    old = _load_manifest(out_dir)
    if old is not None and (old["annotator"] != version or old["chunk_size"] != chunk_size):
        raise DataError(
            out_dir / MANIFEST,
            None,
            f"{out_dir} holds annotations by {old['annotator']} in chunks of "
            f"{old['chunk_size']}; asked for {version} in chunks of {chunk_size}: use another "
            "directory or delete this one",
        )
    done: list[dict[str, Any]] = list(old["chunks"]) if old else []
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "annotator": version,
        "chunk_size": chunk_size,
        "pretokenized": pretokenized,
        "source": {"name": str(source) if isinstance(source, (str, Path)) else None},
        "chunks": [],
        "n_sentences": 0,
        "complete": False,
    }

    def save() -> None:
        data = json.dumps(manifest, indent=1, ensure_ascii=False).encode("utf-8")
        _store(out_dir, MANIFEST, data)

    items = _source_items(source, ann)
    if total is None and isinstance(source, Sequence) and not isinstance(source, str):
        total = len(source)
    bar = _progress(progress, total)
    started, n_parsed = time.perf_counter(), 0

    # 1. Skip the finished prefix whose inputs are unchanged: read, hash, don't parse.
    pending: list = []
    k = 0
    while k < len(done):
        batch = list(islice(items, chunk_size))
        entry = done[k]
        if (
            len(batch) == entry["n"]
            and _hash(batch) == entry["input_sha256"]
            and (out_dir / entry["file"]).exists()
        ):
            manifest["chunks"].append(entry)
            manifest["n_sentences"] += entry["n"]
            bar.update(entry["n"])
            k += 1
            continue
        pending = batch  # changed input or missing file: re-annotate from here
        break
    for stale in done[k:]:
        (out_dir / stale["file"]).unlink(missing_ok=True)
    save()

    # 2. Annotate the rest in one stream (one worker pool), cutting it into chunks.
    rest = _chain(pending, items)
    if isinstance(ann, ConlluAnnotator):
        records: Iterator[AnnotatedSentence] = rest
        inputs: deque = deque()
        feed = None
    else:
        inputs = deque()
        feed = _tee(rest, inputs)
        records = ann.annotate(feed, pretokenized=pretokenized)
    buf_in: list = []
    buf_out: list[bytes] = []
    chunk_index = len(manifest["chunks"])

    def flush() -> None:
        nonlocal chunk_index
        name = _chunk_name(chunk_index)
        payload = gzip.compress(b"".join(buf_out), compresslevel=5, mtime=0)
        _store(out_dir, name, payload)
        entry = {"file": name, "n": len(buf_out), "input_sha256": _hash(buf_in)}
        manifest["chunks"].append(entry)
        manifest["n_sentences"] += len(buf_out)
        save()
        chunk_index += 1
        buf_in.clear()
        buf_out.clear()

    try:
        for rec in records:
            buf_in.append(inputs.popleft() if feed is not None else rec)
            line = json.dumps(rec.to_json(), ensure_ascii=False, separators=(",", ":"))
            buf_out.append(line.encode("utf-8") + b"\n")
            n_parsed += 1
            bar.update(1)
            if len(buf_out) == chunk_size:
                flush()
        if buf_out:
            flush()
    finally:
        bar.close()
    elapsed = time.perf_counter() - started
    manifest["source"]["sha256"] = hashlib.sha256(
        "".join(c["input_sha256"] for c in manifest["chunks"]).encode()
    ).hexdigest()
    manifest["complete"] = True
    manifest["last_run"] = {
        "parsed": n_parsed,
        "seconds": round(elapsed, 3),
        "sentences_per_second": round(n_parsed / elapsed, 1) if elapsed > 0 else None,
    }
    save()
    return manifest


def _store(out_dir: Path, name: str, data: bytes) -> None:
    """Write one file of the store whole, or raise one line saying why it could not be (a
    full disk, a file size limit, a read-only folder); what was stored before is intact."""
    try:
        atomic_write_bytes(out_dir / name, data, fsync=True)
    except OSError as e:
        problem = write_problem(out_dir, e, "annotation store", "output folder")
        raise SentprobeError(f"{problem} (finished chunks are kept; a rerun resumes)") from None


def _chain(first: list, rest: Iterator) -> Iterator:
    yield from first
    yield from rest


def _tee(items: Iterable, sink: deque) -> Iterator:
    """Pass items through, remembering them until their record comes back."""
    for item in items:
        sink.append(item)
        yield item


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(enabled: bool, total: int | None) -> Any:
    if not enabled:
        return _NoBar()
    from sentprobe.progress import tqdm

    return tqdm(total=total, unit=" sent", unit_scale=True, desc="annotating", smoothing=0.1)


def read_annotated(
    out_dir: str | Path, *, allow_incomplete: bool = False
) -> Iterator[AnnotatedSentence]:
    """Stream the records of an annotated corpus, chunk by chunk, in input order."""
    out_dir = Path(out_dir)
    manifest = _load_manifest(out_dir)
    if manifest is None:
        raise DataError(out_dir / MANIFEST, None, "no annotation manifest: run annotate_corpus")
    if not manifest.get("complete") and not allow_incomplete:
        raise DataError(out_dir / MANIFEST, None, "annotation run not finished: resume it first")
    for entry in manifest["chunks"]:
        path = out_dir / entry["file"]
        n = 0
        try:
            with gzip.open(path, "rt", encoding="utf-8") as f:
                for n, line in enumerate(f, start=1):  # noqa: B007
                    try:
                        yield AnnotatedSentence.from_json(json.loads(line))
                    except (json.JSONDecodeError, TypeError) as e:
                        raise DataError(path, n, f"bad annotation record: {e}") from None
        except (OSError, EOFError) as e:
            raise DataError(path, n + 1, f"unreadable chunk: {e}") from None
        if n != entry["n"]:
            raise DataError(path, None, f"chunk holds {n} records, manifest says {entry['n']}")
