"""Multinomial logistic regression, the whole L2 grid trained as one stacked L-BFGS run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from sentprobe.probes._common import as_grid
from sentprobe.probes._lbfgs import batched_lbfgs
from sentprobe.probes.base import GridFit, GridProbe

#: L2 strengths (on z-scored features, mean loss): wide enough for 2 to 1000 classes.
DEFAULT_L2: tuple[float, ...] = (1e-5, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1)


class _Stacked:
    """Loss and gradient of G softmax regressions sharing the inputs (one matmul each way)."""

    def __init__(self, X: torch.Tensor, y: torch.Tensor, l2: torch.Tensor, n_classes: int) -> None:
        n = X.shape[0]
        self.Xa = torch.cat([X, torch.ones(n, 1)], 1).contiguous()
        self.XaT = self.Xa.T.contiguous()
        self.y = y.clamp_min(0)
        self.l2 = l2
        self.K = n_classes

    def __call__(self, Wf: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n, p = self.Xa.shape
        g, K = len(idx), self.K
        W = Wf.view(g, p, K)
        logp = torch.log_softmax(_logits(self.Xa, Wf, K), -1)
        yi = self.y.view(n, 1, 1).expand(n, g, 1)
        nll = -logp.gather(2, yi).squeeze(2).mean(0)
        lam = self.l2[idx]
        Wr = W[:, :-1]  # the bias row is not penalised
        loss = nll + 0.5 * lam * (Wr * Wr).sum((1, 2))
        P = logp.exp_()
        P.scatter_add_(2, yi, torch.full((n, g, 1), -1.0))
        P.div_(n)
        grad = (self.XaT @ P.view(n, g * K)).view(p, g, K).permute(1, 0, 2).contiguous()
        grad[:, :-1] += lam[:, None, None] * Wr
        return loss, grad.view(g, p * K)


def _logits(Xa: torch.Tensor, Wf: torch.Tensor, K: int) -> torch.Tensor:
    """(n, G, K) logits of G stacked models (flat weights (G, p*K)) in one matrix product."""
    g, p = Wf.shape[0], Xa.shape[1]
    return (Xa @ Wf.view(g, p, K).permute(1, 0, 2).reshape(p, g * K)).view(len(Xa), g, K)


def _accuracy(Xa: torch.Tensor, y: torch.Tensor, Wf: torch.Tensor, K: int) -> torch.Tensor:
    return (_logits(Xa, Wf, K).argmax(-1) == y[:, None]).float().mean(0)


class LogisticProbe(GridProbe):
    """Logistic-regression probe; ``l2`` may be one value or a grid chosen on dev / by CV.

    With a dev split, training also stops early for a strength whose dev accuracy has not
    improved for ``patience`` checks (every ``check_every`` iterations), and the best-on-dev
    weights are kept; the dev accuracy it reports is therefore a selection score, not an
    unbiased estimate. Grids with up to ``stack_limit`` classes x strengths are solved as one
    stacked run; larger ones (many classes) as a warm-started path from strong to weak L2,
    checking dev after every iteration and stopping after ``path_patience`` checks.
    """

    def __init__(
        self,
        l2: float | Sequence[float] = DEFAULT_L2,
        max_iter: int = 300,
        patience: int = 3,
        check_every: int = 5,
        path_patience: int = 2,
        stack_limit: int = 500,
        cv: int = 5,
        random_state: int | None = 0,
    ) -> None:
        self.l2 = l2
        self.max_iter = max_iter
        self.patience = patience
        self.check_every = check_every
        self.path_patience = path_patience
        self.stack_limit = stack_limit
        self.cv = cv
        self.random_state = random_state

    def _configs(self) -> list[dict[str, Any]]:
        return as_grid(l2=self.l2)

    def _fit_grid(self, X, y, X_dev, y_dev, configs, seed, max_iter=None) -> list[GridFit]:
        K = len(self.classes_)
        lam = torch.tensor([c["l2"] for c in configs], dtype=torch.float32)
        p = X.shape[1] + 1
        Xd = None if X_dev is None else torch.cat([X_dev, torch.ones(len(X_dev), 1)], 1)
        if K * len(configs) <= self.stack_limit:
            # Few classes: one stacked run over the whole grid keeps the BLAS busy.
            return self._solve(X, y, Xd, y_dev, lam, torch.zeros(len(configs), p * K), max_iter)
        # Many classes (e.g. WC's 1000): every grid point costs a full K-way product, so walk
        # the regularisation path from strong to weak, each solve warm-started from the last.
        order = sorted(range(len(configs)), key=lambda i: -configs[i]["l2"])
        fits: dict[int, GridFit] = {}
        w = torch.zeros(1, p * K)
        walked = 0  # iterations along the path so far: n_iter counts from zero, as a refit does
        for i in order:
            fit, w, ran = self._solve(X, y, Xd, y_dev, lam[i : i + 1], w, max_iter, path=True)
            fits[i] = GridFit(fit[0].dev_score, fit[0].params, walked + fit[0].n_iter)
            walked += ran
        return [fits[i] for i in range(len(configs))]

    def _solve(self, X, y, Xd, y_dev, lam, w0, max_iter, path=False):
        """Stacked L-BFGS over ``lam``; with dev data, keeps each problem's best-on-dev point.

        ``path``: one step of the warm-started path, which also returns the final weights and
        the number of iterations run.
        """
        K, p, G = len(self.classes_), X.shape[1] + 1, len(lam)
        fun = _Stacked(X, y, lam, K)
        best_acc = torch.full((G,), -1.0)
        best_w = w0.clone()
        best_it = torch.zeros(G, dtype=torch.long)
        stale = torch.zeros(G, dtype=torch.long)
        monitor = None
        # A warm-started path solve costs a K-way product per iteration: check dev every time.
        every, patience = (1, self.path_patience) if path else (self.check_every, self.patience)
        if Xd is not None:

            def monitor(W: torch.Tensor, idx: torch.Tensor, it: int) -> torch.Tensor:
                acc = _accuracy(Xd, y_dev, W, K)
                better = acc > best_acc[idx]
                best_acc[idx] = torch.where(better, acc, best_acc[idx])
                best_w[idx[better]] = W[better]
                best_it[idx[better]] = it
                stale[idx] = torch.where(better, 0, stale[idx] + 1)
                return stale[idx] >= patience

        W, iters = batched_lbfgs(
            fun, w0, max_iter=max_iter or self.max_iter, monitor=monitor, monitor_every=every
        )
        fits = []
        for i in range(G):
            if Xd is None:
                fits.append(GridFit(None, self._unpack(W[i], p, K), int(iters[i])))
                continue
            final_acc = float(_accuracy(Xd, y_dev, W[i : i + 1], K)[0])
            if final_acc >= best_acc[i]:  # the run ended between two checks, on a better point
                fits.append(GridFit(final_acc, self._unpack(W[i], p, K), int(iters[i])))
            else:
                fits.append(
                    GridFit(float(best_acc[i]), self._unpack(best_w[i], p, K), int(best_it[i]))
                )
        return (fits, W, int(iters.max())) if path else fits

    @staticmethod
    def _unpack(w: torch.Tensor, p: int, K: int) -> dict[str, torch.Tensor]:
        w = w.view(p, K)
        return {"coef": w[:-1].T.contiguous(), "intercept": w[-1].clone()}

    def _logits(self, params, X):
        return X @ params["coef"].T + params["intercept"]

    @property
    def coef_(self):
        return self.params_["coef"].numpy()

    @property
    def intercept_(self):
        return self.params_["intercept"].numpy()
