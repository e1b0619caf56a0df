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


def test_two_writers_share_a_cache(tmp_path):
    a, b = EmbeddingCache(tmp_path), EmbeddingCache(tmp_path)
    a.encode(CountingEncoder(), SENTS[:10], progress=False)
    b.encode(CountingEncoder(), SENTS[5:15], progress=False)  # overlaps: stored twice
    enc = CountingEncoder()
    out = a.encode(enc, SENTS[:15], progress=False)  # a sees b's new shard
    assert enc.encoded == []
    np.testing.assert_array_equal(out, expected(SENTS[:15]))


def test_reading_100k_cached_vectors_is_fast(tmp_path):
    n, dim = 100_000, 384
    sentences = [f"s{i}" for i in range(n)]

    class Fast(CountingEncoder):
        def encode(self, batch):
            return np.ones((len(batch), dim), dtype=np.float32)

    writer = EmbeddingCache(tmp_path, shard_size=20_000)
    writer.encode(Fast(dim=dim, batch_size=10_000), sentences, progress=False)
    reader = EmbeddingCache(tmp_path)
    start = time.perf_counter()
    out = reader.encode(Fast(dim=dim), sentences, progress=False)
    elapsed = time.perf_counter() - start
    assert reader.last_encoded == 0 and out.shape == (n, dim)
    assert elapsed < 1.5, f"reading took {elapsed:.2f}s"
