"""Issue 46: ``-t`` accumulates when repeated (and still takes comma lists), and ``report -e``
takes every row name the reports print; a ``-e`` that names no row is an error everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sentprobe.cli.main import app
from sentprobe.cli.run import task_items
from sentprobe.evaluation.store import ResultsStore

ENCODER = """
import hashlib
import numpy as np


def encode(sentences):
    rows = []
    for s in sentences:
        seed = int(hashlib.sha1(s.encode()).hexdigest()[:8], 16)
        rows.append(np.random.default_rng(seed).normal(size=16) + len(s.split()))
    return np.array(rows, dtype=np.float32)
"""


def test_task_items_accumulate_and_split():
    assert task_items(["a", "b,c", " a ", ""]) == ["a", "b", "c"]


def test_run_probes_every_repeated_task(tmp_path):
    (tmp_path / "enc.py").write_text(ENCODER)
    args = ["run", "-e", f"{tmp_path / 'enc.py'}:encode", "--baselines", "none", "-q"]
    args += ["-t", "sample-en/Tense", "-t", "sample-en/SentLen", "-f", "json"]
    args += ["--results", str(tmp_path / "r.sqlite"), "--cache-dir", str(tmp_path / "c")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    with ResultsStore(tmp_path / "r.sqlite", readonly=True) as store:
        tasks = set(store.to_frame()["task"])
    assert tasks == {"Tense", "SentLen"}


@pytest.fixture
def two_probes(tmp_path, make_record) -> Path:
    store = tmp_path / "r.sqlite"
    with ResultsStore(store) as s:
        for probe, acc in (("logreg", 0.611), ("mlp", 0.733)):
            s.add(make_record("BoV-GloVe", "Tense", acc, probe=probe), probe)
        s.add(make_record("Majority", "Tense", 0.5, probe="logreg"), "maj")
    return store


def _report(store: Path, *extra: str):
    return CliRunner().invoke(app, ["report", "--results", str(store), "--no-ci", *extra])


def test_report_e_takes_the_row_names_the_table_prints(two_probes):
    table = _report(two_probes).output
    assert "BoV-GloVe [mlp]" in table and "BoV-GloVe [logreg]" in table
    result = _report(two_probes, "-f", "csv", "-e", "BoV-GloVe [mlp]")
    assert result.exit_code == 0, result.output
    assert "73.3" in result.output and "61.1" not in result.output
    both = _report(two_probes, "-f", "csv", "-e", "BoV-GloVe")
    assert "73.3" in both.output and "61.1" in both.output and "Majority" not in both.output


@pytest.mark.parametrize("mode", [[], ["--agreement"], ["-f", "json"], ["--provenance"]])
def test_an_unmatched_e_is_an_error_in_every_mode(two_probes, mode):
    result = _report(two_probes, *mode, "-e", "Majority", "-e", "BoV-GloVe [nope]")
    assert result.exit_code == 1
    assert "'BoV-GloVe [nope]'" in result.output and "names no stored row" in result.output


def test_json_rows_selected_by_table_name(two_probes):
    rows = json.loads(_report(two_probes, "-f", "json", "-e", "BoV-GloVe [logreg]").output)
    assert [r["score"] if "score" in r else r["Tense"] for r in rows] == [pytest.approx(61.1)]


def test_report_e_takes_a_tag(tmp_path, make_record):
    from sentprobe.evaluation.identity import row_tag

    store = tmp_path / "r.sqlite"
    with ResultsStore(store) as s:
        for where, acc in (("a", 0.567), ("b", 0.493)):
            fp = f"trained-run-v2|/runs/{where}/nmt|e2"
            s.add(make_record("nmt@epoch-2", "SentLen", acc, encoder_fingerprint=fp), where)
    tag = row_tag("trained-run-v2|/runs/b/nmt|e2")
    rows = json.loads(_report(store, "-f", "json", "-e", tag).output)
    assert [(r["tag"], r["score"]) for r in rows] == [(tag, pytest.approx(49.3))]
