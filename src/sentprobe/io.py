"""File I/O shared by every stage: compressed input, numbered lines for error messages, and
atomic writes.

Input files may be plain, gzip, bz2 or xz (recognised by their magic bytes, so a mis-named
file still opens); ``iter_lines`` decodes line by line so a bad byte is reported with its
line number. Output goes through ``atomic_write_*``: a temporary file in the same directory,
``os.replace``d into place once complete, so an interrupted run never leaves a half-written
file behind, and two writers never share a temporary name (``.tmp-<name>.<random>.part``).

It is the one writer: no other module opens a file for writing, makes a temporary file or
folder, renames one into place or opens an SQLite file (tests/test_architecture.py), so its
rules hold everywhere: no link followed or FIFO opened where sentprobe writes
(``open_partial``, ``atomic_writer``), nothing made outside the folder the user named
(``make_dirs``), the umask's permissions kept. And the one reader of others' files:
``open_regular``/``read_bytes``/``read_text`` refuse a FIFO or device instead of waiting on it.

The boundary of what others made is here too: ``inside`` (a file name read from a suite,
store, run or cache stays inside it), ``path_part`` (text from a file as one safe file name)
and ``printable`` (text from a file shown without its control characters). Long because
these rules must live in one place every stage uses, not in a copy per stage.
"""

from __future__ import annotations

import bz2
import csv
import errno
import gzip
import hashlib
import io
import lzma
import os
import re
import shutil
import sqlite3
import stat
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sentprobe.errors import DataError, SentprobeError

__all__ = [
    "WRITE_ERRORS",
    "atomic_dir",
    "atomic_write_bytes",
    "atomic_write_text",
    "atomic_writer",
    "check_replaceable_dir",
    "check_writable_dir",
    "check_writable_file",
    "connect_sqlite",
    "create_private",
    "fresh_dir",
    "make_dirs",
    "open_partial",
    "open_regular",
    "open_text_writer",
    "read_bytes",
    "read_text",
    "redirect_to_devnull",
    "replace_file",
    "scratch",
    "scratch_dir",
    "write_folder",
    "file_system_type",
    "read_csv_table",
    "write_problem",
    "inside",
    "path_part",
    "printable",
    "suite_folder",
    "iter_lines",
    "locked_dir",
    "open_binary",
    "open_text",
]

#: What ``open_binary`` returns: a plain or decompressing binary reader.
BinaryReader = gzip.GzipFile | bz2.BZ2File | lzma.LZMAFile | io.BufferedReader


def open_binary(path: str | Path) -> BinaryReader:
    """Open a file for reading bytes, decompressing gzip, bz2 or xz on the fly.

    The format is recognised by its magic bytes rather than the file suffix, so a mis-named
    file still opens.
    """
    path = Path(path)
    try:
        f = open_regular(path)  # a FIFO or device is refused, not waited on
        head = f.read(6)
    except OSError as e:
        raise DataError(path, None, f"cannot read file: {e.strerror or e}") from None
    for magic, kind in _COMPRESSED:
        if head.startswith(magic):
            f.close()
            return kind(path, "rb")
    f.seek(0)
    return f


_COMPRESSED: list[tuple[bytes, Callable[..., BinaryReader]]] = [
    (b"\x1f\x8b", gzip.GzipFile),
    (b"BZh", bz2.BZ2File),
    (b"\xfd7zXZ\x00", lzma.LZMAFile),
]


def file_sha256(path: str | Path, *, decompress: bool = True) -> str:
    """SHA-256 (hex) of a file's content, decompressed as ``open_binary`` reads it (a
    corpus is the same whether gzipped or not); ``decompress=False``: of its bytes as stored."""
    h = hashlib.sha256()
    with open_binary(path) if decompress else open_regular(path) as f:
        try:
            while block := f.read(1 << 20):
                h.update(block)
        except (EOFError, OSError, lzma.LZMAError, zlib.error) as e:
            raise DataError(path, None, f"corrupt compressed data: {e}") from None
    return h.hexdigest()


