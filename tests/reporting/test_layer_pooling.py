"""Layer x pooling reports: rows ``<model>@layer<K>/<pooling>`` (several poolings read from
one forward pass) become a curve per pooling, a Pooling column in ``report --layers``, and a
heatmap per (model, task) with each cell's CI, in the HTML report and ``--layer-heatmap``."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from sentprobe.analysis.layers import layer_scores, layer_summary, layers_report
from sentprobe.cli.main import app
from sentprobe.cli.report import _load_results
from sentprobe.cli.report_html import build_report
from sentprobe.evaluation.predictions import Predictions
from sentprobe.evaluation.store import ResultsStore

pytest.importorskip("matplotlib")

N_TEST = 100
#: accuracy of (layer, pooling): mean peaks at layer 1, last at layer 2
SCORES = {
    "mean": [0.60, 0.80, 0.70],
    "last": [0.55, 0.65, 0.90],
}


def _predictions(rng: np.random.Generator, accuracy: float) -> Predictions:
    gold = np.random.default_rng(1).integers(0, 2, N_TEST)
    right = np.zeros(N_TEST, dtype=bool)
    right[rng.choice(N_TEST, int(round(accuracy * N_TEST)), replace=False)] = True
    return Predictions.from_labels(gold, np.where(right, gold, 1 - gold), labels=["0", "1"])


def _store(path, make_record, poolings=tuple(SCORES)):
    rng = np.random.default_rng(0)
    with ResultsStore(path) as results:
        for pooling in poolings:
            scores = SCORES[pooling]
            for layer, acc in enumerate(scores):
                view = f"layer{layer}/{pooling}"
                record = make_record(
                    f"dec@{view}",
                    "Tense",
                    acc,
                    encoder_fingerprint=f"hf|dec|pool=mean,last#{view}",
                    n_test=N_TEST,
                )
                results.add(record, f"dec|{view}", _predictions(rng, acc))
        results.add(make_record("Majority", "Tense", 0.5), "maj", _predictions(rng, 0.5))
    return path


@pytest.fixture
def store(tmp_path, make_record):
    return _store(tmp_path / "r.sqlite", make_record)


def test_each_pooling_is_a_curve_of_its_own(store):
    frame = _load_results(store, None)
    scores = layer_scores(frame)
    assert set(scores["pooling"]) == {"mean", "last"} and (scores["encoder"] == "dec").all()
    peaks = layer_summary(frame).set_index("pooling")["peak_layer"]
    assert peaks.to_dict() == {"mean": 1, "last": 2}
    table = layers_report(frame)
    assert "Pooling" in table.splitlines()[0]
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in table.splitlines()[2:]]
    assert ["dec", "logreg", "Tense", "last", "3", "2", "90.0", "55.0"] in [r[:8] for r in rows]


def test_the_heatmap_shows_every_cell_with_its_ci(store):
    from sentprobe.cli.report_figures import layer_data, layer_pooling_figure
    from sentprobe.cli.report_html import _intervals

    frame = _load_results(store, None)
    interval, _ = _intervals(store, frame)
    curves, _ = layer_data(frame, interval)
    fig = layer_pooling_figure(curves)
    (ax,) = [a for a in fig.axes if a.get_visible()]
    cells = {t.get_text() for t in ax.texts}
    assert len(cells) == 6
    assert all("\n±" in c for c in cells)  # every cell has its CI
    assert any(c.startswith("90.0\n±") for c in cells) and any(c.startswith("55.0") for c in cells)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["mean", "last"]
    report = build_report(store, frame)
    assert "layer-pooling" in [p.id for p in report.plots]


def test_layer_heatmap_on_the_command_line(store, tmp_path, make_record):
    out = tmp_path / "heat.png"
    res = CliRunner().invoke(app, ["report", "--results", str(store), "--layer-heatmap", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_bytes()[:4] == b"\x89PNG"
    one = _store(tmp_path / "one.sqlite", make_record, poolings=("last",))
    res = CliRunner().invoke(
        app, ["report", "--results", str(one), "--layer-heatmap", str(tmp_path / "x.png")]
    )
    assert res.exit_code == 1 and not (tmp_path / "x.png").exists()
    assert "no model read several poolings" in res.stderr
