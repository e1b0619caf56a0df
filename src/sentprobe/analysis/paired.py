"""Two rows of the results table compared task by task on the same test items.

A gap between two accuracies says little on its own: a paired test asks whether the items
one row gets right and the other wrong are more than chance would give. Per task this runs
McNemar's exact test (and, as a check, a paired permutation test and a paired bootstrap CI
of the difference); the McNemar p-values are Holm-adjusted across the compared tasks, so
"significant" holds for the whole table at ``alpha``. On a task whose split is lexical (stored
``clusters``: each test item's target form) the items of a form are not independent: there the
test is the permutation test swapping whole forms and the CI resamples forms (McNemar's test
is not computed). Methods: docs/statistics.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sentprobe.analysis.stats import (
    POWER,
    detectable_difference,
    holm,
    paired_test,
    shared_clusters,
)
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.predictions import Predictions
from sentprobe.reporting.render import csv_table, latex_escape, latex_table, markdown_table
from sentprobe.reporting.tables import labelled, row_order

ALPHA = 0.05
#: The test behind each task's p (``test`` column): items independent, or whole forms swapped.
TESTS = {False: "McNemar exact", True: "permutation over forms"}
COLUMNS = [
    "task",
    "n",
    "clusters",
    "a",
    "b",
    "diff",
    "diff_low",
    "diff_high",
    "only_a",
    "only_b",
    "p_mcnemar",
    "p_permutation",
    "test",
    "p_holm",
    "significant",
    "mdd",
]


@dataclass(frozen=True)
class Cell:
    """One row's predictions on one task (table column), with what identifies its items."""

    predictions: Predictions
    task_hash: str


def cells(
    frame: pd.DataFrame, predictions: Mapping[str, Predictions], seed: int = 0
) -> tuple[dict[str, dict[str, Cell]], list[str], list[str]]:
    """Per table row and column the stored predictions of the record with ``seed`` (rows
    and columns named as in the results table), plus the table's row and column orders.

    A row computed once because nothing in it depends on the seed answers for any seed.
    """
    df = labelled(frame)
    rows, columns = row_order(df), list(dict.fromkeys(df["column"]))
    found: dict[str, dict[str, Cell]] = {}
    for (row, column), group in df.groupby(["row", "column"], sort=False):
        chosen = group[group["seed"] == seed]
        if chosen.empty and len(group) == 1 and _unseeded(group.iloc[0]):
            chosen = group
        if chosen.empty or chosen.iloc[-1]["key"] not in predictions:
            continue
        record = chosen.iloc[-1]
        found.setdefault(row, {})[column] = Cell(
            predictions[record["key"]], str(record.get("task_hash", ""))
        )
    return found, rows, columns


def _unseeded(record: pd.Series) -> bool:
    extra = record.get("extra")
    return isinstance(extra, dict) and extra.get("seeded") is False


def same_items(a: Cell, b: Cell) -> bool:
    """Whether two cells scored the same test items (same task data, same gold labels)."""
    return a.task_hash == b.task_hash and np.array_equal(
        a.predictions.gold_labels(), b.predictions.gold_labels()
    )


@dataclass
class Comparison:
    """Row ``a`` against row ``b``: one line per task compared (accuracies and the
    difference in points, p-values as fractions), and a note per task left out."""

    a: str
    b: str
    alpha: float
    table: pd.DataFrame
    skipped: list[str] = field(default_factory=list)


def compare_rows(
    frame: pd.DataFrame,
    predictions: Mapping[str, Predictions],
    a: str,
    b: str,
    alpha: float = ALPHA,
    seed: int = 0,
) -> Comparison:
    """Paired tests of rows ``a`` and ``b`` (named as in the results table) on every task
    both have predictions for; Holm's correction over those tasks."""
    found, rows, columns = cells(frame, predictions, seed)
    for name in (a, b):
        if name not in rows:
            raise SentprobeError(f"no row {name!r} in the results; rows: {', '.join(rows)}")
        if name not in found:
            raise SentprobeError(
                f"{name}: no stored predictions for seed {seed} (results from before "
                "predictions were stored: rerun it to compare)"
            )
    lines, skipped = [], []
    for column in columns:
        left, right = found[a].get(column), found[b].get(column)
        if left is None or right is None:
            if left is not None or right is not None:
                missing = a if left is None else b
                skipped.append(f"{column}: no predictions of {missing}")
            continue
        if not same_items(left, right):
            skipped.append(f"{column}: {a} and {b} were scored on different test items")
            continue
        same, clusters = shared_clusters([left.predictions, right.predictions])
        if not same:
            skipped.append(f"{column}: {a} and {b} group the test items into forms differently")
            continue
        result = paired_test(left.predictions.correct, right.predictions.correct, clusters)
        lines.append(
            {
                "task": column,
                "n": result.n,
                "clusters": result.clusters,
                "a": 100 * result.accuracy_a,
                "b": 100 * result.accuracy_b,
                "diff": 100 * result.diff,
                "diff_low": 100 * result.diff_low,
                "diff_high": 100 * result.diff_high,
                "only_a": result.only_a,
                "only_b": result.only_b,
                "p_mcnemar": result.p_mcnemar,
                "p_permutation": result.p_permutation,
                "test": TESTS[bool(result.clusters)],
            }
        )
    table = pd.DataFrame(lines, columns=COLUMNS[:-3])
    # each task's own test: McNemar on independent items, the form permutation test otherwise
    chosen = table["p_permutation"].where(table["clusters"] > 0, table["p_mcnemar"])
    table["p_holm"] = holm(chosen.to_numpy(dtype=float))
    table["significant"] = table["p_holm"] < alpha
    # what "not significant" can mean here: the smallest difference these items could show
    table["mdd"] = [
        100 * detectable_difference(int(t.n), int(t.only_a + t.only_b), alpha)
        for t in table.itertuples(index=False)
    ]
    if table.empty:
        raise SentprobeError(
            f"{a} and {b} share no task with stored predictions on the same test items"
            + (f" ({'; '.join(skipped)})" if skipped else "")
        )
    return Comparison(a, b, alpha, table, skipped)


