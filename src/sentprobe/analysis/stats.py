"""Statistics of test accuracies: bootstrap confidence intervals, paired tests, Holm.

Everything works on per-item correctness (``Predictions.correct``) and is exact in
distribution where that is cheap: a bootstrap resample of n items drawn with replacement
only matters through how many items of each *kind* it draws (kind = the item's pattern of
right/wrong across seeds, or across two rows), so one multinomial draw over at most a few
dozen kinds replaces an n-column index matrix. A 1,000-resample interval on 10,000 items
takes 2-3 ms (docs/benchmarks.md). All random draws use a fixed seed, so tables are reproducible.

Where the test split is lexical (``Predictions.clusters``: each item's target word form),
items of one form are not independent draws, so the unit resampled is the form (a cluster
bootstrap; paired tests swap whole forms): the same multinomial trick, over kinds of forms
(a form's size and hits). When every item is its own form, this is the item bootstrap draw
for draw. Methods and their caveats: docs/statistics.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.stats import binom

from sentprobe.evaluation.predictions import Predictions

N_RESAMPLES = 1000
CONFIDENCE = 0.95
#: The power at which ``sentprobe compare`` states the smallest difference it could detect.
POWER = 0.8
SEED = 0


def _patterns(correct: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct columns of a (seeds x items) 0/1 matrix and how often each occurs."""
    kinds, counts = np.unique(np.asarray(correct, dtype=np.int8), axis=1, return_counts=True)
    return kinds.astype(float), counts


def _cluster_sums(matrix: np.ndarray, clusters: Sequence[str]) -> np.ndarray:
    """A (rows x items) matrix summed per cluster: (1 + rows) x clusters, the first row each
    cluster's size."""
    if len(clusters) != matrix.shape[1]:
        raise ValueError("clusters must name one cluster per item")
    _, index = np.unique(np.asarray(clusters, dtype=str), return_inverse=True)
    rows = np.vstack([np.ones(matrix.shape[1]), matrix])
    return np.vstack([np.bincount(index, weights=row) for row in rows])


