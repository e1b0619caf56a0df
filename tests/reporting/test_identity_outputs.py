"""Issue 46: outputs that merged or split identities: the lowest-ceiling table keeps en and
fr apart; ``report -f json`` has one schema whatever the store holds; the MTEB export writes
one result per table row (a seeded row's mean), refuses several probes in one line, and
names models from the identity as ``as_mteb_model`` does."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from sentprobe.cli.main import app
from sentprobe.evaluation.store import ResultsStore


def _report(path, *args):
    result = CliRunner().invoke(app, ["report", "--results", str(path), "--no-ci", *args])
    return result


def _controls_store(tmp_path, make_record):
    path = tmp_path / "r.sqlite"
    ceilings = {("en", 0): 0.95, ("en", 1): 0.997, ("fr", 0): 0.913, ("fr", 1): 0.871}
    with ResultsStore(path) as s:
        for lang in ("en", "fr"):
            common = dict(language=lang, task_source=f"sample-{lang}", task_hash=f"h-{lang}")
            for seed in (0, 1):
                s.add(make_record("enc", "Tense", 0.8, seed=seed, **common), f"t{lang}{seed}")
                extra = {"control_ceiling": ceilings[(lang, seed)], "control_seed": seed}
                s.add(
                    make_record("enc", "Tense~control", 0.6, seed=seed, extra=extra, **common),
                    f"c{lang}{seed}",
                )
    return path


@pytest.mark.parametrize("fmt", ["markdown", "latex"])
def test_lowest_ceiling_table_keeps_languages_apart(tmp_path, make_record, fmt):
    result = _report(_controls_store(tmp_path, make_record), "-f", fmt)
    assert result.exit_code == 0, result.output
    lowest = result.output.split("lowest over the control maps")[1]
    lowest = lowest.split("\n\n")[1] if fmt == "markdown" else lowest[:2000]
    assert "95.0" in lowest and "87.1" in lowest  # en's minimum and fr's


def _seeded_store(tmp_path, make_record):
    path = tmp_path / "s.sqlite"
    with ResultsStore(path) as s:
        for seed, acc in ((0, 0.8367), (1, 0.87)):  # an untrained BiLSTM: a fingerprint a seed
            s.add(
                make_record(
                    "BiLSTM-max (untrained)", "Tense", acc, seed=seed,
                    encoder_fingerprint=f"baseline:bilstm:seed{seed}:v1",
                    task_source="sample-en", task_hash="h-en",
                    extra={"row_fingerprint": "baseline:bilstm:v1", "seeds": 2},
                ),
                f"b{seed}",
            )  # fmt: skip
        for probe, acc in (("logreg", 0.7), ("mlp", 0.72), ("mdl", 0.71)):
            s.add(make_record("enc", "Tense", acc, probe=probe, task_source="sample-en"), probe)
    return path


def test_mteb_export_one_result_per_table_row(tmp_path, make_record):
    from sentprobe.cli.report import _load_results
    from sentprobe.reporting.mteb import write_mteb_results

    frame = _load_results(_seeded_store(tmp_path, make_record), None)
    files = write_mteb_results(frame[frame["encoder"] == "BiLSTM-max (untrained)"], tmp_path / "o")
    docs = [json.loads(f.read_text()) for f in files if f.name != "model_meta.json"]
    assert len(docs) == 1  # one folder, not one per seed
    assert docs[0]["scores"]["test"][0]["main_score"] == pytest.approx((0.8367 + 0.87) / 2)
    assert docs[0]["scores"]["test"][0]["sentprobe_seeds"] == 2


def test_mteb_several_probes_refused_in_one_line(tmp_path, make_record):
    out = tmp_path / "o"
    result = _report(_seeded_store(tmp_path, make_record), "-f", "mteb", "-o", str(out))
    assert result.exit_code == 1
    assert "several probes (logreg, mdl, mlp)" in result.output and "--probe" in result.output
    assert "KeyError" not in result.output and "bug" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_mteb_export_names_models_as_as_mteb_model(tmp_path):
    pytest.importorskip("mteb")
    import numpy as np

    from sentprobe.encoders.custom import CallableEncoder
    from sentprobe.encoders.mteb import as_mteb_model
    from sentprobe.evaluation.runner import run
    from sentprobe.reporting.mteb import write_mteb_results

    def vectors(sentences):
        return np.array([[len(s), s.count("e"), 1.0] for s in sentences], dtype=np.float32)

    encoder = CallableEncoder(vectors, name="my encoder")
    store = tmp_path / "r.sqlite"
    run([encoder], "mock/Mock", baselines="none", results=store, progress=False)
    with ResultsStore(store, readonly=True) as s:
        files = write_mteb_results(s.to_frame(), tmp_path / "o")
    (meta,) = [json.loads(f.read_text()) for f in files if f.name == "model_meta.json"]
    expected = as_mteb_model(encoder).mteb_model_meta
    assert (meta["name"], meta["revision"]) == (expected.name, expected.revision)
    assert re.fullmatch(r"sentprobe/my-encoder", meta["name"])
