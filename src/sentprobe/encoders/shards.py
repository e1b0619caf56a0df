"""The files of the embedding cache: one directory per encoder fingerprint, holding append-only
shards with checksums, and the in-memory index over them (:class:`EncoderDir`).

Layout under ``root``::

    <slug>-<hash of fingerprint>/
        meta.json                  full fingerprint, dim, views, dtype (for humans and ``info``)
        <time_ns>-<random>.shard   append-only; never modified after it appears

A shard is written through ``sentprobe.io.atomic_write_bytes`` (a uniquely named temp file
``os.replace``d into place), so a
visible shard is always complete and two processes can fill the same cache (a sentence
stored twice is harmless). Each shard carries sha256 checksums of its keys and of its
vectors: truncation and damaged keys are caught when the directory is scanned, damaged
vectors when the shard is first read (except by the object that wrote it, which hashed
those very vectors in memory a moment before: re-reading them would double the cost of
writing). A damaged shard is reported with a warning, renamed
to ``*.damaged`` and its sentences are encoded again; it is never silently used.

Shard format: the magic line ``SPSHARD1``, one JSON header line
(``n``, ``width``, ``dtype``, ``keys_sha256``, ``vectors_sha256``), ``n`` 16-byte keys
(blake2b of the UTF-8 sentence), then the ``(n, width)`` vectors in C order.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import stat
import time
import uuid
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sentprobe.errors import DataError, SentprobeError
from sentprobe.io import (
    atomic_write_bytes,
    inside,
    make_dirs,
    read_text,
    replace_file,
    write_problem,
)

MAGIC = b"SPSHARD1\n"
KEY_BYTES = 16
ROW_BITS = 32
SHARD_SUFFIX = ".shard"
META_FILE = "meta.json"
#: How a user points the cache elsewhere (named in write errors).
CACHE_ELSEWHERE = "--cache-dir / $SENTPROBE_CACHE"


class CacheWarning(UserWarning):
    """A damaged cache file was found and ignored (its sentences are encoded again)."""


def sentence_key(sentence: str) -> bytes:
    """16-byte key of a sentence; collisions are negligible at any realistic cache size."""
    return hashlib.blake2b(sentence.encode("utf-8"), digest_size=KEY_BYTES).digest()


def fingerprint_dirname(fingerprint: str) -> str:
    """A safe, readable directory name: a slug of the fingerprint plus a hash of all of it."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", fingerprint).strip("._")[:40] or "encoder"
    digest = hashlib.blake2b(fingerprint.encode("utf-8"), digest_size=10).hexdigest()
    return f"{slug}-{digest}"


class _DamagedShard(Exception):
    pass


@dataclass
class _Shard:
    path: Path
    n: int
    width: int
    dtype: np.dtype
    offset: int  # byte offset of the vectors
    vectors_sha256: str


#: Types numpy lacks, stored as their bits: bfloat16 as little-endian uint16 (the upper half
#: of a float32; ``EmbeddingCache`` converts, see cache.py).
BIT_TYPES = {"bfloat16": np.dtype("<u2")}


def _vector_dtype(name: object) -> np.dtype:
    """A cache's vector type, which must be a float: a planted ``int8`` would store every
    vector rounded to integers and change the results without a word. ``bfloat16``: its
    carrier (:data:`BIT_TYPES`)."""
    if str(name) in BIT_TYPES:
        return BIT_TYPES[str(name)]
    dtype = np.dtype(str(name))
    if dtype.kind != "f":
        raise ValueError(f"vector dtype {name!r} is not a float type")
    return dtype


