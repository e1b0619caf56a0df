"""SentEval: ``split<TAB>label<TAB>sentence`` per line, split in tr/va/te."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from sentprobe.datasets.loaders.common import (
    SENTEVAL_FILES,
    column_error,
    first_line,
    item_forms,
    stem,
    task_lines,
)
from sentprobe.datasets.task import PAPER_TASKS, ProbingTask, TaskMetadata
from sentprobe.datasets.validation import (
    ALLOWED_SPLITS,
    Problem,
    Problems,
    TaskBuilder,
    normalize_split,
)
from sentprobe.io import inside


def senteval_metadata(path: Path) -> TaskMetadata:
    """A SentEval file's metadata from its name: the paper's task name and category for known
    file names (``tree_depth.txt`` ...), else the stem with category "other"."""
    name = stem(path)
    paper = SENTEVAL_FILES.get(name, name if name in PAPER_TASKS else None)
    return TaskMetadata(
        name=paper or name,
        paper_name=paper,
        category=PAPER_TASKS.get(paper or "", "other"),
        source=str(path),
    )


def load_senteval_file(
    path: str | Path,
    name: str | None = None,
    metadata: TaskMetadata | None = None,
    rejected: list[Problem] | None = None,
) -> ProbingTask:
    """Load one SentEval file (``split<TAB>label<TAB>sentence``, split in tr/va/te).

    Known file names (``tree_depth.txt`` ...) get the paper's task name and category; others
    are named by their stem with category "other". ``metadata`` overrides all of that (and its
    declared ``labels`` are enforced); ``name`` overrides the name only. A ``.forms`` sidecar
    beside the file (one target form per item line: a lexical split) gives each split's
    ``clusters``.

    Lenient mode: with a ``rejected`` list, the problems are appended to it instead of raised
    and the task is built from the lines that could be read (a file that cannot be read at all
    still raises).
    """
    path = Path(path)
    if metadata is None:
        metadata = senteval_metadata(path)
    if name is not None:
        metadata = dataclasses.replace(metadata, name=name)
    problems = Problems(path, rejected)
    builder = TaskBuilder(problems, metadata.labels)
    lines = list(task_lines(path, problems))
    found = item_forms(path, len(lines), problems)
    forms: list[str | None] = [*found] if found is not None else [None] * len(lines)
    for (i, line), form in zip(lines, forms, strict=True):
        parts = line.split("\t")
        if len(parts) != 3:
            problems.add(i, column_error(3, len(parts), "split, label, sentence"))
            continue
        split = normalize_split(parts[0])
        if split is None:
            problems.add(i, f"unknown split {parts[0]!r} (allowed: {ALLOWED_SPLITS})")
            continue
        builder.add(split, parts[1], parts[2], i, cluster=form)
    return builder.build(metadata)


def looks_like_senteval(path: Path) -> bool:
    first = first_line(path)
    return first is not None and first.count("\t") == 2


def task_files(directory: Path) -> list[Path]:
    """The ``*.txt`` / ``*.txt.gz`` files of a directory; a symbolic link among them that
    leads outside it is refused (a shared suite cannot make sentprobe read other files)."""
    return sorted(
        inside(directory, p.name)
        for p in directory.iterdir()
        if p.is_file() and p.name.endswith((".txt", ".txt.gz"))
    )


def is_senteval_candidate(file: Path) -> bool:
    return stem(file) in SENTEVAL_FILES or looks_like_senteval(file)
