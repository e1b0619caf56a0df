"""``sentprobe audit``: check a probing suite for the defects found in published data.

The suite is read with the ordinary loaders, task by task, so one broken file does not hide
the others. A file the loaders reject (unknown split, label never seen in train, ...) is read
again leniently: every rejected line becomes part of one error finding and the lines that
could be read are still audited. The checks themselves live in :mod:`.checks`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rich.console import Group
from rich.text import Text

from sentprobe.analysis.checks import CheckOptions, Thresholds, run_checks
from sentprobe.analysis.findings import AuditReport, Finding, Severity, severity_rank
from sentprobe.datasets.loaders import (
    MANIFEST,
    SENTEVAL_FILES,
    XPROBE_FOLDERS,
    XPROBE_SPLIT_FILES,
    _is_senteval_candidate,
    _is_xprobe_task,
    _language_of,
    _looks_like_senteval,
    _split_file,
    _stem,
    _task_files,
    declares_folders,
    iter_lines,
    load_senteval_file,
    load_table,
    load_xprobe_task,
    manifest_tasks,
)
from sentprobe.datasets.task import PAPER_TASKS, ProbingTask, TaskMetadata
from sentprobe.datasets.validation import ALLOWED_SPLITS, Problems, TaskBuilder, normalize_split
from sentprobe.errors import DataError, SentprobeError

#: How many rejected lines a load finding quotes.
MAX_EXAMPLES = 5


def audit_task(
    task: ProbingTask,
    *,
    baselines: bool = True,
    files: dict[str, Path] | None = None,
    targets: dict | None = None,
    thresholds: Thresholds | None = None,
) -> list[Finding]:
    """Every check on one task (see :mod:`sentprobe.analysis.checks`)."""
    options = CheckOptions(
        thresholds=thresholds or Thresholds(), baselines=baselines, files=files, targets=targets
    )
    return run_checks(task, options)


# ---------------------------------------------------------------------------- lenient reading


class _Collecting(Problems):
    """Problems that are kept instead of raised, so the rest of the file can be audited."""

    def raise_if_any(self) -> None:
        return None

    @property
    def items(self) -> list[tuple[str | None, int | None, str]]:
        return list(self._items)


def _senteval_metadata(path: Path) -> TaskMetadata:
    stem = _stem(path)
    paper = SENTEVAL_FILES.get(stem, stem if stem in PAPER_TASKS else None)
    return TaskMetadata(
        name=paper or stem,
        paper_name=paper,
        category=PAPER_TASKS.get(paper or "", "other"),
        source=str(path),
    )


def _lenient_senteval(path: Path, metadata: TaskMetadata) -> tuple[ProbingTask, _Collecting]:
    problems = _Collecting(path)
    builder = TaskBuilder(problems, metadata.labels)
    for i, line in iter_lines(path, problems):
        parts = line.split("\t")
        split = normalize_split(parts[0]) if len(parts) == 3 else None
        if len(parts) != 3:
            problems.add(i, f"expected 3 tab-separated columns, found {len(parts)}")
        elif split is None:
            problems.add(i, f"unknown split {parts[0]!r} (allowed: {ALLOWED_SPLITS})")
        else:
            builder.add(split, parts[1], parts[2], i)
    return builder.build(metadata), problems


def _xprobe_metadata(folder: Path, language: str) -> TaskMetadata:
    paper = XPROBE_FOLDERS.get(folder.name)
    base = paper or folder.name
    return TaskMetadata(
        name=base if language == "und" else f"{language}/{base}",
        paper_name=paper,
        language=language,
        category=PAPER_TASKS.get(paper or "", "other"),
        source=str(folder),
    )


def _lenient_xprobe(folder: Path, language: str) -> tuple[ProbingTask, _Collecting]:
    problems = _Collecting(folder)
    builder = TaskBuilder(problems)
    for split, short in XPROBE_SPLIT_FILES.items():
        file = _split_file(folder, short)
        if file is None:
            if split != "dev":
                problems.add(None, f"no {short}.txt ({split} split)")
            continue
        for i, line in iter_lines(file, problems):
            parts = line.split("\t")
            if len(parts) != 2:
                problems.add(i, f"expected 2 tab-separated columns, found {len(parts)}", file)
                continue
            builder.add(split, parts[1], parts[0], i, file)
    return builder.build(_xprobe_metadata(folder, language)), problems


def _load_finding(name: str, error: DataError, problems: _Collecting | None) -> Finding:
    if problems is None or not problems.items:
        return Finding("load", "error", f"cannot be loaded: {error}", task=name, count=1)
    examples = [
        f"{path or ''}{f', line {line}' if line is not None else ''}: {problem}"
        for path, line, problem in problems.items[:MAX_EXAMPLES]
    ]
    n = len(problems.items)
    return Finding(
        "load",
        "error",
        f"the loaders reject this task ({n} problem{'s' if n > 1 else ''}); the readable lines "
        "are audited below",
        task=name,
        count=n,
        examples=examples,
    )


# ---------------------------------------------------------------------------- discovery


@dataclasses.dataclass
class _Unit:
    """One task to audit: how to load it strictly and leniently, and its split files."""

    name: str
    strict: object  # () -> ProbingTask
    lenient: object | None  # () -> (ProbingTask, _Collecting)
    files: dict[str, Path] | None = None


def _xprobe_units(directory: Path, language: str | None = None) -> list[_Unit]:
    if _is_xprobe_task(directory):
        lang = language or _language_of(directory.parent) or "und"
        files = {
            split: f
            for split, short in XPROBE_SPLIT_FILES.items()
            if (f := _split_file(directory, short)) is not None
        }
        return [
            _Unit(
                _xprobe_metadata(directory, lang).name,
                lambda d=directory, lang=lang: load_xprobe_task(d, lang),
                lambda d=directory, lang=lang: _lenient_xprobe(d, lang),
                files,
            )
        ]
    subdirs = sorted(p for p in directory.iterdir() if p.is_dir())
    if any(_is_xprobe_task(p) for p in subdirs):
        lang = language or _language_of(directory)
        return [u for p in subdirs if _is_xprobe_task(p) for u in _xprobe_units(p, lang)]
    return [u for p in subdirs for u in _xprobe_units(p, language)]


def _senteval_units(directory: Path, suite: list[Finding]) -> list[_Unit]:
    try:
        declared = {file.resolve(): meta for meta, file in manifest_tasks(directory)}
    except DataError as e:
        suite.append(Finding("load", "error", f"manifest ignored: {e}", count=1))
        declared = {}
    units = []
    for file in _task_files(directory):
        meta = declared.get(file.resolve())
        if meta is None and not _is_senteval_candidate(file):
            continue
        meta = meta or _senteval_metadata(file)
        units.append(
            _Unit(
                meta.name,
                lambda f=file, m=meta: load_senteval_file(f, metadata=m),
                lambda f=file, m=meta: _lenient_senteval(f, m),
            )
        )
    return units


def _units(path: Path, suite: list[Finding]) -> list[_Unit]:
    """The tasks at ``path``, detected as ``load_tasks`` detects them."""
    if path.is_file():
        stem = path.name.removesuffix(".gz")
        if stem.endswith((".jsonl", ".json", ".ndjson", ".tsv")):
            return [_Unit(_stem(path), lambda: load_table(path), None)]
        meta = _senteval_metadata(path)
        lenient = (lambda: _lenient_senteval(path, meta)) if _looks_like_senteval(path) else None
        return [_Unit(meta.name, lambda: load_table(path), lenient)]
    if _is_xprobe_task(path) or declares_folders(path):  # a built X-Probe suite: its folders
        return _xprobe_units(path)
    if (path / MANIFEST).is_file() or any(map(_is_senteval_candidate, _task_files(path))):
        return _senteval_units(path, suite)
    return _xprobe_units(path)


def _resolve(spec: str) -> list[ProbingTask]:
    from sentprobe.datasets import resolve_tasks

    return resolve_tasks(spec)


# ---------------------------------------------------------------------------- suite


def audit_suite(
    path: str | Path,
    *,
    baselines: bool = True,
    thresholds: Thresholds | None = None,
) -> AuditReport:
    """Audit every task at ``path`` (a SentEval file or directory, an X-Probe task, language or
    multi-language folder, a TSV/JSONL table, or a registered suite/task name)."""
    p = Path(path).expanduser()
    suite: list[Finding] = []
    findings: list[Finding] = []
    names: list[str] = []
    if not p.exists():
        tasks = _resolve(str(path))  # a registered name; raises a clean error otherwise
        for task in tasks:
            names.append(task.name)
            findings += audit_task(task, baselines=baselines, thresholds=thresholds)
        return AuditReport(str(path), names, findings)
    units = _units(p, suite)
    if not units:
        raise SentprobeError(f"{p}: no probing tasks found to audit")
    for unit in units:
        task: ProbingTask | None = None
        try:
            task = unit.strict()  # type: ignore[operator]
        except DataError as error:
            problems = None
            if unit.lenient is not None:
                try:
                    task, problems = unit.lenient()  # type: ignore[operator]
                except DataError:
                    task = None
            findings.append(_load_finding(unit.name, error, problems))
        names.append(task.name if task is not None else unit.name)
        if task is None:
            continue
        if task.name != unit.name:  # the load finding must name the task the others name
            for f in findings:
                if f.task == unit.name:
                    f.task = task.name
        findings += audit_task(task, baselines=baselines, files=unit.files, thresholds=thresholds)
    order = list(PAPER_TASKS)

    def rank(name: str) -> tuple[str, int, str]:  # language folder, then the paper's order
        head, _, base = name.rpartition("/")
        return (head, order.index(base) if base in order else len(order), base)

    return AuditReport(str(p), sorted(dict.fromkeys(names), key=rank), suite + findings)


# ---------------------------------------------------------------------------- rendering

_STYLE = {"info": "dim", "warning": "yellow", "error": "bold red"}


def rich_report(report: AuditReport, min_severity: Severity = "info", max_examples: int = 3):
    """The text report with coloured severities (rich renderable for the terminal)."""
    parts: list[Text] = [Text(f"Audit of {report.path}: {len(report.tasks)} task(s)", "bold")]
    for task in [None, *report.tasks]:
        found = [
            f
            for f in report.for_task(task)
            if severity_rank(f.severity) >= severity_rank(min_severity)
        ]
        if not found:
            continue
        worst = max((f.severity for f in found), key=severity_rank)
        parts.append(Text(f"\n{task or 'suite'}", "bold " + _STYLE[worst].replace("dim", "")))
        for f in sorted(found, key=lambda f: -severity_rank(f.severity)):
            line = Text("  ")
            line.append(f"{f.severity:<7}", _STYLE[f.severity])
            line.append(f" {f.check}: ", "bold")
            line.append(f.message)
            parts.append(line)
            for ex in f.examples[:max_examples]:
                parts.append(Text(f"            e.g. {ex}", "dim"))
    c = report.counts()
    summary = Text("\n")
    summary.append(f"{c['error']} error(s)", _STYLE["error"] if c["error"] else "")
    summary.append(", ")
    summary.append(f"{c['warning']} warning(s)", _STYLE["warning"] if c["warning"] else "")
    summary.append(f", {c['info']} info")
    parts.append(summary)
    return Group(*parts)
