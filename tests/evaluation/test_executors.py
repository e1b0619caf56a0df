"""The Ray executor on a local multi-node Ray cluster (``ray.cluster_utils.Cluster``: a head
without CPUs and two 1-CPU nodes, each started in a folder of its own, so ``/proc/self/cwd``
is a different directory on each node, as a node-local disk is) started inside the test.

A 2-encoder x 3-task grid (plus the majority baseline) gives the local executor's results;
a worker that dies mid-run (``os._exit`` once, remembered by a marker file) has its job
retried and the grid still completes; an interrupted distributed run resumes from the store;
a node removed while it encodes has its jobs run again elsewhere; a cache that is not the
same directory on every node stops the run with one line; ``--keep-going`` lists the failed
jobs and finishes the others.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
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
    if os.environ.get("TEST_NODE") == "doomed" and Path(DIR, "arm-doomed").exists():
        Path(DIR, "doomed-encoding").touch()  # the test removes this node now
        time.sleep(600)
    return _plain_bag(sentences, salt)


def flaky(sentences):
    if any(s.startswith("t2 ") for s in sentences):
        raise ValueError("no sentence of t2, please")
    return _plain_bag(sentences, 3)


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
    pytest.importorskip("ray")
    import ray
    from ray.cluster_utils import Cluster

    d = tmp_path_factory.mktemp("grid")
    (d / "enc.py").write_text(f"from pathlib import Path\nDIR = {str(d)!r}\n" + ENCODERS)
    for name in ("t1", "t2", "t3"):
        (d / f"{name}.txt").write_text(_task(name, 60))
    here = Path.cwd()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    try:
        for name in ("node-a", "node-b"):  # a node's workers start in its folder
            (d / name).mkdir()
            os.chdir(d / name)
            cluster.add_node(num_cpus=1)
        os.chdir(here)
        # enc.py is not importable by the workers: the executor sends user code by value
        ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
        yield d, cluster
    finally:
        os.chdir(here)
        ray.shutdown()
        cluster.shutdown()


@pytest.fixture(scope="module")
def local_units(ray_cluster, tmp_path_factory) -> dict:
    """The grid's units computed by the local executor."""
    d, _ = ray_cluster
    out = tmp_path_factory.mktemp("local")
    os.environ["SENTPROBE_NUM_THREADS"] = "1"  # tiny probes: threads only cost
    try:
        _grid(d, out / "local.sqlite", out / "cache", "local")
    finally:
        del os.environ["SENTPROBE_NUM_THREADS"]
    return _units(out / "local.sqlite")


def _grid(
    d: Path,
    results: Path,
    cache: Path | str,
    executor: str,
    encoders=("one", "two", "Layers"),
    **kw,
):
    return run(
        [str(d / f"enc.py:{name}") for name in encoders],
        [str(d / f"t{i}.txt") for i in (1, 2, 3)],
        baselines="majority",
        results=results,
        cache_dir=cache,
        executor=executor,
        progress=False,
        **kw,
    )


def test_ray_grid_equals_local_and_survives_a_dead_worker(
    ray_cluster, local_units, tmp_path, monkeypatch
):
    d, _ = ray_cluster
    local = local_units
    assert len(local) == 5 * 3  # (majority, one, two, layers@first, layers@second) x 3 tasks

    marker = d / "died"
    (d / "arm-die-once").touch()  # the first worker to encode dies
    # A relative cache path: the driver makes it absolute, so every node's workers (started
    # in their own folders) find the one directory.
    monkeypatch.chdir(tmp_path)
    _grid(d, tmp_path / "ray.sqlite", "cache-ray", "ray")
    assert marker.exists() and int(marker.read_text()) != os.getpid()  # a worker, not us
    assert _units(tmp_path / "ray.sqlite") == local  # same units, same scores
    assert not list(d.glob("node-*/cache-ray"))

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


