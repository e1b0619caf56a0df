"""Shared probe plumbing: feature scaling, versions and seed dependence of every probe."""

import numpy as np
import pytest
import torch

from sentprobe.encoders.length import LengthEncoder
from sentprobe.probes import (
    LogisticProbe,
    MajorityProbe,
    MLPProbe,
    NBTfidfProbe,
    SentEvalProbe,
)
from sentprobe.probes._common import Standardizer


def test_constant_training_feature_does_not_explode_at_test_time():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)).astype(np.float32)
    X[:, 1] = 0.1  # constant on train
    scaler = Standardizer(torch.from_numpy(X))
    assert scaler.scale[1] == 1.0  # as sklearn's StandardScaler
    z = scaler(torch.tensor([[0.0, 0.35, 0.0]]))
    assert z[0, 1].item() == pytest.approx(0.25, abs=1e-6)  # shifted, not divided by ~0
    # a probe trained with that column predicts sanely on test rows that vary in it
    y = np.where(X[:, 0] > 0, "a", "b")
    probe = LogisticProbe(l2=1e-3).fit(X, y)
    Xt = X.copy()
    Xt[:, 1] = rng.normal(size=200)
    assert np.abs(probe.decision_function(Xt)).max() < 100
    assert probe.score(Xt, y) > 0.9


def test_scale_is_the_population_standard_deviation():
    X = torch.tensor([[0.0], [2.0]])
    assert Standardizer(X).scale.item() == pytest.approx(1.0)  # sklearn: ddof=0


def test_every_probe_and_baseline_has_a_version():
    for cls in (LogisticProbe, MLPProbe, SentEvalProbe, MajorityProbe, NBTfidfProbe, LengthEncoder):
        assert isinstance(cls.version, str) and cls.version
    assert LengthEncoder().fingerprint.endswith(f"v{LengthEncoder.version}")


def _blobs(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = (rng.normal(size=(n, 5)) + y[:, None]).astype(np.float32)
    return X, np.array(["a", "b"])[y]


def test_uses_seed_says_whether_a_seed_changes_the_result():
    X, y = _blobs(300, 0)
    Xd, yd = _blobs(100, 1)
    fits = [LogisticProbe(random_state=s).fit(X, y, Xd, yd) for s in (0, 1)]
    assert not fits[0].uses_seed  # L-BFGS from zero on a fixed dev split
    assert np.array_equal(fits[0].coef_, fits[1].coef_)
    cv = [LogisticProbe(l2=[1e-4, 1e-1], random_state=s).fit(X, y) for s in (0, 1, 2)]
    assert cv[0].uses_seed and cv[0].selection_.startswith("cv")  # folds depend on the seed
    single = LogisticProbe(l2=1e-3).fit(X, y)
    assert not single.uses_seed  # one configuration, no selection, nothing random
    assert MLPProbe().uses_seed and SentEvalProbe().uses_seed
    assert not MajorityProbe.uses_seed and not NBTfidfProbe.uses_seed
    # the MLP's seed reaches initialisation and minibatch order
    a, b = (
        MLPProbe(nhid=8, dropout=0.0, l2=1e-4, max_checks=1, random_state=s).fit(X, y, Xd, yd)
        for s in (0, 1)
    )
    assert not torch.equal(a.params_["W1"], b.params_["W1"])
