"""``sentprobe audit``: check a probing suite for the defects found in published data.

The suite is read with the ordinary loaders, task by task, so one broken file does not hide
the others. A file the loaders reject (unknown split, label never seen in train, ...) is read
again by the same loaders in their lenient mode (``rejected=``): every rejected line becomes
part of one error finding and the lines that could be read are still audited. The checks
themselves live in :mod:`.checks`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.text import Text

from sentprobe.analysis.checks import CheckOptions, Thresholds, run_checks
from sentprobe.analysis.findings import AuditReport, Finding, Severity
from sentprobe.datasets.loaders import (
    MANIFEST,
    XPROBE_SPLIT_FILES,
    declares_folders,
    is_senteval_candidate,
    is_xprobe_task,
    language_of,
    load_senteval_file,
    load_table,
    load_xprobe_task,
    looks_like_senteval,
    manifest_tasks,
    senteval_metadata,
    split_file,
    stem,
    task_files,
    xprobe_metadata,
)
from sentprobe.datasets.loaders.dnc import (
    TASK_ORDER,
    data_files,
    describe_set,
    is_dnc_dir,
    load_dnc_set,
    set_stem,
)
from sentprobe.datasets.task import PAPER_TASKS, ProbingTask
from sentprobe.datasets.validation import Problem
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
    annotate: bool = False,
) -> list[Finding]:
    """Every check on one task (see :mod:`sentprobe.analysis.checks`); ``targets``: each
    item's target form per split (a generator's), else the task's own ``Split.clusters``
    (read by the loaders from a suite's ``.forms`` sidecars); ``annotate``: also the checks
    that re-annotate sentences with the language's default annotator."""
    if targets is None:
        targets = {n: s.clusters for n, s in task.splits.items() if s.clusters is not None}
    options = CheckOptions(
        thresholds=thresholds or Thresholds(),
        baselines=baselines,
        files=files,
        targets=targets or None,
        annotate=annotate,
    )
    return run_checks(task, options)


# ---------------------------------------------------------------------------- lenient reading


def _lenient(
    load: Callable[..., ProbingTask], *args: Any, **kw: Any
) -> tuple[ProbingTask, list[Problem]]:
    """``load`` in the loaders' lenient mode: the task from the readable lines, and the rest."""
    rejected: list[Problem] = []
    return load(*args, rejected=rejected, **kw), rejected


def _load_finding(name: str, error: DataError, problems: list[Problem] | None) -> Finding:
    if not problems:
        return Finding("load", "error", f"cannot be loaded: {error}", task=name, count=1)
    examples = [
        f"{path or ''}{f', line {line}' if line is not None else ''}: {problem}"
        for path, line, problem in problems[:MAX_EXAMPLES]
    ]
    n = len(problems)
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
    """One task to audit: how to load it strictly and leniently, and its split files (X-Probe:
    one per split)."""

    name: str
    strict: Callable[[], ProbingTask]
    lenient: Callable[[], tuple[ProbingTask, list[Problem]]] | None
    files: dict[str, Path] | None = None


def _xprobe_units(directory: Path, language: str | None = None) -> list[_Unit]:
    if is_xprobe_task(directory):
        lang = language or language_of(directory.parent) or "und"
        files = {
            split: f
            for split, short in XPROBE_SPLIT_FILES.items()
            if (f := split_file(directory, short)) is not None
        }
        return [
            _Unit(
                xprobe_metadata(directory, lang).name,
                partial(load_xprobe_task, directory, lang),
                partial(_lenient, load_xprobe_task, directory, lang),
                files,
            )
        ]
    subdirs = sorted(p for p in directory.iterdir() if p.is_dir())
    if any(is_xprobe_task(p) for p in subdirs):
        suite_lang = language or language_of(directory)
        return [u for p in subdirs if is_xprobe_task(p) for u in _xprobe_units(p, suite_lang)]
    return [u for p in subdirs for u in _xprobe_units(p, language)]


def _senteval_units(directory: Path, suite: list[Finding]) -> list[_Unit]:
    try:
        declared = {file.resolve(): meta for meta, file in manifest_tasks(directory)}
    except DataError as e:
        suite.append(Finding("load", "error", f"manifest ignored: {e}", count=1))
        declared = {}
    units = []
    for file in task_files(directory):
        meta = declared.get(file.resolve())
        if meta is None and not is_senteval_candidate(file):
            continue
        meta = meta or senteval_metadata(file)
        units.append(
            _Unit(
                meta.name,
                partial(load_senteval_file, file, metadata=meta),
                partial(_lenient, load_senteval_file, file, metadata=meta),
            )
        )
    return units


def _units(path: Path, suite: list[Finding]) -> list[_Unit]:
    """The tasks at ``path``, detected as ``load_tasks`` detects them."""
    if path.is_file():
        if path.name.endswith(("_data.json", "_metadata.json")):  # one set of a DNC suite
            data = path.with_name(path.name.replace("_metadata.json", "_data.json"))
            return [_Unit(set_stem(data), partial(load_dnc_set, data), None)]
        if path.name.removesuffix(".gz").endswith((".jsonl", ".json", ".ndjson", ".tsv")):
            return [_Unit(stem(path), lambda: load_table(path), None)]
        meta = senteval_metadata(path)
        lenient = (
            (lambda: _lenient(load_senteval_file, path, metadata=meta))
            if looks_like_senteval(path)
            else None
        )
        return [_Unit(meta.name, lambda: load_table(path), lenient)]
    if is_dnc_dir(path):  # Kim et al. (2019)'s release, or a suite generated in its format
        return [
            _Unit(describe_set(set_stem(f), False).paper_name, partial(load_dnc_set, f), None)
            for f in data_files(path)
        ]
    if is_xprobe_task(path) or declares_folders(path):  # a built X-Probe suite: its folders
        return _xprobe_units(path)
    if (path / MANIFEST).is_file() or any(map(is_senteval_candidate, task_files(path))):
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
    annotate: bool = False,
) -> AuditReport:
    """Audit every task at ``path`` (a SentEval file or directory, an X-Probe task, language or
    multi-language folder, a TSV/JSONL table, or a registered suite/task name)."""
    p = Path(path).expanduser()
    suite: list[Finding] = []
    findings: list[Finding] = []
    names: list[str] = []
    if not p.exists():
        tasks = _resolve(str(path))  # a registered name; raises a clean error otherwise
        for registered in tasks:
            names.append(registered.name)
            findings += audit_task(
                registered, baselines=baselines, thresholds=thresholds, annotate=annotate
            )
        return AuditReport(str(path), names, findings)
    units = _units(p, suite)
    if not units:
        raise SentprobeError(f"{p}: no probing tasks found to audit")
    for unit in units:
        task: ProbingTask | None = None
        try:
            task = unit.strict()
        except DataError as error:
            problems = None
            if unit.lenient is not None:
                try:
                    task, problems = unit.lenient()
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
        findings += audit_task(
            task, baselines=baselines, files=unit.files, thresholds=thresholds, annotate=annotate
        )
    order = [*PAPER_TASKS, *TASK_ORDER]

    def rank(name: str) -> tuple[str, int, str]:  # language folder, then the paper's order
        head, _, base = name.rpartition("/")
        return (head, order.index(base) if base in order else len(order), base)

    return AuditReport(str(p), sorted(dict.fromkeys(names), key=rank), suite + findings)


# ---------------------------------------------------------------------------- rendering

_STYLE = {"info": "dim", "warning": "yellow", "error": "bold red"}


def rich_report(report: AuditReport, min_severity: Severity = "info", max_examples: int = 3):
    """The text report with coloured severities (rich renderable for the terminal)."""
    parts: list[Text] = [Text(f"Audit of {report.path}: {len(report.tasks)} task(s)", "bold")]
    for task, found in report.sections(min_severity):
        worst = found[0].severity
        parts.append(Text(f"\n{task or 'suite'}", "bold " + _STYLE[worst].replace("dim", "")))
        for f in found:
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
