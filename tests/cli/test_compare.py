"""`sentprobe compare`, `report --agreement` and the CI columns of `report`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from sentprobe.cli.main import app
from sentprobe.evaluation.predictions import Predictions
from sentprobe.evaluation.store import ResultsStore

GOLD = ["x", "y"] * 100


def _pred(n_wrong: int, start: int = 0) -> Predictions:
    flip = {"x": "y", "y": "x"}
    wrong = set(range(start, start + n_wrong))
    return Predictions.from_labels(
        GOLD, [flip[g] if i in wrong else g for i, g in enumerate(GOLD)], ["x", "y"]
    )


@pytest.fixture
def store(tmp_path, make_record):
    path = tmp_path / "r.sqlite"
    with ResultsStore(path) as results:
        for encoder, task, predictions in [
            ("Good", "SentLen", _pred(10)),
            ("Good", "WC", _pred(50)),
            ("Bad", "SentLen", _pred(60)),
            ("Bad", "WC", _pred(52, start=1)),
        ]:
            record = make_record(encoder, task, predictions.accuracy, n_test=len(GOLD))
            results.add(record, f"{encoder}-{task}", predictions)
        results.add(make_record("Old", "SentLen", 0.5), "old")  # stored before predictions
    return path


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_compare_marks_significant_tasks(store):
    res = invoke("compare", "Good", "Bad", "--results", str(store))
    assert res.exit_code == 0, res.output
    sentlen = next(line for line in res.output.splitlines() if line.startswith("| SentLen"))
    wc = next(line for line in res.output.splitlines() if line.startswith("| WC"))
    assert "+25.0*" in sentlen and "*" not in wc
    assert "alpha = 0.05" in res.output and "Holm" in res.output
    assert "MDD" in res.output and "80% power" in res.output  # what "no difference" can mean
    data = json.loads(
        invoke("compare", "Good", "Bad", "--results", str(store), "-f", "json").output
    )
    # SentLen: 50 items differ, 10.2 points detectable (exact power); WC: 4 differ, too few
    assert [t["mdd"] for t in data["tasks"]] == [pytest.approx(10.15, abs=0.01), None]
    assert data["mdd_power"] == 0.8
    assert data["correction"] == "holm" and [t["significant"] for t in data["tasks"]] == [
        True,
        False,
    ]


def test_compare_errors_are_one_line(store):
    res = invoke("compare", "Good", "Nope", "--results", str(store))
    assert res.exit_code == 1 and "no row 'Nope'" in res.output
    assert "Traceback" not in res.output
    res = invoke("compare", "Good", "Old", "--results", str(store))
    assert res.exit_code == 1 and "Old: no stored predictions" in res.output


def test_agreement_matrix(store):
    res = invoke("report", "--results", str(store), "--agreement", "--by-task")
    assert res.exit_code == 0, res.output
    assert "item-weighted" in res.output and "| Good |" in res.output and "Old" not in res.output
    rows = json.loads(invoke("report", "--results", str(store), "--agreement", "-f", "json").output)
    overall = next(r for r in rows if r["task"] == "all" and r["row_a"] == "Good")
    assert overall["n_items"] == 400


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_report_has_ci_columns(store, fmt):
    res = invoke("report", "--results", str(store), "-f", fmt)
    assert res.exit_code == 0, res.output
    if fmt == "csv":
        assert "SentLen ci_low" in res.output and "SentLen ci_high" in res.output
    if fmt == "json":  # one tidy schema (issue 46): the interval is each record's ci_low/high
        by = {r["encoder"]: r for r in json.loads(res.output) if r["task"] == "SentLen"}
        assert by["Good"]["ci_low"] < 95.0 < by["Good"]["ci_high"]
        assert by["Old"]["ci_low"] is None  # no predictions: no interval
    plain = invoke("report", "--results", str(store), "-f", fmt, "--no-ci")
    if fmt == "csv":
        assert "ci_low" not in plain.output
    else:
        assert all(r["ci_low"] is None for r in json.loads(plain.output))


FORMS = [f"w{i // 20}" for i in range(len(GOLD))]  # a lexical split: 10 forms of 20 items


@pytest.fixture
def lexical(tmp_path, make_record):
    """SubjNum stored with each test item's form: Good beats Bad on every item of one form
    (w0) and nowhere else, 20 items that McNemar would count as 20 independent wins."""
    path = tmp_path / "lexical.sqlite"
    bad = Predictions.from_labels(GOLD, [g if i >= 20 else "z" for i, g in enumerate(GOLD)],
                                  ["x", "y"], clusters=FORMS)  # fmt: skip
    good = Predictions.from_labels(GOLD, GOLD, ["x", "y"], clusters=FORMS)
    with ResultsStore(path) as results:
        for encoder, predictions in (("Good", good), ("Bad", bad)):
            record = make_record(encoder, "SubjNum", predictions.accuracy, n_test=len(GOLD))
            results.add(record, f"{encoder}-SubjNum", predictions)
    return path


def test_compare_on_a_lexical_split_swaps_whole_forms(lexical):
    from sentprobe.analysis.stats import mcnemar_exact

    assert mcnemar_exact(20, 0) < 1e-5  # what an item-level test would claim
    res = invoke("compare", "Good", "Bad", "--results", str(lexical))
    assert res.exit_code == 0, res.output
    line = next(row for row in res.output.splitlines() if row.startswith("| SubjNum"))
    assert "200 / 10 forms" in line and "+10.0 " in line and "*" not in line
    assert "swapping a's and b's results on whole forms" in res.output
    data = json.loads(
        invoke("compare", "Good", "Bad", "--results", str(lexical), "-f", "json").output
    )
    [task] = data["tasks"]
    assert task["clusters"] == 10 and task["test"] == "permutation over forms"
    assert task["p_mcnemar"] is None and task["p_holm"] == task["p_permutation"] == 1.0
    assert task["diff_low"] <= 0.0  # one form of ten: the interval over forms reaches 0


def test_report_interval_on_a_lexical_split_resamples_forms(lexical):
    from sentprobe.analysis.stats import bootstrap_ci

    res = invoke("report", "--results", str(lexical), "-f", "json")
    assert res.exit_code == 0, res.output
    bad = next(
        r for r in json.loads(res.output) if r["encoder"] == "Bad" and r["task"] == "SubjNum"
    )
    correct = [i >= 20 for i in range(len(GOLD))]
    low, high = bootstrap_ci(correct, clusters=FORMS)
    assert (bad["ci_low"], bad["ci_high"]) == (
        pytest.approx(100 * low),
        pytest.approx(100 * high),
    )
    items = bootstrap_ci(correct)
    assert high - low > 1.5 * (items[1] - items[0])
