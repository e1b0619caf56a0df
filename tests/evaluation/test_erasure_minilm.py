"""Erasure on the real thing: MiniLM on sample-en, Tense erased (``run --erase Tense``), and
on a user's SentEval-format Tense file."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from sentprobe.cli.main import app

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def erased(tmp_path_factory):
    root = tmp_path_factory.mktemp("erasure")
    results = root / "r.sqlite"
    where = ["--results", str(results)]
    run = CliRunner().invoke(
        app,
        ["run", "-e", "minilm", "-t", "sample-en", "--erase", "Tense", "--probe", "logreg",
         "--baselines", "none", "--cache-dir", str(root / "cache"), "-q", *where],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    report = CliRunner().invoke(app, ["report", *where, "--erasure", "--format", "json"])
    assert report.exit_code == 0, report.output
    text = CliRunner().invoke(app, ["report", *where, "--erasure"])
    page = root / "report.html"
    html = CliRunner().invoke(app, ["report", *where, "--html", str(page)])
    assert html.exit_code == 0, html.output
    return json.loads(report.output), text.output, page.read_text(encoding="utf-8")


def _line(records, method, task):
    return next(r for r in records if r["method"] == method and r["task"] == task)


def _judged_out_of_sample(tense: dict, text: str) -> None:
    """The acceptance of the held-out check: within majority + 10 points, or said to fail."""
    assert tense["heldout_n"] > 0 and tense["heldout_low"] <= tense["heldout"]
    held = f"{tense['heldout']:.1f} [{tense['heldout_low']:.1f}, {tense['heldout_high']:.1f}]"
    assert held in text
    if tense["heldout"] > tense["heldout_majority"] + 10:
        assert tense["failed_held_out"] and "ERASURE FAILED out of sample" in text
    assert tense["failed_held_out"] == (tense["heldout_low"] > tense["heldout_majority"])


def test_erasing_tense_brings_tense_to_majority_in_sample(erased):
    records, text, _ = erased
    tense = _line(records, "leace", "Tense")
    assert tense["erased_task"] and not tense["failed_in_sample"]
    assert tense["before"] > 80  # decodable before
    assert tense["after_low"] <= tense["majority"] <= tense["after_high"]
    _judged_out_of_sample(tense, text)


def test_the_controls_move_every_task_less_than_leace_moves_tense(erased):
    records, _, _ = erased
    tense = abs(_line(records, "leace", "Tense")["diff"])
    control = [r for r in records if r["method"] == "random"]
    assert len(control) == 30  # every sample-en task, three control seeds
    assert max(abs(r["diff"]) for r in control) < tense
    sentlen = [r for r in control if r["task"] == "SentLen"]
    assert all(r["diff_low"] <= 0 <= r["diff_high"] for r in sentlen)  # no tiny-scale artefact


def test_the_table_and_the_heatmap_show_cis(erased):
    records, text, page = erased
    tense = _line(records, "leace", "Tense")
    ci = f"{tense['after']:.1f} [{tense['after_low']:.1f}, {tense['after_high']:.1f}]"
    assert ci in text and "erased (at chance)" in text
    assert "Erasure: is the property used?" in page
    cell = f"[{tense['diff_low']:+.1f}, {tense['diff_high']:+.1f}]"
    assert cell in page  # the heatmap cell's CI, as text in the inline SVG
    held = f"[{tense['heldout_low']:.1f}, {tense['heldout_high']:.1f}]"
    assert held in page  # the held-out check's cell


def test_a_users_senteval_tense_file_is_judged_out_of_sample(tmp_path):
    """A SentEval-format file (tr/va/te, label, sentence), as a user gives it with -t."""
    from importlib.resources import files

    source = files("sentprobe.datasets.data") / "sample_en" / "past_present.txt"
    path = tmp_path / "past_present.txt"
    path.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    where = ["--results", str(tmp_path / "r.sqlite")]
    run = CliRunner().invoke(
        app,
        ["run", "-e", "minilm", "-t", str(path), "--erase", "Tense", "--probe", "logreg",
         "--baselines", "none", "--cache-dir", str(tmp_path / "cache"), "-q", *where],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    report = CliRunner().invoke(app, ["report", *where, "--erasure", "--format", "json"])
    text = CliRunner().invoke(app, ["report", *where, "--erasure"]).output
    tense = next(
        r for r in json.loads(report.output) if r["erased_task"] and r["method"] == "leace"
    )
    assert not tense["failed_in_sample"]
    _judged_out_of_sample(tense, text)
