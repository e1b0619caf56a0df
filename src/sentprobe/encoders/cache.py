"""On-disk embedding cache, so each (encoder, sentence) pair is encoded once across runs.

Layout under ``root``::

    <slug>-<hash of fingerprint>/
        meta.json                  full fingerprint, dim, views, dtype (for humans and ``info``)
        <time_ns>-<random>.shard   append-only; never modified after it appears

A shard is written through ``sentprobe.io.atomic_write_bytes`` (a uniquely named temp file
``os.replace``d into place), so a
visible shard is always complete and two processes can fill the same cache (a sentence
stored twice is harmless). Each shard carries sha256 checksums of its keys and of its
vectors: truncation and damaged keys are caught when the directory is scanned, damaged
vectors when the shard is first read. A damaged shard is reported with a warning, renamed
to ``*.damaged`` and its sentences are encoded again; it is never silently used.

Shard format: the magic line ``SPSHARD1``, one JSON header line
(``n``, ``width``, ``dtype``, ``keys_sha256``, ``vectors_sha256``), ``n`` 16-byte keys
(blake2b of the UTF-8 sentence), then the ``(n, width)`` vectors in C order.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import time
import traceback
import uuid
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from sentprobe.encoders.base import Encoder
from sentprobe.errors import DataError, SentprobeError
from sentprobe.io import atomic_write_bytes

MAGIC = b"SPSHARD1\n"
KEY_BYTES = 16
ROW_BITS = 32
MAX_SHARD_BYTES = 256 * 2**20  # also flush early for wide (e.g. all-layers) vectors
SHARD_SUFFIX = ".shard"
META_FILE = "meta.json"
#: Encoding time after which pending vectors are flushed even if the shard is not full, so a
#: killed run loses at most this much work (``$SENTPROBE_CACHE_FLUSH_SECONDS`` overrides).
FLUSH_SECONDS = 30.0
FLUSH_ENV = "SENTPROBE_CACHE_FLUSH_SECONDS"


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


@dataclass(frozen=True)
class CacheInfo:
    """What one encoder's cache directory holds."""

    fingerprint: str
    sentences: int
    bytes: int
    dim: int | None
    views: list[str] | int | None
    dtype: str | None
    path: Path


class _DamagedShard(Exception):
    pass


def _flush_seconds(value: float | None) -> float:
    """``value``, else ``$SENTPROBE_CACHE_FLUSH_SECONDS``, else 30 s; must be > 0."""
    if value is None:
        raw = os.environ.get(FLUSH_ENV)
        if raw is None or not raw.strip():
            return FLUSH_SECONDS
        try:
            value = float(raw)
        except ValueError:
            raise SentprobeError(f"${FLUSH_ENV} must be a number of seconds, got {raw!r}") from None
        if not value > 0:
            raise SentprobeError(f"${FLUSH_ENV} must be > 0, got {raw!r}")
        return value
    if not value > 0:
        raise SentprobeError(f"flush_seconds must be > 0, got {value!r}")
    return float(value)


def _where(exc: BaseException) -> str:
    """``file.py, line 12`` of the innermost frame of ``exc``'s traceback ('' if none)."""
    frames = traceback.extract_tb(exc.__traceback__)
    return f" ({Path(frames[-1].filename).name}, line {frames[-1].lineno})" if frames else ""


@dataclass
class _Shard:
    path: Path
    n: int
    width: int
    dtype: np.dtype
    offset: int  # byte offset of the vectors
    vectors_sha256: str


