"""Runs as code: ``--version``, ``-v`` logging, ``--config``/``--save-config`` (every option of
``run`` settable, the command line wins, unknown keys one line), and the settings recorded with
each stored result (``report --provenance``)."""

from __future__ import annotations

import sys

import pytest
from typer.main import get_command
from typer.testing import CliRunner

import sentprobe
from sentprobe.cli.main import app
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.store import ResultsStore

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: A value for every option of ``run``, none of them its default.
RUN_SETTINGS = {
    "encoder": ["bov-glove", "minilm"],
    "tasks": ["mock/Mock4"],
    "layer": "all",
    "pooling": "max,pos:-2",
    "prompt": 'say "{}" :',
    "batch-size": 7,
    "dtype": "bfloat16",
    "device": "cpu",
    "device-map": "auto",
    "probe": "mlp",
    "seeds": 3,
    "nli-train": "nli.jsonl",
    "allow-heuristic-labels": True,
    "keep-nli-overlap": True,
    "controls": True,
    "erase": ["Tense"],
    "erase-fit": "train+dev",
    "erase-controls": 5,
    "intervene": ["Tense"],
    "intervene-controls": 2,
    "probe-device": "cpu",
    "cache-dtype": "bfloat16",
    "stream": True,
    "baselines": "majority",
    "results": "r.sqlite",
    "cache-dir": "cachedir",
    "executor": "ray",
    "shard": "2/3",
    "keep-going": True,
    "keep-other-versions": True,
    "format": "csv",
    "output": "table.csv",
    "quiet": True,
}


def _toml(settings: dict) -> str:
    from sentprobe.cli.config import toml_text

    return toml_text(settings, "run")


@pytest.fixture
def captured(monkeypatch):
    """Stop ``run`` where it would start probing, keeping what it was given."""
    seen: dict = {}

    def stub(encoders, tasks, **kwargs):
        seen.update(kwargs, encoders=encoders, tasks=tasks)
        raise SentprobeError("stopped by the test")

    monkeypatch.setattr("sentprobe.evaluation.runner.run", stub)
    return seen


def test_version():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"sentprobe {sentprobe.__version__}"


def test_every_run_option_can_be_set_in_a_config_file(tmp_path, captured):
    options = {
        next(o[2:] for o in p.opts if o.startswith("--"))
        for p in get_command(app).commands["run"].params
        if p.name not in ("config", "save_config", "verbose")  # -v: logging, not a setting
    }
    assert options == set(RUN_SETTINGS), "a run option is missing here: add it to RUN_SETTINGS"
    config, saved = tmp_path / "in.toml", tmp_path / "out.toml"
    config.write_text(_toml(RUN_SETTINGS))
    result = CliRunner().invoke(app, ["run", "--config", str(config), "--save-config", str(saved)])
    assert result.exit_code == 1 and "stopped by the test" in result.output
    # the resolved settings are exactly the file's: every option was taken from it
    assert tomllib.loads(saved.read_text()) == RUN_SETTINGS
    assert captured["encoders"] == ["bov-glove", "minilm"]
    assert captured["seeds"] == 3 and captured["controls"] and captured["keep_going"]
    assert captured["keep_foreign"]
    assert captured["encoder_options"] == {
        "layer": "all",
        "pooling": "max,pos:-2",
        "prompt": 'say "{}" :',
        "batch_size": 7,
        "dtype": "bfloat16",
        "device": "cpu",
        "device_map": "auto",
    }


def test_the_command_line_wins_over_the_file(tmp_path, captured):
    config = tmp_path / "c.toml"
    config.write_text('seeds = 3\ntasks = "mock/Mock"\nbatch_size = 5\n')
    result = CliRunner().invoke(app, ["run", "--config", str(config), "--seeds", "2"])
    assert result.exit_code == 1
    assert captured["seeds"] == 2 and captured["tasks"] == ["mock/Mock"]
    assert captured["encoder_options"]["batch_size"] == 5  # underscores work too


def test_a_list_or_a_single_string_works_for_every_list_option(tmp_path, captured):
    """A repeatable option takes one string, a comma-separated one takes a list."""
    config = tmp_path / "c.toml"
    config.write_text(
        'tasks = ["mock/Mock", "sample-en/Tense"]\nencoder = "bov-glove"\n'
        'pooling = ["mean", "max"]\nerase = "Tense"\n'
    )
    result = CliRunner().invoke(app, ["run", "--config", str(config)])
    assert result.exit_code == 1 and "stopped by the test" in result.output, result.output
    assert captured["tasks"] == ["mock/Mock", "sample-en/Tense"]
    assert captured["encoders"] == ["bov-glove"]
    assert captured["encoder_options"]["pooling"] == "mean,max"
    assert list(captured["erase"]) == ["Tense"]


@pytest.mark.parametrize("command", ["run", "build", "train", "map-encoder"])
def test_an_unknown_key_is_one_line_naming_it(tmp_path, command):
    config = tmp_path / "c.toml"
    config.write_text('encoders = ["minilm"]\n')
    result = CliRunner().invoke(app, [command, "--config", str(config)])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1, result.output
    assert f"unknown key 'encoders' for sentprobe {command}" in result.output


def test_a_broken_config_file_is_one_line(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text("seeds = [\n")
    result = CliRunner().invoke(app, ["run", "--config", str(config)])
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert "not valid TOML" in result.output
    result = CliRunner().invoke(app, ["run", "--config", str(tmp_path / "missing.toml")])
    assert result.exit_code == 1 and "no such config file" in result.output


def test_verbose_logs_loads_cache_and_choices_and_results_record_their_settings(tmp_path):
    results = tmp_path / "r.sqlite"
    args = ["run", "-e", "bov-glove", "-t", "mock/Mock", "--baselines", "none", "-q"]
    args += ["--results", str(results)]
    first = CliRunner().invoke(app, ["-v", *args])
    assert first.exit_code == 0, first.output
    assert "loaded task mock/Mock from task mock/Mock" in first.output
    assert "BoV-GloVe: 0 of 300 sentences cached, 300 to encode" in first.output
    assert "selected by dev: {'l2':" in first.output
    quiet = CliRunner().invoke(app, [*args, "--seeds", "2"])
    assert "sentprobe.datasets" not in quiet.output  # no -v: no log lines

    with ResultsStore(results, readonly=True) as store:
        (record,) = store.records()
    assert record.extra["run_config"]["command"] == "run"
    assert record.extra["run_config"]["settings"]["encoder"] == ["bov-glove"]
    shown = CliRunner().invoke(app, ["report", "--results", str(results), "--provenance"])
    assert shown.exit_code == 0
    assert 'encoder = ["bov-glove"]' in shown.output and "BoV-GloVe / mock/Mock" in shown.output


def test_verbose_works_after_the_command(tmp_path, monkeypatch, capsys):
    from sentprobe.cli.main import main

    args = ["run", "-e", "bov-glove", "-t", "mock/Mock", "--baselines", "none", "-q"]
    monkeypatch.setattr(
        sys, "argv", ["sentprobe", *args, "--results", str(tmp_path / "r.sqlite"), "-v"]
    )
    main()
    assert "sentprobe.datasets.builtin: loaded task mock/Mock" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["run", "report", "map-encoder", "build", "train"])
def test_help_has_no_type_placeholders_and_says_the_layer_defaults(command):
    import re

    result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert not re.search(r"<(list\[\w+\]|int range|float range)>", result.output), result.output
    if command == "run":
        text = " ".join(result.output.split())
        assert "0 the embeddings" in text and "[default: last]" in text
        assert "[default: mean]" in text and "-e, --encoder ENCODER" in text