def open_text(path: str | Path, errors: str = "strict") -> io.TextIOWrapper:
    """Open a UTF-8 text file for reading, decompressing gzip, bz2 or xz on the fly."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8", errors=errors)


def iter_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` without the newline; bad bytes are a DataError.

    Lines are decoded one by one so the error names the exact line.
    """
    lineno = 0
    with open_binary(path) as f:
        try:
            for lineno, raw in enumerate(f, start=1):  # noqa: B007 - used in the handler
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise DataError(path, lineno, f"not valid UTF-8 ({e.reason})") from None
                yield lineno, line.rstrip("\r\n")
        except (EOFError, OSError, lzma.LZMAError, zlib.error) as e:
            raise DataError(path, lineno + 1, f"corrupt compressed data: {e}") from None


def read_csv_table(
    path: str | Path,
    required: Sequence[str],
    optional: Sequence[str] | None = (),
    *,
    comments: bool = False,
    hint: str | None = None,
) -> list[tuple[int, dict[str, str]]]:
    """The rows of a CSV file with a header line, as ``(line number, {column: value})``.

    The one reader of every user-written table (``correlate`` scores, ``report --reference``
    rows, crowd votes), tolerant of what spreadsheets save: a UTF-8 byte-order mark, spaces
    around header names and values, upper-case header names, CRLF line ends, blank lines
    (``comments``: and ``#`` lines). Quoted values may span lines; a row's number is the line
    it starts on. ``optional``: the other columns allowed (None: any, ignored). Errors are a
    DataError naming the file, the line and the problem; ``hint`` says which columns the
    header must name (default: the required ones).
    """
    wanted = hint or "the columns " + ", ".join(required)
    starts: list[int] = []

    def lines() -> Iterator[str]:
        for lineno, line in iter_lines(path):
            if lineno == 1:
                line = line.removeprefix("\ufeff")
            if not line.strip() or (comments and line.lstrip().startswith("#")):
                continue
            starts.append(lineno)
            yield line + "\n"  # a quoted value spanning lines keeps its line break

    reader = csv.reader(lines())
    rows: list[tuple[int, dict[str, str]]] = []
    header: list[str] | None = None
    while True:
        fed = len(starts)  # the reader pulls a row's lines only: the next one is its first
        try:
            values = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            raise DataError(
                path, starts[fed] if fed < len(starts) else None, f"not valid CSV: {e}"
            ) from None
        first = starts[fed]
        if header is None:
            header = [v.strip().lower() for v in values]
            _check_header(path, first, header, required, optional, wanted)
        elif len(values) != len(header):
            raise DataError(path, first, f"{len(values)} fields, the header has {len(header)}")
        else:
            rows.append((first, {k: v.strip() for k, v in zip(header, values, strict=True)}))
    if header is None:
        raise DataError(path, None, f"empty file; expected a header naming {wanted}")
    return rows


def _check_header(
    path: str | Path,
    line: int,
    header: list[str],
    required: Sequence[str],
    optional: Sequence[str] | None,
    wanted: str,
) -> None:
    found = f" (found: {', '.join(header)})"
    missing = [c for c in required if c not in header]
    if missing:
        raise DataError(
            path,
            line,
            f"header lacks column(s) {', '.join(missing)}; the header must name {wanted}{found}",
        )
    if optional is not None:
        unknown = [c for c in header if c not in (*required, *optional)]
        if unknown:
            raise DataError(
                path,
                line,
                f"unknown column(s) {', '.join(unknown)}; the columns are "
                f"{', '.join([*required, *optional])}",
            )


def check_replaceable_dir(out: str | Path) -> None:
    """Refuse an output folder that ``atomic_dir`` must not replace: one that exists and is
    neither empty nor a suite (a suite has ``manifest.json``; a rebuild replaces it whole)."""
    out = Path(out)
    if out.exists() and not (
        out.is_dir() and ((out / "manifest.json").is_file() or not any(out.iterdir()))
    ):
        raise SentprobeError(
            f"{out}: exists and is not a sentprobe suite (no manifest.json); a build replaces "
            "its output folder whole, so give a new or empty folder"
        )


