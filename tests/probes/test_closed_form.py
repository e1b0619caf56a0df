"""The closed-form ridge probe: scikit-learn's RidgeClassifier to float tolerance, every
strength of one decomposition equal to its own fit, statistics summed batch by batch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.linear_model import RidgeClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from sentprobe.errors import SentprobeError
from sentprobe.probes import RidgeProbe, RidgeStats, make_probe
from sentprobe.probes.closed_form import RidgeSolution


def _data(n=300, d=12, K=4, seed=0, offset=0.0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(K, d))
    y = rng.integers(0, K, n)
    X = centers[y] + rng.normal(scale=1.5, size=(n, d)) + offset
    X[:, 1] = 2 * X[:, 0] + 0.01 * rng.normal(size=n)  # correlated dimensions
    return X.astype(np.float32), np.array([f"c{k}" for k in y])


def test_registered_as_ridge():
    assert isinstance(make_probe("ridge", "SentLen"), RidgeProbe)


@pytest.mark.parametrize("K", [2, 5])
@pytest.mark.parametrize("l2", [1e-3, 1e-1, 3.0])
def test_equals_sklearn_ridge_classifier(K, l2):
    X, y = _data(K=K, offset=40.0)  # a large mean: the shifted sums keep the covariance
    Z = StandardScaler().fit_transform(X.astype(np.float64))
    ref = RidgeClassifier(alpha=l2 * len(X), solver="svd").fit(Z, y)
    probe = RidgeProbe(l2=l2).fit(X, y)
    assert (probe.predict(X) == ref.predict(Z)).all()
    ours = probe.decision_function(X)
    theirs = ref.decision_function(Z)
    if K == 2:  # sklearn: one +-1 column; ours: two columns, w0 = -w1, score = z1 - z0
        theirs = 2 * theirs
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4)
    # coef_/intercept_ act on the raw features
    raw = X @ probe.coef_.T + probe.intercept_
    z = probe._logits_of(X)
    np.testing.assert_allclose(raw, z, rtol=1e-4, atol=1e-3)


def test_every_strength_of_one_decomposition_equals_its_own_fit():
    X, y = _data(K=3)
    Xd, yd = _data(n=200, K=3, seed=1)
    grid = [1e-4, 1e-2, 1.0, 30.0]
    solution = RidgeSolution(RidgeStats.of(X, y), grid)
    together = solution.scores(Xd, 0).numpy()  # (n, strengths, K)
    for i, l2 in enumerate(grid):
        alone = RidgeProbe(l2=l2).fit(X, y)
        np.testing.assert_allclose(together[:, i], alone._logits_of(Xd), rtol=1e-4, atol=1e-4)
    chosen = RidgeProbe(l2=grid).fit(X, y, Xd, yd)
    accs = [
        float((solution.predict_codes(Xd, 0)[:, i].numpy() == _codes(yd)).mean()) for i in range(4)
    ]
    assert chosen.best_params_["l2"] == grid[int(np.argmax(accs))]
    assert chosen.best_score_ == pytest.approx(max(accs))
    assert chosen.selection_ == "dev"


def _codes(y):
    return np.searchsorted(np.unique(y), y)


def test_accumulated_batches_equal_one_fit():
    X, y = _data(n=500, K=3)
    Xd, yd = _data(n=100, K=3, seed=2)
    whole = RidgeProbe().fit(X, y, Xd, yd)
    parts = RidgeProbe()
    for start in range(0, len(X), 64):
        parts.accumulate(X[start : start + 64], y[start : start + 64], classes=np.unique(y))
    parts.fit_accumulated(Xd, yd)
    assert parts.best_params_ == whole.best_params_
    np.testing.assert_allclose(parts.decision_function(Xd), whole.decision_function(Xd), atol=1e-4)
    with pytest.raises(ValueError, match="classes="):
        RidgeProbe().accumulate(X, y)
    with pytest.raises(ValueError, match="no dev split"):
        RidgeProbe().accumulate(X, y, classes=np.unique(y)).fit_accumulated()


def test_views_in_one_batched_solve_equal_each_view_alone():
    rng = np.random.default_rng(3)
    X, y = _data(n=400, K=3)
    Xd, yd = _data(n=150, K=3, seed=4)
    mix = rng.normal(size=(3, X.shape[1], X.shape[1])).astype(np.float32)
    views = np.stack([X @ m for m in mix], 1)  # (n, 3, d)
    dev = np.stack([Xd @ m for m in mix], 1)
    stats = RidgeStats(np.unique(y), views=3)
    for start in range(0, len(X), 100):
        stats.update(views[start : start + 100], y[start : start + 100])
    fitted = RidgeProbe.fit_views(stats, dev, yd)
    for v in range(3):
        alone = RidgeProbe().fit(views[:, v], y, dev[:, v], yd)
        assert fitted[v].best_params_ == alone.best_params_
        np.testing.assert_allclose(
            fitted[v].decision_function(dev[:, v]), alone.decision_function(dev[:, v]), atol=1e-3
        )


def test_cv_without_dev_and_constant_feature():
    X, y = _data(n=200, K=3)
    X[:, 3] = 7.0  # constant on train: scale 1, as StandardScaler
    probe = RidgeProbe(l2=[1e-2, 1.0]).fit(X, y)
    assert probe.selection_.startswith("cv")
    assert np.isfinite(probe.decision_function(X)).all()
    Z = StandardScaler().fit_transform(X.astype(np.float64))
    ref = RidgeClassifier(alpha=probe.best_params_["l2"] * len(X), solver="svd").fit(Z, y)
    assert (probe.predict(X) == ref.predict(Z)).mean() > 0.99


def test_tied_classes_share_the_first_ones_scores():
    """Classes with equal counts and vector sums (a degenerate feature) score identically,
    whatever the rounding: the first is predicted (as LogisticProbe's tied_classes)."""
    X = np.array([[3.0], [5.0], [4.0], [4.0], [2.0], [6.0], [0.0], [3.0], [6.0]])
    y = np.array([0, 0, 1, 1, 2, 2, 2, 3, 3])
    assert RidgeSolution(RidgeStats.of(X, y), [1e-2]).tied.tolist() == [0, 0, 2, 3]
    rng = np.random.default_rng(5)
    real = rng.normal(size=(300, 6))
    solution = RidgeSolution(RidgeStats.of(real, np.arange(300) % 20), [1e-2])
    assert solution.tied.tolist() == list(range(20))
    probe = RidgeProbe(l2=1e-2).fit(X.astype(np.float32), y)
    scores = probe.decision_function(np.array([[4.0]], dtype=np.float32))
    assert scores[0, 0] == scores[0, 1]


def test_bad_batches_are_one_line_errors():
    stats = RidgeStats(["a", "b"])
    with pytest.raises(SentprobeError, match="not one of the classes"):
        stats.update(np.zeros((2, 3)), ["a", "z"])
    with pytest.raises(SentprobeError, match="2 vectors but 1 labels"):
        stats.update(np.zeros((2, 3)), ["a"])
    stats.update(np.zeros((2, 3)), ["a", "b"])
    with pytest.raises(SentprobeError, match="4 dimensions after 3"):
        stats.update(np.zeros((2, 4)), ["a", "b"])
    with pytest.raises(SentprobeError, match="no training items"):
        RidgeSolution(RidgeStats(["a"]), [1.0])


def test_check_estimator_passes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(RidgeProbe(l2=1e-2), on_fail=None)
    failed = [f"{r['check_name']}: {r['exception']}" for r in results if r["status"] == "failed"]
    assert failed == []
    results = check_estimator(RidgeProbe(), on_fail=None)  # the grid, by CV without dev
    failed = [f"{r['check_name']}: {r['exception']}" for r in results if r["status"] == "failed"]
    assert failed == []
