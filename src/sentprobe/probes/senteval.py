"""SentEval's probing classifier, replicated (``--probe senteval``). Long because the model,
its training loop, SentEval's two validation schemes and the held-out selection without a
dev set are one replica: split apart, the parts SentEval ties together would drift.

The same model, training loop, early stopping and model selection as SentEval's
``tools/classifier.py`` (class ``MLP``) and ``tools/validation.py`` (``SplitClassifier``,
``KFoldClassifier``), on CPU:

- model: ``Linear(d, nhid) -> Dropout(p) -> Sigmoid -> Linear(nhid, K)`` (dropout *before*
  the sigmoid, as SentEval), or ``Linear(d, K)`` (logistic regression) when ``nhid == 0``;
  PyTorch's default ``nn.Linear`` initialisation; raw features (no scaling);
- loss: cross-entropy *summed* over the batch (SentEval sets ``size_average = False``, which
  PyTorch honoured when SentEval was written and ignores since 0.4.1); ``loss="mean"`` is
  what SentEval computes on PyTorch 0.4.1 and later, the batch mean, so every SentEval
  probing result published since ran with L2 ``batch_size`` times stronger relative to the
  data term (see :data:`PROTOCOLS` for the named presets);
- optimiser: Adam (lr 1e-3, betas 0.9/0.999, eps 1e-8), L2 as Adam ``weight_decay`` on every
  parameter, biases included; minibatches of 64 in a fresh ``np.random.permutation`` order
  each pass;
- early stopping: dev accuracy (dropout off) after every ``epoch_size`` (4) passes; a better
  score keeps a copy of the model; otherwise, if the non-improvement counter has reached
  ``tenacity`` (5) training stops, and the counter is incremented. As in SentEval the counter
  is **never reset** on improvement, so training ends at the 6th non-improving check overall,
  not after 6 in a row; at most ``max_epoch`` (200) passes (checks while passes <= 200);
- selection: dev accuracy in percent rounded to 2 decimals, first best in grid order; the best
  configuration is retrained from scratch with the same seed and scored on test. Without a
  dev split and with ``kfold`` set (as ``--probe senteval`` sets it): stratified k-fold (5)
  CV on train, each fold's held-out part serving as the early-stopping and scoring set,
  the mean rounded as above; then the best is retrained on train with a random 5% of it
  held out for early stopping (``validation_split=0.05``).

Randomness follows SentEval's per-configuration reseeding: every configuration starts from
``torch.manual_seed(seed)`` (initialisation, then dropout masks, in that order) and
``np.random.seed(seed)`` (the 5% split, then one permutation per pass). So configurations
with the same ``nhid`` start from the same weights, all see the same minibatch order, and a
configuration trained inside the grid equals the same configuration trained alone (up to
float rounding). The grid is trained side by side for speed: one flat parameter vector and
Adam state for all configurations, one forward/backward per minibatch; per configuration the
arithmetic is SentEval's. Deviations: CPU only (SentEval: CUDA, whose dropout stream differs);
a dev/test label unseen in train counts as wrong (SentEval: KeyError).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.base import BaseEstimator, ClassifierMixin

from sentprobe.probes._common import (
    as_grid,
    encode_labels,
    holdout_split,
    probe_threads,
    stratified_folds,
)
from sentprobe.probes._validation import (
    DROPOUT_GRID,
    FOLDS_OR_NONE,
    INT_POS,
    L2_GRID,
    REAL_POS,
    SEED,
    Param,
    ProbeContract,
    check_params,
    validate_fit,
)

#: the paper's grid (Conneau et al. 2018, appendix) with SentEval's L2 values (validation.py)
SENTEVAL_NHID: tuple[int, ...] = (50, 100, 200)
SENTEVAL_DROPOUT: tuple[float, ...] = (0.0, 0.1, 0.2)
SENTEVAL_L2: tuple[float, ...] = (1e-5, 1e-4, 1e-3, 1e-2)
_BETAS, _EPS = (0.9, 0.999), 1e-8


def linear_init(n_out: int, n_in: int, gen: torch.Generator) -> list[torch.Tensor]:
    """``nn.Linear(n_in, n_out)``'s default weight and bias, drawn from ``gen`` in its order."""
    w = torch.empty(n_out, n_in)
    torch.nn.init.kaiming_uniform_(w, a=math.sqrt(5), generator=gen)
    bound = 1 / math.sqrt(n_in) if n_in > 0 else 0.0
    b = torch.empty(n_out)
    torch.nn.init.uniform_(b, -bound, bound, generator=gen)
    return [w, b]


