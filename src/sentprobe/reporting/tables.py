"""Results tables in the layout of the paper's Table 2: encoders as rows, tasks as columns.

Columns follow ``PAPER_TASKS`` under Surface / Syntactic / Semantic headers, other tasks
after them under "Other". Rows start with the paper's baselines, then untrained encoders,
then the rest in the order first seen. Scores are percentages; several seeds give
"mean ± std". Input is the frame of ``ResultsStore.to_frame()`` (one row per record).

Confidence intervals come from an ``interval`` function given by the caller (the CLI passes
``sentprobe.analysis.stats.interval_function``): it maps a cell's record keys to (low, high)
or None, so these tables only format numbers and never need the stored predictions.

Long because every format (markdown, LaTeX, CSV/JSON, the terminal) renders one summary with
one set of markers, and the rules that set a marker (unpinned weights, old task data, no seed
dependence, folds, heuristic labels, a probe that says nothing, a dev split unlike test, an
encoder's own warnings, n/a cells) live beside it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd
from rich.table import Table
from rich.text import Text

from sentprobe.datasets.task import PAPER_TASKS
from sentprobe.encoders.hf import is_unresolved
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.baselines import paper_labels
from sentprobe.evaluation.identity import resolve, row_display_names, task_names
from sentprobe.reporting.render import csv_table, latex_escape, latex_table, markdown_table

GROUP_TITLES = {
    "surface": "Surface",
    "syntactic": "Syntactic",
    "semantic": "Semantic",
    "other": "Other",
}
FORMATS = ("markdown", "csv", "latex", "json")
REQUIRED = ("encoder", "task", "probe", "seed")
MISSING = "-"
UNRESOLVED, OLD_TASK, NO_SEED = "†", "‡", "°"
FOLD_SD, FALLBACK = "§", "¶"  # cross-validated tasks (evaluation/folds.py)
HEURISTIC = "♯"  # scored on a generator's labels, not annotators' (run --allow-heuristic-labels)
COLLAPSED = "∅"  # the probe says nothing: one class predicted on test, or no better than it
DEV_UNLIKE_TEST = "≠"  # dev at its majority, test significantly above its own: the split's fault
#: The level at which a test score counts as above a constant guess (one-sided binomial).
ABOVE_MAJORITY_ALPHA = 0.05
WARNED = (
    "⚠"  # the encoder's probe checks warn (a trained run's unknown words, a student's language)
)
NOT_APPLICABLE = "n/a"  # a cell whose records say why their number is not defined
#: What each marker says; shown under the table whenever the marker appears in it.
NOTES = {
    UNRESOLVED: "hub revision unresolved: the model's commit could not be found when it ran "
    "(offline and not cached), so these scores are not pinned to one set of weights.",
    OLD_TASK: "computed on an older version of this task's data than the newest result in its "
    "column (another task hash): rerun this row to compare like with like.",
    NO_SEED: "nothing here depends on the seed (deterministic probe and encoder): computed "
    "once, so there is no ± over seeds (a ± beside § is the spread over folds).",
    FOLD_SD: "mean test accuracy over the task's cross-validation folds; ± is the standard "
    "deviation over folds, also where ° says the cell was computed once (with several seeds or "
    "restarts, ± is over those instead).",
    FALLBACK: "NLI set probed by 10-fold cross-validation within the set (no --nli-train): "
    "NOT the paper's protocol, which scores these sets zero-shot with an MNLI-trained head.",
    HEURISTIC: "scored on labels a generator's rule assigned, not annotators' (run "
    "--allow-heuristic-labels): agreement with the rule, not with human judgments.",
    COLLAPSED: "the probe says nothing here: it predicted a single class on the test set, or "
    "its dev (selection) score is at or below the dev split's majority rate and its test "
    "score is not significantly above the test's (csv/json notes say which); its score is "
    "that of a constant guess, not a reading of the vectors.",
    DEV_UNLIKE_TEST: "dev at majority, test above it: the probe's dev (selection) score is at "
    "or below the dev split's majority rate, yet its test score is significantly above the "
    "test's (one-sided binomial test, p < 0.05): the dev split does not represent test, so "
    "the probe was selected on a split that says nothing; the test score is a reading of "
    "the vectors, its selection is not.",
    WARNED: "the encoder's own checks warn on this task: a trained run reads more than 25% of "
    "its test tokens as unknown, or a cross-lingual student is probed in another language "
    "(csv/json notes say which); the score says little about the sentences.",
}


def probe_mark(extra: dict, dev_score: float | None) -> tuple[str, str]:
    """A record's mark about what its probe says, and why (("", "") if nothing to mark), from
    what the runner stores in ``extra``: ∅ when it predicted one class on every test item
    (``predicted_classes``), or when its dev score is at most the dev split's majority rate
    (``dev_majority``) and its test hits are not significantly above the test's majority
    share (``p_above_majority``, one-sided binomial); ≠ when its dev score is at the dev
    majority but its test score is significantly above the test's: the split's fault, not
    the probe's. A record stored without ``p_above_majority`` is judged by its dev score."""
    if extra.get("predicted_classes") == 1:
        return COLLAPSED, "predicts a single class on test"
    majority = extra.get("dev_majority")
    if majority is None or dev_score is None or math.isnan(dev_score):
        return "", ""
    if dev_score > majority + 1e-9:
        return "", ""
    why = f"dev score {100 * dev_score:g}% at or below the dev majority {100 * majority:g}%"
    p = extra.get("p_above_majority")
    if p is None:
        return COLLAPSED, why
    test = f"test majority {100 * extra.get('test_majority', math.nan):g}%, p = {p:.2g}"
    if p < ABOVE_MAJORITY_ALPHA:
        return DEV_UNLIKE_TEST, f"{why}, test significantly above its majority ({test})"
    return COLLAPSED, f"{why}, test not significantly above its majority ({test})"


