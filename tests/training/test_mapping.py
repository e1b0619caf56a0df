"""Word-vector mapping: Procrustes recovers a rotation, VecMap's normalisation, precision@k,
and the errors a user meets (dimension mismatch, a dictionary outside both vocabularies, a
malformed .vec line)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sentprobe.encoders.static import WordVectors
from sentprobe.errors import DataError, SentprobeError
from sentprobe.training.mapping import (
    ProcrustesMapper,
    map_words,
    normalize_embeddings,
    read_dictionary,
    read_vec,
    translation_precision,
    words_of,
    write_vec,
)


def rotation(dim: int, seed: int) -> np.ndarray:
    q, r = np.linalg.qr(np.random.default_rng(seed).normal(size=(dim, dim)))
    return q * np.sign(np.diag(r))


def test_procrustes_recovers_a_known_rotation() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 16))
    q = rotation(16, 1)
    mapper = ProcrustesMapper().fit(x, x @ q)
    np.testing.assert_allclose(mapper.W_, q, atol=1e-10)
    np.testing.assert_allclose(mapper.W_ @ mapper.W_.T, np.eye(16), atol=1e-10)
    noisy = ProcrustesMapper().fit(x, x @ q + 0.01 * rng.normal(size=x.shape))
    assert np.abs(noisy.W_ - q).max() < 0.01


def test_normalisation_is_vecmaps_unit_center_unit() -> None:
    m = np.array([[3.0, 4.0], [1.0, 0.0], [0.0, 2.0]])
    out = normalize_embeddings(m)
    unit = m / np.linalg.norm(m, axis=1, keepdims=True)
    centred = unit - unit.mean(axis=0)
    np.testing.assert_allclose(out, centred / np.linalg.norm(centred, axis=1, keepdims=True))
    with pytest.raises(SentprobeError, match="unknown normalisation"):
        normalize_embeddings(m, ["whiten"])


def synthetic(n: int = 300, dim: int = 12) -> tuple[WordVectors, WordVectors, list]:
    rng = np.random.default_rng(2)
    tgt = rng.normal(size=(n, dim))
    src = tgt @ rotation(dim, 3).T  # src @ q == tgt
    source = WordVectors(src.astype(np.float32), {f"s{i}": i for i in range(n)}, "src")
    target = WordVectors(tgt.astype(np.float32), {f"t{i}": i for i in range(n)}, "tgt")
    return source, target, [(f"s{i}", f"t{i}", i + 1) for i in range(n)]


def test_map_words_translates_held_out_words() -> None:
    source, target, pairs = synthetic()
    mapped, normalised, report = map_words(source, target, pairs, test_fraction=0.2, seed=0)
    assert report.test_words == 60 and report.train_pairs == 240
    assert report.precision == {1: 1.0, 5: 1.0}
    np.testing.assert_allclose(mapped.matrix, normalised.matrix, atol=1e-4)
    _, _, with_csls = map_words(source, target, pairs, csls=10)
    assert with_csls.precision[1] == 1.0 and with_csls.retrieval.startswith("CSLS")


def test_precision_at_k_counts_hits() -> None:
    target = np.eye(3)
    mapped = np.array([[1.0, 0.1, 0.0], [1.0, 0.9, 0.0]])  # row 1's nearest is 0, then 1
    got = translation_precision(mapped, target, {0: {0}, 1: {1}}, ks=(1, 2))
    assert got == {1: 0.5, 2: 1.0}


def test_bad_inputs(tmp_path: Path) -> None:
    source, target, pairs = synthetic()
    small = WordVectors(target.matrix[:, :5], target.index, "small")
    with pytest.raises(SentprobeError, match="dimension mismatch.*12.*5"):
        map_words(source, small, pairs)
    with pytest.raises(SentprobeError, match="none of its 1 pairs"):
        map_words(source, target, [("x", "y", 1)], dictionary_path="d.txt")
    bad = tmp_path / "bad.vec"
    bad.write_text("2 3\nhello 1 2 3\nworld 1 2\n", encoding="utf-8")
    with pytest.raises(DataError, match="expected 3 numbers, found 2") as info:
        read_vec(bad)
    assert info.value.line == 3
    bad.write_text("hello 1 2 x\n", encoding="utf-8")
    with pytest.raises(DataError, match="non-number"):
        read_vec(bad)
    d = tmp_path / "d.txt"
    d.write_text("a b\nc d e\n", encoding="utf-8")
    with pytest.raises(DataError, match="3 fields") as info:
        read_dictionary(d)
    assert info.value.line == 2


def test_vec_round_trip(tmp_path: Path) -> None:
    matrix = np.array([[0.5, -1.0], [2.0, 0.25]], dtype=np.float32)
    path = write_vec(tmp_path / "out.vec", WordVectors(matrix, {"le": 0, "chat": 1}, "x"))
    assert path.read_text(encoding="utf-8").splitlines()[0] == "2 2"
    back = read_vec(path)
    assert words_of(back) == ["le", "chat"]
    np.testing.assert_allclose(back.matrix, matrix)
    glove = tmp_path / "glove.txt"  # no header, a repeated word keeps its first vector
    glove.write_text("a 1 0\nb 0 1\na 5 5\n", encoding="utf-8")
    assert words_of(read_vec(glove)) == ["a", "b"]
    assert words_of(read_vec(glove, max_words=1)) == ["a"]
