"""``report --format model-index``: the Hub model card's results block, parsed back by
huggingface_hub's own reader (offline)."""

from __future__ import annotations

import yaml
from huggingface_hub.repocard_data import model_index_to_eval_results
from typer.testing import CliRunner

from sentprobe.cli.main import app
from sentprobe.evaluation.store import ResultsStore


def test_model_index_block_parses_as_hub_eval_results(tmp_path):
    results = tmp_path / "r.sqlite"
    run = ["run", "-e", "bov-glove", "-t", "mock/Mock,mock/Mock4", "--baselines", "majority"]
    assert CliRunner().invoke(app, [*run, "-q", "--results", str(results)]).exit_code == 0
    both = CliRunner().invoke(app, ["report", "--results", str(results), "-f", "model-index"])
    assert both.exit_code == 1 and "choose one with -e NAME" in both.output  # two rows

    shown = CliRunner().invoke(
        app, ["report", "--results", str(results), "-f", "model-index", "-e", "BoV-GloVe"]
    )
    assert shown.exit_code == 0, shown.output
    block = yaml.safe_load(shown.stdout)
    name, evals = model_index_to_eval_results(block["model-index"])
    assert name == "BoV-GloVe"
    with ResultsStore(results, readonly=True) as store:
        stored = {r.task: r for r in store.records(encoder="BoV-GloVe")}
    assert [e.dataset_name for e in evals] == ["mock/Mock", "mock/Mock4"]
    for e in evals:
        record = stored[e.dataset_name]
        assert e.metric_type == "accuracy" and e.task_type == "text-classification"
        assert e.metric_value == round(record.test_score * 100, 2)
        assert e.dataset_revision == record.task_hash
