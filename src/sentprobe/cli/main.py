"""The ``sentprobe`` command: the app, its error handling and signals; each command lives in
its own module (``cli/run.py``, ``cli/report.py``...) and is wired in here."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import traceback
import typing
import warnings
from collections.abc import Mapping
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from sentprobe import __version__
from sentprobe.cli.config import add_config_options
from sentprobe.cli.console import error, note, warning
from sentprobe.errors import SentprobeError
from sentprobe.io import redirect_to_devnull


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so the same cleanup runs (partial shards saved, temp
    files removed, the results store closed)."""


#: click's exception base (typer >= 0.20 vendors click, older typer uses click itself).
_CLICK_ERRORS: tuple[type[Exception], ...] = tuple(
    c
    for c in typer.BadParameter.__mro__
    if issubclass(c, Exception) and c.__name__ == "ClickException"
)
#: Exceptions that carry their own exit code and message: re-raised untouched.
_PASS_THROUGH: tuple[type[BaseException], ...] = (
    typer.Exit,
    typer.Abort,
    SystemExit,
    *_CLICK_ERRORS,
)


def plain_metavars(commands: Mapping[str, Any]) -> None:
    """Help shows ``-e ENCODER`` and ``--seeds N`` instead of typer's ``<list[str]>`` and
    ``<int range>`` placeholders (an option's own metavar is kept)."""
    for command in commands.values():
        for param in getattr(command, "params", []):
            # typer brings its own copy of click: its classes, not click's, so by duck type
            if getattr(param, "param_type_name", "") != "option" or param.is_flag:
                continue
            if param.metavar:
                continue
            declared = getattr(getattr(param, "type_descriptor", None), "annotation", None)
            kinds = set(typing.get_args(declared) or (declared,)) - {type(None)}
            if kinds == {int}:
                param.metavar = "N"
            elif kinds == {float}:
                param.metavar = "X"
            elif param.multiple:
                long = next((o for o in param.opts if o.startswith("--")), param.opts[0])
                param.metavar = long.lstrip("-").upper().replace("-", "_")


class Commands(TyperGroup):
    """sentprobe's command group. Usage errors are click's own (usage line, ``Error: ...``,
        a did-you-mean where one is close, exit 2); sentprobe's errors are one ``error:`` line
        (exit 1); an interruption is one line (exit 130 on SIGINT, 143 on SIGTERM); anything else
        is one line naming the exception and where it was raised (the traceback only with
        ``SENTPROBE_DEBUG=1``). ``run``, ``build``, ``train`` and ``map-encoder`` get
        ``--config`` / ``--save-config`` (cli/config.py); every command takes ``-v`` after its name
    too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        add_config_options(self.commands)
        add_verbose_option(self.commands)
        plain_metavars(self.commands)

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
        except _PASS_THROUGH:
            raise
        except BrokenPipeError:  # the reader went away (``sentprobe report | head``): stop
            _silence_stdout()
            raise typer.Exit(0) from None
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


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush of a closed pipe does not
    print another error (the usual idiom of command-line tools)."""
    # no real file descriptor (e.g. captured in tests): nothing to point
    with contextlib.suppress(OSError, ValueError):
        redirect_to_devnull(sys.stdout.fileno())


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


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"sentprobe {__version__}")
        raise typer.Exit()


def setup_logging(verbosity: int) -> None:
    """``-v``: sentprobe's INFO messages on stderr (what is loaded from where, cache hits and
    misses, each probe's choice, timings); ``-vv``: DEBUG too. Library code only logs."""
    logger = logging.getLogger("sentprobe")
    for handler in [h for h in logger.handlers if getattr(h, "sentprobe_cli", False)]:
        logger.removeHandler(handler)
    if verbosity <= 0:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.sentprobe_cli = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s: %(message)s", "%H:%M:%S"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO if verbosity == 1 else logging.DEBUG)


_VERBOSITY = "sentprobe.verbose"  # the -v count given before the command (ctx.meta)
_VERBOSE_HELP = (
    "Log what is loaded from where, cache hits and misses, each probe's choice and timings on "
    "stderr (-vv: debug)."
)


def _more_verbose(ctx: typer.Context, value: int) -> None:
    """``sentprobe COMMAND -v``: adds to the ``-v`` given before the command."""
    if value:
        setup_logging(ctx.meta.get(_VERBOSITY, 0) + value)


def _verbose_template(
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose",
            "-v",
            count=True,
            expose_value=False,
            callback=_more_verbose,
            show_default=False,
            help=_VERBOSE_HELP,
        ),
    ] = 0,
) -> None:
    """Holds ``-v``, declared once with typer and copied onto each command."""


def add_verbose_option(commands: Mapping[str, Any]) -> None:
    """Give every command in ``commands`` (and in its sub-groups) ``-v/--verbose``."""
    template = typer.Typer(add_completion=False)
    template.command()(_verbose_template)
    (option,) = typer.main.get_command(template).params
    for command in commands.values():
        if hasattr(command, "commands"):  # a group: annotate export / annotate import
            add_verbose_option(command.commands)
        elif not any(p.name == "verbose" for p in command.params):
            command.params.append(option)


@app.callback()
def _options(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_show_version, help="Print the version and exit."
        ),
    ] = False,
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose",
            "-v",
            count=True,
            show_default=False,
            help=f"{_VERBOSE_HELP} Before or after the command: sentprobe -v run, run -v.",
        ),
    ] = 0,
) -> None:
    ctx.meta[_VERBOSITY] = verbose
    setup_logging(verbose)


from sentprobe.cli.annotate import annotate  # noqa: E402
from sentprobe.cli.audit import audit  # noqa: E402
from sentprobe.cli.build import build  # noqa: E402
from sentprobe.cli.compare import compare  # noqa: E402
from sentprobe.cli.correlate import correlate  # noqa: E402
from sentprobe.cli.crosslingual import map_encoder, map_words  # noqa: E402
from sentprobe.cli.download import download  # noqa: E402
from sentprobe.cli.export import export  # noqa: E402
from sentprobe.cli.label import label  # noqa: E402
from sentprobe.cli.listing import encoders, tasks  # noqa: E402
from sentprobe.cli.merge import merge  # noqa: E402
from sentprobe.cli.push import push  # noqa: E402
from sentprobe.cli.report import crosslang, report  # noqa: E402
from sentprobe.cli.run import run  # noqa: E402
from sentprobe.cli.salvage import salvage  # noqa: E402
from sentprobe.cli.train import train  # noqa: E402

# In this order in ``sentprobe --help``.
for _command in (
    run, report, compare, tasks, encoders, audit, crosslang, correlate, build, label, train,
    export, push, download, salvage,
):  # fmt: skip
    app.command()(_command)
app.command()(merge)  # the shards of `run --shard` into one store
for _dashed in (map_words, map_encoder):  # map-words, map-encoder
    app.command(_dashed.__name__.replace("_", "-"))(_dashed)


app.add_typer(annotate)  # annotate export / annotate import


def _terminate(signum: int, frame: object) -> None:
    raise Terminated()


def main() -> None:
    """Entry point. Click reports usage errors itself; see :class:`Commands` for the rest."""
    # sentprobe shows its own encoding bars; the hub's download/loading bars are noise here
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        app(args=sys.argv[1:], prog_name="sentprobe")
    except SystemExit as exc:
        if exc.code not in (0, None):  # success returns, as it did (callers may go on)
            raise
    finally:
        signal.signal(signal.SIGTERM, previous)
