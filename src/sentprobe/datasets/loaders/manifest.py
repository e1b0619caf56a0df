"""``manifest.json``: the tasks of a directory with their source, license, citation and labels
(SentEval files or X-Probe task folders), and directories of SentEval files."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from sentprobe.datasets.loaders.common import (
    FORMS_SUFFIX,
    MANIFEST,
    SENTEVAL_FILES,
    XPROBE_SPLIT_FILES,
    forms_file,
    stem,
    task_order,
)
from sentprobe.datasets.loaders.senteval import (
    is_senteval_candidate,
    load_senteval_file,
    task_files,
)
from sentprobe.datasets.loaders.xprobe import (
    is_xprobe_task,
    load_xprobe_task,
)
from sentprobe.datasets.task import PAPER_TASKS, ProbingTask, TaskMetadata
from sentprobe.errors import DataError
from sentprobe.io import inside, read_text


def read_manifest(directory: str | Path) -> dict[str, Any] | None:
    """The parsed ``manifest.json`` of a task directory, or None if there is none."""
    path = Path(directory) / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(read_text(inside(directory, MANIFEST)))
    except json.JSONDecodeError as e:
        raise DataError(path, e.lineno, f"not valid JSON: {e.msg} (column {e.colno})") from None
    except UnicodeDecodeError:
        raise DataError(path, None, "not valid UTF-8") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("tasks", {}), dict):
        raise DataError(path, None, 'expected an object with a "tasks" object inside')
    for key, entry in manifest.get("tasks", {}).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            raise DataError(path, None, f'task {key!r} needs a "file" entry naming its data file')
    return manifest


def manifest_tasks(directory: str | Path) -> list[tuple[TaskMetadata, Path]]:
    """(metadata, data file or X-Probe task folder) for each task a manifest lists, without
    reading the data. An entry naming a path outside ``directory`` (absolute, ``..``, or a
    symbolic link out) is refused before anything is read.

    Names are ``<suite>/<task>`` when the manifest names a suite, so a task has the same name
    whether loaded from its directory or from the registry.
    """
    directory = Path(directory)
    manifest = read_manifest(directory)
    if manifest is None:
        return []
    prefix = f"{manifest['suite']}/" if manifest.get("suite") else ""
    out = []
    for key, entry in manifest.get("tasks", {}).items():
        file = inside(directory, entry["file"], directory / MANIFEST)
        if not (file.is_file() or is_xprobe_task(file)):
            raise DataError(
                directory / MANIFEST,
                None,
                f"task {key!r} names {entry['file']!r}, which is missing (expected a SentEval "
                "file or an X-Probe task folder with tr.txt and te.txt)",
            )
        _check_forms(directory, key, entry.get("forms"), file)
        paper = key if key in PAPER_TASKS else SENTEVAL_FILES.get(stem(file))
        labels = entry.get("labels") or ()

        def field(k: str, entry: dict = entry) -> str:
            return str(entry.get(k, manifest.get(k, "")))

        out.append(
            (
                TaskMetadata(
                    name=prefix + key,
                    paper_name=paper,
                    language=str(entry.get("language", manifest.get("language", "en"))),
                    category=entry.get("category") or PAPER_TASKS.get(paper or "", "other"),
                    labels=tuple(str(label) for label in labels),
                    source=field("source"),
                    license=field("license"),
                    citation=field("citation"),
                    description=field("description"),
                    no_surface_cue=entry.get("no_surface_cue"),
                ),
                file,
            )
        )
    return out


def _check_forms(directory: Path, key: str, declared: Any, file: Path) -> None:
    """A task entry's ``forms``: the sidecar(s) of target forms its lexical split was made
    with (a name, or a list of names for an X-Probe folder's split files). The loaders read a
    sidecar from beside its task file; a declared one that is missing, or that is not where
    the loaders look, is refused, so a copy that lost it cannot pass for an item-level split."""
    if declared is None:
        return
    source = directory / MANIFEST
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or not names:
        raise DataError(source, None, f'task {key!r}: "forms" must name a file or list files')
    if file.is_dir():
        expected = {file / f"{short}{FORMS_SUFFIX}" for short in XPROBE_SPLIT_FILES.values()}
    else:
        expected = {forms_file(file)}
    for name in names:
        path = inside(directory, name, source)
        if path.resolve() not in {p.resolve() for p in expected}:
            where = " or ".join(sorted(str(p.relative_to(directory)) for p in expected))
            raise DataError(
                source, None, f"task {key!r}: forms {name!r} must lie beside its data as {where}"
            )
        if not path.is_file():
            raise DataError(source, None, f"task {key!r} names forms {name!r}, which is missing")


def load_manifest_entry(metadata: TaskMetadata, path: Path) -> ProbingTask:
    """Load one task a manifest declares: a SentEval file or an X-Probe task folder."""
    if path.is_dir():
        return load_xprobe_task(path, metadata=metadata)
    return load_senteval_file(path, metadata=metadata)


def declares_folders(directory: str | Path) -> bool:
    """Whether ``directory``'s manifest lists X-Probe task folders (a suite written in the
    X-Probe layout by ``sentprobe build``: ``manifest.json`` beside ``<lang>/<task>/``)."""
    manifest = read_manifest(directory)
    return manifest is not None and any(
        (Path(directory) / str(entry.get("file", ""))).is_dir()
        for entry in manifest.get("tasks", {}).values()
        if isinstance(entry, dict)
    )


def load_manifest_dir(directory: str | Path) -> list[ProbingTask]:
    """Every task a directory's manifest declares, with the manifest's metadata."""
    return sorted(
        (load_manifest_entry(meta, path) for meta, path in manifest_tasks(directory)),
        key=task_order,
    )


def load_senteval_dir(directory: str | Path) -> list[ProbingTask]:
    """Load every SentEval task file in a directory, in the paper's task order.

    Files a ``manifest.json`` lists or with a known SentEval name are always loaded (so their
    errors surface); other ``*.txt`` files only if their first line has three columns. A
    file that cannot be probed (e.g. a dev label never in train) is skipped with a one-line
    warning naming its first problem while the others load; when none loads, the first
    file's error is raised.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise DataError(directory, None, "not a directory")
    declared = {file.resolve(): meta for meta, file in manifest_tasks(directory)}
    tasks, skipped = [], []
    for file in task_files(directory):
        meta = declared.get(file.resolve())
        try:
            if meta is not None:
                tasks.append(load_senteval_file(file, metadata=meta))
            elif is_senteval_candidate(file):
                tasks.append(load_senteval_file(file))
        except DataError as problem:  # one task that cannot be probed: the others still can
            skipped.append(problem)
    if skipped and not tasks:
        raise skipped[0]
    for skipped_task in skipped:
        first = str(skipped_task).splitlines()[0]
        warnings.warn(f"skipped, the other tasks run: {first}", stacklevel=2)
    if not tasks:
        raise DataError(
            directory,
            None,
            "no SentEval task files (*.txt with split<TAB>label<TAB>sentence lines)",
        )
    return sorted(tasks, key=task_order)
