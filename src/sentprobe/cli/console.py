"""Where the command line prints, and how its messages look.

One message is one line: errors and warnings go to stderr without hard wrapping, whatever the
terminal width and whether or not stderr is a terminal, so they survive a pipe and ``grep``
finds them whole. Messages are plain text (a path with ``[brackets]`` is never read as rich
markup); only the ``error:``/``warning:`` prefix is coloured, and only on a terminal.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

#: Tables and reports (stdout).
out = Console()
#: Progress, notes, errors and warnings (stderr); never hard-wrapped.
err = Console(stderr=True, soft_wrap=True)


def _say(prefix: str, style: str, message: object) -> None:
    err.print(Text.assemble((prefix, style), " ", str(message)), highlight=False)


def error(message: object) -> None:
    """``error: <message>`` on stderr."""
    _say("error:", "red", message)


def warning(message: object) -> None:
    """``warning: <message>`` on stderr."""
    _say("warning:", "yellow", message)


def note(message: object) -> None:
    """A plain line on stderr (``wrote <file>``...)."""
    err.print(Text(str(message)), highlight=False)
