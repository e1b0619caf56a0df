"""Untrained BiLSTM / Gated ConvNet encoders over small test word vectors."""

import numpy as np
import pytest

from sentprobe.encoders.untrained import BiLSTMEncoder, GatedConvEncoder
from sentprobe.errors import SentprobeError

WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "on",
    "mat",
    "big",
    "small",
    "red",
    "runs",
    "quickly",
    "over",
    "under",
    "and",
    ".",
]
SENTS = [
    "the big red cat sat on the small mat and the dog runs quickly over it .",
    "a cat .",
    "the dog sat under a mat .",
]


@pytest.fixture(scope="module")
def vec_file(tmp_path_factory):
    rng = np.random.default_rng(0)
    path = tmp_path_factory.mktemp("vecs") / "tiny.txt"
    lines = [w + " " + " ".join(f"{x:.4f}" for x in rng.normal(size=16)) for w in WORDS]
    path.write_text("\n".join(lines) + "\n")
    return path


def make(kind, vec_file, seed=1):
    if kind == "gatedconv":
        return GatedConvEncoder(vectors=vec_file, seed=seed)
    return BiLSTMEncoder(pooling=kind, vectors=vec_file, seed=seed)


@pytest.mark.parametrize(
    ("kind", "dim", "name"),
    [
        ("last", 1024, "BiLSTM-last (untrained)"),
        ("max", 1024, "BiLSTM-max (untrained)"),
        ("gatedconv", 512, "GatedConvNet (untrained)"),
    ],
)
def test_dims_names_and_seed_determinism(vec_file, kind, dim, name):
    a, b, c = make(kind, vec_file, 1), make(kind, vec_file, 1), make(kind, vec_file, 2)
    out = a.encode(SENTS)
    assert a.name == name
    assert out.shape == (3, dim) and out.dtype == np.float32
    np.testing.assert_array_equal(out, b.encode(SENTS))
    assert not np.allclose(out, c.encode(SENTS))
    assert a.fingerprint == b.fingerprint != c.fingerprint
    assert not np.allclose(out[0], out[1])


@pytest.mark.parametrize("kind", ["last", "max", "gatedconv"])
def test_padding_never_leaks_and_order_is_restored(vec_file, kind):
    enc = make(kind, vec_file)
    batched = enc.encode(SENTS)  # sorted by length inside, padded to the longest
    alone = np.stack([enc.encode([s])[0] for s in SENTS])
    np.testing.assert_allclose(batched, alone, atol=1e-5)


def test_word_order_matters_and_unknown_words_give_zeros(vec_file):
    for kind in ("last", "max", "gatedconv"):
        enc = make(kind, vec_file)
        out = enc.encode(["the cat sat", "sat cat the", "xyzzy plugh", ""])
        assert not np.allclose(out[0], out[1])
        assert not out[2].any() and not out[3].any()


def test_pooling_and_fingerprint_contents(vec_file):
    with pytest.raises(SentprobeError, match="pooling"):
        BiLSTMEncoder(pooling="mean", vectors=vec_file)
    fp = make("max", vec_file, seed=7).fingerprint
    assert "seed=7" in fp and "2x512" in fp and "tiny.txt" in fp


def test_default_glove_runs():
    out = GatedConvEncoder().encode(["the cat sat on the mat ."])
    assert out.shape == (1, 512) and np.isfinite(out).all()
