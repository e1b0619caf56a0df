"""Paired comparisons of two table rows and prediction agreement, on hand-made predictions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sentprobe.analysis.paired import compare_rows, comparison_text
from sentprobe.analysis.prediction_agreement import agreement_text, prediction_agreement
from sentprobe.analysis.stats import holm, mcnemar_exact
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.predictions import Predictions

GOLD = ["x", "y"] * 50  # 100 test items


def _pred(wrong: set[int], gold=GOLD) -> Predictions:
    """Right on every item but ``wrong`` (there the other label)."""
    flip = {"x": "y", "y": "x"}
    return Predictions.from_labels(
        gold, [flip[g] if i in wrong else g for i, g in enumerate(gold)], ["x", "y"]
    )


def _rec(key: str, encoder: str, task: str, predictions: Predictions, **fields) -> dict:
    return dict(key=key, encoder=encoder, task=task, seed=0, probe="logreg",
                test_score=predictions.accuracy, task_hash=f"h-{task}",
                created="2024-01-01", **fields)  # fmt: skip


@pytest.fixture
def results() -> tuple[pd.DataFrame, dict[str, Predictions]]:
    preds = {
        # T1: A wrong on 0-4, B wrong on 0-24: 20 items only A gets right, 0 only B
        "a1": _pred(set(range(5))),
        "b1": _pred(set(range(25))),
        # T2: A wrong on 0-9, B wrong on 5-14: 5 discordant each way
        "a2": _pred(set(range(10))),
        "b2": _pred(set(range(5, 15))),
        "c1": _pred(set(range(5))),  # C predicts exactly like A on T1
    }
    rows = [
        _rec("a1", "A", "T1", preds["a1"]),
        _rec("b1", "B", "T1", preds["b1"]),
        _rec("a2", "A", "T2", preds["a2"]),
        _rec("b2", "B", "T2", preds["b2"]),
        _rec("c1", "C", "T1", preds["c1"]),
        _rec("c2", "C", "T2", preds["a2"]),  # no stored predictions for this one
    ]
    return pd.DataFrame(rows), preds


def test_compare_counts_tests_and_holm(results):
    frame, preds = results
    comparison = compare_rows(frame, preds, "A", "B")
    table = comparison.table.set_index("task")
    assert table.loc["T1", ["only_a", "only_b", "n"]].tolist() == [20, 0, 100]
    assert table.loc["T1", "diff"] == pytest.approx(20.0)
    assert table.loc["T1", "p_mcnemar"] == pytest.approx(mcnemar_exact(20, 0))
    assert table.loc["T2", "p_mcnemar"] == 1.0  # 5 vs 5
    assert table["p_holm"].tolist() == pytest.approx(holm(table["p_mcnemar"]).tolist())
    assert table["significant"].tolist() == [True, False]
    text = comparison_text(comparison)
    assert "+20.0*" in text and "+0.0 " in text and "alpha = 0.05" in text and "Holm" in text


def test_compare_skips_tasks_without_shared_items_and_names_bad_rows(results):
    frame, preds = results
    comparison = compare_rows(frame, preds, "A", "C")
    assert comparison.table["task"].tolist() == ["T1"]
    assert comparison.skipped == ["T2: no predictions of C"]
    frame.loc[frame["key"] == "b2", "task_hash"] = "other data"
    assert compare_rows(frame, preds, "A", "B").skipped == [
        "T2: A and B were scored on different test items"
    ]
    with pytest.raises(SentprobeError, match="no row 'Z'.*rows: A, B, C"):
        compare_rows(frame, preds, "A", "Z")
    with pytest.raises(SentprobeError, match="B: no stored predictions"):
        compare_rows(frame, {k: v for k, v in preds.items() if k[0] != "b"}, "A", "B")


def test_agreement_per_task_and_item_weighted(results):
    frame, preds = results
    agreement = prediction_agreement(frame, preds)
    assert agreement.rows == ["A", "B", "C"] and agreement.tasks == ["T1", "T2"]
    t1 = agreement.matrix("T1")
    assert t1.loc["A", "B"] == pytest.approx(0.80) and t1.loc["A", "C"] == 1.0
    assert t1.loc["B", "A"] == t1.loc["A", "B"] and np.diag(t1).tolist() == [1.0, 1.0, 1.0]
    t2 = agreement.matrix("T2")
    assert t2.loc["A", "B"] == pytest.approx(0.90) and "C" not in t2.index
    overall = agreement.matrix()
    assert overall.loc["A", "B"] == pytest.approx((80 + 90) / 200)  # item-weighted
    assert overall.loc["A", "C"] == 1.0  # only T1 is shared
    shares = agreement.shares().set_index(["row_a", "row_b", "task"])["share"]
    assert shares[("A", "B", "all")] == pytest.approx(0.85)
    text = agreement_text(agreement, by_task=True)
    assert "all tasks (item-weighted)" in text and "85.0" in text and text.count("| A ") == 3


def test_holm_adjusts_each_tasks_own_test(results):
    """A lexical task (stored forms) is tested by swapping forms, the others by McNemar; Holm
    adjusts that mix, and the table says which test each line used."""
    frame, preds = results
    forms = [f"w{i // 10}" for i in range(100)]
    for key in ("a2", "b2"):
        p = preds[key]
        preds[key] = Predictions(p.labels, p.gold, p.pred, clusters=forms)
    table = compare_rows(frame, preds, "A", "B").table.set_index("task")
    assert table["test"].tolist() == ["McNemar exact", "permutation over forms"]
    assert table["clusters"].tolist() == [0, 10] and np.isnan(table.loc["T2", "p_mcnemar"])
    own = [table.loc["T1", "p_mcnemar"], table.loc["T2", "p_permutation"]]
    assert table["p_holm"].tolist() == pytest.approx(holm(own).tolist())
    preds["b2"] = Predictions(preds["b2"].labels, preds["b2"].gold, preds["b2"].pred)
    assert compare_rows(frame, preds, "A", "B").skipped == [
        "T2: A and B group the test items into forms differently"
    ]
