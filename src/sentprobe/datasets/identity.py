"""Where a task comes from, as every stored result and every exported name records it.

A task is (its source, its language, its content): the source of a task loaded from a path
(a SentEval file, an X-Probe task folder, a dataset folder) is that path, resolved, so two
different files or folders never share a name however they were typed, and a relative path
typed in two working folders names two tasks; a registered task's source is its suite
(``sample-en``); any other task's source is the start of its metadata's source description.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from sentprobe.datasets.task import ProbingTask

_UNSAFE = re.compile(r"[^\w.+-]")


def is_path_source(source: str) -> bool:
    """Whether a stored task source is a resolved path (and not a suite or description)."""
    return os.path.isabs(source) and "\n" not in source


def task_source(task: ProbingTask) -> str:
    """The stored source of ``task`` (see the module docstring)."""
    source = task.metadata.source
    if source and "\n" not in source and len(source) < 4096:
        try:
            path = Path(source).expanduser()
            if path.exists():
                return str(path.resolve())
        except OSError:  # a description that is no path
            pass
    return task.name.rsplit("/", 1)[0] if "/" in task.name else source[:80]


def full_task_name(task: str, source: str) -> str:
    """A stored result's full task name as ``-t`` names it (``sample-en/Tense``): the runner
    stores the short name (the whole name where the task has no short one) and the source; a
    source that is a path is the name itself (``-t`` takes the path); a source that is a
    description (a task named without ``/``) is not part of the name."""
    if is_path_source(source):
        return source
    if "/" in task or not source or any(c.isspace() for c in source):
        return task
    return f"{source}/{task}"


def mteb_task_name(name: str) -> str:
    """``sample-en/SentLen`` -> ``sentprobe.sample-en.SentLen``: MTEB's name of a sentprobe
    task (MTEB's names have no '/', and its results files are named after them)."""
    return "sentprobe." + name.replace("/", ".").replace(":", ".")


def mteb_name(task: str, language: str, source: str) -> str:
    """MTEB's name of a stored task (short name, language, source): a registered task's is
    :func:`mteb_task_name` of its full name (``sentprobe.sample-en.Tense``); a task loaded
    from a path is named by its short name, its language and a short hash of the resolved
    path (``sentprobe.Tense.de.1a2b3c4d``), so that two files never share a name and the
    name holds no path."""
    if is_path_source(source):
        digest = hashlib.sha1(source.encode("utf-8")).hexdigest()[:8]
        parts = [_UNSAFE.sub("_", p).strip(".") or "task" for p in (task, language or "und")]
        return f"sentprobe.{parts[0]}.{parts[1]}.{digest}"
    return mteb_task_name(full_task_name(task, source))


def mteb_name_of(task: ProbingTask) -> str:
    """MTEB's name of a loaded task, the same as :func:`mteb_name` of its stored results."""
    source = task_source(task)
    if is_path_source(source):
        return mteb_name(task.metadata.paper_name or task.name, task.metadata.language, source)
    return mteb_task_name(task.name)
