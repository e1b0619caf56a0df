"""``sentprobe correlate``: Spearman correlation of probing accuracy with downstream scores
across encoders (Conneau et al. 2018, Fig. 2; X-Probe, Fig. 3), with Holm-corrected
p-values, as a table and optionally a heatmap."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sentprobe.cli.console import note, write_output
from sentprobe.cli.options import (
    DEFAULT_RESULTS,
    Format,
    Metric,
    ProbeFilter,
    Results,
    TableFormat,
    TableOutput,
)
from sentprobe.errors import SentprobeError

Downstream = Annotated[
    Path,
    typer.Option(
        "--downstream",
        "-d",
        help="Downstream scores: a CSV (encoder,task,score[,language]), an MTEB result "
        "JSON, or a directory of them (main_score per task).",
    ),
]
Rename = Annotated[
    list[str] | None,
    typer.Option(  # noqa: UP007
        help="DOWNSTREAM=ENCODER: the downstream file's name for an encoder of the results "
        "(repeatable)."
    ),
]
Split = Annotated[
    str | None,
    typer.Option(help="MTEB split to read [default: test, else dev/validation/train]."),  # noqa: UP007
]
Alpha = Annotated[float, typer.Option(min=0.0, max=1.0, help="Significance level after Holm.")]


def correlate(
    downstream: Downstream,
    results: Results = DEFAULT_RESULTS,
    fmt: TableFormat = Format.markdown,
    metric: Annotated[Metric, typer.Option(help="test_score or dev_score.")] = Metric.test_score,
    encoder: Annotated[
        list[str] | None,
        typer.Option("--encoder", "-e", help="Only these encoders (repeatable)."),  # noqa: UP007
    ] = None,
    probe: ProbeFilter = None,
    rename: Rename = None,
    split: Split = None,
    alpha: Alpha = 0.05,
    heatmap: Annotated[
        Path | None,
        typer.Option(help="Also draw the matrix as a heatmap (.png/.pdf/.svg)."),  # noqa: UP007
    ] = None,
    output: TableOutput = None,
) -> None:
    """Correlate probing accuracy with downstream scores across encoders (Spearman, Holm)."""
    from sentprobe.analysis.correlation import (
        correlation_cells,
        correlation_heatmap,
        correlation_table,
        parse_renames,
    )
    from sentprobe.cli.report import _load_results

    frame = _load_results(results, probe)
    if frame.empty:
        raise SentprobeError(f"{results}: no results" + (f" of probe {probe!r}" if probe else ""))
    names = parse_renames(rename)
    cells = correlation_cells(frame, downstream, metric.value, encoder, names, split, alpha)
    if heatmap is not None:
        from sentprobe.reporting.plots import save_figure

        save_figure(correlation_heatmap(cells, alpha), heatmap)
        note(f"wrote {heatmap}")
    write_output(correlation_table(cells, fmt.value, alpha).rstrip("\n"), output)
