"""The Ray executor on a local 2-CPU Ray cluster started inside the test.

A 2-encoder x 3-task grid (plus the majority baseline) gives the local executor's results;
a worker that dies mid-run (``os._exit`` once, remembered by a marker file) has its job
retried and the grid still completes; an interrupted distributed run resumes from the store.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import pytest

from sentprobe.errors import SentprobeError
from sentprobe.evaluation.executors import CollectingStore, check_executor
from sentprobe.evaluation.runner import run

ENCODERS = """
import os
from pathlib import Path
import numpy as np


def _bag(sentences, salt):
    armed, marker = Path(DIR, "arm-die-once"), Path(DIR, "died")
    if armed.exists() and not marker.exists():
        marker.write_text(str(os.getpid()))
        os._exit(1)  # the worker process dies, as on a lost node
    out = np.zeros((len(sentences), 12), dtype=np.float32)
    for i, s in enumerate(sentences):
        for tok in s.split():
            out[i, (sum(map(ord, tok)) + salt) % 12] += 1
    return out


def one(sentences):
    return _bag(sentences, 0)


def two(sentences):
    return _bag(sentences, 5)
"""


def _task(name: str, n: int = 60) -> str:
    lines = []
    for split, count in (("tr", n), ("va", n // 4), ("te", n // 4)):
        for i in range(count):
            colour = "red" if i % 2 else "blue"
            lines.append(f"{split}\t{colour}\t{name} {split} {i} is {colour} {'z' * (1 + i % 5)}")
    return "\n".join(lines) + "\n"


def _scores(path: Path) -> dict[str, tuple[str, str, float]]:
    con = sqlite3.connect(path)
    rows = con.execute("SELECT key, encoder, task, test_score FROM results").fetchall()
    con.close()
    return {key: (enc, task, score) for key, enc, task, score in rows}


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    ray = pytest.importorskip("ray")
    d = tmp_path_factory.mktemp("grid")
    (d / "enc.py").write_text(f"DIR = {str(d)!r}\n" + ENCODERS)
    for name in ("t1", "t2", "t3"):
        (d / f"{name}.txt").write_text(_task(name))
    sys.path.insert(0, str(d))  # the workers import enc.py as the driver does
    os.environ["PYTHONPATH"] = os.pathsep.join([str(d), os.environ.get("PYTHONPATH", "")])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield d
    ray.shutdown()
    sys.path.remove(str(d))


def _grid(d: Path, results: Path, cache: Path, executor: str) -> None:
    run(
        [str(d / "enc.py:one"), str(d / "enc.py:two")],
        [str(d / f"t{i}.txt") for i in (1, 2, 3)],
        baselines="majority",
        results=results,
        cache_dir=cache,
        executor=executor,
        progress=False,
    )


@pytest.mark.slow
def test_ray_grid_equals_local_and_survives_a_dead_worker(ray_cluster, tmp_path):
    d = ray_cluster
    _grid(d, tmp_path / "local.sqlite", tmp_path / "cache-local", "local")
    local = _scores(tmp_path / "local.sqlite")
    assert len(local) == 3 * 3  # (majority, one, two) x 3 tasks

    marker = d / "died"
    (d / "arm-die-once").touch()  # the first worker to encode dies
    _grid(d, tmp_path / "ray.sqlite", tmp_path / "cache-ray", "ray")
    assert marker.exists() and int(marker.read_text()) != os.getpid()  # a worker, not us
    assert _scores(tmp_path / "ray.sqlite") == local  # same units, same scores

    # Resume: half the units removed from the store, the rerun computes exactly those.
    con = sqlite3.connect(tmp_path / "ray.sqlite")
    con.execute("DELETE FROM results WHERE encoder = 'two' OR task LIKE '%t3%'")
    con.commit()
    kept = dict(con.execute("SELECT key, created FROM results").fetchall())
    con.close()
    assert 0 < len(kept) < len(local)
    _grid(d, tmp_path / "ray.sqlite", tmp_path / "cache-ray", "ray")
    assert _scores(tmp_path / "ray.sqlite") == local
    con = sqlite3.connect(tmp_path / "ray.sqlite")
    after = dict(con.execute("SELECT key, created FROM results").fetchall())
    con.close()
    assert all(after[k] == v for k, v in kept.items())  # finished units were not redone


def test_unknown_executor_fails_before_anything_is_written(tmp_path) -> None:
    with pytest.raises(SentprobeError, match="unknown executor 'spark'"):
        run(["bov-glove"], "sample-en", results=tmp_path / "r.sqlite", executor="spark")
    assert not (tmp_path / "r.sqlite").exists()
    check_executor("ray://head:10001")  # Ray is installed here: accepted


def test_collecting_store_sees_driver_records_and_its_own() -> None:
    store = CollectingStore({"a": "record-a"})  # type: ignore[dict-item]
    assert store.has("a") and not store.has("b")
    store.add("record-b", "b", "predictions")  # type: ignore[arg-type]
    assert store.has("b") and store.get("b") == "record-b"
    assert store.calls == [(("record-b", "b", "predictions"), {})]