@dataclass
class _Fit:
    dev_score: float
    params: list[torch.Tensor]  # [W1, b1] (logistic) or [W1, b1, W2, b2], nn.Linear layout
    epochs: int  # passes over train when the kept model was reached


class _Grid:
    """Configurations trained side by side; ``keep`` drops stopped ones from the batch.

    Layout of the flat vectors (parameters, Adam moments, weight decay): the first-layer
    weights of all members as one ``(R, d)`` matrix (``nhid`` rows per MLP member, ``K`` rows
    per logistic member), their biases ``(R,)``, then per hidden size the members' output
    weights ``(g, K, nhid)`` and biases ``(g, K)``. Members are grouped by hidden size.
    """

    def __init__(self, d: int, K: int, configs: list[dict[str, Any]], seed: int) -> None:
        self.d, self.K, self.configs = d, K, configs
        self.params: dict[int, list[torch.Tensor]] = {}
        self.gens: dict[int, torch.Generator] = {}
        for i, c in enumerate(configs):
            gen = torch.Generator().manual_seed(seed)  # SentEval: torch.manual_seed per config
            h = int(c["nhid"])
            first = linear_init(h or K, d, gen)
            self.params[i] = first + (linear_init(K, h, gen) if h else [])
            self.gens[i] = gen
        self.m = {i: [torch.zeros_like(t) for t in p] for i, p in self.params.items()}
        self.v = {i: [torch.zeros_like(t) for t in p] for i, p in self.params.items()}
        self.step = 0
        self._pack(list(range(len(configs))))

    # -- layout ---------------------------------------------------------------------------
    def _pack(self, members: list[int]) -> None:
        """Lay out ``members`` (config indices) in flat vectors."""
        self.order = sorted(members, key=lambda i: (int(self.configs[i]["nhid"]), i))
        self.rows = [int(self.configs[i]["nhid"]) or self.K for i in self.order]
        self.groups: list[tuple[int, list[int]]] = []  # (nhid, positions in order)
        for pos, i in enumerate(self.order):
            h = int(self.configs[i]["nhid"])
            if not self.groups or self.groups[-1][0] != h:
                self.groups.append((h, []))
            self.groups[-1][1].append(pos)

        def flat(store: dict[int, list[torch.Tensor]]) -> torch.Tensor:
            parts = [store[i][0].reshape(-1) for i in self.order]
            parts += [store[i][1] for i in self.order]
            for h, pos in self.groups:
                if h:
                    parts += [store[self.order[p]][2].reshape(-1) for p in pos]
                    parts += [store[self.order[p]][3] for p in pos]
            return torch.cat(parts).contiguous()

        self.flat, self.m_flat, self.v_flat = flat(self.params), flat(self.m), flat(self.v)
        wd = {i: [torch.full_like(t, float(self.configs[i]["l2"])) for t in self.params[i]]
              for i in self.order}  # fmt: skip
        self.wd = flat(wd)
        self.scratch = torch.empty_like(self.flat)
        self.drop_members = [
            (pos, i) for pos, i in enumerate(self.order) if float(self._dropout(i)) > 0
        ]
        self.row_start = np.concatenate([[0], np.cumsum(self.rows)]).tolist()

    def _dropout(self, i: int) -> float:
        return float(self.configs[i]["dropout"]) if int(self.configs[i]["nhid"]) else 0.0

    def _views(
        self, flat: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, list[tuple[torch.Tensor, torch.Tensor] | None]]:
        """W1, b1 and, per group, its (W2, b2) (None for groups without a hidden layer)."""
        R, d, K = sum(self.rows), self.d, self.K
        W1 = flat[: R * d].view(R, d)
        b1 = flat[R * d : R * d + R]
        off = R * d + R
        out: list[tuple[torch.Tensor, torch.Tensor] | None] = []
        for h, pos in self.groups:
            if h:
                g = len(pos)
                W2 = flat[off : off + g * K * h].view(g, K, h)
                off += g * K * h
                b2 = flat[off : off + g * K].view(g, K)
                off += g * K
                out.append((W2, b2))
            else:
                out.append(None)
        return W1, b1, out

    def _unpack(self, flat: torch.Tensor) -> dict[int, list[torch.Tensor]]:
        W1, b1, outs = self._views(flat)
        res: dict[int, list[torch.Tensor]] = {}
        for (_, pos), out in zip(self.groups, outs):
            for k, p in enumerate(pos):
                r0, r1 = self.row_start[p], self.row_start[p + 1]
                ts = [W1[r0:r1].clone(), b1[r0:r1].clone()]
                if out is not None:
                    ts += [out[0][k].clone(), out[1][k].clone()]
                res[self.order[p]] = ts
        return res

    def keep(self, members: list[int]) -> None:
        self.params, self.m, self.v = (
            self._unpack(self.flat),
            self._unpack(self.m_flat),
            self._unpack(self.v_flat),
        )
        self._pack(members)

    def member_params(self) -> dict[int, list[torch.Tensor]]:
        return self._unpack(self.flat)

    # -- training -------------------------------------------------------------------------
    def logits(self, flat: torch.Tensor, X: torch.Tensor, train: bool) -> torch.Tensor:
        """(members, n, K) in ``self.order``."""
        return self._logits(*self._views(flat), X, train)

    def _logits(
        self,
        W1: torch.Tensor,
        b1: torch.Tensor,
        outs: list[tuple[torch.Tensor, torch.Tensor] | None],
        X: torch.Tensor,
        train: bool,
    ) -> torch.Tensor:
        Z = F.linear(X, W1, b1)
        if train and self.drop_members:
            mask = torch.ones(len(X), Z.shape[1])
            for pos, i in self.drop_members:
                p = self._dropout(i)
                noise = torch.empty(len(X), self.rows[pos]).bernoulli_(
                    1 - p, generator=self.gens[i]
                )
                mask[:, self.row_start[pos] : self.row_start[pos + 1]] = noise.div_(1 - p)
            Z = Z * mask
        n, res = len(X), []
        for (h, group), out in zip(self.groups, outs):
            r0, r1 = self.row_start[group[0]], self.row_start[group[-1] + 1]
            block = Z[:, r0:r1]
            if out is None:
                res.append(block.reshape(n, len(group), self.K).transpose(0, 1))
            else:
                S = torch.sigmoid(block).reshape(n, len(group), h).transpose(0, 1)
                res.append(torch.baddbmm(out[1][:, None, :], S, out[0].transpose(1, 2)))
        return torch.cat(res, 0)

    def adam_step(self, X: torch.Tensor, y: torch.Tensor, lr: float, mean: bool = False) -> None:
        # Each part of the flat vector is its own autograd leaf (sharing its storage): the
        # gradient of views of one leaf would be scattered into a full-size zero tensor per
        # view. Adam then runs per part, in place, with one scratch buffer: no full-size
        # temporaries (each would be a fresh allocation of the size of all parameters).
        # Per element the operations are those on the whole vector, so the result is the
        # same bit for bit (tests/probes/test_senteval.py).
        W1, bias1, outs = self._views(self.flat)
        leaves = [W1, bias1] + [t for out in outs if out is not None for t in out]
        leaves = [t.detach().requires_grad_(True) for t in leaves]
        it = iter(leaves[2:])
        pairs = [None if out is None else (next(it), next(it)) for out in outs]
        Z = self._logits(leaves[0], leaves[1], pairs, X, train=True)
        G = Z.shape[0]
        loss = F.cross_entropy(Z.reshape(-1, self.K), y.repeat(G), reduction="sum")
        if mean:  # each configuration's batch mean: its sum over this batch's items / n
            loss = loss / len(X)
        grads = torch.autograd.grad(loss, leaves)
        # torch.optim.Adam, single-tensor path, elementwise per configuration
        b1, b2 = _BETAS
        self.step += 1
        step_size = lr / (1 - b1**self.step)
        bias2_sqrt = (1 - b2**self.step) ** 0.5
        start = 0
        for g in grads:
            end = start + g.numel()
            grad, tmp = g.reshape(-1), self.scratch[: end - start]
            param, m, v = self.flat[start:end], self.m_flat[start:end], self.v_flat[start:end]
            grad.add_(torch.mul(param, self.wd[start:end], out=tmp))  # + weight decay
            m.lerp_(grad, 1 - b1)
            v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
            denom = torch.sqrt(v, out=tmp).div_(bias2_sqrt).add_(_EPS)
            param.addcdiv_(m, denom, value=-step_size)
            start = end

    @torch.inference_mode()
    def accuracy(self, X: torch.Tensor, y: torch.Tensor, chunk: int = 8192) -> list[float]:
        correct = torch.zeros(len(self.order))
        for i in range(0, len(X), chunk):
            Z = self.logits(self.flat, X[i : i + chunk], train=False)
            correct += (Z.argmax(-1) == y[i : i + chunk]).float().sum(1)
        return (correct / len(X)).tolist()


