"""Progress bars that suit where their output goes.

On a terminal (or in a notebook) this is ``tqdm.auto``'s bar, redrawn in place. Written to a
file or a pipe (a batch job's log, CI), a redrawn bar is a wall of carriage-return frames, so
there each bar prints whole lines instead: one every :data:`LOG_INTERVAL` seconds at most,
and its final state when it closes.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from tqdm.auto import tqdm as _auto_tqdm

#: Seconds between two progress lines when the output is not a terminal
#: (``$SENTPROBE_PROGRESS_SECONDS`` overrides it).
LOG_INTERVAL = 10.0


class _Lines:
    """A stream that turns tqdm's carriage-return redraws into whole lines."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.last = ""

    def write(self, text: str) -> None:
        line = text.replace("\r", "").strip()
        if line and line != self.last:  # closing a bar redraws its last state once more
            self.stream.write(line + "\n")
            self.last = line

    def flush(self) -> None:
        self.stream.flush()


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


def _interval() -> float:
    try:
        return float(os.environ.get("SENTPROBE_PROGRESS_SECONDS", LOG_INTERVAL))
    except ValueError:
        return LOG_INTERVAL


class tqdm(_auto_tqdm):  # noqa: N801 - a drop-in for tqdm's own class
    """``tqdm.auto.tqdm``, in whole lines at most every few seconds off a terminal."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        stream = kwargs.get("file") or sys.stderr
        if (
            not kwargs.get("disable")
            and not _is_terminal(stream)
            and "ipykernel" not in sys.modules
        ):
            kwargs["file"] = _Lines(stream)
            kwargs["mininterval"] = max(kwargs.get("mininterval", 0.1), _interval())
            kwargs["maxinterval"] = max(kwargs.get("maxinterval", 10.0), _interval())
            kwargs["bar_format"] = "{desc}: {n_fmt}/{total_fmt} [{elapsed}<{remaining}]"
        super().__init__(*args, **kwargs)
