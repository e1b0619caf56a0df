"""``device`` (``--probe-device``) of the logistic, MLP and ridge probes: the device path
gives the CPU's predictions up to float rounding. Exercised here with ``cpu`` and ``auto``
(the CPU on a machine without CUDA); the ``cuda`` cases run only where a GPU is present."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sentprobe.errors import SentprobeError
from sentprobe.probes import LogisticProbe, MLPProbe, RidgeProbe, make_probe
from sentprobe.probes.devices import resolve_device

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
DEVICES = ["cpu", "auto", pytest.param("cuda", marks=CUDA)]
PROBES = {
    "logreg": lambda device: LogisticProbe(device=device),
    "mlp": lambda device: MLPProbe(
        nhid=[16, 32], dropout=[0.0, 0.1], l2=1e-4, max_checks=6, device=device
    ),
    "ridge": lambda device: RidgeProbe(device=device),
}


def _data(n, seed, K=3, d=10):
    rng = np.random.default_rng(seed)
    centers = np.random.default_rng(0).normal(size=(K, d))
    y = rng.integers(0, K, n)
    return (centers[y] + rng.normal(scale=1.2, size=(n, d))).astype(np.float32), y


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(PROBES))
def test_device_path_predicts_as_the_cpu(name, device):
    X, y = _data(400, 1)
    Xd, yd = _data(150, 2)
    Xt, _ = _data(200, 3)
    ref = PROBES[name]("cpu").fit(X, y, Xd, yd)
    moved = PROBES[name](device).fit(X, y, Xd, yd)
    assert moved.best_params_ == ref.best_params_
    assert (moved.predict(Xt) == ref.predict(Xt)).mean() >= 0.99
    np.testing.assert_allclose(
        moved.decision_function(Xt), ref.decision_function(Xt), rtol=1e-3, atol=1e-3
    )
    # the fitted weights live on the CPU, whatever device trained them
    assert all(t.device.type == "cpu" for t in moved.params_.values())


def test_the_device_is_checked():
    with pytest.raises(ValueError, match="device must be one of"):
        LogisticProbe(device="tpu").fit(*_data(50, 0))
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(SentprobeError, match="no CUDA device"):
            RidgeProbe(device="cuda").fit(*_data(50, 0))


def test_make_probe_gives_the_device_to_probes_that_take_one():
    assert make_probe("logreg", "SentLen", device="auto").device == "auto"
    assert make_probe("mlp", "SentLen", device="cpu").device == "cpu"
    assert make_probe("ridge", "WC", device="auto").device == "auto"
    assert "device" not in make_probe("senteval", "SentLen", device="auto").get_params()
