"""The parallel pairs of a cross-lingual student, kept on disk so that memory does not grow with
the corpus (X-Probe maps with 2M pairs: their teacher vectors alone are 3 GB at 384-d).

* ``spool`` reads the corpus once (a ``ParallelFiles`` streams it from disk), tokenises both
  sides, and writes them, one sentence a line, into a temporary folder of the run, with
  the data digest and each target's length. The held-out pairs (a seeded permutation of all
  pairs, its first ``valid_size``) are the only sentences kept in memory.
* ``teacher_file`` encodes the teacher's vectors of every pair, in chunks of
  ``TEACHER_CHUNK`` sentences through the embedding cache, into ``teacher-<key>.f32`` in the
  run folder (float32, a row per pair in corpus order). ``key`` names the data digest and the
  teacher's fingerprint; the file is written under a temporary name and renamed once
  complete (and its size checked), so a killed encode is never trusted and a rerun reuses a
  complete file without encoding.
* ``Pairs.write_ids`` writes the student's token ids of the targets next to the spool (int32,
  with offsets).

Training batches read just their rows from these files (``Rows.take``, ``os.pread``: the
page cache holds the files, not the process). What memory still grows with the corpus are
index arrays: about 40 bytes a pair (the permutation, the lengths, the id offsets, an
epoch's batches).
"""

from __future__ import annotations

import hashlib
import os
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import numpy as np

from sentprobe.progress import tqdm

from ..encoders.base import Encoder
from ..encoders.cache import EmbeddingCache
from ..errors import SentprobeError
from ..io import open_partial, open_regular, open_text_writer, replace_file
from .vocab import Vocabulary

#: Teacher sentences encoded (and held) at a time.
TEACHER_CHUNK = 16384


def _lines(path: Path) -> Iterator[str]:
    with open_regular(path) as f:
        for line in f:
            yield line[:-1].decode("utf-8")


class Rows:
    """Rows of a flat int32/float32 file: row ``j`` is items ``offsets[j]:offsets[j + 1]``
    (or ``j * width`` onwards, ``width`` long); ``take`` reads only the rows asked for."""

    def __init__(
        self, path: Path, dtype: type, width: int = 0, offsets: np.ndarray | None = None
    ) -> None:
        self.path, self.dtype, self.width, self.offsets = path, np.dtype(dtype), width, offsets

    def take(self, rows: Iterable[int]) -> list[np.ndarray]:
        size = self.dtype.itemsize
        out = []
        with open_regular(self.path) as f:
            for j in rows:
                start, stop = (
                    (j * self.width, (j + 1) * self.width)
                    if self.offsets is None
                    else (int(self.offsets[j]), int(self.offsets[j + 1]))
                )
                raw = os.pread(f.fileno(), (stop - start) * size, start * size)
                out.append(np.frombuffer(raw, dtype=self.dtype))
        return out

    def matrix(self, rows: np.ndarray) -> np.ndarray:
        """Fixed-width rows as one ``(len(rows), width)`` array."""
        return np.stack(self.take(rows.tolist()))


@dataclass
class Pairs:
    """The tokenised corpus in ``folder`` (``source.txt``/``target.txt``, corpus order)."""

    folder: Path
    sha256: str
    lengths: np.ndarray  # target tokens of each pair
    valid: np.ndarray  # held-out pair indices, in draw order
    train: np.ndarray  # training pair indices
    valid_source: list[str]
    valid_target: list[str]

    def __len__(self) -> int:
        return len(self.lengths)

    def sources(self) -> Iterator[str]:
        return _lines(self.folder / "source.txt")

    def train_counts(self) -> Counter[str]:
        """Token counts of the training targets (for the student's vocabulary)."""
        held = np.zeros(len(self), dtype=bool)
        held[self.valid] = True
        counts: Counter[str] = Counter()
        for i, t in enumerate(_lines(self.folder / "target.txt")):
            if not held[i]:
                counts.update(t.split())
        return counts

    def write_ids(self, vocab: Vocabulary) -> Rows:
        """Every target's token ids, one file; its rows are the pairs."""
        path = self.folder / "target.ids"
        with open_partial(path, root=self.folder) as f:
            buffer = array("i")
            for t in _lines(self.folder / "target.txt"):
                buffer.extend(vocab.ids(t))
                if len(buffer) >= 1 << 16:
                    f.write(buffer.tobytes())
                    del buffer[:]
            f.write(buffer.tobytes())
        offsets = np.zeros(len(self) + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=offsets[1:])
        return Rows(path, np.int32, offsets=offsets)


