"""How often two rows of the results table make the same prediction (Kim et al. 2019, Fig. 2).

Two encoders with equal accuracy may still get different items right; the share of test
items on which two rows predict the same label shows whether they learned the same thing.
Per task the share is over that task's test items; the aggregate weighs tasks by their
number of test items (it is the share over all items the two rows share). Only rows scored
on the same test items of a task (same task data and gold labels) are paired; predictions
are compared as label strings, so rows with differently ordered label sets still pair.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sentprobe.analysis.paired import cells, same_items
from sentprobe.evaluation.predictions import Predictions
from sentprobe.reporting.render import csv_table, latex_escape, latex_table, markdown_table

PAIR_COLUMNS = ["row_a", "row_b", "task", "n_items", "n_same"]


@dataclass
class Agreement:
    """Item counts per (row, row, task), both orders and the diagonal included."""

    pairs: pd.DataFrame  # PAIR_COLUMNS
    rows: list[str]
    tasks: list[str]

    def matrix(self, task: str | None = None) -> pd.DataFrame:
        """Rows x rows share of items predicted alike (0-1) on ``task``, or on all tasks
        item-weighted; NaN where two rows share no scored items."""
        pairs = self.pairs if task is None else self.pairs[self.pairs["task"] == task]
        sums = pairs.groupby(["row_a", "row_b"], sort=False)[["n_items", "n_same"]].sum()
        share = (sums["n_same"] / sums["n_items"]).unstack("row_b")
        present = [r for r in self.rows if r in share.index]
        out = share.reindex(index=present, columns=present).astype(float)
        out.index.name, out.columns.name = None, None
        return out

    def by_task(self) -> dict[str, pd.DataFrame]:
        """The matrix of every task, in the table's column order."""
        return {task: self.matrix(task) for task in self.tasks}

    def shares(self) -> pd.DataFrame:
        """Long form: one line per (row_a, row_b, task) with its share, plus task "all"
        (item-weighted over tasks) per pair; the diagonal left out."""
        pairs = self.pairs[self.pairs["row_a"] != self.pairs["row_b"]]
        total = pairs.groupby(["row_a", "row_b"], sort=False)[["n_items", "n_same"]].sum()
        total = total.reset_index().assign(task="all")
        out = pd.concat([pairs, total[PAIR_COLUMNS]], ignore_index=True)
        return out.assign(share=out["n_same"] / out["n_items"])


def prediction_agreement(
    frame: pd.DataFrame,
    predictions: Mapping[str, Predictions],
    rows: Sequence[str] | None = None,
    seed: int = 0,
) -> Agreement:
    """Agreement between every pair of ``rows`` (default: all rows with predictions) of the
    results table of ``frame``, from the stored ``predictions`` of seed ``seed``."""
    found, order, columns = cells(frame, predictions, seed)
    chosen = [r for r in (rows if rows is not None else order) if r in found]
    lines: list[tuple[str, str, str, int, int]] = []
    for column in columns:
        present = [r for r in chosen if column in found[r]]
        labels = {r: found[r][column].predictions.predicted_labels() for r in present}
        for i, a in enumerate(present):
            for b in present[i:]:
                if not same_items(found[a][column], found[b][column]):
                    continue
                n, same = len(labels[a]), int(np.count_nonzero(labels[a] == labels[b]))
                lines.append((a, b, column, n, same))
                if a != b:
                    lines.append((b, a, column, n, same))
    pairs = pd.DataFrame(lines, columns=PAIR_COLUMNS)
    tasks = [c for c in columns if c in set(pairs["task"])]
    return Agreement(pairs, [r for r in chosen if r in set(pairs["row_a"])], tasks)


def agreement_text(
    agreement: Agreement, fmt: str = "markdown", by_task: bool = False, decimals: int = 1
) -> str:
    """The aggregate matrix (and with ``by_task`` one per task) in percent, as markdown or
    latex tables; csv/json give :meth:`Agreement.shares` (every task and "all")."""
    if fmt == "csv":
        return csv_table(agreement.shares())
    if fmt == "json":
        return (
            json.dumps(
                json.loads(agreement.shares().to_json(orient="records")),
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    sections = [("all tasks (item-weighted)", agreement.matrix())]
    if by_task:
        sections += list(agreement.by_task().items())
    parts = []
    for title, matrix in sections:
        rows = [
            [str(r), *("–" if np.isnan(v) else f"{100 * v:.{decimals}f}" for v in matrix.loc[r])]
            for r in matrix.index
        ]
        if fmt == "latex":
            header = [latex_escape(str(c)) for c in ["", *matrix.columns]]
            body = [[latex_escape(r[0]), *r[1:]] for r in rows]
            parts.append(f"% {title}\n" + latex_table(header, body))
        else:
            parts.append(f"Prediction agreement, {title} (% of test items predicted alike)\n\n"
                         + markdown_table(["", *matrix.columns], rows))  # fmt: skip
    return "\n".join(parts)
