"""The paper's sanity checks on the shipped suite: Majority = chance everywhere; Length = 100 on
SentLen, chance on TreeDepth (decorrelated from length by construction) and near chance on the
tasks whose altered sentences keep their length; NB-bi-tfidf beats NB-uni-tfidf on BShift."""

from __future__ import annotations

import pytest

from sentprobe.datasets import SAMPLE_EN_DIR
from sentprobe.evaluation.runner import run

#: Three standard deviations of a chance-level accuracy on a 300-sentence binary test set
#: (sqrt(0.25 / 300) = 2.9 points): what sampling alone can move a cue-free baseline.
BINARY_SLACK = 8.7


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


def test_all_ten_tasks_ran(scores):
    _, frame = scores
    assert frame["task"].nunique() == 10


def test_majority_is_chance(scores):
    table, frame = scores
    for task, n_classes in frame.groupby("task")["n_classes"].first().items():
        assert table[("Majority", task)] == pytest.approx(100 / n_classes, abs=0.05)


def test_length_solves_sentlen_only(scores):
    table, _ = scores
    assert table[("Length", "SentLen")] == pytest.approx(100.0)
    # every depth class has the same length histogram in every split: exactly chance
    assert table[("Length", "TreeDepth")] == pytest.approx(100 / 8, abs=0.5)
    for task in ("BShift", "SOMO", "CoordInv"):  # alterations keep the length
        assert abs(table[("Length", task)] - 50.0) < BINARY_SLACK, task


def test_bigrams_beat_unigrams_on_bshift(scores):
    table, _ = scores
    assert table[("NB-bi-tfidf", "BShift")] > table[("NB-uni-tfidf", "BShift")] + 2.0
    assert abs(table[("NB-uni-tfidf", "BShift")] - 50.0) < BINARY_SLACK
