"""The ``sentprobe`` command: run probes, list tasks and encoders, print reports."""

from __future__ import annotations

import os
import sys
import tempfile
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from sentprobe.errors import SentprobeError

app = typer.Typer(
    name="sentprobe",
    help="What linguistic information does a sentence encoder put into its vectors?\n\n"
    "Probe any encoder on the SentEval probing tasks (or your own), with the paper's baselines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)


class Format(str, Enum):
    markdown = "markdown"
    csv = "csv"
    latex = "latex"
    json = "json"


def _write(text: str, output: Path | None) -> None:
    """Print, or write atomically so a failed run never leaves half a file."""
    if output is None:
        print(text)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=output.parent, prefix=f".{output.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text + "\n")
    os.replace(tmp, output)
    err.print(f"wrote {output}")


def _layer(value: str | None) -> int | str | None:
    if value is None or value in ("all", "last"):
        return value
    try:
        return int(value)
    except ValueError:
        raise SentprobeError(
            f"--layer must be an integer, 'last' or 'all', got {value!r}"
        ) from None


def _show_warnings(frame) -> None:
    seen: set[str] = set()
    for task, warnings in zip(frame["task"], frame["warnings"]):
        for w in warnings:
            if (task, w) not in seen:
                seen.add((task, w))
                err.print(f"[yellow]warning[/] {task}: {w}")


def _load_results(results: Path, metric: str, probe: str | None):
    """The stored results as a frame, checked for what ``report`` and ``crosslang`` need."""
    from sentprobe.evaluation.store import ResultsStore

    if not results.is_file():
        raise SentprobeError(f"{results}: no results store here (run `sentprobe run` first)")
    if metric not in ("test_score", "dev_score"):
        raise SentprobeError(f"--metric must be test_score or dev_score, got {metric!r}")
    with ResultsStore(results) as store:
        frame = store.to_frame()
    return frame[frame["probe"] == probe] if probe else frame


@app.command()
def run(
    encoder: Annotated[
        list[str],
        typer.Option(
            "--encoder",
            "-e",
            help="Encoder to probe (repeatable): a registered name (see `sentprobe encoders`), "
            "hf:<model>, st:<model>, a local model directory, precomputed:<matrix>:<sentences>, "
            "or your code as file.py[:object] / package.module:object.",
        ),
    ] = ["minilm"],  # noqa: B006
    tasks: Annotated[
        str,
        typer.Option(
            "--tasks",
            "-t",
            help="Suite or task names (see `sentprobe tasks`), or paths to SentEval / X-Probe "
            "directories or files; comma-separated.",
        ),
    ] = "sample-en",
    layer: Annotated[
        str | None,
        typer.Option(  # noqa: UP007
            help="Hugging Face models: layer index, 'last' or 'all' (one row per layer)."
        ),
    ] = None,
    pooling: Annotated[
        str | None,
        typer.Option(  # noqa: UP007
            help="Hugging Face models: mean, max, cls or last."
        ),
    ] = None,
    batch_size: Annotated[int | None, typer.Option(help="Sentences per encoder batch.")] = None,  # noqa: UP007
    probe: Annotated[
        str,
        typer.Option(
            help="logreg (L2 grid on dev, SentEval's default), mlp (the paper's sigmoid MLP grid), "
            "or paper (MLP, logistic regression for WC: the protocol of the paper's Table 2)."
        ),
    ] = "logreg",
    seeds: Annotated[int, typer.Option(help="Repeat each probe with this many seeds.")] = 1,
    baselines: Annotated[
        str,
        typer.Option(
            help="default (majority,length,nb-uni,nb-bi,bov), all (adds untrained BiLSTM-last, "
            "BiLSTM-max, GatedConvNet), none, or a comma-separated list."
        ),
    ] = "default",
    results: Annotated[Path, typer.Option(help="SQLite results store; runs accumulate.")] = Path(
        "sentprobe-results/results.sqlite"
    ),
    cache_dir: Annotated[
        Path | None,
        typer.Option(  # noqa: UP007
            help="Embedding cache [default: $SENTPROBE_CACHE or ~/.cache/sentprobe/embeddings]."
        ),
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Table format.")] = Format.markdown,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the table here.")
    ] = None,  # noqa: UP007
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Probe encoders on tasks and print the results table (tasks as columns, encoders as rows).

    Finished (encoder, task, seed) units are skipped when the same run is started again, and
    cached embeddings are never recomputed.
    """
    from sentprobe.evaluation.runner import run as run_probes
    from sentprobe.reporting import results_table

    options = {"layer": _layer(layer), "pooling": pooling, "batch_size": batch_size}
    frame = run_probes(
        encoder,
        tasks,
        baselines=baselines,
        probe=probe,
        seeds=seeds,
        results=results,
        cache_dir=cache_dir,
        encoder_options=options,
        progress=not quiet,
    )
    _show_warnings(frame)
    _write(results_table(frame, fmt=fmt.value), output)


@app.command()
def report(
    results: Annotated[Path, typer.Option(help="SQLite results store.")] = Path(
        "sentprobe-results/results.sqlite"
    ),
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Table format.")] = Format.markdown,
    metric: Annotated[
        str, typer.Option(help="test_score, or dev_score (the selection score).")
    ] = "test_score",
    encoder: Annotated[
        list[str] | None,
        typer.Option(  # noqa: UP007
            "--encoder", "-e", help="Only these rows (repeatable)."
        ),
    ] = None,
    probe: Annotated[str | None, typer.Option(help="Only results of this probe.")] = None,  # noqa: UP007
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the table here.")
    ] = None,  # noqa: UP007
) -> None:
    """Print the paper-style table of everything stored in a results store."""
    from sentprobe.reporting import results_table

    frame = _load_results(results, metric, probe)
    if encoder:
        frame = frame[frame["encoder"].isin(encoder)]
    _write(results_table(frame, metric=metric, fmt=fmt.value), output)


@app.command()
def tasks() -> None:
    """List the registered suites and tasks."""
    from sentprobe.datasets import list_suites, list_tasks

    table = Table(title="Suites")
    table.add_column("suite")
    table.add_column("tasks")
    for suite in list_suites():
        table.add_row(suite.name, ", ".join(suite.tasks))
    out.print(table)
    table = Table(title="Tasks")
    for col in ("name", "paper name", "category", "language", "classes"):
        table.add_column(col, no_wrap=True)
    table.add_column("source", no_wrap=True, overflow="ellipsis", max_width=30)
    for t in list_tasks():
        table.add_row(t.name, t.paper_name or "", t.category, t.language, str(t.n_labels), t.source)
    out.print(table)
    out.print("Any SentEval file/directory or X-Probe folder can also be given by path to --tasks.")


@app.command()
def encoders() -> None:
    """List the registered encoders and the other ways to name one."""
    from sentprobe.encoders import accepted_options
    from sentprobe.evaluation.runner import BASELINES
    from sentprobe.registry import encoders as registry

    table = Table(title="Encoders")
    table.add_column("name")
    table.add_column("options")
    for name, factory in registry.items():
        opts = accepted_options(factory)
        table.add_row(name, ", ".join(opts) if opts else "")
    out.print(table)
    out.print(
        "Also: hf:<model or dir>, st:<model or dir>, a local model directory, "
        "precomputed:<matrix .npy/.npz/.safetensors>:<sentences .txt>, file.py[:object], "
        "package.module:object (an Encoder, a callable on a list of sentences, or a "
        "SentEval prepare/batcher file)."
    )
    out.print(f"Baselines (--baselines): {', '.join(BASELINES)}")


class AuditFormat(str, Enum):
    text = "text"
    json = "json"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    never = "never"


class Show(str, Enum):
    info = "info"
    warning = "warning"
    error = "error"


@app.command()
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
            help="Train the Length and NB-uni-tfidf baselines as leakage alarms.",
        ),
    ] = True,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report here.")
    ] = None,  # noqa: UP007
) -> None:
    """Check probing data for shared sentences, several labels per sentence, imbalanced or
    one-class splits, lexical-split violations and surface cues (casing, length, words).

    Exits with code 1 when a finding reaches --fail-on (error by default), so it can gate a
    pipeline.
    """
    from sentprobe.analysis import audit_suite, rich_report

    report = audit_suite(path, baselines=baselines)
    if fmt is AuditFormat.json:
        _write(report.to_json().rstrip("\n"), output)
    elif output is not None:
        _write(report.to_text(show.value).rstrip("\n"), output)
    else:
        out.print(rich_report(report, show.value), highlight=False)
    if report.failed(fail_on.value):
        n = len(report.at_least(fail_on.value))  # type: ignore[arg-type]
        err.print(f"[red]audit failed:[/] {n} finding(s) at or above {fail_on.value}")
        raise SystemExit(1)


class Mode(str, Enum):
    diff = "diff"
    ratio = "ratio"


@app.command()
def crosslang(
    reference: Annotated[str, typer.Option(help="Reference language (e.g. en).")] = "en",
    results: Annotated[Path, typer.Option(help="SQLite results store.")] = Path(
        "sentprobe-results/results.sqlite"
    ),
    fmt: Annotated[
        Format,
        typer.Option(
            "--format", "-f", help="markdown/latex (both tables), json (both), csv (relative)."
        ),
    ] = Format.markdown,
    metric: Annotated[str, typer.Option(help="test_score or dev_score.")] = "test_score",
    mode: Annotated[
        Mode,
        typer.Option(help="diff: difference in points; ratio: score / reference (X-Probe Fig. 4)."),
    ] = Mode.diff,
    encoder: Annotated[
        list[str] | None,
        typer.Option("--encoder", "-e", help="Only these encoders (repeatable)."),  # noqa: UP007
    ] = None,
    probe: Annotated[str | None, typer.Option(help="Only results of this probe.")] = None,  # noqa: UP007
    include_baselines: Annotated[
        bool, typer.Option(help="Keep Majority/Length/NB/BoV rows (left out by default).")
    ] = False,
    heatmap: Annotated[
        Path | None,
        typer.Option(help="Also draw the relative scores as a heatmap (.png/.pdf/.svg)."),  # noqa: UP007
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the tables here.")
    ] = None,  # noqa: UP007
) -> None:
    """Compare languages: scores relative to a reference language per encoder x task, and
    per task the mean and standard deviation across languages and encoders (X-Probe)."""
    from sentprobe.reporting.crosslang import crosslang_report, relative_heatmap

    frame = _load_results(results, metric, probe)
    kw = {"encoders": encoder, "include_baselines": include_baselines, "metric": metric}
    text = crosslang_report(frame, reference, fmt.value, mode=mode.value, **kw)
    if heatmap is not None:
        relative_heatmap(frame, reference, heatmap, mode=mode.value, **kw)
        err.print(f"wrote {heatmap}")
    _write(text.rstrip("\n"), output)


from sentprobe.cli.build import build  # noqa: E402
from sentprobe.cli.label import label  # noqa: E402

app.command("build")(build)
app.command("label")(label)


def main() -> None:
    """Entry point: user errors become one clean message and exit code 1."""
    # sentprobe shows its own encoding bars; the hub's download/loading bars are noise here
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        app(standalone_mode=False)
    except SentprobeError as exc:
        err.print(f"[red]error:[/] {exc}", highlight=False)
        sys.exit(1)
    except KeyboardInterrupt:
        err.print("interrupted: finished units are saved; run the same command to resume")
        sys.exit(130)
    except Exception as exc:  # click's usage errors
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Abort):
            sys.exit(1)
        raise