def _read_header(path: Path) -> tuple[_Shard, list[bytes]]:
    """Read and check a shard's header and keys (cheap); raise _DamagedShard if broken."""
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block the open; a device, worse
            raise _DamagedShard("not a regular file")
        size = st.st_size
        with open(path, "rb") as f:
            if f.read(len(MAGIC)) != MAGIC:
                raise _DamagedShard("not a shard file (bad magic bytes)")
            line = f.readline(4096)
            header = json.loads(line)
            n, width = int(header["n"]), int(header["width"])
            dtype = _vector_dtype(header["dtype"])
            start = f.tell()
            expected = start + n * KEY_BYTES + n * width * dtype.itemsize
            if n < 0 or width < 0 or size != expected:  # checked before reading n keys
                raise _DamagedShard(f"truncated or padded ({size} bytes, expected {expected})")
            raw_keys = f.read(n * KEY_BYTES)
            offset = f.tell()
    except _DamagedShard:
        raise
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise _DamagedShard(f"unreadable header ({e})") from None
    if len(raw_keys) != n * KEY_BYTES or offset != start + n * KEY_BYTES:
        raise _DamagedShard(f"truncated or padded ({size} bytes, expected {expected})")
    if hashlib.sha256(raw_keys).hexdigest() != header.get("keys_sha256"):
        raise _DamagedShard("key checksum mismatch")
    keys = [raw_keys[i : i + KEY_BYTES] for i in range(0, len(raw_keys), KEY_BYTES)]
    return _Shard(path, n, width, dtype, offset, str(header.get("vectors_sha256"))), keys


def _read_vectors(shard: _Shard) -> np.ndarray:
    """Load a shard's vectors, verifying their checksum."""
    try:
        with open(shard.path, "rb") as f:
            f.seek(shard.offset)
            data = f.read()
    except OSError as e:
        raise _DamagedShard(f"unreadable ({e})") from None
    if len(data) != shard.n * shard.width * shard.dtype.itemsize:
        raise _DamagedShard("truncated vectors")
    if hashlib.sha256(data).hexdigest() != shard.vectors_sha256:
        raise _DamagedShard("vector checksum mismatch")
    vectors = np.frombuffer(data, dtype=shard.dtype).reshape(shard.n, shard.width)
    if np.issubdtype(shard.dtype, np.floating) and not np.isfinite(vectors).all():
        raise _DamagedShard("NaN or infinite vectors")  # see _verify_vectors
    return vectors


def _verify_vectors(shard: _Shard, chunk: int = 16 * 2**20) -> None:
    """Check a shard's vector checksum and that every value is finite, by streaming it (no
    copy of the whole shard in memory). A shared cache is trusted for nothing more than what
    these checks prove: a shard whose NaN or infinite values carry a matching checksum (made
    by hand) is set aside like a damaged one, and its sentences encoded again."""
    h = hashlib.sha256()
    size = 0
    finite = True
    floating = np.issubdtype(shard.dtype, np.floating)
    chunk -= chunk % shard.dtype.itemsize
    try:
        with open(shard.path, "rb") as f:
            f.seek(shard.offset)
            while block := f.read(chunk):
                h.update(block)
                size += len(block)
                if floating and finite and len(block) % shard.dtype.itemsize == 0:
                    finite = bool(np.isfinite(np.frombuffer(block, dtype=shard.dtype)).all())
    except OSError as e:
        raise _DamagedShard(f"unreadable ({e})") from None
    if size != shard.n * shard.width * shard.dtype.itemsize:
        raise _DamagedShard("truncated vectors")
    if h.hexdigest() != shard.vectors_sha256:
        raise _DamagedShard("vector checksum mismatch")
    if not finite:
        raise _DamagedShard("NaN or infinite vectors")


