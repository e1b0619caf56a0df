"""SentEvalProbe against a reference written from SentEval's description (classifier.py)."""

import copy

import numpy as np
import pytest
import torch
from torch import nn

from sentprobe.probes import make_probe
from sentprobe.probes import senteval as se
from sentprobe.probes.senteval import SentEvalProbe


def data(n, d=6, k=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, d))
    y = rng.integers(0, k, n)
    X = (centers[y] + rng.normal(size=(n, d))).astype(np.float32)
    return X, y


def reference_fit(X, y, Xd, yd, nhid, dropout, l2, seed, max_epoch, tenacity=5, variant=""):
    """SentEval's MLP.fit as its code reads: Linear -> Dropout -> Sigmoid -> Linear, summed
    cross-entropy, Adam(lr 1e-3, weight_decay=l2 on every parameter), batch 64, dev check
    every 4 passes, tenacity counter never reset. ``variant`` breaks one rule on purpose."""
    np.random.seed(seed)
    torch.manual_seed(seed)
    d, k = X.shape[1], int(y.max()) + 1
    if variant == "dropout-after-sigmoid":
        layers = [nn.Linear(d, nhid), nn.Sigmoid(), nn.Dropout(dropout), nn.Linear(nhid, k)]
    else:
        layers = [nn.Linear(d, nhid), nn.Dropout(dropout), nn.Sigmoid(), nn.Linear(nhid, k)]
    model = nn.Sequential(*layers)
    loss_fn = nn.CrossEntropyLoss(reduction="mean" if variant == "mean-loss" else "sum")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=l2)
    X, y, Xd, yd = map(torch.as_tensor, (X, y, Xd, yd))
    nepoch, best, count, stop, best_model = 0, -1.0, 0, False, None
    while not stop and nepoch <= max_epoch:
        model.train()
        for _ in range(4):
            perm = np.random.permutation(len(X))
            for i in range(0, len(X), 64):
                idx = torch.from_numpy(perm[i : i + 64])
                loss = loss_fn(model(X[idx]), y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
        nepoch += 4
        model.eval()
        with torch.no_grad():
            acc = (model(Xd).argmax(1) == yd).float().mean().item()
        if acc > best:
            best, best_model = acc, copy.deepcopy(model)
        else:
            if count >= tenacity:
                stop = True
            count += 1
    return [p.detach() for p in best_model.parameters()], best


@pytest.fixture(scope="module")
def split():
    X, y = data(500, seed=1)
    return X[:300], y[:300], X[300:], y[300:]


def test_same_weights_as_the_reference_and_sensitive_to_order_and_loss_scaling(split):
    X, y, Xd, yd = split
    cfg = dict(nhid=5, dropout=0.2, l2=0.05, random_state=3, max_epoch=8)
    probe = SentEvalProbe(**cfg).fit(X, y, Xd, yd)
    ref, ref_dev = reference_fit(X, y, Xd, yd, 5, 0.2, 0.05, seed=3, max_epoch=8)
    assert [tuple(p.shape) for p in probe.params_] == [tuple(p.shape) for p in ref]
    for ours, theirs in zip(probe.params_, ref):
        assert torch.allclose(ours, theirs, atol=1e-5)
    assert probe.best_score_ == pytest.approx(ref_dev)
    # the comparison can fail: a reference breaking one rule ends up elsewhere
    for variant in ("dropout-after-sigmoid", "mean-loss"):
        other, _ = reference_fit(X, y, Xd, yd, 5, 0.2, 0.05, 3, 8, variant=variant)
        assert max((a - b).abs().max().item() for a, b in zip(probe.params_, other)) > 1e-3


def test_logistic_regression_when_nhid_is_zero(split):
    X, y, Xd, yd = split
    probe = SentEvalProbe(nhid=0, dropout=[0.0, 0.2], l2=[1e-5, 1e-3], max_epoch=4).fit(
        X, y, Xd, yd
    )
    assert [c for c, _ in probe.grid_scores_] == [
        {"nhid": 0, "dropout": 0.0, "l2": 1e-5},
        {"nhid": 0, "dropout": 0.0, "l2": 1e-3},
    ]
    assert [tuple(p.shape) for p in probe.params_] == [(3, 6), (3,)]


def test_early_stopping_counter_is_never_reset(split, monkeypatch):
    """SentEval stops at the (tenacity+1)-th non-improving check *overall*."""
    X, y, Xd, yd = split
    script = iter([0.5, 0.4, 0.6, 0.4, 0.4, 0.4, 0.4, 0.4])
    checks = []

    def scripted(self, X, y, chunk=8192):
        checks.append(1)
        return [next(script)] * len(self.order)

    monkeypatch.setattr(se._Grid, "accuracy", scripted)
    probe = SentEvalProbe(nhid=4, dropout=0.0, l2=1e-5, tenacity=2, epoch_size=1, retrain=False)
    probe.fit(X, y, Xd, yd)
    # non-improvements at checks 2, 4, 5: the counter reaches 2 at check 5, which stops
    # (a counter reset by the improvement at check 3 would stop at check 6)
    assert len(checks) == 5
    assert probe.best_score_ == 0.6 and probe.n_iter_ == 3


def test_a_configuration_trains_inside_the_grid_as_it_does_alone(split):
    X, y, Xd, yd = split
    kw = dict(max_epoch=8, random_state=5, retrain=False)
    grid = SentEvalProbe(nhid=[4, 8], dropout=[0.0, 0.2], l2=1e-3, **kw).fit(X, y, Xd, yd)
    for config, score in grid.grid_scores_:
        alone = SentEvalProbe(**config, **kw).fit(X, y, Xd, yd)
        assert alone.best_score_ == score, config
        if config == grid.best_params_:
            for a, b in zip(alone.params_, grid.params_):
                assert torch.allclose(a, b, atol=1e-5)
    retrained = SentEvalProbe(nhid=[4, 8], dropout=[0.0, 0.2], l2=1e-3, max_epoch=8,
                              random_state=5).fit(X, y, Xd, yd)  # fmt: skip
    for a, b in zip(retrained.params_, grid.params_):
        assert torch.allclose(a, b, atol=1e-5)


def test_kfold_without_dev_and_registry():
    X, y = data(900, seed=2)  # the refit holds out 5% of train for early stopping
    probe = SentEvalProbe(nhid=4, dropout=0.0, l2=[1e-5, 1e-2], max_epoch=24, kfold=3).fit(X, y)
    assert probe.selection_ == "cv3" and len(probe.grid_scores_) == 2
    assert probe.predict(X).shape == (900,) and probe.score(X, y) > 0.5
    assert make_probe("senteval", "WC").nhid == 0
    default = make_probe("senteval", "SentLen", seed=2)
    assert default.random_state == 2 and len(default._configs()) == 3 * 3 * 4


def test_grid_step_equals_the_step_through_one_flat_leaf():
    """adam_step takes the gradient per part of the flat vector (one autograd leaf each, for
    speed); it must equal, bit for bit, the gradient of the whole vector as a single leaf
    followed by torch.optim.Adam's single-tensor arithmetic."""
    X, y = data(64, d=6, k=3, seed=4)
    X, y = torch.from_numpy(X), torch.from_numpy(y)
    configs = [{"nhid": h, "dropout": p, "l2": l2} for h, p, l2 in
               [(0, 0.0, 1e-3), (4, 0.0, 1e-2), (4, 0.2, 1e-5), (8, 0.1, 1e-4)]]  # fmt: skip
    fast, ref = se._Grid(6, 3, configs, seed=7), se._Grid(6, 3, configs, seed=7)
    b1, b2 = se._BETAS
    for step in range(1, 4):
        fast.adam_step(X, y, 1e-3)
        flat = ref.flat.clone().requires_grad_(True)
        Z = ref.logits(flat, X, train=True)
        loss = torch.nn.functional.cross_entropy(
            Z.reshape(-1, 3), y.repeat(Z.shape[0]), reduction="sum"
        )
        (grad,) = torch.autograd.grad(loss, flat)
        grad = grad.add(ref.flat * ref.wd)
        ref.m_flat.lerp_(grad, 1 - b1)
        ref.v_flat.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        denom = (ref.v_flat.sqrt() / (1 - b2**step) ** 0.5).add_(se._EPS)
        ref.flat.addcdiv_(ref.m_flat, denom, value=-1e-3 / (1 - b1**step))
        assert torch.equal(fast.flat, ref.flat), step
        assert torch.equal(fast.v_flat, ref.v_flat), step
    assert not torch.equal(fast.flat, se._Grid(6, 3, configs, seed=7).flat)


def test_mean_loss_is_sentevals_on_current_pytorch(split):
    """``loss="mean"``: SentEval's code run on PyTorch >= 0.4.1 (``size_average`` ignored),
    the reference with ``nn.CrossEntropyLoss(reduction="mean")``; and the presets."""
    X, y, Xd, yd = split
    cfg = dict(nhid=5, dropout=0.2, l2=0.05, random_state=3, max_epoch=8)
    probe = SentEvalProbe(**cfg, loss="mean").fit(X, y, Xd, yd)
    ref, ref_dev = reference_fit(X, y, Xd, yd, 5, 0.2, 0.05, 3, 8, variant="mean-loss")
    for ours, theirs in zip(probe.params_, ref):
        assert torch.allclose(ours, theirs, atol=1e-5)
    assert probe.best_score_ == pytest.approx(ref_dev)
    summed, _ = reference_fit(X, y, Xd, yd, 5, 0.2, 0.05, 3, 8)
    assert max((a - b).abs().max().item() for a, b in zip(probe.params_, summed)) > 1e-3
    assert make_probe("senteval-torch", "SentLen").loss == "mean"
    assert make_probe("senteval-torch", "WC").nhid == 0
    default = make_probe("senteval-default", "Tense")
    assert (default.nhid, default.loss, default.batch_size, default.tenacity) == (0, "mean", 64, 5)
    with pytest.raises(ValueError, match="loss must be one of"):
        SentEvalProbe(loss="avg").fit(X, y, Xd, yd)
