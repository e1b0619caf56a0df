"""``sentprobe salvage DAMAGED NEW``: copy what a damaged results store still holds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sentprobe.cli.console import note


def salvage(
    damaged: Annotated[Path, typer.Argument(help="The damaged results store (only read).")],
    new: Annotated[Path, typer.Argument(help="The new store to write (must not exist).")],
) -> None:
    """Copy every result (and its predictions) that a damaged results store still holds into
    a new store; the rest is lost, and a rerun with the new store recomputes it."""
    from sentprobe.evaluation.salvage import salvage as copy_readable

    done = copy_readable(damaged, new)
    note(
        f"salvaged {done.results} results ({done.predictions} with predictions) into {new}; "
        f"{done.unreadable} rows found but unreadable"
    )
