"""``report --format mteb``: MTEB's results layout, read back by MTEB's own loader."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from sentprobe.cli.main import app
from sentprobe.datasets.mteb_tasks import mteb_task_name, to_mteb_tasks
from sentprobe.evaluation.runner import run
from sentprobe.evaluation.store import ResultsStore

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
        (f"sentprobe/{row.encoder}", f"sentprobe.{row.task.replace('/', '.')}"): row.test_score
        for row in frame.itertuples()
    }
    assert scores == pytest.approx(expected)
    file = next(out.glob("results/sentprobe__NB-uni-tfidf/*/sentprobe.mock.Mock4.json"))
    extra = json.loads(file.read_text())["scores"]["test"][0]
    assert extra["sentprobe_ci95_low"] <= extra["main_score"] <= extra["sentprobe_ci95_high"]
    assert extra["sentprobe_probe"] and extra["sentprobe_seeds"] == 1


def test_report_mteb_needs_a_folder(tmp_path):
    store = tmp_path / "r.sqlite"
    run([], "mock/Mock", baselines="majority", results=store, progress=False)
    result = CliRunner().invoke(app, ["report", "--results", str(store), "--format", "mteb"])
    assert result.exit_code == 1 and "-o DIR" in result.output


def _report_mteb(store, out) -> CliRunner:
    return CliRunner().invoke(
        app, ["report", "--results", str(store), "--format", "mteb", "-o", str(out)]
    )


def _tense_store(path, make_record):
    """BoV-GloVe on Tense in English and French (the short name alike), with a control."""
    with ResultsStore(path) as store:
        for lang, acc in (("en", 0.86), ("fr", 0.524)):
            fields = {"task_source": f"sample-{lang}", "language": lang}
            store.add(make_record("BoV-GloVe", "Tense", acc, **fields, task_hash=lang), lang)
            control = make_record("BoV-GloVe", "Tense~control", acc - 0.2, **fields)
            store.add(control, f"{lang}~c")
    return path


def test_one_task_name_in_two_languages_gives_two_files_named_as_mteb_tasks(tmp_path, make_record):
    store = _tense_store(tmp_path / "r.sqlite", make_record)
    assert _report_mteb(store, tmp_path / "out").exit_code == 0
    files = sorted((tmp_path / "out" / "results").glob("sentprobe__BoV-GloVe/*/*.json"))
    docs = {f.name: json.loads(f.read_text()) for f in files if f.name != "model_meta.json"}
    # named as to_mteb_tasks names the tasks; controls are fields, not tasks of their own
    assert set(docs) == {"sentprobe.sample-en.Tense.json", "sentprobe.sample-fr.Tense.json"}
    for lang, acc, code in (("en", 0.86, "eng-Latn"), ("fr", 0.524, "fra-Latn")):
        doc = docs[f"sentprobe.sample-{lang}.Tense.json"]
        score = doc["scores"]["test"][0]
        assert doc["task_name"] == mteb_task_name(f"sample-{lang}/Tense")
        assert doc["dataset_revision"] == lang
        assert score["main_score"] == pytest.approx(acc) and score["languages"] == [code]
        assert score["sentprobe_control_score"] == pytest.approx(acc - 0.2)
        assert score["sentprobe_selectivity"] == pytest.approx(0.2)


def test_two_weights_of_one_mteb_model_get_two_folders(tmp_path, make_record):
    store = tmp_path / "r.sqlite"
    with ResultsStore(store) as s:
        for weights, acc in (("shipped", 0.7), ("tuned", 0.9)):
            fp = f"mteb|org/model@abc123|weights={weights}"
            s.add(make_record("org/model", "SentLen", acc, encoder_fingerprint=fp), weights)
    assert _report_mteb(store, tmp_path / "out").exit_code == 0
    folders = sorted((tmp_path / "out" / "results" / "org__model").iterdir())
    assert len(folders) == 2 and all(f.name.startswith("abc123-") for f in folders)
    scores = {
        json.loads(next(f.glob("sentprobe.*.json")).read_text())["scores"]["test"][0]["main_score"]
        for f in folders
    }
    assert scores == {0.7, 0.9}


@pytest.mark.parametrize(
    "fingerprint",
    ["mteb|evil@{tmp}/abs", "mteb|evil2@../../../x", "mteb|../../x@rev", "mteb|..@..", "{tmp}/y"],
)
def test_a_crafted_store_cannot_make_the_export_write_outside_its_folder(
    tmp_path, make_record, fingerprint
):
    """Names and revisions from a store become folder names only in a safe alphabet and
    inside -o: refused in one line, nothing written anywhere, or written inside -o."""
    box = tmp_path / "a" / "b" / "c" / "box"  # room for the ``..`` to land inside tmp_path
    box.mkdir(parents=True)
    store = box / "r.sqlite"
    crafted = fingerprint.format(tmp=tmp_path)
    with ResultsStore(store) as s:
        s.add(make_record(crafted, "SentLen", 0.5, encoder_fingerprint=crafted), "k")
        s.add(make_record("evil", "Tense", 0.5, task_source="../../../../x"), "t")
    out = box / "out"
    result = _report_mteb(store, out)
    written = {p for p in tmp_path.rglob("*") if p.is_file() and p.parent != box}
    assert all(p.is_relative_to(out) for p in written), written
    if result.exit_code != 0:  # refused: one line, nothing written
        assert "refused" in result.output and "Traceback" not in result.output
        assert not written


@pytest.mark.slow
def test_bov_glove_on_subjnum_in_two_languages_round_trips_through_mteb(tmp_path):
    """The table's two SubjNum cells become two MTEB files that MTEB's ResultCache loads for
    the tasks to_mteb_tasks makes; scored inside MTEB, a task lands within the table's CI."""
    import numpy as np
    from mteb.models import ModelMeta

    from sentprobe.encoders import get_encoder

    store = tmp_path / "r.sqlite"
    names = ["sample-en/SubjNum", "sample-fr/SubjNum"]
    frame = run(["bov-glove"], names, baselines="none", results=store, progress=False)
    assert _report_mteb(store, tmp_path / "out").exit_code == 0
    tasks = to_mteb_tasks(names)
    loaded = mteb.ResultCache(cache_path=tmp_path / "out").load_results(
        tasks=tasks, include_remote=False
    )
    scores = {t.task_name: t.get_score() for m in loaded.model_results for t in m.task_results}
    table = dict(zip(frame["language"], frame["test_score"], strict=True))
    assert scores == pytest.approx(
        {"sentprobe.sample-en.SubjNum": table["en"], "sentprobe.sample-fr.SubjNum": table["fr"]}
    )
    encoder = get_encoder("bov-glove")

    class Adapter:  # a sentprobe encoder as an MTEB model
        mteb_model_meta = ModelMeta.create_empty(overwrites={"name": "bov", "revision": "1"})

        def encode(self, inputs, **kw):
            return np.concatenate([encoder.encode(list(b["text"])) for b in inputs])

        def similarity(self, a, b):
            return a @ b.T

        def similarity_pairwise(self, a, b):
            return (a * b).sum(-1)

    result = mteb.evaluate(Adapter(), tasks[:1], cache=None, show_progress_bar=False)
    found = (tmp_path / "out").glob(
        "results/sentprobe__BoV-GloVe/*/sentprobe.sample-en.SubjNum.json"
    )
    (ci_file,) = found
    score = json.loads(ci_file.read_text())["scores"]["test"][0]
    low, high = score["sentprobe_ci95_low"], score["sentprobe_ci95_high"]
    assert low <= result.task_results[0].get_score() <= high
