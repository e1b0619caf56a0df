"""Markdown quality report of a generated suite, from the same checks ``sentprobe audit`` runs.

A generator claims balanced, disjoint splits with a lexical split where the paper has one;
this report shows the numbers that back the claim (class counts, shared sentences and target
forms, length per class, Majority / Length / NB-uni-tfidf accuracies) next to any finding, so
it can ship with the suite (``sentprobe build`` writes it beside the data).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sentprobe.analysis.audit import audit_task
from sentprobe.analysis.checks import Thresholds, paper_name
from sentprobe.analysis.findings import Finding, severity_rank
from sentprobe.datasets.task import PAPER_TASKS, SPLITS, ProbingTask, Split, TaskMetadata

_STATUS = {None: "ok", "info": "ok", "warning": "warning", "error": "**error**"}


def as_probing_task(task: Any) -> ProbingTask:
    """A ProbingTask, or a generator's output (``name``, ``labels``, ``splits`` of
    (sentence, label) pairs, like ``generation.base.GeneratedTask``) turned into one."""
    if isinstance(task, ProbingTask):
        return task
    splits = {
        name: Split([s for s, _ in pairs], [str(y) for _, y in pairs])
        for name, pairs in task.splits.items()
    }
    paper = task.name if task.name in PAPER_TASKS else None
    meta = TaskMetadata(
        name=task.name,
        paper_name=paper,
        category=PAPER_TASKS.get(paper or "", "other"),
        labels=tuple(str(label) for label in getattr(task, "labels", ()) or ()),
    )
    return ProbingTask(meta, splits)


def _md_table(header: Sequence[str], rows: Sequence[Sequence[Any]], left: int = 1) -> str:
    """A pipe table; the first ``left`` columns left-aligned, numbers right-aligned."""
    cells = [[str(c).replace("|", "\\|") for c in row] for row in [header, *rows]]
    widths = [max(3, *(len(r[i]) for r in cells)) for i in range(len(header))]

    def line(row: list[str]) -> str:
        return (
            "| "
            + " | ".join(
                c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))
            )
            + " |"
        )

    rule = "|" + "|".join(
        "-" * (w + 2) if i < left else "-" * (w + 1) + ":" for i, w in enumerate(widths)
    )
    return "\n".join([line(cells[0]), rule + "|", *(line(r) for r in cells[1:])]) + "\n"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _first(findings: list[Finding], check: str) -> Finding | None:
    return next((f for f in findings if f.check == check), None)


def _overview_row(task: ProbingTask, findings: list[Finding]) -> list[Any]:
    sizes = _first(findings, "sizes").data["sizes"]  # type: ignore[union-attr]
    counts = _first(findings, "balance").data["counts"]  # type: ignore[union-attr]
    ratios = [max(c.values()) / min(c.values()) for c in counts.values() if c]
    shared = sum(f.count or 0 for f in findings if f.check in ("split-overlap", "identical-splits"))
    multi = sum(f.count or 0 for f in findings if f.check == "multi-label")
    scores: dict[str, float | None] = {"Majority": None, "Length": None, "NB-uni-tfidf": None}
    for f in findings:
        if f.check.endswith("-baseline"):
            scores["Majority"] = f.data["majority"]
            scores[f.data["baseline"]] = f.data["accuracy"]
    worst = max((f.severity for f in findings), key=severity_rank, default=None)
    return [
        task.name,
        *(sizes.get(s, 0) for s in SPLITS),
        _first(findings, "sizes").data["n_classes"],  # type: ignore[union-attr]
        f"{max(ratios):.2f}" if ratios else "-",
        shared,
        multi,
        *(_pct(v) for v in scores.values()),
        _STATUS[worst],
    ]


def _task_section(task: ProbingTask, findings: list[Finding], stats: Any) -> list[str]:
    out = [f"### {task.name}", ""]
    counts = _first(findings, "balance").data["counts"]  # type: ignore[union-attr]
    labels = list(dict.fromkeys(label for c in counts.values() for label in c))
    present = [s for s in SPLITS if s in counts]
    if len(labels) <= 30:
        rows = [[label, *(counts[s].get(label, 0) for s in present)] for label in labels]
        out += ["Examples per class:", "", _md_table(["class", *present], rows)]
    else:
        rows = [
            [s, len(counts[s]), min(counts[s].values()), max(counts[s].values())] for s in present
        ]
        out += [
            f"{len(labels)} classes; examples per class:",
            "",
            _md_table(["split", "classes", "min", "max"], rows),
        ]
    length = _first(findings, "length")
    if length is not None:
        per_class = length.data["per_class"]
        shown = list(per_class.items())[:30]
        rows = [
            [k, f"{v['mean']:.1f}", f"{v['std']:.1f}", int(v["min"]), int(v["max"])]
            for k, v in shown
        ]
        out += ["Tokens per sentence:", "", _md_table(["class", "mean", "std", "min", "max"], rows)]
    notes = [
        f for f in findings if f.check not in ("sizes", "balance", "length") or f.severity != "info"
    ]
    if notes:
        out += ["Checks:", ""]
        out += [f"- {f.severity}: {f.check}: {f.message}" for f in notes]
        out.append("")
    if stats:
        rows = [[k, v] for k, v in dict(stats).items()]
        out += ["Generation counts:", "", _md_table(["rule", "count"], rows)]
    return out


def quality_report(
    tasks: Sequence[Any],
    extra: Mapping[str, Any] | None = None,
    *,
    baselines: bool = True,
    thresholds: Thresholds | None = None,
) -> str:
    """Markdown quality report of a (generated) suite.

    ``tasks``: ProbingTasks or generator outputs (see :func:`as_probing_task`).
    ``extra`` (all keys optional): ``title``, ``description`` (text under the title),
    ``targets`` ({task name: {split: [target form of each sentence, or None]}}, for the exact
    lexical-split check), ``stats`` ({task name: {rule: count}}, e.g. rejection counts; taken
    from a generator output's ``stats`` otherwise; targets from its ``target_forms``);
    any other key is listed under
    "Generation settings".
    """
    extra = dict(extra or {})
    targets: Mapping[str, Any] = extra.pop("targets", None) or {}
    stats: Mapping[str, Any] = extra.pop("stats", None) or {}
    title = extra.pop("title", "Quality report")
    description = extra.pop("description", "")
    lines = [f"# {title}", ""]
    if description:
        lines += [str(description), ""]
    overview, sections, problems = [], [], []
    for raw in tasks:
        task = as_probing_task(raw)
        task_targets = (
            targets.get(task.name)
            or targets.get(paper_name(task))
            or getattr(raw, "target_forms", None)
        )
        findings = audit_task(
            task, baselines=baselines, targets=task_targets, thresholds=thresholds
        )
        overview.append(_overview_row(task, findings))
        problems += [f for f in findings if f.severity != "info"]
        task_stats = stats.get(task.name) or getattr(raw, "stats", None)
        sections += _task_section(task, findings, task_stats)
    header = [
        "task",
        *SPLITS,
        "classes",
        "max/min class",
        "shared sentences",
        "multi-label",
        "Majority",
        "Length",
        "NB-uni-tfidf",
        "status",
    ]
    lines += [
        "Accuracies are test-split percentages of the paper's text baselines; Length and "
        "NB-uni-tfidf far above Majority on a task where they should be at chance mean the "
        "label can be read off the surface.",
        "",
        _md_table(header, overview),
    ]
    lines += ["## Warnings and errors", ""]
    if problems:
        for f in sorted(problems, key=lambda f: -severity_rank(f.severity)):
            lines.append(f"- **{f.severity}** {f.task}: {f.check}: {f.message}")
            lines += [f"  - e.g. {ex}" for ex in f.examples[:3]]
    else:
        lines.append("None: every split is balanced, disjoint and free of the cues checked.")
    lines.append("")
    if extra:
        lines += ["## Generation settings", ""]
        lines += [f"- {k}: {v}" for k, v in extra.items()]
        lines.append("")
    lines += ["## Tasks", "", *sections]
    return "\n".join(lines).rstrip() + "\n"
