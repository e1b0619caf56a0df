import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from sentprobe.probes.linear import DEFAULT_L2, LogisticProbe, _Stacked, tied_classes


def blobs(n, k=3, d=10, sep=3.0, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, d)) * sep
    y = rng.integers(0, k, n)
    X = centers[y] + rng.normal(size=(n, d))
    return X.astype(np.float32), np.array([f"c{i}" for i in y])


def test_is_a_sklearn_estimator():
    X, y = blobs(300)
    probe = LogisticProbe(l2=1e-3)
    assert probe.fit(X, y) is probe
    assert clone(probe).get_params()["l2"] == 1e-3
    assert set(probe.classes_) == {"c0", "c1", "c2"}
    assert probe.predict_proba(X).shape == (300, 3)
    assert np.allclose(probe.predict_proba(X).sum(1), 1, atol=1e-5)
    assert probe.coef_.shape == (3, 10)
    assert probe.score(X, y) > 0.95


def assert_reaches_sklearn_optimum(probe, X, y, lam: float, max_iter: int) -> None:
    """The probe's weights are at least as good, on its own penalised objective (z-scored
    features, L2 ``lam`` on the mean loss), as scikit-learn's converged LogisticRegression,
    up to what the stopping rule leaves: gtol=1e-4 on the gradient stops ~1e-4 above the
    optimum's loss on these problems, where 20 iterations of a weak penalty are 1.6e-3 above."""
    Xs = ((X - X.mean(0)) / X.std(0)).astype(np.float32)
    ref = LogisticRegression(C=1 / (lam * len(X)), tol=1e-10, max_iter=max_iter).fit(Xs, y)
    yi = torch.from_numpy(np.searchsorted(probe.classes_, y))
    fun = _Stacked(torch.from_numpy(Xs), yi, torch.tensor([lam]), len(probe.classes_))
    ours = torch.cat([torch.from_numpy(probe.coef_.T), torch.from_numpy(probe.intercept_)[None]])
    theirs = torch.tensor(np.vstack([ref.coef_.T, ref.intercept_[None]]), dtype=torch.float32)
    f_ours = fun(ours.reshape(1, -1), torch.tensor([0]))[0].item()
    f_ref = fun(theirs.reshape(1, -1), torch.tensor([0]))[0].item()
    assert f_ours <= f_ref + 3e-4


def test_reaches_the_same_optimum_as_sklearn():
    X, y = blobs(500, sep=0.5, seed=1)
    lam = 1e-2
    probe = LogisticProbe(l2=lam, max_iter=1000).fit(X, y)
    assert_reaches_sklearn_optimum(probe, X, y, lam, max_iter=5000)


def test_grid_is_selected_on_dev():
    X, y = blobs(400, sep=0.4, seed=2)
    Xd, yd = blobs(200, sep=0.4, seed=2)
    probe = LogisticProbe(l2=[1e-5, 1e-1, 10.0]).fit(X, y, Xd, yd)
    assert probe.selection_ == "dev"
    scores = [s for _, s in probe.grid_scores_]
    assert probe.best_score_ == max(scores)
    assert probe.best_params_ == probe.grid_scores_[int(np.argmax(scores))][0]
    # a huge penalty is visibly worse on dev
    assert scores[2] < max(scores)


class SpyProbe(LogisticProbe):
    """Records every feature row ``fit`` and ``predict`` receive."""

    seen: dict[str, list[np.ndarray]] = {"fit": [], "predict": []}

    def fit(self, X, y, X_dev=None, y_dev=None):
        self.seen["fit"] += [np.asarray(X)] + ([] if X_dev is None else [np.asarray(X_dev)])
        return super().fit(X, y, X_dev, y_dev)

    def predict(self, X):
        self.seen["predict"].append(np.asarray(X))
        return super().predict(X)