def test_a_node_local_cache_stops_the_run_in_one_line(ray_cluster, tmp_path) -> None:
    """``/proc/self/cwd/cache`` is a different directory on each node: each encoding job
    writes its share of the sentences into its own node's cache, and a probe job then misses
    the other share instead of encoding it again."""
    d, _ = ray_cluster
    with pytest.raises(SentprobeError) as caught:
        _grid(d, tmp_path / "r.sqlite", "/proc/self/cwd/cache", "ray", encoders=("one",))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("/proc/self/cwd/cache: ") and "vectors of one" in message
    assert "missing on node" in message and "--cache-dir" in message
    # one encoding job per node, each wrote its share on its own node
    assert sorted(p.parent.name for p in d.glob("node-*/cache")) == ["node-a", "node-b"]


def test_a_removed_node_has_its_jobs_run_again(ray_cluster, local_units, tmp_path) -> None:
    d, cluster = ray_cluster
    here = Path.cwd()
    (d / "node-c").mkdir()
    os.chdir(d / "node-c")
    try:
        doomed = cluster.add_node(num_cpus=1, env_vars={"TEST_NODE": "doomed"})
    finally:
        os.chdir(here)
    cluster.wait_for_nodes()
    (d / "arm-doomed").touch()  # its encoding job signals, then hangs until the node goes
    errors: list[BaseException] = []

    def grid() -> None:
        try:
            _grid(d, tmp_path / "ray.sqlite", tmp_path / "cache", "ray", encoders=("one",))
        except BaseException as e:
            errors.append(e)

    worker = threading.Thread(target=grid)
    worker.start()
    try:  # a new node's first worker imports sentprobe and torch: minutes on a loaded machine
        deadline = time.monotonic() + 300
        while not (d / "doomed-encoding").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        encoded = (d / "doomed-encoding").exists()
    finally:  # whatever happened, the node goes and nothing stays armed for the next tests
        (d / "arm-doomed").unlink()
        cluster.remove_node(doomed)
    worker.join(timeout=300)
    assert encoded, "the third node never encoded"
    assert not worker.is_alive() and not errors, errors
    expected = {k: v for k, v in local_units.items() if v[0] in ("Majority", "one")}
    assert len(expected) == 6 and _units(tmp_path / "ray.sqlite") == expected


def test_keep_going_lists_failed_jobs_and_finishes_the_others(
    ray_cluster, tmp_path, monkeypatch, capsys
) -> None:
    d, _ = ray_cluster
    monkeypatch.setenv("SENTPROBE_DEBUG", "1")  # the remote tracebacks on stderr
    frame = _grid(d, tmp_path / "ray.sqlite", tmp_path / "cache", "ray",
                  encoders=("one", "flaky"), keep_going=True)  # fmt: skip
    assert sorted(frame["encoder"]) == ["Majority"] * 3 + ["one"] * 3
    failures = frame.attrs["failures"]
    # flaky's encoding failed, so each of its probe jobs (one per task) did, with the
    # encoder's own one-line error
    assert [f.split(": ", 1)[0] for f in sorted(failures)] == [f"flaky / t{i}" for i in (1, 2, 3)]
    assert all("failed on a batch" in f and "ValueError: no sentence of t2" in f for f in failures)
    err = capsys.readouterr().err
    assert err.count("Traceback") >= 3 and 'raise ValueError("no sentence of t2, please")' in err
    with pytest.raises(SentprobeError, match="encoder 'flaky' failed on a batch"):
        _grid(d, tmp_path / "ray2.sqlite", tmp_path / "cache", "ray", encoders=("flaky",))


def test_keep_going_in_the_cli_local(ray_cluster, tmp_path, monkeypatch, capsys) -> None:
    """The local executor: a failed pair is one error line at the end, the table still shows
    the others, exit status 1; ``SENTPROBE_DEBUG=1`` adds the traceback."""
    import sys

    from sentprobe.cli.main import main

    d, _ = ray_cluster
    tasks = ",".join(str(d / f"t{i}.txt") for i in (1, 2, 3))
    args = ["sentprobe", "run", "-q", "-t", tasks, "-e", f"{d}/enc.py:flaky", "--baselines",
            "none", "--results", str(tmp_path / "r.sqlite"), "--cache-dir",
            str(tmp_path / "c"), "--keep-going"]  # fmt: skip
    monkeypatch.setenv("SENTPROBE_NUM_THREADS", "1")
    for debug in ("", "1"):
        monkeypatch.setenv("SENTPROBE_DEBUG", debug)
        monkeypatch.setattr(sys, "argv", args)
        with pytest.raises(SystemExit) as exit_:
            main()
        out, err = capsys.readouterr()
        assert exit_.value.code == 1
        assert "flaky" in out and "t1" in out and "t3" in out  # the table of t1 and t3
        lines = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(lines) == 2, err
        assert lines[0].startswith("error: flaky / t2: encoder 'flaky' failed on a batch")
        assert "ValueError: no sentence of t2, please" in lines[0]
        assert lines[1] == "error: 1 job(s) failed (listed above); the rest is stored"
        assert ("Traceback" in err) == bool(debug)


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


