"""Fetch the published probing suites from their maintainers' repositories and verify them.

SentEval's probing files (Conneau et al. 2018), X-Probe (Ravishankar et al. 2019) and Kim et
al. (2019)'s function-word sets (in the DNC repository) are plain files in public Git
repositories. ``datasets/data/published.json`` pins, for each suite, a commit and every file's
git blob id (SHA-1 of ``blob <size>\\0<bytes>``: size and content), read from the repositories
(``scripts/build_published_catalog.py``). A fetched file must match its blob id, and the
SHA-256 recorded in the lock file the first fetch writes (``sentprobe-lock.json``, which a
project can keep next to its results and pass to later fetches with ``lock=``). Then the
content is checked against what the papers and READMEs state (line formats through the
loaders, label sets, split sizes) and the folder is the layout ``-t`` reads.

Downloads resume: a file arrives as ``NAME.part`` and a later run asks for the rest (an HTTP
Range request; a server that ignores it sends the whole file again). Files already in place
are re-verified, not fetched again. Every file is bounded by its size in the catalog (where
the maintainers' tree gave one; else ``MAX_UNSIZED_BYTES``), the whole download by
``TIMEOUT_S``, and a failure that may pass (a dropped connection, HTTP 429/5xx) is retried
with a growing wait. The standard library's ``urllib`` does the fetching: resuming a
``.part`` by Range, which the libraries that verify downloads (pooch) do not offer.

Long because it holds the three suites' content checks beside the fetching they guard.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import os
import tarfile
import time
import urllib.error
import urllib.request
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from importlib import resources
from pathlib import Path
from typing import IO, Any

from sentprobe.datasets.loaders.common import SENTEVAL_FILES, XPROBE_SPLIT_FILES
from sentprobe.datasets.loaders.dnc import load_dnc
from sentprobe.datasets.loaders.senteval import load_senteval_file
from sentprobe.datasets.loaders.xprobe import load_xprobe_task
from sentprobe.datasets.task import ProbingTask
from sentprobe.errors import DataError, SentprobeError
from sentprobe.io import (
    atomic_write_bytes,
    atomic_write_text,
    inside,
    make_dirs,
    open_partial,
    open_regular,
    replace_file,
)
from sentprobe.progress import tqdm

log = logging.getLogger(__name__)

LOCK = "sentprobe-lock.json"
_CHUNK = 1 << 20
#: The bound of a file whose size the catalog does not record (the largest published file
#: is a few MB): an endless body stops here, not at a full disk.
MAX_UNSIZED_BYTES = 256 << 20
#: Tries per file for a failure that may pass (a dropped connection, a timeout, HTTP 429 or
#: 5xx), waiting ``RETRY_WAIT_S`` and then twice as long after each; a partial file resumes.
RETRIES = 3
RETRY_WAIT_S = 1.0
#: How a retry waits (the tests record the waits here, not in the shared ``time`` module).
_sleep = time.sleep
#: The whole download's time limit (seconds); what is not fetched by then resumes on a rerun.
TIMEOUT_S = 3600.0


class _TooLarge(Exception):
    """A body larger than the file's known size (or the cap)."""


class _OutOfTime(Exception):
    """The download's overall time limit passed."""


_ARCHIVES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")

