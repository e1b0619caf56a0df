"""Issue 46: ``report --format model-index`` keeps task identities apart (en and fr Tense are
two entries, the language in the name), leaves control maps out, gives the split, and
``-e NAME`` accepts a seeded row (one row, one fingerprint per seed)."""

from __future__ import annotations

import yaml
from huggingface_hub.repocard_data import model_index_to_eval_results
from typer.testing import CliRunner

from sentprobe.cli.main import app
from sentprobe.evaluation.store import ResultsStore


def _store(tmp_path, make_record):
    path = tmp_path / "r.sqlite"
    with ResultsStore(path) as s:
        for lang, acc, ctrl in (("en", 0.675, 0.61), ("fr", 0.5, 0.52)):
            common = dict(language=lang, task_source=f"sample-{lang}", task_hash=f"h-{lang}")
            s.add(make_record("BoV-GloVe", "Tense", acc, **common), f"t{lang}")
            for seed in range(2):
                s.add(
                    make_record("BoV-GloVe", "Tense~control", ctrl, seed=seed, **common),
                    f"c{lang}{seed}",
                )
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
    return path


def _index(path, *args):
    result = CliRunner().invoke(app, ["report", "--results", str(path), "-f", "model-index", *args])
    assert result.exit_code == 0, result.output
    block = yaml.safe_load(result.stdout)
    return block, model_index_to_eval_results(block["model-index"])


def test_two_languages_are_two_entries_and_controls_are_left_out(tmp_path, make_record):
    block, (name, evals) = _index(_store(tmp_path, make_record), "-e", "BoV-GloVe")
    assert name == "BoV-GloVe"
    assert [(e.dataset_name, e.metric_value) for e in evals] == [
        ("sample-en/Tense (en)", 67.5),
        ("sample-fr/Tense (fr)", 50.0),
    ]
    assert {e.dataset_split for e in evals} == {"test"}
    assert [e.dataset_config for e in evals] == ["en", "fr"]
    assert "control" not in yaml.safe_dump(block)
    assert len(block["model-index"][0]["results"]) == 2


def test_a_seeded_row_is_one_model(tmp_path, make_record):
    _, (name, evals) = _index(_store(tmp_path, make_record), "-e", "BiLSTM-max (untrained)")
    assert name == "BiLSTM-max (untrained)"
    (only,) = evals
    assert only.metric_value == round((83.67 + 87.0) / 2, 2)
    assert "mean of 2 seeds" in only.metric_name
