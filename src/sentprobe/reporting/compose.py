"""The whole report of a results frame, as ``sentprobe run`` and ``sentprobe report`` print it:
the results table of the real tasks, then the control/MDL tables, then reference rows.

markdown and latex stack the sections; csv and json are one table each: the wide results
table, or, when there are control or MDL results, the tidy per-cell table (score,
control_score, selectivity, codelength_bits, saving_bits, compression). Reference rows are
added to either with ``kind = "reference"`` (measured rows: ``kind = "measured"``).
"""

from __future__ import annotations

import io
import json
from typing import Any

import pandas as pd

from sentprobe.evaluation.identity import resolve
from sentprobe.reporting.controls import methods_report, split_controls
from sentprobe.reporting.reference import reference_section, with_reference
from sentprobe.reporting.render import csv_table, json_records
from sentprobe.reporting.tables import results_table


def report_text(
    frame: pd.DataFrame,
    fmt: str = "markdown",
    metric: str = "test_score",
    reference: pd.DataFrame | None = None,
    **options: Any,
) -> str:
    """Every section of the report of ``frame`` in ``fmt`` (see the module docstring);
    ``options`` go to the results table (:func:`~sentprobe.reporting.tables.results_table`)."""
    frame = resolve(frame)  # the table and the control/MDL sections name rows alike
    tasks, _ = split_controls(frame)
    table = results_table(tasks, metric=metric, fmt=fmt, **options)
    interval = options.get("interval")
    methods = methods_report(frame, fmt, interval=interval) if metric == "test_score" else ""
    if fmt in ("markdown", "latex"):
        parts = [table.rstrip("\n")]
        if methods:
            parts.append(methods.rstrip("\n"))
        if reference is not None:
            parts.append(reference_section(reference, tasks, fmt).rstrip("\n"))
        return "\n\n".join(parts) + "\n"
    if not methods:
        return table if reference is None else with_reference(table, reference, tasks, fmt)
    if reference is None:
        return methods
    tidy = (
        json.loads(methods)
        if fmt == "json"
        else pd.read_csv(io.StringIO(methods)).to_dict("records")
    )
    cited = {"source": reference.attrs["citation"]} if "citation" in reference.attrs else {}
    rows = [{**r, "kind": "measured"} for r in tidy] + [
        {"encoder": r.row, "task": r.task, "score": r.score, "kind": "reference", **cited}
        for r in reference.itertuples(index=False)
    ]
    if fmt == "json":
        return json_records(rows)
    return csv_table(pd.DataFrame(rows))
