"""The paper's sanity checks on the shipped suite: Majority = chance, Length = 100 on SentLen and
chance on BShift, NB-bi-tfidf beats NB-uni-tfidf on BShift (bigram cues)."""

from __future__ import annotations

import pytest

from sentprobe.datasets import SAMPLE_EN_DIR
from sentprobe.evaluation.runner import run


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    if not (SAMPLE_EN_DIR / "manifest.json").is_file():
        pytest.skip("sample suite not built")
    tmp = tmp_path_factory.mktemp("baselines")
    frame = run(
        [],
        "sample-en",
        baselines="majority,length,nb-uni,nb-bi",
        results=tmp / "r.sqlite",
        cache_dir=tmp / "cache",
        progress=False,
    )
    return {(r.encoder, r.task): 100 * r.test_score for r in frame.itertuples()}, frame


def test_majority_is_chance(scores):
    table, frame = scores
    for task, n_classes in frame.groupby("task")["n_classes"].first().items():
        assert table[("Majority", task)] == pytest.approx(100 / n_classes, abs=0.05)


def test_length_solves_sentlen_and_not_bshift(scores):
    table, _ = scores
    assert table[("Length", "SentLen")] == pytest.approx(100.0)
    assert abs(table[("Length", "BShift")] - 50.0) < 3.0


def test_bigrams_beat_unigrams_on_bshift(scores):
    table, _ = scores
    assert table[("NB-bi-tfidf", "BShift")] > table[("NB-uni-tfidf", "BShift")] + 2.0
    assert abs(table[("NB-uni-tfidf", "BShift")] - 50.0) < 3.0