CLUSTERED_NOTE = (
    "n / k forms: a lexical split, whose test items share k target word forms; the items of "
    "a form are not independent draws, so there the CI resamples forms, the test is the "
    "paired permutation test swapping a's and b's results on whole forms (p perm., the p "
    "that Holm adjusts), and McNemar's test, which counts items as independent, is not "
    "computed (–); the MDD assumes independent items and so understates the difference such "
    "a task could detect."
)


def _p(value: float) -> str:
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def comparison_text(comparison: Comparison, fmt: str = "markdown", decimals: int = 1) -> str:
    """The comparison as a markdown/latex table with its legend, or csv/json records
    (json: with the rows, alpha, correction and skipped tasks)."""
    c = comparison
    if fmt in ("csv", "json"):
        table = c.table.assign(row_a=c.a, row_b=c.b)[["row_a", "row_b", *COLUMNS]]
        if fmt == "csv":
            return csv_table(table)
        payload = {
            "a": c.a,
            "b": c.b,
            "alpha": c.alpha,
            "test": "McNemar exact (two-sided); where clusters > 0 (a lexical split), the "
            "paired permutation test swapping whole target forms",
            "correction": "holm",
            "mdd_power": POWER,
            "tasks": json.loads(table.to_json(orient="records")),
            "skipped": c.skipped,
        }
        return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    d = decimals
    star = "*" if fmt == "markdown" else "$^{*}$"
    header = ["Task", "n", c.a, c.b, f"Δ ({c.a} − {c.b})", "95% CI of Δ", f"only {c.a}",
              f"only {c.b}", "p McNemar", "p Holm", "p perm.", "MDD"]  # fmt: skip
    rows = [
        [
            t.task,
            f"{t.n} / {t.clusters} forms" if t.clusters else str(t.n),
            f"{t.a:.{d}f}",
            f"{t.b:.{d}f}",
            f"{t.diff:+.{d}f}" + (star if t.significant else ""),
            f"[{t.diff_low:+.{d}f}, {t.diff_high:+.{d}f}]",
            str(t.only_a),
            str(t.only_b),
            "–" if np.isnan(t.p_mcnemar) else _p(t.p_mcnemar),
            _p(t.p_holm),
            _p(t.p_permutation),
            "–" if np.isnan(t.mdd) else f"{t.mdd:.{d}f}",
        ]
        for t in c.table.itertuples(index=False)
    ]
    n_sig = int(c.table["significant"].sum())
    legend = [
        f"* significant at alpha = {c.alpha:g} (McNemar's exact test, Holm-adjusted over "
        f"the {len(c.table)} tasks compared): {n_sig} of {len(c.table)}. Δ in points, CI by "
        "paired bootstrap (1,000 resamples); p perm.: paired permutation test (10,000 random "
        "swaps), a check on McNemar.",
        f"MDD: the smallest difference (points) McNemar's test at alpha = {c.alpha:g} would "
        f"detect with {POWER:.0%} power on these items, given the share right for one row "
        "only (exact power; before Holm's correction, which raises it): a difference below it "
        "that is not significant is not evidence of no difference. –: the rows disagree on too "
        "few items for any difference to be detected.",
        *([CLUSTERED_NOTE] if (c.table["clusters"] > 0).any() else []),
        *(f"skipped {note}" for note in c.skipped),
    ]
    if fmt == "latex":
        header = [latex_escape(h).replace("Δ", r"$\Delta$").replace("−", "--") for h in header]
        rows = [[latex_escape(r[0]), *r[1:]] for r in rows]
        notes = [latex_escape(n).replace("Δ", r"$\Delta$") for n in legend]
        return latex_table(header, rows, notes=notes)
    return markdown_table(header, rows) + "\n" + "\n".join(legend) + "\n"
