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
from sentprobe.errors import DataError

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