#: A cell's record keys -> its confidence interval (fractions), or None when it has none.
IntervalFn = Callable[[Sequence[str]], tuple[float, float] | None]
CI_NOTE = (
    "±x after a score: half the width of its 95% bootstrap confidence interval (1,000 "
    "resamples of the test items, or of their target word forms where the task's split is "
    "lexical; in brackets after mean ± sd over seeds or folds; with "
    "several seeds, seeds are resampled too); csv/json give the interval's bounds. No ±x: "
    "no stored predictions."
)


@dataclass
class _Summary:
    """Aggregated cells plus the row and column order of the table."""

    cells: pd.DataFrame  # index (row, column); columns mean, std, n
    rows: list[str]
    columns: list[tuple[str, str]]  # (group title, column label)
    encoders: dict[str, str]  # row label -> encoder name
    row_marks: dict[str, str] = field(default_factory=dict)  # row -> markers
    cell_marks: dict[tuple[str, str], str] = field(default_factory=dict)  # (row, column)
    row_notes: dict[str, list[str]] = field(default_factory=dict)  # for csv/json
    intervals: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    undefined: dict[tuple[str, str], str] = field(default_factory=dict)  # cell -> why n/a

    def label(self, row: str) -> str:
        return row + self.row_marks.get(row, "")

    @property
    def notes(self) -> list[str]:
        """The legend of the markers used, in marker order."""
        used = "".join(self.row_marks.values()) + "".join(self.cell_marks.values())
        marks = [f"{mark} {text}" for mark, text in NOTES.items() if mark in used]
        return marks + list(dict.fromkeys(self.undefined.values()))

    def cell(self, row: str, column: str) -> tuple[float, float, int] | None:
        try:
            mean, std, n = self.cells.loc[(row, column), ["mean", "std", "n"]]
        except KeyError:
            return None
        return float(mean), float(std), int(n)

    @property
    def several_seeds(self) -> bool:
        return bool((self.cells["n"] > 1).any())


def _row_rank(encoder: str) -> int:
    """Row order: the paper's baselines in its order, then untrained encoders, then the rest."""
    lowered = [b.lower() for b in paper_labels()]
    if encoder.lower() in lowered:
        return lowered.index(encoder.lower())
    if "(untrained)" in encoder:
        return len(lowered)
    return len(lowered) + 1


