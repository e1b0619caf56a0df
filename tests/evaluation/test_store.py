import multiprocessing
import os
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

from sentprobe.errors import SentprobeError
from sentprobe.evaluation.predictions import Predictions
from sentprobe.evaluation.provenance import package_versions
from sentprobe.evaluation.store import SCHEMA_VERSION, ResultRecord, ResultsStore, unit_key


def record(**overrides) -> ResultRecord:
    values = dict(
        encoder="MiniLM-L6",
        encoder_fingerprint="st:all-MiniLM-L6-v2@abc",
        task="SentLen",
        task_source="paper",
        task_hash="0123456789abcdef",
        category="surface",
        language="en",
        seed=0,
        probe="logreg",
        selection="dev",
        config={"C": 1.0, "grid": [0.1, 1.0]},
        dev_score=0.9,
        test_score=0.875,
        n_train=100,
        n_dev=10,
        n_test=10,
        n_classes=6,
        dim=384,
        warnings=["few examples"],
        # versions given, so the store keeps them instead of stamping this process's
        extra={"dev_scores": {"0.1": 0.8, "1.0": 0.9}, "versions": package_versions()},
        created="2026-01-01T00:00:00+00:00",  # fixed, so two calls compare equal
    )
    values.update(overrides)
    return ResultRecord(**values)


def test_unit_key_is_stable_and_distinguishes_inputs():
    key = unit_key("fp", "hash", "logreg:grid", 0)
    assert key == unit_key("fp", "hash", "logreg:grid", 0)
    others = {
        unit_key("fp2", "hash", "logreg:grid", 0),
        unit_key("fp", "hash2", "logreg:grid", 0),
        unit_key("fp", "hash", "mlp:grid", 0),
        unit_key("fp", "hash", "logreg:grid", 1),
        unit_key("fp", "hash", "logreg:grid", 0, "SentLen"),  # same data, another task name
        unit_key("fphash", "", "logreg:grid", 0),  # no ambiguity from concatenation
    }
    assert key not in others and len(others) == 6


def test_roundtrip_and_persistence(tmp_path):
    path = tmp_path / "sub" / "results.sqlite"
    rec = record()
    key = unit_key(rec.encoder_fingerprint, rec.task_hash, "logreg", rec.seed)
    with ResultsStore(path) as store:
        assert not store.has(key) and store.get(key) is None
        store.add(rec, key)
        assert store.has(key)
    with ResultsStore(path) as store:  # reopened: runs accumulate
        assert store.get(key) == rec
        assert store.records() == [rec]
        assert len(store) == 1


def _stored(path) -> ResultRecord:
    rec = record()
    with ResultsStore(path) as store:
        store.add(rec, "k1")
    return rec


def test_readonly_open_takes_no_write_lock(tmp_path):
    """A reader (``sentprobe report``) works while another process holds the write lock."""
    path = tmp_path / "r.sqlite"
    rec = _stored(path)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # what a writing run holds while it commits
    try:
        with ResultsStore(path, readonly=True) as store:
            assert store.records() == [rec]
            with pytest.raises(SentprobeError, match="cannot write"):
                store.add(record(seed=1), "k2")
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_readonly_open_reads_a_read_only_file(tmp_path):
    """A WAL store in a folder nobody may write (no ``-shm`` can be made there) still reads;
    as root, who writes anyway, the folder is made immutable (``chattr +i``) instead."""
    folder = tmp_path / "ro"
    path = folder / "r.sqlite"
    rec = _stored(path)
    assert not path.with_name("r.sqlite-shm").exists()  # a clean close removed it
    before = path.read_bytes()
    path.chmod(0o444)
    if os.geteuid() != 0:
        folder.chmod(0o555)
    elif subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode:
        pytest.skip("running as root, and chattr +i fails on this file system")
    try:
        assert not os.access(folder, os.W_OK) or os.geteuid() == 0
        with ResultsStore(path, readonly=True) as store:
            assert store.records() == [rec]
        with pytest.raises(SentprobeError, match="cannot write the results store"):
            ResultsStore(path)
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)
    assert path.read_bytes() == before and sorted(os.listdir(folder)) == ["r.sqlite"]


def test_readonly_open_creates_nothing(tmp_path):
    with pytest.raises(SentprobeError, match="no results store here"):
        ResultsStore(tmp_path / "missing" / "r.sqlite", readonly=True)
    assert not (tmp_path / "missing").exists()
    (tmp_path / "other.sqlite").write_bytes(b"")
    with pytest.raises(SentprobeError, match="not a sentprobe results file"):
        ResultsStore(tmp_path / "other.sqlite", readonly=True)


