"""An embedding cache from someone else cannot make sentprobe write or delete outside it: a
fingerprint folder that is a link elsewhere is refused in one line (nothing is written
through it, ``clear`` deletes nothing there), and a shard that links to another file is
quarantined by renaming the link, the file itself untouched (docs/security.md)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from sentprobe.encoders.cache import CacheWarning, EmbeddingCache
from sentprobe.encoders.custom import CallableEncoder
from sentprobe.encoders.shards import fingerprint_dirname
from sentprobe.errors import DataError, SentprobeError

SENTENCES = ["one sentence .", "another one ."]


def _encoder() -> CallableEncoder:
    return CallableEncoder(
        lambda s: np.ones((len(s), 4), dtype=np.float32), name="ones", fingerprint="ones-v1"
    )


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_fingerprint_folder_linking_out_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "meta.json").write_text('{"keep": true}', encoding="utf-8")
    before = _snapshot(elsewhere)
    root = tmp_path / "shared-cache"
    root.mkdir()
    (root / fingerprint_dirname("ones-v1")).symlink_to(elsewhere, target_is_directory=True)
    cache = EmbeddingCache(root)
    with pytest.raises(DataError, match="outside") as info:
        cache.encode(_encoder(), SENTENCES, progress=False)
    assert "\n" not in str(info.value)
    with pytest.raises(DataError, match="outside"):
        cache.clear("ones-v1")
    with pytest.raises(DataError, match="outside"):
        cache.clear()
    with pytest.raises(DataError, match="outside"):
        cache.info()
    assert _snapshot(elsewhere) == before


def test_shard_linking_out_is_never_written(tmp_path):
    root = tmp_path / "cache"
    EmbeddingCache(root).encode(_encoder(), SENTENCES, progress=False)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    folder = root / fingerprint_dirname("ones-v1")
    (folder / "00000000000000000000-evil.shard").symlink_to(victim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CacheWarning)
        vectors = EmbeddingCache(root).encode(_encoder(), [*SENTENCES, "new ."], progress=False)
    assert vectors.shape == (3, 4)
    assert victim.read_text(encoding="utf-8") == "keep me\n"
    assert (folder / "00000000000000000000-evil.shard.damaged").is_symlink()  # the link moved


def _planted(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A cache holding the vectors of SENTENCES; (its root, the encoder's folder)."""
    root = tmp_path / "cache"
    EmbeddingCache(root).encode(_encoder(), SENTENCES, progress=False)
    return root, root / fingerprint_dirname("ones-v1")


def test_a_shard_claiming_a_trillion_items_is_set_aside_as_damaged(tmp_path):
    """A header claiming 10^12 items made sentprobe read 16 TB of keys ("unexpected
    MemoryError ... this is a bug"): the sizes are checked against the file first, and the
    shard is quarantined like any damaged one; the vectors are encoded again, right."""
    root, folder = _planted(tmp_path, "ones")
    shard = next(folder.glob("*.shard"))
    data = shard.read_bytes()
    magic, header, rest = data.split(b"\n", 2)
    header = header.replace(b'"n": 2', b'"n": 1000000000000')
    shard.write_bytes(magic + b"\n" + header + b"\n" + rest)
    with pytest.warns(CacheWarning, match=r"damaged embedding cache shard \(truncated or padded"):
        vectors = EmbeddingCache(root).encode(_encoder(), SENTENCES, progress=False)
    assert np.asarray(vectors).tolist() == np.ones((2, 4)).tolist()
    assert shard.with_name(shard.name + ".damaged").is_file()


def test_a_fifo_named_like_a_shard_does_not_hang_the_run(tmp_path):
    """A FIFO named ``*.shard`` blocked ``run`` forever on its open: anything but a regular
    file is set aside (renamed) unopened."""
    import os

    root, folder = _planted(tmp_path, "ones")
    fifo = folder / "00000000000000000000-fifo.shard"
    os.mkfifo(fifo)
    with pytest.warns(CacheWarning, match="not a regular file"):
        EmbeddingCache(root).encode(_encoder(), SENTENCES, progress=False)
    assert not fifo.exists() and fifo.with_name(fifo.name + ".damaged").exists()


def test_a_planted_meta_json_cannot_change_the_vectors_type(tmp_path):
    """``"dtype": "int8"`` in a planted ``meta.json`` stored every new vector rounded to
    integers (45.0 against 42.5 with a clean cache): a non-float type is refused in one line
    naming the file, and a float type other than the encoder's is never converted to."""
    import json

    encoder = CallableEncoder(
        lambda s: np.full((len(s), 4), 0.4, dtype=np.float32), name="f", fingerprint="f-v1"
    )
    root = tmp_path / "cache"
    folder = root / fingerprint_dirname("f-v1")
    folder.mkdir(parents=True)
    meta = {"fingerprint": "f-v1", "width": 4, "dtype": "int8"}
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(DataError, match="not a float type") as info:
        EmbeddingCache(root).encode(encoder, SENTENCES, progress=False)
    assert "meta.json" in str(info.value) and "\n" not in str(info.value)
    assert not list(folder.glob("*.shard"))
    (folder / "meta.json").write_text(json.dumps({**meta, "dtype": "float16"}), encoding="utf-8")
    with pytest.raises(SentprobeError, match="holds float16 vectors, but the encoder returns"):
        EmbeddingCache(root).encode(encoder, SENTENCES, progress=False)
    assert not list(folder.glob("*.shard"))
