"""A probe's result does not depend on the thread count (issue 49): the same data fitted
under 1, 2 and 4 torch threads in one process gives the same weights, dev score and
predictions, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sentprobe.parallel import THREADS_VARIABLE
from sentprobe.probes import LogisticProbe, MLPProbe, SentEvalProbe
from sentprobe.probes._common import item_blocks, item_product, row_sums

THREADS = (1, 2, 4)


def data(n: int = 1200, d: int = 384, k: int = 20, seed: int = 0):
    """Overlapping classes in the shape that made MKL split the logistic gradient's sum over
    items between threads (1,200 items x 385 inputs x 7 strengths x 20 classes)."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, d)) * 0.15
    y = rng.integers(0, k, n + 600)
    X = (centers[y] + rng.normal(size=(n + 600, d))).astype(np.float32)
    labels = np.array([f"c{i:02d}" for i in y])
    return (X[:n], labels[:n]), (X[n : n + 300], labels[n : n + 300]), X[n + 300 :]


def weights(probe) -> list[torch.Tensor]:
    params = probe.params_
    return list(params.values()) if isinstance(params, dict) else list(params)


@pytest.fixture
def threads(monkeypatch):
    """``set(n)``: n torch threads for the next fit (the probes read their share from
    ``SENTPROBE_NUM_THREADS``); the process's thread count is restored afterwards."""
    before = torch.get_num_threads()

    def set_threads(n: int) -> None:
        monkeypatch.setenv(THREADS_VARIABLE, str(n))
        torch.set_num_threads(n)

    yield set_threads
    torch.set_num_threads(before)


def fit_under_threads(make, set_threads, **shape):
    (X, y), (Xd, yd), Xt = data(**shape)
    out = []
    for n in THREADS:
        set_threads(n)
        probe = make().fit(X, y, Xd, yd)
        assert torch.get_num_threads() == n
        out.append((probe.predict(Xt), probe.best_score_, probe.best_params_, weights(probe)))
    return out


def assert_identical(fits) -> None:
    pred, score, best, params = fits[0]
    for n, (p, s, b, w) in zip(THREADS[1:], fits[1:]):
        assert np.array_equal(p, pred), f"predictions differ under {n} threads"
        assert s == score and b == best, f"dev selection differs under {n} threads"
        assert all(torch.equal(a, c) for a, c in zip(w, params)), f"weights differ ({n} threads)"


def test_logistic_probe_is_the_same_under_any_thread_count(threads):
    assert_identical(fit_under_threads(LogisticProbe, threads))


def test_mlp_probe_is_the_same_under_any_thread_count(threads):
    make = lambda: MLPProbe(nhid=(50, 100), dropout=(0.0, 0.1), l2=1e-4, max_checks=2)  # noqa: E731
    assert_identical(fit_under_threads(make, threads, n=600, d=128, k=5))


@pytest.mark.parametrize("loss", ["sum", "mean"])
def test_senteval_probe_is_the_same_under_any_thread_count(threads, loss):
    make = lambda: SentEvalProbe(  # noqa: E731
        nhid=(0, 50), dropout=0.1, l2=1e-4, max_epoch=4, loss=loss, retrain=False
    )
    assert_identical(fit_under_threads(make, threads, n=600, d=128, k=5))


@pytest.mark.parametrize("n, m", [(1200, 140), (700, 3), (256, 5), (1, 2)])
def test_item_product_is_the_matrix_product(n, m):
    gen = torch.Generator().manual_seed(n)
    X, M = torch.randn(n, 385, generator=gen), torch.randn(n, m, generator=gen)
    got = item_product(item_blocks(X), M)
    assert torch.allclose(got.double(), X.double().T @ M.double(), atol=1e-4, rtol=1e-4)


def test_item_product_and_row_sums_do_not_follow_the_thread_count(threads):
    gen = torch.Generator().manual_seed(0)
    X, M = torch.randn(1200, 385, generator=gen), torch.randn(1200, 140, generator=gen)
    long = torch.randn(1, 385 * 200, generator=gen)  # one row of 77,000 terms
    blocks = item_blocks(X)
    out = []
    for n in THREADS:
        threads(n)
        out.append((item_product(blocks, M), row_sums(long), row_sums(long, torch.float64)))
    for got in out[1:]:
        assert all(torch.equal(a, b) for a, b in zip(got, out[0]))
    assert torch.allclose(out[0][2], long.double().sum(-1))