def test_upsert_filters_and_order(tmp_path):
    store = ResultsStore(tmp_path / "r.db")
    store.add(record(test_score=0.5), "k1")
    store.add(record(task="WC", category="surface"), "k2")
    store.add(record(probe="mlp"), "k3")
    store.add(record(test_score=0.6), "k1")  # same unit again: replaces, now last written
    assert len(store) == 3
    assert store.get("k1").test_score == 0.6
    assert [r.task for r in store.records(task="WC")] == ["WC"]
    assert [r.probe for r in store.records(task="SentLen", probe="mlp")] == ["mlp"]
    assert store.records(encoder="other") == []
    frame = store.to_frame()
    assert list(frame["key"]) == ["k2", "k3", "k1"]
    assert frame.loc[2, "config"] == {"C": 1.0, "grid": [0.1, 1.0]}
    assert frame.loc[2, "warnings"] == ["few examples"]
    assert {"test_score", "dev_score", "created", "extra"} <= set(frame.columns)


def test_numpy_values_are_stored_as_plain_numbers(tmp_path):
    store = ResultsStore(tmp_path / "r.db")
    rec = record(
        test_score=np.float32(0.25),
        seed=np.int64(3),
        dev_score=None,
        config={"C": np.float64(0.1), "h": np.int64(50)},
    )
    store.add(rec, "k")
    got = store.get("k")
    assert got.test_score == 0.25 and got.seed == 3 and got.dev_score is None
    assert got.config == {"C": 0.1, "h": 50}


def test_empty_store_frame_has_columns(tmp_path):
    frame = ResultsStore(tmp_path / "r.db").to_frame()
    assert frame.empty and "test_score" in frame.columns


