"""Every probe keeps scikit-learn's estimator contract (``check_estimator``) and checks its
parameters in ``fit`` with scikit-learn's error types."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import check_estimator

from sentprobe.probes import LogisticProbe, MDLProbe, MLPProbe, SentEvalProbe

#: Each probe with settings that train check_estimator's small data sets quickly (one
#: configuration, few steps); the checks do not depend on the grid's size.
PROBES = {
    "logreg": LogisticProbe(l2=1e-2),
    "mlp": MLPProbe(nhid=16, dropout=0.0, l2=1e-4, lr=0.1, eval_steps=2, max_checks=5),
    "senteval": SentEvalProbe(
        nhid=0, dropout=0.0, l2=1e-4, lr=0.1, batch_size=128, epoch_size=2, max_epoch=4, kfold=2
    ),
    "mdl": MDLProbe(l2=1e-2, priors=(1.0,), portions=(25.0, 100.0)),
}


@pytest.mark.parametrize("name", list(PROBES))
def test_check_estimator_passes(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings on the checks' tiny data
        results = check_estimator(PROBES[name], on_fail=None)
    failed = [f"{r['check_name']}: {r['exception']}" for r in results if r["status"] == "failed"]
    assert failed == []
    skipped = {r["check_name"] for r in results if r["status"] == "skipped"}
    assert skipped <= {"check_array_api_input"}  # only for lack of SCIPY_ARRAY_API


def _data(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.where(X[:, 0] > 0, "yes", "no")


@pytest.mark.parametrize(
    "probe, error, match",
    [
        (LogisticProbe(l2=-1), ValueError, "l2 == -1, must be >= 0"),
        (LogisticProbe(l2=[]), ValueError, "l2 must be a value or a non-empty list"),
        (LogisticProbe(l2=[1e-3, -1.0]), ValueError, "l2 == -1.0, must be >= 0"),
        (LogisticProbe(l2="strong"), TypeError, "l2 must be an instance of"),
        (LogisticProbe(max_iter=0), ValueError, "max_iter == 0, must be >= 1"),
        (MLPProbe(dropout=1.5), ValueError, r"dropout == 1.5, must be < 1"),
        (MLPProbe(nhid=[50, 0]), ValueError, "nhid == 0, must be >= 1"),
        (MLPProbe(random_state=-1), ValueError, "random_state == -1, must be >= 0"),
        (SentEvalProbe(dropout=[0.1, 1.0]), ValueError, "dropout == 1.0, must be < 1"),
        (SentEvalProbe(kfold=1), ValueError, "kfold == 1, must be >= 2"),
        (MDLProbe(priors=[0.0]), ValueError, "priors == 0.0, must be > 0"),
        (MDLProbe(portions=[50, 150]), ValueError, "portions == 150, must be <= 100"),
    ],
)
def test_parameters_are_checked_in_fit(probe, error, match):
    X, y = _data()
    with pytest.raises(error, match=match):
        probe.fit(X, y)


def test_fit_refuses_what_it_cannot_probe():
    X, y = _data()
    probe = LogisticProbe(l2=1e-2)
    with pytest.raises(NotFittedError):
        probe.predict(X)
    with pytest.raises(TypeError, match="Sparse data was passed"):
        probe.fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        probe.fit(X, X[:, 0])
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        probe.fit(bad, y)
    with pytest.raises(ValueError, match="X has 3 features, but LogisticProbe is expecting 4"):
        probe.fit(X, y, X[:, :3], y)  # a dev split of another width
    probe.fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but LogisticProbe is expecting 4"):
        probe.predict(X[:, :3])
    assert not probe.__sklearn_tags__().input_tags.sparse


@pytest.mark.parametrize("name", list(PROBES))
def test_binary_decision_function_is_one_score(name):
    """Two classes: one score per row, positive for ``classes_[1]`` (scikit-learn's rule)."""
    X, y = _data(n=120)
    probe = PROBES[name].fit(X, y)
    score = probe.decision_function(X)
    assert score.shape == (len(X),)
    np.testing.assert_array_equal(probe.predict(X), probe.classes_[(score > 0).astype(int)])


@pytest.mark.slow
@pytest.mark.parametrize("probe", [MLPProbe(), SentEvalProbe()], ids=["mlp", "senteval"])
def test_check_estimator_passes_on_the_defaults(probe):
    """The defaults themselves (the paper's grid): without a dev split they stop early on a
    held-out part of train, so the whole check ran in 2-3 minutes on 2 busy cores."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(probe, on_fail=None)
    assert [r["check_name"] for r in results if r["status"] == "failed"] == []


@pytest.mark.parametrize("probe", [MLPProbe(), SentEvalProbe()], ids=["mlp", "senteval"])
def test_without_dev_the_defaults_stop_early_on_held_out_train(probe):
    X, y = _data(n=200)
    probe.fit(X, y)
    assert probe.selection_ == "holdout"
    assert probe.score(X, y) > 0.8


@pytest.mark.parametrize("name", list(PROBES))
def test_fit_leaves_torch_threads_as_they_were(name):
    import torch

    before = torch.get_num_threads()
    try:
        for n in (1, 3):
            torch.set_num_threads(n)
            PROBES[name].fit(*_data())
            assert torch.get_num_threads() == n
    finally:
        torch.set_num_threads(before)


def test_a_dev_split_goes_through_a_pipelines_transformers():
    import sklearn
    from sklearn.decomposition import PCA
    from sklearn.pipeline import Pipeline

    X, y = _data(n=200, d=10)
    probe = LogisticProbe(l2=[1e-3, 1e-1])
    plain = Pipeline([("pca", PCA(3)), ("probe", probe)])
    with pytest.raises(ValueError, match=r"transform_input=\['X_dev'\]"):
        plain.fit(X[:150], y[:150], probe__X_dev=X[150:], probe__y_dev=y[150:])
    with sklearn.config_context(enable_metadata_routing=True):
        routed = Pipeline(
            [("pca", PCA(3)), ("probe", LogisticProbe(l2=[1e-3, 1e-1]))],
            transform_input=["X_dev"],
        )
        routed[-1].set_fit_request(X_dev=True, y_dev=True)
        routed.fit(X[:150], y[:150], X_dev=X[150:], y_dev=y[150:])
    assert routed[-1].selection_ == "dev" and routed[-1].n_features_in_ == 3
