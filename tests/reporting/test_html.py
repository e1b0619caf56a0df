"""The HTML report: built from a small results store made here (baselines, a four-layer
encoder with per-item predictions, control tasks, a reference row), self-contained and
escaped, and rendered in headless Chromium: screenshot, the table and every plot in the
DOM, a working sort, no console error. The browser tests skip where Chromium is absent."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sentprobe.cli.report import _load_results
from sentprobe.cli.report_html import build_report
from sentprobe.evaluation.predictions import Predictions
from sentprobe.evaluation.store import ResultsStore
from sentprobe.reporting.html import markdown_html, render_html

TASKS = {"SentLen": 0.55, "Tense": 0.80, "WC": 0.30}
N_TEST = 200
#: A row name that would run code if it were not escaped.
EVIL = "<img src=x onerror=alert(1)>"


def _predictions(rng: np.random.Generator, accuracy: float, task: str) -> Predictions:
    """Predictions with the given accuracy on the task's test items (the same gold labels
    for every row of a task, as a real store has them)."""
    gold = np.random.default_rng(sum(map(ord, task))).integers(0, 2, N_TEST)
    right = np.zeros(N_TEST, dtype=bool)
    right[rng.choice(N_TEST, int(round(accuracy * N_TEST)), replace=False)] = True
    pred = np.where(right, gold, 1 - gold)
    return Predictions.from_labels(gold, pred, labels=["0", "1"])


def make_store(path: Path, make_record) -> Path:
    """Majority, a 4-layer encoder (whose accuracy peaks at layer 2), an oddly named row,
    and control tasks for the layers, each with stored predictions."""
    rng = np.random.default_rng(0)
    rows = {"Majority": dict.fromkeys(TASKS, 0.5)}
    for layer, gain in enumerate([0.0, 0.08, 0.15, 0.1]):
        rows[f"tiny@layer{layer}"] = {t: min(0.99, a + gain) for t, a in TASKS.items()}
    rows[EVIL] = dict.fromkeys(TASKS, 0.6)
    with ResultsStore(path) as store:
        for row, scores in rows.items():
            for task, acc in scores.items():
                key = f"{row}|{task}"
                record = make_record(row, task, acc, n_dev=N_TEST, n_test=N_TEST, n_train=800)
                store.add(record, key, _predictions(rng, acc, task))
                if "@layer" in row:
                    ctl = f"{task}~control"
                    record = make_record(row, ctl, 0.5, n_dev=N_TEST, n_test=N_TEST, n_train=800)
                    store.add(record, f"{key}~c", _predictions(rng, 0.5, ctl))
    return path


@pytest.fixture(scope="module")
def report_html(tmp_path_factory, make_record) -> tuple[str, Path]:
    tmp = tmp_path_factory.mktemp("report")
    store = make_store(tmp / "results.sqlite", make_record)
    down = tmp / "downstream.csv"
    lines = [f"tiny@layer{k},STS,{s}" for k, s in enumerate([0.3, 0.5, 0.7, 0.6])]
    down.write_text("encoder,task,score\n" + "\n".join([*lines, "Majority,STS,0.1"]) + "\n")
    reference = pd.DataFrame({"row": "Human", "task": list(TASKS), "score": [100.0, 99.0, 95.0]})
    frame = _load_results(store, None)
    report = build_report(store, frame, downstream=down, reference=reference)
    page = render_html(report)
    path = tmp / "report.html"
    path.write_text(page, encoding="utf-8")
    return page, path


def test_report_has_every_section_and_nothing_external(report_html):
    page, _ = report_html
    plots = ("layer-curves", "relative-heatmap", "correlation", "agreement")
    for anchor in ('id="results-table"', *(f'id="{p}"' for p in plots)):
        assert anchor in page
    assert "n = 5" in page  # the correlation's number of encoders
    # agreement: the rows share their test items, so off-diagonal cells have values
    start = page.index('id="agreement"')
    agreement = page[start : page.index("</figure>", start)]
    assert agreement.count(">100<") < 20 and re.search(r">[5-9]\d<", agreement)
    assert page.count("<svg") == len(plots)
    # CIs and selectivity in the cells of the rows that have them: tiny@layer2 scores 55 + 15
    # = 70 on SentLen, its control 50 (sel +20.0); Majority has no control, so no sel
    cells = _row_cells(page, "tiny@layer2")
    assert "sel +20.0" in cells[0] and "control task 50.0" in cells[0]
    assert all("[" in c and "sel " in c for c in cells)  # WC: 45 vs 50, sel -5.0
    assert "sel " not in "".join(_row_cells(page, "Majority"))
    assert 'class="reference"' in page and "Human (reference)" in page
    assert 'class="baseline"' in page
    # bold: each column's best and those not significantly worse (layer 0 is 15 points
    # below layer 2 on 200 items: significantly worse), never a baseline
    bold = page.count('class="num best"')
    assert len(TASKS) <= bold < 5 * len(TASKS)
    baseline = page[page.index('<tbody class="baseline">') : page.index("</tbody>")]
    assert "best" not in baseline
    assert "failure to reject, not evidence of a tie" in page  # what bold does not mean
    # self-contained: nothing is fetched when the file is opened
    external = r"""(src|href)\s*=\s*["']?(https?:|//)|url\(\s*["']?[^#\s"']|@import|<link"""
    assert not re.search(external, page)  # clip paths use url(#id), local to the page


def _row_cells(page: str, label: str) -> list[str]:
    """The data cells of the results-table row labelled ``label``."""
    row = re.search(rf'<tr><td class="label">{re.escape(label)}</td>(.*?)</tr>', page)
    assert row is not None, label
    return re.findall(r"<td[^>]*>.*?</td>", row[1])


def test_selectivity_survives_probe_suffixed_rows(tmp_path, make_record):
    """A store with logreg runs (and their controls) and mdl runs of the same encoder labels
    its rows "enc [logreg]" and "enc [mdl]": the logreg row keeps its selectivity."""
    store = tmp_path / "r.sqlite"
    rng = np.random.default_rng(0)
    with ResultsStore(store) as s:
        for probe, acc in (("logreg", 0.8), ("mdl", 0.8)):
            extra = {"codelength": 1000.0, "compression": 1.5} if probe == "mdl" else {}
            rec = make_record("enc", "Tense", acc, probe=probe, extra=extra, n_test=N_TEST)
            s.add(rec, f"{probe}|Tense", _predictions(rng, acc, "Tense"))
        rec = make_record("enc", "Tense~control", 0.55, n_test=N_TEST)
        s.add(rec, "logreg|Tense~control", _predictions(rng, 0.55, "Tense~control"))
    page = render_html(build_report(store, _load_results(store, None)))
    (logreg,) = _row_cells(page, "enc [logreg]")
    assert "sel +25.0" in logreg and "control task 55.0" in logreg
    (mdl,) = _row_cells(page, "enc [mdl]")
    assert "sel " not in mdl


def test_element_ids_are_unique(report_html):
    page, _ = report_html
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) > 100 and len(ids) == len(set(ids))


def test_report_escapes_what_it_shows(report_html):
    page, _ = report_html
    assert EVIL not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page


def test_layer_peak_and_controls_in_report(report_html):
    page, _ = report_html
    # the layer table: tiny peaks at layer 2 on every task
    assert page.count('<td class="text">tiny</td>') == len(TASKS)
    assert "No control-task results" not in page and "No per-layer rows" not in page


def test_missing_pieces_are_explained(tmp_path, make_record):
    store = tmp_path / "r.sqlite"
    with ResultsStore(store) as s:
        for i, enc in enumerate(["a", "b"]):
            s.add(make_record(enc, "SentLen", 0.5 + 0.1 * i), f"k{i}")
    page = render_html(build_report(store, _load_results(store, None)))
    assert "sentprobe run --controls" in page  # how to get controls
    assert "--layer all" in page and "--downstream" in page
    assert "No per-item predictions" in page


def test_markdown_subset():
    out = markdown_html("## Title\n\n| a | b |\n|---|--:|\n| **x** | 1 |\n\n- one `c`\n- <two>\n")
    assert "<h4>Title</h4>" in out and "<strong>x</strong>" in out
    assert '<td style="text-align:right">1</td>' in out
    assert "<li>one <code>c</code></li>" in out and "&lt;two&gt;" in out


# ---------------------------------------------------------------------------- browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium not installed (apt-get install chromium; .ci/run does it)",
)


def with_test_script(page: str, script: str) -> str:
    """``page`` with ``script`` run at the end of its body, its hash added to the page's
    Content-Security-Policy (which lets only the report's own script run)."""
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    page = page.replace("script-src ", f"script-src 'sha256-{digest}' ", 1)
    return page.replace("</body>", f"<script>{script}</script></body>")


def _chromium(page: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    assert CHROMIUM is not None
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",  # tests may run as root (CI containers)
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,1800",
            *extra,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


@needs_chromium
def test_report_renders_in_chromium(report_html, tmp_path):
    import matplotlib.image

    _, path = report_html
    shot = tmp_path / "shot.png"
    res = _chromium(path, tmp_path, f"--screenshot={shot}", "--dump-dom")
    assert res.returncode == 0, res.stderr[-2000:]
    console = [line for line in res.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console
    dom = res.stdout
    assert 'id="results-table"' in dom and "<tbody" in dom
    for plot in ("layer-curves", "relative-heatmap", "correlation", "agreement"):
        start = dom.index(f'id="{plot}"')
        assert "<svg" in dom[start : dom.index("</figure>", start)], plot
    image = matplotlib.image.imread(shot)
    assert image.shape[0] >= 1000 and image.shape[1] >= 1000
    assert float(image[..., :3].std()) > 0.05  # not a blank page


@needs_chromium
def test_results_table_sorts_on_click(report_html, tmp_path):
    page, _ = report_html
    probe = """
      document.querySelector('th.sortable[data-col="1"]').click();
      var rows = document.querySelectorAll("#results-table tbody.encoder tr");
      var values = Array.prototype.map.call(rows, function (r) {
        return r.cells[1].getAttribute("data-v");
      });
      document.body.setAttribute("data-order", JSON.stringify(values));
    """
    path = tmp_path / "sorted.html"
    path.write_text(with_test_script(page, probe), encoding="utf-8")
    res = _chromium(path, tmp_path, "--dump-dom")
    assert res.returncode == 0, res.stderr[-2000:]
    raw = res.stdout.split('data-order="', 1)[1].split('"', 1)[0].replace("&quot;", '"')
    values = [float(v) for v in json.loads(raw)]
    assert values == sorted(values, reverse=True) and len(values) == 5


def test_cli_writes_report_and_layer_curves(tmp_path, make_record):
    from typer.testing import CliRunner

    from sentprobe.cli.main import app

    store = make_store(tmp_path / "results.sqlite", make_record)
    page, curves = tmp_path / "out" / "report.html", tmp_path / "curves.png"
    args = ["report", "--results", str(store), "--html", str(page), "--layer-curves", str(curves)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert curves.stat().st_size > 10_000
    flat = tmp_path / "flat.sqlite"
    with ResultsStore(flat) as s:
        s.add(make_record("a", "SentLen", 0.5), "k")
    res = CliRunner().invoke(app, ["report", "--results", str(flat), "--layer-curves", str(curves)])
    assert res.exit_code == 1 and "--layer all" in res.output


def test_mdl_results_get_their_table(tmp_path, make_record):
    store = tmp_path / "r.sqlite"
    with ResultsStore(store) as s:
        s.add(make_record("a", "SentLen", 0.5), "k0")
        extra = {"codelength": 12345.0, "compression": 2.5}
        s.add(make_record("a", "SentLen", 0.6, probe="mdl", extra=extra), "k1")
    page = render_html(build_report(store, _load_results(store, None)))
    assert "MDL: online codelength" in page and ">12345.0<" in page and ">2.500<" in page
    assert ">18517.5<" in page  # the saving: uniform (2.5 x 12345) - online, in bits


def test_relative_heatmap_across_languages_removes_each_majority(tmp_path, make_record):
    """With Majority rows in every language the heatmap shows gains over each language's own
    majority (crosslang's default), else raw differences, and its caption says which."""
    store = tmp_path / "r.sqlite"
    with ResultsStore(store) as s:
        for lang, acc, majority in (("en", 0.8, 0.5), ("xx", 0.85, 0.73)):
            s.add(make_record("enc", "Tense", acc, language=lang), f"enc|{lang}")
            s.add(make_record("Majority", "Tense", majority, language=lang), f"maj|{lang}")
    page = render_html(build_report(store, _load_results(store, None)))
    start = page.index('id="relative-heatmap"')
    figure = page[start : page.index("</figure>", start)]
    assert "gain over its language&#x27;s Majority baseline" in figure
    assert "−18.0" in figure or "-18.0" in figure  # (85 - 73) - (80 - 50)
    frame = _load_results(store, None)
    page = render_html(build_report(store, frame[frame["encoder"] != "Majority"]))
    start = page.index('id="relative-heatmap"')
    assert "class balance are included" in page[start : page.index("</figure>", start)]


def test_provenance_names_the_versions_that_computed_the_results(report_html):
    from sentprobe import __version__

    page, _ = report_html
    start = page.index("Versions that computed the results")
    section = page[start : start + 2000]
    assert f"sentprobe {__version__}, sentprobe-code " in section  # as the store recorded them
    assert ", numpy " in section


def test_a_dollar_in_a_name_is_drawn_as_written(tmp_path, make_record):
    """``$\\sqrt$`` in a task or encoder name went to matplotlib's math parser, and
    ``report --html`` failed with its traceback: every figure's text is drawn as written."""
    from typer.testing import CliRunner

    from sentprobe.cli.main import app

    store = tmp_path / "r.sqlite"
    rng = np.random.default_rng(0)
    with ResultsStore(store) as s:
        for row, acc in [("Majority", 0.5), ("enc$\\sqrt$", 0.8), ("other", 0.7)]:
            for task in ("T$\\sqrt$", "Plain"):
                record = make_record(row, task, acc, n_dev=N_TEST, n_test=N_TEST, n_train=800)
                s.add(record, f"{row}|{task}", _predictions(rng, acc, task))
    page = tmp_path / "report.html"
    res = CliRunner().invoke(app, ["report", "--results", str(store), "--html", str(page)])
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output
    text = page.read_text(encoding="utf-8")
    assert "<svg" in text and "T$\\sqrt$" in text
