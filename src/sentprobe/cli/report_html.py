"""What ``sentprobe report --html`` and ``--layer-curves`` put together from a results store.

The HTML page (:mod:`sentprobe.reporting.html`) and the figures (:mod:`sentprobe.reporting.plots`)
only lay out data; this module gathers it from the stages that compute it: the results table's
scores, confidence intervals and paired tests from the stored predictions
(:mod:`sentprobe.analysis.stats`), controls from :mod:`sentprobe.reporting.controls`; the
figures come from :mod:`.report_figures` (layers, relative heatmap, correlation, agreement),
the task metadata and provenance from :mod:`.report_meta`. What a store lacks (no controls,
no predictions, no ``--layer all`` rows, no downstream scores) is left out and the report
says how to get it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sentprobe.cli.report_figures import (
    Intervals,
    agreement_plot,
    correlation_plot,
    erasure_plot,
    intervention_plot,
    layer_data,
    layer_figure,
    layer_pooling_figure,
    layer_pooling_plot,
    relative_plot,
)
from sentprobe.cli.report_meta import provenance, task_section
from sentprobe.errors import SentprobeError
from sentprobe.reporting import html
from sentprobe.reporting.plots import figure_svg


def _intervals(results: Path, frame: pd.DataFrame) -> tuple[Intervals | None, dict[str, Any]]:
    """The CI function and the stored predictions of ``frame``'s records (none: no CIs)."""
    from sentprobe.analysis.stats import interval_function
    from sentprobe.evaluation.store import ResultsStore

    with ResultsStore(results, readonly=True) as store:
        preds = dict(store.predictions_for(frame["key"]))
    return (interval_function(preds) if preds else None), preds


def _best_marks(
    keyed: pd.DataFrame, means: pd.DataFrame, preds: dict[str, Any], alpha: float
) -> set[tuple[str, str]]:
    """(row, column) cells that are the best of their column among encoder rows, or not
    significantly worse than it: exact McNemar on the first seed's test items against the
    best row (on a lexical split, the permutation test that swaps whole target forms),
    Holm-corrected over the column's comparisons."""
    from sentprobe.analysis.stats import holm, mcnemar_exact, paired_test, shared_clusters

    first = keyed.sort_values("seed").drop_duplicates(["row", "column"])
    key = {(r, c): k for r, c, k in zip(first["row"], first["column"], first["key"])}
    marked: set[tuple[str, str]] = set()
    for column in means.columns:
        scores = means[column].dropna()
        if scores.empty:
            continue
        best = str(scores.idxmax())
        marked.add((best, column))
        best_pred = preds.get(key.get((best, column), ""))
        others, pvalues = [], []
        for row in scores.index:
            other = preds.get(key.get((row, column), ""))
            if row == best or best_pred is None or other is None:
                continue
            if not np.array_equal(other.gold_labels(), best_pred.gold_labels()):
                continue  # not the same test items: no paired test
            same, clusters = shared_clusters([best_pred, other])
            if not same:
                continue  # the same items grouped two ways: no test
            a, b = best_pred.correct, other.correct
            others.append(row)
            if clusters is None:
                pvalues.append(mcnemar_exact(int((a & ~b).sum()), int((b & ~a).sum())))
            else:
                pvalues.append(paired_test(a, b, clusters).p)
        for row, p in zip(others, holm(pvalues) if pvalues else []):
            if p >= alpha:
                marked.add((row, column))
    return marked


