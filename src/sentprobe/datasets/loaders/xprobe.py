"""X-Probe: ``<task>/{tr,va,te}.txt`` with ``sentence<TAB>label`` lines, grouped in language
folders."""

from __future__ import annotations

import re
from pathlib import Path

from sentprobe.datasets.loaders.common import (
    XPROBE_FOLDERS,
    XPROBE_SPLIT_FILES,
    column_error,
    item_forms,
    task_lines,
    task_order,
)
from sentprobe.datasets.task import PAPER_TASKS, ProbingTask, TaskMetadata
from sentprobe.datasets.validation import (
    Problem,
    Problems,
    TaskBuilder,
)
from sentprobe.errors import DataError
from sentprobe.io import inside

LANGUAGE_CODE = re.compile(r"^[A-Za-z]{2,3}$")


def split_file(folder: Path, short: str) -> Path | None:
    """``folder``'s split file (``tr.txt`` or ``tr.txt.gz``...); one that is a symbolic link
    leading outside the folder is refused."""
    for name in (f"{short}.txt", f"{short}.txt.gz"):
        if (folder / name).is_file():
            return inside(folder, name)
    return None


def is_xprobe_task(folder: Path) -> bool:
    return folder.is_dir() and any(split_file(folder, s) for s in XPROBE_SPLIT_FILES.values())


def language_of(folder: Path) -> str | None:
    return folder.name.lower() if LANGUAGE_CODE.match(folder.name) else None


def xprobe_metadata(folder: Path, language: str | None = None) -> TaskMetadata:
    """An X-Probe task folder's metadata: ``<language>/<PaperName>`` (just the paper name if
    the language is unknown), the language being ``language`` if given, else the name of the
    folder holding the task folder when it looks like a language code, else "und"."""
    language = language or language_of(folder.parent) or "und"
    paper = XPROBE_FOLDERS.get(folder.name)
    base = paper or folder.name
    return TaskMetadata(
        name=base if language == "und" else f"{language}/{base}",
        paper_name=paper,
        language=language,
        category=PAPER_TASKS.get(paper or "", "other"),
        source=str(folder),
    )


def load_xprobe_task(
    folder: str | Path,
    language: str | None = None,
    metadata: TaskMetadata | None = None,
    rejected: list[Problem] | None = None,
) -> ProbingTask:
    """Load one X-Probe task folder (``tr.txt``, ``te.txt``, optional ``va.txt``).

    The task is named ``<language>/<PaperName>`` (just the paper name if the language is
    unknown), so several languages can be probed in one run without clashing; ``metadata``
    (from a manifest) replaces all of that, and its declared ``labels`` are enforced. A
    split file's ``.forms`` sidecar (``te.forms`` beside ``te.txt``: one target form per item
    line, a lexical split) gives that split's ``clusters``.

    Lenient mode: with a ``rejected`` list, the problems (a missing split file included) are
    appended to it instead of raised and the task is built from the lines that could be read.
    """
    folder = Path(folder)
    if metadata is None:
        metadata = xprobe_metadata(folder, language)
    problems = Problems(folder, rejected)
    for split in ("train", "test"):
        short = XPROBE_SPLIT_FILES[split]
        if split_file(folder, short) is None:
            problems.add(None, f"no {short}.txt ({split} split); expected tr.txt, te.txt, va.txt")
    problems.raise_if_any()
    builder = TaskBuilder(problems, metadata.labels)
    for split, short in XPROBE_SPLIT_FILES.items():
        file = split_file(folder, short)
        if file is None:
            continue
        lines = list(task_lines(file, problems))
        found = item_forms(file, len(lines), problems)
        forms: list[str | None] = [*found] if found is not None else [None] * len(lines)
        for (i, line), form in zip(lines, forms, strict=True):
            parts = line.split("\t")
            if len(parts) != 2:
                problems.add(i, column_error(2, len(parts), "sentence, label"), file)
                continue
            builder.add(split, parts[1], parts[0], i, file, cluster=form)
    return builder.build(metadata)


def load_xprobe_dir(directory: str | Path, language: str | None = None) -> list[ProbingTask]:
    """Load an X-Probe task folder, a language folder of task folders, or a folder of those.

    The language is ``language`` if given, else the name of the folder holding the task folder
    when it looks like a language code (2-3 letters), else "und".
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise DataError(directory, None, "not a directory")
    if is_xprobe_task(directory):
        return [load_xprobe_task(directory, language)]
    subdirs = sorted(inside(directory, p.name) for p in directory.iterdir() if p.is_dir())
    task_dirs = [p for p in subdirs if is_xprobe_task(p)]
    if task_dirs:
        lang = language or language_of(directory)
        return sorted((load_xprobe_task(p, lang) for p in task_dirs), key=task_order)
    language_dirs = [p for p in subdirs if any(is_xprobe_task(q) for q in p.iterdir())]
    tasks = [t for sub in language_dirs for t in load_xprobe_dir(sub, language)]
    if not tasks:
        raise DataError(directory, None, "no X-Probe task folders (folders with tr.txt, te.txt)")
    return tasks
