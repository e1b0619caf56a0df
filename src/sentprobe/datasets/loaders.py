"""Read probing tasks from the formats researchers already have.

* SentEval: ``split<TAB>label<TAB>sentence`` per line, split in tr/va/te; a directory of such
  files (optionally with a ``manifest.json`` giving source, license, citation, labels).
* X-Probe: ``<task>/{tr,va,te}.txt`` with ``sentence<TAB>label`` lines, grouped in language folders.
* Generic tables: TSV with a header naming ``sentence``, ``label``, ``split`` columns, or JSONL
  objects with those keys.

Any file may be gzip-compressed. Every loader validates while reading (see validation.py) and
raises a DataError naming file and line; nothing is returned for data that cannot be probed.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sentprobe.datasets.task import PAPER_TASKS, ProbingTask, TaskMetadata
from sentprobe.datasets.validation import (
    ALLOWED_SPLITS,
    Problems,
    TaskBuilder,
    normalize_split,
)
from sentprobe.errors import DataError, SentprobeError

#: SentEval file stems -> paper task names (Conneau et al. 2018, Table 2).
SENTEVAL_FILES: dict[str, str] = {
    "sentence_length": "SentLen",
    "word_content": "WC",
    "tree_depth": "TreeDepth",
    "top_constituents": "TopConst",
    "bigram_shift": "BShift",
    "past_present": "Tense",
    "subj_number": "SubjNum",
    "obj_number": "ObjNum",
    "odd_man_out": "SOMO",
    "coordination_inversion": "CoordInv",
}
#: X-Probe task folders -> paper task names (X-Probe has no TopConst).
XPROBE_FOLDERS: dict[str, str] = {k: v for k, v in SENTEVAL_FILES.items() if v != "TopConst"}
XPROBE_SPLIT_FILES = {"train": "tr", "dev": "va", "test": "te"}
MANIFEST = "manifest.json"

_LANGUAGE_CODE = re.compile(r"^[A-Za-z]{2,3}$")
_GZIP_MAGIC = b"\x1f\x8b"


# ---------------------------------------------------------------------------- reading lines


def _stem(path: Path) -> str:
    """File name without ``.gz`` and its extension: ``tree_depth.txt.gz`` -> ``tree_depth``."""
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    return name.rsplit(".", 1)[0] if "." in name else name


def _read_bytes(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise DataError(path, None, "file not found") from None
    except OSError as e:
        raise DataError(path, None, f"cannot read file: {e.strerror or e}") from None
    if data[:2] == _GZIP_MAGIC:  # by content, so a misnamed .gz still loads
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise DataError(path, None, f"corrupt gzip file: {e}") from None
    return data


def iter_lines(path: Path, problems: Problems) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, text) of non-blank lines; record non-UTF-8 lines in
    ``problems`` (under this file's path, so one collector can serve several files).

    The whole file is decoded at once (fast); only if that fails is it decoded line by line to
    locate the bad bytes.
    """
    data = _read_bytes(path)
    try:
        lines = data.decode("utf-8").split("\n")
        bad: dict[int, str] = {}
    except UnicodeDecodeError:
        lines, bad = [], {}
        for i, raw in enumerate(data.split(b"\n"), start=1):
            try:
                lines.append(raw.decode("utf-8"))
            except UnicodeDecodeError as e:
                lines.append("")
                bad[i] = (
                    f"not valid UTF-8 (byte 0x{raw[e.start]:02x} at byte {e.start + 1} of the "
                    "line); re-save the file as UTF-8"
                )
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    for i, line in enumerate(lines, start=1):
        if i in bad:
            problems.add(i, bad[i], path)
            continue
        if line.endswith("\r"):
            line = line[:-1]
        if line.strip():
            yield i, line


def _first_line(path: Path) -> str | None:
    """The first non-blank line, or None if there is none or it cannot be decoded."""
    for _, line in iter_lines(path, Problems(path)):
        return line
    return None


def _column_error(expected: int, found: int, layout: str) -> str:
    hint = " (a tab inside a sentence?)" if found > expected else ""
    return f"expected {expected} tab-separated columns ({layout}), found {found}{hint}"


# ---------------------------------------------------------------------------- SentEval


