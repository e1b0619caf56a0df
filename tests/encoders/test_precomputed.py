"""PrecomputedEncoder: matrix files + sentence files, lookups and mismatch errors."""

import numpy as np
import pytest
from safetensors.numpy import save_file

from sentprobe.encoders.precomputed import PrecomputedEncoder
from sentprobe.errors import DataError, SentprobeError

SENTS = ["The cat sat .", "A dog  barked .", "Hello"]
MATRIX = np.arange(9, dtype=np.float64).reshape(3, 3)


@pytest.fixture
def sent_file(tmp_path):
    path = tmp_path / "sents.txt"
    path.write_text("\n".join(SENTS) + "\n")
    return path


def write(tmp_path, kind, **arrays):
    path = tmp_path / f"emb.{kind}"
    if kind == "npy":
        np.save(path, next(iter(arrays.values())))
    elif kind == "npz":
        np.savez(path, **arrays)
    else:
        save_file({k: v.astype(np.float32) for k, v in arrays.items()}, str(path))
    return path


@pytest.mark.parametrize("kind", ["npy", "npz", "safetensors"])
def test_lookup_exact_and_normalised(tmp_path, sent_file, kind):
    enc = PrecomputedEncoder(write(tmp_path, kind, emb=MATRIX), sent_file)
    out = enc.encode(["Hello", "A dog barked .", "  The cat   sat ."])
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, MATRIX[[2, 1, 0]])
    assert enc.name == "emb"


@pytest.mark.parametrize("kind", ["npz", "safetensors"])
def test_key_selects_among_several_arrays(tmp_path, sent_file, kind):
    path = write(tmp_path, kind, a=MATRIX, b=MATRIX * 2)
    with pytest.raises(DataError, match="holds 2 arrays"):
        PrecomputedEncoder(path, sent_file)
    with pytest.raises(DataError, match="no array 'c'"):
        PrecomputedEncoder(path, sent_file, key="c")
    enc = PrecomputedEncoder(path, sent_file, key="b")
    np.testing.assert_array_equal(enc.encode(["Hello"]), [MATRIX[2] * 2])


def test_row_count_mismatch_names_both_files(tmp_path, sent_file):
    path = write(tmp_path, "npy", emb=MATRIX[:2])
    with pytest.raises(DataError, match=r"has 2 rows but .*sents.txt has 3 sentences") as err:
        PrecomputedEncoder(path, sent_file)
    assert err.value.path == str(path)


def test_missing_sentences_are_counted_with_examples(tmp_path, sent_file):
    enc = PrecomputedEncoder(write(tmp_path, "npy", emb=MATRIX), sent_file)
    with pytest.raises(SentprobeError, match=r"2 of 3 sentences are not in .*'Unknown one'"):
        enc.encode(["Hello", "Unknown one", "Unknown two"])


def test_bad_matrices(tmp_path, sent_file):
    with pytest.raises(DataError, match="2-d"):
        PrecomputedEncoder(write(tmp_path, "npy", emb=np.zeros(3)), sent_file)
    bad = MATRIX.copy()
    bad[1, 1] = np.nan
    with pytest.raises(DataError, match="line 2"):
        PrecomputedEncoder(write(tmp_path, "npy", emb=bad), sent_file)
    txt = tmp_path / "emb.csv"
    txt.write_text("1,2")
    with pytest.raises(DataError, match="unknown matrix format"):
        PrecomputedEncoder(txt, sent_file)
    with pytest.raises(SentprobeError, match="no such file"):
        PrecomputedEncoder(tmp_path / "none.npy", sent_file)


def test_fingerprint_hashes_both_files(tmp_path, sent_file):
    path = write(tmp_path, "npy", emb=MATRIX)
    first = PrecomputedEncoder(path, sent_file).fingerprint
    assert PrecomputedEncoder(path, sent_file).fingerprint == first
    sent_file.write_text("\n".join(SENTS[::-1]) + "\n")
    assert PrecomputedEncoder(path, sent_file).fingerprint != first
