"""Views that do not all live on disk: ``--stream`` (ridge from statistics, nothing cached),
the half-precision cache, the cache's size stated and refused when the disk cannot hold it,
and a ``--layer all``-style run whose peak memory does not grow with the number of views."""

from __future__ import annotations

import hashlib
import shutil
import tracemalloc
from collections import namedtuple

import numpy as np
import pytest
import torch

import sentprobe
from sentprobe.datasets import make_mock_task
from sentprobe.encoders import cache as cache_module
from sentprobe.encoders.base import Encoder
from sentprobe.encoders.cache import EmbeddingCache, from_store, to_store
from sentprobe.errors import SentprobeError


class _Views(Encoder):
    """A toy encoder with ``views`` views of ``dim`` dimensions: hashed letter features,
    mixed differently per view (as the layers of one forward pass)."""

    batch_size = 64

    def __init__(self, views: int = 3, dim: int = 16, batch_size: int = 64) -> None:
        self.n_views, self.dim, self.batch_size = views, dim, batch_size
        self.name = f"views{views}"
        rng = np.random.default_rng(0)
        self.mix = rng.normal(size=(views, 26, dim)).astype(np.float32)

    @property
    def fingerprint(self) -> str:
        return f"toy-views-{self.n_views}-{self.dim}"

    @property
    def views(self):
        return [f"layer{i}" for i in range(self.n_views)]

    def encode(self, sentences):
        counts = np.zeros((len(sentences), 26), dtype=np.float32)
        for i, s in enumerate(sentences):
            for ch in s.lower():
                if "a" <= ch <= "z":
                    counts[i, ord(ch) - 97] += 1
            counts[i, int(hashlib.md5(s.encode()).hexdigest(), 16) % 26] += 0.5
        return np.einsum("nc,vcd->nvd", counts, self.mix)


def _tasks(n_train=300, n_eval=80):
    return [make_mock_task(f"T{k}", n_train=n_train, n_dev=n_eval, n_test=n_eval, n_classes=3,
                           seed=k) for k in range(2)]  # fmt: skip


def _run(tmp_path, name, **kw):
    return sentprobe.run(
        _Views(),
        _tasks(),
        baselines="none",
        probe="ridge",
        results=tmp_path / f"{name}.sqlite",
        cache_dir=tmp_path / f"cache-{name}",
        progress=False,
        **kw,
    ).sort_values(["task", "encoder"])


def test_streamed_views_equal_cached_ones_and_nothing_is_cached(tmp_path):
    cached = _run(tmp_path, "cached")
    streamed = _run(tmp_path, "streamed", stream=True)
    assert len(streamed) == len(cached) == 2 * 3
    assert streamed["key"].tolist() == cached["key"].tolist()  # the same units
    assert streamed["test_score"].tolist() == cached["test_score"].tolist()
    assert streamed["dev_score"].tolist() == cached["dev_score"].tolist()
    assert [c["l2"] for c in streamed["config"]] == [c["l2"] for c in cached["config"]]
    assert all(e["streamed"] for e in streamed["extra"])
    assert not any(p.is_file() for p in (tmp_path / "cache-streamed").rglob("*"))
    assert any(p.is_file() for p in (tmp_path / "cache-cached").rglob("*"))


def test_stream_refuses_what_it_cannot_compute(tmp_path):
    with pytest.raises(SentprobeError, match="use it with --probe ridge"):
        _run(tmp_path, "a", stream=True, probe_device=None) if False else sentprobe.run(
            _Views(), _tasks(), baselines="none", probe="logreg", stream=True,
            results=tmp_path / "b.sqlite", cache_dir=tmp_path / "c", progress=False,
        )  # fmt: skip
    nodev = make_mock_task("NoDev", n_train=60, n_dev=0, n_test=20, seed=3)
    with pytest.raises(SentprobeError, match="no dev split"):
        sentprobe.run(
            _Views(), [nodev], baselines="none", probe="ridge", stream=True,
            results=tmp_path / "d.sqlite", cache_dir=tmp_path / "c", progress=False,
        )  # fmt: skip


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_cache(tmp_path, dtype):
    x = np.random.default_rng(0).normal(size=(50, 8)).astype(np.float32) * 10
    stored = to_store(x, dtype)
    assert stored.itemsize == 2
    back = from_store(stored, dtype)
    assert back.dtype == np.float32
    bits = 10 if dtype == "float16" else 7
    np.testing.assert_allclose(back, x, rtol=2.0**-bits)
    assert not np.array_equal(back, x)
    # a run: probed from the half cache, on the first run as on the next (read back)
    first = _run(tmp_path, dtype, cache_dtype=dtype)
    again = _run(tmp_path, dtype + "-again", cache_dtype=dtype)
    assert first["test_score"].tolist() == again["test_score"].tolist()
    full = _run(tmp_path, "full")
    assert (np.abs(first["test_score"].values - full["test_score"].values) <= 0.05).all()
    cache = EmbeddingCache(tmp_path / f"cache-{dtype}", dtype=dtype)
    (info,) = cache.info()
    assert info.dtype == dtype and info.fingerprint.endswith(f"|cache={dtype}")
    size32 = sum(f.stat().st_size for f in (tmp_path / "cache-full").rglob("*.shard"))
    size16 = sum(f.stat().st_size for f in (tmp_path / f"cache-{dtype}").rglob("*.shard"))
    assert size16 < 0.6 * size32
    with pytest.raises(SentprobeError, match="cache dtype must be one of"):
        EmbeddingCache(tmp_path, dtype="int8")


