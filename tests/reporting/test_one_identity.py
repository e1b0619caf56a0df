"""One identity for every number: a generator of stores whose display names collide (one short
task name in two languages, two runs of one folder name, two probes of one row, a stale and a
newer result, two seeds, a control task, MDL), and for every output format and consumer the
check that each identity appears once with its own value and no output value mixes two.

Each identity gets a distinct score, drawn so that no mean of two identities' scores and no
stale score equals any number a correct output may show: a number that mixes two identities,
or a stale one, is caught wherever it is printed.
"""

from __future__ import annotations

import itertools
import json
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from sentprobe.analysis.correlation import probing_scores
from sentprobe.analysis.paired import compare_rows
from sentprobe.cli.main import app
from sentprobe.cli.report import _load_results
from sentprobe.cli.report_html import mdl_table, results_section
from sentprobe.evaluation.identity import resolve
from sentprobe.evaluation.merge import merge_stores
from sentprobe.evaluation.predictions import Predictions
from sentprobe.evaluation.store import ResultRecord, ResultsStore
from sentprobe.reporting.controls import method_frame, split_controls
from sentprobe.reporting.crosslang import language_scores
from sentprobe.reporting.curves import epoch_scores
from sentprobe.reporting.mteb import write_mteb_results

N_TEST = 1000  # accuracies k / 1000: exact at one decimal in percent
LANGUAGES = ("en", "fr")
#: (label, fingerprint, probe, seeds): two runs of one folder name, one row with two
#: probes (one of them seeded twice), an MDL row.
ROWS = (
    ("nmt@epoch-2", "trained-run-v1|runs/nmt|e2", "logreg", (0,)),
    ("nmt@epoch-2", "trained-run-v1|other/nmt|e2", "logreg", (0,)),
    ("enc", "fp:enc", "logreg", (0, 1)),
    ("enc", "fp:enc", "mlp", (0,)),
    ("enc", "fp:enc", "mdl", (0,)),
)
OLD, NEW = "2020-01-01T00:00:00+00:00", "2021-01-01T00:00:00+00:00"


@dataclass
class Collisions:
    """A generated store and what a correct output shows: per cell (fingerprint, probe,
    language) its score (mean over seeds, percent), and for logreg cells the control's."""

    path: Path
    cells: dict[tuple[str, str, str], float] = field(default_factory=dict)
    controls: dict[tuple[str, str, str], float] = field(default_factory=dict)
    compression: dict[tuple[str, str], float] = field(default_factory=dict)
    forbidden: set[str] = field(default_factory=set)  # numbers no correct output shows
    predictions: dict[str, Predictions] = field(default_factory=dict)
    seed_values: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)

    def shown(self) -> set[str]:
        """Every number (one decimal) a correct output may show."""
        values = [*self.cells.values(), *self.controls.values()]
        values += [self.cells[c] - v for c, v in self.controls.items()]  # selectivity
        values += [50.0]  # control ceilings
        values += [float(np.std(s, ddof=1)) for s in self.seed_values.values() if len(s) > 1]
        return {f"{v:.1f}" for v in values}


def _predictions(accuracy_k: int, language: str) -> Predictions:
    gold = np.random.default_rng(LANGUAGES.index(language)).integers(0, 2, N_TEST)
    pred = gold.copy()
    pred[accuracy_k:] = 1 - pred[accuracy_k:]
    return Predictions.from_labels(gold, pred, labels=["0", "1"])


def _draw(rng: np.random.Generator, n: int) -> list[int]:
    """``n`` distinct even accuracies (per mille), so the mean of two is a whole per mille."""
    return [int(k) for k in rng.choice(np.arange(200, 960, 2), n, replace=False)]


def make_collisions(path: Path, seed: int = 0) -> Collisions:
    """Write the colliding store at ``path`` (see the module docstring)."""
    for attempt in itertools.count(seed):
        found = _attempt(path, np.random.default_rng(attempt))
        if found is not None:
            return found
    raise AssertionError("unreachable")


