import time
import warnings
from collections.abc import Sequence

import numpy as np
import pytest

from sentprobe.encoders.base import Encoder
from sentprobe.encoders.cache import CacheWarning, EmbeddingCache
from sentprobe.errors import SentprobeError


def vector(sentence: str, dim: int) -> np.ndarray:
    """Deterministic vector of a sentence, so cached values can be checked exactly."""
    seed = int.from_bytes(sentence.encode()[:8].ljust(8, b"\0"), "little") + len(sentence)
    return np.random.default_rng(seed).standard_normal(dim).astype(np.float32)


class CountingEncoder(Encoder):
    """Records every sentence it encodes; optionally fails after ``fail_after`` batches."""

    name = "fake"

    def __init__(self, dim=8, views=None, batch_size=4, fail_after=None, fp="fake-v1"):
        self.dim, self._views, self.batch_size = dim, views, batch_size
        self.fail_after, self._fp = fail_after, fp
        self.encoded: list[str] = []
        self.batches: list[list[str]] = []
        self.prepared: list[list[str]] = []

    @property
    def fingerprint(self) -> str:
        return self._fp

    @property
    def views(self):
        return self._views

    def prepare(self, sentences: Sequence[str]) -> None:
        self.prepared.append(list(sentences))

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        if self.fail_after is not None and len(self.batches) >= self.fail_after:
            raise RuntimeError("simulated crash")
        self.batches.append(list(sentences))
        self.encoded.extend(sentences)
        rows = [vector(s, self.dim) for s in sentences]
        if self._views:
            return np.stack(
                [np.stack([r * (k + 1) for k in range(len(self._views))]) for r in rows]
            )
        return np.stack(rows)


SENTS = [f"sentence {'x' * (i % 7)} number {i}" for i in range(30)]


def expected(sentences, dim=8):
    return np.stack([vector(s, dim) for s in sentences])


def shards(tmp_path):
    return sorted(tmp_path.glob("*/*.shard"))


def test_miss_then_hit(tmp_path):
    cache, enc = EmbeddingCache(tmp_path), CountingEncoder()
    first = cache.encode(enc, SENTS, progress=False)
    assert cache.last_encoded == len(SENTS)
    np.testing.assert_array_equal(first, expected(SENTS))
    assert enc.prepared == [SENTS]

    second = cache.encode(enc, SENTS[::-1], progress=False)
    assert cache.last_encoded == 0 and len(enc.encoded) == len(SENTS)
    np.testing.assert_array_equal(second, expected(SENTS[::-1]))
    assert len(enc.prepared) == 1  # nothing missing: prepare not called again
    assert not list(tmp_path.rglob(".tmp-*"))


def test_duplicates_partial_hits_and_batching(tmp_path):
    cache, enc = EmbeddingCache(tmp_path), CountingEncoder(batch_size=4)
    cache.encode(enc, SENTS[:10], progress=False)
    request = SENTS[5:20] + SENTS[5:20]
    out = cache.encode(enc, request, progress="task X")
    assert cache.last_encoded == 10
    assert sorted(enc.encoded) == sorted(SENTS[:20])  # each sentence exactly once
    np.testing.assert_array_equal(out, expected(request))
    new_batches = enc.batches[3:]
    assert all(len(b) <= 4 for b in new_batches)
    flat = [s for b in new_batches for s in b]
    assert [len(s) for s in flat] == sorted(len(s) for s in flat)  # sorted by length


def test_persistence_across_instances(tmp_path):
    EmbeddingCache(tmp_path).encode(CountingEncoder(), SENTS, progress=False)
    enc = CountingEncoder()
    cache = EmbeddingCache(tmp_path)
    out = cache.encode(enc, SENTS, progress=False)
    assert enc.encoded == [] and cache.last_encoded == 0
    np.testing.assert_array_equal(out, expected(SENTS))
    # another fingerprint is a separate cache
    other = CountingEncoder(fp="fake-v2")
    cache.encode(other, SENTS[:3], progress=False)
    assert len(other.encoded) == 3
    infos = {i.fingerprint: i for i in cache.info()}
    assert infos["fake-v1"].sentences == 30 and infos["fake-v2"].sentences == 3
    assert infos["fake-v1"].dim == 8 and infos["fake-v1"].bytes > 30 * 8 * 4


def test_multi_view(tmp_path):
    views = ["layer0", "layer1", "layer2"]
    enc = CountingEncoder(dim=5, views=views)
    out = EmbeddingCache(tmp_path).encode(enc, SENTS[:6], progress=False)
    assert out.shape == (6, 3, 5)
    enc2 = CountingEncoder(dim=5, views=views)
    again = EmbeddingCache(tmp_path).encode(enc2, SENTS[:9], progress=False)
    assert again.shape == (9, 3, 5) and len(enc2.encoded) == 3
    np.testing.assert_array_equal(again[:6], out)
    np.testing.assert_array_equal(again[:, 2], 3 * expected(SENTS[:9], 5))
    assert EmbeddingCache(tmp_path).info()[0].views == views


