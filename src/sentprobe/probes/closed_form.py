"""A closed-form probe: ridge regression onto the classes, every L2 strength from one
eigendecomposition, fit from sufficient statistics that can be accumulated batch by batch.

The probe sees the training split only through its *sufficient statistics*
(:class:`RidgeStats`): the number of items, the sum of the vectors, their Gram matrix
``XᵀX``, and each class's count and vector sum. They are summed batch by batch (``update``),
for many views at once (a ``(n, views, dim)`` batch), so a view never needs to be stored: a
sweep over every layer can keep these ``views x dim²`` numbers instead of ``views x items x
dim`` vectors (docs/probes.md).

The model is scikit-learn's ``RidgeClassifier`` on z-scored features (the same z-scoring as
the other probes, from the statistics): targets ``+1`` for the item's class and ``-1`` for
the others, least squares with an L2 penalty on the weights (not the intercept),
``min (1/n) ||T - Z W - b||² + l2 ||W||²`` (``l2 = alpha / n`` for scikit-learn's ``alpha``),
prediction the argmax over classes. With ``C = ZcᵀZc / n = V diag(e) Vᵀ`` and
``B = ZᵀT / n`` every strength's weights are ``V diag(1 / (e + l2)) Vᵀ B``: one
eigendecomposition per view gives the whole grid, and scores on dev for every strength cost
one ``n_dev x dim x dim`` product plus a small one per strength. The strength with the best
dev accuracy is kept (k-fold CV on train without dev), as for the other probes.

``device``: where the statistics are summed and the system solved (``cpu``, ``cuda`` or
``auto``: CUDA when available); sums and solves are float64 on every device, so the device
changes only the last bits of the weights.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

import numpy as np
import torch

from sentprobe.errors import SentprobeError
from sentprobe.probes._common import as_grid, encode_labels
from sentprobe.probes._validation import (
    FOLDS,
    L2_GRID,
    SEED,
    Param,
    check_params,
    validate_fit,
)
from sentprobe.probes.base import GridFit, GridProbe
from sentprobe.probes.devices import DEVICE, resolve_device

#: L2 strengths on the mean squared loss of z-scored features (eigenvalues of a correlation
#: matrix: their mean is 1); half-decades from 1e-4 to 1e2, all from one decomposition.
DEFAULT_L2: tuple[float, ...] = tuple(float(10.0**k) for k in np.arange(-4.0, 2.01, 0.5))


class RidgeStats:
    """Sufficient statistics of training vectors of one or many views, summed batch by batch.

    ``classes``: every label the items may have (sorted, as ``np.unique`` gives them).
    ``views``: None for ``(n, dim)`` batches, else the number of views of ``(n, views, dim)``
    batches. Vectors are shifted by the first batch's mean before they are summed (float64),
    so the covariance is not a small difference of large second moments.
    """

    def __init__(
        self, classes: Sequence[Any] | np.ndarray, views: int | None = None, device: str = "cpu"
    ) -> None:
        self.classes = np.unique(np.asarray(classes))
        if len(self.classes) == 0:
            raise SentprobeError("RidgeStats: no classes given")
        self.views = views
        self.device = torch.device(resolve_device(device))
        self.n = 0
        self.counts = torch.zeros(len(self.classes), dtype=torch.float64, device=self.device)
        self.shift: torch.Tensor | None = None  # (V, d)
        self.sum: torch.Tensor | None = None  # (V, d) of shifted vectors
        self.gram: torch.Tensor | None = None  # (V, d, d) of shifted vectors
        self.class_sums: torch.Tensor | None = None  # (V, K, d) of shifted vectors
        self.class_abs: torch.Tensor | None = None  # (V, K, d): sums of |x| (tied classes)

    @property
    def dim(self) -> int | None:
        return None if self.gram is None else int(self.gram.shape[-1])

    def nbytes(self, dim: int) -> int:
        """Bytes these statistics hold for vectors of ``dim`` dimensions."""
        return 8 * (self.views or 1) * (dim * dim + 3 * dim + 2 * len(self.classes) * dim)

    def update(self, X: Any, y: Sequence[Any]) -> RidgeStats:
        """Add a batch: ``X`` (n, dim), or (n, views, dim) with ``views``; ``y`` its labels."""
        Xt = torch.as_tensor(np.asarray(X) if not isinstance(X, torch.Tensor) else X)
        Xt = Xt.to(self.device, torch.float64)
        if self.views is None:
            Xt = Xt[:, None]
        if Xt.ndim != 3 or (self.views is not None and Xt.shape[1] != self.views):
            want = "(n, dim)" if self.views is None else f"(n, {self.views}, dim)"
            raise SentprobeError(f"RidgeStats: a batch of shape {tuple(X.shape)}, not {want}")
        labels = np.asarray(y)
        if len(labels) != len(Xt):
            raise SentprobeError(f"RidgeStats: {len(Xt)} vectors but {len(labels)} labels")
        codes = encode_labels(labels, self.classes)
        if (codes < 0).any():
            unknown = labels[(codes < 0).numpy()][0]
            raise SentprobeError(f"RidgeStats: label {unknown!r} is not one of the classes")
        if len(Xt) == 0:
            return self
        if self.shift is None:
            V, d = Xt.shape[1:]
            self.shift = Xt.mean(0)
            self.sum = Xt.new_zeros(V, d)
            self.gram = Xt.new_zeros(V, d, d)
            self.class_sums = Xt.new_zeros(V, len(self.classes), d)
            self.class_abs = Xt.new_zeros(V, len(self.classes), d)
        elif Xt.shape[2] != self.shift.shape[1]:
            raise SentprobeError(
                f"RidgeStats: vectors of {Xt.shape[2]} dimensions after {self.shift.shape[1]}"
            )
        assert self.sum is not None and self.gram is not None
        assert self.class_sums is not None and self.class_abs is not None
        codes = codes.to(self.device)
        Xc = (Xt - self.shift).transpose(0, 1)  # (V, n, d)
        self.n += len(Xt)
        self.sum += Xc.sum(1)
        self.gram.baddbmm_(Xc.transpose(1, 2), Xc)
        self.class_sums.index_add_(1, codes, Xc)
        self.class_abs.index_add_(1, codes, Xt.abs().transpose(0, 1))
        self.counts += torch.bincount(codes, minlength=len(self.classes)).double()
        return self

    @classmethod
    def of(cls, X: Any, y: Sequence[Any], device: str = "cpu") -> RidgeStats:
        """The statistics of one (n, dim) matrix."""
        return cls(np.unique(np.asarray(y)), device=device).update(X, y)


class RidgeSolution:
    """Every strength of ``l2`` for every view of ``stats``, from one batched decomposition.

    Holds, per view, the z-scoring (``mean``, ``scale``), the eigenvectors ``V`` and
    eigenvalues ``e`` of the z-scored covariance, ``R = Vᵀ B`` and the intercepts, so that
    the scores of any strength are ``(Z V) diag(1/(e + l2)) R + b``.
    """

    def __init__(self, stats: RidgeStats, l2: Sequence[float]) -> None:
        if stats.n == 0 or stats.gram is None:
            raise SentprobeError("ridge: no training items were accumulated")
        assert stats.sum is not None and stats.shift is not None and stats.class_sums is not None
        assert stats.class_abs is not None
        n, eps = stats.n, torch.finfo(torch.float64).eps
        self.classes = stats.classes
        self.device = stats.device
        self.l2 = torch.as_tensor(list(l2), dtype=torch.float64, device=self.device)
        mu = stats.sum / n  # mean of the shifted vectors
        cov = stats.gram / n - mu[:, :, None] * mu[:, None, :]
        var = torch.diagonal(cov, dim1=1, dim2=2).clamp_min(0)
        mean = stats.shift + mu
        # Standardizer's rule: a variance rounding alone could give keeps scale 1
        constant = var <= n * eps * var + (n * mean * eps) ** 2 + 4 * eps * mu * mu
        scale = torch.where(constant, torch.ones_like(var), var.sqrt())
        self.mean, self.scale = mean, scale
        corr = cov / scale[:, :, None] / scale[:, None, :]
        with _lapack_threads(corr):
            e, V = torch.linalg.eigh((corr + corr.transpose(1, 2)) / 2)
        self.e, self.V = e.clamp_min(0), V
        counts = stats.counts
        # class sums of the z-scored, centred vectors: (S_k - c_k mu) / scale
        zsums = (stats.class_sums - counts[None, :, None] * mu[:, None, :]) / scale[:, None, :]
        B = 2 * zsums.transpose(1, 2) / n  # (V, d, K): ZᵀT / n with T = 2 onehot - 1
        self.R = V.transpose(1, 2) @ B  # (V, d, K)
        self.intercept = 2 * counts / n - 1  # T's column means (Z is centred)
        self.tied = _tied(counts, stats.class_sums + stats.shift[:, None] * counts[:, None], stats)

    @property
    def n_views(self) -> int:
        return int(self.V.shape[0])

    def coef(self, view: int, i: int) -> torch.Tensor:
        """(d, K) weights of strength ``l2[i]`` on the z-scored features of ``view``."""
        return self.V[view] @ (self.R[view] / (self.e[view] + self.l2[i])[:, None])

    def scores(self, X: Any, view: int | None = None) -> torch.Tensor:
        """(n, strengths, K) scores of every strength; ``X`` (n, dim) of ``view``, or
        (n, views, dim) for all views (then (n, views, strengths, K))."""
        Xt = torch.as_tensor(X).to(self.device, torch.float64)
        if view is not None:
            return self._scores(Xt, view)
        return torch.stack([self._scores(Xt[:, v], v) for v in range(self.n_views)], 1)

    def _scores(self, X: torch.Tensor, v: int) -> torch.Tensor:
        P = ((X - self.mean[v]) / self.scale[v]) @ self.V[v]  # (n, d)
        inv = 1.0 / (self.e[v][None, :] + self.l2[:, None])  # (S, d)
        Z = torch.einsum("nd,sd,dk->nsk", P, inv, self.R[v]) + self.intercept
        return Z[..., self.tied]

    def predict_codes(self, X: Any, view: int | None = None) -> torch.Tensor:
        """Class indices predicted by every strength: (n, strengths) or (n, views, strengths)."""
        return self.scores(X, view).argmax(-1)


#: Decompositions up to this many dimensions run on one thread (CPU): LAPACK's threads gain
#: little there, and on a loaded machine they spin: a 384-d ``eigh`` measured 0.02 CPU
#: seconds on one thread and 0.1-4 s on two, under a load of 16-20 on 2 cores.
ONE_THREAD_DIM = 1024


@contextmanager
def _lapack_threads(matrix: torch.Tensor) -> Iterator[None]:
    """One torch thread while ``matrix`` (CPU, at most ``ONE_THREAD_DIM`` wide) is
    decomposed; the thread count is restored after."""
    before = torch.get_num_threads()
    small = matrix.device.type == "cpu" and matrix.shape[-1] <= ONE_THREAD_DIM
    if small and before > 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


def _tied(counts: torch.Tensor, sums: torch.Tensor, stats: RidgeStats) -> torch.Tensor:
    """For each class, the first class with the same count and vector sums in every view
    (itself if none): ridge, like logistic regression, sees a class only through these, so
    such classes score identically and the first is predicted (sentprobe.probes.linear)."""
    from sentprobe.probes.linear import first_of_ties

    assert stats.class_abs is not None
    K = len(counts)
    flat = sums.transpose(0, 1).reshape(K, -1).cpu().numpy()
    slack = (4 * np.finfo(np.float32).eps * stats.class_abs).transpose(0, 1).reshape(K, -1)
    first = first_of_ties(counts.cpu().numpy(), flat, slack.cpu().numpy())
    return torch.from_numpy(first).to(counts.device)


class RidgeProbe(GridProbe):
    """Ridge-classifier probe; ``l2`` a value or a grid, every strength from one
    eigendecomposition (module docstring), chosen on dev or by k-fold CV.

    ``accumulate(X, y, classes=...)`` adds a batch of training vectors to the probe's
    statistics without keeping them, ``fit_accumulated(X_dev, y_dev)`` then fits from them:
    the same model as ``fit`` on all the batches at once. ``fit_views`` fits one probe per
    view of a :class:`RidgeStats` of many views with one batched decomposition.
    """

    version: ClassVar[str] = "1"
    _seeded_training: ClassVar[bool] = False  # closed form: only CV folds use the seed
    _refit_iterations: ClassVar[bool] = False
    _params: ClassVar[dict[str, Param]] = {
        "l2": L2_GRID,
        "device": DEVICE,
        "cv": FOLDS,
        "random_state": SEED,
    }

    def __init__(
        self,
        l2: float | Sequence[float] = DEFAULT_L2,
        device: str = "cpu",
        cv: int = 5,
        random_state: int | None = 0,
    ) -> None:
        self.l2 = l2
        self.device = device
        self.cv = cv
        self.random_state = random_state

    def _configs(self) -> list[dict[str, Any]]:
        return as_grid(l2=self.l2)

    def _strengths(self) -> list[float]:
        return [float(c["l2"]) for c in self._configs()]

    # -- fitting ------------------------------------------------------------------------
    def fit(self, X, y, X_dev=None, y_dev=None) -> RidgeProbe:
        """Fit from the statistics of ``X``; the strength is chosen on ``(X_dev, y_dev)``,
        or by k-fold CV on train when there is no dev split and more than one strength."""
        if X_dev is None and len(self._configs()) > 1:
            return super().fit(X, y)  # CV: GridProbe's folds, each fold by _fit_grid
        check_params(self, self._params)
        Xt, y, Xd, y_dev = validate_fit(self, X, y, X_dev, y_dev)
        stats = RidgeStats(np.unique(y), device=self.device).update(Xt, y)
        return self._from_stats(stats, Xd, y_dev)

    def accumulate(self, X, y, classes: Sequence[Any] | None = None) -> RidgeProbe:
        """Add a batch of training vectors to the statistics (``classes``: every label,
        required on the first call); ``fit_accumulated`` fits from them."""
        stats = getattr(self, "stats_", None)
        if stats is None:
            if classes is None:
                raise ValueError("accumulate needs classes= on its first call")
            stats = self.stats_ = RidgeStats(classes, device=self.device)
        stats.update(np.asarray(X, dtype=np.float64), y)
        return self

    def fit_accumulated(self, X_dev=None, y_dev=None) -> RidgeProbe:
        """Fit from what ``accumulate`` added (the strength chosen on dev; without it the
        grid must hold one strength, since CV needs the items)."""
        check_params(self, self._params)
        stats = getattr(self, "stats_", None)
        if stats is None or stats.n == 0:
            raise ValueError("nothing was accumulated: call accumulate(X, y, classes=...) first")
        if X_dev is None and len(self._configs()) > 1:
            raise ValueError("several strengths and no dev split: give X_dev, y_dev")
        self.n_features_in_ = int(stats.dim or 0)
        Xd = None
        if X_dev is not None:
            Xd = torch.from_numpy(np.ascontiguousarray(X_dev, dtype=np.float32))
        return self._from_stats(stats, Xd, None if y_dev is None else np.asarray(y_dev))

    def _from_stats(self, stats: RidgeStats, Xd, y_dev) -> RidgeProbe:
        solution = RidgeSolution(stats, self._strengths())
        self._adopt(solution, 0, None if Xd is None else solution.predict_codes(Xd, 0), y_dev)
        return self

    def _adopt(self, solution: RidgeSolution, view: int, dev_codes, y_dev) -> None:
        """Become ``solution``'s model of ``view`` at the strength best on dev (the codes
        every strength predicts on dev), or its only strength without dev."""
        self.classes_ = solution.classes
        self.n_features_in_ = int(solution.V.shape[-1])
        configs = self._configs()
        if dev_codes is not None:
            truth = encode_labels(y_dev, self.classes_).to(dev_codes.device)
            scores = (dev_codes == truth[:, None]).double().mean(0).tolist()
            best = int(np.argmax(scores))
            self.selection_ = "dev"
        else:
            scores, best = [float("nan")], 0
            self.selection_ = "none"
        self.best_params_ = configs[best]
        self.best_score_ = scores[best]
        self.grid_scores_ = [(c, s) for c, s in zip(configs, scores)]
        self.params_ = _params(solution, view, best)
        self.n_iter_ = 1
        self.scaler_ = _Scaler(solution.mean[view], solution.scale[view])  # type: ignore[assignment]  # duck-typed Standardizer

    def _fit_grid(self, X, y, X_dev, y_dev, configs, seed, max_iter=None) -> list[GridFit]:
        """GridProbe's CV folds (``X`` already z-scored): every strength from one solve."""
        classes = np.arange(len(self.classes_))
        stats = RidgeStats(classes, device=self.device).update(X, y.clamp_min(0).numpy())
        solution = RidgeSolution(stats, [float(c["l2"]) for c in configs])
        acc: list[float | None] = [None] * len(configs)
        if X_dev is not None:
            codes = solution.predict_codes(X_dev, 0)
            truth = y_dev.to(codes.device)
            acc = (codes == truth[:, None]).double().mean(0).tolist()
        fits = []
        for i in range(len(configs)):
            params = _params(solution, 0, i)
            # the fold's own z-scoring of already z-scored features: folded into the weights
            W = params["coef"] / solution.scale[0].to("cpu", torch.float32)
            b = params["intercept"] - (W * solution.mean[0].to("cpu", torch.float32)).sum(1)
            fits.append(GridFit(acc[i], {**params, "coef": W, "intercept": b}, 1))
        return fits

    @classmethod
    def fit_views(
        cls, stats: RidgeStats, X_dev=None, y_dev=None, **params: Any
    ) -> list[RidgeProbe]:
        """One fitted probe per view of ``stats`` (a :class:`RidgeStats` of many views), all
        views decomposed in one batched solve; ``X_dev``: (n, views, dim) or None."""
        probe = cls(**params)
        check_params(probe, probe._params)
        solution = RidgeSolution(stats, probe._strengths())
        codes = None if X_dev is None else solution.predict_codes(X_dev)  # (n, V, S)
        out = []
        for v in range(solution.n_views):
            one = cls(**params)
            one._adopt(solution, v, None if codes is None else codes[:, v], y_dev)
            out.append(one)
        return out

    # -- scoring ------------------------------------------------------------------------
    def _logits(self, params, X):
        return (X @ params["coef"].T + params["intercept"])[:, params["tied"]]

    @property
    def coef_(self):
        return (self.params_["coef"] / self.scaler_.scale).numpy()

    @property
    def intercept_(self):
        shift = (self.params_["coef"] / self.scaler_.scale) @ self.scaler_.mean
        return (self.params_["intercept"] - shift).numpy()


class _Scaler:
    """The z-scoring of a model fit from statistics (as ``Standardizer``, float32)."""

    def __init__(self, mean: torch.Tensor, scale: torch.Tensor) -> None:
        self.mean = mean.to("cpu", torch.float32)
        self.scale = scale.to("cpu", torch.float32)

    def __call__(self, X: torch.Tensor) -> torch.Tensor:
        return (X - self.mean) / self.scale


def _params(solution: RidgeSolution, view: int, i: int) -> dict[str, torch.Tensor]:
    W = solution.coef(view, i)  # (d, K) on z-scored features
    return {  # on the CPU: a fitted probe predicts the same way whatever device fit it
        "coef": W.T.contiguous().to("cpu", torch.float32),
        "intercept": solution.intercept.to("cpu", torch.float32).clone(),
        "tied": solution.tied.cpu(),
    }