def _attempt(path: Path, rng: np.random.Generator) -> Collisions | None:
    units = [
        (label, fp, probe, lang, s)
        for label, fp, probe, seeds in ROWS
        for lang in LANGUAGES
        for s in seeds
    ]
    new, stale, control = _draw(rng, len(units)), _draw(rng, len(units)), _draw(rng, len(units))
    out = Collisions(path)
    records: list[tuple[ResultRecord, str, Predictions]] = []
    controls: dict[tuple[str, str, str], list[float]] = {}
    for i, (label, fp, probe, lang, s) in enumerate(units):
        cell = (fp, probe, lang)
        out.seed_values.setdefault(cell, []).append(new[i] / 10)
        extra = {}
        if probe == "mdl":
            extra = {"codelength": 1000.0 + i, "compression": 1.0 + new[i] / 1000}
            out.compression[(fp, lang)] = extra["compression"]
        common = dict(
            encoder=label, encoder_fingerprint=fp, task="Tense", task_source=f"sample-{lang}",
            category="semantic", language=lang, seed=s, probe=probe, selection="dev",
            config={}, dev_score=None, n_train=100, n_dev=0, n_test=N_TEST, n_classes=2, dim=8,
        )  # fmt: skip
        key = f"{fp}|{probe}|{lang}|{s}"
        for score, hash_, created, tag in (
            (stale[i], "old", OLD, "stale"),
            (new[i], lang, NEW, ""),
        ):
            rec = ResultRecord(
                **common, test_score=score / N_TEST, task_hash=f"{hash_}-{lang}",
                created=created, extra=extra,
            )  # fmt: skip
            records.append((rec, key + tag, _predictions(score, lang)))
        if probe == "logreg":
            rec = ResultRecord(
                **{**common, "task": "Tense~control"}, test_score=control[i] / N_TEST,
                task_hash=f"c-{lang}", created=NEW, extra={"control_ceiling": 0.5},
            )  # fmt: skip
            records.append((rec, key + "~c", _predictions(control[i], lang)))
            controls.setdefault(cell, []).append(control[i] / 10)
    out.cells = {c: float(np.mean(v)) for c, v in out.seed_values.items()}
    out.controls = {c: float(np.mean(v)) for c, v in controls.items()}
    # a mix: the mean of any two identities' scores (of different cells), or a stale score
    singles = {(c, i): v for c, vs in out.seed_values.items() for i, v in enumerate(vs)}
    mixes = {
        (a + b) / 2
        for (ca, a), (cb, b) in itertools.combinations([(c, v) for (c, _), v in singles.items()], 2)
        if ca != cb
    }
    mixes |= {(a + b) / 2 for a, b in itertools.combinations(out.controls.values(), 2)}
    out.forbidden = {f"{v:.1f}" for v in [*mixes, *(k / 10 for k in stale)]}
    if out.forbidden & out.shown():
        return None  # a coincidence would hide a mix: draw again
    path.unlink(missing_ok=True)
    with ResultsStore(path) as store:
        store.add_many([(r, k, p, None) for r, k, p in records])
    out.predictions = {k: p for _, k, p in records}
    return out


def _numbers(text: str) -> Counter[str]:
    """The numbers of ``text`` to one decimal (CSV and JSON keep every digit)."""
    found = re.findall(r"(?<![\d.])\d+\.\d+", text)
    return Counter(f"{float(n):.1f}" for n in found)


@pytest.fixture(scope="module")
def collisions(tmp_path_factory) -> Collisions:
    return make_collisions(tmp_path_factory.mktemp("collide") / "r.sqlite")


def _expected_scores(c: Collisions, probes=("logreg", "mlp")) -> Counter[str]:
    return Counter(f"{v:.1f}" for (_, p, _), v in c.cells.items() if p in probes)