def test_shards_written_during_long_run_and_crash_resume(tmp_path):
    cache = EmbeddingCache(tmp_path, shard_size=8)
    crashing = CountingEncoder(batch_size=4, fail_after=5)  # dies after 20 sentences
    with pytest.raises(SentprobeError, match="RuntimeError: simulated crash"):
        cache.encode(crashing, SENTS, progress=False)
    assert len(shards(tmp_path)) >= 2
    assert not list(tmp_path.rglob(".tmp-*"))

    enc = CountingEncoder(batch_size=4)
    out = EmbeddingCache(tmp_path, shard_size=8).encode(enc, SENTS, progress=False)
    assert set(enc.encoded).isdisjoint(crashing.encoded)
    assert len(enc.encoded) == len(SENTS) - len(crashing.encoded) == 10
    np.testing.assert_array_equal(out, expected(SENTS))


@pytest.mark.parametrize("damage", ["truncate", "flip_vector", "flip_key", "garbage"])
def test_damaged_shard_is_reported_and_recomputed(tmp_path, damage):
    EmbeddingCache(tmp_path, shard_size=10).encode(
        CountingEncoder(batch_size=5), SENTS, progress=False
    )
    victim = shards(tmp_path)[1]
    data = bytearray(victim.read_bytes())
    if damage == "truncate":
        data = data[:-7]
    elif damage == "flip_vector":
        data[-3] ^= 0xFF
    elif damage == "flip_key":
        data[data.index(b"}\n") + 5] ^= 0x01
    else:
        data = bytearray(b"not a shard at all")
    victim.write_bytes(bytes(data))

    enc = CountingEncoder()
    cache = EmbeddingCache(tmp_path)
    with pytest.warns(CacheWarning, match="damaged"):
        out = cache.encode(enc, SENTS, progress=False)
    assert len(enc.encoded) == 10  # exactly the damaged shard's sentences
    np.testing.assert_array_equal(out, expected(SENTS))
    assert not victim.exists()  # quarantined, so the warning is given once

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = CountingEncoder()
        EmbeddingCache(tmp_path).encode(again, SENTS, progress=False)
        assert again.encoded == []


def test_no_cache_mode_stores_nothing(tmp_path):
    cache, enc = EmbeddingCache(None), CountingEncoder()
    out = cache.encode(enc, SENTS + SENTS[:5], progress=False)
    np.testing.assert_array_equal(out, expected(SENTS + SENTS[:5]))
    assert len(enc.encoded) == len(SENTS)
    cache.encode(enc, SENTS, progress=False)
    assert cache.last_encoded == len(SENTS) and cache.info() == []


def test_clear(tmp_path):
    cache = EmbeddingCache(tmp_path)
    cache.encode(CountingEncoder(fp="a"), SENTS[:3], progress=False)
    cache.encode(CountingEncoder(fp="b"), SENTS[:3], progress=False)
    assert cache.clear("a") == 1
    assert [i.fingerprint for i in cache.info()] == ["b"]
    enc = CountingEncoder(fp="a")
    cache.encode(enc, SENTS[:3], progress=False)
    assert len(enc.encoded) == 3
    assert cache.clear() == 2 and cache.info() == []


def test_bad_encoder_output_and_changed_dim(tmp_path):
    class Broken(CountingEncoder):
        def encode(self, sentences):
            return np.zeros((len(sentences) + 1, 3), dtype=np.float32)

    with pytest.raises(SentprobeError, match="returned shape"):
        EmbeddingCache(tmp_path).encode(Broken(), SENTS[:2], progress=False)
    EmbeddingCache(tmp_path).encode(CountingEncoder(dim=8), SENTS[:2], progress=False)
    with pytest.raises(SentprobeError, match="fingerprint must change"):
        EmbeddingCache(tmp_path).encode(CountingEncoder(dim=4), SENTS[2:4], progress=False)


def test_corrupt_meta_is_a_clear_error(tmp_path):
    EmbeddingCache(tmp_path).encode(CountingEncoder(), SENTS[:2], progress=False)
    meta = next(tmp_path.glob("*/meta.json"))
    meta.write_text("{broken")
    with pytest.raises(SentprobeError, match="meta.json"):
        EmbeddingCache(tmp_path).encode(CountingEncoder(), SENTS[:2], progress=False)


WRITER = """
import sys, time
from pathlib import Path

import numpy as np

from sentprobe.encoders.base import Encoder
from sentprobe.encoders.cache import EmbeddingCache


class Slow(Encoder):
    name, batch_size = "fake", 4
    fingerprint = "fake-v1"

    def encode(self, batch):
        time.sleep(0.05)  # 1 s per process: long enough to overlap on a loaded machine
        return np.stack([np.full(8, float(s.rsplit(" ", 1)[1]), np.float32) for s in batch])


root, go, first, last = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
(go.parent / f"ready-{first}").touch()  # imports done: the start line is what is timed
while not go.exists():
    time.sleep(0.005)
start = time.time()
EmbeddingCache(root, shard_size=8).encode(Slow(), [f"s {i}" for i in range(first, last)],
                                          progress=False)
print(start, time.time())
"""


