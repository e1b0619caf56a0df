"""``sentprobe audit``: check probing data for leaks, imbalance and surface cues."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sentprobe.cli.console import error, out, write_output
from sentprobe.cli.options import AuditFormat, FailOn, Show


def audit(
    path: Annotated[
        str,
        typer.Argument(
            help="A SentEval file or directory, an X-Probe task/language/multi-language folder, "
            "a TSV/JSONL table, or a registered suite or task name."
        ),
    ],
    fmt: Annotated[
        AuditFormat, typer.Option("--format", "-f", help="text (readable) or json.")
    ] = AuditFormat.text,
    fail_on: Annotated[
        FailOn,
        typer.Option(help="Exit with code 1 when a finding is at least this severe."),
    ] = FailOn.error,
    show: Annotated[
        Show, typer.Option(help="Text report: hide findings below this severity.")
    ] = Show.info,
    baselines: Annotated[
        bool,
        typer.Option(
            "--baselines/--no-baselines",
            help="Train the Length, NB-uni/bi-tfidf and char-n-gram NB baselines as leakage "
            "alarms (the single-position rules always run).",
        ),
    ] = True,
    annotate: Annotated[
        bool,
        typer.Option(
            "--annotate/--no-annotate",
            help="Re-annotate the dev and test sentences of a non-English Tense task with the "
            "language's default annotator and flag tense labels on verbs that are not finite "
            "indicative (loads a parser).",
        ),
    ] = True,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report here.")
    ] = None,  # noqa: UP007
) -> None:
    """Check probing data for shared sentences, several labels per sentence, imbalanced or
    one-class splits, lexical-split violations, original/altered twins, surface cues
    (first/last token, last character, punctuation, casing, length, words), tense labels on
    non-indicative verbs, dev and test drawn unalike, and test splits too small to compare
    rows.

    Exits with code 1 when a finding reaches --fail-on (error by default), so it can gate a
    pipeline.
    """
    from sentprobe.analysis import audit_suite, rich_report

    report = audit_suite(path, baselines=baselines, annotate=annotate)
    if fmt is AuditFormat.json:
        write_output(report.to_json().rstrip("\n"), output)
    elif output is not None:
        write_output(report.to_text(show.value).rstrip("\n"), output)
    else:
        out.print(rich_report(report, show.value), highlight=False)
    if report.failed(fail_on.value):
        n = len(report.at_least(fail_on.value))  # type: ignore[arg-type]
        error(f"audit failed: {n} finding(s) at or above {fail_on.value}")
        raise SystemExit(1)
