"""``sentprobe compare A B``: is the difference between two rows of the table real?"""

from __future__ import annotations

from typing import Annotated

import typer

from sentprobe.cli.console import write_output
from sentprobe.cli.options import (
    DEFAULT_RESULTS,
    Format,
    ProbeFilter,
    Results,
    TableFormat,
    TableOutput,
)


def compare(
    a: Annotated[str, typer.Argument(metavar="A", help="A row, named as in `sentprobe report`.")],
    b: Annotated[str, typer.Argument(metavar="B", help="The row to compare it with.")],
    results: Results = DEFAULT_RESULTS,
    probe: ProbeFilter = None,
    alpha: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Family-wise significance level.")
    ] = 0.05,
    seed: Annotated[int, typer.Option(min=0, help="Compare the runs of this seed.")] = 0,
    fmt: TableFormat = Format.markdown,
    output: TableOutput = None,
) -> None:
    """Paired tests of two rows on each task's test items: McNemar's exact test with Holm's
    correction across tasks (* marks significant differences), a paired permutation test
    and a bootstrap CI of the difference (docs/statistics.md)."""
    from sentprobe.cli.report import _load_results, compared

    frame = _load_results(results, probe)
    write_output(compared(results, frame, a, b, fmt.value, alpha, seed), output)