def load_senteval_file(
    path: str | Path, name: str | None = None, metadata: TaskMetadata | None = None
) -> ProbingTask:
    """Load one SentEval file (``split<TAB>label<TAB>sentence``, split in tr/va/te).

    Known file names (``tree_depth.txt`` ...) get the paper's task name and category; others
    are named by their stem with category "other". ``metadata`` overrides all of that (and its
    declared ``labels`` are enforced); ``name`` overrides the name only.
    """
    path = Path(path)
    if metadata is None:
        stem = _stem(path)
        paper = SENTEVAL_FILES.get(stem, stem if stem in PAPER_TASKS else None)
        metadata = TaskMetadata(
            name=paper or stem,
            paper_name=paper,
            category=PAPER_TASKS.get(paper or "", "other"),
            source=str(path),
        )
    if name is not None:
        metadata = dataclasses.replace(metadata, name=name)
    problems = Problems(path)
    builder = TaskBuilder(problems, metadata.labels)
    for i, line in iter_lines(path, problems):
        parts = line.split("\t")
        if len(parts) != 3:
            problems.add(i, _column_error(3, len(parts), "split, label, sentence"))
            continue
        split = normalize_split(parts[0])
        if split is None:
            problems.add(i, f"unknown split {parts[0]!r} (allowed: {ALLOWED_SPLITS})")
            continue
        builder.add(split, parts[1], parts[2], i)
    return builder.build(metadata)


def _looks_like_senteval(path: Path) -> bool:
    first = _first_line(path)
    return first is not None and first.count("\t") == 2


def read_manifest(directory: str | Path) -> dict[str, Any] | None:
    """The parsed ``manifest.json`` of a task directory, or None if there is none."""
    path = Path(directory) / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
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
    reading the data.

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
        file = directory / entry["file"]
        if not (file.is_file() or _is_xprobe_task(file)):
            raise DataError(
                directory / MANIFEST,
                None,
                f"task {key!r} names {entry['file']!r}, which is missing (expected a SentEval "
                "file or an X-Probe task folder with tr.txt and te.txt)",
            )
        paper = key if key in PAPER_TASKS else SENTEVAL_FILES.get(_stem(file))
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
                ),
                file,
            )
        )
    return out


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
        key=_task_order,
    )


def _task_order(task: ProbingTask) -> tuple[int, str]:
    order = list(PAPER_TASKS)
    paper = task.metadata.paper_name
    return (order.index(paper) if paper in order else len(order), task.name)


def _task_files(directory: Path) -> list[Path]:
    return sorted(
        p for p in directory.iterdir() if p.is_file() and p.name.endswith((".txt", ".txt.gz"))
    )


def _is_senteval_candidate(file: Path) -> bool:
    return _stem(file) in SENTEVAL_FILES or _looks_like_senteval(file)


def load_senteval_dir(directory: str | Path) -> list[ProbingTask]:
    """Load every SentEval task file in a directory, in the paper's task order.

    Files a ``manifest.json`` lists or with a known SentEval name are always loaded (so their
    errors surface); other ``*.txt`` files only if their first line has three columns.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise DataError(directory, None, "not a directory")
    declared = {file.resolve(): meta for meta, file in manifest_tasks(directory)}
    tasks = []
    for file in _task_files(directory):
        meta = declared.get(file.resolve())
        if meta is not None:
            tasks.append(load_senteval_file(file, metadata=meta))
        elif _is_senteval_candidate(file):
            tasks.append(load_senteval_file(file))
    if not tasks:
        raise DataError(
            directory,
            None,
            "no SentEval task files (*.txt with split<TAB>label<TAB>sentence lines)",
        )
    return sorted(tasks, key=_task_order)


# ---------------------------------------------------------------------------- X-Probe


def _split_file(folder: Path, short: str) -> Path | None:
    for name in (f"{short}.txt", f"{short}.txt.gz"):
        if (folder / name).is_file():
            return folder / name
    return None


def _is_xprobe_task(folder: Path) -> bool:
    return folder.is_dir() and any(_split_file(folder, s) for s in XPROBE_SPLIT_FILES.values())


def _language_of(folder: Path) -> str | None:
    return folder.name.lower() if _LANGUAGE_CODE.match(folder.name) else None


def load_xprobe_task(
    folder: str | Path, language: str | None = None, metadata: TaskMetadata | None = None
) -> ProbingTask:
    """Load one X-Probe task folder (``tr.txt``, ``te.txt``, optional ``va.txt``).

    The task is named ``<language>/<PaperName>`` (just the paper name if the language is
    unknown), so several languages can be probed in one run without clashing; ``metadata``
    (from a manifest) replaces all of that, and its declared ``labels`` are enforced.
    """
    folder = Path(folder)
    if metadata is None:
        language = language or _language_of(folder.parent) or "und"
        paper = XPROBE_FOLDERS.get(folder.name)
        base = paper or folder.name
        metadata = TaskMetadata(
            name=base if language == "und" else f"{language}/{base}",
            paper_name=paper,
            language=language,
            category=PAPER_TASKS.get(paper or "", "other"),
            source=str(folder),
        )
    problems = Problems(folder)
    for split in ("train", "test"):
        short = XPROBE_SPLIT_FILES[split]
        if _split_file(folder, short) is None:
            problems.add(None, f"no {short}.txt ({split} split); expected tr.txt, te.txt, va.txt")
    problems.raise_if_any()
    builder = TaskBuilder(problems, metadata.labels)
    for split, short in XPROBE_SPLIT_FILES.items():
        file = _split_file(folder, short)
        if file is None:
            continue
        for i, line in iter_lines(file, problems):
            parts = line.split("\t")
            if len(parts) != 2:
                problems.add(i, _column_error(2, len(parts), "sentence, label"), file)
                continue
            builder.add(split, parts[1], parts[0], i, file)
    return builder.build(metadata)


def load_xprobe_dir(directory: str | Path, language: str | None = None) -> list[ProbingTask]:
    """Load an X-Probe task folder, a language folder of task folders, or a folder of those.

    The language is ``language`` if given, else the name of the folder holding the task folder
    when it looks like a language code (2-3 letters), else "und".
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise DataError(directory, None, "not a directory")
    if _is_xprobe_task(directory):
        return [load_xprobe_task(directory, language)]
    subdirs = sorted(p for p in directory.iterdir() if p.is_dir())
    task_dirs = [p for p in subdirs if _is_xprobe_task(p)]
    if task_dirs:
        lang = language or _language_of(directory)
        return sorted((load_xprobe_task(p, lang) for p in task_dirs), key=_task_order)
    language_dirs = [p for p in subdirs if any(_is_xprobe_task(q) for q in p.iterdir())]
    tasks = [t for sub in language_dirs for t in load_xprobe_dir(sub, language)]
    if not tasks:
        raise DataError(directory, None, "no X-Probe task folders (folders with tr.txt, te.txt)")
    return tasks


