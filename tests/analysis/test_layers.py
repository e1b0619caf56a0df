"""Layer analysis: peak layer and center of gravity on a toy results frame."""

from __future__ import annotations

import pandas as pd
import pytest

from sentprobe.analysis.layers import center_of_gravity, layer_scores, layer_summary
from sentprobe.errors import SentprobeError


def _frame(scores: dict[str, list[float]], encoder: str = "enc", seeds: int = 1) -> pd.DataFrame:
    rows = [
        {
            "encoder": f"{encoder}@layer{layer}",
            "probe": "logreg",
            "task": task,
            "seed": seed,
            "test_score": value / 100,
        }
        for task, values in scores.items()
        for layer, value in enumerate(values)
        for seed in range(seeds)
    ]
    return pd.DataFrame(rows)


def test_center_of_gravity_by_hand() -> None:
    # gains of the running best: +10 at layer 1, +30 at layer 3 (layer 2's dip is ignored)
    assert center_of_gravity([50, 60, 55, 90]) == pytest.approx((1 * 10 + 3 * 30) / 40)
    assert center_of_gravity([80, 70, 60]) == 0.0  # nothing gained over layer 0
    assert center_of_gravity([50, 50, 70]) == pytest.approx(2.0)


def test_peak_and_center_per_task() -> None:
    frame = pd.concat(
        [
            _frame({"SentLen": [90, 80, 70, 60], "BShift": [50, 60, 55, 90]}),
            pd.DataFrame(
                [
                    {
                        "encoder": "Majority",
                        "probe": "logreg",
                        "task": "SentLen",
                        "seed": 0,
                        "test_score": 0.2,
                    }
                ]
            ),  # not a layer row: left out
        ]
    )
    summary = layer_summary(frame).set_index("task")
    assert summary.loc["SentLen", "peak_layer"] == 0
    assert summary.loc["SentLen", "center"] == 0.0
    assert summary.loc["BShift", "peak_layer"] == 3
    assert summary.loc["BShift", "peak_score"] == pytest.approx(90)
    assert summary.loc["BShift", "center"] == pytest.approx(2.5)
    assert summary.loc["BShift", "layers"] == 4 and (summary["encoder"] == "enc").all()


def test_scores_average_seeds_and_skip_missing_layers() -> None:
    frame = _frame({"Tense": [50, 70, 90]}, seeds=2)
    frame = frame[frame["encoder"] != "enc@layer1"]  # layers 0 and 2 only
    scores = layer_scores(frame)
    assert scores["layer"].tolist() == [0, 2] and scores["n"].tolist() == [2, 2]
    summary = layer_summary(frame).iloc[0]
    assert summary["peak_layer"] == 2 and summary["center"] == pytest.approx(2.0)


def test_no_layer_rows_is_a_clear_error() -> None:
    frame = pd.DataFrame(
        [{"encoder": "minilm", "probe": "logreg", "task": "WC", "seed": 0, "test_score": 0.5}]
    )
    with pytest.raises(SentprobeError, match="--layer all"):
        layer_summary(frame)
