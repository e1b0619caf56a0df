"""Errors that reach the user. Each names the file, line and problem so it can be fixed."""

from __future__ import annotations

from pathlib import Path


class SentprobeError(Exception):
    """Base class for errors the CLI reports as one clean message (exit code 1)."""


class DataError(SentprobeError):
    """Malformed input data, located by file and (where known) line."""

    def __init__(self, path: str | Path | None, line: int | None, problem: str) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.problem = problem
        where = self.path or "<input>"
        if line is not None:
            where += f", line {line}"
        super().__init__(f"{where}: {problem}")


def require(module: str, extra: str, purpose: str):
    """Import an optional dependency, or raise one line naming the extra that provides it:
    a lean ``pip install sentprobe`` lacks spaCy, matplotlib, ray, mteb, datasets..."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise SentprobeError(
            f"{purpose} needs the {module.split('.')[0]!r} package: "
            f"pip install 'sentprobe[{extra}]'"
        ) from None
