"""Word-vector loading and the Bag-of-Vectors baseline."""

import gzip

import numpy as np
import pytest

from sentprobe.encoders.static import BoVEncoder, load_word_vectors
from sentprobe.errors import DataError, SentprobeError

VECS = "cat 1 0 0\ndog 0 2 0\nThe 0 0 3\nthe 1 1 1\nNew York 5 5 5\n"


@pytest.fixture
def vec_file(tmp_path):
    path = tmp_path / "small.txt"
    path.write_text(VECS)
    return path


def test_glove_package_known_values():
    wv = load_word_vectors("glove-6b-50d")
    assert wv.matrix.shape == (400000, 50) and wv.matrix.dtype == np.float32
    assert wv.index["the"] == 0
    np.testing.assert_allclose(wv.matrix[wv.index["the"], :3], [0.418, 0.24968, -0.41242])
    assert load_word_vectors("glove-6b-50d") is wv  # cached per process
    bov = BoVEncoder()
    assert bov.name == "BoV-GloVe"
    out = bov.encode(["The cat", "zzqqxx"])
    expected = (wv.matrix[wv.index["the"]] + wv.matrix[wv.index["cat"]]) / 2
    np.testing.assert_allclose(out[0], expected, rtol=1e-6)
    assert not out[1].any()


def test_text_file_mean_max_and_fallbacks(vec_file):
    bov = BoVEncoder(vec_file)
    out = bov.encode(["cat dog", "THE cat", "The", "unknown words only", "", "New York"])
    np.testing.assert_allclose(out[0], [0.5, 1, 0])
    np.testing.assert_allclose(out[1], [1, 0.5, 0.5])  # THE -> the (lower-case fallback)
    np.testing.assert_allclose(out[2], [0, 0, 3])  # exact form preferred
    assert not out[3].any() and not out[4].any()
    assert not out[5].any()  # a word with a space is never a token
    np.testing.assert_allclose(BoVEncoder(vec_file, pooling="max").encode(["cat dog"]), [[1, 2, 0]])
    assert load_word_vectors(vec_file).index["New York"] == 4


def test_header_and_gzip(tmp_path):
    path = tmp_path / "w2v.vec.gz"
    with gzip.open(path, "wt") as f:
        f.write("2 3\ncat 1 0 0\ndog 0 2 0\n")
    wv = load_word_vectors(path)
    assert wv.matrix.shape == (2, 3) and wv.index == {"cat": 0, "dog": 1}
    bad = tmp_path / "bad_header.vec"
    bad.write_text("3 3\ncat 1 0 0\n")
    with pytest.raises(DataError, match="header announces 3"):
        load_word_vectors(bad)


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("cat 1 0 0\ndog 1 x 0\n", 2, "non-number"),
        ("cat 1 0 0\ndog 1 0\n", 2, "expected 3 numbers"),
        ("cat\n", 1, "word followed by its vector"),
    ],
)
def test_malformed_files_name_the_line(tmp_path, text, line, problem):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(DataError, match=problem) as err:
        load_word_vectors(path)
    assert err.value.line == line and err.value.path == str(path)


def test_missing_file_and_bad_pooling(tmp_path, vec_file):
    with pytest.raises(SentprobeError, match="no such file"):
        load_word_vectors(tmp_path / "nope.txt")
    with pytest.raises(SentprobeError, match="pooling"):
        BoVEncoder(vec_file, pooling="sum")


def test_fingerprint_follows_content(tmp_path, vec_file):
    other = tmp_path / "other.txt"
    other.write_text(VECS.replace("cat 1", "cat 9"))
    assert BoVEncoder(vec_file).fingerprint != BoVEncoder(other).fingerprint
    assert BoVEncoder(vec_file).fingerprint != BoVEncoder(vec_file, pooling="max").fingerprint


def test_bov_encodes_a_large_batch_like_one_sentence():
    """The vectorised path (no timing here: speed belongs in benchmarks/) gives each sentence
    of a large mixed batch the vector it gets alone."""
    bov = BoVEncoder()
    sents = ["the cat sat on the mat with another cat .", "a dog ."] * 25_000
    out = bov.encode(sents)
    assert out.shape == (50_000, 50)
    np.testing.assert_allclose(out[-2:], np.vstack([bov.encode([s]) for s in sents[:2]]), rtol=1e-6)
