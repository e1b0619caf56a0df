"""The one table renderer: pipe tables (markdown), booktabs tabulars (LaTeX) and CSV.

Used by the results tables (:mod:`sentprobe.reporting.tables`) and by QUALITY.md
(:mod:`sentprobe.analysis.quality`), so both print tables the same way. Hand-written rather
than pandas' ``to_markdown``/``Styler.to_latex``: those align and rule differently (tabulate's
``:---`` left rule, no minimum width, no ``\\multicolumn`` group row), which would change every
shipped QUALITY.md and stored report byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pandas as pd

from sentprobe.io import printable


def markdown_table(header: Sequence[Any], rows: Sequence[Sequence[Any]], left: int = 1) -> str:
    """A pipe table; the first ``left`` columns left-aligned, the others (numbers)
    right-aligned; ``|`` and control characters in a cell are escaped (a line end in a name
    would split its row), columns are at least three wide."""
    cells = [[printable(str(c)).replace("|", "\\|") for c in row] for row in [header, *rows]]
    widths = [max(3, *(len(r[i]) for r in cells)) for i in range(len(cells[0]))]

    def line(row: list[str]) -> str:
        padded = [
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(
        "-" * (w + 2) if i < left else "-" * (w + 1) + ":" for i, w in enumerate(widths)
    )
    return "\n".join([line(cells[0]), rule + "|", *(line(r) for r in cells[1:])]) + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def group_spans(groups: Sequence[str]) -> list[tuple[str, int]]:
    """Runs of equal neighbouring group names, as (name, length)."""
    spans: list[tuple[str, int]] = []
    for group in groups:
        if spans and spans[-1][0] == group:
            spans[-1] = (group, spans[-1][1] + 1)
        else:
            spans.append((group, 1))
    return spans


def latex_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    groups: Sequence[str] | None = None,
    notes: Sequence[str] = (),
) -> str:
    """A booktabs tabular, first column left-aligned, the others right-aligned. Cells are
    LaTeX already (escape with :func:`latex_escape`). ``groups``: a group name per column
    after the first, shown as a ``\\multicolumn`` row with ``\\cmidrule``\\ s over ``header``;
    ``notes``: LaTeX lines set in footnote size under the table."""
    lines = [r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}", r"\toprule"]
    if groups is not None:
        group_cells, rules, start = [], [], 2
        for group, span in group_spans(groups):
            group_cells.append(rf"\multicolumn{{{span}}}{{c}}{{{latex_escape(group)}}}")
            rules.append(rf"\cmidrule(lr){{{start}-{start + span - 1}}}")
            start += span
        lines += [" & ".join(["", *group_cells]) + r" \\", " ".join(rules)]
    lines += [" & ".join(header) + r" \\", r"\midrule"]
    lines += [" & ".join(row) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    lines += [rf"\par{{\footnotesize {note}}}" for note in notes]
    return "\n".join(lines) + "\n"


def csv_table(frame: pd.DataFrame) -> str:
    """CSV without the index (pandas' quoting and number formatting)."""
    return frame.to_csv(index=False)


def json_records(records: Sequence[dict[Any, Any]]) -> str:
    """Row records as an indented JSON list; NaN (pandas' missing value) becomes null."""
    clean = [
        {k: (None if isinstance(v, float) and v != v else v) for k, v in rec.items()}
        for rec in records
    ]
    return json.dumps(clean, indent=2, ensure_ascii=False, default=str) + "\n"


def control_summary(control: pd.DataFrame) -> pd.DataFrame:
    """Per task, an erasure's random controls (analysis/erasure.py's lines) over their
    seeds: mean and range of after and Δ, how many seeds, whether any seed's change was
    significant."""
    grouped = control.groupby("task", sort=False)
    return pd.DataFrame(
        {
            "after": grouped["after"].mean(),
            "after_min": grouped["after"].min(),
            "after_max": grouped["after"].max(),
            "diff": grouped["diff"].mean(),
            "diff_min": grouped["diff"].min(),
            "diff_max": grouped["diff"].max(),
            "seeds": grouped["erasure_seed"].nunique(),
            "significant": grouped["significant"].any(),
        }
    )
