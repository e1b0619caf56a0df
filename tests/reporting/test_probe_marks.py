"""∅ only for what it says: a probe whose test predictions are constant, or no better than a
constant guess, is marked ∅; one whose dev score sits at the dev majority while its test score
is significantly above the test's is marked ≠ (the split's fault, not the probe's)."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from sentprobe.datasets.task import ProbingTask, Split, TaskMetadata
from sentprobe.evaluation.predictions import Predictions, p_above_chance
from sentprobe.reporting.tables import COLLAPSED, DEV_UNLIKE_TEST, NOTES, probe_mark, results_table

DEV_AT_MAJORITY = {"predicted_classes": 2, "dev_majority": 0.5}


def _frame(extras: dict[str, dict], dev: float = 0.45) -> pd.DataFrame:
    rows = [
        dict(encoder=name, task="SubjNum", test_score=0.613, dev_score=dev, seed=0,
             probe="logreg", task_source="paper", language="en", category="semantic",
             created="2024-01-01", extra=extra)
        for name, extra in extras.items()
    ]  # fmt: skip
    return pd.DataFrame(rows)


def _line(text: str, row: str) -> str:
    return next(x for x in text.splitlines() if x.startswith(f"| {row} "))


def test_the_mark_follows_the_test_split_not_only_dev():
    """NB-bi on sample-en's SubjNum: 150 / 150 predicted per class, 61.3% (184 of 300,
    p = 5e-5) on test, 45% on dev whose majority is 50%."""
    p = p_above_chance(184, 300, 0.5)
    assert 1e-5 < p < 1e-4
    above = {**DEV_AT_MAJORITY, "test_majority": 0.5, "p_above_majority": p}
    chance = {**DEV_AT_MAJORITY, "test_majority": 0.5, "p_above_majority": 0.31}
    constant = {"predicted_classes": 1, "dev_majority": 0.5, "p_above_majority": p}
    assert probe_mark(above, 0.45)[0] == DEV_UNLIKE_TEST
    assert probe_mark(chance, 0.45)[0] == COLLAPSED
    assert probe_mark(constant, 0.9)[0] == COLLAPSED  # constant predictions: whatever else
    assert probe_mark(DEV_AT_MAJORITY, 0.45)[0] == COLLAPSED  # stored before the test: dev
    assert probe_mark(above, 0.6) == ("", "")  # dev above its majority: nothing to mark
    frame = _frame({"NB-bi": above, "Chance": chance, "Old": DEV_AT_MAJORITY})
    md = results_table(frame)
    assert _line(md, "NB-bi").rstrip(" |").endswith(DEV_UNLIKE_TEST)
    assert COLLAPSED not in _line(md, "NB-bi")
    assert COLLAPSED in _line(md, "Chance") and COLLAPSED in _line(md, "Old")
    assert f"{DEV_UNLIKE_TEST} {NOTES[DEV_UNLIKE_TEST]}" in md
    assert "the dev split does not represent test" in md
    assert r"\neq" in results_table(frame, fmt="latex")
    notes = pd.read_csv(io.StringIO(results_table(frame, fmt="csv"))).set_index("encoder")
    assert (
        "test significantly above its majority (test majority 50%, p = 5"
        in (notes.loc["NB-bi", "notes"])
    )
    assert "not significantly above" in notes.loc["Chance", "notes"]
    records = {r["encoder"]: r for r in json.loads(results_table(frame, fmt="json"))}
    assert "significantly above" in records["NB-bi"]["notes"]


def test_a_seed_that_says_nothing_outranks_dev_unlike_test():
    above = {**DEV_AT_MAJORITY, "test_majority": 0.5, "p_above_majority": 1e-4}
    frame = pd.concat([_frame({"X": above}), _frame({"X": {"predicted_classes": 1}})])
    frame["seed"] = [0, 1]
    line = _line(results_table(frame), "X")
    assert COLLAPSED in line and DEV_UNLIKE_TEST not in line


def test_predictions_test_against_the_majority_share():
    preds = Predictions.from_labels(["a"] * 70 + ["b"] * 30, ["a"] * 100, ["a", "b"])
    assert preds.majority_share == 0.7 and preds.p_above_majority() > 0.5  # constant guess
    right = Predictions.from_labels(["a"] * 70 + ["b"] * 30, ["a"] * 70 + ["b"] * 30)
    assert right.p_above_majority() == pytest.approx(0.7**100)


def _sentence_vectors(sentences: list[str]) -> np.ndarray:
    """Train and test sentences name their class in their first word; dev sentences carry
    nothing (one vector for all): a dev split that does not represent test."""
    side = {"one": [1.0, 0.0], "many": [0.0, 1.0]}
    return np.asarray([side.get(s.split()[0], [0.5, 0.5]) for s in sentences], dtype=np.float32)


def _run_unrepresentative(tmp_path) -> tuple[pd.DataFrame, object]:
    """A run whose dev split carries nothing while train and test carry the class."""
    from sentprobe import run

    def split(n: int, words: tuple[str, str]) -> Split:
        labels = ["NN", "NNS"] * (n // 2)
        sentences = [f"{words[i % 2]} thing {i} ." for i in range(n)]
        return Split(sentences, labels)

    meta = TaskMetadata(name="toy/SubjNum", labels=("NN", "NNS"))
    task = ProbingTask(
        meta,
        {
            "train": split(40, ("one", "many")),
            "dev": split(20, ("dev", "dev")),
            "test": split(40, ("one", "many")),
        },
    )
    store = tmp_path / "r.sqlite"
    frame = run(_sentence_vectors, [task], probe="logreg", baselines="none", results=store,
                cache_dir=tmp_path / "c", progress=False)  # fmt: skip
    return frame, store


def test_a_run_with_an_unrepresentative_dev_split_is_marked_dev_unlike_test(tmp_path):
    """End to end: the runner stores the test facts, and the table marks ≠, not ∅."""
    frame, _ = _run_unrepresentative(tmp_path)
    record = frame.iloc[0]
    assert record["dev_score"] == 0.5 and record["test_score"] == 1.0
    assert record["extra"]["dev_majority"] == 0.5 and record["extra"]["test_majority"] == 0.5
    assert record["extra"]["p_above_majority"] == pytest.approx(0.5**40)
    line = _line(results_table(frame), "_sentence_vectors")
    assert DEV_UNLIKE_TEST in line and COLLAPSED not in line


@pytest.mark.slow
def test_the_html_report_marks_dev_unlike_test(tmp_path):
    from sentprobe.cli.report_html import build_report
    from sentprobe.reporting.html import render_html

    frame, store = _run_unrepresentative(tmp_path)
    page = render_html(build_report(store, frame))
    assert f"<sup>{DEV_UNLIKE_TEST}</sup>" in page and f"<sup>{COLLAPSED}</sup>" not in page
    assert "the dev split does not represent test" in page
