"""``run --shard I/N`` and ``merge``: N shards, each with its own store and cache (as on
nodes without a shared file system), merge into a store whose report is byte-identical to one
unsharded run's; conflicting results are refused, identical duplicates kept once."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest
from test_concurrency import ENCODERS, _task

from sentprobe.cli.main import main
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.merge import merge_stores
from sentprobe.evaluation.shards import parse_shard, plan

LAYERS = """
from sentprobe.encoders.base import Encoder


class Layers(Encoder):
    name, views, fingerprint = "layers", ["first", "second"], "test-shard-layers-v1"

    def encode(self, sentences):
        return np.stack([one(sentences), two(sentences)], axis=1)
"""


@pytest.fixture(autouse=True)
def one_thread(monkeypatch) -> None:
    """Tiny probes: torch's thread pool costs more than it saves (and much more on a busy
    machine)."""
    monkeypatch.setenv("SENTPROBE_NUM_THREADS", "1")


def cli(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["sentprobe", *args])
    try:
        main()
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def grid(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("shards")
    (d / "enc.py").write_text(ENCODERS + LAYERS)
    for name in ("t1", "t2", "t3"):
        (d / f"{name}.txt").write_text(_task(name, 40))
    return d


def _run_args(d: Path, results: Path, cache: Path, *extra: str) -> list[str]:
    tasks = ",".join(str(d / f"t{i}.txt") for i in (1, 2, 3))
    return ["run", "-q", "-t", tasks, "-e", f"{d}/enc.py:one", "-e", f"{d}/enc.py:Layers",
            "--baselines", "majority", "--seeds", "2", "--controls",
            "--results", str(results), "--cache-dir", str(cache), *extra]  # fmt: skip


def test_merged_shards_report_exactly_as_one_run(grid, tmp_path, monkeypatch, capsys) -> None:
    code, _, err = cli(
        monkeypatch, capsys, *_run_args(grid, tmp_path / "all.sqlite", tmp_path / "c")
    )
    assert code == 0, err
    shards = []
    for i in (1, 2, 3, 4):  # 4 shards of 3 rows x 3 tasks: one shard gets 3 pairs, others 2
        store = tmp_path / f"shard{i}.sqlite"
        args = _run_args(grid, store, tmp_path / f"c{i}", "--shard", f"{i}/4")
        code, _, err = cli(monkeypatch, capsys, *args)
        assert code == 0, err
        shards.append(store)
    counts = [
        sqlite3.connect(s).execute("SELECT COUNT(*) FROM results").fetchone()[0] for s in shards
    ]
    with sqlite3.connect(tmp_path / "all.sqlite") as con:
        total = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert sum(counts) == total and all(counts)  # a partition, nothing computed twice
    with sqlite3.connect(tmp_path / "all.sqlite") as con:
        maps = con.execute(
            "SELECT encoder, task, COUNT(DISTINCT seed), COUNT(DISTINCT task_hash) FROM results "
            "WHERE task LIKE '%~control' GROUP BY encoder, task"
        ).fetchall()
    assert maps and all(row[2:] == (2, 2) for row in maps)  # --seeds 2: two maps per control

    # Shards out of order (2, 3, 4, 1), one of them twice (identical duplicates are fine).
    merged = tmp_path / "merged.sqlite"
    code, _, err = cli(monkeypatch, capsys, "merge", *map(str, shards[1:] + shards[:2]),
                       "-o", str(merged))  # fmt: skip
    assert code == 0, err
    assert f"{total} units from 5 stores" in err
    reports = []
    for store in (tmp_path / "all.sqlite", merged):
        code, out, err = cli(monkeypatch, capsys, "report", "--results", str(store))
        assert code == 0, err
        reports.append(out)
    assert "layers@second" in reports[0] and "control" in reports[0].lower()
    assert reports[0] == reports[1]
    assert not list(tmp_path.glob(".merged*"))  # no temporary file left

    # Three of four shards: merged, with a warning naming the missing one.
    code, _, err = cli(
        monkeypatch, capsys, "merge", *map(str, shards[:3]), "-o", str(tmp_path / "m3.sqlite")
    )
    assert code == 0 and "shards not among the inputs: 4/4" in err


def test_a_conflicting_unit_is_refused_and_nothing_is_written(
    grid, tmp_path, monkeypatch, capsys
) -> None:
    args = _run_args(grid, tmp_path / "a.sqlite", tmp_path / "c", "--shard", "1/2")
    assert cli(monkeypatch, capsys, *args)[0] == 0
    b = tmp_path / "b.sqlite"
    b.write_bytes((tmp_path / "a.sqlite").read_bytes())
    with sqlite3.connect(b) as con:
        key = con.execute("SELECT key FROM results ORDER BY rowid LIMIT 1").fetchone()[0]
        con.execute("UPDATE results SET test_score = test_score + 0.01 WHERE key = ?", (key,))
    out = tmp_path / "m.sqlite"
    code, _, err = cli(
        monkeypatch, capsys, "merge", str(tmp_path / "a.sqlite"), str(b), "-o", str(out)
    )
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"b.sqlite: unit {key}" in lines[0] and "test_score" in lines[0]
    assert not out.exists() and not list(tmp_path.glob(".m.sqlite*"))
    # An existing output that is not an input is not overwritten.
    out.write_text("keep")
    with pytest.raises(SentprobeError, match="already exists"):
        merge_stores([tmp_path / "a.sqlite"], out)
    assert out.read_text() == "keep"
    # The output may be one of the inputs: replaced by the merge, atomically.
    a = tmp_path / "a.sqlite"
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(a.read_bytes())
    with sqlite3.connect(a) as con:
        n = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    merged = merge_stores([a, copy], a)
    assert (merged.units, merged.duplicates) == (n, n)
    with sqlite3.connect(a) as con:
        assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == n


def test_shard_spec_and_plan() -> None:
    assert parse_shard("2/8") == (2, 8)
    for bad in ("0/3", "4/3", "1", "a/b", "1/0"):
        with pytest.raises(SentprobeError, match="--shard takes I/N"):
            parse_shard(bad)
    from sentprobe.datasets.controls import control_task
    from sentprobe.datasets.mock import make_mock_task
    from sentprobe.registry import baselines

    tasks = [make_mock_task(n_train=8, n_dev=4, n_test=4, name=f"m{i}") for i in range(3)]
    tasks += [control_task(tasks[0], seed=0), control_task(tasks[0], seed=1)]  # two maps
    rows = [baselines.get("majority"), baselines.get("majority")]
    pairs = plan(rows, tasks, 2)
    assert [p.shard for p in pairs if len(p.tasks) == 1] == [1, 2, 1, 2, 1, 2]  # round-robin
    control = [p for p in pairs if len(p.tasks) == 2]
    assert [p.shard for p in control] == [1, 1, 2, 2]  # each map with its task, per row
    assert all(p.tasks[0].name == "m0" for p in control)
    assert [p.tasks[1].map_seed for p in control] == [0, 1, 0, 1]
    assert len({(p.row, p.task) for p in pairs}) == len(pairs)  # every map its own position
    from sentprobe.evaluation.executors import _task_groups

    assert _task_groups(tasks) == [[0, 3, 4], [1], [2]]  # a Ray job: a task with its maps
