"""The Ray executor on a local 2-CPU Ray cluster started inside the test.

A 2-encoder x 3-task grid (plus the majority baseline) gives the local executor's results;
a worker that dies mid-run (``os._exit`` once, remembered by a marker file) has its job
retried and the grid still completes; an interrupted distributed run resumes from the store.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from test_concurrency import ENCODERS as CONCURRENCY_ENCODERS
from test_concurrency import _task, _units

from sentprobe.encoders.base import Encoder
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.executors import CollectingStore, check_executor
from sentprobe.evaluation.runner import run

# test_concurrency's encoders, except that the first call after the test arms it kills its
# process (a worker's), as when a node is lost.
ENCODERS = (
    CONCURRENCY_ENCODERS
    + """
_plain_bag = _bag


def _bag(sentences, salt):
    armed, marker = Path(DIR, "arm-die-once"), Path(DIR, "died")
    if armed.exists() and not marker.exists():
        marker.write_text(str(os.getpid()))
        os._exit(1)
    return _plain_bag(sentences, salt)


from sentprobe.encoders.base import Encoder


class Layers(Encoder):
    # two views, as a --layer all model: each view is probed by a Ray job of its own

    name = "layers"
    views = ["first", "second"]
    fingerprint = "test-layers-v1"

    def encode(self, sentences):
        return np.stack([one(sentences), two(sentences)], axis=1)
"""
)


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    ray = pytest.importorskip("ray")
    d = tmp_path_factory.mktemp("grid")
    (d / "enc.py").write_text(f"from pathlib import Path\nDIR = {str(d)!r}\n" + ENCODERS)
    for name in ("t1", "t2", "t3"):
        (d / f"{name}.txt").write_text(_task(name, 60))
    # enc.py is not importable by the workers: the executor sends user code by value
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield d
    ray.shutdown()


def _grid(d: Path, results: Path, cache: Path, executor: str) -> None:
    run(
        [str(d / "enc.py:one"), str(d / "enc.py:two"), str(d / "enc.py:Layers")],
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
    local = _units(tmp_path / "local.sqlite")
    assert len(local) == 5 * 3  # (majority, one, two, layers@first, layers@second) x 3 tasks

    marker = d / "died"
    (d / "arm-die-once").touch()  # the first worker to encode dies
    _grid(d, tmp_path / "ray.sqlite", tmp_path / "cache-ray", "ray")
    assert marker.exists() and int(marker.read_text()) != os.getpid()  # a worker, not us
    assert _units(tmp_path / "ray.sqlite") == local  # same units, same scores

    # Resume: half the units removed from the store, the rerun computes exactly those.
    con = sqlite3.connect(tmp_path / "ray.sqlite")
    con.execute("DELETE FROM results WHERE encoder IN ('two', 'layers@second') OR task = 't3'")
    con.commit()
    kept = dict(con.execute("SELECT key, created FROM results").fetchall())
    con.close()
    assert 0 < len(kept) < len(local)
    _grid(d, tmp_path / "ray.sqlite", tmp_path / "cache-ray", "ray")
    assert _units(tmp_path / "ray.sqlite") == local
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


def test_a_runner_limited_to_one_view_probes_only_that_view(tmp_path) -> None:
    """What a Ray job for one layer of a --layer all row does (``Runner.only_views``)."""
    import numpy as np

    from sentprobe.datasets.mock import make_mock_task
    from sentprobe.encoders.cache import EmbeddingCache
    from sentprobe.evaluation.runner import Runner
    from sentprobe.evaluation.store import ResultsStore

    class Views(Encoder):
        name, views, fingerprint = "fake", ["a", "b", "c"], "fake-views-v1"

        def encode(self, sentences):
            return np.stack([[[len(s), len(s.split()) * k] for k in (1, 2, 3)] for s in sentences])

    encoder = Views()
    with ResultsStore(tmp_path / "r.sqlite") as store:
        runner = Runner([make_mock_task(n_train=40, n_dev=10, n_test=10)], store=store,
                        cache=EmbeddingCache(tmp_path / "cache"), progress=False)  # fmt: skip
        runner.only_views = {1}
        runner.run_row(encoder)
        assert list(store.to_frame()["encoder"]) == ["fake@b"]
        runner.only_views = None
        runner.run_row(encoder)  # the other views now; view b is found done
        assert sorted(store.to_frame()["encoder"]) == ["fake@a", "fake@b", "fake@c"]


def test_a_failed_job_is_reported_in_one_line() -> None:
    from sentprobe.evaluation.executors import _job_failed

    error = _job_failed("bov / t1", RuntimeError("worker died\nTraceback ...\n  more"))
    assert str(error) == "ray job bov / t1 failed: RuntimeError: worker died"
