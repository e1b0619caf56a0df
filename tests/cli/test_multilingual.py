"""The multilingual path end to end: probe two languages' samples with one encoder, then the
cross-language report (relative table, Table-1 summary, heatmap). A hashed bag of words
stands in for the encoder, so the test is fast."""

from __future__ import annotations

import sys

import pytest

from sentprobe.cli.main import main
from sentprobe.evaluation.store import ResultsStore

ENCODER = '''
import zlib
import numpy as np


def encode(sentences):
    """Bag of hashed tokens (stable across processes)."""
    out = np.zeros((len(sentences), 64), dtype=np.float32)
    for i, s in enumerate(sentences):
        for tok in s.split():
            out[i, zlib.crc32(tok.encode()) % 64] += 1
    return out
'''


def cli(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["sentprobe", *args])
    try:
        main()
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_run_two_language_samples_then_crosslang(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    encoder = tmp_path / "hashed.py"
    encoder.write_text(ENCODER, encoding="utf-8")
    results = tmp_path / "r.sqlite"
    tasks = "sample-fr/SentLen,sample-fr/BShift,sample-es/SentLen,sample-es/BShift"
    code, out, err = cli(
        monkeypatch,
        capsys,
        "run",
        "-e",
        f"{encoder}:encode",
        "-t",
        tasks,
        "--baselines",
        "majority",
        "--results",
        str(results),
        "-q",
    )
    assert code == 0, err
    with ResultsStore(results) as store:
        frame = store.to_frame()
    rows = frame[frame["encoder"] != "Majority"]
    assert sorted(zip(rows["task"], rows["language"])) == [
        ("BShift", "es"),
        ("BShift", "fr"),
        ("SentLen", "es"),
        ("SentLen", "fr"),
    ]  # paper names + the task's language: what crosslang groups by

    heat = tmp_path / "rel.png"
    code, out, err = cli(
        monkeypatch,
        capsys,
        "crosslang",
        "--results",
        str(results),
        "--reference",
        "fr",
        "--heatmap",
        str(heat),
    )
    assert code == 0, err
    assert "relative to fr" in out and "(es)" in out and "| **SentLen** | **BShift** |" in out
    assert "All (2 languages x 1 encoders)" in out  # X-Probe's Table 1, as one row
    assert heat.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    es = next(line for line in out.splitlines() if "(es)" in line)
    cells = [c.strip() for c in es.strip("|").split("|")][1:]
    assert len(cells) == 2 and all(c.lstrip("+-").replace(".", "", 1).isdigit() for c in cells)

    code, out, err = cli(
        monkeypatch, capsys, "crosslang", "--results", str(results), "--reference", "de"
    )
    assert code == 1 and "reference language 'de'" in err
