"""Control/MDL report sections from a real (tiny) run, and the CLI's layer and reference paths."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sentprobe.datasets import make_mock_task
from sentprobe.encoders.base import Encoder
from sentprobe.evaluation.runner import run
from sentprobe.evaluation.store import ResultsStore
from sentprobe.reporting.compose import report_text
from sentprobe.reporting.controls import (
    mdl_frame,
    method_frame,
    selectivity_frame,
    split_controls,
)


class HashedWords(Encoder):
    """Bag of hashed tokens, two 'layers' (the second scaled), fast and deterministic."""

    name = "Hashed"

    def __init__(self, views: list[str] | None = None) -> None:
        self._views = views

    @property
    def fingerprint(self) -> str:
        return f"hashed-words-v1-{self._views}"

    @property
    def views(self):
        return self._views

    def encode(self, sentences):
        out = np.zeros((len(sentences), 64), dtype=np.float32)
        for i, s in enumerate(sentences):
            for tok in s.split():
                out[i, zlib.crc32(tok.encode()) % 64] += 1
        if self._views:
            out = np.stack([out * (v + 1) for v in range(len(self._views))], axis=1)
        return out


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> tuple[Path, pd.DataFrame]:
    tmp = tmp_path_factory.mktemp("controls")
    store = tmp / "r.sqlite"
    small = {"n_train": 120, "n_dev": 30, "n_test": 30}
    tasks = [
        make_mock_task("A", seed=1, **small),
        make_mock_task("B", n_classes=4, seed=2, **small),
    ]
    kw = {"baselines": "none", "results": store, "cache_dir": tmp / "cache", "progress": False}
    run([HashedWords()], tasks, controls=True, **kw)
    run([HashedWords()], tasks[:1], probe="mdl", controls=True, **kw)
    with ResultsStore(store, readonly=True) as s:
        return store, s.to_frame()


def test_controls_are_units_of_their_own_and_pair_up(results) -> None:
    _, frame = results
    tasks, controls = split_controls(frame)
    assert sorted(controls["task"]) == ["A~control", "A~control", "B~control"]  # one mdl
    sel = selectivity_frame(frame)
    pairs = sorted(zip(sel["task"], sel["probe"], strict=True))
    assert pairs == [("A", "logreg"), ("A", "mdl"), ("B", "logreg")]
    for row in sel.itertuples():
        probed = controls[controls["probe"] == row.probe]
        control = probed[probed["task"] == f"{row.task}~control"]["test_score"].iloc[0]
        assert row.control_score == control
        assert row.selectivity == pytest.approx(row.test_score - control)


def test_controls_are_probed_with_the_tasks_chosen_configuration(results) -> None:
    _, frame = results
    logreg = frame[frame["probe"] == "logreg"].set_index("task")
    for task in ("A", "B"):
        control = logreg.loc[f"{task}~control"]
        assert control["config"] == logreg.loc[task, "config"]
        assert len(control["extra"]["grid"]) == 1  # one configuration, not the grid


def test_report_sections(results) -> None:
    _, frame = results
    text = report_text(frame, "markdown")
    for title in ("Control task accuracy", "Selectivity", "MDL compression", "codelength"):
        assert title in text
    assert "~control" not in text  # controls are no columns of the results table
    tidy = pd.read_csv(io.StringIO(report_text(frame, "csv")))
    assert {"control_score", "selectivity", "codelength_bits", "compression"} <= set(tidy)
    mdl = tidy[tidy["probe"] == "mdl"]
    assert len(mdl) == 1 and (mdl["compression"] > 0).all()
    logreg = method_frame(frame).query("probe == 'logreg'")
    assert (logreg["selectivity"] - (logreg["score"] - logreg["control_score"])).abs().max() < 1e-9
    records = json.loads(report_text(frame, "json"))
    assert all("selectivity" in r for r in records)


def test_tidy_report_keeps_confidence_intervals(results) -> None:
    """With control and MDL results the csv/json report is the tidy table: it must carry each
    cell's CI bounds as the wide table does, not drop them."""
    from sentprobe.cli.report import intervals

    store, frame = results
    interval = intervals(store, frame)
    tidy = pd.read_csv(io.StringIO(report_text(frame, "csv", interval=interval)))
    assert tidy[["ci_low", "ci_high"]].notna().all().all()
    assert ((tidy["ci_low"] <= tidy["score"]) & (tidy["score"] <= tidy["ci_high"])).all()
    from sentprobe.reporting.tables import results_table

    tasks, _ = split_controls(frame)
    wide = pd.read_csv(io.StringIO(results_table(tasks, fmt="csv", interval=interval)))
    for r in tidy.itertuples():  # the same bounds as the results table's
        name = r.encoder if frame["probe"][frame["encoder"] == r.encoder].nunique() < 2 else None
        row = wide[wide["encoder"] == (name or f"{r.encoder} [{r.probe}]")].iloc[0]
        assert (r.ci_low, r.ci_high) == pytest.approx(
            (row[f"{r.task} ci_low"], row[f"{r.task} ci_high"]), abs=0.06
        )
    records = json.loads(report_text(frame, "json", interval=interval))
    assert all(r["ci_low"] <= r["score"] <= r["ci_high"] for r in records)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sentprobe", *args], cwd=cwd, capture_output=True, text=True
    )