@contextmanager
def atomic_dir(target: str | Path) -> Iterator[Path]:
    """Yield a new empty folder beside ``target``; once the block ends, it *becomes* ``target``
    (a previous ``target`` is removed), so readers see the old folder or the new one whole,
    never a mix. If the block fails, the new folder is removed and ``target`` is untouched.

    The swap of a non-empty ``target`` is two renames (old out of the way, new in), not one
    atomic exchange: a reader at that instant finds no folder, never a half-written one. Two
    writers of one ``target`` must hold a lock (``locked_dir``) around the whole block.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".tmp-{target.name}.", suffix=".part"))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes 0700: as mkdir would make it
        try:
            os.replace(tmp, target)  # no target, or an empty one: one atomic rename
            return
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
        old = Path(
            tempfile.mkdtemp(dir=target.parent, prefix=f".tmp-{target.name}.", suffix=".old")
        )
        os.replace(target, old / "previous")
        try:
            os.replace(tmp, target)
        except BaseException:
            os.replace(old / "previous", target)  # put the old one back
            raise
        finally:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextmanager
def suite_folder(out: Path, kept: str = "") -> Iterator[Path]:
    """``atomic_dir(out)`` for a suite: a full disk or an unwritable ``--out`` becomes one line
    naming the suite and saying that nothing of it was written (``kept``: what was, e.g. the
    annotation)."""
    try:
        with atomic_dir(out) as folder:
            yield folder
    except OSError as e:
        if e.errno not in WRITE_ERRORS:
            raise
        after = f"; {kept}" if kept else ""
        raise SentprobeError(
            f"{write_problem(out, e, 'suite', '--out')} (nothing of it was written{after})"
        ) from None


@contextmanager
def locked_dir(folder: str | Path, on_wait: Callable[[], None] | None = None) -> Iterator[Path]:
    """Hold an exclusive lock on ``folder`` (made if missing) for the block: another process
    asking for it waits (``on_wait`` is called once first, to say so). The lock is the
    folder's own (``flock`` on it, released when the process ends however it ends), so no
    lock file is left behind; a folder removed and made again while waiting is locked anew.
    """
    import fcntl  # POSIX; imported here so that importing sentprobe.io needs no fcntl

    folder = Path(folder)
    while True:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait is not None:
                    on_wait()
                    on_wait = None
                fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                now, held = os.stat(folder), os.fstat(fd)
                same = (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)
            except FileNotFoundError:
                same = False
            if same:
                yield folder
                return
        finally:
            os.close(fd)  # releases the lock


def atomic_write_bytes(
    path: str | Path,
    data: bytes | Iterable[bytes],
    fsync: bool = False,
    root: str | Path | None = None,
) -> Path:
    """Write ``data`` (bytes, or chunks of bytes) to ``path``, replacing it only once complete
    (``atomic_writer``: a temporary file beside it, no link followed, the umask's
    permissions; ``root``: the folder ``path`` must stay inside)."""
    with atomic_writer(path, root=root, fsync=fsync) as f:
        for chunk in [data] if isinstance(data, bytes) else data:
            f.write(chunk)
    return Path(path)


def _umask() -> int:
    """The process's umask, read without changing it (``os.umask`` sets it, which another
    thread could see); where ``/proc`` has no ``Umask:`` line, set and put back at once."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | Path, text: str, root: str | Path | None = None) -> Path:
    """Write UTF-8 text with ``\\n`` line ends, replacing ``path`` only once complete."""
    return atomic_write_bytes(path, text.encode("utf-8"), root=root)


#: errno values that mean "no room": the fix is space, not another path.
_NO_SPACE = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
#: errno values that mean "not allowed to write here".
_NOT_WRITABLE = {errno.EACCES, errno.EPERM, errno.EROFS}
#: errno values of a write that failed for want of room or permission (not a bug).
WRITE_ERRORS = frozenset({*_NO_SPACE, *_NOT_WRITABLE, errno.ENOTDIR, errno.EEXIST})


