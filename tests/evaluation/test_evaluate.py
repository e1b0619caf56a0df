"""``sentprobe.evaluate``: the units ``run`` computes, in memory, with confidence intervals."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

import sentprobe
from sentprobe.datasets import make_mock_task


def letter_counts(sentences: list[str]) -> np.ndarray:
    """A toy encoder function: letter counts."""
    out = np.zeros((len(sentences), 26), dtype=np.float32)
    for i, s in enumerate(sentences):
        for ch in s:
            if "a" <= ch <= "z":
                out[i, ord(ch) - 97] += 1
    return out


@pytest.fixture
def tasks():
    return [
        make_mock_task(name, n_train=60, n_dev=20, n_test=40, seed=i)
        for i, name in enumerate(["A", "B"])
    ]


def _files(root) -> list[str]:
    return sorted(os.path.join(d, f) for d, _, names in os.walk(root) for f in names)


def test_evaluate_writes_nothing_and_gives_intervals(tmp_path, monkeypatch, tasks):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SENTPROBE_CACHE", str(tmp_path / "cache"))
    frame = sentprobe.evaluate(letter_counts, tasks)
    assert _files(tmp_path) == []  # no results store, no embedding cache
    assert list(frame["task"]) == ["A", "B"] and set(frame["encoder"]) == {"letter_counts"}
    assert (frame["ci_low"] <= frame["test_score"]).all()
    assert (frame["test_score"] <= frame["ci_high"]).all()
    assert (frame["ci_high"] - frame["ci_low"] > 0).all()  # 40 test items: a real interval


def test_evaluate_and_run_give_the_same_scores(tmp_path, tasks):
    kw = {"probe": "logreg", "seeds": 2}
    mem = sentprobe.evaluate(letter_counts, tasks, **kw)
    stored = sentprobe.run(
        letter_counts, tasks, baselines="none", results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "cache", progress=False, **kw,
    )  # fmt: skip
    assert (tmp_path / "r.sqlite").is_file()
    columns = ["key", "task", "seed", "config", "dev_score", "test_score"]
    assert len(mem) == 2  # the logistic probe with a dev split: seed 0 stands for both
    pd.testing.assert_frame_equal(mem[columns], stored[columns])


def test_evaluate_with_baselines_and_a_cache(tmp_path, tasks):
    frame = sentprobe.evaluate(
        letter_counts, tasks, baselines="majority", cache_dir=tmp_path / "cache"
    )
    assert sorted(set(frame["encoder"])) == ["Majority", "letter_counts"]
    assert list((tmp_path / "cache").iterdir())  # vectors cached where asked
    again = sentprobe.evaluate(letter_counts, tasks, cache_dir=tmp_path / "cache")
    first = frame[frame["encoder"] == "letter_counts"].reset_index(drop=True)
    assert list(again["test_score"]) == list(first["test_score"])


def test_evaluate_interval_on_a_lexical_split_resamples_the_forms(tmp_path, tasks):
    """A test split with ``clusters`` (a ``.forms`` sidecar): the runner keeps each item's
    form with its predictions (also in a results store) and the interval resamples forms."""
    from sentprobe.analysis.stats import bootstrap_ci
    from sentprobe.evaluation.store import ResultsStore

    task = tasks[0]
    test = task.splits["test"]
    test.clusters = [f"form{i % 4}" for i in range(len(test))]
    frame = sentprobe.evaluate(letter_counts, [task], probe="logreg")
    stored = sentprobe.run(
        letter_counts, [task], probe="logreg", baselines="none", results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "cache", progress=False,
    )  # fmt: skip
    with ResultsStore(tmp_path / "r.sqlite", readonly=True) as store:
        predictions = store.predictions(stored["key"].iloc[0])
    assert predictions.clusters == test.clusters
    expected = bootstrap_ci(predictions.correct, clusters=test.clusters)
    assert (frame["ci_low"].iloc[0], frame["ci_high"].iloc[0]) == pytest.approx(expected)
    assert expected != bootstrap_ci(predictions.correct)