def test_cli_layers_and_reference(results, tmp_path) -> None:
    store, _ = results
    res = _cli("report", "--results", str(store), "--layers", cwd=tmp_path)
    assert res.returncode == 1 and "--layer all" in res.stderr and "Traceback" not in res.stderr
    tasks = [make_mock_task("A", seed=1, n_train=120, n_dev=30, n_test=30)]
    layered = tmp_path / "layers.sqlite"
    run(
        [HashedWords(views=["layer0", "layer1"])],
        tasks,
        baselines="none",
        results=layered,
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    res = _cli("report", "--results", str(layered), "--layers", "-f", "json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    (summary,) = json.loads(res.stdout)
    assert summary["encoder"] == "Hashed" and summary["layers"] == 2
    bad = tmp_path / "ref.csv"
    bad.write_text("row,task,score\nHuman,A,abc\n", encoding="utf-8")
    res = _cli("report", "--results", str(store), "--reference", str(bad), cwd=tmp_path)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert f"{bad}, line 2: score 'abc' is not a number" in res.stderr


def test_text_baselines_probe_a_control_with_their_tasks_choice(tmp_path, monkeypatch) -> None:
    from sentprobe.probes.baselines import NBTfidfProbe, _tfidf

    _tfidf.cache_clear()
    grids: dict[str, object] = {}
    fit = NBTfidfProbe.fit

    def spy(self, X, y, *dev):
        grids["control" if len(grids) else "task"] = self.alpha
        return fit(self, X, y, *dev)

    monkeypatch.setattr(NBTfidfProbe, "fit", spy)
    task = make_mock_task("A", seed=1, n_train=120, n_dev=30, n_test=30)
    frame = run(
        [], [task], baselines="nb-uni", controls=True, results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "cache", progress=False,
    )  # fmt: skip
    chosen = frame.set_index("task")["config"]
    assert grids["task"] == (0.01, 0.1, 1.0)  # the task selects on its grid
    assert grids["control"] == chosen["A"]["alpha"] == chosen["A~control"]["alpha"]
    assert _tfidf.cache_info().hits == 1  # the control reuses its task's tf-idf features


def test_ceiling_and_control_mdl_in_every_format(results) -> None:
    """Each control accuracy comes with its ceiling (a perfect memoriser's test accuracy on
    the control task) and the control task's MDL beside the task's, in every format."""
    from sentprobe.cli.report_html import build_report
    from sentprobe.datasets.controls import control_ceiling, control_task
    from sentprobe.reporting.html import render_html

    store, frame = results
    small = {"n_train": 120, "n_dev": 30, "n_test": 30}
    tasks = {
        "A": make_mock_task("A", seed=1, **small),
        "B": make_mock_task("B", n_classes=4, seed=2, **small),
    }
    want = {name: 100 * control_ceiling(control_task(t)) for name, t in tasks.items()}
    tidy = pd.read_csv(io.StringIO(report_text(frame, "csv")))
    logreg = tidy[tidy["probe"] == "logreg"].set_index("task")
    assert logreg["control_ceiling"].to_dict() == pytest.approx(want, rel=1e-12)
    mdl = tidy[tidy["probe"] == "mdl"].iloc[0]
    controls = frame[(frame["probe"] == "mdl") & (frame["task"] == "A~control")]
    assert mdl["control_compression"] == controls["extra"].iloc[0]["compression"]
    records = json.loads(report_text(frame, "json"))
    assert {r["task"]: r["control_ceiling"] for r in records if r["probe"] == "logreg"} == (
        pytest.approx(want, rel=1e-12)
    )
    for fmt in ("markdown", "latex"):
        text = report_text(frame, fmt)
        assert "Control ceiling" in text and "MDL compression of the control tasks" in text
        assert f"{want['B']:.1f}" in text.split("Control ceiling")[1].split("Selectivity")[0]
    page = render_html(build_report(store, frame))
    assert f"(ceiling {want['A']:.1f})" in page and "Control compression" in page


def test_mdl_of_a_rebuilt_control_task_shows_the_newest_only(results) -> None:
    """A store holding a control task's MDL on older task data (the control rebuilt by a newer
    sentprobe) shows the newest result, as selectivity does; averaging the two mixed them."""
    _, frame = results
    controls = frame[(frame["probe"] == "mdl") & (frame["task"] == "A~control")]
    older = controls.assign(
        task_hash="older",
        created="2000-01-01T00:00:00+00:00",  # ISO strings, as the store writes them
        extra=[{**e, "compression": 0.5, "codelength": 1e6} for e in controls["extra"]],
    )
    mixed = pd.concat([older, frame], ignore_index=True)
    shown = mdl_frame(mixed, controls=True)
    assert len(shown) == len(controls)
    assert list(shown["compression"]) == [e["compression"] for e in controls["extra"]]
    tidy = pd.read_csv(io.StringIO(report_text(mixed, "csv")))
    mdl = tidy[tidy["probe"] == "mdl"].iloc[0]
    assert mdl["control_compression"] == controls["extra"].iloc[0]["compression"]