def _file_in_the_way(path: Path) -> Path | None:
    """The nearest existing ancestor of ``path`` (or ``path`` itself) that is not a folder."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return None if candidate.is_dir() else candidate
    return None


def write_problem(path: str | Path, exc: OSError, what: str, elsewhere: str = "path") -> str:
    """One line saying why ``what`` at ``path`` could not be written, with the fix that fits
    the cause: a file where a folder should be, no permission or a read-only file system, no
    space; ``elsewhere`` names the option that picks another place."""
    path = Path(path)
    reason = exc.strerror or str(exc)
    blocker = _file_in_the_way(path) if exc.errno in (errno.ENOTDIR, errno.EEXIST) else None
    if blocker is not None:
        return (
            f"{path}: cannot write the {what}: {blocker} is a file, not a folder; choose "
            f"another {elsewhere}"
        )
    if exc.errno in _NOT_WRITABLE:
        hint = f"not writable; choose another {elsewhere} or fix the permissions"
    elif exc.errno in _NO_SPACE:
        hint = f"free space or choose another {elsewhere}"
    else:
        hint = f"choose another {elsewhere}"
    return f"{path}: cannot write the {what} ({reason}): {hint}"


#: Where the kernel lists mounted file systems (Linux).
MOUNTS = Path("/proc/mounts")
#: File system types shared across hosts, where SQLite's WAL mode (shared memory between the
#: processes of one store) does not work between hosts.
NETWORK_FILE_SYSTEMS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "beegfs", "glusterfs",
     "fuse.glusterfs", "ceph", "fuse.ceph", "fuse.sshfs", "afs", "9p", "ocfs2", "gfs2",
     "fuse.gcsfuse", "fuse.s3fs", "wekafs", "panfs"}
)  # fmt: skip


def file_system_type(path: str | Path) -> str | None:
    """The type of the file system ``path`` (or its nearest existing parent) is on, from
    ``/proc/mounts`` (the longest mount point above it); None where that cannot be read."""
    try:
        lines = MOUNTS.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    target = Path(path).absolute()
    while not target.exists() and target != target.parent:
        target = target.parent
    target = target.resolve()
    best: tuple[int, str] | None = None
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        # spaces and tabs in a mount point are written as octal escapes (\040, \011)
        point = Path(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), fields[1]))
        if target == point or point in target.parents:
            depth = len(point.parts)
            if best is None or depth >= best[0]:
                best = (depth, fields[2])
    return None if best is None else best[1]


def check_writable_dir(
    folder: str | Path, what: str, elsewhere: str = "path", target: str | Path | None = None
) -> Path:
    """Make ``folder`` (and its parents) and check a file can be created in it, so an output
    that cannot be written fails before any work, not after it. A one-line SentprobeError
    (``write_problem``, naming ``target``, the file to be written there, else ``folder``)
    otherwise; the probe file is anonymous and never left behind."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder, prefix=".tmp-probe."):
            pass
    except OSError as e:
        named = folder if target is None else Path(target)
        if e.errno in (errno.ENOTDIR, errno.EEXIST):  # find the file from the folder
            blocker = _file_in_the_way(folder)
            if blocker is not None:
                raise SentprobeError(
                    f"{named}: cannot write the {what}: {blocker} is a file, not a folder; "
                    f"choose another {elsewhere}"
                ) from None
        raise SentprobeError(write_problem(named, e, what, elsewhere)) from None
    return folder


def path_part(name: str) -> str:
    """``name`` (a task name, a model name, a revision: text from a file) as one safe file
    name: letters, digits, ``_``, ``-`` and ``.`` only (``/``, ``\\``, spaces and control
    characters become ``_``), and never ``.``, ``..`` or a hidden name (leading dots become
    ``_``), so it cannot climb out of the folder it is joined to or hide there."""
    part = re.sub(r"[^\w.\-]", "_", name)
    return re.sub(r"^\.+", lambda m: "_" * len(m[0]), part) or "_"


#: Control characters (C0, DEL, C1) and the bidirectional overrides that reorder shown text.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def printable(text: str, keep: str = "") -> str:
    """``text`` (a name read from a store, a task file...) with its control characters
    written as escapes (``\\n``, ``\\u001b``), so it cannot drive the terminal, hide what
    follows it or split a line or table row; ``keep``: the characters left as they are (a
    whole table's own line ends)."""
    return _CONTROL.sub(
        lambda m: m[0] if m[0] in keep else _ESCAPES.get(m[0], f"\\u{ord(m[0]):04x}"), text
    )


def inside(root: str | Path, name: str | Path, source: str | Path | None = None) -> Path:
    """``root / name`` for a file name read from a file (a manifest entry, an index row) or
    found in a folder, refused unless it stays inside ``root``: not absolute, and under
    ``root`` once every ``..`` and symbolic link is followed. A shared suite, annotation
    folder, results store or cache therefore cannot make sentprobe read, write or delete
    anything outside itself (docs/security.md). ``source``: the file that names it, for the
    one-line DataError (default ``root``)."""
    root = Path(root)
    path = root / name
    if Path(name).is_absolute() or not path.resolve().is_relative_to(root.resolve()):
        target = f" (a link to {path.resolve()})" if path.is_symlink() else ""
        raise DataError(
            source or root,
            None,
            f"{str(name)!r}{target} is outside {root}; refused: a suite, store or cache may "
            "only name files inside its own folder",
        )
    return path


