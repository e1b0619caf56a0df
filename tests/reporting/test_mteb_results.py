"""``report --format mteb``: MTEB's results layout, read back by MTEB's own loader."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from sentprobe.cli.main import app
from sentprobe.evaluation.runner import run

mteb = pytest.importorskip("mteb", minversion="2.26")  # the version these were run with


def test_report_mteb_is_read_back_by_mtebs_result_cache(tmp_path):
    store = tmp_path / "r.sqlite"
    frame = run(
        [], "mock/Mock,mock/Mock4", baselines="majority,nb-uni", results=store, progress=False
    )
    out = tmp_path / "mteb"
    result = CliRunner().invoke(
        app, ["report", "--results", str(store), "--format", "mteb", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    loaded = mteb.ResultCache(cache_path=out).load_results(include_remote=False)
    scores = {
        (m.model_name, t.task_name): t.get_score()
        for m in loaded.model_results
        for t in m.task_results
    }
    expected = {
        (row.encoder, f"sentprobe.{row.task.replace('/', '.')}"): row.test_score
        for row in frame.itertuples()
    }
    assert scores == pytest.approx(expected)
    file = next(out.glob("results/NB-uni-tfidf/*/sentprobe.mock.Mock4.json"))
    extra = json.loads(file.read_text())["scores"]["test"][0]
    assert extra["sentprobe_ci95_low"] <= extra["main_score"] <= extra["sentprobe_ci95_high"]
    assert extra["sentprobe_probe"] and extra["sentprobe_seeds"] == 1


def test_report_mteb_needs_a_folder(tmp_path):
    store = tmp_path / "r.sqlite"
    run([], "mock/Mock", baselines="majority", results=store, progress=False)
    result = CliRunner().invoke(app, ["report", "--results", str(store), "--format", "mteb"])
    assert result.exit_code == 1 and "-o DIR" in result.output