class EncoderDir:
    """The shards of one fingerprint, with an in-memory index key -> (shard, row)."""

    def __init__(self, path: Path, fingerprint: str) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self.meta: dict | None = None
        self.shards: list[_Shard | None] = []  # None: found damaged while reading
        self.index: dict[bytes, int] = {}  # key -> shard number << ROW_BITS | row
        self._seen: set[str] = set()
        self._verified: set[int] = set()  # shards whose vector checksum was checked
        self._written: set[str] = set()  # shards this object wrote: their checksums are ours
        self._load_meta()

    def _load_meta(self) -> None:
        meta_path = self.path / META_FILE
        if not meta_path.exists():
            return
        try:
            meta = json.loads(read_text(inside(self.path, META_FILE)))  # no FIFO waited on
            _ = meta["fingerprint"], int(meta["width"]), _vector_dtype(meta["dtype"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise DataError(
                meta_path, None, f"unreadable cache metadata ({e}); delete {self.path}"
            ) from None
        if meta["fingerprint"] != self.fingerprint:
            raise DataError(meta_path, None, f"cache directory belongs to {meta['fingerprint']!r}")
        self.meta = meta

    def refresh(self) -> None:
        """Index shards that appeared since the last scan (ours or another process's)."""
        if not self.path.is_dir():
            return
        if self.meta is None:
            self._load_meta()
        for path in sorted(self.path.glob(f"*{SHARD_SUFFIX}")):
            if path.name in self._seen:
                continue
            self._seen.add(path.name)
            try:
                shard, keys = _read_header(path)
                meta = self.meta
                held = None if meta is None else _vector_dtype(meta["dtype"])
                if meta is not None and shard.dtype != held:  # bfloat16's bits read as ints
                    raise _DamagedShard(f"{shard.dtype} vectors in a {meta['dtype']} cache")
            except _DamagedShard as e:
                self._quarantine(path, str(e))
                continue
            number = len(self.shards)
            self.shards.append(shard)
            if path.name in self._written:  # hashed from the vectors in memory while written
                self._verified.add(number)
            # Index values pack (shard number, row) into one int so lookups vectorize.
            codes = ((number << ROW_BITS) + np.arange(len(keys), dtype=np.int64)).tolist()
            self.index.update(zip(keys, codes, strict=True))  # stored twice: either copy is fine

    def _quarantine(self, path: Path, problem: str, number: int | None = None) -> None:
        warnings.warn(
            f"{path}: damaged embedding cache shard ({problem}); "
            "ignoring it, its sentences will be encoded again",
            CacheWarning,
            stacklevel=4,
        )
        if number is not None:
            self.shards[number] = None
            self.index = {k: v for k, v in self.index.items() if v >> ROW_BITS != number}
        # Renamed so the warning is given once; on a read-only cache it repeats, honestly.
        with contextlib.suppress(OSError):
            replace_file(path, path.with_name(path.name + ".damaged"))

    def codes(self, keys: Sequence[bytes]) -> np.ndarray:
        """Where each key is stored (shard number << ROW_BITS | row), -1 when not cached."""
        get = self.index.get
        return np.fromiter((get(k, -1) for k in keys), dtype=np.int64, count=len(keys))

    def verify(self, codes: np.ndarray) -> bool:
        """Check the vector checksums of the shards ``codes`` point into (each once per
        process, streamed); False if one was damaged (it is quarantined: look up again)."""
        for number in np.unique(codes[codes >= 0] >> ROW_BITS).tolist():
            shard = self.shards[number]
            if number in self._verified:
                continue
            if shard is None:
                return False
            try:
                _verify_vectors(shard)
            except _DamagedShard as e:
                self._quarantine(shard.path, str(e), number)
                return False
            self._verified.add(number)
        return True

    def gather(self, codes: np.ndarray, columns: slice) -> np.ndarray:
        """``columns`` of the rows ``codes`` (all cached and verified), read from memory-mapped
        shards one at a time, so only the requested bytes and one shard's mapping are in
        memory, however wide the rows (all layers of a model) or many the sentences."""
        shard_of, row_of = codes >> ROW_BITS, codes & ((1 << ROW_BITS) - 1)
        out: np.ndarray | None = None
        for number in np.unique(shard_of).tolist():
            shard = self.shards[number]
            assert shard is not None and number in self._verified
            mapped = np.memmap(
                shard.path, dtype=shard.dtype, mode="r", offset=shard.offset,
                shape=(shard.n, shard.width),
            )  # fmt: skip
            part = mapped[:, columns]
            if out is None:
                out = np.empty((len(codes), part.shape[1]), dtype=shard.dtype)
            dest = np.flatnonzero(shard_of == number)
            out[dest] = part[row_of[dest]]
            del mapped, part  # unmapped before the next shard is mapped
        if out is None:
            width = len(range(*columns.indices(self.meta["width"] if self.meta else 0)))
            out = np.empty((0, width), dtype=np.float32)
        return out

    def lookup(self, keys: Sequence[bytes]) -> tuple[np.ndarray | None, np.ndarray]:
        """Vectors (flattened, rows of keys not cached left uninitialised) and the indices
        of the keys not cached; the array is None when no key is cached."""
        while True:
            get = self.index.get  # rebound: _quarantine replaces the index
            codes = np.fromiter((get(k, -1) for k in keys), dtype=np.int64, count=len(keys))
            hit = codes >= 0
            shard_of, row_of = codes >> ROW_BITS, codes & ((1 << ROW_BITS) - 1)
            out = None
            try:
                for number in np.unique(shard_of[hit]).tolist():
                    shard = self.shards[number]
                    vectors = _read_vectors(shard)
                    if out is None:
                        out = np.empty((len(keys), vectors.shape[1]), dtype=vectors.dtype)
                    dest = np.flatnonzero(hit & (shard_of == number))
                    out[dest] = vectors[row_of[dest]]
            except _DamagedShard as e:
                self._quarantine(shard.path, str(e), number)
                continue  # look the keys up again without the damaged shard
            return out, np.flatnonzero(~hit)

    def write(self, keys: Sequence[bytes], vectors: np.ndarray, meta: dict) -> None:
        """Append one shard (and meta.json on first use). A failed write (read-only path,
        disk full, file size limit) leaves no partial file and raises a SentprobeError."""
        try:
            self._write(keys, vectors, meta)
        except OSError as e:
            problem = write_problem(self.path, e, "embedding cache", CACHE_ELSEWHERE)
            raise SentprobeError(f"{problem} (what was stored before is intact)") from None

    def _write(self, keys: Sequence[bytes], vectors: np.ndarray, meta: dict) -> None:
        make_dirs(self.path)
        if self.meta is None:
            self._load_meta()
        if self.meta is None:
            atomic_write_bytes(
                self.path / META_FILE, json.dumps(meta, indent=2).encode(), fsync=True
            )
            self.meta = meta
        if _vector_dtype(self.meta["dtype"]) != vectors.dtype:  # never a silent conversion
            raise SentprobeError(
                f"{self.path / META_FILE}: the cache holds {self.meta['dtype']} vectors, but "
                f"the encoder returns {vectors.dtype}; its fingerprint must change when its "
                f"output does (or delete {self.path})"
            )
        vectors = np.ascontiguousarray(vectors.reshape(len(keys), -1))
        if vectors.shape[1] != self.meta["width"]:
            raise SentprobeError(
                f"{self.path}: cached vectors for this encoder have width {self.meta['width']}, "
                f"but it now returns {vectors.shape[1]}; its fingerprint must change when its "
                "output does (or clear the cache)"
            )
        raw_keys = b"".join(keys)
        data = vectors.tobytes()
        header = {
            "n": len(keys),
            "width": int(vectors.shape[1]),
            "dtype": str(self.meta["dtype"]),  # a bit type by name (bfloat16), not its carrier
            "keys_sha256": hashlib.sha256(raw_keys).hexdigest(),
            "vectors_sha256": hashlib.sha256(data).hexdigest(),
        }
        name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}{SHARD_SUFFIX}"
        atomic_write_bytes(
            self.path / name,
            [MAGIC, json.dumps(header).encode() + b"\n", raw_keys, data],
            fsync=True,
        )
        self._written.add(name)
