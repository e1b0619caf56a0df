"""The ``sentprobe`` command: run probes, list tasks and encoders, print reports."""

from __future__ import annotations

import os
import signal
import traceback
import warnings
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from typer.core import TyperGroup

from sentprobe.cli.console import error, note, out, warning
from sentprobe.errors import SentprobeError
from sentprobe.io import atomic_write_text


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so the same cleanup runs (partial shards saved, temp
    files removed, the results store closed)."""


#: click's exception base (typer >= 0.20 vendors click, older typer uses click itself).
_CLICK_ERRORS = tuple(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class Commands(TyperGroup):
    """sentprobe's command group. Usage errors are click's own (usage line, ``Error: ...``,
    a did-you-mean where one is close, exit 2); sentprobe's errors are one ``error:`` line
    (exit 1); an interruption is one line (exit 130 on SIGINT, 143 on SIGTERM); anything else
    is one line naming the exception and where it was raised (the traceback only with
    ``SENTPROBE_DEBUG=1``)."""

    def invoke(self, ctx: typer.Context):  # type: ignore[override]
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _show_warning
                return super().invoke(ctx)
        except SentprobeError as exc:
            error(exc)
            raise typer.Exit(1) from None
        except KeyboardInterrupt as exc:
            term = isinstance(exc, Terminated)
            note(
                f"interrupted ({'SIGTERM' if term else 'SIGINT'}): finished work is saved; "
                "run the same command again to resume"
            )
            raise typer.Exit(143 if term else 130) from None
        except (typer.Exit, typer.Abort, SystemExit, *_CLICK_ERRORS):
            raise
        except Exception as exc:
            if os.environ.get("SENTPROBE_DEBUG"):
                raise
            if isinstance(exc, OSError) and exc.filename:  # an OS error on a named file
                error(f"{exc.filename}: {exc.strerror or exc}")
            else:  # a bug: say where, without a traceback unless asked for
                frames = traceback.extract_tb(exc.__traceback__)
                where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
                error(
                    f"unexpected {type(exc).__name__}: {exc}{where}; this is a bug, please "
                    "report it (SENTPROBE_DEBUG=1 shows the traceback)"
                )
            raise typer.Exit(1) from None


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Python warnings as one ``warning:`` line (not file:line plus a source line)."""
    warning(message)


app = typer.Typer(
    name="sentprobe",
    cls=Commands,
    help="What linguistic information does a sentence encoder put into its vectors?\n\n"
    "Probe any encoder on the SentEval probing tasks (or your own), with the paper's baselines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # click's plain help and usage errors: no boxes, no wrapping
)


class Metric(str, Enum):
    test_score = "test_score"
    dev_score = "dev_score"


class Pooling(str, Enum):
    mean = "mean"
    max = "max"
    cls = "cls"
    last = "last"


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
    try:
        atomic_write_text(output, text + "\n")
    except OSError as e:
        raise SentprobeError(f"{output}: cannot write ({e.strerror or e})") from None
    note(f"wrote {output}")


def _layer(value: str | None) -> int | str | None:
    """``--layer``: an integer, 'last' or 'all'; anything else is a usage error (exit 2)."""
    if value is None or value in ("all", "last"):
        return value
    try:
        return int(value)
    except ValueError:
        raise typer.BadParameter(f"expected an integer, 'last' or 'all', got {value!r}") from None


def _show_warnings(frame) -> None:
    seen: set[str] = set()
    for task, items in zip(frame["task"], frame["warnings"]):
        for w in items:
            if (task, w) not in seen:
                seen.add((task, w))
                warning(f"{task}: {w}")


def _load_results(results: Path, probe: str | None):
    """The stored results as a frame, checked for what ``report`` and ``crosslang`` need."""
    from sentprobe.evaluation.store import ResultsStore

    if not results.is_file():
        raise SentprobeError(f"{results}: no results store here (run `sentprobe run` first)")
    with ResultsStore(results, readonly=True) as store:  # reading needs no write lock
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
            help="Hugging Face models: layer index, 'last' or 'all' (one row per layer).",
            callback=_layer,
        ),
    ] = None,
    pooling: Annotated[
        Pooling | None,
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
    seeds: Annotated[int, typer.Option(min=1, help="Repeat each probe with this many seeds.")] = 1,
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

    options = {
        "layer": layer,
        "pooling": pooling.value if pooling else None,
        "batch_size": batch_size,
    }
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
        Metric, typer.Option(help="test_score, or dev_score (the selection score).")
    ] = Metric.test_score,
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

    frame = _load_results(results, probe)
    if encoder:
        frame = frame[frame["encoder"].isin(encoder)]
    _write(results_table(frame, metric=metric.value, fmt=fmt.value), output)


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
            help="Train the Length, NB-uni/bi-tfidf and char-n-gram NB baselines as leakage "
            "alarms (the single-position rules always run).",
        ),
    ] = True,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report here.")
    ] = None,  # noqa: UP007
) -> None:
    """Check probing data for shared sentences, several labels per sentence, imbalanced or
    one-class splits, lexical-split violations, original/altered twins and surface cues
    (first/last token, last character, punctuation, casing, length, words).

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
        error(f"audit failed: {n} finding(s) at or above {fail_on.value}")
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
    metric: Annotated[Metric, typer.Option(help="test_score or dev_score.")] = Metric.test_score,
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

    frame = _load_results(results, probe)
    kw = {"encoders": encoder, "include_baselines": include_baselines, "metric": metric.value}
    text = crosslang_report(frame, reference, fmt.value, mode=mode.value, **kw)
    if heatmap is not None:
        relative_heatmap(frame, reference, heatmap, mode=mode.value, **kw)
        note(f"wrote {heatmap}")
    _write(text.rstrip("\n"), output)


from sentprobe.cli.build import build  # noqa: E402
from sentprobe.cli.label import label  # noqa: E402

app.command("build")(build)
app.command("label")(label)


def _terminate(signum: int, frame: object) -> None:
    raise Terminated()


def main() -> None:
    """Entry point. Click reports usage errors itself; see :class:`Commands` for the rest."""
    # sentprobe shows its own encoding bars; the hub's download/loading bars are noise here
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        app(prog_name="sentprobe")
    except SystemExit as exc:
        if exc.code not in (0, None):  # success returns, as it did (callers may go on)
            raise
    finally:
        signal.signal(signal.SIGTERM, previous)