def test_corrupt_or_foreign_file_is_a_clear_error(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(SentprobeError, match="junk.db"):
        ResultsStore(junk)

    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE t (x)")
    with pytest.raises(SentprobeError, match="foreign.db.*not a sentprobe"):
        ResultsStore(foreign)

    with pytest.raises(SentprobeError, match="directory"):
        ResultsStore(tmp_path)


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "r.db"
    ResultsStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    with pytest.raises(SentprobeError, match="schema version 99"):
        ResultsStore(path)


def test_wal_mode(tmp_path):
    path = tmp_path / "r.db"
    ResultsStore(path).close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _open_and_add(path: str, barrier, n: int) -> None:
    """A run's first steps: open (create) the store, then commit one result."""
    barrier.wait(timeout=60)
    with ResultsStore(path) as store:
        store.add(record(seed=n), unit_key("fp", "hash", "logreg", n))


def test_processes_creating_one_store_at_once_all_succeed(tmp_path):
    """Two runs started together on a new results file: neither may see a half-made schema."""
    ctx = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    n_procs = 3
    for attempt in range(5):
        path = str(tmp_path / f"r{attempt}.sqlite")
        barrier = ctx.Barrier(n_procs)
        procs = [ctx.Process(target=_open_and_add, args=(path, barrier, i)) for i in range(n_procs)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=120)
        assert [p.exitcode for p in procs] == [0] * n_procs, f"attempt {attempt}"
        with ResultsStore(path) as store:
            assert sorted(r.seed for r in store.records()) == list(range(n_procs))


def _predictions(**overrides) -> Predictions:
    values = dict(
        gold=["a", "b", "b", "c"], pred=["a", "b", "c", "c"], labels=["a", "b", "c"], groups=None
    )
    values.update(overrides)
    return Predictions.from_labels(**values)


def test_predictions_roundtrip_with_the_record(tmp_path):
    path = tmp_path / "r.sqlite"
    many = [f"L{i}" for i in range(300)]  # more labels than a byte holds
    big = _predictions(gold=many, pred=many[::-1], labels=many, groups=["x", "y"] * 150)
    with ResultsStore(path) as store:
        store.add(record(), "k1", _predictions(groups=["p", "q", "p", "p"]))
        store.add(record(seed=1), "k2", big)
        store.add(record(seed=2), "k3")
        assert store.predictions("k3") is None and store.predictions("nope") is None
    with ResultsStore(path, readonly=True) as store:
        got = store.predictions("k1")
        assert got.labels == ["a", "b", "c"] and got.groups == ["p", "q", "p", "p"]
        assert got.gold.tolist() == [0, 1, 1, 2] and got.pred.tolist() == [0, 1, 2, 2]
        assert got.accuracy == 0.75
        got = store.predictions("k2")
        assert got.predicted_labels().tolist() == many[::-1] and got.groups == big.groups
    with sqlite3.connect(path) as db:  # compact: one or two bytes per item, not JSON
        sizes = dict(db.execute("SELECT key, length(gold) FROM predictions"))
    assert sizes == {"k1": 4, "k2": 600}


def test_replacing_a_unit_without_predictions_drops_the_old_ones(tmp_path):
    with ResultsStore(tmp_path / "r.sqlite") as store:
        store.add(record(), "k", _predictions())
        store.add(record(), "k")
        assert store.predictions("k") is None


def test_a_version_1_store_opens_and_is_upgraded(tmp_path):
    """A store written before predictions existed: read as is, upgraded when written to."""
    path = tmp_path / "old.sqlite"
    with ResultsStore(path) as store:
        store.add(record(), "k1")
    with sqlite3.connect(path) as db:  # what a version-1 sentprobe wrote
        db.execute("DROP TABLE predictions")
        db.execute("UPDATE meta SET value='1' WHERE key='schema_version'")
    with ResultsStore(path, readonly=True) as store:
        assert store.records() == [record()] and store.predictions("k1") is None
        assert store.to_frame()["key"].tolist() == ["k1"]
    with ResultsStore(path) as store:
        store.add(record(seed=1), "k2", _predictions())
        assert store.predictions("k2").accuracy == 0.75 and store.predictions("k1") is None
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == (
            str(SCHEMA_VERSION),
        )


def test_predictions_for_many_keys(tmp_path):
    with ResultsStore(tmp_path / "r.sqlite") as store:
        for i in range(600):  # more keys than one query takes
            store.add(record(seed=i), f"k{i}", _predictions() if i % 2 else None)
        found = store.predictions_for([f"k{i}" for i in range(600)] + ["k1", "missing"])
    assert sorted(found) == sorted(f"k{i}" for i in range(1, 600, 2))
    assert found["k599"].accuracy == 0.75


def test_a_store_on_a_network_file_system_is_warned_about(tmp_path, monkeypatch):
    """SQLite's WAL mode is not safe across hosts on NFS, Lustre...: opening a store there for
    writing says so in one line (the mount is read from /proc/mounts; here a made-up one,
    its mount point with an escaped space, as the kernel writes it)."""
    import warnings

    import sentprobe.io as sio

    shared = tmp_path / "shared dir"
    shared.mkdir()
    mounts = tmp_path / "mounts"
    escaped = str(shared).replace(" ", "\\040")
    mounts.write_text(f"/dev/vda / ext4 rw 0 0\nserver:/export {escaped} nfs4 rw 0 0\n")
    monkeypatch.setattr(sio, "MOUNTS", mounts)
    assert sio.file_system_type(shared / "runs" / "r.sqlite") == "nfs4"
    with pytest.warns(UserWarning, match=r"r.sqlite: the results store is on a network file "
                      r"system \(nfs4\).*per-shard stores") as seen:  # fmt: skip
        ResultsStore(shared / "r.sqlite").close()
    assert len(seen) == 1 and "\n" not in str(seen[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a local disk, or reading: no warning
        ResultsStore(tmp_path / "local.sqlite").close()
        ResultsStore(shared / "r.sqlite", readonly=True).close()


def test_clusters_roundtrip_and_an_older_table_gains_their_columns(tmp_path):
    """Each test item's target form (a lexical split) is stored with its predictions; a store
    whose predictions table predates the cluster columns reads them as None read-only, gets
    them when opened for writing, and keeps its old rows."""
    path = tmp_path / "r.sqlite"
    forms = [f"w{i % 300}" for i in range(600)]  # more forms than a byte indexes
    clustered = _predictions(gold=["a"] * 600, pred=["a"] * 600, labels=["a"], clusters=forms)
    with ResultsStore(path) as store:
        store.add(record(), "old", _predictions(groups=["p", "q", "p", "p"]))
    with sqlite3.connect(path) as db:  # the table as sentprobe wrote it before clusters
        db.execute("ALTER TABLE predictions DROP COLUMN cluster_names")
        db.execute("ALTER TABLE predictions DROP COLUMN cluster_index")
    with ResultsStore(path, readonly=True) as store:
        got = store.predictions("old")
        assert got.groups == ["p", "q", "p", "p"] and got.clusters is None
    with ResultsStore(path) as store:
        store.add(record(seed=1), "new", clustered)
        assert store.predictions("old").clusters is None
    with ResultsStore(path, readonly=True) as store:
        assert store.predictions("new").clusters == forms


def test_a_crafted_cluster_index_is_a_clear_error(tmp_path):
    path = tmp_path / "r.sqlite"
    p = _predictions()
    with ResultsStore(path) as store:
        store.add(record(), "k", Predictions(p.labels, p.gold, p.pred, clusters=list("wxyz")))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE predictions SET cluster_index=X'00000009'")
    with ResultsStore(path, readonly=True) as store, pytest.raises(SentprobeError) as err:
        store.predictions("k")
    assert "damaged predictions of unit k" in str(err.value) and "cluster" in str(err.value)


def test_salvage_keeps_predictions_of_a_store_without_cluster_columns(tmp_path):
    from sentprobe.evaluation.salvage import salvage

    path = tmp_path / "old.sqlite"
    with ResultsStore(path) as store:
        store.add(record(), "k", _predictions())
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE predictions DROP COLUMN cluster_names")
        db.execute("ALTER TABLE predictions DROP COLUMN cluster_index")
    assert salvage(path, tmp_path / "new.sqlite").predictions == 1
    with ResultsStore(tmp_path / "new.sqlite", readonly=True) as store:
        assert store.predictions("k").accuracy == 0.75
