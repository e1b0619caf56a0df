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


def test_a_control_map_per_seed_paired_with_its_task(tmp_path, monkeypatch) -> None:
    """--seeds 3 draws three control maps (three identities in the store); logreg, which has
    no seed, fits the task once and each map once, and its one task record pairs with every
    map; the ± of the control tables is over those maps, and the ceiling is given per map."""
    from sentprobe.datasets.controls import control_ceiling, control_task

    task = make_mock_task("A", seed=1, n_train=120, n_dev=30, n_test=30)
    kw = {"baselines": "none", "cache_dir": tmp_path / "cache", "progress": False}
    frame = run([HashedWords()], [task], controls=True, seeds=3, results=tmp_path / "r", **kw)
    tasks, controls = split_controls(frame)
    assert len(tasks) == 1 and tasks["extra"].iloc[0]["seeded"] is False
    maps = {s: control_task(task, seed=s) for s in range(3)}
    assert sorted(zip(controls["seed"], controls["task_hash"])) == sorted(
        (s, m.content_hash()) for s, m in maps.items()
    )
    assert sorted(e["control_seed"] for e in controls["extra"]) == [0, 1, 2]
    sel = selectivity_frame(frame)
    assert sorted(sel["seed"]) == [0, 1, 2] and set(sel["key"]) == set(tasks["key"])
    tidy = method_frame(frame).iloc[0]
    ceilings = [100 * control_ceiling(m) for m in maps.values()]
    assert tidy["control_maps"] == 3 and tidy["control_ceiling_min"] == min(ceilings)
    assert tidy["control_ceiling"] == pytest.approx(np.mean(ceilings), rel=1e-12)
    text = report_text(frame, "markdown")
    assert "± sd over control maps" in text and "lowest over the control maps" in text
    section = text.split("**Selectivity")[1]
    spread = 100 * sel["selectivity"].std()
    assert f"{100 * sel['selectivity'].mean():.1f} ± {spread:.1f}" in section
    # each map's test agreement with the task's labels, and between maps, from the labels
    real = task.splits["test"].labels

    def alike(a: list[str], b: list[str]) -> float:
        return 100 * float(np.mean([x == y for x, y in zip(a, b, strict=True)]))

    agree = [alike(m.splits["test"].labels, real) for m in maps.values()]
    between = [
        alike(maps[i].splits["test"].labels, maps[j].splits["test"].labels)
        for i in range(3)
        for j in range(i + 1, 3)
    ]
    assert tidy["control_agreement"] == pytest.approx(np.mean(agree), rel=1e-12)
    assert (tidy["control_agreement_min"], tidy["control_agreement_max"]) == (
        min(agree),
        max(agree),
    )
    assert tidy["maps_agreement"] == pytest.approx(np.mean(between), rel=1e-12)
    assert tidy["maps_agreement_max"] == pytest.approx(max(between), rel=1e-12)
    section = text.split("**Control labels' agreement")[1].split("**Selectivity")[0]
    row = f"| A    | {' | '.join(f'{a:5.1f}' for a in agree)} | {np.mean(between):12.1f} |"
    assert row in section, section
    for fmt in ("csv", "json"):
        assert "maps_agreement_max" in report_text(frame, fmt)

    # a seeded probe: seed s of the task pairs with seed s of the control (map s)
    from sentprobe.probes.linear import LogisticProbe
    from sentprobe.registry import probes

    class Seeded(LogisticProbe):
        uses_seed = True

    monkeypatch.setitem(probes._entries, "seeded-test", lambda task, seed=0: Seeded(l2=0.01))
    seeded = run([HashedWords()], [task], controls=True, seeds=2, probe="seeded-test",
                 results=tmp_path / "m", **kw)  # fmt: skip
    sel = selectivity_frame(seeded)
    by_key = seeded.set_index("key")
    assert sorted(sel["seed"]) == [0, 1] and sel["key"].nunique() == 2
    assert all(by_key.loc[k, "seed"] == s for k, s in zip(sel["key"], sel["seed"], strict=True))


def _edited(frame: pd.DataFrame, where, **extra) -> pd.DataFrame:
    """``frame`` with ``extra`` merged into the ``extra`` of the records ``where`` selects."""
    chosen = where(frame)
    out = frame.copy()
    out["extra"] = [
        {**e, **extra} if pick else e for e, pick in zip(out["extra"], chosen, strict=True)
    ]
    return out


