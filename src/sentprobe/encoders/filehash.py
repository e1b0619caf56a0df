"""Content hashes of model files, computed once per file version.

A model directory's identity must follow its weights' *content*: two checkpoints with the same
config and same-size weight files are different models. Hashing a large checkpoint takes a
second or so, so each file's digest is remembered by (resolved path, size, mtime) in memory and
in a small JSON sidecar (``file-hashes.json`` in the embedding cache in use: ``--cache-dir``
keeps it there, ``--no-cache`` writes none); a file that changes gets a new size or mtime and
is hashed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from sentprobe.errors import DataError
from sentprobe.io import atomic_write_text, open_regular, read_text

BLOCK = 1 << 20  # 1 MiB reads: constant memory for any file size
SIDECAR = "file-hashes.json"

_memory: dict[str, str] = {}
#: The embedding cache opened last in this process (``[None]``: ``--no-cache``), whose folder
#: holds the sidecar; empty until one is opened.
_cache_root: list[Path | None] = []


def use_cache_root(root: Path | None) -> None:
    """Keep the sidecar in the embedding cache ``root`` (None: keep none on disk), so a run
    writes nothing outside the cache it was given."""
    _cache_root[:] = [root]


def sidecar_path() -> Path | None:
    """``file-hashes.json`` in the embedding cache in use (None: no cache), else in
    ``$SENTPROBE_CACHE``, else in ``~/.cache/sentprobe/embeddings``."""
    if _cache_root:
        return None if _cache_root[0] is None else _cache_root[0] / SIDECAR
    env = os.environ.get("SENTPROBE_CACHE")
    root = Path(env) if env else Path.home() / ".cache" / "sentprobe" / "embeddings"
    return root / SIDECAR


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}"


def hash_file(path: Path) -> str:
    """blake2b (16 bytes, hex) of the file's bytes, read in 1 MiB blocks."""
    h = hashlib.blake2b(digest_size=16)
    with open_regular(path) as f:  # a FIFO or device is refused, never waited on
        while block := f.read(BLOCK):
            h.update(block)
    return h.hexdigest()


def _read_sidecar(path: Path) -> dict[str, str]:
    try:
        data = json.loads(read_text(path))
    except (OSError, ValueError, DataError):
        return {}  # missing, damaged or not a file: only costs a rehash
    return data if isinstance(data, dict) else {}


def _write_sidecar(path: Path, entries: dict[str, str]) -> None:
    """Merge ``entries`` into the sidecar, atomically; failures only cost a later rehash."""
    with contextlib.suppress(OSError):
        # A file hashed again (new size or mtime) replaces its old entry: no unbounded growth.
        paths = {stamp.split("\0", 1)[0] for stamp in entries}
        old = {k: v for k, v in _read_sidecar(path).items() if k.split("\0", 1)[0] not in paths}
        merged = {**old, **entries}
        atomic_write_text(path, json.dumps(merged, indent=0, sort_keys=True))


def file_digests(paths: list[Path]) -> list[str]:
    """Content digests of ``paths``, hashing only files not seen at their current size/mtime."""
    stamps = [_stamp(p) for p in paths]
    todo = [i for i, s in enumerate(stamps) if s not in _memory]
    if todo:
        sidecar = sidecar_path()
        known = {} if sidecar is None else _read_sidecar(sidecar)
        new: dict[str, str] = {}
        for i in todo:
            stamp = stamps[i]
            digest = known.get(stamp)
            if not isinstance(digest, str):
                digest = new[stamp] = hash_file(paths[i])
            _memory[stamp] = digest
        if new and sidecar is not None:
            _write_sidecar(sidecar, new)
    return [_memory[s] for s in stamps]