#: SentEval's label sets as its ``data/probing/README.md`` lists them (word_content: 1000
#: words, checked by count).
SENTEVAL_LABELS: dict[str, frozenset[str]] = {
    "sentence_length": frozenset("012345"),
    "tree_depth": frozenset(str(d) for d in range(5, 13)),
    "bigram_shift": frozenset({"I", "O"}),
    "top_constituents": frozenset(
        [
            "ADVP_NP_VP_.",
            "CC_ADVP_NP_VP_.",
            "CC_NP_VP_.",
            "IN_NP_VP_.",
            "NP_ADVP_VP_.",
            "NP_NP_VP_.",
            "NP_PP_.",
            "NP_VP_.",
            "OTHER",
            "PP_NP_VP_.",
            "RB_NP_VP_.",
            "SBAR_NP_VP_.",
            "SBAR_VP_.",
            "S_CC_S_.",
            "S_NP_VP_.",
            "S_VP_.",
            "VBD_NP_VP_.",
            "VP_.",
            "WHADVP_SQ_.",
            "WHNP_SQ_.",
            "",
        ]
    ),
    "past_present": frozenset({"PAST", "PRES"}),
    "subj_number": frozenset({"NN", "NNS"}),
    "obj_number": frozenset({"NN", "NNS"}),
    "odd_man_out": frozenset({"O", "C"}),
    "coordination_inversion": frozenset({"O", "I"}),
}
#: X-Probe's label sets (its released files; the paper names no labels). word_content: at
#: most 1000 words, as in SentEval.
XPROBE_LABELS: dict[str, frozenset[str]] = {
    "sentence_length": frozenset("012345"),
    "tree_depth": frozenset("34567"),
    "bigram_shift": frozenset({"I", "O"}),
    "coordination_inversion": frozenset({"I", "O"}),
    "odd_man_out": frozenset({"Inv", "Orig"}),
    "past_present": frozenset({"Past", "Pres"}),
    "subj_number": frozenset({"Plur", "Sing"}),
    "obj_number": frozenset({"Plur", "Sing"}),
}
WORD_CONTENT_WORDS = 1000


@dataclass(frozen=True)
class Published:
    """A published suite: where its files are (a repository at a commit) and what is known
    about them offline (blob ids; the sizes its paper or README states)."""

    name: str
    repository: str
    commit: str
    folder: str
    #: path in the unpacked layout -> git blob id at ``commit``.
    files: Mapping[str, str]
    #: SentEval: lines per split (train/dev/test; its README: "a few more" in some files);
    #: DNC: ``items``, the total number of items (Kim et al. 2019, Section 3).
    sizes: Mapping[str, int] = field(default_factory=dict)
    #: path -> its size in bytes at ``commit``, where the catalog knows it: a body that
    #: grows past it is cut off (where not known: ``MAX_UNSIZED_BYTES``).
    bytes: Mapping[str, int] = field(default_factory=dict)
    #: the default output folder.
    output: str = ""
    description: str = ""

    def url(self, rel: str) -> str:
        return (
            f"https://raw.githubusercontent.com/{self.repository}/{self.commit}/{self.folder}{rel}"
        )


_SUITE_INFO: dict[str, dict[str, Any]] = {
    "senteval": {
        "sizes": {"train": 100_000, "dev": 10_000, "test": 10_000},
        "output": "senteval-probing",
        "description": "SentEval's ten probing tasks (Conneau et al. 2018), English",
    },
    "xprobe": {
        "output": "xprobe",
        "description": "X-Probe (Ravishankar et al. 2019): nine tasks in seven languages",
    },
    "dnc": {
        "sizes": {"items": 3544},
        "output": "dnc-function-words",
        "description": "Kim et al. (2019)'s nine function-word sets (the DNC release)",
    },
}


def published_suites() -> dict[str, Published]:
    """The suites ``sentprobe download`` knows, from the pinned catalog."""
    text = resources.files("sentprobe.datasets").joinpath("data/published.json").read_text()
    catalog = json.loads(text)
    return {
        name: Published(
            name=name,
            repository=entry["repository"],
            commit=entry["commit"],
            folder=entry["folder"],
            files=entry["files"],
            bytes=entry.get("bytes", {}),
            **_SUITE_INFO[name],
        )
        for name, entry in catalog.items()
    }


def git_blob_id(path: Path) -> tuple[str, str]:
    """(git blob id, SHA-256) of a file, read once."""
    size = path.stat().st_size
    blob = hashlib.sha1(f"blob {size}\0".encode())  # noqa: S324 (git's own content id)
    sha = hashlib.sha256()
    with open_regular(path) as f:
        while chunk := f.read(_CHUNK):
            blob.update(chunk)
            sha.update(chunk)
    return blob.hexdigest(), sha.hexdigest()


