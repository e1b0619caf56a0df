"""Per-item test predictions of one unit: what every statistic beyond a bare accuracy needs.

Confidence intervals resample test items, paired tests (McNemar) compare two rows item by
item, prediction agreement counts items two rows label alike: all need the gold label and the
prediction of every test item, not just their mean. They are kept as small integer arrays
indexing a label list, so a 10,000-item test set costs 20-40 KB in the results store.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Predictions:
    """Gold labels and predictions of a unit's test items, in the test split's order.

    ``gold`` and ``pred`` index ``labels``; ``groups`` is each test item's sub-type (from the
    test split's optional ``groups``), or None when the task has none; ``clusters`` is each
    test item's target word form where the split is lexical (the split's ``clusters``), which
    confidence intervals and paired tests resample instead of items.
    """

    labels: list[str]
    gold: np.ndarray
    pred: np.ndarray
    groups: list[str] | None = None
    clusters: list[str] | None = None

    def __post_init__(self) -> None:
        if self.gold.shape != self.pred.shape or self.gold.ndim != 1:
            raise ValueError("gold and pred must be 1-d arrays of the same length")
        for name in ("groups", "clusters"):
            values = getattr(self, name)
            if values is not None and len(values) != len(self.gold):
                raise ValueError(f"{name} must have one entry per test item")

    @classmethod
    def from_labels(
        cls,
        gold: Sequence[Any],
        pred: Sequence[Any],
        labels: Sequence[str] = (),
        groups: Sequence[str] | None = None,
        clusters: Sequence[str] | None = None,
    ) -> Predictions:
        """From label values; ``labels`` gives the order, labels not in it follow as seen."""
        gold_s, pred_s = [str(g) for g in gold], [str(p) for p in pred]
        names = list(dict.fromkeys([*map(str, labels), *gold_s, *pred_s]))
        index = {name: i for i, name in enumerate(names)}
        return cls(
            labels=names,
            gold=np.fromiter((index[g] for g in gold_s), dtype=np.int64, count=len(gold_s)),
            pred=np.fromiter((index[p] for p in pred_s), dtype=np.int64, count=len(pred_s)),
            groups=None if groups is None else [str(g) for g in groups],
            clusters=None if clusters is None else [str(c) for c in clusters],
        )

    def __len__(self) -> int:
        return len(self.gold)

    @property
    def correct(self) -> np.ndarray:
        """Whether each test item was predicted right (bool)."""
        return np.asarray(self.gold == self.pred)

    @property
    def accuracy(self) -> float:
        return float(self.correct.mean()) if len(self) else float("nan")

    @property
    def majority_share(self) -> float:
        """The largest class's share of the gold labels: what a constant guess can score."""
        return float(np.bincount(self.gold).max() / len(self)) if len(self) else float("nan")

    def p_above_majority(self) -> float:
        """How likely these many right items are from a probe no better than a constant guess
        (:func:`p_above_chance` of the hits against :attr:`majority_share`)."""
        return p_above_chance(int(self.correct.sum()), len(self), self.majority_share)

    def predicted_labels(self) -> np.ndarray:
        """The predictions as label strings (to compare rows with different label orders)."""
        return np.asarray(self.labels, dtype=object)[self.pred]

    def gold_labels(self) -> np.ndarray:
        return np.asarray(self.labels, dtype=object)[self.gold]


def p_above_chance(hits: int, n: int, chance: float) -> float:
    """Exact one-sided binomial p-value of ``hits`` right out of ``n`` against ``chance``, the
    largest class share (no prediction independent of the label beats it in expectation, so a
    small test set cannot pass for a reading of the vectors by noise); 1 when undefined."""
    if not n or chance >= 1:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(hits, n, chance, alternative="greater").pvalue)


def _dtype(n_labels: int) -> str:
    """The smallest little-endian unsigned type that holds every label index."""
    return "<u1" if n_labels <= 1 << 8 else "<u2" if n_labels <= 1 << 16 else "<u4"


def _names_and_codes(values: list[str] | None) -> tuple[str | None, bytes | None]:
    """Per-item strings as (distinct names JSON, each item's index into them)."""
    if values is None:
        return None, None
    names = list(dict.fromkeys(values))
    where = {name: i for i, name in enumerate(names)}
    codes = np.fromiter((where[v] for v in values), dtype=np.int64, count=len(values))
    return json.dumps(names, ensure_ascii=False), codes.astype(_dtype(len(names))).tobytes()


def _from_codes(names: str | None, codes: bytes | None, what: str) -> list[str] | None:
    """Inverse of :func:`_names_and_codes`."""
    if names is None or codes is None:
        return None
    kinds = json.loads(names)
    index = np.frombuffer(codes, dtype=_dtype(len(kinds)))
    if not isinstance(kinds, list) or (len(index) and index.max() >= len(kinds)):
        raise ValueError(f"a {what} index past the {len(kinds)} {what}s")
    return [kinds[i] for i in index]


def encode(
    predictions: Predictions,
) -> tuple[str, str, bytes, bytes, str | None, bytes | None, str | None, bytes | None]:
    """The SQL values of a predictions row: (labels JSON, dtype, gold, pred, group names
    JSON, group indices, cluster names JSON, cluster indices); group and cluster indices are
    ``<u1``/``<u2``/``<u4`` like the labels'."""
    dtype = _dtype(len(predictions.labels))
    return (
        json.dumps(predictions.labels, ensure_ascii=False),
        dtype,
        predictions.gold.astype(dtype).tobytes(),
        predictions.pred.astype(dtype).tobytes(),
        *_names_and_codes(predictions.groups),
        *_names_and_codes(predictions.clusters),
    )


def decode(
    labels: str,
    dtype: str,
    gold: bytes,
    pred: bytes,
    group_names: str | None,
    group_index: bytes | None,
    cluster_names: str | None = None,
    cluster_index: bytes | None = None,
) -> Predictions:
    """Inverse of :func:`encode`; a row that :func:`encode` cannot have written (a crafted
    or damaged store) is a ValueError saying what is wrong."""
    names = json.loads(labels)
    if not isinstance(names, list) or dtype not in ("<u1", "<u2", "<u4"):
        raise ValueError(f"labels must be a JSON list and dtype <u1, <u2 or <u4, got {dtype!r}")
    values = [np.frombuffer(b, dtype=dtype).astype(np.int64) for b in (gold, pred)]
    if any(len(v) and v.max() >= len(names) for v in values):
        raise ValueError(f"a label index past the {len(names)} labels")
    return Predictions(
        labels=names,
        gold=values[0],
        pred=values[1],
        groups=_from_codes(group_names, group_index, "group"),
        clusters=_from_codes(cluster_names, cluster_index, "cluster"),
    )