# The one reader of files someone else made, and the one writer of every file sentprobe makes.
# Every other module reads a shared folder's files and writes its outputs through these
# (tests/test_architecture.py::test_only_sentprobe_io_writes_files), so the rules below hold
# for every stage by construction: no link followed where sentprobe writes, nothing written or
# read outside the folder named, no FIFO or device waited on, the umask's permissions kept.

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def _under(root: str | Path, path: str | Path) -> Path:
    """``path`` (``root / name``, or a name relative to ``root``) checked by ``inside``."""
    root, path = Path(root), Path(path)
    try:
        rel = path.relative_to(root)
    except ValueError:
        rel = path  # absolute elsewhere, or relative to root: inside decides
    return inside(root, rel)


def open_regular(path: str | Path, root: str | Path | None = None) -> io.BufferedReader:
    """Open a file for reading bytes, refusing anything but a regular file (a FIFO, device or
    socket is a one-line DataError, never waited on: the open does not block); ``root``: the
    folder someone else made that ``path`` must stay inside (``inside``). An ``OSError``
    (missing, no permission) is raised as it is, for the caller to word."""
    path = Path(path) if root is None else _under(root, path)
    fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):  # as open() says it
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            raise DataError(
                path,
                None,
                f"{_kind(mode)}, not a regular file; refused (sentprobe reads only regular "
                "files here)",
            )
        os.set_blocking(fd, True)
        return open(fd, "rb")  # the caller closes it
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | Path, root: str | Path | None = None) -> bytes:
    """The bytes of a regular file (``open_regular``)."""
    with open_regular(path, root) as f:
        return f.read()


def read_text(path: str | Path, root: str | Path | None = None) -> str:
    """The UTF-8 text of a regular file (``open_regular``); a bad byte is a UnicodeDecodeError
    (a ValueError) for the caller to word."""
    return read_bytes(path, root).decode("utf-8")


def _refused_write(path: Path, why: str) -> SentprobeError:
    return SentprobeError(
        f"{path}: {why} where sentprobe writes; refused, nothing written through it "
        "(remove it and run again)"
    )


def make_dirs(folder: str | Path, root: str | Path | None = None) -> Path:
    """``mkdir -p folder``; with ``root`` (the folder the user named), every part of ``folder``
    below ``root`` must stay inside it: a planted link to a folder elsewhere is refused
    (``inside``), nothing made through it. Folders get the umask's permissions."""
    folder = Path(folder)
    if root is None:
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    current = root
    for part in _under(root, folder).relative_to(root).parts:
        current = inside(root, current.relative_to(root) / part)
        current.mkdir(exist_ok=True)
    return current


def open_partial(
    path: str | Path, *, resume: bool = False, root: str | Path | None = None
) -> io.BufferedWriter:
    """Open a file sentprobe fills in pieces (a download's ``.part``, a teacher's
    ``.partial``) for writing bytes: created with the umask's permissions if missing,
    continued at its end if ``resume``, else emptied. Never through a symbolic link
    (``O_NOFOLLOW``), and never a FIFO, device or a file with other hard links: those are
    refused in one line, nothing written. ``root``: the folder ``path`` must stay inside."""
    path = Path(path)
    if root is not None:
        make_dirs(path.parent, root)
        path = _under(root, path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o666)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _refused_write(path, "a symbolic link") from None
        if e.errno == errno.ENXIO:  # a FIFO nobody reads
            raise _refused_write(path, "a FIFO") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refused_write(path, _kind(st.st_mode))
        if st.st_nlink > 1:
            raise _refused_write(path, f"a file with {st.st_nlink} hard links")
        os.set_blocking(fd, True)
        if resume:
            os.lseek(fd, 0, os.SEEK_END)
        else:
            os.ftruncate(fd, 0)
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def open_text_writer(path: str | Path, root: str | Path | None = None) -> io.TextIOWrapper:
    """``open_partial`` (emptied) as UTF-8 text with ``\\n`` line ends: a scratch file that a
    later step reads back (a spooled corpus)."""
    return io.TextIOWrapper(open_partial(path, root=root), encoding="utf-8", newline="\n")


