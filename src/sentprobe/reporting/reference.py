"""Reference rows: scores sentprobe did not measure (the paper's human row, published numbers),
read from a CSV and shown apart from the measured rows so nobody mistakes one for the other.

The CSV has a header with the columns ``row``, ``task`` and ``score`` (a percentage, 0-100)
and optionally ``note``; one line per (row, task). ``task`` is the task's short name as in the
results table's columns (``SentLen``, ``WC``, ...).
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pandas as pd

from sentprobe.errors import DataError, SentprobeError
from sentprobe.io import read_csv_table
from sentprobe.reporting.render import (
    csv_table,
    json_records,
    latex_escape,
    latex_table,
    markdown_table,
)
from sentprobe.reporting.tables import pivot

REQUIRED = ("row", "task", "score")
#: What the reference section is called wherever it is shown.
TITLE = "reference (not measured by sentprobe)"


def load_reference(path: str | Path) -> pd.DataFrame:
    """Rows ``row, task, score, note, kind="reference"``; a bad file is a ``DataError`` naming
    the file, the line and the problem."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, None, "no such reference file")
    table = read_csv_table(
        path, REQUIRED, ("note",), hint="the columns row, task and score (optionally note)"
    )
    records: list[dict[str, object]] = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, item in table:
        for column in ("row", "task"):
            if not item[column]:
                raise DataError(path, lineno, f"empty {column}")
        try:
            score = float(item["score"])
        except ValueError:
            raise DataError(path, lineno, f"score {item['score']!r} is not a number") from None
        if not (math.isfinite(score) and 0 <= score <= 100):
            raise DataError(path, lineno, f"score {item['score']} is not a percentage (0-100)")
        key = (item["row"], item["task"])
        if key in seen:
            raise DataError(path, lineno, f"{key[0]} / {key[1]} already given on line {seen[key]}")
        seen[key] = lineno
        records.append(
            {"row": key[0], "task": key[1], "score": score, "note": item.get("note", "")}
        )
    if not records:
        raise DataError(path, None, "no reference scores (only a header)")
    frame = pd.DataFrame(records, columns=["row", "task", "score", "note"])
    frame["kind"] = "reference"
    return frame


def _columns(results: pd.DataFrame, reference: pd.DataFrame) -> list[str]:
    """The results table's task columns, then reference tasks it does not have."""
    measured = [task for _, task in pivot(results).columns] if not results.empty else []
    extra = [t for t in dict.fromkeys(reference["task"]) if t not in measured]
    return measured + extra


def reference_section(
    reference: pd.DataFrame, results: pd.DataFrame, fmt: str, decimals: int = 1
) -> str:
    """The reference rows as their own table (markdown: italic cells; LaTeX: ``\\textit``),
    with the results table's columns, under the title ``TITLE``."""
    columns = _columns(results, reference)
    wide = reference.pivot(index="row", columns="task", values="score")
    rows = list(dict.fromkeys(reference["row"]))
    notes = [f"{r.row} / {r.task}: {r.note}" for r in reference.itertuples(index=False) if r.note]

    def cell(row: str, task: str) -> float | None:
        value = wide.at[row, task] if task in wide.columns else math.nan
        return None if pd.isna(value) else round(float(value), decimals)

    if fmt == "markdown":
        body = [[f"*{row}*", *(_italic(cell(row, t), decimals) for t in columns)] for row in rows]
        text = f"**{TITLE.capitalize()}**\n\n" + markdown_table(["Row", *columns], body)
        return text + "".join(f"\n{n}" for n in notes) + ("\n" if notes else "")
    if fmt == "latex":
        body = [
            [rf"\textit{{{latex_escape(row)}}}"]
            + [
                "-" if cell(row, t) is None else rf"\textit{{{cell(row, t):.{decimals}f}}}"
                for t in columns
            ]
            for row in rows
        ]
        header = [latex_escape(TITLE.capitalize()), *(latex_escape(c) for c in columns)]
        return latex_table(header, body, notes=[latex_escape(n) for n in notes])
    raise SentprobeError(f"reference rows are shown in markdown or latex here, not {fmt!r}")


def _italic(value: float | None, decimals: int) -> str:
    return "-" if value is None else f"*{value:.{decimals}f}*"


def with_reference(table: str, reference: pd.DataFrame, results: pd.DataFrame, fmt: str) -> str:
    """``table`` (the results table in ``fmt``) with the reference rows: csv/json rows get a
    ``kind`` column (``measured`` or ``reference``, reference rows last); markdown/latex get
    the reference section under the table."""
    if fmt in ("markdown", "latex"):
        return table.rstrip("\n") + "\n\n" + reference_section(reference, results, fmt)
    if fmt == "json":
        measured = [{**rec, "kind": "measured"} for rec in json.loads(table)]
    elif fmt == "csv":
        measured = pd.read_csv(io.StringIO(table)).assign(kind="measured").to_dict("records")
    else:
        raise SentprobeError(f"unknown table format {fmt!r}")
    columns = _columns(results, reference)
    wide = reference.pivot(index="row", columns="task", values="score")
    extra = [
        {
            "encoder": row,
            **{
                t: (None if t not in wide or pd.isna(wide.at[row, t]) else wide.at[row, t])
                for t in columns
            },
            "kind": "reference",
        }
        for row in dict.fromkeys(reference["row"])
    ]
    records = measured + extra
    if fmt == "json":
        return json_records(records)
    order = [*dict.fromkeys(k for r in records for k in r if k != "kind"), "kind"]
    return csv_table(pd.DataFrame(records, columns=order))