def results_section(
    frame: pd.DataFrame,
    interval: Intervals | None,
    preds: dict[str, Any],
    metric: str,
    reference: pd.DataFrame | None,
    alpha: float,
) -> html.Table:
    """The sortable results table: scores, seeds' std, CIs, best marks, selectivity."""
    from sentprobe.evaluation.baselines import paper_labels
    from sentprobe.reporting.controls import selectivity_frame, split_controls
    from sentprobe.reporting.tables import (
        _summarize,  # the table's own cells and markers
        labelled,
    )

    tasks, _ = split_controls(frame)
    if tasks.empty:
        raise SentprobeError("no results to report")
    summary = _summarize(tasks, metric, True)
    columns = [(str(g), str(c)) for g, c in summary.columns]
    mean = (
        summary.cells["mean"]
        .unstack("column")
        .reindex(index=summary.rows, columns=[c for _, c in columns])
    )
    keyed = labelled(tasks)
    groups = keyed.groupby(["row", "column"], sort=False)["key"]
    found = {cell: interval(list(keys)) for cell, keys in groups} if interval else {}
    ci = {cell: bounds for cell, bounds in found.items() if bounds is not None}
    control: dict[tuple[str, str], dict[str, Any]] = {}  # html.Cell's control fields
    if metric == "test_score":
        sel = selectivity_frame(frame)
        if not sel.empty:
            # each task record's (row, column) as the table labels it: labelling ``sel`` on
            # its own would drop the " [probe]" suffix when only one probe has controls
            where = dict(zip(keyed["key"], zip(keyed["row"], keyed["column"], strict=True)))
            located = [where.get(k) for k in sel["key"]]
            sel = sel.assign(_cell=located).dropna(subset=["_cell"])
            sel = sel.assign(control_ceiling=pd.to_numeric(sel["control_ceiling"]))
            for cell, group in sel.groupby("_cell", sort=False):
                control[cell] = {
                    "control": 100.0 * float(group["control_score"].mean()),
                    "ceiling": 100.0 * float(group["control_ceiling"].mean()),
                    "ceiling_min": 100.0 * float(group["control_ceiling"].min()),
                    "maps": int(group["control_seed"].nunique()),
                    "undefined": next((n for n in group["selectivity_note"] if n), ""),
                }
    baselines = {b.lower() for b in paper_labels()}
    encoder_rows = [r for r in mean.index if str(r).split(" [")[0].lower() not in baselines]
    best = (
        _best_marks(keyed, mean.loc[encoder_rows], preds, alpha)
        if preds and encoder_rows
        else set()
    )
    rows: list[html.Row] = []
    for row in summary.rows:
        kind: html.RowKind = "baseline" if row not in encoder_rows else "encoder"
        cells = {}
        for _, column in columns:
            value, std, n = summary.cell(row, column) or (math.nan, math.nan, 0)
            low, high = ci.get((row, column)) or (math.nan, math.nan)
            cells[column] = html.Cell(
                value=value,
                std=std if n > 1 else math.nan,
                low=100.0 * low if math.isfinite(low) else math.nan,
                high=100.0 * high if math.isfinite(high) else math.nan,
                marks=summary.cell_marks.get((row, column), ""),
                best=(row, column) in best,
                **control.get((row, column), {}),
            )
        rows.append(html.Row(summary.label(row), kind, cells))
    cited = ""
    if reference is not None and not reference.empty:
        for name, group in reference.groupby("row", sort=False):
            cells = {str(t): html.Cell(float(s)) for t, s in zip(group["task"], group["score"])}
            rows.append(html.Row(f"{name} (reference)", "reference", cells))
        cited = reference.attrs.get("citation", "")
    notes = [
        ("Test accuracy (%)" if metric == "test_score" else "Dev (selection) accuracy (%)")
        + "; click a task to sort. "
        "Shaded rows: the paper's baselines (top) and reference rows not measured by "
        "sentprobe (italic)."
    ]
    if ci:
        notes.append(
            "[low, high]: 95% bootstrap confidence interval over test items (1,000 resamples; "
            "of the target word forms, not the items, where the task's split is lexical)."
        )
    if best:
        notes.append(
            "Bold: the best encoder of the column and those not significantly worse than it "
            "(exact McNemar test on the same test items, or where the split is lexical a "
            "permutation test swapping whole target forms; Holm-corrected per column, "
            f"α = {alpha:g}). A bold cell is a failure to reject, not evidence of a tie: "
            "on small test sets rows several points apart can both be bold."
        )
    if control:
        notes.append(
            "sel: selectivity = accuracy − control-task accuracy (Hewitt & Liang 2019): what "
            "the probe scores beyond memorising the identity of one word per sentence; the "
            "tooltip gives the control's ceiling, the accuracy of a perfect memoriser of the "
            "control function; with several seeds, sel is the mean over control maps (seed s "
            "probes the map drawn with seed s) and the tooltip gives the lowest ceiling; sel "
            "n/a: the control's labels are the task's renamed (docs/controls.md)."
        )
    if cited:
        notes.append(f"Reference rows: published, not measured here: {cited}.")
    if summary.several_seeds:
        notes.append("± after a score: standard deviation over seeds.")
    notes += summary.notes
    return html.Table(columns, rows, notes)