@dataclass
class Outcome:
    """What one ``download`` did: files fetched, files already in place, problems by file."""

    directory: Path
    lock: Path
    fetched: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)
    #: verified files that are byte-identical to another split of the same task (X-Probe's
    #: TreeDepth dev and test in five languages): the published data's own defect
    identical: list[tuple[str, str]] = field(default_factory=list)

    def problem_summary(self, shown: int = 3) -> str:
        """The problems grouped by reason, each with its count and its first ``shown`` files:
        a line a person can read when a mirror lacks dozens of files for one reason."""
        by_reason: dict[str, list[str]] = {}
        for rel, why in sorted(self.problems.items()):
            by_reason.setdefault(why, []).append(rel)
        parts = []
        for why, rels in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            if len(rels) == 1:
                parts.append(f"{rels[0]}: {why}")
                continue
            more = f" and {len(rels) - shown} more" if len(rels) > shown else ""
            parts.append(f"{why} ({len(rels)} files): {', '.join(rels[:shown])}{more}")
        return "; ".join(parts)


def _read_lock(path: Path, suite: str) -> dict[str, str]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data["files"]
        if data.get("suite") != suite or not isinstance(files, dict):
            raise ValueError(f"a lock of {data.get('suite')!r}, not {suite!r}")
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise DataError(path, None, f"not a sentprobe download lock: {e}") from None
    return {str(k): str(v) for k, v in files.items()}


def _write_lock(path: Path, suite: Published, sums: Mapping[str, str]) -> None:
    data = {
        "suite": suite.name,
        "repository": suite.repository,
        "commit": suite.commit,
        "files": dict(sorted(sums.items())),
    }
    atomic_write_text(path, json.dumps(data, indent=1) + "\n")


def _mismatch(path: Path, blob: str, locked: str | None) -> tuple[str | None, str]:
    """(problem or None, SHA-256) of a file in place."""
    found_blob, sha = git_blob_id(path)
    if found_blob != blob:
        return (
            f"content differs from the release (git blob {found_blob[:12]}, expected {blob[:12]})",
            sha,
        )
    if locked is not None and locked != sha:
        return f"SHA-256 {sha[:12]} differs from the lock's {locked[:12]}", sha
    return None, sha


def _fetch_url(
    url: str,
    dest: Path,
    timeout: float,
    root: Path,
    limit: int,
    deadline: float,
    bar: Any = None,
) -> None:
    """Fetch ``url`` into ``dest`` through ``dest.part``, continuing a partial one; both stay
    inside ``root`` and neither is written through a link (``sentprobe.io.open_partial``).
    A body growing past ``limit`` bytes is cut off (``_TooLarge``), as is one still arriving
    at ``deadline`` (``time.monotonic``, ``_OutOfTime``: the part is kept, to resume)."""
    part = dest.with_name(dest.name + ".part")
    with open_partial(part, resume=True, root=root) as out:
        start = out.tell()
        if start > limit:
            start = 0  # a part larger than the file can be: start again
        headers = {"User-Agent": "sentprobe-download"}
        if start:
            headers["Range"] = f"bytes={start}-"
        request = urllib.request.Request(url, headers=headers)
        try:
            response = urllib.request.urlopen(request, timeout=timeout)  # noqa: S310
        except urllib.error.HTTPError as e:
            if e.code == 416 and start:  # nothing left to send: the part is whole
                out.close()
                replace_file(part, dest, root)
                return
            raise
        with response:
            resumed = bool(start) and getattr(response, "status", None) == 206
            if start:
                log.info(
                    "%s: %s %d bytes",
                    dest.name,
                    "resuming after" if resumed else "restarting;",
                    start,
                )
            if not resumed:
                out.seek(0)
                out.truncate()
            length = response.headers.get("Content-Length")
            before = out.tell()
            if length is not None and length.isdigit() and before + int(length) > limit:
                raise _TooLarge(f"{before + int(length)} bytes")
            read = getattr(response, "read1", response.read)  # what has come, not 1 MiB
            while block := read(_CHUNK):
                out.write(block)
                if bar is not None:
                    bar.update(len(block))
                if out.tell() > limit:
                    raise _TooLarge(f"more than {out.tell()} bytes")
                if time.monotonic() > deadline:
                    raise _OutOfTime
            got = out.tell() - before
    if length is not None and length.isdigit() and got < int(length):
        raise ConnectionError(f"interrupted after {got} of {length} bytes")
    replace_file(part, dest, root)


