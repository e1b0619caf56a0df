"""``EmbeddingCache.vectors``: the runner's view-at-a-time, memory-mapped access to the cache."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_cache import SENTS, CountingEncoder, expected

from sentprobe.encoders.cache import ArrayVectors, CacheWarning, EmbeddingCache, ShardVectors
from sentprobe.encoders.shards import EncoderDir, _read_header


def test_vectors_equal_encode_view_by_view(tmp_path) -> None:
    enc = CountingEncoder(views=["a", "b", "c"])
    cache = EmbeddingCache(tmp_path, shard_size=7)  # several shards
    requested = SENTS + SENTS[:5]  # duplicates map to the same stored row
    vectors = cache.vectors(enc, requested, progress=False)
    assert isinstance(vectors, ShardVectors)
    assert cache.last_encoded == len(SENTS)
    full = EmbeddingCache(None).encode(CountingEncoder(views=["a", "b", "c"]), requested)
    rows = np.array([34, 0, 3, 31, 12])
    for v in range(3):
        np.testing.assert_array_equal(vectors.take(rows, v), full[rows, v])
        np.testing.assert_array_equal(vectors.take(rows, v), expected(requested)[rows] * (v + 1))
    again = cache.vectors(enc, requested, progress=False)
    assert cache.last_encoded == 0 and len(enc.encoded) == len(SENTS)  # nothing encoded twice
    np.testing.assert_array_equal(again.take(rows, 2), full[rows, 2])


def test_vectors_of_a_single_view_encoder_and_without_a_cache(tmp_path) -> None:
    rows = np.arange(len(SENTS))[::-1]
    cached = EmbeddingCache(tmp_path).vectors(CountingEncoder(), SENTS, progress=False)
    memory = EmbeddingCache(None).vectors(CountingEncoder(), SENTS, progress=False)
    assert isinstance(memory, ArrayVectors)
    np.testing.assert_array_equal(cached.take(rows), expected(SENTS)[rows])
    np.testing.assert_array_equal(memory.take(rows), expected(SENTS)[rows])


def test_vectors_hold_at_most_one_shard_of_new_vectors(tmp_path, monkeypatch) -> None:
    """Encoding for ``vectors`` never builds the full matrix: every write is one shard."""
    written: list[int] = []
    original = EncoderDir.write

    def spy(self, keys, vectors, meta):
        written.append(len(vectors))
        return original(self, keys, vectors, meta)

    monkeypatch.setattr(EncoderDir, "write", spy)
    cache = EmbeddingCache(tmp_path, shard_size=8)
    cache.vectors(CountingEncoder(batch_size=4, views=["a", "b"]), SENTS, progress=False)
    assert sum(written) == len(SENTS) and max(written) <= 8


def test_a_damaged_shard_found_when_mapped_is_encoded_again(tmp_path) -> None:
    enc = CountingEncoder()
    EmbeddingCache(tmp_path, shard_size=10).vectors(enc, SENTS, progress=False)
    shard = sorted(tmp_path.glob("*/*.shard"))[1]
    n_damaged = _read_header(shard)[0].n
    data = bytearray(shard.read_bytes())
    data[-3] ^= 0xFF  # a vector byte: only the vector checksum can see it
    shard.write_bytes(bytes(data))
    cache = EmbeddingCache(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vectors = cache.vectors(enc, SENTS, progress=False)
    assert any(issubclass(w.category, CacheWarning) for w in caught)
    assert cache.last_encoded == n_damaged  # the damaged shard's sentences, nothing else
    rows = np.arange(len(SENTS))
    np.testing.assert_array_equal(vectors.take(rows), expected(SENTS))


def test_vectors_of_nothing(tmp_path) -> None:
    vectors = EmbeddingCache(tmp_path).vectors(CountingEncoder(), [], progress=False)
    assert vectors.take(np.zeros(0, dtype=np.int64)).shape[0] == 0


@pytest.mark.parametrize("view", [0, 1])
def test_take_reads_only_the_view_asked_for(tmp_path, monkeypatch, view) -> None:
    seen: list[slice] = []
    original = EncoderDir.gather

    def spy(self, codes, columns):
        seen.append(columns)
        return original(self, codes, columns)

    monkeypatch.setattr(EncoderDir, "gather", spy)
    vectors = EmbeddingCache(tmp_path).vectors(
        CountingEncoder(dim=8, views=["a", "b"]), SENTS, progress=False
    )
    assert vectors.take(np.arange(3), view).shape == (3, 8)
    assert seen == [slice(8 * view, 8 * view + 8)]
