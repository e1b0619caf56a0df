import numpy as np

from sentprobe.probes.linear import LogisticProbe
from sentprobe.probes.mlp import MLPProbe


def xor(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    y = np.where((X[:, 0] > 0) ^ (X[:, 1] > 0), "a", "b")
    return X, y


def test_learns_what_a_linear_probe_cannot():
    X, y = xor(2000)
    Xd, yd = xor(500, seed=1)
    Xt, yt = xor(500, seed=2)
    mlp = MLPProbe(nhid=50, dropout=0.0, l2=1e-5, max_checks=20, patience=5).fit(X, y, Xd, yd)
    lin = LogisticProbe().fit(X, y, Xd, yd)
    assert mlp.score(Xt, yt) > 0.9
    assert lin.score(Xt, yt) < 0.65


def test_full_paper_grid_is_searched():
    X, y = xor(600)
    Xd, yd = xor(200, seed=1)
    probe = MLPProbe(max_checks=2).fit(X, y, Xd, yd)
    configs = [c for c, _ in probe.grid_scores_]
    assert len(configs) == 27
    assert {c["nhid"] for c in configs} == {50, 100, 200}
    assert {c["dropout"] for c in configs} == {0.0, 0.1, 0.2}
    assert probe.best_score_ == max(s for _, s in probe.grid_scores_)
    assert probe.predict_proba(Xd).shape == (200, 2)


def test_seeded_and_deterministic():
    X, y = xor(400)
    a = MLPProbe(nhid=50, dropout=0.1, l2=1e-4, max_checks=1, random_state=1).fit(X, y)
    b = MLPProbe(nhid=50, dropout=0.1, l2=1e-4, max_checks=1, random_state=1).fit(X, y)
    c = MLPProbe(nhid=50, dropout=0.1, l2=1e-4, max_checks=1, random_state=2).fit(X, y)
    assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
    assert not np.array_equal(a.predict_proba(X), c.predict_proba(X))


def test_stacked_members_match_their_own_training():
    """Dropping finished members must not disturb the others: a member trained inside the
    grid equals the same configuration's weights when it is the last one left."""
    X, y = xor(300)
    Xd, yd = xor(100, seed=1)
    probe = MLPProbe(nhid=[50, 100], dropout=0.0, l2=[1e-5, 1e-3], max_checks=3, patience=1).fit(
        X, y, Xd, yd
    )
    assert len(probe.grid_scores_) == 4
    assert all(0.0 <= s <= 1.0 for _, s in probe.grid_scores_)