def spool(
    pairs: Iterable[tuple[str, str]],
    folder: Path,
    source_text: Callable[[str], str],
    target_text: Callable[[str], str],
    *,
    valid_size: int,
    batch_size: int,
    seed: int,
) -> Pairs:
    """Tokenise ``pairs`` into ``folder``; pairs whose source is blank or target empty after
    tokenising are dropped. The digest is over ``source<TAB>target`` lines as kept."""
    digest = hashlib.sha256()
    lengths = array("i")
    source_path, target_path = folder / "source.txt", folder / "target.txt"
    with (
        open_text_writer(source_path, folder) as fs,
        open_text_writer(target_path, folder) as ft,
    ):
        for raw_source, raw_target in pairs:
            s, t = source_text(raw_source), target_text(raw_target)
            if not (s.strip() and t):
                continue
            digest.update(f"{s}\t{t}\n".encode())
            fs.write(s + "\n")
            ft.write(t + "\n")
            lengths.append(len(t.split()))
    n = len(lengths)
    if n < valid_size + batch_size:
        raise SentprobeError(
            f"{n} sentence pairs: too few for {valid_size} held-out pairs "
            f"and one batch of {batch_size}"
        )
    order = np.random.default_rng(seed).permutation(n)
    valid = order[:valid_size]
    where = {int(j): k for k, j in enumerate(valid)}
    valid_source, valid_target = [""] * valid_size, [""] * valid_size
    for i, (s, t) in enumerate(zip(_lines(source_path), _lines(target_path), strict=True)):
        if (k := where.get(i)) is not None:
            valid_source[k], valid_target[k] = s, t
    return Pairs(
        folder,
        digest.hexdigest(),
        np.frombuffer(lengths, dtype=np.int32),
        valid,
        order[valid_size:],
        valid_source,
        valid_target,
    )


def encode_teacher(teacher: Encoder, cache: EmbeddingCache, sentences: list[str]) -> np.ndarray:
    """The teacher's float32 vectors of ``sentences`` (through the cache), one per sentence."""
    y = cache.encode(teacher, sentences, progress=False)
    if y.ndim != 2:
        raise SentprobeError(
            f"teacher {teacher.name!r} gives {y.ndim - 1} views per sentence; pick one "
            "(e.g. --layer N for a Hugging Face model)"
        )
    return np.asarray(y, dtype=np.float32)


def teacher_file(
    pairs: Pairs,
    run_dir: Path,
    teacher: Encoder,
    cache: EmbeddingCache,
    dim: int,
    progress: bool,
) -> Rows:
    """The teacher's vectors of every pair in ``run_dir/teacher-<key>.f32`` (encoded unless a
    complete file is there), ``dim`` wide."""
    key = hashlib.sha256(f"{pairs.sha256}|{teacher.fingerprint}".encode()).hexdigest()[:16]
    path = run_dir / f"teacher-{key}.f32"
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise SentprobeError(
            f"{path}: {'a symbolic link' if path.is_symlink() else 'not a regular file'} "
            "where sentprobe keeps the teacher's vectors; refused, nothing read or written "
            "through it (remove it and run again)"
        )
    if not (path.is_file() and path.stat().st_size == len(pairs) * dim * 4):
        partial = path.with_name(path.name + ".partial")
        sources = pairs.sources()
        with (
            open_partial(partial, root=run_dir) as f,
            tqdm(total=len(pairs), desc="teacher", unit="sent", disable=not progress) as bar,
        ):
            while chunk := list(islice(sources, TEACHER_CHUNK)):
                y = encode_teacher(teacher, cache, chunk)
                if y.shape[1] != dim:
                    raise SentprobeError(
                        f"teacher {teacher.name!r} gave vectors of {y.shape[1]} and {dim} "
                        "dimensions"
                    )
                f.write(y.tobytes())
                bar.update(len(chunk))
            f.flush()
            os.fsync(f.fileno())
        replace_file(partial, path, run_dir)
    return Rows(path, np.float32, width=dim)
