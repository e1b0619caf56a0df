"""The whole report of a results frame, as ``sentprobe run`` and ``sentprobe report`` print it:
the results table of the real tasks, then the control/MDL tables, then reference rows.

markdown and latex stack the sections; csv is one table: the wide results table, or, when
there are control or MDL results, the tidy per-cell table (score, control_score, selectivity,
codelength_bits, saving_bits, compression). json has one schema whatever the store holds:
one record per cell (row, task identity, probe) with every field of :data:`JSON_FIELDS`
(null where not measured). Reference rows are added with ``kind = "reference"`` (measured
rows: ``kind = "measured"``).
"""

from __future__ import annotations

import io
import json
from typing import Any

import pandas as pd

from sentprobe.evaluation.identity import resolve, row_tag, tag_rows
from sentprobe.reporting.controls import (
    CONTROL_MDL_TIDY,
    MDL_TIDY,
    TIDY,
    method_frame,
    methods_report,
    split_controls,
)
from sentprobe.reporting.reference import reference_section, with_reference
from sentprobe.reporting.render import (
    csv_table,
    json_records,
    latex_escape,
    latex_table,
    markdown_table,
)
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
    if fmt == "json":
        return json_report(frame, metric, reference, options.get("interval"))
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
        if tags := tag_table(frame, fmt):
            parts.append(tags.rstrip("\n"))
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


#: The fields of every ``-f json`` record, in order.
JSON_FIELDS = (
    "kind", "tag", "fingerprint", *TIDY[:5], "ci_low", "ci_high", *TIDY[5:-1], *MDL_TIDY,
    *CONTROL_MDL_TIDY, "notes", "source",
)  # fmt: skip


def json_report(
    frame: pd.DataFrame,
    metric: str = "test_score",
    reference: pd.DataFrame | None = None,
    interval: Any = None,
) -> str:
    """``-f json``: one record per cell with every field of :data:`JSON_FIELDS` (``score`` is
    ``metric``'s mean over seeds, in percent), then the reference rows, in one schema."""
    scored = frame if metric == "test_score" else frame.assign(test_score=frame[metric])
    tidy = method_frame(scored, interval if metric == "test_score" else None)
    prints = dict(zip(frame["encoder"].astype(str), frame["row_id"].astype(str), strict=False))
    rows = [
        {**r, "kind": "measured", "tag": row_tag(prints[str(r["encoder"])]),
         "fingerprint": prints[str(r["encoder"])]}
        for r in tidy.to_dict("records")
    ]  # fmt: skip
    if reference is not None:
        cited = reference.attrs.get("citation")
        rows += [
            {"encoder": r.row, "task": r.task, "score": r.score, "kind": "reference",
             "source": cited, "notes": getattr(r, "note", None) or ""}
            for r in reference.itertuples(index=False)
        ]  # fmt: skip
    return json_records([{f: r.get(f) for f in JSON_FIELDS} for r in rows])


TAG_TITLE = "Row tags: what the hash after a row name stands for"


def tag_table(frame: pd.DataFrame, fmt: str) -> str:
    """The table of :func:`~sentprobe.evaluation.identity.tag_rows` in ``fmt`` (markdown,
    latex or csv; json records carry ``tag`` and ``fingerprint`` themselves); "" when no row
    name carries a tag."""
    rows = tag_rows(resolve(frame))
    if rows.empty:
        return ""
    if fmt == "csv":
        return csv_table(rows)
    header = ["Tag", "Row", "Run folder", "Fingerprint (model, revision, layer, settings)"]
    cells = [
        [
            r.tag,
            r.row,
            r.folder or "–",
            r.fingerprint + (f" (erased: {r.erasure})" if r.erasure else ""),
        ]
        for r in rows.itertuples(index=False)
    ]
    if fmt == "latex":
        escaped = [[latex_escape(str(c)) for c in row] for row in cells]
        return f"% {TAG_TITLE}\n" + latex_table(header, escaped)
    return f"**{TAG_TITLE}**\n\n" + markdown_table(header, cells)
