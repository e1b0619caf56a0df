"""Supervised cross-lingual word-vector mapping: orthogonal Procrustes from a seed dictionary.

X-Probe (Ravishankar et al. 2019, §5.2) maps each target language's word vectors into the
English space with the supervised mode of VecMap before training the target-language sentence
encoder. What is implemented here is the orthogonal core of it:

1. both embedding matrices are normalised as VecMap's supervised mode does
   (``--normalize unit center unit``: rows to unit length, each dimension mean-centred over
   the vocabulary, rows to unit length again);
2. the orthogonal ``W`` minimising ``||X_d W - Z_d||_F`` over the dictionary pairs ``d`` is
   ``U V^T`` from the SVD ``X_d^T Z_d = U S V^T`` (Schönemann 1966), so the source vectors
   become ``X W`` in the (normalised) target space.

VecMap's supervised mode goes further (whitening, re-weighting by the singular values,
de-whitening: Artetxe et al. 2018); those steps are not orthogonal and are left out, as the
issue asks for the orthogonal mapping. Quality is measured as in VecMap's
``eval_translation.py``: precision@k of retrieving a gold translation of each held-out source
word among all target words, by cosine (or by CSLS, Conneau et al. 2018, when asked).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sentprobe.encoders.static import WordVectors, load_word_vectors
from sentprobe.errors import DataError, SentprobeError
from sentprobe.io import atomic_write_bytes, iter_lines

__all__ = [
    "NORMALIZE_STEPS",
    "MappingReport",
    "ProcrustesMapper",
    "WordVectors",
    "map_words",
    "normalize_embeddings",
    "read_dictionary",
    "read_vec",
    "translation_precision",
    "words_of",
    "write_vec",
]

#: VecMap's supervised-mode normalisation (``--normalize unit center unit``).
NORMALIZE_STEPS: tuple[str, ...] = ("unit", "center", "unit")


def read_vec(spec: str | Path, max_words: int | None = None) -> WordVectors:
    """Word vectors (a ``.vec``/word2vec/GloVe text file or a built-in set, read by
    ``encoders.static.load_word_vectors``: a malformed line is an error naming it), cut to
    the first ``max_words`` words of the file (files list frequent words first)."""
    vectors = load_word_vectors(spec)
    if max_words is None or max_words >= len(vectors.matrix):
        return vectors
    index = {w: i for w, i in vectors.index.items() if i < max_words}
    return WordVectors(vectors.matrix[:max_words], index, f"{vectors.id}[:{max_words}]")


def words_of(vectors: WordVectors) -> list[str]:
    """The words in row order."""
    words = [""] * len(vectors.matrix)
    for w, i in vectors.index.items():
        words[i] = w
    return words


def write_vec(path: str | Path, vectors: WordVectors) -> Path:
    """Write ``.vec`` text with a ``COUNT DIM`` header, atomically."""

    def chunks() -> Iterable[bytes]:
        yield f"{len(vectors.matrix)} {vectors.dim}\n".encode()
        for word, row in zip(words_of(vectors), vectors.matrix):
            yield (word + " " + " ".join(f"{v:.6f}" for v in row) + "\n").encode()

    return atomic_write_bytes(path, chunks())


def normalize_embeddings(matrix: np.ndarray, steps: Sequence[str] = NORMALIZE_STEPS) -> np.ndarray:
    """VecMap's normalisation actions in order: ``unit`` (rows to unit length), ``center``
    (subtract the mean vector of the vocabulary), ``none``. Returns a new float64 matrix."""
    out = np.array(matrix, dtype=np.float64)
    for step in steps:
        if step == "unit":
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out /= np.where(norms == 0, 1.0, norms)
        elif step == "center":
            out -= out.mean(axis=0, keepdims=True)
        elif step != "none":
            raise SentprobeError(f"unknown normalisation step {step!r}; use unit, center, none")
    return out


class ProcrustesMapper:
    """Orthogonal map from the source space into the target space, fitted on paired rows.

    scikit-learn style: ``fit(X, Z)`` with row ``i`` of ``X`` the translation of row ``i`` of
    ``Z`` learns ``W_`` (orthogonal, ``d x d``), ``transform(X)`` returns ``X @ W_``.
    """

    def fit(self, x: np.ndarray, z: np.ndarray) -> ProcrustesMapper:
        x, z = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
        if x.shape != z.shape or x.ndim != 2:
            raise SentprobeError(f"paired matrices differ in shape: {x.shape} vs {z.shape}")
        u, _, vt = np.linalg.svd(x.T @ z)
        self.W_ = u @ vt
        return self

    def transform(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x, dtype=np.float64) @ self.W_


def read_dictionary(path: str | Path) -> list[tuple[str, str, int]]:
    """``source_word target_word`` a line (space or tab separated, as MUSE/VecMap
    dictionaries): ``(source, target, line)`` triples. Blank lines are skipped."""
    pairs = []
    for lineno, line in iter_lines(path):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 2:
            raise DataError(path, lineno, f"{len(parts)} fields, expected 'source target'")
        pairs.append((parts[0], parts[1], lineno))
    if not pairs:
        raise DataError(path, None, "no word pairs")
    return pairs


def translation_precision(
    mapped: np.ndarray,
    target: np.ndarray,
    gold: dict[int, set[int]],
    ks: Sequence[int] = (1, 5),
    csls: int = 0,
    batch: int = 512,
) -> dict[int, float]:
    """Precision@k of retrieving a gold translation for each source row in ``gold``.

    ``mapped`` and ``target`` are length-normalised here, so the score is the cosine; with
    ``csls > 0`` it is CSLS with that neighbourhood (2 cos - r_src - r_tgt, where r is the
    mean cosine to the ``csls`` nearest neighbours in the other language).
    """
    if not gold:
        return {k: math.nan for k in ks}
    src = normalize_embeddings(mapped, ("unit",))
    tgt = normalize_embeddings(target, ("unit",))
    queries = sorted(gold)
    kmax = min(max(ks), len(tgt))
    r_tgt = np.zeros(len(tgt))
    if csls:
        n = min(csls, len(src))
        for i in range(0, len(tgt), batch):  # mean similarity of each target word's neighbours
            sims = tgt[i : i + batch] @ src.T
            r_tgt[i : i + batch] = np.mean(np.partition(sims, -n, axis=1)[:, -n:], axis=1)
    hits = {k: 0 for k in ks}
    for i in range(0, len(queries), batch):
        rows = queries[i : i + batch]
        sims = src[rows] @ tgt.T
        if csls:
            n = min(csls, len(tgt))
            r_src = np.mean(np.partition(sims, -n, axis=1)[:, -n:], axis=1)
            sims = 2 * sims - r_src[:, None] - r_tgt[None, :]
        top = np.argsort(-sims, axis=1, kind="stable")[:, :kmax]
        for row, ranked in zip(rows, top):
            for k in ks:
                if gold[row] & set(ranked[:k].tolist()):
                    hits[k] += 1
    return {k: hits[k] / len(queries) for k in ks}


@dataclass
class MappingReport:
    """What ``map_words`` did: dictionary coverage and held-out translation precision."""

    dictionary_pairs: int
    train_pairs: int
    test_words: int
    out_of_vocabulary: int
    precision: dict[int, float]
    retrieval: str


def map_words(
    source: WordVectors,
    target: WordVectors,
    dictionary: Sequence[tuple[str, str, int]],
    dictionary_path: str | Path = "<dictionary>",
    test_fraction: float = 0.2,
    seed: int = 0,
    normalize: Sequence[str] = NORMALIZE_STEPS,
    csls: int = 0,
) -> tuple[WordVectors, WordVectors, MappingReport]:
    """Map ``source`` into ``target``'s space; return (mapped source, normalised target, report).

    The dictionary's source words are split at random (``seed``) into training words and
    ``test_fraction`` held-out words, all translations of a word on the same side, so
    precision is measured on words the mapping never saw.
    """
    if source.dim != target.dim:
        raise SentprobeError(
            f"dimension mismatch: source vectors have {source.dim} dimensions, target vectors "
            f"{target.dim}; an orthogonal map needs the same number"
        )
    if not 0.0 <= test_fraction < 1.0:
        raise SentprobeError(f"test fraction must be in [0, 1), got {test_fraction}")
    usable = [
        (source.index[s], target.index[t])
        for s, t, _ in dictionary
        if s in source.index and t in target.index
    ]
    if not usable:
        raise SentprobeError(
            f"{dictionary_path}: none of its {len(dictionary)} pairs has its source word in the "
            f"source vectors and its target word in the target vectors (check the direction: "
            f"'source target' a line)"
        )
    words = sorted({s for s, _ in usable})
    rng = np.random.default_rng(seed)
    n_test = int(round(test_fraction * len(words)))
    if test_fraction > 0 and len(words) - n_test < 1:
        raise SentprobeError(
            f"{dictionary_path}: only {len(words)} usable source word(s); too few to hold out "
            f"{test_fraction:.0%} for testing"
        )
    test_words = set(rng.permutation(words)[:n_test].tolist())
    train = [(s, t) for s, t in usable if s not in test_words]
    x = normalize_embeddings(source.matrix, normalize)
    z = normalize_embeddings(target.matrix, normalize)
    src_rows, tgt_rows = (list(rows) for rows in zip(*train))
    mapper = ProcrustesMapper().fit(x[src_rows], z[tgt_rows])
    mapped = mapper.transform(x)
    gold: dict[int, set[int]] = {}
    for s, t in usable:
        if s in test_words:
            gold.setdefault(s, set()).add(t)
    report = MappingReport(
        dictionary_pairs=len(dictionary),
        train_pairs=len(train),
        test_words=len(gold),
        out_of_vocabulary=len(dictionary) - len(usable),
        precision=translation_precision(mapped, z, gold, csls=csls),
        retrieval=f"CSLS (k={csls})" if csls else "cosine nearest neighbour",
    )
    steps = "-".join(normalize)
    return (
        WordVectors(mapped.astype(np.float32), dict(source.index), f"{source.id}|mapped", "mapped"),
        WordVectors(z.astype(np.float32), dict(target.index), f"{target.id}|{steps}", "target"),
        report,
    )
