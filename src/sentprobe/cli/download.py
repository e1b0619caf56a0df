"""``sentprobe download``: a published suite fetched, verified and laid out for ``-t``."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from sentprobe.cli.console import note, warning
from sentprobe.errors import SentprobeError


class SuiteName(str, Enum):
    senteval = "senteval"
    xprobe = "xprobe"
    dnc = "dnc"


def download(
    suite: Annotated[
        SuiteName,
        typer.Argument(
            help="senteval: SentEval's probing files; xprobe: X-Probe's seven languages; "
            "dnc: Kim et al.'s function-word sets."
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Folder to fill (default: senteval-probing, xprobe or dnc-function-words).",
        ),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            "--mirror",
            help="Fetch from here instead of the maintainers' repository: a base URL or folder "
            "holding the same layout, or a .zip/.tar archive of it (a repository snapshot).",
        ),
    ] = None,
    lock: Annotated[
        Path | None,
        typer.Option(
            "--lock",
            help="The SHA-256 lock file to match and update (default: OUTPUT/sentprobe-lock.json).",
        ),
    ] = None,
) -> None:
    """Fetch a published suite from its maintainers' repository (pinned commit), verify each
    file against its pinned checksum and the lock file, check split sizes, label sets and line
    formats against the papers, and lay it out as `-t OUTPUT` reads it. Rerun to resume."""
    from sentprobe.datasets.download import download as fetch
    from sentprobe.datasets.download import published_suites

    spec = published_suites()[suite.value]
    directory = output if output is not None else Path(spec.output)
    # a bar of the bytes fetched on a terminal; a log or a pipe gets the outcome's lines only
    outcome = fetch(spec, directory, source=url, lock=lock, progress=sys.stderr.isatty())
    total = len(spec.files)
    if outcome.problems:
        raise SentprobeError(
            f"{suite.value}: {len(outcome.problems)} missing or damaged in {directory}: "
            f"{outcome.problem_summary()}"
        )
    for a, b in outcome.identical:
        warning(
            f"{a} and {b} are byte-identical in the published suite: that task's scores on "
            "the two splits are one measurement (`sentprobe audit` lists it too)"
        )
    note(
        f"{suite.value}: {total} files verified in {directory} ({len(outcome.fetched)} fetched, "
        f"{len(outcome.present)} already there; lock {outcome.lock}); -t {directory} reads it"
    )
