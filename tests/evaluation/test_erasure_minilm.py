"""Erasure on the real thing: MiniLM on sample-en, Tense erased (``run --erase Tense``)."""

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


def test_erasing_tense_brings_tense_to_majority(erased):
    records, _, _ = erased
    tense = _line(records, "leace", "Tense")
    assert tense["erased_task"] and not tense["failed"]
    assert tense["before"] > 80  # decodable before
    assert tense["after_low"] <= tense["majority"] <= tense["after_high"]


def test_the_control_moves_every_task_less_than_leace_moves_tense(erased):
    records, _, _ = erased
    tense = abs(_line(records, "leace", "Tense")["diff"])
    control = [r for r in records if r["method"] == "random"]
    assert len(control) == 10  # every sample-en task
    assert max(abs(r["diff"]) for r in control) < tense


def test_the_table_and_the_heatmap_show_cis(erased):
    records, text, page = erased
    tense = _line(records, "leace", "Tense")
    ci = f"{tense['after']:.1f} [{tense['after_low']:.1f}, {tense['after_high']:.1f}]"
    assert ci in text and "erased (at chance)" in text
    assert "Erasure: is the property used?" in page
    cell = f"[{tense['diff_low']:+.1f}, {tense['diff_high']:+.1f}]"
    assert cell in page  # the heatmap cell's CI, as text in the inline SVG