def labelled(frame: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """The records the table shows (the newest of each identity, :func:`~sentprobe.evaluation
    .identity.resolve`) with their "row" (one per encoder fingerprint and probe) and "column"
    (one per task identity) display names, so other reports (``sentprobe compare``,
    prediction agreement) name rows and tasks exactly as the table does."""
    missing = [c for c in (*REQUIRED, *([metric] if metric else [])) if c not in frame.columns]
    if missing:
        raise SentprobeError(f"results are missing column(s): {', '.join(missing)}")
    df = resolve(frame)
    df["column"] = task_names(df)
    df["row"] = row_display_names(df)
    return df


def row_order(df: pd.DataFrame) -> list[str]:
    """The table's order of the rows of a :func:`labelled` frame."""
    encoders = dict(zip(df["row"], df["encoder_label"].astype(str), strict=True))
    return sorted(dict.fromkeys(df["row"]), key=lambda r: _row_rank(encoders[r]))


def _summarize(
    frame: pd.DataFrame, metric: str, percent: bool, interval: IntervalFn | None = None
) -> _Summary:
    df = labelled(frame, metric)
    paper_order = {task: i for i, task in enumerate(PAPER_TASKS)}
    df["group"] = [GROUP_TITLES[PAPER_TASKS.get(t, "other")] for t in df["task"]]
    df["_order"] = [paper_order.get(t, len(paper_order)) for t in df["task"]]
    columns = (
        df[["_order", "group", "column"]]
        .drop_duplicates("column")
        .sort_values("_order", kind="stable")[["group", "column"]]
    )

    encoders = dict(zip(df["row"], df["encoder_label"].astype(str), strict=True))
    rows = row_order(df)

    scale = 100.0 if percent else 1.0
    values = pd.to_numeric(df[metric], errors="coerce") * scale
    cells = values.groupby([df["row"], df["column"]], sort=False).agg(
        mean="mean", std="std", n="count"
    )
    summary = _Summary(cells, rows, list(columns.itertuples(index=False, name=None)), encoders)
    _mark(summary, df)
    _fold_spread(summary, df, scale)
    if interval is not None and metric == "test_score" and "key" in df.columns:
        for (row, column), keys in df.groupby(["row", "column"], sort=False)["key"]:
            found = interval(list(keys))
            if found is not None:
                summary.intervals[(row, column)] = (found[0] * scale, found[1] * scale)
    return summary


def _mark(summary: _Summary, df: pd.DataFrame) -> None:
    """Flag what a bare number would hide: unpinned hub weights (row), a cell computed on
    older task data than its column's newest result, a cell that no seed can change."""
    notes: dict[str, list[str]] = {}
    if "encoder_fingerprint" in df.columns:
        for row, fps in df.groupby("row", sort=False)["encoder_fingerprint"]:
            if any(is_unresolved(str(fp)) for fp in fps):
                summary.row_marks[row] = UNRESOLVED
                notes.setdefault(row, []).append("hub revision unresolved")
    if "task_hash" in df.columns:
        for column, group in df.groupby("column", sort=False):
            newest = group["task_hash"].iloc[-1]  # df is in write order
            if "created" in group.columns:
                newest = group.sort_values("created", kind="stable")["task_hash"].iloc[-1]
            for row in group.loc[group["task_hash"] != newest, "row"].unique():
                summary.cell_marks[(row, column)] = OLD_TASK
                notes.setdefault(row, []).append(f"{column}: older task data")
    if "extra" in df.columns:
        extras = [e if isinstance(e, dict) else {} for e in df["extra"]]
        seeds = max([int(e.get("seeds", 1)) for e in extras] + [int(df["seed"].max()) + 1])
        if seeds > 1:
            fixed = pd.Series([e.get("seeded") is False for e in extras], index=df.index)
            for (row, column), group in fixed.groupby([df["row"], df["column"]], sort=False):
                if group.all():  # identical records if stored per seed: no spread to show
                    summary.cells.loc[(row, column), ["std", "n"]] = (math.nan, 1)
                    mark = summary.cell_marks.get((row, column), "")
                    summary.cell_marks[(row, column)] = mark + NO_SEED
                    notes.setdefault(row, []).append(f"{column}: no seed dependence")
    if "extra" in df.columns:
        dev = df["dev_score"] if "dev_score" in df.columns else pd.Series(None, index=df.index)
        for (row, column), group in df.groupby(["row", "column"], sort=False):
            extras = [e if isinstance(e, dict) else {} for e in group["extra"]]
            found = [probe_mark(e, d) for e, d in zip(extras, dev[group.index], strict=True)]
            marks = {mark for mark, _ in found}
            for mark in (COLLAPSED, DEV_UNLIKE_TEST):  # a seed that says nothing outranks ≠
                if mark in marks:
                    summary.cell_marks[(row, column)] = (
                        summary.cell_marks.get((row, column), "") + mark
                    )
                    break
            for reason in dict.fromkeys(why for _, why in found if why):
                notes.setdefault(row, []).append(f"{column}: {reason}")
            checks = [e.get("probe_checks") or {} for e in extras]
            warned = list(dict.fromkeys(w for c in checks for w in c.get("warnings", [])))
            if warned:
                mark = summary.cell_marks.get((row, column), "")
                summary.cell_marks[(row, column)] = mark + WARNED
                notes.setdefault(row, []).extend(f"{column}: {w}" for w in warned)
            if extras and all(e.get("undefined") for e in extras):
                summary.undefined[(row, column)] = extras[0]["undefined"]
                notes.setdefault(row, []).append(f"{column}: {extras[0]['undefined']}")
    summary.row_notes = notes


def _fold_spread(summary: _Summary, df: pd.DataFrame, scale: float) -> None:
    """Cross-validated cells run once show ± over their folds (§); NLI cells probed by the
    fallback CV instead of zero-shot are marked (¶)."""
    if "extra" not in df.columns:
        return
    extras = pd.Series([e if isinstance(e, dict) else {} for e in df["extra"]], index=df.index)
    for (row, column), group in extras.groupby([df["row"], df["column"]], sort=False):
        marks = summary.cell_marks.get((row, column), "")
        if any(e.get("protocol") == "cv-fallback" for e in group):
            marks += FALLBACK
            summary.row_notes.setdefault(row, []).append(f"{column}: CV within the set")
        if any(e.get("heuristic_labels") for e in group):
            marks += HEURISTIC
        scores = group.iloc[0].get("fold_scores") if len(group) == 1 else None
        if scores and len(scores) > 1:
            spread = float(pd.Series(scores).std()) * scale
            summary.cells.loc[(row, column), ["std", "n"]] = (spread, len(scores))
            marks += FOLD_SD
        if marks:
            summary.cell_marks[(row, column)] = marks


def pivot(
    frame: pd.DataFrame, metric: str = "test_score", stat: str = "mean", percent: bool = True
) -> pd.DataFrame:
    """The table's numbers: rows = encoders, columns = (group, task), ``stat`` in
    {"mean", "std", "n"} over seeds (percentages unless ``percent=False``)."""
    if frame.empty:
        return pd.DataFrame()
    summary = _summarize(frame, metric, percent)
    wide = summary.cells[stat].unstack("column")
    wide = wide.reindex(index=summary.rows, columns=[c for _, c in summary.columns])
    wide.columns = pd.MultiIndex.from_tuples(summary.columns, names=["group", "task"])
    wide.index.name = "encoder"
    return wide


def _format_cell(
    cell: tuple[float, float, int] | None,
    decimals: int,
    pm: str,
    mark: str = "",
    ci: tuple[float, float] | None = None,
) -> str:
    if cell is None or math.isnan(cell[0]):
        return MISSING
    mean, std, n = cell
    text = f"{mean:.{decimals}f}"
    if n > 1 and not math.isnan(std):
        text += f"{pm}{std:.{decimals}f}"
    if ci is not None:
        half = f"{pm.strip()}{(ci[1] - ci[0]) / 2:.{decimals}f}"
        text += f" ({half})" if n > 1 else f" {half}"
    return text + mark


def _cells(summary: _Summary, row: str, decimals: int, pm: str, marks=lambda m: m) -> list[str]:
    return [
        NOT_APPLICABLE + marks(summary.cell_marks.get((row, c), ""))
        if (row, c) in summary.undefined
        else _format_cell(
            summary.cell(row, c),
            decimals,
            pm,
            marks(summary.cell_marks.get((row, c), "")),
            summary.intervals.get((row, c)),
        )
        for _, c in summary.columns
    ]


def _ci_notes(summary: _Summary) -> list[str]:
    return [CI_NOTE] if summary.intervals else []


def _markdown(summary: _Summary, decimals: int) -> str:
    """Pipe table; the group row is the header, task names the first (bold) row."""
    groups, seen = [], set()
    for group, _ in summary.columns:
        groups.append(group if group not in seen else "")
        seen.add(group)
    rows = [
        ["**Encoder**", *(f"**{c}**" for _, c in summary.columns)],
        *([summary.label(row), *_cells(summary, row, decimals, " ± ")] for row in summary.rows),
    ]
    legend = [*summary.notes, *_ci_notes(summary)]
    notes = ["", *legend] if legend else []
    return "\n".join([markdown_table(["", *groups], rows).rstrip("\n"), *notes]) + "\n"


def _latex(summary: _Summary, decimals: int) -> str:
    """booktabs tabular with a \\multicolumn group row, as in the paper."""
    rows = [
        [
            latex_escape(row) + _tex_marks(summary.row_marks.get(row, "")),
            *_cells(summary, row, decimals, r" $\pm$ ", _tex_marks),
        ]
        for row in summary.rows
    ]
    return latex_table(
        ["Encoder", *(latex_escape(c) for _, c in summary.columns)],
        rows,
        groups=[group for group, _ in summary.columns],
        notes=[
            f"{_tex_marks(n[0])} {latex_escape(n[2:])}" if n[0] in _TEX_MARKS else latex_escape(n)
            for n in summary.notes
        ]
        + [latex_escape(n).replace("±", r"$\pm$") for n in _ci_notes(summary)],
    )


_TEX_MARKS = {
    UNRESOLVED: r"\dag",
    OLD_TASK: r"\ddag",
    NO_SEED: r"\circ",
    FOLD_SD: r"\S",
    FALLBACK: r"\P",
    HEURISTIC: r"\sharp",
    COLLAPSED: r"\emptyset",
    DEV_UNLIKE_TEST: r"\neq",
    WARNED: "!",
}


def _tex_marks(marks: str) -> str:
    return "".join(rf"\textsuperscript{{${_TEX_MARKS[m]}$}}" for m in marks)


def _flat(summary: _Summary) -> pd.DataFrame:
    """Wide frame for csv/json: a mean column per task, plus "<task> std" with seeds; not
    rounded, so every stored digit reaches the reader."""
    data: dict[str, list] = {"encoder": [summary.label(row) for row in summary.rows]}
    for _, column in summary.columns:
        cells = [summary.cell(row, column) for row in summary.rows]
        data[column] = [None if c is None else _number(c[0]) for c in cells]
        if summary.several_seeds:
            data[f"{column} std"] = [None if c is None else _number(c[1]) for c in cells]
        if summary.intervals:
            bounds = [summary.intervals.get((row, column)) for row in summary.rows]
            for side, name in enumerate(("ci_low", "ci_high")):
                data[f"{column} {name}"] = [None if b is None else _number(b[side]) for b in bounds]
    if summary.row_notes:  # what the markers say, per row: no legend needed to read a csv
        data["notes"] = ["; ".join(summary.row_notes.get(row, [])) for row in summary.rows]
    return pd.DataFrame(data)


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def results_table(
    frame: pd.DataFrame,
    metric: str = "test_score",
    fmt: str = "markdown",
    decimals: int = 1,
    percent: bool = True,
    interval: IntervalFn | None = None,
) -> str:
    """Render the results as markdown, csv, latex or json (a list of row records); with
    ``interval``, test scores get confidence intervals (see the module docstring)."""
    if fmt not in FORMATS:
        raise SentprobeError(f"unknown table format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if frame.empty:
        raise SentprobeError("no results to report")
    summary = _summarize(frame, metric, percent, interval)
    if fmt == "markdown":
        return _markdown(summary, decimals)
    if fmt == "latex":
        return _latex(summary, decimals)
    flat = _flat(summary)
    if fmt == "csv":
        return csv_table(flat)
    records = [
        {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()}
        for rec in flat.to_dict(orient="records")
    ]
    return json.dumps(records, indent=2, ensure_ascii=False) + "\n"


def rich_table(
    frame: pd.DataFrame,
    metric: str = "test_score",
    decimals: int = 1,
    percent: bool = True,
    interval: IntervalFn | None = None,
) -> Table:
    """The same table for the terminal; column titles are "Group" over "Task"."""
    table = Table(title=f"{metric} (%)" if percent else metric)
    table.add_column("Encoder", no_wrap=True)
    if frame.empty:
        return table
    summary = _summarize(frame, metric, percent, interval)
    previous = None
    for group, column in summary.columns:
        title = Text(f"{group if group != previous else ''}\n{column}")  # Text: no markup
        table.add_column(title, justify="right")
        previous = group
    last_baseline = max(
        (
            i
            for i, r in enumerate(summary.rows)
            if _row_rank(summary.encoders[r]) < len(paper_labels())
        ),
        default=None,
    )
    for i, row in enumerate(summary.rows):
        cells = _cells(summary, row, decimals, " ± ")
        table.add_row(Text(summary.label(row)), *cells, end_section=i == last_baseline)
    legend = [*summary.notes, *_ci_notes(summary)]
    if legend:
        table.caption = Text("\n".join(legend))
    return table