def _read_header(path: Path) -> tuple[_Shard, list[bytes]]:
    """Read and check a shard's header and keys (cheap); raise _DamagedShard if broken."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            if f.read(len(MAGIC)) != MAGIC:
                raise _DamagedShard("not a shard file (bad magic bytes)")
            line = f.readline(4096)
            header = json.loads(line)
            n, width = int(header["n"]), int(header["width"])
            dtype = np.dtype(header["dtype"])
            raw_keys = f.read(n * KEY_BYTES)
            offset = f.tell()
    except _DamagedShard:
        raise
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise _DamagedShard(f"unreadable header ({e})") from None
    expected = offset + n * width * dtype.itemsize
    if len(raw_keys) != n * KEY_BYTES or size != expected:
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
    return np.frombuffer(data, dtype=shard.dtype).reshape(shard.n, shard.width)


class _EncoderDir:
    """The shards of one fingerprint, with an in-memory index key -> (shard, row)."""

    def __init__(self, path: Path, fingerprint: str) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self.meta: dict | None = None
        self.shards: list[_Shard | None] = []  # None: found damaged while reading
        self.index: dict[bytes, int] = {}  # key -> shard number << ROW_BITS | row
        self._seen: set[str] = set()
        self._load_meta()

    def _load_meta(self) -> None:
        meta_path = self.path / META_FILE
        if not meta_path.exists():
            return
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            _ = meta["fingerprint"], meta["width"], meta["dtype"]
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
            except _DamagedShard as e:
                self._quarantine(path, str(e))
                continue
            number = len(self.shards)
            self.shards.append(shard)
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
            os.replace(path, path.with_name(path.name + ".damaged"))

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
            raise SentprobeError(
                f"{self.path}: cannot write the embedding cache ({e.strerror or e}); free "
                "space or choose another --cache-dir / $SENTPROBE_CACHE (what was stored "
                "before is intact)"
            ) from None

    def _write(self, keys: Sequence[bytes], vectors: np.ndarray, meta: dict) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        if self.meta is None:
            self._load_meta()
        if self.meta is None:
            atomic_write_bytes(
                self.path / META_FILE, json.dumps(meta, indent=2).encode(), fsync=True
            )
            self.meta = meta
        vectors = np.ascontiguousarray(vectors.reshape(len(keys), -1), dtype=self.meta["dtype"])
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
            "dtype": str(vectors.dtype),
            "keys_sha256": hashlib.sha256(raw_keys).hexdigest(),
            "vectors_sha256": hashlib.sha256(data).hexdigest(),
        }
        name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}{SHARD_SUFFIX}"
        atomic_write_bytes(
            self.path / name,
            [MAGIC, json.dumps(header).encode() + b"\n", raw_keys, data],
            fsync=True,
        )


def _encode_batch(encoder: Encoder, batch: Sequence[str]) -> np.ndarray:
    """``encoder.encode(batch)``, checked: an exception from the encoder's own code becomes
    one SentprobeError naming the encoder, the exception and where it was raised."""
    try:
        result = encoder.encode(batch)
    except (SentprobeError, KeyboardInterrupt, MemoryError):
        raise
    except Exception as e:
        raise SentprobeError(
            f"encoder {encoder.name!r} failed on a batch of {len(batch)} sentences: "
            f"{type(e).__name__}: {e}{_where(e)}"
        ) from e
    return _check_output(encoder, batch, result)


def _check_output(encoder: Encoder, batch: Sequence[str], result: object) -> np.ndarray:
    try:
        array = np.asarray(result)
    except (TypeError, ValueError) as e:
        raise SentprobeError(
            f"encoder {encoder.name!r} returned {type(result).__name__}, not an array: {e}"
        ) from None
    if array.ndim not in (2, 3) or array.shape[0] != len(batch):
        raise SentprobeError(
            f"encoder {encoder.name!r} returned shape {array.shape} for {len(batch)} sentences; "
            "expected (n, dim) or (n, views, dim)"
        )
    if not np.issubdtype(array.dtype, np.floating):
        try:
            array = array.astype(np.float32)
        except (TypeError, ValueError) as e:
            raise SentprobeError(
                f"encoder {encoder.name!r} returned {array.dtype} values, not numbers: {e}"
            ) from None
    bad = ~np.isfinite(array.reshape(len(batch), -1)).all(axis=1)
    if bad.any():
        first = int(np.argmax(bad))
        raise SentprobeError(
            f"encoder {encoder.name!r} returned NaN or infinite values for {int(bad.sum())} of "
            f"{len(batch)} sentences (first: {batch[first][:60]!r})"
        )
    return array


class EmbeddingCache:
    """Encode sentences through a cache keyed by ``(encoder.fingerprint, sentence)``.

    ``EmbeddingCache(None)`` stores nothing (``--no-cache``) but still deduplicates,
    length-sorts and batches. Encoded vectors are flushed to disk as a shard every
    ``shard_size`` sentences and at least every ``flush_seconds`` of encoding (default 30 s,
    or ``$SENTPROBE_CACHE_FLUSH_SECONDS``), so an interrupted or killed run keeps its work
    but for the last interval; an interrupted (not killed) run also saves that.
    """

    def __init__(
        self, root: str | Path | None, shard_size: int = 4096, flush_seconds: float | None = None
    ) -> None:
        self.root = None if root is None else Path(root)
        if self.root is not None and self.root.exists() and not self.root.is_dir():
            raise SentprobeError(f"{self.root}: embedding cache path is not a directory")
        self.shard_size = shard_size
        self.flush_seconds = _flush_seconds(flush_seconds)
        self.last_encoded = 0
        self._dirs: dict[str, _EncoderDir] = {}

    def _dir(self, fingerprint: str) -> _EncoderDir | None:
        if self.root is None:
            return None
        if fingerprint not in self._dirs:
            path = self.root / fingerprint_dirname(fingerprint)
            self._dirs[fingerprint] = _EncoderDir(path, fingerprint)
        store = self._dirs[fingerprint]
        store.refresh()
        return store

    def encode(
        self, encoder: Encoder, sentences: Sequence[str], progress: bool | str = True
    ) -> np.ndarray:
        """Embeddings of ``sentences`` in order, encoding only those not cached yet."""
        sentences = list(sentences)
        self.last_encoded = 0
        fingerprint = encoder.fingerprint
        store = self._dir(fingerprint)
        positions: dict[str, int] = {}
        for s in sentences:
            positions.setdefault(s, len(positions))
        unique = list(positions)
        blake2b = hashlib.blake2b  # inlined sentence_key: this loop is the hot path
        keys = [blake2b(s.encode(), digest_size=KEY_BYTES).digest() for s in unique]

        out: np.ndarray | None = None
        missing = list(range(len(unique)))
        if store is not None:
            out, missing_rows = store.lookup(keys)
            missing = missing_rows.tolist()
            n_views = (store.meta or {}).get("n_views")
            if out is not None and n_views:  # stored flattened; restore (n, views, dim)
                out = out.reshape(len(unique), n_views, -1)
        if missing:
            out = self._encode_missing(encoder, store, unique, keys, missing, out, progress)
        if out is None:  # nothing requested
            return np.zeros((0, 0), dtype=np.float32)
        if len(unique) == len(sentences):  # no duplicates: already in request order
            return out
        return out[[positions[s] for s in sentences]]

    def _encode_missing(
        self,
        encoder: Encoder,
        store: _EncoderDir | None,
        unique: list[str],
        keys: list[bytes],
        missing: list[int],
        out: np.ndarray | None,
        progress: bool | str,
    ) -> np.ndarray:
        encoder.prepare([unique[i] for i in missing])
        order = sorted(missing, key=lambda i: len(unique[i]))
        batch_size = max(1, int(encoder.batch_size))
        pending: list[int] = []
        last_flush = time.monotonic()

        def flush() -> None:
            nonlocal last_flush
            rows = pending[:]
            pending.clear()  # first, so a failed write is not retried by the error handler
            last_flush = time.monotonic()
            if store is not None and rows:
                store.write([keys[i] for i in rows], out[rows], self._meta(encoder, out))

        label = progress if isinstance(progress, str) else f"encoding ({encoder.name})"
        bar = tqdm(total=len(order), desc=label, unit="sent", disable=progress is False)
        try:
            for start in range(0, len(order), batch_size):
                batch = order[start : start + batch_size]
                texts = [unique[i] for i in batch]
                vectors = _encode_batch(encoder, texts)
                if out is None:
                    out = np.empty((len(unique), *vectors.shape[1:]), dtype=vectors.dtype)
                if vectors.shape[1:] != out.shape[1:]:
                    raise SentprobeError(
                        f"encoder {encoder.name!r} returned vectors of shape {vectors.shape[1:]}"
                        f", but earlier (or cached) ones have shape {out.shape[1:]}"
                    )
                out[batch] = vectors
                row_bytes = out[0].nbytes
                pending.extend(batch)
                self.last_encoded += len(batch)
                bar.update(len(batch))
                if (
                    len(pending) >= self.shard_size
                    or len(pending) * row_bytes >= MAX_SHARD_BYTES
                    or time.monotonic() - last_flush >= self.flush_seconds
                ):
                    flush()
        except BaseException:
            try:  # keep what was encoded before the failure
                if out is not None:
                    flush()
            except Exception as e:  # the original error matters more
                warnings.warn(f"could not save partial embeddings: {e}", CacheWarning, stacklevel=2)
            raise
        finally:
            bar.close()
        flush()
        assert out is not None
        return out

    @staticmethod
    def _meta(encoder: Encoder, out: np.ndarray) -> dict:
        views = encoder.views if out.ndim == 3 else None
        return {
            "format": 1,
            "fingerprint": encoder.fingerprint,
            "name": encoder.name,
            "dim": int(out.shape[-1]),
            "n_views": int(out.shape[1]) if out.ndim == 3 else None,
            "views": list(views) if views else None,
            "width": int(np.prod(out.shape[1:])),
            "dtype": str(out.dtype),
        }

    def _fingerprint_dirs(self) -> list[Path]:
        if self.root is None or not self.root.is_dir():
            return []
        return sorted(p for p in self.root.iterdir() if (p / META_FILE).is_file())

    def info(self) -> list[CacheInfo]:
        """One entry per cached encoder: fingerprint, distinct sentences, bytes on disk."""
        result = []
        for path in self._fingerprint_dirs():
            try:
                meta = json.loads((path / META_FILE).read_text(encoding="utf-8"))
                fingerprint = meta["fingerprint"]
            except (OSError, ValueError, KeyError, TypeError):
                warnings.warn(f"{path / META_FILE}: unreadable", CacheWarning, stacklevel=2)
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", CacheWarning)
                store = self._dir(fingerprint)
            size = sum(f.stat().st_size for f in path.iterdir() if f.is_file())
            result.append(
                CacheInfo(
                    fingerprint=fingerprint,
                    sentences=len(store.index) if store else 0,
                    bytes=size,
                    dim=meta.get("dim"),
                    views=meta.get("views") or meta.get("n_views"),
                    dtype=meta.get("dtype"),
                    path=path,
                )
            )
        return result

    def clear(self, fingerprint: str | None = None) -> int:
        """Delete one encoder's cache (or all of them); return how many were removed."""
        if self.root is None:
            return 0
        if fingerprint is not None:
            paths = [self.root / fingerprint_dirname(fingerprint)]
            paths = [p for p in paths if p.is_dir()]
        else:
            paths = self._fingerprint_dirs()
        for path in paths:
            shutil.rmtree(path)
        if fingerprint is None:
            self._dirs.clear()
        else:
            self._dirs.pop(fingerprint, None)
        return len(paths)
