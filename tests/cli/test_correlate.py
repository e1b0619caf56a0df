"""``sentprobe correlate``: a results store against a downstream CSV, table and heatmap;
too few shared encoders and bad CSV lines are one clean error line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from sentprobe.cli.main import app
from sentprobe.evaluation.store import ResultsStore

ENCODERS = ["enc-a", "enc-b", "enc-c", "enc-d", "enc-e"]
WC = [0.50, 0.61, 0.55, 0.80, 0.72]


@pytest.fixture
def store(tmp_path, make_record):
    path = tmp_path / "results.sqlite"
    with ResultsStore(path) as s:
        for i, (encoder, wc) in enumerate(zip(ENCODERS, WC, strict=True)):
            s.add(make_record(encoder, "WC", wc), f"k-wc-{i}")
            s.add(make_record(encoder, "SentLen", 0.9 - 0.1 * i), f"k-sl-{i}")
    return path


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_correlate_table_and_heatmap(store, tmp_path):
    down = tmp_path / "down.csv"
    rows = [f"{e},STS,{wc * 100:.0f}" for e, wc in zip(ENCODERS, WC, strict=True)]
    down.write_text("encoder,task,score\n" + "\n".join(rows) + "\n")
    heat = tmp_path / "corr.png"
    res = _invoke(
        "correlate", "-d", str(down), "--results", str(store), "--heatmap", str(heat), "-f", "json"
    )
    assert res.exit_code == 0, res.output
    cells = {c["probing_task"]: c for c in json.loads(res.stdout)}
    assert cells["WC"]["rho"] == pytest.approx(1.0) and cells["WC"]["n"] == 5
    # SentLen falls a..e; STS ranks a..e are 1, 3, 2, 5, 4: sum d^2 = 4 against a..e
    assert cells["SentLen"]["rho"] == pytest.approx(-0.8)
    assert heat.stat().st_size > 5000


def test_correlate_too_few_encoders(store, tmp_path):
    down = tmp_path / "down.csv"
    down.write_text("encoder,task,score\nenc-a,STS,1\nenc-b,STS,2\nother,STS,3\n")
    res = _invoke("correlate", "-d", str(down), "--results", str(store))
    assert res.exit_code == 1
    assert "only 2 encoder(s)" in res.output and "at least 3" in res.output
    assert "Traceback" not in res.output


def test_correlate_bad_csv_line(store, tmp_path):
    down = tmp_path / "down.csv"
    down.write_text("encoder,task,score\nenc-a,STS,1\nenc-b,STS,lots\n")
    res = _invoke("correlate", "-d", str(down), "--results", str(store))
    assert res.exit_code == 1
    assert f"{down}, line 3: score 'lots' is not a finite number" in res.output
