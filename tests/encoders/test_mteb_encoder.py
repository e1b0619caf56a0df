"""``-e mteb:NAME``: a model of MTEB's registry probed through MTEB's own ``encode``, its
fingerprint from MTEB's metadata; offline with the shipped MiniLM as local weights."""

from __future__ import annotations

import numpy as np
import pytest

from sentprobe.encoders import get_encoder
from sentprobe.encoders.sbert import minilm_path
from sentprobe.errors import SentprobeError

mteb = pytest.importorskip("mteb", minversion="2.26")  # the version these were run with
NAME = "sentence-transformers/all-MiniLM-L6-v2"


def test_mteb_minilm_encodes_like_the_shipped_minilm_with_mtebs_name_and_revision():
    enc = get_encoder(f"mteb:{NAME}@{minilm_path()}")
    meta = mteb.get_model_meta(NAME)
    assert enc.fingerprint.startswith(f"mteb|{NAME}@{meta.revision}|weights=")
    assert enc.name == "all-MiniLM-L6-v2"
    sentences = ["The cat sat on the mat .", "Probing tasks are classification problems ."]
    ours = get_encoder("minilm").encode(sentences)
    theirs = enc.encode(sentences)
    assert theirs.shape == (2, 384) and theirs.dtype == np.float32
    np.testing.assert_allclose(theirs, ours, atol=1e-5)


def test_at_minilm_names_the_shipped_weights():
    enc = get_encoder(f"mteb:{NAME}@minilm")
    assert enc.path == minilm_path()
    assert enc.fingerprint == get_encoder(f"mteb:{NAME}@{minilm_path()}").fingerprint


def test_an_unknown_mteb_model_is_one_line():
    with pytest.raises(SentprobeError, match="mteb:no-such/model-xyz") as err:
        get_encoder("mteb:no-such/model-xyz@/nonexistent/dir")
    assert "\n" not in str(err.value)


def test_offline_without_local_weights_says_how_to_give_them(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf-home"))  # nothing cached
    encoder = get_encoder(f"mteb:{NAME}")
    with pytest.raises(SentprobeError) as err:
        encoder.encode(["a sentence ."])
    message = str(err.value)
    assert "\n" not in message and "offline" in message
    assert f"-e mteb:{NAME}@DIR" in message and "@minilm" in message
