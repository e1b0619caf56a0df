"""Statistics of test accuracies: intervals that cover, tests checked against hand counts."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from sentprobe.analysis.stats import (
    accuracy_interval,
    bootstrap_accuracies,
    bootstrap_ci,
    holm,
    mcnemar_exact,
    paired_bootstrap_diff,
    paired_permutation_test,
    paired_test,
)


def test_ci_covers_a_known_accuracy_about_95_percent_of_the_time():
    """200 simulated test sets of 400 items from a classifier with accuracy 0.72."""
    rng = np.random.default_rng(1)
    truth, covered = 0.72, 0
    for draw in range(200):
        correct = rng.random(400) < truth
        low, high = bootstrap_ci(correct, seed=draw)
        covered += low <= truth <= high
    assert 0.90 <= covered / 200 <= 0.99


def test_seed_ci_covers_the_mean_over_seeds_and_items():
    """Seeds of one probe on shared test items: item effects are common to every seed (an
    item is hard or easy), seed effects shift each seed's accuracy. The two-way interval
    must cover the expected accuracy; treating items as independent per seed would not."""
    rng = np.random.default_rng(2)
    n_items, n_seeds, covered, pooled = 300, 5, 0, 0
    truth = _expected_accuracy()
    for draw in range(200):
        item = rng.normal(0.8, 1.0, size=n_items)  # item easiness (logit scale)
        seed = rng.normal(0.0, 0.15, size=(n_seeds, 1))
        p = 1 / (1 + np.exp(-(item + seed)))
        correct = rng.random((n_seeds, n_items)) < p
        low, high = bootstrap_ci(correct, seed=draw)
        covered += low <= truth <= high
        low, high = bootstrap_ci(correct.reshape(1, -1), seed=draw)  # items x seeds pooled
        pooled += low <= truth <= high
    assert 0.88 <= covered / 200 <= 0.995
    assert pooled / 200 < 0.85  # pooling treats the shared items as independent: too narrow


def _expected_accuracy() -> float:
    """E[sigmoid(item + seed)] for the simulation above, by a large Monte Carlo."""
    rng = np.random.default_rng(99)
    z = rng.normal(0.8, 1.0, 400_000) + rng.normal(0.0, 0.15, 400_000)
    return float(np.mean(1 / (1 + np.exp(-z))))


def test_bootstrap_is_deterministic_and_never_builds_a_resample_matrix():
    """The bootstrap works on counts of item kinds (module docstring), so its memory does not
    grow with resamples x items: resampling item indices, the obvious implementation, needs
    an 80 MB index matrix here (1,000 x 10,000 int64) and ~130 MB at peak. Memory, unlike
    wall-clock time, does not depend on how busy the machine is."""
    correct = np.random.default_rng(0).random(10_000) < 0.7
    assert bootstrap_ci(correct) == bootstrap_ci(correct)
    seeds = np.random.default_rng(1).random((5, 10_000)) < 0.7
    tracemalloc.start()
    try:
        bootstrap_ci(seeds)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8_000_000  # measured 0.6 MB; the index matrix alone is 80 MB
    assert bootstrap_accuracies(correct).shape == (1000,)


def test_interval_brackets_the_estimate_and_degenerates_sensibly():
    correct = np.array([1] * 90 + [0] * 10, dtype=bool)
    low, high = bootstrap_ci(correct)
    assert 0.8 < low < 0.9 < high < 0.97
    assert bootstrap_ci(np.ones(50, dtype=bool)) == (1.0, 1.0)
    assert accuracy_interval([]) is None
    assert accuracy_interval([np.ones(3, bool), np.ones(4, bool)]) is None  # other items
    assert accuracy_interval([correct]) == bootstrap_ci(correct)


def test_mcnemar_on_a_hand_computed_table():
    # b = 10 items only a gets right, c = 2 only b: p = 2 * P(Bin(12, .5) <= 2)
    # = 2 * (1 + 12 + 66) / 4096 = 158 / 4096
    assert mcnemar_exact(10, 2) == pytest.approx(158 / 4096)
    assert mcnemar_exact(2, 10) == pytest.approx(158 / 4096)
    assert mcnemar_exact(5, 5) == 1.0 and mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 1) == 1.0  # 2 * 0.5


def test_holm_on_a_known_example():
    # sorted p: .01, .02, .03, .04 -> 4*.01, 3*.02, 2*.03, 1*.04 = .04, .06, .06 (monotone), .06
    adjusted = holm([0.03, 0.01, 0.04, 0.02])
    assert adjusted == pytest.approx([0.06, 0.04, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]).size == 0


def test_permutation_test_agrees_with_mcnemar_and_finds_no_effect_in_noise():
    a = np.array([1] * 10 + [0] * 2 + [1] * 50 + [0] * 38, dtype=bool)
    b = np.array([0] * 10 + [1] * 2 + [1] * 50 + [0] * 38, dtype=bool)
    p = paired_permutation_test(a, b, n_resamples=20_000)
    assert p == pytest.approx(mcnemar_exact(10, 2), abs=0.01)  # the same sign-flip law
    assert paired_permutation_test(a, a) == 1.0
    rng = np.random.default_rng(5)
    ps = [paired_permutation_test(rng.random(60), rng.random(60), 400, s) for s in range(200)]
    assert 0.01 <= np.mean(np.array(ps) < 0.05) <= 0.1  # about alpha under H0
    # real-valued scores: a larger shift is detected
    assert paired_permutation_test(rng.random(200) + 0.2, rng.random(200)) < 0.001


def test_paired_test_counts_and_difference_interval():
    a = np.array([1, 1, 1, 0, 0, 1] * 50, dtype=bool)
    b = np.array([1, 0, 0, 0, 1, 1] * 50, dtype=bool)
    result = paired_test(a, b)
    assert (result.only_a, result.only_b, result.n) == (100, 50, 300)
    assert result.diff == pytest.approx(50 / 300)
    assert result.diff_low < result.diff < result.diff_high
    assert result.p_mcnemar < 0.001 and result.p_permutation < 0.001
    assert paired_bootstrap_diff(a, a) == (0.0, 0.0)
    with pytest.raises(ValueError):
        paired_test(a, b[:10])


def test_detectable_difference_has_the_power_it_states():
    """At the stated smallest detectable difference, McNemar's exact test rejects 80% of the
    time, computed here independently (a sum over the binomial number of discordant items
    and their split, and a simulation scored by the exact binomial test), and any smaller
    difference has less; it shrinks as 1/sqrt(n), and rows that never differ have none.
    Connor's normal approximation stated 11.35 points on BShift's 300 items (149
    discordant), where the exact power is 77.9%; the exact difference is 11.64."""
    from scipy.stats import binom, binomtest

    from sentprobe.analysis.stats import detectable_difference, mcnemar_exact

    def exact(n: int, discordant: int, d: float) -> float:
        psi, power = discordant / n, 0.0
        for m in range(1, n + 1):  # m discordant items, k of them right for the first row
            k = np.arange(m + 1)
            reject = 2 * binom.cdf(np.minimum(k, m - k), m, 0.5) < 0.05  # mcnemar_exact's p
            assert reject[m] == (mcnemar_exact(m, 0) < 0.05)
            power += binom.pmf(m, n, psi) * binom.pmf(k, m, (psi + d) / (2 * psi))[reject].sum()
        return power

    n, discordant = 300, 149
    d = detectable_difference(n, discordant)
    assert d == pytest.approx(0.1164, abs=5e-5)
    assert exact(n, discordant, d) == pytest.approx(0.8, abs=1e-6)
    assert exact(n, discordant, d - 0.001) < 0.8  # the smallest such difference
    psi, rng = discordant / n, np.random.default_rng(0)
    draws = rng.multinomial(n, [(psi + d) / 2, (psi - d) / 2, 1 - psi], size=20_000)
    b, c = draws[:, 0], draws[:, 1]
    simulated = np.mean(2 * binom.cdf(np.minimum(b, c), b + c, 0.5) < 0.05)
    for k in range(40, 80):  # that p-value is scipy's exact binomial test's
        assert (2 * binom.cdf(k, 149, 0.5) < 0.05) == (binomtest(k, 149).pvalue < 0.05)
    assert simulated == pytest.approx(0.8, abs=0.01)  # 3.5 standard errors
    assert 0.08 < detectable_difference(300, 90) < 0.095  # 9 points on 300 items, psi 0.3
    assert detectable_difference(4 * n, 4 * discordant) == pytest.approx(d / 2, rel=0.05)
    assert math.isnan(detectable_difference(n, 0)) and math.isnan(detectable_difference(n, 5))
