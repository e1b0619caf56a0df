"""``sentprobe build`` from gold CoNLL-U: tasks, manifest, quality report; nothing on failure."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


def ewt_subset(shared_data: Path, dest: Path, n: int = 6000) -> Path:
    src = shared_data / "ud" / "en_ewt" / "en_ewt-ud-all.conllu.gz"
    blocks, block = [], []
    with gzip.open(src, "rt", encoding="utf-8") as fh:
        for line in fh:
            block.append(line)
            if not line.strip():
                blocks.append("".join(block))
                block = []
                if len(blocks) == n:
                    break
    dest.write_text("".join(blocks), encoding="utf-8")
    return dest


def build(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sentprobe", "build", "-q", *args],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_build_from_gold_conllu_is_deterministic(tmp_path, shared_data):
    corpus = ewt_subset(shared_data, tmp_path / "ewt.conllu", n=16000)
    args = ["-c", str(corpus), "--tasks", "SentLen,BShift,Tense", "--sizes", "60,12,12"]
    first = build(*args, "-o", "suite1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = build(*args, "-o", "suite2", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    for name in ("sentence_length.txt", "bigram_shift.txt", "past_present.txt"):
        a, b = (tmp_path / "suite1" / name).read_bytes(), (tmp_path / "suite2" / name).read_bytes()
        assert a == b and len(a.splitlines()) == 84
    manifest = json.loads((tmp_path / "suite1" / "manifest.json").read_text())
    assert set(manifest["tasks"]) == {"SentLen", "BShift", "Tense"}
    assert manifest["tasks"]["Tense"]["counts"]["train"] == {"PAST": 30, "PRES": 30}
    assert "Quality report" in (tmp_path / "suite1" / "QUALITY.md").read_text()


def test_build_that_cannot_be_filled_writes_nothing(tmp_path, shared_data):
    corpus = ewt_subset(shared_data, tmp_path / "ewt.conllu", n=500)
    res = build(
        "-c",
        str(corpus),
        "-o",
        "suite",
        "--tasks",
        "SentLen,WC",
        "--sizes",
        "5000,1000,1000",
        cwd=tmp_path,
    )
    assert res.returncode == 1
    assert "nothing was written" in res.stderr and "WC" in res.stderr
    assert not (tmp_path / "suite").exists()
