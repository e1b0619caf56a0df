"""Multinomial logistic regression, the whole L2 grid trained as one stacked L-BFGS run."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning

from sentprobe.probes._common import (
    as_grid,
    item_blocks,
    item_product,
    row_sums,
    single_threaded,
)
from sentprobe.probes._lbfgs import Preconditioner, batched_lbfgs
from sentprobe.probes._validation import (
    FOLDS,
    INT_POS,
    L2_GRID,
    REAL_NONNEG,
    SEED,
    Param,
)
from sentprobe.probes.base import GridFit, GridProbe
from sentprobe.probes.devices import DEVICE, resolve_device

#: L2 strengths (on z-scored features, mean loss): wide enough for 2 to 1000 classes.
DEFAULT_L2: tuple[float, ...] = (1e-5, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1)


class _Stacked:
    """Loss and gradient of G softmax regressions sharing the inputs (one matmul each way)."""

    def __init__(self, X: torch.Tensor, y: torch.Tensor, l2: torch.Tensor, n_classes: int) -> None:
        n = X.shape[0]
        self.Xa = torch.cat([X, torch.ones(n, 1, dtype=X.dtype, device=X.device)], 1).contiguous()
        self.blocks = item_blocks(self.Xa)  # the gradient's sums over items (item_product)
        self.y = y.clamp_min(0)
        self.l2 = l2
        self.K = n_classes

    def with_l2(self, l2: torch.Tensor) -> _Stacked:
        """The same inputs under other strengths (the data is shared, not copied)."""
        other = copy.copy(self)
        other.l2 = l2
        return other

    def __call__(self, Wf: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n, p = self.Xa.shape
        g, K = len(idx), self.K
        W = Wf.view(g, p, K)
        logp = torch.log_softmax(_logits(self.Xa, Wf, K), -1)
        yi = self.y.view(n, 1, 1).expand(n, g, 1)
        # The loss is summed in float64: L-BFGS's line search and stopping test compare losses
        # a few float32 ulps apart near the optimum, where float32 sums would decide them by
        # the rounding of the summation order (the machine's BLAS, the thread count). Every
        # sum over items or weights is taken in an order that does not follow the thread
        # count (row_sums, item_product), so neither does the L-BFGS path.
        nll = -row_sums(logp.gather(2, yi).squeeze(2).T, torch.float64) / n
        lam = self.l2[idx]
        Wr = W[:, :-1]  # the bias row is not penalised
        loss = nll + 0.5 * lam.double() * row_sums((Wr * Wr).reshape(g, -1), torch.float64)
        P = logp.exp_()
        P.scatter_add_(2, yi, torch.full((n, g, 1), -1.0, dtype=P.dtype, device=P.device))
        P.div_(n)
        grad = item_product(self.blocks, P.view(n, g * K))
        grad = grad.view(p, g, K).permute(1, 0, 2).contiguous()
        grad[:, :-1] += lam[:, None, None] * Wr
        return loss, grad.view(g, p * K)


class _Preconditioner:
    """Approximate inverse Hessians ``(Σ / K + λ I)^-1`` of the stacked problems, one per λ.

    ``Σ`` is the second-moment matrix of the inputs (bias column included). At W = 0 the
    Hessian of the mean cross-entropy is ``Σ ⊗ (I/K - 11ᵀ/K²)``, whose non-zero curvature is
    ``Σ / K`` in every class column, plus the penalty. Correlated embedding dimensions make
    ``Σ`` badly conditioned, which is what costs plain L-BFGS hundreds of iterations on
    few-class tasks; one eigendecomposition per fit lets each problem apply its own inverse
    with two ``p x p`` products per step.
    """

    def __init__(self, Xa: torch.Tensor, n_classes: int) -> None:
        second = item_product(item_blocks(Xa), Xa).double() / len(Xa)
        with single_threaded():  # LAPACK's result follows the thread count; p x p is small
            eig, V = torch.linalg.eigh(second)
        self.V = V.to(Xa.dtype)
        self.curvature = eig.clamp_min(0) / n_classes
        self.K = n_classes

    def bind(self, l2: torch.Tensor) -> Preconditioner:
        """The preconditioner of the problems penalised by ``l2`` (indexed as the stack)."""
        inv = (1.0 / (self.curvature[None, :] + l2.double()[:, None])).to(self.V.dtype)

        def apply(Q: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
            g, p = len(idx), self.V.shape[0]
            rotated = self.V.T @ Q.view(g, p, self.K)
            return (self.V @ (rotated * inv[idx][:, :, None])).reshape(g, p * self.K)

        return apply


def _logits(Xa: torch.Tensor, Wf: torch.Tensor, K: int) -> torch.Tensor:
    """(n, G, K) logits of G stacked models (flat weights (G, p*K)) in one matrix product."""
    g, p = Wf.shape[0], Xa.shape[1]
    return (Xa @ Wf.view(g, p, K).permute(1, 0, 2).reshape(p, g * K)).view(len(Xa), g, K)


def _accuracy(
    Xa: torch.Tensor, y: torch.Tensor, Wf: torch.Tensor, K: int, tied: torch.Tensor
) -> torch.Tensor:
    return (_logits(Xa, Wf, K)[..., tied].argmax(-1) == y[:, None]).float().mean(0)


def tied_classes(X: torch.Tensor, y: torch.Tensor, K: int) -> torch.Tensor:
    """For each class, the first class with its sufficient statistics (itself if none).

    Multinomial logistic regression sees a class only through its count and the sum of its
    feature vectors: two classes that agree in both get the same weights, and L-BFGS from zero
    keeps them equal, so their logits tie exactly. In float32 the tie is decided by rounding,
    which follows BLAS's summation order, so the machine and the thread count. A degenerate
    feature makes such classes common (Length on sample-en's WC: 200 words of 6 sentences
    each, 68 distinct (count, length sum) pairs), and the prediction then changed from one
    machine to the next. The probe gives tied classes the first one's logits, so argmax picks
    the first, as it does for any exact tie. Sums are compared up to the rounding of the
    z-scoring (``(x - mean) / scale`` in float32: a relative error of at most ``2 eps`` per
    value): classes with different sums of a real feature differ by far more.
    """
    y = y.clamp_min(0)
    counts = torch.bincount(y, minlength=K).numpy()
    sums = torch.zeros(K, X.shape[1], dtype=torch.float64).index_add_(0, y, X.double()).numpy()
    mags = torch.zeros(K, X.shape[1], dtype=torch.float64).index_add_(0, y, X.abs().double())
    slack = (4 * torch.finfo(X.dtype).eps * mags).numpy()
    return torch.from_numpy(first_of_ties(counts, sums, slack))


def first_of_ties(counts: np.ndarray, sums: np.ndarray, slack: np.ndarray) -> np.ndarray:
    """For each class, the first class with the same count and (up to ``slack``, per entry)
    the same ``sums`` (K, m): itself if none (:func:`tied_classes`)."""
    K = len(counts)
    rep = np.arange(K)
    order = np.lexsort((sums[:, 0], counts))  # ties are neighbours in this order
    for pos, k in enumerate(order):
        for j in order[pos - 1 :: -1] if pos else ():
            if counts[j] != counts[k] or sums[k, 0] - sums[j, 0] > slack[j, 0] + slack[k, 0]:
                break
            if np.all(np.abs(sums[k] - sums[j]) <= slack[j] + slack[k]):
                rep[k] = rep[j]
                break
    first = np.full(K, K)
    np.minimum.at(first, rep, np.arange(K))  # each group's smallest class index
    return first[rep].astype(np.int64)


class LogisticProbe(GridProbe):
    """Logistic-regression probe; ``l2`` may be one value or a grid chosen on dev / by CV.

    Every L2 strength is trained to convergence: L-BFGS runs until the largest entry of the
    gradient of the objective (mean cross-entropy + ``l2 / 2 * ||W||^2`` on z-scored features,
    bias not penalised) is below ``tol`` (scikit-learn's ``gtol``), its line search finds no
    decrease, or ``max_iter`` iterations are reached (then a ``ConvergenceWarning`` is issued).
    The loss is summed in float64 and no test compares loss changes of a few float32 ulps, so
    where each strength stops, hence its dev score and predictions, does not follow the
    rounding of another machine's kernels or thread count (docs/statistics.md). So
    ``best_params_["l2"]`` is the regulariser of the model that is scored, and
    ``best_score_`` is that model's dev accuracy. Grids with up to
    ``stack_limit`` classes x strengths are solved as one stacked run from zero; larger ones
    (many classes, e.g. WC) as a path from the strongest to the weakest strength, each solve
    warm-started from the previous solution (same optimum, fewer iterations). L-BFGS is
    preconditioned by ``(Σ/K + λI)^-1`` (:class:`_Preconditioner`): the same optimum again,
    in a tenth of the iterations when the features are correlated. ``device`` (``cpu``,
    ``cuda``, ``auto``): where L-BFGS runs; the same steps in float32 on either, and the
    fitted weights are kept on the CPU.
    """

    # 3: preconditioned L-BFGS (same objective, fewer steps); 4: tied classes (tied_classes);
    # 5: float64 loss sums, no stop on float32 loss changes (a stop the rounding decided);
    # 6: every sum in an order that does not follow the thread count
    version: ClassVar[str] = "6"
    _seeded_training: ClassVar[bool] = False  # L-BFGS from zero: only CV folds use the seed
    _refit_iterations: ClassVar[bool] = False  # trained to convergence: a CV refit needs no cap
    _params: ClassVar[dict[str, Param]] = {
        "l2": L2_GRID,
        "max_iter": INT_POS,
        "tol": REAL_NONNEG,
        "stack_limit": INT_POS,
        "device": DEVICE,
        "cv": FOLDS,
        "random_state": SEED,
    }

    def __init__(
        self,
        l2: float | Sequence[float] = DEFAULT_L2,
        max_iter: int = 1000,
        tol: float = 1e-4,
        stack_limit: int = 500,
        cv: int = 5,
        random_state: int | None = 0,
        device: str = "cpu",
    ) -> None:
        self.l2 = l2
        self.max_iter = max_iter
        self.tol = tol
        self.stack_limit = stack_limit
        self.device = device
        self.cv = cv
        self.random_state = random_state

    def _configs(self) -> list[dict[str, Any]]:
        return as_grid(l2=self.l2)

    def _fit_grid(self, X, y, X_dev, y_dev, configs, seed, max_iter=None) -> list[GridFit]:
        K = len(self.classes_)
        tied = tied_classes(X, y, K)  # on the CPU, before the data moves to the device
        device = resolve_device(getattr(self, "device", "cpu"))
        X, y, tied = X.to(device), y.to(device), tied.to(device)
        lam = torch.tensor([c["l2"] for c in configs], dtype=torch.float32, device=device)
        p = X.shape[1] + 1
        Xd = None
        if X_dev is not None:
            X_dev, y_dev = X_dev.to(device), y_dev.to(device)
            Xd = torch.cat([X_dev, torch.ones(len(X_dev), 1, device=device)], 1)
        fun = self._objective(X, y, lam, K)
        pre = _Preconditioner(fun.Xa, K)
        if K * len(configs) <= self.stack_limit:
            # Few classes: one stacked run over the whole grid keeps the BLAS busy.
            W, iters = self._solve(fun, torch.zeros(len(configs), p * K, device=device), pre)
            return [
                self._fit(W[i], int(iters[i]), Xd, y_dev, p, K, tied) for i in range(len(configs))
            ]
        # Many classes (e.g. WC's 1000): every grid point costs a full K-way product, so walk
        # the regularisation path from strong to weak, each solve warm-started from the last.
        order = sorted(range(len(configs)), key=lambda i: -configs[i]["l2"])
        fits: dict[int, GridFit] = {}
        w = torch.zeros(1, p * K, device=device)
        for i in order:
            w, iters = self._solve(fun.with_l2(lam[i : i + 1]), w, pre)
            fits[i] = self._fit(w[0], int(iters[0]), Xd, y_dev, p, K, tied)
        return [fits[i] for i in range(len(configs))]

    def _objective(self, X: torch.Tensor, y: torch.Tensor, l2: torch.Tensor, K: int) -> _Stacked:
        """The stacked loss (a subclass may penalise more, e.g. MDL's block models)."""
        return _Stacked(X, y, l2, K)

    def _solve(self, fun: _Stacked, w0, pre) -> tuple[torch.Tensor, torch.Tensor]:
        """Stacked, preconditioned L-BFGS over ``fun.l2`` from ``w0``, each to convergence."""
        return batched_lbfgs(
            fun, w0, max_iter=self.max_iter, gtol=self.tol, precond=pre.bind(fun.l2)
        )

    def _fit(self, w, n_iter, Xd, y_dev, p, K, tied) -> GridFit:
        if n_iter >= self.max_iter:
            warnings.warn(
                f"LogisticProbe: L-BFGS reached max_iter={self.max_iter} before the gradient "
                f"fell below tol={self.tol}; raise max_iter",
                ConvergenceWarning,
                stacklevel=4,
            )
        dev = None if Xd is None else float(_accuracy(Xd, y_dev, w[None], K, tied)[0])
        return GridFit(dev, self._unpack(w, p, K, tied), n_iter)

    @staticmethod
    def _unpack(w: torch.Tensor, p: int, K: int, tied: torch.Tensor) -> dict[str, torch.Tensor]:
        w = w.view(p, K).cpu()  # fitted weights live on the CPU, whatever device trained
        return {"coef": w[:-1].T.contiguous(), "intercept": w[-1].clone(), "tied": tied.cpu()}

    def _logits(self, params, X):
        return (X @ params["coef"].T + params["intercept"])[:, params["tied"]]

    @property
    def coef_(self):
        return self.params_["coef"].numpy()

    @property
    def intercept_(self):
        return self.params_["intercept"].numpy()
