"""``sentprobe merge``: join the results stores of ``run --shard`` (or any stores) into one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sentprobe.cli.console import note, warning


def merge(
    stores: Annotated[
        list[Path],
        typer.Argument(metavar="STORE", help="Results stores to merge (e.g. the shards' stores)."),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            help="The merged store: a new file, or one of the inputs (replaced atomically).",
        ),
    ],
) -> None:
    """Merge results stores into one, refusing two different results for the same unit.

    Units computed twice with the same result are kept once. Shards of one `run --shard`
    command are written in the order one unsharded run writes them, so the merged store
    reports exactly as that run's (docs/scaling.md).
    """
    from sentprobe.evaluation.merge import merge_stores

    merged = merge_stores(stores, output)
    if merged.missing_shards:
        warning(f"shards not among the inputs: {', '.join(merged.missing_shards)}")
    dropped = f" ({merged.duplicates} duplicates kept once)" if merged.duplicates else ""
    done = f"{output} already held this merge" if merged.already else f"wrote {output}"
    note(f"{done}: {merged.units} units from {len(stores)} stores{dropped}")
