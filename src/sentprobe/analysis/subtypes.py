"""Accuracy by item sub-type: ``sentprobe report --by subtype``.

Kim et al. (2019) break their scores down by what each item tests: negation by pattern on
premise and hypothesis (their Appendix F: lexical, explicit, both, none), prepositions by
preposition, wh-words by wh-word. A task's loader records each item's sub-type in
``Split.groups``; the runner stores it with the unit's per-item predictions, so the breakdown
is computed from the store alone, for any row, without probing again. With several seeds (or a
random encoder's restarts) a cell is the mean over them, and ``sd`` their spread. Negation
patterns also get Appendix F's coarse groups (``F: explicit only``, ``F: lexical only``,
``F: explicit and lexical``, ``F: none``): the paper finds the NLI model's gain on negation
comes from explicit negation, not from antonyms. Sets whose items come in minimal pairs (an
NLI set's ``tuple_id``, a generated acceptability set's original/mutated couple) also get the
row ``pairs: all members right``: the share of pairs the row gets entirely right (n = pairs).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from sentprobe.evaluation.identity import resolve, task_names
from sentprobe.evaluation.predictions import Predictions
from sentprobe.reporting.render import csv_table, markdown_table

COLUMNS = ["task", "subtype", "encoder", "n", "accuracy", "sd", "records"]


def _latest(frame: pd.DataFrame) -> pd.DataFrame:
    """The newest record per identity, rows and tasks named as the results table names them
    (sentprobe.evaluation.identity)."""
    df = resolve(frame)
    return df.assign(task=task_names(df))


#: The row of minimal-pair accuracy (every item made from one source right; n = pairs).
PAIRS = "pairs: all members right"
#: Prefix of the coarse negation groups of Kim et al.'s Appendix F (Figure 3).
APPENDIX_F = "F: "
_PATTERN = re.compile(r"^P:(none|explicit|lexical|both) H:(none|explicit|lexical|both)$")


def negation_kind(group: str) -> str | None:
    """Appendix F's split of a negation pattern ("P:lexical H:none"): which kinds of negation
    the item has on either side: "F: explicit only", "F: lexical only", "F: explicit and
    lexical", "F: none"; None for a group that is not a negation pattern."""
    found = _PATTERN.match(group)
    if found is None:
        return None
    kinds = {k for side in found.groups() for k in ("explicit", "lexical") if side in (k, "both")}
    name = {0: "none", 2: "explicit and lexical"}.get(len(kinds)) or f"{kinds.pop()} only"
    return APPENDIX_F + name


def subtype_scores(frame: pd.DataFrame, predictions: Mapping[str, Predictions]) -> pd.DataFrame:
    """Long table (columns ``COLUMNS``): accuracy (%) per task x sub-type x row, over the
    records of ``frame`` whose stored predictions carry sub-types."""
    rows = []
    for record in _latest(frame).itertuples(index=False):
        found = predictions.get(str(record.key))
        if found is None or found.groups is None:
            continue
        groups = np.asarray(found.groups, dtype=object)
        correct = found.correct
        for group in dict.fromkeys(found.groups):
            mask = groups == group
            rows.append(
                (record.task, group, record.encoder, int(mask.sum()), float(correct[mask].mean()))
            )
        coarse = np.asarray([negation_kind(str(g)) for g in found.groups], dtype=object)
        for group in sorted({g for g in coarse if g is not None}):
            mask = coarse == group
            rows.append(
                (record.task, group, record.encoder, int(mask.sum()), float(correct[mask].mean()))
            )
        extra = getattr(record, "extra", None)
        if isinstance(extra, dict) and "pair_accuracy" in extra:
            rows.append(
                (record.task, PAIRS, record.encoder, int(extra["pairs"]), extra["pair_accuracy"])
            )
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    long = pd.DataFrame(rows, columns=["task", "subtype", "encoder", "n", "accuracy"])
    out = (
        long.groupby(["task", "subtype", "encoder"], sort=False)
        .agg(
            n=("n", "max"),
            accuracy=("accuracy", "mean"),
            sd=("accuracy", "std"),
            records=("accuracy", "size"),
        )
        .reset_index()
    )
    out["accuracy"] *= 100
    out["sd"] *= 100
    return out[COLUMNS]


def _cell(accuracy: float, sd: float, records: int) -> str:
    if records > 1 and not math.isnan(sd):
        return f"{accuracy:.1f} ± {sd:.1f}"
    return f"{accuracy:.1f}"


def subtype_report(scores: pd.DataFrame, fmt: str = "markdown") -> str:
    """Per task, sub-types as rows (most items first) and rows of the results table as
    columns; csv and json give the long table."""
    if fmt == "csv":
        return csv_table(scores.round(2))
    if fmt == "json":
        records = scores.round(2).to_dict(orient="records")
        clean = [
            {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in records
        ]
        return json.dumps(clean, indent=2, ensure_ascii=False) + "\n"
    if scores.empty:
        return "No sub-types: no stored predictions of tasks with sub-types (Split.groups).\n"
    parts = []
    for task, group in scores.groupby("task", sort=False):
        encoders = list(dict.fromkeys(group["encoder"]))
        order = (
            group.groupby("subtype", sort=False)["n"]
            .max()
            .reset_index()
            .sort_values(["n", "subtype"], ascending=[False, True])
        )
        cells = {(r.subtype, r.encoder): r for r in group.itertuples(index=False)}
        body = []
        for subtype, n in zip(order["subtype"], order["n"], strict=True):
            row = [subtype, str(n)]
            for encoder in encoders:
                r = cells.get((subtype, encoder))
                row.append("-" if r is None else _cell(r.accuracy, r.sd, r.records))
            body.append(row)
        parts.append(f"### {task}\n\n" + markdown_table(["Sub-type", "n", *encoders], body))
    note = "Accuracy (%) per sub-type; with several seeds or restarts, mean ± sd over them."
    return "\n".join(parts) + "\n" + note + "\n"