def test_nli_training_pairs_are_encoded_before_the_probe_jobs(
    ray_cluster, tmp_path, monkeypatch
) -> None:
    """Zero-shot NLI (``--nli-train``): the pairs are encoded by the encoding jobs, so the
    probe jobs, which may not encode a pre-encoded row, train the head from the cache; the
    scores are the local executor's."""
    from dnc_fixture import write_release
    from sentprobe.datasets.loaders.dnc import load_dnc

    d, _ = ray_cluster
    nli = [t for t in load_dnc(write_release(tmp_path / "dnc"), suite="mini")
           if t.metadata.format == "nli-pair"]  # fmt: skip
    pairs = Path(__file__).resolve().parents[1] / "fixtures" / "nli_tiny.jsonl"
    monkeypatch.setenv("SENTPROBE_NUM_THREADS", "1")
    found = []
    for executor in ("local", "ray"):
        frame = run([str(d / "enc.py:one")], nli, baselines="none", nli_train=pairs, probe="logreg",
                    results=tmp_path / f"{executor}.sqlite", cache_dir=tmp_path / executor,
                    executor=executor, progress=False)  # fmt: skip
        assert {e["protocol"] for e in frame["extra"]} == {"zero-shot"}
        found.append(_units(tmp_path / f"{executor}.sqlite"))
    assert found[0] == found[1] and found[0]


def test_a_local_model_directory_is_named_by_its_absolute_path(tmp_path, monkeypatch) -> None:
    """A Ray worker starts in another directory: ``-e ./my-bert`` must reach it absolute (the
    row's label stays the directory's name)."""
    from sentprobe.encoders import get_encoder

    (tmp_path / "my-bert").mkdir()
    (tmp_path / "my-bert" / "config.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    encoder = get_encoder("my-bert", layer="all")
    assert encoder.model_name == str(tmp_path / "my-bert") and encoder.name == "my-bert"


def test_encoding_jobs_one_per_gpu_or_per_node() -> None:
    pytest.importorskip("ray")
    from sentprobe.evaluation.executors import _encoding_slots

    def node(i: int, cpus: float, gpus: float = 0, alive: bool = True) -> dict:
        resources = {"CPU": cpus, **({"GPU": gpus} if gpus else {})}
        return {"NodeID": f"{i:056x}", "Alive": alive, "Resources": resources}

    nodes = [node(0, 0), node(1, 8, 2), node(2, 4, 1), node(3, 16, alive=False)]
    assert [opts for opts, _ in _encoding_slots(nodes, gpu=True)] == [
        {"num_gpus": 1, "num_cpus": 1}
    ] * 3  # one per GPU
    cpu = _encoding_slots(nodes, gpu=False)  # the live nodes with CPUs, the smallest's count
    assert [(opts["num_cpus"], threads) for opts, threads in cpu] == [(4, 4), (4, 4)]
    assert [opts["scheduling_strategy"].node_id for opts, _ in cpu] == [f"{1:056x}", f"{2:056x}"]
    assert all(opts["scheduling_strategy"].soft for opts, _ in cpu)


def test_the_default_cache_path_is_absolute_on_the_driver(tmp_path, monkeypatch) -> None:
    from sentprobe.evaluation.runner import default_cache_dir

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SENTPROBE_CACHE", "~/vectors")
    assert default_cache_dir() == Path.home() / "vectors"
    monkeypatch.setenv("SENTPROBE_CACHE", "vectors")
    assert default_cache_dir() == tmp_path / "vectors"
    monkeypatch.delenv("SENTPROBE_CACHE")
    assert default_cache_dir() == Path.home() / ".cache" / "sentprobe" / "embeddings"
