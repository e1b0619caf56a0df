"""``sentprobe push``: a suite (or an export folder) uploaded as a Hub dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sentprobe.cli.console import note
from sentprobe.io import scratch


def push(
    suite: Annotated[
        str,
        typer.Argument(help="A suite or task (what -t accepts), or a folder `export` wrote."),
    ],
    repo: Annotated[str, typer.Argument(help="The Hub dataset repository, ORG/NAME.")],
    private: Annotated[
        bool, typer.Option("--private", help="Create the repository private.")
    ] = False,
) -> None:
    """Upload SUITE to the Hub as the dataset ORG/NAME: one config per task with its metadata
    and the dataset card `export` writes; `-t hf:ORG/NAME` reads the whole suite back."""
    from sentprobe.datasets.builtin import resolve_tasks, suite_manifest
    from sentprobe.datasets.export import export_tasks, push_export
    from sentprobe.datasets.loaders.hf import holds_hf_dirs

    folder = Path(suite)
    if folder.is_dir() and (folder / "README.md").is_file() and holds_hf_dirs(folder):
        url = push_export(folder, repo, private=private)
    else:
        tasks = resolve_tasks(suite)
        name = suite if "/" not in suite and not folder.exists() else folder.name
        with scratch("sentprobe-push-") as tmp:
            out = export_tasks(
                tasks, tmp / name, "parquet", suite=name, manifest=suite_manifest(suite)
            )
            url = push_export(out, repo, private=private)
    note(f"uploaded to {url}; -t hf:{repo} reads it")