def mdl_table(frame: pd.DataFrame) -> html.SimpleTable | None:
    """MDL results (``--probe mdl``): online codelength, saving and compression per row and
    task, codelengths in bits and compression to three decimals (1.000 vs 0.998 decides)."""
    from sentprobe.evaluation.identity import TASK, resolve, task_names
    from sentprobe.reporting.controls import mdl_frame

    frame = resolve(frame)
    mdl = mdl_frame(frame)
    if mdl.empty:
        return None
    keys = ["encoder", "probe", *TASK]  # a cell per row and task identity
    shown = dict(zip(mdl[keys].itertuples(index=False, name=None), task_names(mdl), strict=True))
    measures = ["codelength_bits", "saving_bits", "compression"]
    means = mdl.groupby(keys, sort=False)[measures].mean()
    control = mdl_frame(frame, controls=True).groupby(keys, sort=False)["compression"].mean()
    return html.SimpleTable(
        "MDL: online codelength (Voita & Titov 2020)",
        [
            "Row",
            "Probe",
            "Task",
            "Codelength (bits)",
            "Saving (bits)",
            "Compression",
            "Control compression",
        ],  # fmt: skip
        [
            [str(cell[0]), str(cell[1]), str(shown[cell]), f"{c:.1f}", f"{s:.1f}", f"{x:.3f}"]
            + [f"{control[cell]:.3f}" if cell in control.index else "–"]
            for cell, (c, s, x) in means.iterrows()
        ],
        "Compression: the uniform code's length over the online code's (higher: the labels are "
        "easier to transmit given the vectors; 1: no better than the uniform code); saving: "
        "uniform minus online codelength, in bits: labels without signal are coded that short "
        "with probability at most 2^-saving; control compression: the same for the task's "
        "control task (run --controls); docs/controls.md.",
    )