def _transient(e: BaseException) -> bool:
    """A failure that may pass on another try: HTTP 429 or 5xx, a dropped connection, a
    timeout; not a 404, a refused name or a redirect loop."""
    if isinstance(e, urllib.error.HTTPError):
        return e.code == 429 or 500 <= e.code < 600
    if isinstance(e, urllib.error.URLError):
        return isinstance(e.reason, (TimeoutError, ConnectionError))
    return isinstance(e, (TimeoutError, ConnectionError, http.client.HTTPException))


def _one_line(e: BaseException) -> str:
    """A fetch failure as one short line, without the path or URL (one cause, one line)."""
    if isinstance(e, urllib.error.HTTPError):
        if 300 <= e.code < 400:
            return f"HTTP {e.code}: a redirect loop or too many redirects"
        return f"HTTP {e.code} {' '.join(str(e.reason).split())}"
    reason = getattr(e, "reason", None) or e
    if isinstance(reason, OSError) and reason.strerror:
        reason = reason.strerror
    return f"not fetched ({' '.join(str(reason).split()) or type(e).__name__}); rerun to resume"


def _fetch_with_retries(
    url: str, dest: Path, timeout: float, root: Path, limit: int, deadline: float, bar: Any
) -> str | None:
    """``_fetch_url`` with ``RETRIES`` tries for a failure that may pass, waiting longer
    after each; the problem as one line, or None once fetched."""
    wait = RETRY_WAIT_S
    for attempt in range(1, RETRIES + 1):
        if time.monotonic() > deadline:
            return "not fetched in the download's time limit; rerun to resume"
        try:
            _fetch_url(url, dest, timeout, root, limit, deadline, bar)
            return None
        except _TooLarge as e:
            dest.with_name(dest.name + ".part").unlink(missing_ok=True)
            return f"the server sent {e}, more than the file's {limit} bytes; refused"
        except _OutOfTime:
            return "not fetched in the download's time limit; rerun to resume"
        except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
            if not _transient(e) or attempt == RETRIES or time.monotonic() + wait > deadline:
                return _one_line(e)
            log.info("%s: %s; trying again in %.0f s", dest.name, _one_line(e), wait)
            _sleep(wait)
            wait *= 2
    return None


def _archive_members(archive: Path) -> Iterator[tuple[str, IO[bytes]]]:
    """(member name, open file) of a zip or tar archive's files, one at a time."""
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                if not info.is_dir():
                    with z.open(info) as f:
                        yield info.filename, f
        return
    with tarfile.open(archive) as t:
        for member in t:
            data = t.extractfile(member) if member.isfile() else None
            if data is not None:
                with data:
                    yield member.name, data


def _archive_root(names: Iterable[str], wanted: list[str], folder: str) -> str | None:
    """The prefix under which the archive holds the suite's layout: the one that holds the
    most wanted paths, preferring one that ends in the suite's folder in its repository, then
    the shortest. A repository snapshot (GitHub's "Download ZIP") has other files of the same
    name elsewhere, e.g. the root ``README.md``, which must not stand in for the suite's own."""
    votes: Counter[str] = Counter()
    for name in names:
        for rel in wanted:
            if name == rel or name.endswith("/" + rel):
                votes[name[: len(name) - len(rel)]] += 1
    if not votes:
        return None
    return max(votes, key=lambda p: (votes[p], p.endswith("/" + folder) or p == folder, -len(p)))


def _from_archive(archive: Path, wanted: list[str], directory: Path, folder: str) -> dict[str, str]:
    """Copy the archive's members at ``root + wanted path`` into ``directory`` (root: see
    :func:`_archive_root`); the wanted paths not found -> "not in the archive"."""
    root = _archive_root((name for name, _ in _archive_members(archive)), wanted, folder)
    found: set[str] = set()
    for name, src in _archive_members(archive) if root is not None else ():
        rel = name[len(root) :] if root is not None and name.startswith(root) else ""
        if rel not in wanted or rel in found:
            continue
        chunks: Iterator[bytes] = iter(partial(src.read, _CHUNK), b"")
        atomic_write_bytes(directory / rel, chunks, root=directory)
        found.add(rel)
    return {rel: f"not in {archive.name}" for rel in wanted if rel not in found}


def _source_url(source: str | None, suite: Published, rel: str) -> str:
    if source is None:
        return suite.url(rel)
    return source.rstrip("/") + "/" + rel


