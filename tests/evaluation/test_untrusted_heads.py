"""Trained NLI heads kept in the embedding cache are pickles: one planted in a shared cache
(unsigned, or signed with another user's key) is never unpickled, so its payload never
runs; the head is trained again and stored signed with this user's key (docs/security.md)."""

from __future__ import annotations

import hashlib
import hmac
import pickle
from pathlib import Path

import pytest

from sentprobe.evaluation import folds
from sentprobe.evaluation.folds import KEY_FILE_ENV, HeadCache


class _Payload:
    """Unpickling this calls ``open(marker, "w")``: the file appears if the payload runs."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


@pytest.fixture
def key_file(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "config" / "key"
    monkeypatch.setenv(KEY_FILE_ENV, str(path))
    return path


@pytest.mark.parametrize("signed_by", [None, b"someone else's key".ljust(32, b".")])
def test_planted_head_never_runs(tmp_path, key_file, signed_by):
    heads = tmp_path / "cache" / "nli-heads"
    heads.mkdir(parents=True)
    marker = tmp_path / "payload-ran"
    body = pickle.dumps(_Payload(marker))
    # unsigned: junk where the tag goes, then a whole pickle, so that only the HMAC check
    # (not a pickle cut short) stands between the file and its payload
    tag = hmac.new(signed_by, body, hashlib.sha256).digest() if signed_by else b"\0" * 32
    (heads / "k.pkl").write_bytes(tag + body)
    trained = []
    head, cached = HeadCache(heads).get("k", lambda: trained.append(1) or {"head": 1})
    assert not marker.exists() and not cached and trained == [1] and head == {"head": 1}
    # rewritten, signed with this user's key: the next process reads it back
    head, cached = HeadCache(heads).get("k", lambda: trained.append(1))
    assert cached and head == {"head": 1} and trained == [1]
    assert key_file.stat().st_mode & 0o077 == 0  # the key is the user's alone


def test_without_a_key_heads_stay_in_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(folds, "signing_key", lambda: None)
    heads = tmp_path / "nli-heads"
    cache = HeadCache(heads)
    assert cache.get("k", lambda: 1) == (1, False) and cache.get("k", lambda: 2) == (1, True)
    assert not heads.exists()
