"""Where the command line prints, and how its messages look.

One message is one line: errors and warnings go to stderr without hard wrapping, whatever the
terminal width and whether or not stderr is a terminal, so they survive a pipe and ``grep``
finds them whole. Messages are plain text (a path with ``[brackets]`` is never read as rich
markup); only the ``error:``/``warning:`` prefix is coloured, and only on a terminal.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.text import Text

from sentprobe.errors import SentprobeError
from sentprobe.io import atomic_write_text, printable

#: Tables and reports (stdout); a report line (an audit finding) stays one greppable line.
out = Console(soft_wrap=True)  # text lines are never hard-wrapped; tables keep their layout
#: Progress, notes, errors and warnings (stderr); never hard-wrapped.
err = Console(stderr=True, soft_wrap=True)


def _say(prefix: str, style: str, message: object) -> None:
    text = printable(str(message), keep="\n")  # a message may list further lines
    err.print(Text.assemble((prefix, style), " ", text), highlight=False)


def error(message: object) -> None:
    """``error: <message>`` on stderr."""
    _say("error:", "red", message)


def warning(message: object) -> None:
    """``warning: <message>`` on stderr."""
    _say("warning:", "yellow", message)


def note(message: object) -> None:
    """A plain line on stderr (``wrote <file>``...)."""
    err.print(Text(printable(str(message), keep="\n")), highlight=False)


def report_failures(messages: list[str], skip_failed: bool, summary: str) -> None:
    """One ``error:`` line per unit a build could not make; unless ``skip_failed``, stop
    with ``summary`` (the caller has written nothing)."""
    for message in messages:
        error(message)
    if messages and not skip_failed:
        raise SentprobeError(summary)


def write_output(text: str, output: Path | None) -> None:
    """Print ``text``, or write it atomically to ``output`` so a failed run never leaves half a
    file (an unwritable path is one ``error:`` line, exit 1)."""
    text = printable(text, keep="\n\t")  # no name from a store drives the terminal
    if output is None:
        print(text)
        return
    try:
        atomic_write_text(output, text + "\n")
    except OSError as e:
        raise SentprobeError(f"{output}: cannot write ({e.strerror or e})") from None
    note(f"wrote {output}")


def task_label(task: str, language: str = "", source: str = "") -> str:
    """A task's name with its language and source (suite, folder): "Tense (de)" and
    "Tense (fr, sample-fr)", so one task in several languages or suites can be told apart."""
    parts = [str(p) for p in (language, source) if p and str(p) not in ("und", "nan")]
    return f"{task} ({', '.join(dict.fromkeys(parts))})" if parts else str(task)


def show_warnings(frame) -> None:
    """Each task's data warnings once, however many rows carry them, named by
    :func:`task_label`; then each encoder's probe-check warnings on a task (a trained run's
    unknown words, a student probed in another language: ``extra["probe_checks"]``) once."""
    seen: set[tuple[str, str]] = set()
    blank = [""] * len(frame)
    languages = frame["language"] if "language" in frame.columns else blank
    sources = frame["task_source"] if "task_source" in frame.columns else blank
    encoders = frame["encoder"] if "encoder" in frame.columns else blank
    extras = frame["extra"] if "extra" in frame.columns else blank
    checks = []
    for task, language, source, items, encoder, extra in zip(
        frame["task"], languages, sources, frame["warnings"], encoders, extras, strict=True
    ):
        name = task_label(task, language, source)
        for w in items:
            if (name, w) not in seen:
                seen.add((name, w))
                warning(f"{name}: {w}")
        found = (extra or {}).get("probe_checks", {}).get("warnings", [])
        checks += [(f"{encoder} on {name}", w) for w in found]
    for where, w in dict.fromkeys(checks):
        warning(f"{where}: {w}")