@pytest.mark.parametrize("fmt", ["markdown", "latex", "csv", "json"])
def test_every_table_format_shows_each_identity_once_and_no_mix(collisions, fmt):
    result = CliRunner().invoke(
        app, ["report", "--results", str(collisions.path), "-f", fmt, "--no-ci"]
    )
    assert result.exit_code == 0, result.output
    numbers = _numbers(result.output)
    assert not set(numbers) & collisions.forbidden
    for value in _expected_scores(collisions, ("logreg", "mlp", "mdl")):
        assert numbers[value] >= 1, (value, fmt)
    if fmt == "json":  # structured: exactly one tidy row per cell, each with its value
        rows = json.loads(result.output)
        scores = Counter(f"{r['score']:.1f}" for r in rows)
        assert scores == _expected_scores(collisions, ("logreg", "mlp", "mdl"))
        rows_named = {(r["encoder"], r["task"], r["probe"]) for r in rows}
        assert len(rows_named) == len(rows) == len(collisions.cells)


def test_the_terminal_table_shows_each_identity_once_and_no_mix(collisions):
    from rich.console import Console

    from sentprobe.reporting.tables import rich_table

    tasks, _ = split_controls(_load_results(collisions.path, None))
    console = Console(record=True, width=400)
    console.print(rich_table(tasks))
    numbers = _numbers(console.export_text())
    assert not set(numbers) & collisions.forbidden
    assert Counter(
        {v: numbers[v] for v in _expected_scores(collisions, ("logreg", "mlp", "mdl"))}
    ) == (_expected_scores(collisions, ("logreg", "mlp", "mdl")))


def test_the_markdown_table_names_every_identity_apart(collisions):
    result = CliRunner().invoke(app, ["report", "--results", str(collisions.path), "--no-ci"])
    table = result.output.split("\n\n")[0]
    header = table.splitlines()[2]
    assert "Tense (en)" in header and "Tense (fr)" in header
    labels = [line.split("|")[1].strip() for line in table.splitlines()[3:]]
    assert len(labels) == len(set(labels)) == 5  # two nmt runs, enc x three probes
    assert sum(label.startswith("nmt@epoch-2 (") for label in labels) == 2


def test_html_results_and_mdl_tables(collisions):
    frame = _load_results(collisions.path, None)
    table = results_section(frame, None, {}, "test_score", None, 0.05)
    values = Counter(f"{c.value:.1f}" for row in table.rows for c in row.cells.values())
    assert values == _expected_scores(collisions, ("logreg", "mlp", "mdl"))
    mdl = mdl_table(frame)
    assert mdl is not None
    shown = Counter((r[2], r[5]) for r in mdl.rows)
    assert shown == Counter(
        (f"Tense ({lang})", f"{x:.3f}") for (_, lang), x in collisions.compression.items()
    )


def test_selectivity_and_mdl_frames(collisions):
    tidy = method_frame(_load_results(collisions.path, None))
    assert len(tidy) == len(collisions.cells)
    assert Counter(f"{s:.1f}" for s in tidy["score"]) == _expected_scores(
        collisions, ("logreg", "mlp", "mdl")
    )
    with_control = tidy.dropna(subset=["control_score"])
    assert Counter(f"{s:.1f}" for s in with_control["control_score"]) == Counter(
        f"{v:.1f}" for v in collisions.controls.values()
    )
    assert np.allclose(
        with_control["selectivity"], with_control["score"] - with_control["control_score"]
    )
    compressions = tidy["compression"].dropna()
    assert sorted(compressions) == pytest.approx(sorted(collisions.compression.values()))


def test_crosslang_and_correlate_keep_every_row_and_language(collisions):
    frame = _load_results(collisions.path, None)
    for scores in (language_scores(frame, include_baselines=True), probing_scores(frame)):
        assert len(scores) == len(collisions.cells)
        assert Counter(f"{s:.1f}" for s in scores["score"]) == _expected_scores(
            collisions, ("logreg", "mlp", "mdl")
        )


def test_curves_draw_one_point_per_run_epoch_task_and_probe(collisions):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = epoch_scores(_load_results(collisions.path, None))
    assert any("train --name" in str(w.message) for w in caught)
    nmt = {c: v for c, v in collisions.cells.items() if "nmt" in c[0]}
    assert scores["run"].nunique() == 2 and len(scores) == len(nmt)
    assert Counter(f"{s:.1f}" for s in scores["score"]) == Counter(f"{v:.1f}" for v in nmt.values())