# ---------------------------------------------------------------------------- generic tables


def _load_jsonl(path: Path, language: str) -> ProbingTask:
    problems = Problems(path)
    builder = TaskBuilder(problems)
    for i, line in iter_lines(path, problems):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            problems.add(i, f"not valid JSON: {e.msg} (column {e.colno})")
            continue
        if not isinstance(obj, dict):
            problems.add(i, f"expected a JSON object, found {type(obj).__name__}")
            continue
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
    return TaskMetadata(name=_stem(path), language=language, source=str(path))


def _load_tsv(path: Path, language: str) -> ProbingTask:
    problems = Problems(path)
    builder = TaskBuilder(problems)
    lines = iter_lines(path, problems)
    header_line = next(lines, None)
    if header_line is None:
        problems.add(None, "no data lines (the file is empty)")
        problems.raise_if_any()
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
            problems.add(i, _column_error(len(header), len(parts), ", ".join(header)))
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
    first = _first_line(path)
    if first is not None and first.count("\t") == 2 and normalize_split(first.split("\t")[0]):
        return load_senteval_file(path)
    return _load_tsv(path, language)


# ---------------------------------------------------------------------------- detection


def load_tasks(path: str | Path) -> list[ProbingTask]:
    """Load every task at ``path``, detecting the format.

    A directory whose manifest lists X-Probe task folders (a built X-Probe suite) is read
    through the manifest; otherwise a directory is X-Probe if it (or its subfolders) hold
    ``tr.txt``/``te.txt`` task folders, otherwise SentEval. A file is JSONL by extension,
    SentEval if its first line starts with a split name and has three columns, otherwise a
    TSV with a header.
    """
    path = Path(path).expanduser()
    if path.is_dir():
        if _is_xprobe_task(path):
            return load_xprobe_dir(path)
        if declares_folders(path):
            return load_manifest_dir(path)
        if (path / MANIFEST).is_file() or any(map(_is_senteval_candidate, _task_files(path))):
            return load_senteval_dir(path)
        if any(p.is_dir() for p in path.iterdir()):
            return load_xprobe_dir(path)
        raise DataError(
            path,
            None,
            "no probing tasks found: expected SentEval files (split<TAB>label<TAB>sentence) "
            "or X-Probe task folders (tr.txt, va.txt, te.txt)",
        )
    if not path.exists():
        raise DataError(path, None, "no such file or directory")
    return [load_table(path)]


def load_task(path: str | Path) -> ProbingTask:
    """Load the single task at ``path`` (see :func:`load_tasks` for the formats)."""
    tasks = load_tasks(path)
    if len(tasks) != 1:
        names = ", ".join(t.name for t in tasks)
        raise SentprobeError(f"{path} holds {len(tasks)} tasks ({names}); use load_tasks")
    return tasks[0]
