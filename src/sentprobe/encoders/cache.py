"""On-disk embedding cache, so each (encoder, sentence) pair is encoded once across runs.

The files (layout, shard format, checksums, quarantine of damaged shards) are
:mod:`sentprobe.encoders.shards`; this module encodes what they do not hold.

Long because encoding what the shards lack (batching, flushing on a timer, views, the lock
against a second writer) shares the cache object's state; split, each part would reach into it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sys
import time
import traceback
import warnings
from abc import ABC, abstractmethod
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sentprobe.encoders.base import Encoder
from sentprobe.encoders.filehash import use_cache_root
from sentprobe.encoders.shards import (
    CACHE_ELSEWHERE,
    KEY_BYTES,
    META_FILE,
    CacheWarning,
    EncoderDir,
    _read_header,  # noqa: F401  (re-exported: tests read shard headers through this module)
    fingerprint_dirname,
    sentence_key,
)
from sentprobe.errors import DataError, SentprobeError
from sentprobe.io import check_writable_dir, inside, read_text
from sentprobe.progress import tqdm

#: Flush early for wide (e.g. all-layers) vectors: what is encoded but not yet written, and
#: one shard mapped while reading, stay below one layer of a 100k-sentence, 768-d matrix.
MAX_SHARD_BYTES = 64 * 2**20
#: Encoding time after which pending vectors are flushed even if the shard is not full, so a
#: killed run loses at most this much work (``$SENTPROBE_CACHE_FLUSH_SECONDS`` overrides).
FLUSH_SECONDS = 30.0
FLUSH_ENV = "SENTPROBE_CACHE_FLUSH_SECONDS"

__all__ = [
    "CACHE_DTYPES",
    "ArrayVectors",
    "CacheInfo",
    "CacheWarning",
    "EmbeddingCache",
    "ShardVectors",
    "Vectors",
    "fingerprint_dirname",
    "sentence_key",
]


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


def _encode_batches(
    encoder: Encoder, batches: Sequence[Sequence[str]]
) -> Generator[np.ndarray, None, None]:
    """``encoder.encode`` of each batch, checked: an exception from the encoder's own code
    becomes one SentprobeError naming the encoder, the exception and where it was raised.

    The encoder is given all of them at once (``Encoder.encode_batches``), so it can prepare
    batch i+1 while batch i is encoded; this generator's ``close`` closes it (and any thread
    it runs)."""
    results: Iterator[object] = iter(encoder.encode_batches(iter(batches)))
    try:
        for batch in batches:
            try:
                result = next(results)
            except (SentprobeError, KeyboardInterrupt, MemoryError):
                raise
            except Exception as e:  # StopIteration too: the encoder returned too few
                raise SentprobeError(
                    f"encoder {encoder.name!r} failed on a batch of {len(batch)} sentences: "
                    f"{type(e).__name__}: {e}{_where(e)}"
                ) from e
            yield _check_output(encoder, batch, result)
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()


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


class Vectors(ABC):
    """The embeddings of a list of sentences, shape ``(n, dim)`` or ``(n, views, dim)``, read
    a view at a time (``take``), so a caller probing layer after layer holds one layer."""

    @abstractmethod
    def take(self, rows: np.ndarray, view: int | None = None) -> np.ndarray:
        """The ``(len(rows), dim)`` vectors of sentences ``rows`` in ``view`` (None: a
        one-view encoder's only vectors)."""


class ArrayVectors(Vectors):
    """Vectors already in memory."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def take(self, rows: np.ndarray, view: int | None = None) -> np.ndarray:
        if self.array.ndim == 2:
            return self.array[rows]
        return self.array[rows, 0 if view is None else view]


class ShardVectors(Vectors):
    """Vectors in the cache's shards, memory-mapped when read (``EncoderDir.gather``); a
    half-precision cache's vectors are returned as float32."""

    def __init__(
        self,
        store: EncoderDir,
        codes: np.ndarray,
        n_views: int | None,
        width: int,
        dtype: str = "float32",
    ):
        self.store, self.codes, self.n_views, self.width = store, codes, n_views, width
        self.dtype = dtype

    def take(self, rows: np.ndarray, view: int | None = None) -> np.ndarray:
        if not self.n_views:
            columns = slice(None)
        else:
            dim = self.width // self.n_views
            v = 0 if view is None else view
            columns = slice(v * dim, (v + 1) * dim)
        return from_store(self.store.gather(self.codes[rows], columns), self.dtype)


log = logging.getLogger(__name__)

#: What the cache can store vectors as (``--cache-dtype``): float32 (the default, exact),
#: or half the bytes in float16 (10 bits of mantissa, range +-65504) or bfloat16 (7 bits,
#: float32's range). Probes always get float32.
CACHE_DTYPES = ("float32", "float16", "bfloat16")


def to_store(vectors: np.ndarray, dtype: str) -> np.ndarray:
    """``vectors`` as the cache stores them: ``dtype``, bfloat16 as its uint16 bits (rounded
    to nearest even, by PyTorch)."""
    if dtype == "bfloat16":
        import torch

        half = torch.from_numpy(np.ascontiguousarray(vectors, dtype=np.float32)).bfloat16()
        return half.view(torch.int16).numpy().view(np.uint16)
    return vectors.astype(dtype, copy=False)


def from_store(array: np.ndarray, dtype: str) -> np.ndarray:
    """Stored vectors back as float32 (exactly: every half value is a float32)."""
    if dtype == "bfloat16":
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array.astype(np.float32, copy=False) if dtype != "float32" else array


def _size(n: int) -> str:
    return f"{n / 1e9:,.2f} GB" if n >= 1e9 else f"{n / 1e6:,.1f} MB"


def check_cache_dtype(dtype: str | None) -> str:
    if dtype is None:
        return "float32"
    if dtype not in CACHE_DTYPES:
        raise SentprobeError(f"cache dtype must be one of {', '.join(CACHE_DTYPES)}, not {dtype!r}")
    return dtype


class EmbeddingCache:
    """Encode sentences through a cache keyed by ``(encoder.fingerprint, sentence)``.

    ``EmbeddingCache(None)`` stores nothing (``--no-cache``) but still deduplicates,
    length-sorts and batches. Encoded vectors are flushed to disk as a shard every
    ``shard_size`` sentences and at least every ``flush_seconds`` of encoding (default 30 s,
    or ``$SENTPROBE_CACHE_FLUSH_SECONDS``), so an interrupted or killed run keeps its work
    but for the last interval; an interrupted (not killed) run also saves that.
    """

    def __init__(
        self,
        root: str | Path | None,
        shard_size: int = 4096,
        flush_seconds: float | None = None,
        dtype: str | None = None,
    ) -> None:
        """``dtype``: what vectors are stored as (:data:`CACHE_DTYPES`); a half-precision
        cache is kept apart from the float32 one (its key is the encoder's fingerprint plus
        ``|cache=DTYPE``), and every vector a run probes has gone through it, on the first
        run as on later ones."""
        self.dtype = check_cache_dtype(dtype)
        self.root = None if root is None else Path(root)
        if self.root is not None and self.root.exists() and not self.root.is_dir():
            raise SentprobeError(f"{self.root}: embedding cache path is not a directory")
        use_cache_root(self.root)  # model file hashes are remembered here, not elsewhere
        self.shard_size, self.flush_seconds = shard_size, _flush_seconds(flush_seconds)
        self.last_encoded = 0
        self._dirs: dict[str, EncoderDir] = {}

    def check_writable(self) -> None:
        """Make the cache folder and check a shard can be written there, so a cache that
        cannot take vectors (a file in its path, a read-only folder) fails before any
        result is computed rather than at the first flush."""
        if self.root is not None:
            check_writable_dir(self.root, "embedding cache", CACHE_ELSEWHERE)
            log.info("embedding cache: %s", self.root)

    def key(self, encoder: Encoder) -> str:
        """The fingerprint the cache files ``encoder``'s vectors under."""
        fp = encoder.fingerprint
        return fp if self.dtype == "float32" else f"{fp}|cache={self.dtype}"

    def _round(self, vectors: np.ndarray) -> np.ndarray:
        """``vectors`` as they come back from this cache (rounded to its dtype)."""
        if self.dtype == "float32" or vectors.dtype != np.float32:
            return vectors
        return from_store(to_store(vectors, self.dtype), self.dtype)

    def _dir(self, fingerprint: str) -> EncoderDir | None:
        if self.root is None:
            return None
        if fingerprint not in self._dirs:
            # a folder of someone else's cache that links elsewhere is refused, not written
            path = inside(self.root, fingerprint_dirname(fingerprint))
            self._dirs[fingerprint] = EncoderDir(path, fingerprint)
        store = self._dirs[fingerprint]
        store.refresh()
        return store

    def encode(
        self, encoder: Encoder, sentences: Sequence[str], progress: bool | str = True
    ) -> np.ndarray:
        """Embeddings of ``sentences`` in order, encoding only those not cached yet."""
        sentences = list(sentences)
        self.last_encoded = 0
        store = self._dir(self.key(encoder))
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
            if out is not None:
                out = from_store(out, (store.meta or {}).get("dtype", "float32"))
            missing = missing_rows.tolist()
            n_views = (store.meta or {}).get("n_views")
            if out is not None and n_views:  # stored flattened; restore (n, views, dim)
                out = out.reshape(len(unique), n_views, -1)
        n, m = len(unique), len(missing)  # -v: the cache's hits and misses
        log.info("%s: %d of %d sentences cached, %d to encode", encoder.name, n - m, n, m)
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
        store: EncoderDir | None,
        unique: list[str],
        keys: list[bytes],
        missing: list[int],
        out: np.ndarray | None,
        progress: bool | str,
        keep: bool = True,
    ) -> np.ndarray | None:
        """Encode ``unique[missing]`` into shards; with ``keep`` also into ``out`` (allocated
        here when None), else only the unflushed vectors are ever held in memory."""
        encoder.prepare([unique[i] for i in missing])
        order = sorted(missing, key=lambda i: len(unique[i]))
        batch_size = max(1, int(encoder.batch_size))
        pending: list[int] = []
        buffered: list[np.ndarray] = []
        shape = None if out is None else out.shape[1:]
        last_flush = time.monotonic()

        def flush() -> None:
            nonlocal last_flush
            rows, parts = pending[:], buffered[:]
            pending.clear()  # first, so a failed write is not retried by the error handler
            buffered.clear()
            last_flush = time.monotonic()
            if store is not None and rows:
                vectors = np.concatenate(parts)
                meta = self._meta(encoder, vectors)
                stored = vectors if self.dtype == "float32" else to_store(vectors, self.dtype)
                store.write([keys[i] for i in rows], stored, meta)

        label = progress if isinstance(progress, str) else f"encoding ({encoder.name})"
        bar = tqdm(total=len(order), desc=label, unit="sent", disable=progress is False)
        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        stream = _encode_batches(encoder, [[unique[i] for i in b] for b in batches])
        try:
            for batch, vectors in zip(batches, stream, strict=True):
                if batch is batches[0] and store is not None:  # sized from the first batch
                    self._check_room(encoder, store, len(order), vectors, progress)
                if shape is None:
                    shape = vectors.shape[1:]
                vectors = self._round(vectors)
                if vectors.shape[1:] != shape:
                    raise SentprobeError(
                        f"encoder {encoder.name!r} returned vectors of shape {vectors.shape[1:]}"
                        f", but earlier (or cached) ones have shape {shape}"
                    )
                if keep:
                    if out is None:
                        out = np.empty((len(unique), *shape), dtype=vectors.dtype)
                    out[batch] = vectors
                pending.extend(batch)
                buffered.append(vectors)
                self.last_encoded += len(batch)
                bar.update(len(batch))
                if (
                    len(pending) >= self.shard_size
                    or len(pending) * vectors[0].nbytes >= MAX_SHARD_BYTES
                    or time.monotonic() - last_flush >= self.flush_seconds
                ):
                    flush()
        except BaseException:
            try:  # keep what was encoded before the failure
                flush()
            except Exception as e:  # the original error matters more
                warnings.warn(f"could not save partial embeddings: {e}", CacheWarning, stacklevel=2)
            raise
        finally:
            stream.close()
            bar.close()
        flush()
        return out

    def vectors(
        self, encoder: Encoder, sentences: Sequence[str], progress: bool | str = True
    ) -> Vectors:
        """The embeddings of ``sentences``, encoding only those not cached yet, as a
        :class:`Vectors` read one view at a time from memory-mapped shards.

        Unlike :meth:`encode` this never holds all of them in memory: what is encoded goes
        to shards as it comes (at most one shard's worth buffered), and ``take`` reads just
        the rows and view asked for. Without a cache directory (``--no-cache``) the vectors
        are necessarily kept in memory.
        """
        if self.root is None:
            return ArrayVectors(self.encode(encoder, sentences, progress))
        sentences = list(sentences)
        self.last_encoded = 0
        store = self._dir(self.key(encoder))
        assert store is not None
        positions: dict[str, int] = {}
        rows = np.fromiter(
            (positions.setdefault(s, len(positions)) for s in sentences),
            dtype=np.int64,
            count=len(sentences),
        )
        unique = list(positions)
        blake2b = hashlib.blake2b
        keys = [blake2b(s.encode(), digest_size=KEY_BYTES).digest() for s in unique]
        encoded = 0
        while True:
            codes = store.codes(keys)
            missing = np.flatnonzero(codes < 0).tolist()
            n, m = len(unique), len(missing)
            log.info("%s: %d of %d sentences cached, %d to encode", encoder.name, n - m, n, m)
            if missing:
                self.last_encoded = 0
                self._encode_missing(
                    encoder, store, unique, keys, missing, None, progress, keep=False
                )
                encoded += self.last_encoded
                store.refresh()
                codes = store.codes(keys)
                if (codes < 0).any():  # only if the shards vanished under us (cache cleared)
                    raise SentprobeError(f"{store.path}: encoded vectors were not found again")
            if store.verify(codes):  # else a damaged shard was dropped: encode its rows again
                break
        self.last_encoded = encoded
        if not unique:
            return ArrayVectors(np.zeros((0, 0), dtype=np.float32))
        meta = store.meta or {}
        return ShardVectors(
            store,
            codes[rows],
            meta.get("n_views"),
            int(meta["width"]),
            meta.get("dtype", "float32"),
        )

    def _meta(self, encoder: Encoder, out: np.ndarray) -> dict:
        views = encoder.views if out.ndim == 3 else None
        return {
            "format": 1,
            "fingerprint": self.key(encoder),
            "name": encoder.name,
            "dim": int(out.shape[-1]),
            "n_views": int(out.shape[1]) if out.ndim == 3 else None,
            "views": list(views) if views else None,
            "width": int(np.prod(out.shape[1:])),
            "dtype": self.dtype if self.dtype != "float32" else str(out.dtype),
        }

    def _check_room(
        self,
        encoder: Encoder,
        store: EncoderDir,
        n: int,
        first: np.ndarray,
        progress: bool | str,
    ) -> None:
        """State what the ``n`` vectors to encode will take on disk (from the first batch's
        shape, before the rest is encoded) and refuse, in one line, when the free space of
        the cache's disk cannot hold them."""
        itemsize = first.dtype.itemsize if self.dtype == "float32" else 2
        need = n * (int(np.prod(first.shape[1:])) * itemsize + KEY_BYTES)
        where = store.path.parent
        existing = where
        while not existing.exists() and existing != existing.parent:  # not made yet
            existing = existing.parent
        free = shutil.disk_usage(existing).free
        views = f" ({first.shape[1]} views)" if first.ndim == 3 else ""
        line = (
            f"embedding cache: {n:,} sentences x {int(np.prod(first.shape[1:])):,} values{views} "
            f"in {self.dtype} = {_size(need)} to write under {where} ({_size(free)} free)"
        )
        log.info(line)
        if progress is not False:
            tqdm.write(line, file=sys.stderr)  # stdout is the results table's
        if need > free:
            raise SentprobeError(
                f"{line}: the disk cannot hold it; free space, use --cache-dtype bfloat16 "
                "(half the bytes), --stream (no cache, --probe ridge) or another --cache-dir"
            )

    def _fingerprint_dirs(self) -> list[Path]:
        if self.root is None or not self.root.is_dir():
            return []
        return sorted(
            inside(self.root, p.name) for p in self.root.iterdir() if (p / META_FILE).is_file()
        )

    def info(self) -> list[CacheInfo]:
        """One entry per cached encoder: fingerprint, distinct sentences, bytes on disk."""
        result = []
        for path in self._fingerprint_dirs():
            try:
                meta = json.loads(read_text(inside(path, META_FILE)))
                fingerprint = meta["fingerprint"]
            except (OSError, ValueError, KeyError, TypeError, DataError):
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
            paths = [inside(self.root, fingerprint_dirname(fingerprint))]
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