def fresh_dir(folder: str | Path, root: str | Path | None = None) -> Path:
    """``folder`` made anew and empty (one left by a killed run is removed first); a link or
    a file there is refused in one line, never removed through or written into. ``root``:
    the folder it must stay inside."""
    folder = Path(folder) if root is None else _under(root, folder)
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise _refused_write(folder, "a symbolic link" if folder.is_symlink() else "a file")
    shutil.rmtree(folder, ignore_errors=True)
    make_dirs(folder, root)
    return folder


def replace_file(src: str | Path, dest: str | Path, root: str | Path | None = None) -> Path:
    """Rename ``src`` onto ``dest`` (one atomic rename; a link at ``dest`` is replaced, not
    followed); ``root``: the folder ``dest`` must stay inside."""
    dest = Path(dest) if root is None else _under(root, dest)
    os.replace(src, dest)
    return dest


@contextmanager
def atomic_writer(
    path: str | Path, *, root: str | Path | None = None, fsync: bool = False
) -> Iterator[io.BufferedWriter]:
    """A binary file to write ``path`` through: a new temporary file in ``path``'s folder
    (``mkstemp``: ``O_EXCL``, no link followed), renamed onto ``path`` once the block ends,
    with the permissions any new file gets (0666 less the umask: mkstemp's 0600 would hide a
    shared cache from the group; a umask of 077 keeps it private). If the block fails, the
    temporary file is removed and ``path`` is untouched. ``root``: the folder the user named,
    which ``path`` must stay inside (``inside``). ``fsync``: flushed to disk before the
    rename, for stores that must survive a power cut."""
    path = Path(path)
    if root is None:
        path.parent.mkdir(parents=True, exist_ok=True)
    else:
        make_dirs(path.parent, root)
        path = _under(root, path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".tmp-{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def create_private(path: str | Path, data: bytes) -> bool:
    """Make ``path`` holding ``data``, readable by this user only (0600), unless it exists
    (another process made it first: theirs is kept); True if this call made it. Written to a
    temporary file first and linked into place, so a reader never sees it half-written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".tmp-{path.name}.")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    finally:
        os.unlink(tmp)


@contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A new private folder in the system's temporary folder for the block, then removed."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)


def write_folder(target: str | Path, fill: Callable[[str], object]) -> Path:
    """``target`` made whole by ``fill(folder)`` (a library's own writer, such as
    ``Dataset.save_to_disk``) in a new folder beside it (``atomic_dir``: the umask's
    permissions, renamed into place once complete, removed if ``fill`` fails)."""
    with atomic_dir(target) as tmp:
        fill(str(tmp))
    return Path(target)


def check_writable_file(path: str | Path, what: str, elsewhere: str = "path") -> None:
    """An existing ``path`` can be opened for writing (nothing is written): a one-line
    SentprobeError (``write_problem``) otherwise."""
    try:
        fd = os.open(path, os.O_RDWR | _NONBLOCK | _CLOEXEC)
    except OSError as e:
        raise SentprobeError(write_problem(path, e, what, elsewhere)) from None
    os.close(fd)


def scratch_dir(prefix: str) -> Path:
    """A new private folder in the system's temporary folder (``mkdtemp``, mode 0700)."""
    return Path(tempfile.mkdtemp(prefix=prefix))


def redirect_to_devnull(fd: int) -> None:
    """Point the file descriptor ``fd`` (stdout) at the null device."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def connect_sqlite(database: str | Path, **kwargs: Any) -> sqlite3.Connection:
    """``sqlite3.connect``, the one way sentprobe opens an SQLite file: a path (not a URI)
    that exists and is not a regular file (a FIFO would block, a device is not a store) is
    refused in one line. SQLite itself refuses ``-wal``/``-shm``/``-journal`` side files that
    are links."""
    if not kwargs.get("uri"):
        try:
            mode = os.stat(database).st_mode
        except OSError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            raise SentprobeError(f"{database}: {_kind(mode)}, not an SQLite file; refused")
    return sqlite3.connect(database, **kwargs)
