"""MDL probing (Voita & Titov, 2020): the online codelength of a task's training labels.

How many bits does it take to transmit the training labels to someone who has the sentence
vectors, by coding them block by block, each block with a probe trained on all the blocks
before it? Train is shuffled (the seed) and cut at ``portions`` percent of its size (the
paper's 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.25, 12.5, 25, 50, 100). The first block is sent with
the uniform code (log2 K bits per label); each later block with the logistic probe
(:class:`~sentprobe.probes.linear.LogisticProbe`) trained on the blocks before it, at
``-log2 p(label | vector)`` bits per label. ``compression_ = uniform_codelength_ /
codelength_``, where the uniform codelength is n log2 K.

One deviation from the paper, because sentprobe's logistic probe has no early stopping (an
un-regularised probe trained to convergence on a 0.1% prefix is confidently wrong and would
cost many bits): each block model is the whole L2 grid trained as one stacked run, the block is
coded with the grid member that codes it shortest, and the choice costs log2(grid size) bits
per block, so the total is still the length of a valid code (a two-part code for the choice).

The estimator also is a normal probe: ``fit`` trains the plain logistic probe on all of train
(L2 chosen on dev), and ``predict`` uses it, so the runner records its test accuracy as for
``logreg``. The codelengths are in ``report_`` (stored in the result's ``extra``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin

from sentprobe.probes._common import check_xy, encode_labels
from sentprobe.probes.linear import DEFAULT_L2, LogisticProbe

#: Voita & Titov's block boundaries, in percent of the training set.
PORTIONS: tuple[float, ...] = (0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.25, 12.5, 25.0, 50.0, 100.0)


def block_ends(n: int, portions: Sequence[float] = PORTIONS) -> list[int]:
    """End index of each block for ``n`` items: at least 1, strictly increasing, last ``n``
    (portions that round to an end already taken are dropped, as on tiny training sets)."""
    ends: list[int] = []
    for p in portions:
        end = min(n, max(1, round(n * p / 100)))
        if not ends or end > ends[-1]:
            ends.append(end)
    if ends[-1] != n:
        ends.append(n)
    return ends


def online_codelength(
    first_block: int, n_classes: int, block_bits: Sequence[float], choices: int = 1
) -> float:
    """Bits of the online code: ``first_block`` labels at log2 K each, plus each later block's
    bits (``-sum log2 p`` under its model), plus log2(``choices``) per later block for naming
    the model that coded it."""
    return (
        first_block * math.log2(n_classes)
        + float(sum(block_bits))
        + len(block_bits) * math.log2(choices)
    )


def block_bits(log_probs: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Bits of a block under each of G models: ``log_probs`` (n, G, K) natural-log
    probabilities, ``y`` (n,) label indices -> (G,) ``-sum log2 p(y)``."""
    idx = y.view(-1, 1, 1).expand(-1, log_probs.shape[1], 1)
    return -log_probs.gather(2, idx).squeeze(2).double().sum(0) / math.log(2)


class MDLProbe(ClassifierMixin, BaseEstimator):
    """Online-code MDL probe over ``portions``; accuracy from the logistic probe on all train."""

    version: ClassVar[str] = "1"
    uses_seed: ClassVar[bool] = True  # the order of train, so the blocks, depend on the seed

    def __init__(
        self,
        portions: Sequence[float] = PORTIONS,
        l2: float | Sequence[float] = DEFAULT_L2,
        max_iter: int = 1000,
        tol: float = 1e-4,
        random_state: int | None = 0,
    ) -> None:
        self.portions = portions
        self.l2 = l2
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y, X_dev=None, y_dev=None) -> MDLProbe:
        seed = 0 if self.random_state is None else int(self.random_state)
        final = LogisticProbe(l2=self.l2, max_iter=self.max_iter, tol=self.tol, random_state=seed)
        final.fit(X, y, X_dev, y_dev)
        self.final_ = final
        self.classes_ = final.classes_
        self.selection_, self.best_params_ = final.selection_, final.best_params_
        self.best_score_, self.grid_scores_ = final.best_score_, final.grid_scores_
        self.n_iter_ = final.n_iter_

        Xt, _ = check_xy(X, y)
        order = torch.from_numpy(np.random.default_rng(seed).permutation(len(Xt)))
        Xs = final.scaler_(Xt)[order]  # vectors are known to the receiver: train's scaling
        ys = encode_labels(list(y), self.classes_)[order]
        K = len(self.classes_)
        configs = final._configs()
        ends = block_ends(len(Xs), self.portions)
        bits: list[float] = []
        for start, end in zip(ends[:-1], ends[1:]):
            fits = final._fit_grid(Xs[:start], ys[:start], None, None, configs, seed)
            with torch.inference_mode():
                logits = torch.stack([final._logits(f.params, Xs[start:end]) for f in fits], 1)
                bits.append(float(block_bits(torch.log_softmax(logits, -1), ys[start:end]).min()))
        self.block_ends_ = ends
        self.block_bits_ = bits
        self.codelength_ = online_codelength(ends[0], K, bits, choices=len(configs))
        self.uniform_codelength_ = len(Xs) * math.log2(K)
        self.compression_ = self.uniform_codelength_ / self.codelength_
        return self

    @property
    def report_(self) -> dict[str, Any]:
        """What the runner stores beside the accuracy (codelengths in bits)."""
        return {
            "codelength": self.codelength_,
            "uniform_codelength": self.uniform_codelength_,
            "compression": self.compression_,
            "block_ends": list(self.block_ends_),
        }

    def decision_function(self, X) -> np.ndarray:
        return self.final_.decision_function(X)

    def predict_proba(self, X) -> np.ndarray:
        return self.final_.predict_proba(X)

    def predict(self, X) -> np.ndarray:
        return self.final_.predict(X)