def _cluster_kinds(
    matrix: np.ndarray, clusters: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct kinds of cluster of a (rows x items) 0/1 matrix as (sizes, per-row hits
    (rows x kinds)) and how many clusters are of each kind. Kinds are ordered as
    :func:`_patterns` orders the columns, so singleton clusters give its kinds."""
    kinds, counts = np.unique(_cluster_sums(matrix, clusters), axis=1, return_counts=True)
    return kinds[0], kinds[1:], counts


def _resampled_hits(
    matrix: np.ndarray,
    clusters: Sequence[str] | None,
    n_resamples: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """(B, rows) accuracies of each row on B resamples of the items, or of the clusters (the
    replicate is then the accuracy over every item of the drawn clusters)."""
    n_items = matrix.shape[1]
    if clusters is None:
        kinds, counts = _patterns(matrix)
        drawn = rng.multinomial(n_items, counts / n_items, size=n_resamples)  # (B, kinds)
        return np.asarray(drawn @ kinds.T / n_items)
    sizes, hits, counts = _cluster_kinds(matrix, clusters)
    m = int(counts.sum())
    drawn = rng.multinomial(m, counts / m, size=n_resamples)
    return np.asarray((drawn @ hits.T) / (drawn @ sizes)[:, None])


def bootstrap_accuracies(
    correct: np.ndarray,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    clusters: Sequence[str] | None = None,
) -> np.ndarray:
    """Bootstrap replicates of the accuracy of ``correct`` (items, or seeds x items).

    One row: the nonparametric bootstrap over test items (the replicate is a binomial
    draw, exactly the distribution of resampling items with replacement). Several rows
    (seeds of the same unit on the same test items): a two-way bootstrap that resamples the
    test items once per replicate for all seeds (the items are shared, so their sampling
    error is too) and resamples the seeds; the replicate is the mean over resampled seeds.
    ``clusters`` (each item's target form): whole clusters are resampled instead of items.
    """
    matrix = np.atleast_2d(np.asarray(correct, dtype=bool))
    n_seeds, n_items = matrix.shape
    if n_items == 0:
        raise ValueError("no test items")
    rng = np.random.default_rng(seed)
    per_seed = _resampled_hits(matrix, clusters, n_resamples, rng)  # (B, seeds)
    if n_seeds == 1:
        return per_seed[:, 0]
    weights = rng.multinomial(n_seeds, np.full(n_seeds, 1.0 / n_seeds), size=n_resamples)
    return np.asarray((per_seed * weights).sum(axis=1) / n_seeds)


def bootstrap_ci(
    correct: np.ndarray,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
    clusters: Sequence[str] | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the accuracy (see :func:`bootstrap_accuracies`)."""
    replicates = bootstrap_accuracies(correct, n_resamples, seed, clusters)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(replicates, [tail, 1.0 - tail])
    return float(low), float(high)


def accuracy_interval(
    correct: Sequence[np.ndarray],
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
    clusters: Sequence[str] | None = None,
) -> tuple[float, float] | None:
    """The CI of a table cell from its seeds' correctness vectors (resampling ``clusters``
    where the test items have them); None when there is none (no vectors, or seeds scored on
    different numbers of test items)."""
    if not correct or len({len(c) for c in correct}) != 1 or len(correct[0]) == 0:
        return None
    return bootstrap_ci(np.vstack(correct), n_resamples, confidence, seed, clusters)


def shared_clusters(found: Sequence[Predictions]) -> tuple[bool, list[str] | None]:
    """The clusters of predictions on the same test items: (True, clusters), or (False,
    None) when they disagree (a row stored before its task had a sidecar, beside one after:
    no interval is better than one that treats the same items two ways)."""
    clusters = found[0].clusters if found else None
    return all(p.clusters == clusters for p in found), clusters


def interval_function(
    predictions: Mapping[str, Predictions],
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> Callable[[Sequence[str]], tuple[float, float] | None]:
    """A table cell's CI from its record keys (the ``interval`` of ``results_table``): None
    unless every key has stored predictions on the same test items (and clusters)."""

    def interval(keys: Sequence[str]) -> tuple[float, float] | None:
        found = [predictions[key] for key in keys if key in predictions]
        if not found or len(found) != len(keys):
            return None
        gold = found[0].gold_labels()
        if any(not np.array_equal(p.gold_labels(), gold) for p in found[1:]):
            return None  # seeds on different test items: no shared-item bootstrap
        same, clusters = shared_clusters(found)
        if not same:
            return None
        return accuracy_interval(
            [p.correct for p in found], n_resamples, confidence, clusters=clusters
        )

    return interval


@dataclass(frozen=True)
class PairedTest:
    """Two rows compared on the same test items (fractions; ``diff`` is a minus b)."""

    n: int
    accuracy_a: float
    accuracy_b: float
    only_a: int  # items a gets right and b wrong
    only_b: int
    p_mcnemar: float  # NaN with clusters: McNemar's test needs independent items
    p_permutation: float
    diff_low: float
    diff_high: float
    clusters: int = 0  # the number of clusters (target forms) resampled; 0: items

    @property
    def diff(self) -> float:
        return self.accuracy_a - self.accuracy_b

    @property
    def p(self) -> float:
        """The test's p-value: McNemar's on independent items, else the permutation test
        that swaps a's and b's results on whole clusters."""
        return self.p_permutation if self.clusters else self.p_mcnemar


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: the discordant pairs under H0 are Binomial(b + c,
    1/2); p = min(1, 2 P(X <= min(b, c)))."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    return float(min(1.0, 2.0 * binom.cdf(min(only_a, only_b), n, 0.5)))


def paired_permutation_test(
    scores_a: np.ndarray,
    scores_b: np.ndarray,
    n_resamples: int = 10_000,
    seed: int = SEED,
) -> float:
    """Two-sided Monte Carlo p-value of the mean paired difference under random swaps of
    a's and b's score on each item (sign flips of the differences).

    Items with the same absolute difference are exchangeable, so the flipped sum of a group
    of m items with difference ±d is d (2 Binomial(m, 1/2) - m): one binomial draw per group
    and resample instead of a sign matrix. p = (1 + #{|T*| >= |T|}) / (1 + resamples).
    """
    diff = np.asarray(scores_a, dtype=float) - np.asarray(scores_b, dtype=float)
    observed = abs(diff.sum())
    sizes, counts = np.unique(np.abs(diff[diff != 0]), return_counts=True)
    if sizes.size == 0:
        return 1.0
    rng = np.random.default_rng(seed)
    heads = rng.binomial(counts, 0.5, size=(n_resamples, sizes.size))
    flipped = np.abs((2 * heads - counts) @ sizes)
    extreme = int(np.count_nonzero(flipped >= observed - 1e-9 * max(1.0, observed)))
    return (1 + extreme) / (1 + n_resamples)


def paired_bootstrap_diff(
    correct_a: np.ndarray,
    correct_b: np.ndarray,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
    clusters: Sequence[str] | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap interval of accuracy(a) - accuracy(b), resampling items (or
    ``clusters``) jointly for both."""
    pair = np.vstack([correct_a, correct_b]).astype(bool)
    accuracies = _resampled_hits(pair, clusters, n_resamples, np.random.default_rng(seed))
    replicates = accuracies[:, 0] - accuracies[:, 1]
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(replicates, [tail, 1.0 - tail])
    return float(low), float(high)


def paired_test(
    correct_a: np.ndarray, correct_b: np.ndarray, clusters: Sequence[str] | None = None
) -> PairedTest:
    """McNemar, a paired permutation test and a paired bootstrap CI of the difference.

    With ``clusters`` (each item's target form) the items of a form are not independent:
    the permutation test swaps a's and b's results on whole forms (the sign of each form's
    summed difference) and is the test, the CI resamples forms, and McNemar's test, which
    counts discordant items as independent, is not computed (NaN)."""
    a, b = np.asarray(correct_a, dtype=bool), np.asarray(correct_b, dtype=bool)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError("paired tests need two correctness vectors over the same test items")
    only_a, only_b = int(np.count_nonzero(a & ~b)), int(np.count_nonzero(b & ~a))
    low, high = paired_bootstrap_diff(a, b, clusters=clusters)
    if clusters is None:
        p_mcnemar, p_permutation, n_clusters = (
            mcnemar_exact(only_a, only_b),
            paired_permutation_test(a, b),
            0,
        )
    else:
        per_cluster = _cluster_sums(np.vstack([a, b]), clusters)
        p_mcnemar, n_clusters = math.nan, per_cluster.shape[1]
        p_permutation = paired_permutation_test(per_cluster[1], per_cluster[2])
    return PairedTest(
        n=a.size,
        accuracy_a=float(a.mean()),
        accuracy_b=float(b.mean()),
        only_a=only_a,
        only_b=only_b,
        p_mcnemar=p_mcnemar,
        p_permutation=p_permutation,
        diff_low=low,
        diff_high=high,
        clusters=n_clusters,
    )


def mcnemar_power(n: int, discordant: int, difference: float, alpha: float = 0.05) -> float:
    """Exact power of McNemar's two-sided exact test at ``alpha`` (:func:`mcnemar_exact`,
    rejecting where p < alpha) on ``n`` paired items, each right for one row only with
    probability psi = ``discordant / n`` and for the first row with probability
    (psi + difference) / 2: a sum over the Binomial(n, psi) number m of discordant items of
    the Binomial(m, (1 + difference / psi) / 2) probability of the test's rejection region
    (m's tails beyond 1e-12 of it left out)."""
    psi = discordant / n if n else 0.0
    if psi <= 0:
        return 0.0
    share = min(1.0, (1.0 + difference / psi) / 2.0)
    low, high = binom.ppf([1e-12, 1 - 1e-12], n, psi)
    m = np.arange(max(1, int(low)), int(high) + 1)
    # the largest k with 2 P(X <= k) < alpha under H0 (mcnemar_exact's rule); -1: none
    k = binom.ppf(alpha / 2, m, 0.5).astype(np.int64)
    k = np.where(2.0 * binom.cdf(k, m, 0.5) < alpha, k, k - 1)
    k = np.where((k >= 0) & (2.0 * binom.cdf(k, m, 0.5) >= alpha), k - 1, k)
    reject = binom.cdf(k, m, share) + binom.sf(m - k - 1, m, share)
    return float(np.dot(binom.pmf(m, n, psi), np.where(k >= 0, reject, 0.0)))


def detectable_difference(
    n: int, discordant: int, alpha: float = 0.05, power: float = POWER
) -> float:
    """The smallest accuracy difference (a fraction) that McNemar's exact two-sided test at
    ``alpha`` detects with probability ``power`` on ``n`` paired items, of which the share
    psi = ``discordant / n`` is right for one row only: the root of :func:`mcnemar_power`
    (exact, increasing in the difference) on [0, psi]. NaN where no difference up to psi
    would be detected (the rows disagree on too few items)."""
    psi = discordant / n if n else 0.0
    if psi <= 0:
        return math.nan

    def gap(d: float) -> float:
        return mcnemar_power(n, discordant, d, alpha) - power

    if gap(psi) < 0:
        return math.nan
    return float(brentq(gap, 0.0, psi, xtol=1e-10))


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error control), in input order."""
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted
