"""``sentprobe export``: a suite as Hugging Face datasets with a dataset card."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from sentprobe.cli.console import note


class ExportFormat(str, Enum):
    hf = "hf"
    parquet = "parquet"


def export(
    suite: Annotated[
        str,
        typer.Argument(help="A registered suite or task, or a path (what -t accepts)."),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="New folder to write (must not hold files).")
    ],
    fmt: Annotated[
        ExportFormat,
        typer.Option(
            "--format",
            "-f",
            help="hf: save_to_disk folders (datasets.load_from_disk); parquet: one file per "
            "split (load_dataset('parquet', ...)).",
        ),
    ] = ExportFormat.hf,
) -> None:
    """Write each task as a Hugging Face dataset (splits train/validation/test, columns
    sentence and label) with a dataset card; `-t FOLDER` or `-t hf:FOLDER` reads it back,
    `sentprobe push FOLDER ORG/NAME` uploads it."""
    from sentprobe.datasets.builtin import resolve_tasks, suite_manifest
    from sentprobe.datasets.export import export_tasks

    tasks = resolve_tasks(suite)
    name = suite if "/" not in suite and not Path(suite).exists() else Path(suite).name
    export_tasks(tasks, output, fmt.value, suite=name, manifest=suite_manifest(suite))
    note(f"wrote {len(tasks)} task{'s' if len(tasks) != 1 else ''} to {output} ({fmt.value})")
