"""Issue 46: a trained run's row is its folder plus its checkpoint's content. Training one
more epoch and probing ``@all`` again leaves the earlier epochs' rows as they were (same
fingerprints and names, nothing computed or encoded again); ``@best`` is the row of the epoch
it selects; curves read each row's own folder's manifest; ``--name`` can be given to a
finished run."""

from __future__ import annotations

import shutil
import warnings
from itertools import product
from pathlib import Path

import pytest

from sentprobe.encoders import expand_encoder_spec
from sentprobe.evaluation.identity import resolve, run_folder
from sentprobe.evaluation.runner import run as run_probes
from sentprobe.evaluation.store import ResultsStore
from sentprobe.reporting.curves import _manifests_by_run, epoch_scores
from sentprobe.training.checkpoint import read_manifest
from sentprobe.training.trainer import TrainConfig, train

WORDS = ["cat", "dog", "bird", "house", "tree", "car"]
TINY = {"dim": 8, "dec_dim": 8, "dec_emb": 8, "batch_size": 8, "layers": 1}


def _config(text: Path, out: Path, epochs: int, name: str | None = None) -> TrainConfig:
    return TrainConfig(
        "bilstm-max", "autoencoder", [str(text)], str(out), epochs=epochs, preset="demo",
        vectors=None, dim=8, threads=1, overrides=TINY, name=name,
    )  # fmt: skip


@pytest.fixture
def corpus(tmp_path) -> Path:
    text = tmp_path / "text.txt"
    text.write_text("\n".join(f"the {a} saw a {b} ." for a, b in product(WORDS, WORDS)) + "\n")
    return text


@pytest.fixture
def task(tmp_path) -> Path:
    lines = []
    for k, (a, b) in enumerate(product(WORDS, WORDS)):
        split = "te" if k % 4 == 0 else "va" if k % 4 == 1 else "tr"
        plural = k % 2 == 0
        lines.append(f"{split}\t{'PL' if plural else 'SG'}\tthe {a}{'s' if plural else ''} saw {b}")
    path = tmp_path / "plural.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def _rows(store: Path):
    with ResultsStore(store, readonly=True) as s:
        frame = resolve(s.to_frame())
    return {
        r.encoder: (r.encoder_fingerprint, r.key, r.created, r.test_score)
        for r in frame.itertuples()
    }


def test_one_more_epoch_leaves_earlier_rows_as_they_were(tmp_path, corpus, task):
    run_dir = tmp_path / "runs" / "nmt"
    train(_config(corpus, run_dir, 2), progress=False)
    store, cache = tmp_path / "r.sqlite", tmp_path / "cache"
    kw = dict(baselines="none", results=store, cache_dir=cache, progress=False)
    run_probes([f"{run_dir}@all"], str(task), **kw)
    before = _rows(store)
    assert sorted(before) == ["nmt@epoch-1", "nmt@epoch-2"]
    cached = {  # the vectors of each epoch's fingerprint
        p: p.stat().st_mtime_ns for d in cache.iterdir() if d.is_dir() for p in d.rglob("*")
    }
    assert cached

    train(_config(corpus, run_dir, 3), progress=False)
    assert expand_encoder_spec(f"{run_dir}@all") == [f"{run_dir}@epoch-{k}" for k in (1, 2, 3)]
    run_probes([f"{run_dir}@all"], str(task), **kw)
    after = _rows(store)
    assert sorted(after) == ["nmt@epoch-1", "nmt@epoch-2", "nmt@epoch-3"]
    for name in before:  # same fingerprint, key, time and score: reused, not computed again
        assert after[name] == before[name]
    for path, stamp in cached.items():  # the earlier epochs' vectors were not encoded again
        assert path.stat().st_mtime_ns == stamp, path
    assert run_folder(after["nmt@epoch-1"][0]) == str(run_dir.resolve())

    best = read_manifest(run_dir)  # @best is the row of the epoch it selects, not a third one
    from sentprobe.training.checkpoint import best_epoch

    run_probes([f"{run_dir}@best"], str(task), **kw)
    assert sorted(_rows(store)) == sorted(after)
    assert f"nmt@epoch-{best_epoch(best)}" in after


def test_a_finished_run_can_be_named(tmp_path, corpus):
    run_dir = tmp_path / "runs" / "nmt"
    train(_config(corpus, run_dir, 1), progress=False)
    train(_config(corpus, run_dir, 1, name="nmt-en"), progress=False)
    assert read_manifest(run_dir)["name"] == "nmt-en"
    train(_config(corpus, run_dir, 2, name="nmt-en"), progress=False)  # and resumed, named
    assert [e["epoch"] for e in read_manifest(run_dir)["epochs"]] == [1, 2]


def test_curves_read_each_folders_own_manifest(tmp_path, corpus, task):
    store = tmp_path / "r.sqlite"
    dirs = [tmp_path / where / "nmt" for where in ("a", "b")]
    train(_config(corpus, dirs[0], 1), progress=False)
    shutil.copytree(dirs[0], dirs[1])  # one name, two folders: two runs
    manifest = read_manifest(dirs[1])
    manifest["epochs"][0]["valid"]["marker"] = 1.0
    from sentprobe.training.checkpoint import write_manifest

    write_manifest(dirs[1], manifest)
    for d in dirs:
        run_probes([f"{d}@all"], str(task), baselines="none", results=store, progress=False,
                   cache_dir=tmp_path / "c")  # fmt: skip
    with ResultsStore(store, readonly=True) as s:
        frame = s.to_frame()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        scores = epoch_scores(frame)
    assert scores["run"].nunique() == 2
    manifests = {str(d.resolve()): read_manifest(d) for d in dirs}
    chosen = _manifests_by_run(scores, manifests)
    for run, folder in scores.groupby("run")["folder"].first().items():
        assert chosen[run] is manifests[folder]
    assert sum("marker" in m["epochs"][0]["valid"] for m in chosen.values()) == 1
