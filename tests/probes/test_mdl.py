"""MDL probe: block boundaries, the codelength arithmetic, and a hand-computed online code."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
import torch

from sentprobe.probes import make_probe
from sentprobe.probes.mdl import MDLProbe, block_bits, block_ends, online_codelength


def test_block_ends_follow_the_papers_portions() -> None:
    assert block_ends(1000) == [1, 2, 4, 8, 16, 32, 62, 125, 250, 500, 1000]
    assert block_ends(10) == [1, 2, 5, 10]  # portions rounding to a taken end are dropped
    assert block_ends(7, (50.0,)) == [4, 7]  # the last block always ends at n


def test_codelength_arithmetic() -> None:
    # two labels at log2(4) = 2 bits, blocks of 3 and 5 bits, 4 models to choose from (2 bits)
    assert online_codelength(2, 4, [3.0, 5.0]) == pytest.approx(12.0)
    assert online_codelength(2, 4, [3.0, 5.0], choices=4) == pytest.approx(16.0)
    # items: p(y) = 1/2 and 1/4 under model 0, 1 and 1 under model 1 -> 3 bits and 0 bits
    probs = torch.tensor([[[0.5, 0.5], [0.0, 1.0]], [[0.25, 0.75], [1.0, 0.0]]])
    got = block_bits(torch.log(probs.clamp_min(1e-30)), torch.tensor([1, 0]))
    assert got.tolist() == pytest.approx([3.0, 0.0])


def test_online_code_by_hand() -> None:
    """Constant vectors carry nothing, so each block model predicts its prefix's label
    frequencies (the maximum-likelihood bias), and the code can be computed by hand."""
    y = np.array(list("aabab" * 4))  # 20 items
    X = np.ones((20, 3), dtype=np.float32)
    probe = MDLProbe(portions=(25.0, 50.0, 100.0), l2=1e-3, random_state=7).fit(X, y)
    ys = y[np.random.default_rng(7).permutation(20)]  # the order the probe codes them in
    expected = 5 * math.log2(2)  # first block: 5 labels, uniform code
    for start, end in ((5, 10), (10, 20)):
        freq = Counter(ys[:start])
        expected += sum(-math.log2(freq[label] / start) for label in ys[start:end])
    assert probe.block_ends_ == [5, 10, 20]
    assert probe.codelength_ == pytest.approx(expected, abs=1e-3)
    assert probe.uniform_codelength_ == pytest.approx(20.0)
    assert probe.report_["compression"] == pytest.approx(20.0 / expected, rel=1e-4)


def test_learnable_labels_compress_and_random_labels_do_not() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 8)).astype(np.float32)
    learnable = np.where(X[:, 0] > 0, "pos", "neg")
    noise = rng.permutation(learnable)
    good = make_probe("mdl", "Toy").fit(X[:400], learnable[:400], X[400:], learnable[400:])
    bad = make_probe("mdl", "Toy").fit(X[:400], noise[:400], X[400:], noise[400:])
    assert good.compression_ > 3.0
    assert bad.compression_ < 1.05
    assert (good.predict(X[400:]) == learnable[400:]).mean() > 0.95  # the final probe predicts
    assert good.best_params_["l2"] in good.l2 and good.selection_ == "dev"
