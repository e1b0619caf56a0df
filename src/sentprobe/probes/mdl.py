"""MDL probing (Voita & Titov, 2020): the online codelength of a task's training labels.

How many bits does it take to transmit the training labels to someone who has the sentence
vectors, by coding them block by block, each block with a probe trained on all the blocks
before it? Train is shuffled (the seed) and cut at ``portions`` percent of its size (the
paper's 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.25, 12.5, 25, 50, 100). The first block is sent with
the uniform code (log2 K bits per label); each later block at ``-log2 p(label | vector)``
bits per label. ``compression_ = uniform_codelength_ / codelength_``, where the uniform
codelength is n log2 K.

The block models are calibrated, so labels without signal cost what the uniform code costs
(the paper's recipe, early-stopped unregularised probes, is not available to a probe trained
to convergence, and sentprobe's earlier per-block choice among weakly penalised probes
charged wide encoders for confidently wrong early blocks: compression 0.66 on 256-d noise):

- each block model is a logistic regression with a Gaussian prior: precision ``alpha`` on
  every weight of the (z-scored) features and ``bias_prior`` on the bias (100: classes about
  balanced, as probing tasks are built), fixed in *sum*-loss units, so the prior's weight
  relative to the data shrinks as the prefix grows, as in Bayesian updating (the MAP estimate
  of the prefix);
- one such online code per ``alpha`` in ``priors``, plus the uniform code itself
  (``uniform=True``), are *experts*; the labels are sent with their Bayesian mixture (prior
  1/E each, weights updated by each block's codelength), which costs at most log2 E bits more
  than the best expert in hindsight: ``-log2 mean_e 2^-(bits of expert e)``, a valid code
  that the receiver can decode block by block.

The estimator also is a normal probe: ``fit`` trains the plain logistic probe on all of train
(L2 chosen on dev), and ``predict`` uses it, so the runner records its test accuracy as for
``logreg``. The codelengths are in ``report_`` (stored in the result's ``extra``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from numbers import Real
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning

from sentprobe.probes._common import encode_labels
from sentprobe.probes._lbfgs import batched_lbfgs
from sentprobe.probes._validation import (
    INT_POS,
    L2_GRID,
    REAL_NONNEG,
    SEED,
    Param,
    ProbeContract,
    check_params,
    validate_fit,
)
from sentprobe.probes.linear import (
    DEFAULT_L2,
    LogisticProbe,
    _logits,
    _Preconditioner,
    _Stacked,
)

#: Voita & Titov's block boundaries, in percent of the training set.
PORTIONS: tuple[float, ...] = (0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.25, 12.5, 25.0, 50.0, 100.0)
#: Prior precisions of the block models' weights (z-scored features, sum of the log-loss):
#: from nearly flat (a few items fit exactly) to a model that barely moves off its bias.
PRIORS: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0)


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


def mixture_bits(expert_bits: np.ndarray) -> np.ndarray:
    """Bits of each block under the Bayesian mixture of E experts: ``expert_bits`` (B, E) is
    each block's codelength under each expert; the prior is 1/E and each block is coded with
    the posterior after the blocks before it. The sum is ``-log2 mean_e 2^-(expert e's total)``."""
    bits = np.asarray(expert_bits, dtype=np.float64)
    prior = -np.cumsum(np.vstack([np.zeros((1, bits.shape[1])), bits[:-1]]), 0)  # log2 weights
    before = np.logaddexp2.reduce(prior, axis=1)
    after = np.logaddexp2.reduce(prior - bits, axis=1)
    return before - after


def online_codelength(first_block: int, n_classes: int, expert_bits: np.ndarray) -> float:
    """Bits of the online code: ``first_block`` labels at log2 K each, plus the later blocks
    under the mixture of the experts (``expert_bits`` (blocks, experts), see
    :func:`mixture_bits`)."""
    return first_block * math.log2(n_classes) + float(mixture_bits(expert_bits).sum())


def block_bits(log_probs: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Bits of a block under each of G models: ``log_probs`` (n, G, K) natural-log
    probabilities, ``y`` (n,) label indices -> (G,) ``-sum log2 p(y)``."""
    idx = y.view(-1, 1, 1).expand(-1, log_probs.shape[1], 1)
    return -log_probs.gather(2, idx).squeeze(2).double().sum(0) / math.log(2)


class _PriorObjective(_Stacked):
    """The stacked mean log-loss with the bias penalised too (``bias_l2``, mean-loss units)."""

    bias_l2: float = 0.0

    def __call__(self, Wf: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        loss, grad = super().__call__(Wf, idx)
        g, p = len(idx), self.Xa.shape[1]
        b = Wf.view(g, p, self.K)[:, -1]
        grad = grad.view(g, p, self.K)
        grad[:, -1] += self.bias_l2 * b
        return loss + 0.5 * self.bias_l2 * (b * b).sum(1), grad.view(g, p * self.K)


class MDLProbe(ProbeContract, ClassifierMixin, BaseEstimator):
    """Online-code MDL probe over ``portions``; accuracy from the logistic probe on all train.

    ``priors``: prior precisions of the block models' weights, one expert each; ``bias_prior``:
    of their bias; ``uniform``: the uniform code is an expert too; ``l2``: the final probe's
    grid (chosen on dev), which only decides the accuracy.
    """

    # 2: calibrated block models, mixture of experts; 3: logreg 4; 4: logreg 5; 5: logreg 6
    version: ClassVar[str] = "5"
    uses_seed: ClassVar[bool] = True  # the order of train, so the blocks, depend on the seed
    _params: ClassVar[dict[str, Param]] = {
        "portions": Param(Real, low=0, high=100, closed="right", grid=True),
        "priors": Param(Real, low=0, closed="neither", grid=True),
        "bias_prior": REAL_NONNEG,
        "uniform": Param(bool),
        "l2": L2_GRID,
        "max_iter": INT_POS,
        "tol": REAL_NONNEG,
        "random_state": SEED,
    }

    def __init__(
        self,
        portions: Sequence[float] = PORTIONS,
        priors: Sequence[float] = PRIORS,
        bias_prior: float = 100.0,
        uniform: bool = True,
        l2: float | Sequence[float] = DEFAULT_L2,
        max_iter: int = 1000,
        tol: float = 1e-4,
        random_state: int | None = 0,
    ) -> None:
        self.portions = portions
        self.priors = priors
        self.bias_prior = bias_prior
        self.uniform = uniform
        self.l2 = l2
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y, X_dev=None, y_dev=None) -> MDLProbe:
        check_params(self, self._params)
        Xt, y, _, _ = validate_fit(self, X, y, X_dev, y_dev)
        if len(np.unique(y)) < 2:  # no code to compare: every label costs 0 bits
            raise ValueError("MDLProbe needs at least two classes in y; got one class")
        seed = 0 if self.random_state is None else int(self.random_state)
        final = LogisticProbe(l2=self.l2, max_iter=self.max_iter, tol=self.tol, random_state=seed)
        final.fit(X, y, X_dev, y_dev)
        self.final_ = final
        self.classes_ = final.classes_
        self.selection_, self.best_params_ = final.selection_, final.best_params_
        self.best_score_, self.grid_scores_ = final.best_score_, final.grid_scores_
        self.n_iter_ = final.n_iter_

        order = torch.from_numpy(np.random.default_rng(seed).permutation(len(Xt)))
        Xs = final.scaler_(Xt)[order]  # vectors are known to the receiver: train's scaling
        ys = encode_labels(list(y), self.classes_)[order]
        K = len(self.classes_)
        priors = [float(a) for a in self.priors]
        ends = block_ends(len(Xs), self.portions)
        rows = []
        W = torch.zeros(len(priors), (Xs.shape[1] + 1) * K)
        for start, end in zip(ends[:-1], ends[1:]):
            W = self._block_models(Xs[:start], ys[:start], priors, K, W)
            with torch.inference_mode():
                logits = _logits(torch.cat([Xs[start:end], torch.ones(end - start, 1)], 1), W, K)
                row = block_bits(torch.log_softmax(logits, -1), ys[start:end]).tolist()
            if self.uniform:
                row.append((end - start) * math.log2(K))
            rows.append(row)
        expert_bits = np.array(rows, dtype=np.float64).reshape(len(rows), -1)
        self.block_ends_ = ends
        self.expert_bits_ = expert_bits
        self.block_bits_ = mixture_bits(expert_bits).tolist()
        self.codelength_ = online_codelength(ends[0], K, expert_bits)
        self.uniform_codelength_ = len(Xs) * math.log2(K)
        self.compression_ = self.uniform_codelength_ / self.codelength_
        return self

    def _block_models(
        self, X: torch.Tensor, y: torch.Tensor, priors: list[float], K: int, W0: torch.Tensor
    ) -> torch.Tensor:
        """The MAP weights (E, (d+1) K) of the prefix ``X, y`` under each prior, as one stacked
        L-BFGS run warm-started from the previous block's (same optimum, fewer steps)."""
        n = len(X)
        # sum-loss precisions are mean-loss strengths / n (the solver minimises the mean loss)
        fun = _PriorObjective(X, y, torch.tensor(priors, dtype=torch.float32) / n, K)
        fun.bias_l2 = self.bias_prior / n
        pre = _Preconditioner(fun.Xa, K).bind(fun.l2)
        W, iters = batched_lbfgs(fun, W0, max_iter=self.max_iter, gtol=self.tol, precond=pre)
        if int(iters.max()) >= self.max_iter:
            warnings.warn(
                f"MDLProbe: a block model reached max_iter={self.max_iter}; raise max_iter",
                ConvergenceWarning,
                stacklevel=3,
            )
        return W

    @property
    def report_(self) -> dict[str, Any]:
        """What the runner stores beside the accuracy (codelengths in bits)."""
        first = self.block_ends_[0] * math.log2(len(self.classes_))
        totals = first + self.expert_bits_.sum(0)
        names = [f"prior={a:g}" for a in self.priors] + (["uniform"] if self.uniform else [])
        return {
            "codelength": self.codelength_,
            "uniform_codelength": self.uniform_codelength_,
            "compression": self.compression_,
            "block_ends": list(self.block_ends_),
            "expert_codelengths": dict(zip(names, map(float, totals), strict=True)),
        }

    def _logits_of(self, X) -> np.ndarray:
        Xt = self._features(X)  # checks first: unfitted, there is no final_
        return self.final_._logits_of(Xt.numpy())