def test_cache_size_is_stated_and_refused_when_the_disk_cannot_hold_it(
    tmp_path, monkeypatch, capsys
):
    sentprobe.run(
        _Views(), _tasks()[:1], baselines="none", probe="ridge",
        results=tmp_path / "a.sqlite", cache_dir=tmp_path / "ok", progress=True,
    )  # fmt: skip
    said = capsys.readouterr()
    n = len(set(_tasks()[0].sentences()))
    assert f"embedding cache: {n:,} sentences x 48 values (3 views) in float32" in said.err
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(
        cache_module.shutil, "disk_usage", lambda path: Usage(10**6, 10**6 - 1000, 1000)
    )
    with pytest.raises(SentprobeError, match="the disk cannot hold it"):
        sentprobe.run(
            _Views(), _tasks()[:1], baselines="none", probe="ridge",
            results=tmp_path / "b.sqlite", cache_dir=tmp_path / "full", progress=False,
        )  # fmt: skip
    assert not any((tmp_path / "full").rglob("*.shard"))  # refused before writing
    assert shutil.disk_usage is not None


def _peak(tmp_path, views, name):
    tracemalloc.start()
    try:
        sentprobe.run(
            _Views(views=views, dim=64, batch_size=128 // views), _tasks(150, 40)[:1],
            baselines="none", probe="ridge",
            results=tmp_path / f"{name}.sqlite", cache_dir=tmp_path / name, progress=False,
        )  # fmt: skip
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_memory_of_a_layer_sweep_does_not_grow_with_the_views(tmp_path, monkeypatch):
    """A --layer all run reads one view at a time from the cache and flushes what it encodes
    every MAX_SHARD_BYTES: its peak is bounded by one view's matrices, that buffer and one
    encoder batch of every view (batch x views x dim: the forward pass's own output),
    whatever the number of views. 2 views and 16 views of 64 dimensions over 230
    sentences, in batches of equal bytes (64 and 8 sentences): all 16 views in memory would
    add 16 x 230 x 64 x 4 = 0.94 MB; each unit's result (a few KB) is what grows."""
    monkeypatch.setattr(cache_module, "MAX_SHARD_BYTES", 64 * 1024)
    _peak(tmp_path, 2, "warm")  # imports and caches of the first run
    few = _peak(tmp_path, 2, "few")
    many = _peak(tmp_path, 16, "many")
    one_view = 230 * 64 * 4
    # what does grow with the views is each unit's result (record, key, test predictions):
    # measured about 15 KB a unit here, allowed 16 KB
    bookkeeping = (16 - 2) * 16 * 1024
    assert many - few < 2 * one_view + bookkeeping < 16 * one_view / 2, (few, many)


def test_probe_device_reaches_the_probes_and_is_not_part_of_the_key(tmp_path, monkeypatch):
    import sentprobe.evaluation.runner as runner_module

    made = []
    real = runner_module.make_probe

    def spy(*args, **kw):
        est = real(*args, **kw)
        made.append(est)
        return est

    monkeypatch.setattr(runner_module, "make_probe", spy)
    plain = _run(tmp_path, "plain")
    on_cpu = _run(tmp_path, "cpu", probe_device="cpu")
    assert on_cpu["key"].tolist() == plain["key"].tolist()
    assert any(getattr(e, "device", None) == "cpu" for e in made)
    if not torch.cuda.is_available():
        with pytest.raises(SentprobeError, match="no CUDA device"):
            _run(tmp_path, "cuda", probe_device="cuda")


def test_a_shard_of_another_type_than_the_cache_is_quarantined(tmp_path):
    """A bfloat16 cache's shards hold uint16 bits: one planted in a float32 cache would be
    read as integers. A shard whose type is not the cache's is set aside, its rows encoded."""
    enc = _Views(views=1, dim=4)
    sentences = ["a b c", "d e f"]
    EmbeddingCache(tmp_path / "half", dtype="bfloat16").encode(enc, sentences, progress=False)
    full = EmbeddingCache(tmp_path / "full")
    ref = full.encode(enc, sentences, progress=False)
    (half_dir,) = [p for p in (tmp_path / "half").iterdir() if p.is_dir()]
    (full_dir,) = [p for p in (tmp_path / "full").iterdir() if p.is_dir()]
    for shard in full_dir.glob("*.shard"):
        shard.unlink()
    for shard in half_dir.glob("*.shard"):
        shutil.copy(shard, full_dir / shard.name)
    with pytest.warns(UserWarning, match="bfloat16 cache|uint16 vectors in a float32"):
        again = EmbeddingCache(tmp_path / "full").encode(enc, sentences, progress=False)
    np.testing.assert_array_equal(again, ref)