def test_a_control_that_permutes_the_labels_has_no_selectivity(results) -> None:
    """A control whose labels are the task's renamed (here two keys, one item of each per
    split): its selectivity is 0 by construction, so every format prints n/a with the
    reason."""
    from sentprobe.cli.report_html import results_section
    from sentprobe.datasets import ProbingTask, Split, TaskMetadata
    from sentprobe.datasets.controls import control_task
    from sentprobe.reporting.controls import PERMUTED
    from sentprobe.reporting.html import _results_table

    two = {
        name: Split([f"alpha {name} .", f"beta {name} ."], ["x", "y"]) for name in ("train", "test")
    }
    assert (
        control_task(ProbingTask(TaskMetadata(name="Two"), two)).permutes
        and not control_task(make_mock_task("A", seed=1, n_train=120, n_dev=30, n_test=30)).permutes
    )
    _, frame = results
    frame = _edited(frame, lambda f: f["task"] == "A~control", control_permutes=True)
    text = report_text(frame, "markdown")
    section = text.split("**Selectivity")[1].split("**MDL")[0]
    assert "n/a" in section and PERMUTED in section
    assert "n/a" not in text.split("**Selectivity")[0]  # the control's accuracy is a number
    assert "n/a" in report_text(frame, "latex").split("Selectivity")[1]
    tidy = pd.read_csv(io.StringIO(report_text(frame, "csv"))).set_index(["task", "probe"])
    assert pd.isna(tidy.loc[("A", "logreg"), "selectivity"])
    assert PERMUTED in tidy.loc[("A", "logreg"), "notes"]
    assert not pd.isna(tidy.loc[("B", "logreg"), "selectivity"])
    records = json.loads(report_text(frame, "json"))
    a = next(r for r in records if r["task"] == "A" and r["probe"] == "logreg")
    assert a["selectivity"] is None and PERMUTED in a["notes"]
    page = _results_table(results_section(frame, None, {}, "test_score", None, 0.05))
    assert "sel n/a" in page and "sel +" in page or "sel -" in page  # B keeps its number


def test_a_probe_that_says_nothing_is_marked_in_every_format(tmp_path) -> None:
    """Constant vectors leave logreg nothing to read: it predicts one class on test and its
    dev score is the majority rate. Every format marks the cell and says why."""
    from sentprobe.cli.report_html import build_report
    from sentprobe.reporting.html import render_html
    from sentprobe.reporting.tables import COLLAPSED, results_table

    class Constant(HashedWords):
        name = "Constant"

        @property
        def fingerprint(self) -> str:
            return "constant-v1"

        def encode(self, sentences):
            return np.ones((len(sentences), 4), dtype=np.float32)

    tasks = [make_mock_task("A", seed=1, n_train=120, n_dev=30, n_test=30)]
    store = tmp_path / "r.sqlite"
    kw = {"baselines": "majority", "cache_dir": tmp_path / "c", "progress": False}
    frame = run([Constant(), HashedWords()], tasks, results=store, **kw)
    constant = frame[frame["encoder"] == "Constant"].iloc[0]
    assert constant["extra"]["predicted_classes"] == 1
    majority = frame[frame["encoder"] == "Majority"].iloc[0]
    assert "predicted_classes" not in majority["extra"]  # constant by design: not marked
    md = results_table(frame, fmt="markdown")
    line = next(x for x in md.splitlines() if x.startswith("| Constant"))
    assert COLLAPSED in line and "predicted a single class" in md
    assert COLLAPSED not in next(x for x in md.splitlines() if x.startswith("| Majority"))
    assert COLLAPSED not in next(x for x in md.splitlines() if x.startswith("| Hashed"))
    assert r"\emptyset" in results_table(frame, fmt="latex")
    for fmt in ("csv", "json"):
        text = results_table(frame, fmt=fmt)
        assert "A: predicts a single class on test" in text
    with_controls = run([Constant()], tasks, controls=True, results=tmp_path / "k.sqlite", **kw)
    tidy = pd.read_csv(io.StringIO(report_text(with_controls, "csv"))).set_index("encoder")
    assert "predicts a single class on test" in tidy.loc["Constant", "notes"]
    page = render_html(build_report(store, frame))
    assert f"<sup>{COLLAPSED}</sup>" in page and "predicted a single class" in page


def test_stored_digits_reach_every_format(results) -> None:
    """A stored compression of 0.998 (where 1.00 would hide that the code does not compress)
    comes out as 0.998 in markdown, LaTeX, HTML, CSV and JSON, with the saving in bits."""
    from sentprobe.cli.report_html import mdl_table
    from sentprobe.reporting.html import _simple_table

    _, frame = results
    uniform = 120.0
    frame = _edited(
        frame,
        lambda f: (f["probe"] == "mdl") & (f["task"] == "A"),
        compression=0.998,
        codelength=uniform / 0.998,
        uniform_codelength=uniform,
    )
    saving = uniform - uniform / 0.998  # -0.24 bits
    for fmt in ("markdown", "latex"):
        text = report_text(frame, fmt)
        assert "0.998" in text.split("MDL compression")[1]
        assert f"{saving:.1f}" in text.split("MDL saving")[1]
    page = _simple_table(mdl_table(frame))
    assert ">0.998<" in page and f">{saving:.1f}<" in page and ">120.2<" in page
    tidy = pd.read_csv(io.StringIO(report_text(frame, "csv")))
    mdl = tidy[tidy["probe"] == "mdl"].iloc[0]
    assert mdl["compression"] == 0.998 and mdl["saving_bits"] == pytest.approx(saving, rel=1e-9)
    assert mdl["no_signal_bound"] == 1.0  # a negative saving bounds nothing
    record = next(r for r in json.loads(report_text(frame, "json")) if r["probe"] == "mdl")
    assert record["compression"] == 0.998 and record["codelength_bits"] == uniform / 0.998
