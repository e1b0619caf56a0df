"""Intervals and paired tests on a lexical split: the items of one target form are not
independent draws, so the form (cluster) is what is resampled or swapped."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sentprobe.analysis.stats import (
    bootstrap_ci,
    interval_function,
    paired_bootstrap_diff,
    paired_test,
)
from sentprobe.evaluation.predictions import Predictions

FORMS = [f"w{i // 30}" for i in range(300)]  # 10 target forms of 30 items each


def _width(ci: tuple[float, float]) -> float:
    return ci[1] - ci[0]


def test_clustered_interval_is_wider_where_a_form_carries_the_class():
    """A probe right on every item of 7 forms and wrong on every item of 3 (it learned which
    form goes with which class, not the property): 70% either way, but resampling forms
    shows how much of it is 10 draws, not 300."""
    correct = np.array([int(f[1:]) < 7 for f in FORMS])
    items, forms = bootstrap_ci(correct), bootstrap_ci(correct, clusters=FORMS)
    assert items[0] < 0.7 < items[1] and forms[0] < 0.7 < forms[1]
    assert _width(forms) > 3 * _width(items)  # 0.60 against 0.10


def test_every_item_its_own_cluster_is_the_item_bootstrap():
    rng = np.random.default_rng(3)
    own = [f"item{i}" for i in range(300)]
    one = rng.random(300) < 0.7
    seeds = rng.random((4, 300)) < 0.6
    assert bootstrap_ci(one, clusters=own) == bootstrap_ci(one)
    assert bootstrap_ci(seeds, clusters=own) == bootstrap_ci(seeds)
    assert paired_bootstrap_diff(one, seeds[0], clusters=own) == paired_bootstrap_diff(
        one, seeds[0]
    )


def test_clustered_interval_covers_where_the_item_interval_does_not():
    """Test sets of 20 forms x 15 items whose accuracy varies by form (Beta(2.975, 1.275):
    mean 0.7, sd 0.2): the form bootstrap covers 0.7 about 95% of the time, the item one far
    less (it takes 300 items for 300 independent draws)."""
    rng = np.random.default_rng(4)
    forms = [f"f{i // 15}" for i in range(300)]
    covered = {"items": 0, "forms": 0}
    for draw in range(200):
        per_form = rng.beta(2.975, 1.275, 20)
        correct = rng.random(300) < np.repeat(per_form, 15)
        for name, clusters in (("items", None), ("forms", forms)):
            low, high = bootstrap_ci(correct, seed=draw, clusters=clusters)
            covered[name] += low <= 0.7 <= high
    assert 0.9 <= covered["forms"] / 200 <= 0.99  # 95.5% here
    assert covered["items"] / 200 < 0.8  # 68.5% here


def test_paired_test_swaps_whole_forms():
    """a beats b on every item of one form and nowhere else: McNemar on items calls that
    30 independent wins (p < 1e-8); as one form it is no evidence at all."""
    b = np.array([i % 3 == 0 and i >= 30 for i in range(300)])
    a = b.copy()
    a[:30] = True  # form w0
    items = paired_test(a, b)
    forms = paired_test(a, b, clusters=FORMS)
    assert items.clusters == 0 and items.p == items.p_mcnemar < 1e-8
    assert forms.clusters == 10 and math.isnan(forms.p_mcnemar)
    assert forms.p == forms.p_permutation == 1.0
    assert (forms.only_a, forms.only_b, forms.diff) == (items.only_a, items.only_b, items.diff)
    assert _width((forms.diff_low, forms.diff_high)) > _width((items.diff_low, items.diff_high))
    # a difference on every form is detected by swapping forms too
    c = b.copy()
    c[[i for i in range(300) if i % 30 < 10]] = True
    assert paired_test(c, b, clusters=FORMS).p < 0.01


def test_interval_function_resamples_the_stored_forms():
    gold = ["x", "y"] * 150
    right = [g if int(f[1:]) < 7 else {"x": "y", "y": "x"}[g] for g, f in zip(gold, FORMS)]
    plain = Predictions.from_labels(gold, right, ["x", "y"])
    clustered = Predictions.from_labels(gold, right, ["x", "y"], clusters=FORMS)
    interval = interval_function({"p": plain, "c": clustered, "c2": clustered})
    assert interval(["p"]) == bootstrap_ci(plain.correct)
    assert interval(["c"]) == bootstrap_ci(clustered.correct, clusters=FORMS)
    assert interval(["c", "c2"]) == bootstrap_ci(np.vstack([clustered.correct] * 2), clusters=FORMS)
    assert interval(["c", "p"]) is None  # the same items grouped two ways: no interval


def test_clusters_must_name_every_item():
    with pytest.raises(ValueError, match="one cluster per item"):
        bootstrap_ci(np.ones(10, dtype=bool), clusters=["a"] * 9)