def test_the_runner_never_gives_test_rows_to_fit(tmp_path):
    from sentprobe.datasets import make_mock_task
    from sentprobe.encoders.custom import CallableEncoder
    from sentprobe.evaluation.runner import run
    from sentprobe.registry import probes

    task = make_mock_task("Spy", n_train=120, n_dev=40, n_test=40, seed=7)

    def encode(sentences):  # a distinct, content-derived vector per sentence
        return np.array(
            [[len(s), sum(map(ord, s)) % 997, hash(s) % 1009] for s in sentences], np.float32
        )

    enc = CallableEncoder(encode, name="spy", fingerprint="spy-v1")
    probes.register("spy-logreg", lambda t, seed=0: SpyProbe(l2=1e-3), overwrite=True)
    SpyProbe.seen = {"fit": [], "predict": []}
    run([enc], [task], baselines="none", probe="spy-logreg", results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "c", progress=False)  # fmt: skip
    rows = lambda split: {tuple(r) for r in encode(task.splits[split].sentences)}  # noqa: E731
    fitted = {tuple(r) for X in SpyProbe.seen["fit"] for r in X}
    assert fitted == rows("train") | rows("dev")
    assert not fitted & rows("test")
    assert {tuple(r) for r in SpyProbe.seen["predict"][-1]} == rows("test")


def test_the_selected_strength_is_trained_to_convergence():
    """best_params_["l2"] is the regulariser of the scored model: its objective is at the
    optimum scikit-learn finds for that strength (not a few early-stopped steps from zero)."""
    X, y = blobs(600, d=50, sep=0.3, seed=1)  # weak penalty: many L-BFGS steps to converge
    X, y, Xd, yd = X[:300], y[:300], X[300:], y[300:]
    lam = 1e-4
    probe = LogisticProbe(l2=lam).fit(X, y, Xd, yd)
    assert_reaches_sklearn_optimum(probe, X, y, lam, max_iter=10000)
    assert probe.n_iter_ > 5
    assert probe.best_score_ == pytest.approx(probe.score(Xd, yd))


def test_cross_validation_without_dev():
    X, y = blobs(300, seed=3)
    probe = LogisticProbe(l2=[1e-4, 1e-2], cv=3).fit(X, y)
    assert probe.selection_ == "cv3"
    assert len(probe.grid_scores_) == 2
    assert probe.score(X, y) > 0.9


def test_unseen_dev_label_counts_as_wrong():
    X, y = blobs(200, k=2, seed=4)
    yd = y.copy()
    yd[:10] = "never-seen"
    probe = LogisticProbe(l2=1e-3).fit(X, y, X, yd)
    assert probe.best_score_ <= 1 - 10 / 200 + 1e-6


def test_rejects_bad_features():
    X, y = blobs(50)
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):  # scikit-learn's message
        LogisticProbe().fit(X, y)


def test_many_classes_take_the_warm_started_path():
    X, y = blobs(1200, k=60, d=20, sep=2.0, seed=5)
    Xd, yd = blobs(600, k=60, d=20, sep=2.0, seed=5)
    path = LogisticProbe(l2=[1e-1, 1e-3], stack_limit=10).fit(X, y, Xd, yd)
    stacked = LogisticProbe(l2=[1e-1, 1e-3], stack_limit=10_000).fit(X, y, Xd, yd)
    assert abs(path.score(Xd, yd) - stacked.score(Xd, yd)) < 0.05
    # warm starts reach the same optima as solves from zero
    assert abs(path.best_score_ - stacked.best_score_) < 0.02
    cv = LogisticProbe(l2=[1e-1, 1e-3], stack_limit=10, cv=3).fit(X, y)
    assert cv.selection_ == "cv3" and cv.score(Xd, yd) > 0.5


def lengths(n_classes=80, per_class=6, seed=0):
    """A degenerate feature: one small integer (a length) for many classes (WC on Length)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(3, 25, (n_classes * per_class, 1)).astype(np.float32)
    return X, np.repeat(np.arange(n_classes), per_class)


def test_tied_classes_are_those_with_equal_counts_and_feature_sums():
    X = torch.tensor([[3.0], [5.0], [4.0], [4.0], [2.0], [6.0], [0.0], [3.0], [6.0]])
    y = torch.tensor([0, 0, 1, 1, 2, 2, 2, 3, 3])
    Xs = (X - X.mean()) / X.std()  # z-scored as the probe sees it: sums equal up to rounding
    # 0 and 1 sum to 8 over two rows; 2 sums to 8 over three; 3 sums to 9
    assert tied_classes(Xs, y, 4).tolist() == [0, 0, 2, 3]
    real = torch.from_numpy(blobs(300, k=20)[0])
    assert tied_classes(real, torch.arange(300) % 20, 20).tolist() == list(range(20))


@pytest.mark.parametrize("l2", DEFAULT_L2)
def test_predictions_do_not_follow_floating_point_noise(l2):
    """Reordering the training rows changes only the rounding of every sum (as another
    machine's BLAS or thread count does); classes tied by a degenerate feature must still
    get the same predictions and dev score."""
    X, y = lengths()
    X_dev, y_dev = lengths(seed=1)
    X_test = np.arange(3, 25, dtype=np.float32)[:, None]
    order = np.random.default_rng(2).permutation(len(X))
    a = LogisticProbe(l2=l2).fit(X, y, X_dev, y_dev)
    b = LogisticProbe(l2=l2).fit(X[order], y[order], X_dev, y_dev)
    assert np.abs(a.coef_ - b.coef_).max() > 0  # the fits differ by rounding
    assert a.grid_scores_ == b.grid_scores_
    assert a.predict(X_test).tolist() == b.predict(X_test).tolist()


def lengths_and_counts(seed=0):
    """Two degenerate features: a length and a small count (of commas, say) per sentence."""
    X, y = lengths(seed=seed)
    counts = np.random.default_rng(seed + 100).integers(0, 4, (len(X), 1)).astype(np.float32)
    return np.hstack([X, counts]), y


def test_predictions_do_not_follow_the_rounding_of_the_features():
    """Perturb the rounding itself, not only the row order: features moved by about one
    float32 ulp (relative noise 1e-7), and the columns swapped (every dot product summed in
    another order). Every strength of the default grid (80 classes x 7 strengths: the
    warm-started path) keeps its dev score, and the chosen model its predictions."""
    X, y = lengths_and_counts()
    X_dev, y_dev = lengths_and_counts(seed=50)
    X_test = np.array([[n, c] for n in range(3, 25) for c in range(4)], dtype=np.float32)
    ref = LogisticProbe().fit(X, y, X_dev, y_dev)
    assert len(ref.grid_scores_) == len(DEFAULT_L2)
    noisy = (X * (1 + 1e-7 * np.random.default_rng(3).standard_normal(X.shape))).astype(np.float32)
    assert (noisy != X).any()  # the noise moved some features by an ulp
    swap = [1, 0]
    for Xv, Xdv, Xtv in ((noisy, X_dev, X_test), (X[:, swap], X_dev[:, swap], X_test[:, swap])):
        probe = LogisticProbe().fit(Xv, y, Xdv, y_dev)
        assert probe.grid_scores_ == ref.grid_scores_
        assert probe.predict(Xtv).tolist() == ref.predict(X_test).tolist()


def test_loss_differences_below_a_float32_ulp_are_measured():
    """The line search compares losses whose difference near the optimum is below a float32
    ulp of the loss; a float32 sum would round it to 0 or a whole ulp, so the comparison
    would follow the rounding of the machine's sums. Summed in float64, the difference
    matches a float64 computation."""
    rng = np.random.default_rng(0)
    n, d, K = 20_000, 10, 5
    X = torch.from_numpy(rng.standard_normal((n, d)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, K, n))
    fun = _Stacked(X, y, torch.tensor([1e-3]), K)
    W = torch.from_numpy(0.1 * rng.standard_normal((1, (d + 1) * K)).astype(np.float32))
    W2 = W * (1 + 2e-7)  # a step whose loss change is below a float32 ulp of the loss
    idx = torch.tensor([0])
    f1, f2 = fun(W, idx)[0], fun(W2, idx)[0]
    ref = _Stacked(X.double(), y, torch.tensor([1e-3], dtype=torch.float64), K)
    r1, r2 = ref(W.double(), idx)[0], ref(W2.double(), idx)[0]
    true = float(r2 - r1)
    assert 0 < abs(true) < np.spacing(np.float32(r1.item()))  # below one ulp of the loss
    assert abs(float(f2 - f1) - true) < 0.1 * abs(true)
