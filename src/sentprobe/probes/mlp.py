"""A fast sigmoid MLP probe (Linear -> Sigmoid -> dropout -> Linear), its grid as one network.

It searches the paper's grid (hidden 50/100/200 x dropout 0/0.1/0.2 x L2) but is *not*
SentEval's classifier (that is ``sentprobe.probes.senteval.SentEvalProbe``): dropout comes
after the sigmoid (SentEval: before it), L2 is added to the mean batch loss and skips the
biases (SentEval: Adam weight decay on all parameters, summed batch loss), batches of 256 with
Adam at lr 2e-3 (SentEval: 64, 1e-3), dev checked after each epoch (after several on small
training sets, so that at least ``eval_steps`` updates separate checks) with patience 4
(SentEval: every 4 epochs, tenacity 5 never reset), on z-scored features (SentEval: raw).

All configurations (hidden size x dropout x L2) are trained side by side: their hidden layers
are concatenated into one wide first layer (one matrix product per step for the whole grid),
and each configuration's output layer is a slice of a padded batch of small matrices. A
configuration whose dev accuracy stops improving is dropped from the batch, so the remaining
ones train faster; its best-on-dev weights are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
import torch
from torch.optim.adam import adam

from sentprobe.probes._common import as_grid
from sentprobe.probes._validation import (
    DROPOUT_GRID,
    FOLDS_OR_NONE,
    FRACTION,
    INT_POS,
    L2_GRID,
    REAL_POS,
    SEED,
    Param,
)
from sentprobe.probes.base import GridFit, GridProbe
from sentprobe.probes.devices import DEVICE, resolve_device

DEFAULT_NHID: tuple[int, ...] = (50, 100, 200)
DEFAULT_DROPOUT: tuple[float, ...] = (0.0, 0.1, 0.2)
DEFAULT_L2: tuple[float, ...] = (1e-5, 1e-4, 1e-3)


class _StackedMLP:
    """Parameters and Adam state of G MLPs; ``keep`` removes finished ones from the batch.

    Members are ordered by hidden size, so the hidden units of equal-sized members form one
    contiguous block that a view turns into ``(n, members, size)`` for a batched matmul.
    """

    def __init__(self, d: int, K: int, configs: list[dict[str, Any]], init_seed: int):
        order = sorted(range(len(configs)), key=lambda i: configs[i]["nhid"])
        self.ids = order  # original config index of each member
        self.hid = torch.tensor([configs[i]["nhid"] for i in order])
        self.drop = torch.tensor([float(configs[i]["dropout"]) for i in order])
        self.l2 = torch.tensor([float(configs[i]["l2"]) for i in order])
        # Each member is initialised from its own generator (same seed for all, as SentEval
        # reseeds for every configuration), so its start does not depend on the rest of the grid.
        W1: list[torch.Tensor] = []
        b1: list[torch.Tensor] = []
        b2: list[torch.Tensor] = []
        W2: dict[int, list[torch.Tensor]] = {}  # hidden size -> its members' output weights
        for i in order:
            h = int(configs[i]["nhid"])
            gen = torch.Generator().manual_seed(init_seed)
            W1.append((torch.rand(d, h, generator=gen) * 2 - 1) / d**0.5)
            b1.append((torch.rand(h, generator=gen) * 2 - 1) / d**0.5)
            W2.setdefault(h, []).append((torch.rand(h, K, generator=gen) * 2 - 1) / h**0.5)
            b2.append((torch.rand(K, generator=gen) * 2 - 1) / h**0.5)
        self.p = {"W1": torch.cat(W1, 1), "b1": torch.cat(b1), "b2": torch.stack(b2)}
        for size, mats in W2.items():
            self.p[f"W2_{size}"] = torch.stack(mats)
        self.m = {k: torch.zeros_like(v) for k, v in self.p.items()}
        self.v = {k: torch.zeros_like(v) for k, v in self.p.items()}
        self.step = 0
        self._index()

    def to(self, device: torch.device | str) -> _StackedMLP:
        """Move the parameters, Adam's state and the per-unit tables to ``device``."""
        for store in (self.p, self.m, self.v):
            for k in store:
                store[k] = store[k].to(device)
        self.hid, self.drop, self.l2 = self.hid.to(device), self.drop.to(device), self.l2.to(device)
        self.device = torch.device(device)
        self._index()
        return self

    def _index(self) -> None:
        self.member = torch.repeat_interleave(torch.arange(len(self.hid)), self.hid)  # (H,)
        sizes, counts = torch.unique_consecutive(self.hid, return_counts=True)
        self.blocks = [(int(s), int(c)) for s, c in zip(sizes, counts)]
        # Dropout masks compare uniform int16 draws with a per-unit threshold (four masks per
        # 64-bit draw: a float draw per unit was an eighth of a step). Kept units are scaled by
        # the inverse of the exactly kept fraction, so the expectation is unbiased.
        self.dropped = self.drop[self.member] > 0
        kept = ((1 - self.drop[self.member]) * 65536).round()
        self.threshold = (kept - 32768).clamp(max=32767).to(torch.int16)
        self.scale = torch.where(self.dropped, 65536 / kept, 1.0)

    def keep(self, members: torch.Tensor) -> None:
        """Keep only ``members`` (sorted positions), dropping the others' weights and state."""
        members = members.to(self.member.device)
        units = torch.isin(self.member, members)
        start, kept = 0, {}
        for size, count in self.blocks:
            local = members[(members >= start) & (members < start + count)] - start
            kept[size] = local
            start += count
        for store in (self.p, self.m, self.v):
            store["W1"], store["b1"] = store["W1"][:, units].contiguous(), store["b1"][units]
            store["b2"] = store["b2"][members]
            for size, local in kept.items():
                if len(local):
                    store[f"W2_{size}"] = store[f"W2_{size}"][local]
                else:
                    del store[f"W2_{size}"]
        self.ids = [self.ids[i] for i in members.tolist()]
        self.hid, self.drop, self.l2 = self.hid[members], self.drop[members], self.l2[members]
        self._index()

    def dropout(self, h: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        """``h`` (n, H) with inverted dropout at each unit's rate, from ``gen``. The bits
        are drawn on the CPU (``gen`` is a CPU generator) and moved to ``h``'s device, so a
        GPU run draws the masks a CPU run draws."""
        n, H = h.shape
        bits = torch.empty(-(-n * H // 4), dtype=torch.int64)
        bits.random_(-(2**63), None, generator=gen)  # all 64 bits: four int16 draws
        draws = bits.view(torch.int16)[: n * H].view(n, H).to(h.device)
        return h * (((draws < self.threshold) | ~self.dropped) * self.scale)

    def logits(self, X: torch.Tensor, p: dict[str, torch.Tensor], gen=None) -> torch.Tensor:
        h = torch.sigmoid(torch.addmm(p["b1"], X, p["W1"]))  # (n, H)
        if gen is not None and bool(self.dropped.any()):
            h = self.dropout(h, gen)
        # split, not slices: its backward concatenates, where slices' backward zero-fills
        n, out = len(h), []
        parts = h.split([size * count for size, count in self.blocks], 1)
        for (size, count), part in zip(self.blocks, parts):
            hb = part.reshape(n, count, size).transpose(0, 1)
            out.append(torch.bmm(hb, p[f"W2_{size}"]))  # (count, n, K)
        return (torch.cat(out, 0) + p["b2"][:, None]).transpose(0, 1)  # (n, G, K)

    def adam_step(self, X: torch.Tensor, y: torch.Tensor, lr: float, gen: torch.Generator) -> None:
        p = {k: v.requires_grad_(True) for k, v in self.p.items()}
        Z = self.logits(X, p, gen)
        n, G, K = Z.shape
        ce = (
            torch.nn.functional.cross_entropy(
                Z.reshape(n * G, K), y.repeat_interleave(G), reduction="sum"
            )
            / n
        )
        grads = dict(zip(p, torch.autograd.grad(ce, list(p.values()))))
        with torch.no_grad():
            # The L2 term's gradient (l2 * W, biases not penalised), added without autograd.
            grads["W1"].addcmul_(self.p["W1"], self.l2[self.member])
            start = 0
            for size, count in self.blocks:
                key = f"W2_{size}"
                grads[key].addcmul_(self.p[key], self.l2[start : start + count, None, None])
                start += count
        keys = list(self.p)
        params = [self.p[k].detach() for k in keys]
        adam(
            params,
            [grads[k] for k in keys],
            [self.m[k] for k in keys],
            [self.v[k] for k in keys],
            [],
            [torch.tensor(float(self.step), device=params[0].device) for _ in keys],
            fused=True,  # one pass over each tensor; the same update as torch.optim.Adam
            amsgrad=False,
            beta1=0.9,
            beta2=0.999,
            lr=lr,
            weight_decay=0.0,
            eps=1e-8,
            maximize=False,
        )
        self.step += 1
        self.p = dict(zip(keys, params))

    @torch.inference_mode()
    def accuracy(self, X: torch.Tensor, y: torch.Tensor, chunk: int = 8192) -> torch.Tensor:
        correct = torch.zeros(len(self.ids), device=X.device)
        for i in range(0, len(X), chunk):
            Z = self.logits(X[i : i + chunk], self.p)
            correct += (Z.argmax(-1) == y[i : i + chunk, None]).float().sum(0)
        return (correct / len(X)).cpu()

    def member_params(self, j: int) -> dict[str, torch.Tensor]:
        units = self.member == j
        size = int(self.hid[j])
        first = int((self.hid < size).sum())  # members are sorted by size
        return {  # on the CPU: a fitted probe predicts the same way whatever device trained it
            "W1": self.p["W1"][:, units].cpu().clone(),
            "b1": self.p["b1"][units].cpu().clone(),
            "W2": self.p[f"W2_{size}"][j - first].cpu().clone(),
            "b2": self.p["b2"][j].cpu().clone(),
        }


class MLPProbe(GridProbe):
    """Fast sigmoid MLP probe over the paper's grid (not SentEval's classifier, see the module).

    Each argument may be a value or a grid.

    Trained with Adam on shuffled minibatches; dev accuracy is checked after the fewest whole
    epochs that hold at least ``eval_steps`` updates (each epoch from 8k training items on, at
    the default batch size), at most ``max_checks`` times. A configuration stops
    after ``patience`` checks without dev improvement and keeps its best weights, so its
    reported dev accuracy is a selection score. ``n_iter_`` counts checks.

    Without a dev split (``fit(X, y)``), a stratified ``validation_fraction`` of train is held
    out for selection and early stopping, as scikit-learn's ``MLPClassifier(early_stopping=
    True)`` does (``selection_ == "holdout"``); ``cv=5`` chooses by 5-fold CV instead and
    refits on all of train (what ``--probe mlp`` does for a task without a dev split).
    ``device`` (``cpu``, ``cuda``, ``auto``): where it trains; initial weights, minibatch order and
    dropout masks are drawn on the CPU, so they are the same on every device.
    """

    version: ClassVar[str] = "4"  # 4: a configuration stops at a perfect dev score; 3: dev every
    # epoch, patience 4; int16 dropout masks; fused Adam
    _params: ClassVar[dict[str, Param]] = {
        "nhid": Param(Integral, low=1, grid=True),
        "dropout": DROPOUT_GRID,
        "l2": L2_GRID,
        "lr": REAL_POS,
        "batch_size": INT_POS,
        "eval_steps": INT_POS,
        "max_checks": INT_POS,
        "patience": INT_POS,
        "device": DEVICE,
        "cv": FOLDS_OR_NONE,
        "validation_fraction": FRACTION,
        "random_state": SEED,
    }

    def __init__(
        self,
        nhid: int | Sequence[int] = DEFAULT_NHID,
        dropout: float | Sequence[float] = DEFAULT_DROPOUT,
        l2: float | Sequence[float] = DEFAULT_L2,
        lr: float = 2e-3,
        batch_size: int = 256,
        eval_steps: int = 32,
        max_checks: int = 100,
        patience: int = 4,
        cv: int | None = None,
        validation_fraction: float = 0.1,
        random_state: int | None = 0,
        device: str = "cpu",
    ) -> None:
        self.device = device
        self.nhid = nhid
        self.dropout = dropout
        self.l2 = l2
        self.lr = lr
        self.batch_size = batch_size
        self.eval_steps = eval_steps
        self.max_checks = max_checks
        self.patience = patience
        self.cv = cv
        self.validation_fraction = validation_fraction
        self.random_state = random_state

    def _configs(self) -> list[dict[str, Any]]:
        return as_grid(nhid=self.nhid, dropout=self.dropout, l2=self.l2)

    def _fit_grid(self, X, y, X_dev, y_dev, configs, seed, max_iter=None) -> list[GridFit]:
        # Independent streams for initialisation, minibatch order and dropout masks: with
        # dropout 0, a configuration trains exactly as it would alone (up to float rounding).
        init_seed, shuffle_seed, drop_seed = np.random.SeedSequence(seed).generate_state(3)
        device = resolve_device(getattr(self, "device", "cpu"))  # a subclass may not take it
        net = _StackedMLP(X.shape[1], len(self.classes_), configs, int(init_seed)).to(device)
        X = X.to(device)
        X_dev = None if X_dev is None else X_dev.to(device)
        y_dev = None if y_dev is None else y_dev.to(device)
        shuffle = torch.Generator().manual_seed(int(shuffle_seed))
        drop = torch.Generator().manual_seed(int(drop_seed))
        # Dev is checked every ``eval_steps`` updates (at least once per epoch), so small
        # training sets get as many updates between checks as large ones.
        steps_per_epoch = -(-len(X) // self.batch_size)
        epochs_per_check = -(-self.eval_steps // steps_per_epoch)
        checks = max_iter or self.max_checks
        G = len(configs)
        best: list[GridFit | None] = [None] * G
        stale = [0] * G
        y = y.clamp_min(0).to(device)
        for check in range(1, checks + 1):
            for _ in range(epochs_per_check):
                order = torch.randperm(len(X), generator=shuffle)
                for i in range(0, len(X), self.batch_size):
                    batch = order[i : i + self.batch_size].to(device)
                    net.adam_step(X[batch], y[batch], self.lr, drop)
            if X_dev is None:
                continue
            acc = net.accuracy(X_dev, y_dev)
            still = []
            for j, cfg in enumerate(net.ids):
                prev = best[cfg]
                if prev is None or acc[j] > prev.score():
                    best[cfg] = GridFit(float(acc[j]), net.member_params(j), check)
                    stale[cfg] = 0
                else:
                    stale[cfg] += 1
                # a perfect dev score cannot be beaten (only a strictly better one replaces the
                # kept weights), so training on could not change the result
                if stale[cfg] < self.patience and best[cfg].score() < 1.0:  # type: ignore[union-attr]
                    still.append(j)
            if not still:
                break
            if len(still) < len(net.ids):
                net.keep(torch.tensor(still))
        if X_dev is None:
            # members are ordered by hidden size; fits go back in configuration order
            fits: list[GridFit | None] = [None] * G
            for j, cfg in enumerate(net.ids):
                fits[cfg] = GridFit(None, net.member_params(j), checks)
            return fits  # type: ignore[return-value]
        return [b for b in best if b is not None]

    def _logits(self, params, X):
        # in float64: float32 products differed in the 7th digit when the rows came in
        # another order (check_methods_sample_order_invariance)
        p = {k: v.double() for k, v in params.items()}
        return torch.sigmoid(X.double() @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]