def download(
    suite: Published,
    directory: str | Path,
    *,
    source: str | Path | None = None,
    lock: str | Path | None = None,
    timeout: float = 60.0,
    total_timeout: float = TIMEOUT_S,
    progress: bool = False,
) -> Outcome:
    """Fetch ``suite`` into ``directory``, verify every file and the content, write the lock.

    ``source``: None for the maintainers' repository at the pinned commit; a base URL
    (``https://``, ``http://``, ``file://``) or a local folder holding the unpacked layout
    (a mirror); or a local ``.zip``/``.tar[.gz]`` archive whose members end in the layout's
    paths (a repository snapshot does). ``lock``: the lock file (default: in ``directory``).
    Problems are collected per file in the returned :class:`Outcome` (nothing raised for a
    file that could not be fetched or does not verify; such a file is not left in place).
    """
    directory = Path(directory).expanduser()
    make_dirs(directory)
    lock_path = Path(lock).expanduser() if lock is not None else inside(directory, LOCK)
    _check_layout(directory, suite.files)
    locked = _read_lock(lock_path, suite.name)
    outcome = Outcome(directory, lock_path)
    sums: dict[str, str] = dict(locked)
    wanted = sorted(suite.files)
    base: str | None = None
    archive: Path | None = None
    if source is not None:
        text = str(source)
        local = Path(text).expanduser()
        if "://" in text:
            base = text
        elif local.is_dir():
            base = local.resolve().as_uri()
        elif local.is_file() and local.name.endswith(_ARCHIVES):
            archive = local
        else:
            raise SentprobeError(
                f"{source}: not a URL, a folder or a .zip/.tar archive (the source to fetch from)"
            )

    todo: list[str] = []
    for rel in wanted:
        dest = directory / rel
        if not dest.is_file():
            todo.append(rel)
            continue
        problem, sha = _mismatch(dest, suite.files[rel], locked.get(rel))
        if problem is None:
            outcome.present.append(rel)
            sums[rel] = sha
        else:
            log.info("%s: %s; fetching it again", rel, problem)
            dest.unlink()
            todo.append(rel)

    if archive is not None and todo:
        outcome.problems.update(_from_archive(archive, todo, directory, suite.folder))
    deadline = time.monotonic() + total_timeout
    fetching = [rel for rel in todo if archive is None and rel not in outcome.problems]
    size = sum(suite.bytes.get(rel, 0) for rel in fetching)
    with tqdm(total=size or None, unit="B", unit_scale=True, desc=suite.name,
              disable=not (progress and fetching)) as bar:  # fmt: skip
        for rel in todo:
            dest = directory / rel
            if rel in outcome.problems:
                continue
            if archive is None:
                make_dirs(dest.parent, directory)
                url = _source_url(base, suite, rel)
                log.info("fetching %s", url)
                limit = suite.bytes.get(rel, MAX_UNSIZED_BYTES)
                problem = _fetch_with_retries(url, dest, timeout, directory, limit, deadline, bar)
                if problem is not None:
                    outcome.problems[rel] = problem
                    continue
            problem, sha = _mismatch(dest, suite.files[rel], locked.get(rel))
            if problem is not None:
                dest.unlink()
                outcome.problems[rel] = problem
                continue
            outcome.fetched.append(rel)
            sums[rel] = sha

    if not outcome.problems:
        outcome.problems.update(check_content(suite, directory))
    verified = {rel: sha for rel, sha in sums.items() if rel in suite.files}
    if verified:
        _write_lock(lock_path, suite, verified)
    outcome.identical = _identical_files(verified)
    return outcome


def _check_layout(directory: Path, files: Iterable[str]) -> None:
    """Refuse, before anything is read, written or deleted, an output folder where a file of
    the layout, its ``.part`` or a folder on the way is a link (a cloned project can carry
    one: git keeps links) or leads outside the folder: one line naming it."""
    for rel in files:
        for name in (rel, rel + ".part"):
            path = inside(directory, name)
            for link in (path, *path.parents):
                if directory not in link.parents:
                    break
                if link.is_symlink():
                    raise DataError(
                        link,
                        None,
                        f"a symbolic link (to {os.readlink(link)}) in the download folder; "
                        "refused, nothing read or written through it (remove it and rerun)",
                    )