def forward(params: list[torch.Tensor], X: torch.Tensor) -> torch.Tensor:
    """Logits of one trained configuration (dropout off)."""
    if len(params) == 2:
        return F.linear(X, params[0], params[1])
    return F.linear(torch.sigmoid(F.linear(X, params[0], params[1])), params[2], params[3])


class SentEvalProbe(ProbeContract, ClassifierMixin, BaseEstimator):
    """SentEval's MLP / logistic classifier and its model selection (see the module).

    ``nhid``, ``dropout`` and ``l2`` may each be a value or a grid; ``nhid=0`` is SentEval's
    logistic regression (dropout then has no effect). ``retrain=False`` scores the grid's own
    model of the best configuration instead of retraining it (the same model up to float
    rounding, since the retrain uses the same seed). ``loss``: ``"sum"`` (SentEval's code as
    written) or ``"mean"`` (as it runs on PyTorch >= 0.4.1).

    Without a dev split, the default (``kfold=None``) holds out a stratified
    ``validation_split`` of train as the dev split, as scikit-learn's ``MLPClassifier``
    (``early_stopping=True``) does (``selection_ == "holdout"``); ``kfold=5`` is SentEval's
    ``KFoldClassifier`` (what ``--probe senteval`` does for a task without a dev split).
    """

    version: ClassVar[str] = "1"
    uses_seed: ClassVar[bool] = True  # initialisation, minibatch order, dropout, CV folds
    _params: ClassVar[dict[str, Param]] = {
        "nhid": Param(Integral, low=0, grid=True),
        "dropout": DROPOUT_GRID,
        "l2": L2_GRID,
        "lr": REAL_POS,
        "batch_size": INT_POS,
        "epoch_size": INT_POS,
        "tenacity": Param(Integral, low=0),
        "max_epoch": Param(Integral, low=0),
        "kfold": FOLDS_OR_NONE,
        "validation_split": Param(Real, low=0, high=1, closed="neither"),
        "retrain": Param(bool),
        "loss": Param(str, options=("sum", "mean")),
        "random_state": SEED,
    }

    def __init__(
        self,
        nhid: int | Sequence[int] = SENTEVAL_NHID,
        dropout: float | Sequence[float] = SENTEVAL_DROPOUT,
        l2: float | Sequence[float] = SENTEVAL_L2,
        lr: float = 1e-3,
        batch_size: int = 64,
        epoch_size: int = 4,
        tenacity: int = 5,
        max_epoch: int = 200,
        kfold: int | None = None,
        validation_split: float = 0.05,
        retrain: bool = True,
        loss: str = "sum",
        random_state: int | None = 1111,
    ) -> None:
        self.nhid = nhid
        self.dropout = dropout
        self.l2 = l2
        self.lr = lr
        self.batch_size = batch_size
        self.epoch_size = epoch_size
        self.tenacity = tenacity
        self.max_epoch = max_epoch
        self.kfold = kfold
        self.validation_split = validation_split
        self.retrain = retrain
        self.loss = loss
        self.random_state = random_state

    def _configs(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for c in as_grid(nhid=self.nhid, dropout=self.dropout, l2=self.l2):
            c = {"nhid": int(c["nhid"]), "dropout": float(c["dropout"]), "l2": float(c["l2"])}
            if c["nhid"] == 0:
                c["dropout"] = 0.0  # no dropout layer in SentEval's logistic regression
            if c not in out:
                out.append(c)
        return out

    def _train(
        self,
        X: torch.Tensor,
        y: torch.Tensor,
        X_dev: torch.Tensor,
        y_dev: torch.Tensor,
        configs: list[dict[str, Any]],
        seed: int,
        rs: np.random.RandomState | None = None,
    ) -> list[_Fit]:
        """SentEval's ``MLP.fit`` with ``validation_data``, every configuration at once."""
        grid = _Grid(X.shape[1], len(self.classes_), configs, seed)
        rs = rs if rs is not None else np.random.RandomState(seed)
        y = y.clamp_min(0)
        best: dict[int, _Fit] = {}
        count = dict.fromkeys(range(len(configs)), 0)
        nepoch = 0
        active = list(range(len(configs)))
        while active and nepoch <= self.max_epoch:
            for _ in range(self.epoch_size):
                perm = torch.from_numpy(rs.permutation(len(X)))
                for i in range(0, len(X), self.batch_size):
                    idx = perm[i : i + self.batch_size]
                    grid.adam_step(X[idx], y[idx], self.lr, mean=self.loss == "mean")
            nepoch += self.epoch_size
            acc = grid.accuracy(X_dev, y_dev)
            snapshot = None
            still = []
            for pos, i in enumerate(grid.order):
                if i not in best or acc[pos] > best[i].dev_score:
                    snapshot = snapshot or grid.member_params()
                    best[i] = _Fit(acc[pos], snapshot[i], nepoch)
                    still.append(i)
                    continue
                stop = count[i] >= self.tenacity  # SentEval: never reset on improvement
                count[i] += 1
                if not stop:
                    still.append(i)
            if still and len(still) < len(active):
                grid.keep(still)
            active = still
        return [best[i] for i in range(len(configs))]

    def fit(self, X, y, X_dev=None, y_dev=None) -> SentEvalProbe:
        check_params(self, self._params)
        Xt, y, Xd, y_dev = validate_fit(self, X, y, X_dev, y_dev)
        with probe_threads(len(Xt), Xt.shape[1]):
            return self._fit_selected(Xt, y, Xd, y_dev)

    def _fit_selected(self, Xt, y, Xd, y_dev) -> SentEvalProbe:
        self.classes_ = np.unique(y)  # SentEval numbers labels from the sorted train labels
        yt = encode_labels(y, self.classes_)
        configs = self._configs()
        seed = 0 if self.random_state is None else int(self.random_state)
        held = holdout_split(y, self.validation_split, seed) if self.kfold is None else None
        selection = "dev"
        if Xd is None and held is not None:
            # no dev split and no kfold: a stratified validation_split of train is the dev
            # split (selection and early stopping), as scikit-learn's MLPClassifier does
            mask = np.ones(len(yt), dtype=bool)
            mask[held] = False
            Xd, y_dev = Xt[torch.from_numpy(~mask)], np.asarray(y)[~mask]
            Xt, yt = Xt[torch.from_numpy(mask)], yt[torch.from_numpy(mask)]
            selection = "holdout"

        if Xd is not None:
            yd = encode_labels(y_dev, self.classes_)
            fits = self._train(Xt, yt, Xd, yd, configs, seed)
            raw = [f.dev_score for f in fits]
            scores = [round(100 * s, 2) for s in raw]
            best = int(np.argmax(scores))  # first best, as SentEval
            chosen = (
                self._train(Xt, yt, Xd, yd, [configs[best]], seed)[0]
                if self.retrain
                else fits[best]
            )
            self.selection_ = selection
            self.best_score_ = raw[best]
        else:
            folds = stratified_folds(y, self.kfold or 5, seed)
            per_fold = []
            for held in folds:
                mask = np.ones(len(yt), dtype=bool)
                mask[held] = False
                m = torch.from_numpy(mask)
                per_fold.append(self._train(Xt[m], yt[m], Xt[~m], yt[~m], configs, seed))
            raw = [float(np.mean([f[i].dev_score for f in per_fold])) for i in range(len(configs))]
            scores = [round(100 * s, 2) for s in raw]
            best = int(np.argmax(scores))
            # refit on train with SentEval's validation_split: the split is drawn first from
            # the configuration's numpy stream, which then orders the minibatches
            rs = np.random.RandomState(seed)
            perm = rs.permutation(len(Xt))
            n_val = int(self.validation_split * len(Xt))
            dev_idx, tr_idx = torch.from_numpy(perm[:n_val]), torch.from_numpy(perm[n_val:])
            chosen = self._train(
                Xt[tr_idx], yt[tr_idx], Xt[dev_idx], yt[dev_idx], [configs[best]], seed, rs
            )[0]
            self.selection_ = f"cv{len(folds)}"
            self.best_score_ = raw[best]

        self.best_params_ = configs[best]
        self.grid_scores_ = [(c, s) for c, s in zip(configs, raw)]
        self.params_ = chosen.params
        self.n_iter_ = chosen.epochs
        return self

    def _logits_of(self, X) -> np.ndarray:
        Xt = self._features(X)
        with torch.inference_mode():
            return forward(self.params_, Xt).numpy()
