"""Vectors computed elsewhere (another framework, a GPU cluster, a closed API).

A matrix file (``.npy``, ``.npz``, ``.safetensors``) plus a text file with the sentence of
each row, one per line, in the same order. Sentences are looked up by exact text, then with
whitespace normalised.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import DataError, SentprobeError
from .base import Encoder


def _pick(arrays: dict[str, np.ndarray], key: str | None, path: Path) -> np.ndarray:
    if key is not None:
        if key not in arrays:
            raise DataError(path, None, f"no array {key!r}; it holds: {', '.join(arrays)}")
        return arrays[key]
    if len(arrays) != 1:
        raise DataError(
            path, None, f"holds {len(arrays)} arrays ({', '.join(arrays)}); choose one with key="
        )
    return next(iter(arrays.values()))


def load_matrix(path: str | Path, key: str | None = None) -> np.ndarray:
    """Load a 2-d float32 matrix from .npy, .npz (``key`` or the only array) or .safetensors."""
    path = Path(path)
    if not path.is_file():
        raise SentprobeError(f"{path}: no such file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            arr = np.load(path, allow_pickle=False)
        elif suffix == ".npz":
            with np.load(path, allow_pickle=False) as z:
                arr = _pick({k: z[k] for k in z.files}, key, path)
        elif suffix == ".safetensors":
            from safetensors.numpy import load_file

            arr = _pick(load_file(str(path)), key, path)
        else:
            raise DataError(path, None, "unknown matrix format; use .npy, .npz or .safetensors")
    except (ValueError, OSError) as e:  # truncated or not the format its name says
        raise DataError(path, None, f"cannot read matrix: {e}") from None
    if arr.ndim != 2:
        raise DataError(path, None, f"expected a 2-d matrix (sentences x dims), got {arr.shape}")
    if not np.issubdtype(arr.dtype, np.number):
        raise DataError(path, None, f"matrix has non-numeric dtype {arr.dtype}")
    return arr.astype(np.float32, copy=False)


def _normalise(sentence: str) -> str:
    return " ".join(sentence.split())


class PrecomputedEncoder(Encoder):
    """Look sentences up in a precomputed matrix; fails loudly on any sentence not in it."""

    batch_size = 100_000

    def __init__(
        self,
        matrix_path: str | Path,
        sentences_path: str | Path,
        key: str | None = None,
        name: str | None = None,
    ) -> None:
        self.matrix_path, self.sentences_path = Path(matrix_path), Path(sentences_path)
        self.name = name or self.matrix_path.stem
        self.matrix = load_matrix(self.matrix_path, key)
        if not self.sentences_path.is_file():
            raise SentprobeError(f"{self.sentences_path}: no such file")
        raw = self.sentences_path.read_bytes()
        try:
            sentences = raw.decode("utf-8").split("\n")
        except UnicodeDecodeError as e:
            line = raw[: e.start].count(b"\n") + 1
            raise DataError(self.sentences_path, line, "not valid UTF-8") from None
        if sentences and sentences[-1] == "":  # final newline
            sentences.pop()
        sentences = [s.removesuffix("\r") for s in sentences]
        if len(sentences) != len(self.matrix):
            raise DataError(
                self.matrix_path,
                None,
                f"has {len(self.matrix)} rows but {self.sentences_path} has "
                f"{len(sentences)} sentences; they must match line for row",
            )
        bad = ~np.isfinite(self.matrix).all(axis=1)
        if bad.any():
            first = int(np.argmax(bad))
            raise DataError(
                self.matrix_path,
                None,
                f"{int(bad.sum())} rows contain NaN or infinity (first: row {first}, "
                f"{self.sentences_path} line {first + 1})",
            )
        self._exact: dict[str, int] = {}
        self._loose: dict[str, int] = {}
        for i, s in enumerate(sentences):
            self._exact.setdefault(s, i)
            self._loose.setdefault(_normalise(s), i)
        h = hashlib.sha1(self.matrix_path.read_bytes())
        h.update(f"\0{key}\0".encode())
        h.update(raw)
        self._fingerprint = f"precomputed|{h.hexdigest()[:16]}"

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        rows, missing = [], []
        for s in sentences:
            i = self._exact.get(s)
            if i is None:
                i = self._loose.get(_normalise(s))
            if i is None:
                missing.append(s)
                i = 0
            rows.append(i)
        if missing:
            examples = "; ".join(repr(s) for s in missing[:3])
            raise SentprobeError(
                f"{len(missing)} of {len(sentences)} sentences are not in "
                f"{self.sentences_path}, e.g. {examples}"
            )
        return self.matrix[np.asarray(rows, dtype=np.int64)].reshape(len(rows), -1)
