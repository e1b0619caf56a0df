"""The cross-lingual student at scale: memory flat in the corpus size (the pairs and the
teacher's vectors stay on disk), a teacher file killed mid-encode never trusted, and
``--max-steps``."""

from __future__ import annotations

import hashlib
import tracemalloc
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from test_student import CONFIG, corpus

from sentprobe.datasets.parallel import ParallelFiles
from sentprobe.encoders.cache import EmbeddingCache
from sentprobe.encoders.custom import CallableEncoder
from sentprobe.errors import SentprobeError
from sentprobe.training import pairs as pairs_module
from sentprobe.training.checkpoint import read_manifest
from sentprobe.training.student import train_student

DIM = 256


def wide_teacher(sentences: list[str]) -> np.ndarray:
    """DIM-wide vectors: 1 KB a pair, so a teacher matrix held in memory shows."""
    out = np.zeros((len(sentences), DIM), dtype=np.float32)
    for i, s in enumerate(sentences):
        for w in s.split():
            out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % DIM] += 1.0
    return out


def _tsv(path: Path, n: int) -> Path:
    """``n`` pairs repeating 60 distinct ones (the vocabulary and the cache stay the same)."""
    base = corpus()
    path.write_text(
        "".join(f"{base.source[i % 60]}\t{base.target[i % 60]}\n" for i in range(n)), "utf-8"
    )
    return path


def _train(tmp_path: Path, tag: str, data: ParallelFiles, config=CONFIG, teacher=None,
           cache="cache", **kw):  # fmt: skip
    teacher = teacher or CallableEncoder(wide_teacher, name="Wide", fingerprint="wide-v1")
    return train_student(
        tmp_path / tag, teacher, "wide.py", data, "fr", config,
        EmbeddingCache(tmp_path / cache), progress=False, log=lambda _: None, threads=1, **kw,
    )  # fmt: skip


def test_memory_does_not_grow_with_the_corpus(tmp_path: Path, monkeypatch) -> None:
    """Python's (and numpy's) peak allocations training on 1000 and on 6000 pairs: the 5000
    more pairs may add index arrays (about 40 bytes a pair), not the teacher's 1 KB vectors
    of each nor the sentences (about 200 bytes a pair as Python strings). Holding the
    corpus or the teacher matrix in memory fails."""
    monkeypatch.setattr(pairs_module, "TEACHER_CHUNK", 256)
    config = replace(CONFIG, valid_size=50, batch_size=16, epochs=1)
    warm = ParallelFiles([str(_tsv(tmp_path / "pairs-100.tsv", 100))])
    _train(tmp_path, "warm", warm, config, max_steps=1)  # imports, caches, first calls
    peaks = []
    for n in (1000, 6000):
        data = ParallelFiles([str(_tsv(tmp_path / f"pairs-{n}.tsv", n))])
        tracemalloc.start()
        _train(tmp_path, f"run-{n}", data, config, max_steps=2)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert (tmp_path / f"run-{n}" / "run.json").is_file()
    assert peaks[1] - peaks[0] < 5000 * 80, peaks


def test_a_teacher_file_killed_mid_encode_is_not_trusted(tmp_path: Path, monkeypatch) -> None:
    """A teacher that fails on its second chunk leaves ``teacher-*.f32.partial``, never the
    file a rerun trusts; the rerun encodes again and ends with an uninterrupted run's
    weights. A complete file is reused: the rerun's teacher is never called."""
    monkeypatch.setattr(pairs_module, "TEACHER_CHUNK", 16)
    data = ParallelFiles([str(_tsv(tmp_path / "pairs.tsv", 60))])
    straight = _train(tmp_path, "straight", data)
    calls = [0]

    def failing(sentences: list[str]) -> np.ndarray:
        calls[0] += 1
        if calls[0] == 3:  # the held-out pairs, then the first chunk, then this
            raise RuntimeError("killed")
        return wide_teacher(sentences)

    kw = {"name": "Wide", "fingerprint": "wide-v1"}
    with pytest.raises(SentprobeError, match="killed"):
        _train(tmp_path, "run", data, teacher=CallableEncoder(failing, **kw), cache="own")
    run = tmp_path / "run"
    assert [p.name for p in run.glob("teacher-*")] == [
        p.name + ".partial" for p in (tmp_path / "straight").glob("teacher-*.f32")
    ]
    resumed = _train(tmp_path, "run", data, cache="own")
    assert [e["valid_mse"] for e in resumed["epochs"]] == [
        e["valid_mse"] for e in straight["epochs"]
    ]
    for epoch in (1, 2):
        a = (tmp_path / "straight" / f"epoch-{epoch}" / "encoder.safetensors").read_bytes()
        assert a == (run / f"epoch-{epoch}" / "encoder.safetensors").read_bytes()
    assert not (run / ".pairs").exists() and not list(run.glob("*.partial"))

    def never(sentences: list[str]) -> np.ndarray:
        raise AssertionError("encoded again")

    teacher = CallableEncoder(never, **kw)
    again = _train(tmp_path, "run", data, replace(CONFIG, epochs=3), teacher, cache="own")
    assert len(again["epochs"]) == 3


def test_max_steps_stops_without_saving_the_epoch(tmp_path: Path) -> None:
    data = ParallelFiles([str(_tsv(tmp_path / "pairs.tsv", 60))])
    with pytest.raises(SentprobeError, match="--max-steps 0: must be at least 1"):
        _train(tmp_path, "zero", data, max_steps=0)
    assert not (tmp_path / "zero").exists()
    cut = _train(tmp_path, "run", data, max_steps=8)  # 6 batches an epoch: 2 into epoch 2
    assert [e["epoch"] for e in cut["epochs"]] == [1]
    assert [e["epoch"] for e in read_manifest(tmp_path / "run")["epochs"]] == [1]
    assert [e["epoch"] for e in _train(tmp_path, "run", data)["epochs"]] == [1, 2]


def test_a_senteval_teacher_is_prepared_once_on_every_source(tmp_path: Path, monkeypatch):
    """The teacher's vectors are encoded a chunk at a time; a teacher whose vectors depend on
    the sentences its prepare saw (SentEval's ``prepare``) still sees every source once."""
    from sentprobe.encoders.custom import SentEvalEncoder

    monkeypatch.setattr(pairs_module, "TEACHER_CHUNK", 10)
    seen: list[int] = []

    def prepare(params, samples):  # type: ignore[no-untyped-def]
        seen.append(len(samples))
        params["ids"] = {w: i for i, w in enumerate(sorted({w for s in samples for w in s}))}

    def batcher(params, batch):  # type: ignore[no-untyped-def]
        out = np.zeros((len(batch), 8), dtype=np.float32)
        for i, s in enumerate(batch):
            for w in s:
                out[i, params["ids"][w] % 8] += 1.0
        return out

    data = ParallelFiles([str(_tsv(tmp_path / "pairs.tsv", 60))])
    manifest = _train(tmp_path, "run", data, teacher=SentEvalEncoder(prepare, batcher))
    assert seen == [60] and len(manifest["epochs"]) == 2
