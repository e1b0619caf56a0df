"""What every format shares: the file names of the paper's tasks, and reading a (possibly
gzip-compressed) file line by line with line numbers for the errors."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from sentprobe.datasets.task import PAPER_TASKS, ProbingTask
from sentprobe.datasets.validation import (
    Problems,
)
from sentprobe.errors import DataError
from sentprobe.io import inside, read_bytes

#: SentEval file stems -> paper task names (Conneau et al. 2018, Table 2).
SENTEVAL_FILES: dict[str, str] = {
    "sentence_length": "SentLen",
    "word_content": "WC",
    "tree_depth": "TreeDepth",
    "top_constituents": "TopConst",
    "bigram_shift": "BShift",
    "past_present": "Tense",
    "subj_number": "SubjNum",
    "obj_number": "ObjNum",
    "odd_man_out": "SOMO",
    "coordination_inversion": "CoordInv",
}


#: X-Probe task folders -> paper task names (X-Probe has no TopConst).
XPROBE_FOLDERS: dict[str, str] = {k: v for k, v in SENTEVAL_FILES.items() if v != "TopConst"}


XPROBE_SPLIT_FILES = {"train": "tr", "dev": "va", "test": "te"}


MANIFEST = "manifest.json"

#: The suffix of a task file's sidecar of target word forms (a lexical split): one form per
#: item line of the task file, in order (``subj_number.txt`` -> ``subj_number.forms``).
FORMS_SUFFIX = ".forms"


_GZIP_MAGIC = b"\x1f\x8b"


def stem(path: Path) -> str:
    """File name without ``.gz`` and its extension: ``tree_depth.txt.gz`` -> ``tree_depth``."""
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    return name.rsplit(".", 1)[0] if "." in name else name


def read_task_bytes(path: Path) -> bytes:
    """A task file's bytes, gunzipped when gzip-compressed (by content, not name); a missing,
    unreadable or corrupt file is a DataError naming it."""
    try:
        data = read_bytes(path)  # a FIFO or device is refused, not waited on
    except FileNotFoundError:
        raise DataError(path, None, "file not found") from None
    except OSError as e:
        raise DataError(path, None, f"cannot read file: {e.strerror or e}") from None
    if data[:2] == _GZIP_MAGIC:  # by content, so a misnamed .gz still loads
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise DataError(path, None, f"corrupt gzip file: {e}") from None
    return data


def task_lines(path: Path, problems: Problems) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, text) of a task file's non-blank lines; record non-UTF-8
    lines in ``problems`` (under this file's path, so one collector can serve several files).
    Unlike ``sentprobe.io.iter_lines``, which stops at the first bad line, a task file is read
    whole so that every problem can be reported at once.

    The whole file is decoded at once (fast); only if that fails is it decoded line by line to
    locate the bad bytes.
    """
    data = read_task_bytes(path)
    try:
        lines = data.decode("utf-8").split("\n")
        bad: dict[int, str] = {}
    except UnicodeDecodeError:
        lines, bad = [], {}
        for i, raw in enumerate(data.split(b"\n"), start=1):
            try:
                lines.append(raw.decode("utf-8"))
            except UnicodeDecodeError as e:
                lines.append("")
                bad[i] = (
                    f"not valid UTF-8 (byte 0x{raw[e.start]:02x} at byte {e.start + 1} of the "
                    "line); re-save the file as UTF-8"
                )
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    for i, line in enumerate(lines, start=1):
        if i in bad:
            problems.add(i, bad[i], path)
            continue
        if line.endswith("\r"):
            line = line[:-1]
        if line.strip():
            yield i, line


def forms_file(path: Path) -> Path:
    """Where a task file's sidecar of target forms lies: beside it, with its stem and
    :data:`FORMS_SUFFIX` (``te.txt.gz`` -> ``te.forms``)."""
    return path.with_name(stem(path) + FORMS_SUFFIX)


def item_forms(path: Path, items: int, problems: Problems) -> list[str] | None:
    """The target form of each of the ``items`` item lines (non-blank lines) of the task file
    ``path``, read from its ``.forms`` sidecar; None when there is none. A sidecar that does not
    give one non-empty form per item line is recorded in ``problems`` (and None returned): a
    form paired with the wrong item would make the intervals resample the wrong groups."""
    sidecar = forms_file(path)
    if not sidecar.is_file():
        return None
    sidecar = inside(path.parent, sidecar.name)  # a link leading out of the suite is refused
    data = read_task_bytes(sidecar)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        problems.add(None, f"not valid UTF-8 (byte {e.start + 1}); re-save it as UTF-8", sidecar)
        return None
    lines = [line.removesuffix("\r") for line in text.removeprefix("\ufeff").split("\n")]
    if lines and lines[-1] == "":
        lines.pop()  # the final newline
    if len(lines) != items:
        problems.add(
            None,
            f"{len(lines)} lines, but {path.name} has {items} item lines: a forms sidecar "
            "needs one target form per item line, in order",
            sidecar,
        )
        return None
    empty = next((i for i, line in enumerate(lines, start=1) if not line.strip()), None)
    if empty is not None:
        problems.add(empty, "empty form: every item line needs its target form", sidecar)
        return None
    return [line.strip() for line in lines]


def json_objects(
    lines: Iterable[tuple[int, str]], problems: Problems
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of JSONL lines; a line that is not a JSON object is recorded in
    ``problems`` and skipped."""
    for i, line in lines:
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            problems.add(i, f"not valid JSON: {e.msg} (column {e.colno})")
            continue
        if not isinstance(obj, dict):
            problems.add(i, f"expected a JSON object, found {type(obj).__name__}")
            continue
        yield i, obj


def first_line(path: Path) -> str | None:
    """The first non-blank line, or None if there is none or it cannot be decoded."""
    for _, line in task_lines(path, Problems(path)):
        return line
    return None


def column_error(expected: int, found: int, layout: str) -> str:
    hint = " (a tab inside a sentence?)" if found > expected else ""
    return f"expected {expected} tab-separated columns ({layout}), found {found}{hint}"


def task_order(task: ProbingTask) -> tuple[int, str]:
    order = list(PAPER_TASKS)
    paper = task.metadata.paper_name
    return (order.index(paper) if paper in order else len(order), task.name)
