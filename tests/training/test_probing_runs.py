"""A trained run is an encoder: `-e runs/NAME@all` probes every epoch (one row each, each
checkpoint encoded once, cached by content), globs name every run, and `report --curves`
draws them."""

from __future__ import annotations

from itertools import product
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from sentprobe.cli.main import app
from sentprobe.encoders import expand_encoder_spec, get_encoder
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.runner import run as run_probes
from sentprobe.training.checkpoint import TrainedRunEncoder
from sentprobe.training.trainer import TrainConfig, train

WORDS = ["cat", "dog", "bird", "house", "tree", "car", "book", "road"]
TINY = {"dim": 8, "dec_dim": 8, "dec_emb": 8, "batch_size": 8, "layers": 1}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    text = root / "text.txt"
    sents = [f"the {a} saw a {b} ." for a, b in product(WORDS, WORDS)]
    text.write_text("\n".join(sents) + "\n", encoding="utf-8")
    for arch, dim in (("bilstm-max", 8), ("bilstm-max", 12)):
        train(
            TrainConfig(
                arch,
                "autoencoder",
                [str(text)],
                str(root / f"ae-{dim}"),
                epochs=2,
                preset="demo",
                vectors=None,
                dim=dim,
                threads=1,
                overrides=TINY | {"dim": dim},
            ),
            progress=False,
        )
    return root


@pytest.fixture(scope="module")
def task(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("task") / "plural.txt"
    lines = []
    for k, (a, b) in enumerate(product(WORDS, WORDS)):
        split = "te" if k % 5 == 0 else "va" if k % 5 == 1 else "tr"
        plural = k % 2 == 0
        lines.append(f"{split}\t{'PL' if plural else 'SG'}\tthe {a}{'s' if plural else ''} saw {b}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_run_all_gives_one_row_per_epoch(runs, task, tmp_path):
    frame = run_probes(
        [f"{runs}/ae-8@all"],
        [str(task)],
        baselines="none",
        results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    assert sorted(frame["encoder"]) == ["ae-8@epoch-1", "ae-8@epoch-2"]
    assert frame["test_score"].between(0, 1).all()
    # every result says how much of the task the run reads as <unk>: the plural nouns
    # ("cats") are outside its vocabulary, half of the test sentences have one
    for extra in frame["extra"]:
        checks = extra["probe_checks"]
        assert 0 < checks["unknown_token_share"] < 0.25 and "warnings" not in checks
        assert "student_language" not in checks


def test_glob_names_every_run_and_epochs(runs):
    # a run's @all is one spec per finished epoch: each epoch a row of its own (issue 46)
    assert expand_encoder_spec(f"{runs}/*@all") == [
        f"{runs}/{r}@epoch-{k}" for r in ("ae-12", "ae-8") for k in (1, 2)
    ]
    assert expand_encoder_spec("minilm") == ["minilm"]
    enc = get_encoder(f"{runs}/ae-8@all")
    assert enc.views == ["epoch-1", "epoch-2"]
    assert get_encoder(f"{runs}/ae-8").name == "ae-8@epoch-2"
    assert get_encoder(f"{runs}/ae-8@epoch-1").name == "ae-8@epoch-1"
    with pytest.raises(SentprobeError, match="no epoch-7"):
        get_encoder(f"{runs}/ae-8@epoch-7")


def test_views_are_the_epochs_and_the_fingerprint_follows_the_bytes(runs):
    enc = TrainedRunEncoder(f"{runs}/ae-8@all")
    vecs = enc.encode(["the cat saw a dog .", "the zebra saw a dog ."])
    assert vecs.shape == (2, 2, 16)
    one = TrainedRunEncoder(f"{runs}/ae-8@epoch-1").encode(["the cat saw a dog ."])
    assert np.array_equal(vecs[:1, 0], one)
    assert enc.fingerprint != TrainedRunEncoder(f"{runs}/ae-12@all").fingerprint
    assert TrainedRunEncoder(f"{runs}/ae-8@epoch-1").fingerprint != (
        TrainedRunEncoder(f"{runs}/ae-8@epoch-2").fingerprint
    )


def test_runs_differing_only_in_size_make_a_sweep(runs):
    from sentprobe.reporting.curves import _sweeps
    from sentprobe.training.checkpoint import read_manifest

    manifests = {d.name: read_manifest(d) for d in runs.iterdir() if d.name.startswith("ae-")}
    groups = {title: sorted(names) for title, names in _sweeps(manifests).items()}
    assert groups == {"bilstm-max / autoencoder": ["ae-12", "ae-8"]}


def test_report_curves_writes_a_png(runs, task, tmp_path):
    results = tmp_path / "r.sqlite"
    run_probes(
        [f"{runs}/*@all"],
        [str(task)],
        baselines="none",
        results=results,
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    out = tmp_path / "curves.png"
    cli = CliRunner().invoke(
        app,
        ["report", "--results", str(results), "--curves", str(out), "--runs", f"{runs}/*"],
    )
    assert cli.exit_code == 0, cli.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_curves_second_axis_is_bleu_for_a_decoder(runs, tmp_path, monkeypatch):
    """An autoencoder run decodes each epoch: its panel's second axis is that BLEU."""
    import pandas as pd

    from sentprobe.reporting import curves
    from sentprobe.training.checkpoint import read_manifest

    manifest = read_manifest(runs / "ae-8")
    bleu = [e["valid"]["bleu"] for e in manifest["epochs"]]
    drawn = []
    monkeypatch.setattr(
        curves, "_twin", lambda ax, x, values, metric: drawn.append((metric, values))
    )
    rows = [{"encoder": f"ae-8@epoch-{e}", "task": "t", "test_score": 0.5} for e in (1, 2)]
    curves.learning_curves(pd.DataFrame(rows), {"ae-8": manifest}, tmp_path / "c.png")
    assert drawn == [("bleu", bleu)] and len(bleu) == 2


def test_a_sweep_probed_at_one_epoch_is_one_panel(runs, tmp_path, monkeypatch):
    import pandas as pd

    from sentprobe.reporting import curves
    from sentprobe.training.checkpoint import read_manifest

    manifests = {name: read_manifest(runs / name) for name in ("ae-8", "ae-12")}
    panels: list[str] = []
    monkeypatch.setattr(curves, "_panel", lambda ax, x, lines, xlabel: panels.append(xlabel))
    for epochs, expected in (([2], ["encoder size"]), ([1, 2], ["epoch", "epoch", "encoder size"])):
        rows = [{"encoder": f"{name}@epoch-{e}", "task": "t", "test_score": 0.5}
                for name in manifests for e in epochs]  # fmt: skip
        panels.clear()
        curves.learning_curves(pd.DataFrame(rows), manifests, tmp_path / "c.png")
        assert panels == expected


def test_train_cli_bad_data_is_one_line(tmp_path):
    bad = tmp_path / "pairs.tsv"
    bad.write_text("a b\tc d\nno tab\n", encoding="utf-8")
    cli = CliRunner().invoke(
        app,
        ["train", "--arch", "gatedconv", "--objective", "translation", "--data", str(bad),
         "-o", str(tmp_path / "run"), "--vectors", "none", "-q"],
    )  # fmt: skip
    assert cli.exit_code == 1
    assert f"{bad}, line 2: expected source and target separated by tabs" in cli.output
    assert "Traceback" not in cli.output
    assert not (tmp_path / "run").exists()


def test_train_help_names_every_epoch_selector() -> None:
    out = CliRunner().invoke(app, ["train", "--help"], terminal_width=200).output
    for selector in ("@epoch-3", "@best", "@all"):
        assert selector in out, selector