def build_report(
    results: Path,
    frame: pd.DataFrame,
    *,
    metric: str = "test_score",
    reference: pd.DataFrame | None = None,
    reference_row: str | None = None,
    reference_language: str | None = None,
    downstream: Path | None = None,
    rename: dict[str, str] | None = None,
    alpha: float = 0.05,
) -> html.Report:
    """Everything the HTML report shows, from the records ``frame`` of the store ``results``."""
    from sentprobe.reporting.controls import split_controls

    if frame.empty:
        raise SentprobeError(f"{results}: no results to report")
    interval, preds = _intervals(results, frame) if metric == "test_score" else (None, {})
    table = results_section(frame, interval, preds, metric, reference, alpha)
    messages: list[str] = []
    _, controls = split_controls(frame)
    if controls.empty:
        messages.append(
            "No control-task results: run again with `sentprobe run --controls ...` to add "
            "control accuracy and selectivity (Hewitt & Liang 2019) to every cell."
        )
    if not preds and metric == "test_score":
        messages.append(
            "No per-item predictions stored for these results (made by an older sentprobe): "
            "rerun them to get confidence intervals and significance marks."
        )
    plots, tables = [], []
    layers = layer_data(frame, interval, metric)
    if layers is not None:
        curves, summary = layers
        fig = layer_figure(curves, summary, frame)
        plots.append(
            html.Plot(
                "layer-curves",
                "Layer curves",
                figure_svg(fig, "layers"),
                "Test accuracy per layer (0 = embeddings), one panel per task; the band is "
                "the 95% CI, the dot the peak layer, the dashed line the centre of gravity "
                "(expected layer of the gains over layer 0, analysis/layers.py).",
            )
        )
        pooled = layer_pooling_plot(curves)
        if pooled is not None:
            plots.append(pooled)
        tables.append(
            html.SimpleTable(
                "Where each task peaks",
                [
                    "Model",
                    "Task",
                    "Layers",
                    "Peak layer",
                    "Peak score",
                    "Layer 0",
                    "Centre of gravity",
                ],
                [
                    [
                        str(r.model),
                        str(r.task),
                        str(r.layers),
                        str(r.peak_layer),
                        f"{r.peak_score:.1f}",
                        f"{r.first_layer_score:.1f}",
                        f"{r.center:.2f}",
                    ]
                    for r in summary.sort_values("_order", kind="stable").itertuples(index=False)
                ],
            )
        )
    else:
        messages.append(
            "No per-layer rows: run a Hugging Face model with `--layer all` to get layer curves."
        )
    mdl = mdl_table(frame)
    if mdl is not None:
        tables.append(mdl)
    relative = relative_plot(frame, reference_row, reference_language, metric)
    if relative is not None:
        plots.append(relative)
    if downstream is not None:
        plots.append(correlation_plot(frame, downstream, metric, rename, alpha))
    else:
        messages.append(
            "No downstream scores: add `--downstream scores.csv` (encoder,task,score) or an MTEB "
            "results folder to correlate probing with downstream tasks."
        )
    agreement = agreement_plot(frame, preds)
    if agreement is not None:
        plots.append(agreement)
    erasure = erasure_plot(frame, preds)
    if erasure is not None:
        plots.append(erasure)
    intervention = intervention_plot(frame, preds)
    if intervention is not None:
        plots.append(intervention)
    infos, suites = task_section(frame)
    n_rows = len(table.rows)
    subtitle = (
        f"{n_rows} rows × {len(table.columns)} tasks from {results.resolve()} · "
        f"made {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC by sentprobe"
    )
    return html.Report(
        title="sentprobe report",
        subtitle=subtitle,
        table=table,
        plots=plots,
        tables=tables,
        tasks=infos,
        suites=suites,
        provenance=provenance(frame, results),
        messages=messages,
    )


def write_report_files(
    results: Path,
    frame: pd.DataFrame,
    *,
    html_path: Path | None,
    layer_curves: Path | None,
    layer_heatmap: Path | None = None,
    metric: str = "test_score",
    reference: pd.DataFrame | None = None,
    reference_row: str | None = None,
    reference_language: str | None = None,
    downstream: Path | None = None,
    rename: Sequence[str] | None = None,
) -> None:
    """``report --html``, ``--layer-curves`` and ``--layer-heatmap``: each file written
    atomically, so a failure leaves no half-written page or image."""
    from sentprobe.analysis.correlation import parse_renames
    from sentprobe.cli.console import note, write_output
    from sentprobe.reporting.plots import save_figure

    if layer_curves is not None or layer_heatmap is not None:
        interval, _ = _intervals(results, frame) if metric == "test_score" else (None, {})
        layers = layer_data(frame, interval, metric)
        if layers is None:
            raise SentprobeError(
                "no per-layer rows (<encoder>@layer<K>): run a Hugging Face model with "
                "--layer all for layer curves"
            )
        heatmap = layer_pooling_figure(layers[0]) if layer_heatmap is not None else None
        if layer_heatmap is not None and heatmap is None:
            raise SentprobeError(
                "no model read several poolings: run a Hugging Face model with --layer all "
                "--pooling mean,last,... for a layer x pooling heatmap"
            )
        if layer_curves is not None:
            save_figure(layer_figure(*layers, frame), layer_curves)
            note(f"wrote {layer_curves}")
        if layer_heatmap is not None and heatmap is not None:
            save_figure(heatmap, layer_heatmap)
            note(f"wrote {layer_heatmap}")
    if html_path is not None:
        report = build_report(
            results,
            frame,
            metric=metric,
            reference=reference,
            reference_row=reference_row,
            reference_language=reference_language,
            downstream=downstream,
            rename=parse_renames(rename),
        )
        write_output(html.render_html(report).rstrip("\n"), html_path)