def test_two_processes_write_one_cache_at_once(tmp_path):
    """Two processes fill one cache at the same time (overlapping sentences, small shards, so
    their writes interleave): both succeed, every shard is valid, a reader encodes nothing."""
    import subprocess
    import sys

    script, go, root = tmp_path / "writer.py", tmp_path / "go", tmp_path / "cache"
    script.write_text(WRITER)
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(root), str(go), str(first), str(first + 80)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for first in (0, 40)
    ]
    deadline = time.time() + 120  # both started and waiting (imports take seconds under load)
    while len(list(tmp_path.glob("ready-*"))) < 2 and time.time() < deadline:
        time.sleep(0.01)
    go.touch()
    spans = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        spans.append(tuple(map(float, out.split())))
    assert max(s for s, _ in spans) < min(e for _, e in spans)  # they really overlapped
    assert len(shards(tmp_path / "cache")) > 10 and not list(root.rglob(".tmp-*"))  # both wrote
    enc = CountingEncoder()
    sentences = [f"s {i}" for i in range(120)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no shard is damaged
        out = EmbeddingCache(root).encode(enc, sentences, progress=False)
    assert enc.encoded == []
    np.testing.assert_array_equal(out[:, 0], np.arange(120, dtype=np.float32))


def test_flushes_by_time_as_well_as_by_count(tmp_path, monkeypatch):
    """With a 10 s interval and 4 s per batch of 4, a shard is written every third batch
    (12 sentences) long before the 1,000-sentence shard is full."""
    import sentprobe.encoders.cache as cache_mod

    clock = [0.0]

    class Slow(CountingEncoder):
        def encode(self, sentences):
            clock[0] += 4.0
            return super().encode(sentences)

    monkeypatch.setattr(cache_mod.time, "monotonic", lambda: clock[0])
    cache = EmbeddingCache(tmp_path, shard_size=1000, flush_seconds=10)
    cache.encode(Slow(batch_size=4), SENTS, progress=False)
    from sentprobe.encoders.shards import _read_header

    assert [_read_header(p)[0].n for p in shards(tmp_path)] == [12, 12, 6]


def test_flush_interval_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SENTPROBE_CACHE_FLUSH_SECONDS", "2.5")
    assert EmbeddingCache(tmp_path).flush_seconds == 2.5
    monkeypatch.setenv("SENTPROBE_CACHE_FLUSH_SECONDS", "soon")
    with pytest.raises(SentprobeError, match="SENTPROBE_CACHE_FLUSH_SECONDS"):
        EmbeddingCache(tmp_path)
    monkeypatch.delenv("SENTPROBE_CACHE_FLUSH_SECONDS")
    assert EmbeddingCache(tmp_path).flush_seconds == 30.0


def test_failed_cache_write_leaves_no_partial_file(tmp_path, monkeypatch):
    """A write that fails midway (disk full) is one SentprobeError naming the cache; the
    partial temp file is removed and the shards written before stay readable."""
    import errno
    import os

    cache = EmbeddingCache(tmp_path, shard_size=10)
    cache.encode(CountingEncoder(), SENTS[:10], progress=False)
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, data):
            self.f.write(data[:5])
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: Full(real_fdopen(fd, mode)))
    with pytest.raises(SentprobeError, match=r"cannot write the embedding cache \(No space"):
        EmbeddingCache(tmp_path, shard_size=10).encode(CountingEncoder(), SENTS, progress=False)
    monkeypatch.undo()
    assert not list(tmp_path.rglob(".tmp-*")) and len(shards(tmp_path)) == 1
    enc = CountingEncoder()
    EmbeddingCache(tmp_path).encode(enc, SENTS[:10], progress=False)
    assert enc.encoded == []


def test_encoder_exception_is_one_error_naming_it(tmp_path):
    with pytest.raises(SentprobeError, match=r"encoder 'fake' failed .*RuntimeError: simulated"):
        EmbeddingCache(tmp_path).encode(CountingEncoder(fail_after=0), SENTS, progress=False)

    class NaN(CountingEncoder):
        def encode(self, sentences):
            out = super().encode(sentences)
            out[1, 2] = np.inf
            return out

    with pytest.raises(SentprobeError, match="NaN or infinite values for 1 of 4"):
        EmbeddingCache(tmp_path).encode(NaN(), SENTS, progress=False)


def test_reading_many_cached_vectors_from_several_shards(tmp_path):
    n, dim = 20_000, 64
    sentences = [f"s{i}" for i in range(n)]

    class Fast(CountingEncoder):
        def encode(self, batch):
            return np.stack([np.full(dim, float(s[1:]), np.float32) for s in batch])

    writer = EmbeddingCache(tmp_path, shard_size=3_000)
    writer.encode(Fast(dim=dim, batch_size=1_000), sentences, progress=False)
    assert len(shards(tmp_path)) == 7
    reader = EmbeddingCache(tmp_path)
    out = reader.encode(Fast(dim=dim), sentences[::-1], progress=False)
    assert reader.last_encoded == 0 and out.shape == (n, dim)
    np.testing.assert_array_equal(out[:, 0], np.arange(n, dtype=np.float32)[::-1])
