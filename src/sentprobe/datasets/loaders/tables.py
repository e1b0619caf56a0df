"""Generic tables: TSV with a header naming ``sentence``, ``label``, ``split`` columns, or JSONL
objects with those keys."""

from __future__ import annotations

from pathlib import Path

from sentprobe.datasets.loaders.common import (
    column_error,
    first_line,
    json_objects,
    stem,
    task_lines,
)
from sentprobe.datasets.loaders.senteval import (
    load_senteval_file,
)
from sentprobe.datasets.task import ProbingTask, TaskMetadata
from sentprobe.datasets.validation import (
    ALLOWED_SPLITS,
    Problems,
    TaskBuilder,
    normalize_split,
)
from sentprobe.errors import DataError


def _load_jsonl(path: Path, language: str) -> ProbingTask:
    problems = Problems(path)
    builder = TaskBuilder(problems)
    for i, obj in json_objects(task_lines(path, problems), problems):
        missing = [k for k in ("sentence", "label", "split") if k not in obj]
        if missing:
            problems.add(
                i, f"missing key(s) {', '.join(missing)} (found: {', '.join(obj) or 'none'})"
            )
            continue
        if not isinstance(obj["sentence"], str):
            problems.add(i, f"sentence must be a string, found {type(obj['sentence']).__name__}")
            continue
        split = normalize_split(str(obj["split"]))
        if split is None:
            problems.add(i, f"unknown split {obj['split']!r} (allowed: {ALLOWED_SPLITS})")
            continue
        builder.add(split, str(obj["label"]), obj["sentence"], i)
    return builder.build(_table_metadata(path, language))


def _table_metadata(path: Path, language: str) -> TaskMetadata:
    return TaskMetadata(name=stem(path), language=language, source=str(path))


def _load_tsv(path: Path, language: str) -> ProbingTask:
    problems = Problems(path)
    builder = TaskBuilder(problems)
    lines = task_lines(path, problems)
    header_line = next(lines, None)
    if header_line is None:
        raise DataError(path, None, "no data lines (the file is empty)")
    h, header = header_line[0], [c.strip().lower() for c in header_line[1].split("\t")]
    missing = [c for c in ("sentence", "label", "split") if c not in header]
    if missing:
        found = ", ".join(header)
        found = found if len(found) <= 80 else found[:77] + "..."  # a 10 MB line stays short
        raise DataError(
            path,
            h,
            f"header must name the columns sentence, label and split (tab-separated, any order); "
            f"missing {', '.join(missing)}, found {found}",
        )
    cs, cl, cp = header.index("sentence"), header.index("label"), header.index("split")
    for i, line in lines:
        parts = line.split("\t")
        if len(parts) != len(header):
            problems.add(i, column_error(len(header), len(parts), ", ".join(header)))
            continue
        split = normalize_split(parts[cp])
        if split is None:
            problems.add(i, f"unknown split {parts[cp]!r} (allowed: {ALLOWED_SPLITS})")
            continue
        builder.add(split, parts[cl], parts[cs], i)
    return builder.build(_table_metadata(path, language))


def load_table(path: str | Path, language: str = "und") -> ProbingTask:
    """Load a TSV with a header naming ``sentence``, ``label``, ``split`` columns (any order,
    extra columns ignored) or a JSONL file of objects with those keys. Split values may be
    train/dev/test or tr/va/te. A headerless SentEval file is accepted too.
    """
    path = Path(path)
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return _load_jsonl(path, language)
    first = first_line(path)
    if first is not None and first.count("\t") == 2 and normalize_split(first.split("\t")[0]):
        return load_senteval_file(path)
    return _load_tsv(path, language)