def test_compare_tells_two_runs_of_one_name_apart(collisions):
    frame, _ = split_controls(_load_results(collisions.path, None))  # as `compare` does
    runs = sorted(r for r in set(frame["encoder"]) if r.startswith("nmt@epoch-2 ("))
    assert len(runs) == 2
    compared = compare_rows(frame, collisions.predictions, runs[0], runs[1]).table
    assert set(compared["task"]) == {"Tense (en)", "Tense (fr)"}
    shown = Counter(f"{v:.1f}" for v in [*compared["a"], *compared["b"]])
    nmt = {c: v for c, v in collisions.cells.items() if "nmt" in c[0]}
    assert shown == Counter(f"{v:.1f}" for v in nmt.values())


def test_mteb_export_writes_one_file_per_identity(collisions, tmp_path):
    frame = _load_results(collisions.path, None)
    scores: Counter[str] = Counter()
    for probe in ("logreg", "mlp", "mdl"):
        out = tmp_path / probe
        write_mteb_results(frame[frame["probe"] == probe], out)
        files = [f for f in out.rglob("*.json") if f.name != "model_meta.json"]
        for f in files:
            score = json.loads(f.read_text())["scores"]["test"][0]
            scores[f"{100 * score['main_score']:.1f}"] += 1
            if probe == "logreg":
                assert f"{100 * score['sentprobe_control_score']:.1f}" not in collisions.forbidden
    assert scores == _expected_scores(collisions, ("logreg", "mlp", "mdl"))


def test_merge_keeps_every_identity(collisions, tmp_path):
    """Two stores holding halves of the records merge into the store they came from."""
    halves = [tmp_path / "a.sqlite", tmp_path / "b.sqlite"]
    with ResultsStore(collisions.path, readonly=True) as whole:
        items = whole.items()
        found = whole.predictions_for(k for k, _ in items)
    for i, half in enumerate(halves):
        with ResultsStore(half) as store:
            store.add_many([(r, k, found.get(k), None) for k, r in items[i::2]])
    merge_stores(halves, tmp_path / "m.sqlite")

    def table(path: Path) -> pd.DataFrame:
        frame = resolve(_load_results(path, None))
        return frame.set_index("key").sort_index()[["encoder", "test_score"]]

    pd.testing.assert_frame_equal(table(tmp_path / "m.sqlite"), table(collisions.path))


def test_two_runs_of_one_folder_name_are_two_rows(tmp_path, make_record):
    """``runs/nmt@epoch-2`` and ``other/nmt@epoch-2`` (other weights) in one store: the
    table shows 56.7 and 49.3 on rows named apart, not 49.3 alone; ``-e`` selects both."""
    store = tmp_path / "r.sqlite"
    with ResultsStore(store) as s:
        for where, acc in (("runs", 0.567), ("other", 0.493)):
            fp = f"trained-run-v1|{where}|e2"
            s.add(make_record("nmt@epoch-2", "SentLen", acc, encoder_fingerprint=fp), where)
    args = ["report", "--results", str(store), "--no-ci", "-f", "json", "-e", "nmt@epoch-2"]
    rows = json.loads(CliRunner().invoke(app, args).output)
    assert sorted(r["score"] for r in rows) == pytest.approx([49.3, 56.7])
    assert len({r["encoder"] for r in rows}) == 2


def test_curves_keep_languages_apart(make_record):
    """A student probed on sample-en/SentLen (55.7) and sample-fr/SentLen (43.9): two
    points, not their mean 49.8."""
    frame = pd.DataFrame(
        [
            make_record("map@epoch-1", "SentLen", acc, language=lang, task_source=f"s-{lang}")
            for lang, acc in (("en", 0.557), ("fr", 0.439))
        ]
    )
    scores = epoch_scores(frame)
    assert dict(zip(scores["task"], scores["score"].round(1), strict=True)) == {
        "SentLen (en)": 55.7,
        "SentLen (fr)": 43.9,
    }
