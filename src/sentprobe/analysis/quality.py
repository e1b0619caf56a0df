"""Markdown quality report of a generated suite, from the same checks ``sentprobe audit`` runs.

A generator claims balanced, disjoint splits with a lexical split where the paper has one, and
altered-sentence tasks that no surface rule can solve; this report shows the numbers that back
the claim (class counts, shared sentences and target forms, length per class, the gain over
majority of every single-position rule and text baseline next to the paper's own baseline
margins) next to any finding, so it can ship with the suite (``sentprobe build`` writes it
beside the data). A cue that beats the paper's baselines on a task where cues are expected is
listed with the suite author's explanation (:data:`CUE_NOTES`, or ``cue_notes`` in ``extra``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from sentprobe.analysis.audit import audit_task
from sentprobe.analysis.checks import (
    BASELINES,
    MAJORITY,
    RULES,
    Thresholds,
    paper_margins,
    paper_name,
)
from sentprobe.analysis.findings import Finding, severity_rank
from sentprobe.datasets.task import PAPER_TASKS, SPLITS, ProbingTask, Split, TaskMetadata
from sentprobe.io import atomic_write_text
from sentprobe.parallel import process_map
from sentprobe.reporting.render import markdown_table

_STATUS = {None: "ok", "info": "ok", "warning": "warning", "error": "**error**"}

#: Why a cue beats the paper's baselines on a task where the paper has cues too, by paper task
#: and check name (what is inherent to the task, not a defect of the generator). A suite's
#: own ``cue_notes`` (``extra`` of :func:`quality_report`) are shown instead where given.
CUE_NOTES: dict[str, dict[str, str]] = {
    "TreeDepth": {
        "first-token": "the first word tells the sentence type: a subordinating opener (If, "
        "Si, Если) adds a clause level, an imperative starts a flat instruction; the paper "
        "controls depth against length, not against openers",
        "punct-count": "commas and brackets mark extra clauses and appositions, so they grow "
        "with depth; the paper controls length, not punctuation",
    },
    "Tense": {
        "first-token": "the first word is often the main verb itself (an imperative is "
        "present) or its subject or auxiliary, and in templated text (software help) an "
        "opener fixes the whole frame, main verb included",
    },
    "SubjNum": {
        "first-token": "the subject usually comes first, so the first word is its determiner "
        "(Les/La, Los/El, Эти) or the noun itself, both marked for number; English 'The' is "
        "not, which is why the paper's suite shows no such rule",
    },
    "ObjNum": {
        "first-token": "an imperative's form, or a determiner that agrees with the object, "
        "can come first in instructions",
    },
}


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


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _first(findings: list[Finding], check: str) -> Finding | None:
    return next((f for f in findings if f.check == check), None)


#: Accuracy columns of the overview: Majority and the paper's baselines the audit trains.
_OVERVIEW_SCORES = (MAJORITY, *(b.name for b in BASELINES if not b.audit_only))


def _overview_row(task: ProbingTask, findings: list[Finding]) -> list[Any]:
    sizes = _first(findings, "sizes").data["sizes"]  # type: ignore[union-attr]
    counts = _first(findings, "balance").data["counts"]  # type: ignore[union-attr]
    ratios = [max(c.values()) / min(c.values()) for c in counts.values() if c]
    shared = sum(f.count or 0 for f in findings if f.check in ("split-overlap", "identical-splits"))
    multi = sum(f.count or 0 for f in findings if f.check == "multi-label")
    scores: dict[str, float | None] = dict.fromkeys(_OVERVIEW_SCORES)
    for f in findings:
        if f.data.get("kind") == "baseline" and f.data["baseline"] in scores:
            scores[MAJORITY] = f.data["majority"]
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
        out += ["Examples per class:", "", markdown_table(["class", *present], rows)]
    else:
        rows = [
            [s, len(counts[s]), min(counts[s].values()), max(counts[s].values())] for s in present
        ]
        out += [
            f"{len(labels)} classes; examples per class:",
            "",
            markdown_table(["split", "classes", "min", "max"], rows),
        ]
    length = _first(findings, "length")
    if length is not None:
        per_class = length.data["per_class"]
        shown = list(per_class.items())[:30]
        rows = [
            [k, f"{v['mean']:.1f}", f"{v['std']:.1f}", int(v["min"]), int(v["max"])]
            for k, v in shown
        ]
        out += [
            "Tokens per sentence:",
            "",
            markdown_table(["class", "mean", "std", "min", "max"], rows),
        ]
    notes = [
        f for f in findings if f.check not in ("sizes", "balance", "length") or f.severity != "info"
    ]
    if notes:
        out += ["Checks:", ""]
        out += [f"- {f.severity}: {f.check}: {f.message}" for f in notes]
        out.append("")
    if stats:
        rows = [[k, v] for k, v in dict(stats).items()]
        out += ["Generation counts:", "", markdown_table(["rule", "count"], rows)]
    return out


def _cue_columns() -> list[tuple[str, str]]:
    rules = [(r.check, r.name) for r in RULES] + [("contains-token", "contains token")]
    return rules + [(b.check, b.name) for b in BASELINES]


_SHORT = {
    "first-token": "first tok",
    "first-token-class": "first class",
    "last-token": "last tok",
    "last-token-class": "last class",
    "last-char": "last char",
    "punct-count": "punct",
    "casing-cue": "casing",
    "contains-token": "contains",
    **{b.check: b.short for b in BASELINES},
}


def _gain_cell(f: Finding | None) -> str:
    if f is None:
        return "-"
    mark = "*" if f.data["significant"] else ""
    text = f"{f.data['gain_points']:+.1f}{mark}"
    return f"**{text}**" if f.severity != "info" else text


def _note(task: ProbingTask, check: str, notes: Mapping[str, Mapping[str, str]]) -> str | None:
    for key in (task.name, paper_name(task)):
        for source in (notes, CUE_NOTES):
            if check in source.get(key, {}):
                return source[key][check]
    return None


def _cue_section(
    rows: list[tuple[ProbingTask, list[Finding]]], notes: Mapping[str, Mapping[str, str]]
) -> list[str]:
    """Every cue's gain over Majority per task, the paper's baseline margins beside them, and
    the cues that beat those margins with their explanation."""
    columns = _cue_columns()
    table, beaten = [], []
    for task, findings in rows:
        by_check = {f.check: f for f in findings if "gain_points" in f.data}
        if not by_check:
            continue
        margins = paper_margins(task)
        paper = " / ".join(f"{m:+.1f}" for m in margins.values()) if margins else "-"
        majority = next(iter(by_check.values())).data["majority"]
        table.append(
            [task.name, _pct(majority), *(_gain_cell(by_check.get(c)) for c, _ in columns), paper]
        )
        for check, name in columns:
            f = by_check.get(check)
            if f is not None and f.data["kind"] == "rule" and f.data["beats_paper"]:
                beaten.append((task, check, name, f))
    if not table:
        return []
    header = ["task", MAJORITY, *(_SHORT.get(c, c) for c, _ in columns), "paper L/uni/bi"]
    out = [
        "## Surface cues",
        "",
        "Points over Majority on test of each single-position rule (the most frequent train "
        "label per value of: first token, its class, last token, its class, last character, "
        "number of punctuation tokens, casing of the first word) and text baseline (Length, "
        "NB-uni/bi-tfidf, NB on character 1-4-grams); * = significant (exact one-sided "
        "binomial test of its test hits against the largest class share, p < 0.01); bold = a "
        "warning or "
        "error (BShift, SOMO and CoordInv must carry no cue: 3 / 10 points beyond the paper's "
        "own margin). Last column: the paper's Length / NB-uni-tfidf / NB-bi-tfidf margins over "
        "Majority (Conneau et al. 2018, Table 2).",
        "",
        markdown_table(header, table),
    ]
    if beaten:
        out += ["Rules above all of the paper's baselines on a task where cues are expected:", ""]
        for task, check, name, f in beaten:
            best = max(f.data["paper_margins"].values())
            note = _note(task, check, notes) or "not explained by the suite author"
            out.append(
                f"- {task.name}: {name} {f.data['gain_points']:+.1f} points "
                f"(paper's best baseline {best:+.1f}): {note}"
            )
        out.append("")
    return out


#: Sentences (all tasks) from which the audits run in one worker process per core: starting
#: a worker costs seconds, auditing 200k sentences on one core ~80 s.
PARALLEL_FROM = 50_000


def _audit(
    item: tuple[ProbingTask, Any], baselines: bool, thresholds: Thresholds | None
) -> list[Finding]:
    task, targets = item
    return audit_task(task, baselines=baselines, targets=targets, thresholds=thresholds)


def quality_report(
    tasks: Sequence[Any],
    extra: Mapping[str, Any] | None = None,
    *,
    baselines: bool = True,
    thresholds: Thresholds | None = None,
    progress: bool = False,
) -> str:
    """Markdown quality report of a (generated) suite.

    ``tasks``: ProbingTasks or generator outputs (see :func:`as_probing_task`).
    ``extra`` (all keys optional): ``title``, ``description`` (text under the title),
    ``targets`` ({task name: {split: [target form of each sentence, or None]}}, for the exact
    lexical-split check), ``stats`` ({task name: {rule: count}}, e.g. rejection counts; taken
    from a generator output's ``stats`` otherwise; targets from its ``target_forms``);
    any other key is listed under
    "Generation settings". The tasks are audited side by side on every core when they hold
    more than :data:`PARALLEL_FROM` sentences; ``progress`` shows a bar.
    """
    extra = dict(extra or {})
    targets: Mapping[str, Any] = extra.pop("targets", None) or {}
    stats: Mapping[str, Any] = extra.pop("stats", None) or {}
    title = extra.pop("title", "Quality report")
    description = extra.pop("description", "")
    lines = [f"# {title}", ""]
    if description:
        lines += [str(description), ""]
    cue_notes: Mapping[str, Mapping[str, str]] = extra.pop("cue_notes", None) or {}
    overview, sections, problems, cue_rows = [], [], [], []
    items = []
    for raw in tasks:
        task = as_probing_task(raw)
        task_targets = (
            targets.get(task.name)
            or targets.get(paper_name(task))
            or getattr(raw, "target_forms", None)
        )
        items.append((task, task_targets))
    size = sum(len(task.sentences()) for task, _ in items)
    audits = process_map(
        partial(_audit, baselines=baselines, thresholds=thresholds),
        items,
        jobs=None if size >= PARALLEL_FROM else 1,
        desc="quality report",
        progress=progress,
    )
    for raw, (task, _), findings in zip(tasks, items, audits):
        overview.append(_overview_row(task, findings))
        cue_rows.append((task, findings))
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
        *_OVERVIEW_SCORES,
        "status",
    ]
    lines += [
        "Accuracies are test-split percentages of the paper's text baselines; far above "
        "Majority on a task where they should be at chance, they mean the label can be read "
        "off the surface.",
        "",
        markdown_table(header, overview),
    ]
    lines += _cue_section(cue_rows, cue_notes)
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


def write_quality_report(out: str | Path, result: Any, **options: Any) -> Path:
    """Write ``QUALITY.md`` into the suite ``out`` that ``generation.pipeline.build`` wrote
    (``result`` is its ``BuildResult``); ``options`` go to :func:`quality_report`."""
    report = quality_report(result.tasks, result.report_context, **options)
    return atomic_write_text(Path(out) / "QUALITY.md", report)


def write_function_word_quality(out: str | Path, result: Any, **options: Any) -> Path:
    """Write ``QUALITY.md`` into a function-word suite (Kim et al. 2019) that
    ``generation.function_words.build_function_words`` wrote (``result``: its
    ``KimBuildResult``, or the manifest it wrote): the suite is read back with the DNC
    loader, so the report checks what ``sentprobe run`` and ``sentprobe audit`` will see
    (folds pooled half/half, pairs joined: ``analysis.checks.views``)."""
    from sentprobe.datasets.loaders.dnc import (
        SmallSetError,
        UnverifiedSetError,
        data_files,
        load_dnc_set,
        set_stem,
    )
    from sentprobe.generation.function_words import collocation_note, rule_status_markdown

    tasks, refused = [], []
    for path in data_files(Path(out)):
        try:
            tasks.append(load_dnc_set(path))
        except UnverifiedSetError as e:
            refused.append(
                f"- {e.stem}: all {e.unverified} mutated items await annotation (`sentprobe "
                "annotate export` this suite, collect votes, `sentprobe annotate import`)"
            )
        except SmallSetError as e:
            refused.append(f"- {e.problem}")
    manifest = result if isinstance(result, dict) else result.manifest
    set_stats = {name: entry.get("stats") or {} for name, entry in manifest.get("sets", {}).items()}
    stats = {t.name: set_stats.get(set_stem(Path(t.metadata.source))) for t in tasks}
    note = (
        "Kim et al. (2019)'s acceptability sets must carry no surface cue: a single-position "
        "or 'contains token X' rule 3 (10) points over majority is a warning (error), and "
        "on a set whose label should depend on the function word itself, one n-gram "
        "presence rule 10 points over majority is a warning (lexical-ngram). "
        "NB-bi-tfidf is reported, not counted: bigrams see the swapped word among its "
        "neighbours (docs/function-words.md). Ten-fold sets "
        "are checked on the items tested in folds 1-5 (train) against folds 6-10 (test); a "
        "sentence pair as one text, 'first ||| second'."
    )
    parts = [manifest.get("description", ""), note, collocation_note(set_stats)]
    nli = sorted(name for name in set_stats if name.startswith("nli-"))
    if nli:
        own = (manifest.get("annotation") or {}).get("rules")
        parts.append(rule_status_markdown(nli, own))
    if refused:
        parts.append(
            "Not scored (sentprobe run skips them, one line each):\n\n" + "\n".join(refused)
        )
    extra = {
        "title": f"Quality report: {manifest.get('suite', Path(out).name)}",
        "description": "\n\n".join(filter(None, parts)),
        "stats": stats,
        "corpus": ", ".join(c.get("path") or c.get("name", "") for c in manifest.get("corpus", [])),
        "seed": (manifest.get("generator") or {}).get("seed"),
        **options.pop("extra", {}),
    }
    report = quality_report(tasks, extra, **options)
    return atomic_write_text(Path(out) / "QUALITY.md", report)
