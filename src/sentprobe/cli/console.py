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