def _identical_files(sums: Mapping[str, str]) -> list[tuple[str, str]]:
    """Pairs of files in one folder with the same SHA-256, in path order."""
    first: dict[tuple[str, str], str] = {}
    pairs = []
    for rel in sorted(sums):
        key = (rel.rpartition("/")[0], sums[rel])
        if key in first:
            pairs.append((first[key], rel))
        else:
            first[key] = rel
    return pairs


def _outside(found: int, stated: int) -> bool:
    """A count off what the paper or README states ("a few more" allowed: up to 1 %)."""
    return not stated <= found <= stated * 1.01


def _labels(task: ProbingTask) -> set[str]:
    return {label for split in task.splits.values() for label in split.labels}


def _label_problem(task: ProbingTask, expected: frozenset[str] | None) -> str | None:
    labels = _labels(task)
    if expected is None:
        if len(labels) > WORD_CONTENT_WORDS:
            return f"{len(labels)} classes, more than the {WORD_CONTENT_WORDS} target words"
        return None
    unknown = sorted(labels - expected)
    return f"labels not in the published set: {', '.join(unknown[:5])}" if unknown else None


def _check_senteval(suite: Published, directory: Path) -> dict[str, str]:
    problems: dict[str, str] = {}
    for rel in sorted(suite.files):
        stem = rel.rsplit(".", 1)[0]
        if stem not in SENTEVAL_FILES:
            continue
        try:
            task = load_senteval_file(directory / rel)
        except DataError as e:
            problems[rel] = _located(e)
            continue
        found = {name: len(split) for name, split in task.splits.items()}
        wrong = [
            f"{name} {found.get(name, 0)} (stated {n})"
            for name, n in suite.sizes.items()
            if _outside(found.get(name, 0), n)
        ]
        problem = _label_problem(task, SENTEVAL_LABELS.get(stem))
        if stem == "word_content" and len(_labels(task)) != WORD_CONTENT_WORDS:
            problem = f"{len(_labels(task))} target words, stated {WORD_CONTENT_WORDS}"
        problem = "; ".join(
            filter(None, [problem, *(["split sizes " + ", ".join(wrong)] if wrong else [])])
        )
        if problem:
            problems[rel] = problem
    return problems


def _check_xprobe(suite: Published, directory: Path) -> dict[str, str]:
    problems: dict[str, str] = {}
    folders = sorted({rel.rsplit("/", 1)[0] for rel in suite.files})
    for folder in folders:
        try:
            task = load_xprobe_task(directory / folder)
        except DataError as e:
            problems[folder] = _located(e)
            continue
        missing = [s for s in XPROBE_SPLIT_FILES if s not in task.splits or not len(task.splits[s])]
        problem = _label_problem(task, XPROBE_LABELS.get(folder.rsplit("/", 1)[-1]))
        if missing:
            problem = "; ".join(filter(None, [problem, f"empty split {', '.join(missing)}"]))
        if problem:
            problems[folder] = problem
    return problems


def _located(e: DataError) -> str:
    """A loader's DataError without its path (the caller names the file)."""
    return (f"line {e.line}: " if e.line is not None else "") + e.problem


def _check_dnc(suite: Published, directory: Path) -> dict[str, str]:
    try:  # formats, labels, metadata and folds
        tasks = load_dnc(directory)
    except DataError as e:
        return {os.path.relpath(e.path, directory) if e.path else "*_data.json": _located(e)}
    items = sum(
        len(json.loads((directory / rel).read_bytes()))
        for rel in suite.files
        if rel.endswith("_data.json")
    )
    stated = suite.sizes.get("items")
    if stated is not None and items != stated:
        return {"*_data.json": f"{items} items in {len(tasks)} sets, the paper states {stated}"}
    return {}


_CHECKS: dict[str, Callable[[Published, Path], dict[str, str]]] = {
    "senteval": _check_senteval,
    "xprobe": _check_xprobe,
    "dnc": _check_dnc,
}


def check_content(suite: Published, directory: Path) -> dict[str, str]:
    """What the suite's paper and README state that its files do not match (line formats,
    label sets, split sizes), by file; a file the loader cannot read is reported with the
    loader's one-line problem."""
    return _CHECKS[suite.name](suite, directory)
