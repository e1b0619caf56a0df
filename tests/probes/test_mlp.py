import numpy as np
import torch

from sentprobe.probes.linear import LogisticProbe
from sentprobe.probes.mlp import MLPProbe, _StackedMLP


def xor(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    y = np.where((X[:, 0] > 0) ^ (X[:, 1] > 0), "a", "b")
    return X, y


def test_learns_what_a_linear_probe_cannot():
    X, y = xor(1000)
    Xd, yd = xor(300, seed=1)
    Xt, yt = xor(300, seed=2)
    mlp = MLPProbe(nhid=50, dropout=0.0, l2=1e-5, eval_steps=40, max_checks=15).fit(X, y, Xd, yd)
    lin = LogisticProbe().fit(X, y, Xd, yd)
    assert mlp.score(Xt, yt) > 0.9
    assert lin.score(Xt, yt) < 0.65


def test_full_paper_grid_is_searched():
    X, y = xor(600)
    Xd, yd = xor(200, seed=1)
    probe = MLPProbe(max_checks=1, eval_steps=3).fit(X, y, Xd, yd)
    configs = [c for c, _ in probe.grid_scores_]
    assert len(configs) == 27
    assert {c["nhid"] for c in configs} == {50, 100, 200}
    assert {c["dropout"] for c in configs} == {0.0, 0.1, 0.2}
    assert probe.best_score_ == max(s for _, s in probe.grid_scores_)
    assert probe.predict_proba(Xd).shape == (200, 2)


def test_seeded_and_deterministic():
    X, y = xor(400)
    kw = dict(nhid=50, dropout=0.1, l2=1e-4, max_checks=1, eval_steps=5)
    a = MLPProbe(**kw, random_state=1).fit(X, y)
    b = MLPProbe(**kw, random_state=1).fit(X, y)
    c = MLPProbe(**kw, random_state=2).fit(X, y)
    assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
    assert not np.array_equal(a.predict_proba(X), c.predict_proba(X))


def test_a_configuration_trains_inside_the_grid_as_it_does_alone():
    """The grid is one wide network; with dropout 0 each member must be exactly the model the
    same configuration gives when trained alone (same init, batches, updates, stopping)."""
    X, y = xor(300)
    Xd, yd = xor(100, seed=1)
    kw = dict(dropout=0.0, max_checks=4, patience=1, eval_steps=10, random_state=3)
    grid = MLPProbe(nhid=[8, 16], l2=[1e-5, 1e-1], **kw).fit(X, y, Xd, yd)
    assert len(grid.grid_scores_) == 4
    for config, score in grid.grid_scores_:
        alone = MLPProbe(nhid=config["nhid"], l2=config["l2"], **kw).fit(X, y, Xd, yd)
        assert alone.best_score_ == score, config
        if config == grid.best_params_:
            assert alone.n_iter_ == grid.n_iter_
            for k, w in alone.params_.items():
                assert torch.allclose(w, grid.params_[k], atol=1e-5), (config, k)


def test_no_dev_fits_come_back_in_configuration_order():
    X, y = xor(200)
    probe = MLPProbe(eval_steps=2)
    probe.classes_ = np.unique(y)  # _fit_grid is called by fit after this is set
    yi = torch.from_numpy(np.searchsorted(probe.classes_, y))
    configs = [
        {"nhid": 16, "dropout": 0.0, "l2": 1e-4},
        {"nhid": 4, "dropout": 0.0, "l2": 1e-4},
        {"nhid": 8, "dropout": 0.0, "l2": 1e-4},
    ]
    fits = probe._fit_grid(torch.from_numpy(X), yi, None, None, configs, seed=0, max_iter=1)
    assert [f.params["W1"].shape[1] for f in fits] == [16, 4, 8]


def test_dropout_masks_keep_the_configured_fraction_unbiased():
    """int16 draws, four per 64-bit number: each unit is kept with probability 1 - dropout
    (all 16 bits random: a draw missing its sign bit would keep every unit), kept units are
    scaled by the inverse of that exact fraction, and dropout-0 units are never dropped."""
    configs = [{"nhid": 64, "dropout": d, "l2": 1e-4} for d in (0.0, 0.1, 0.2)]
    net = _StackedMLP(d=4, K=2, configs=configs, init_seed=0)
    h = net.dropout(torch.ones(4000, 192), torch.Generator().manual_seed(0)).view(4000, 3, 64)
    for j, drop in enumerate(net.drop.tolist()):
        member = h[:, j]
        assert abs(float((member > 0).float().mean()) - (1 - drop)) < 0.005, drop
        assert abs(float(member.mean()) - 1.0) < 0.01, drop  # inverted dropout: unbiased
    assert bool((h[:, net.drop == 0] == 1).all())
