"""Confidence intervals in every table format: ±half-width in markdown/latex/rich, bounds
in csv/json, nothing (not a made-up interval) for records without stored predictions."""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pandas as pd
from rich.console import Console

from sentprobe.analysis.stats import bootstrap_ci, interval_function
from sentprobe.evaluation.predictions import Predictions
from sentprobe.reporting import results_table, rich_table


def _predictions(n_right: int, n: int = 200) -> Predictions:
    gold = ["a"] * n
    return Predictions.from_labels(gold, ["a"] * n_right + ["b"] * (n - n_right), ["a", "b"])


def _frame() -> tuple[pd.DataFrame, dict[str, Predictions]]:
    rows, predictions = [], {}
    for key, encoder, task, seed, right in [
        ("k1", "MiniLM", "SentLen", 0, 150),
        ("k2", "MiniLM", "WC", 0, 100),
        ("k3", "Old", "SentLen", 0, 120),  # no stored predictions
        ("k4", "Seeds", "SentLen", 0, 140),
        ("k5", "Seeds", "SentLen", 1, 160),
    ]:
        rows.append(
            dict(key=key, encoder=encoder, task=task, seed=seed, probe="logreg",
                 test_score=right / 200, created="2024-01-01", category="surface")
        )  # fmt: skip
        if key != "k3":
            predictions[key] = _predictions(right)
    return pd.DataFrame(rows), predictions


def test_markdown_shows_half_widths_and_says_what_they_are():
    frame, predictions = _frame()
    text = results_table(frame, interval=interval_function(predictions))
    low, high = bootstrap_ci(predictions["k1"].correct)
    half = f"±{100 * (high - low) / 2:.1f}"
    line = next(line for line in text.splitlines() if line.startswith("| MiniLM"))
    assert f"75.0 {half}" in line
    old = next(line for line in text.splitlines() if line.startswith("| Old"))
    assert "60.0 |" in old and "±" not in old  # no predictions: no interval
    seeds = next(line for line in text.splitlines() if line.startswith("| Seeds"))
    assert "75.0 ± 7.1 (±" in seeds  # mean ± sd, then the two-way interval in brackets
    assert "95% bootstrap confidence interval" in text


def test_csv_and_json_give_the_bounds():
    frame, predictions = _frame()
    interval = interval_function(predictions)
    records = json.loads(results_table(frame, fmt="json", interval=interval))
    by = {r["encoder"]: r for r in records}
    low, high = bootstrap_ci(predictions["k1"].correct)
    assert by["MiniLM"]["SentLen ci_low"] == round(100 * low, 1)
    assert by["MiniLM"]["SentLen ci_high"] == round(100 * high, 1)
    assert by["Old"]["SentLen ci_low"] is None and by["Old"]["SentLen"] == 60.0
    both = np.vstack([predictions["k4"].correct, predictions["k5"].correct])
    assert by["Seeds"]["SentLen ci_low"] == round(100 * bootstrap_ci(both)[0], 1)
    header = results_table(frame, fmt="csv", interval=interval).splitlines()[0].split(",")
    assert {"SentLen ci_low", "SentLen ci_high", "WC ci_low", "WC ci_high"} <= set(header)


def test_latex_rich_and_no_interval_function():
    frame, predictions = _frame()
    interval = interval_function(predictions)
    assert r"75.0 $\pm$" in results_table(frame, fmt="latex", interval=interval)
    console = Console(file=StringIO(), width=200)
    console.print(rich_table(frame, interval=interval))
    assert "75.0 ±" in console.file.getvalue()
    plain = results_table(frame, fmt="csv")  # without an interval function: as before
    assert "ci_low" not in plain
    assert "75.0 |" in next(x for x in results_table(frame).splitlines() if "MiniLM" in x)
    frame["dev_score"] = frame["test_score"]  # the intervals are of test scores only
    assert "ci_low" not in results_table(frame, "dev_score", fmt="csv", interval=interval)
