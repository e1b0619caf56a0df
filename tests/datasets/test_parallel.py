"""Parallel corpus readers: pairs come out aligned, misalignment is an error naming the line."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from sentprobe.datasets.parallel import (
    ParallelFiles,
    read_conllu_pair,
    read_moses_pair,
    read_parallel,
    read_parallel_spec,
    read_tsv_pairs,
)
from sentprobe.errors import DataError, SentprobeError


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_tsv_pairs(tmp_path: Path) -> None:
    f = write(tmp_path / "p.tsv", "The cat sleeps.\tLe chat dort.\nA dog.\tUn chien.\n")
    corpus = read_tsv_pairs(f)
    assert list(corpus.pairs()) == [("The cat sleeps.", "Le chat dort."), ("A dog.", "Un chien.")]
    assert corpus.origin == [f"{f}:1", f"{f}:2"]


def test_tsv_gzip(tmp_path: Path) -> None:
    f = tmp_path / "p.tsv.gz"
    f.write_bytes(gzip.compress(b"One.\tUn.\n"))
    assert list(read_parallel([f]).pairs()) == [("One.", "Un.")]


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("a\tb\nno tab here\n", 2, "no tab"),
        ("a\tb\n\tb\n", 2, "empty source side"),
        ("a\tb\na\t \n", 2, "empty target side"),
        ("a\tb\na\tb\tc\n", 2, "2 tabs"),
        ("a\tb\n\nc\td\n", 2, "empty line"),
    ],
)
def test_tsv_rejects_misaligned_lines(tmp_path: Path, text: str, line: int, problem: str) -> None:
    f = write(tmp_path / "bad.tsv", text)
    with pytest.raises(DataError, match=problem) as info:
        read_tsv_pairs(f)
    assert info.value.line == line and info.value.path == str(f)


def test_moses_pair(tmp_path: Path) -> None:
    en = write(tmp_path / "c.en", "Hello.\n\nBye.\n")
    fr = write(tmp_path / "c.fr", "Bonjour.\n\nAu revoir.\n")
    corpus = read_parallel([en, fr])
    assert list(corpus.pairs()) == [("Hello.", "Bonjour."), ("Bye.", "Au revoir.")]
    assert corpus.skipped == {"empty on both sides": 1}


def test_moses_different_line_counts(tmp_path: Path) -> None:
    en = write(tmp_path / "c.en", "One.\nTwo.\nThree.\n")
    fr = write(tmp_path / "c.fr", "Un.\nDeux.\n")
    with pytest.raises(DataError, match="more lines than") as info:
        read_moses_pair(en, fr)
    assert info.value.path == str(en) and info.value.line == 3


def test_moses_empty_on_one_side(tmp_path: Path) -> None:
    en = write(tmp_path / "c.en", "One.\nTwo.\n")
    fr = write(tmp_path / "c.fr", "Un.\n\n")
    with pytest.raises(DataError, match=r"empty line, but line 2 of .*c\.en is not") as info:
        read_moses_pair(en, fr)
    assert info.value.path == str(fr) and info.value.line == 2


CONLLU_EN = """# sent_id = s1
# text = The cat sleeps.
1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_

# sent_id = s2
# text = Dogs bark.
1\tDogs\tdog\tNOUN\t_\t_\t0\troot\t_\t_

# sent_id = s3
# text = Only in English.
1\tOnly\tonly\tADV\t_\t_\t0\troot\t_\t_
"""

CONLLU_FR = """# sent_id = s2
# text = Les chiens aboient.
1\tLes\tle\tDET\t_\t_\t0\troot\t_\t_

# sent_id = s1
# text = Le chat dort.
1\tLe\tle\tDET\t_\t_\t0\troot\t_\t_
"""


def test_conllu_pair_aligns_by_sent_id(tmp_path: Path) -> None:
    en = write(tmp_path / "en_x-ud-test.conllu", CONLLU_EN)
    fr = write(tmp_path / "fr_x-ud-test.conllu", CONLLU_FR)
    corpus = read_parallel_spec([f"{en},{fr}"])
    assert list(corpus.pairs()) == [
        ("The cat sleeps.", "Le chat dort."),
        ("Dogs bark.", "Les chiens aboient."),
    ]
    assert corpus.origin == ["s1", "s2"]
    assert corpus.skipped == {f"only in {en}": 1}


def test_conllu_without_sent_id_or_shared_ids(tmp_path: Path) -> None:
    bad = write(tmp_path / "a.conllu", "# text = No id.\n1\tNo\tno\tX\t_\t_\t0\troot\t_\t_\n")
    with pytest.raises(DataError, match="without a '# sent_id") as info:
        read_conllu_pair(bad, bad)
    assert info.value.line == 1
    other = write(tmp_path / "b.conllu", CONLLU_FR.replace("s1", "t1").replace("s2", "t2"))
    en = write(tmp_path / "en.conllu", CONLLU_EN)
    with pytest.raises(SentprobeError, match="share no sent_id"):
        read_conllu_pair(en, other)
    with pytest.raises(SentprobeError, match="CoNLL-U file with another"):
        read_parallel([en, write(tmp_path / "x.fr", "Un.\n")])


def test_pud_treebanks_align(shared_data: Path) -> None:
    pud = shared_data / "ud" / "pud"
    corpus = read_conllu_pair(pud / "en_pud-ud-test.conllu.gz", pud / "fr_pud-ud-test.conllu.gz")
    assert len(corpus) == 1000 and not corpus.skipped
    pairs = dict(zip(corpus.origin, corpus.pairs()))
    # the French treebank carries the English text of each sentence: the pairing must agree
    en_text, fr_text = pairs["n01001011"]
    assert en_text.startswith("“While much of the digital transition")
    assert fr_text.startswith("« Alors que la plus grande partie")


def test_parallel_files_check_once_and_stream_every_pass(tmp_path: Path) -> None:
    """``ParallelFiles`` (what ``map-encoder`` reads): errors, the count and what was skipped
    come from one pass when it is created; ``pairs()`` reads the files again, lazily, giving
    what ``read_parallel_spec`` holds in memory."""
    en = write(tmp_path / "c.en", "One.\n\nTwo.\n")
    fr = write(tmp_path / "c.fr", "Un.\n\nDeux.\n")
    tsv = write(tmp_path / "p.tsv", "Three.\tTrois.\n")
    specs = [f"{en},{fr}", str(tsv)]
    files = ParallelFiles(specs)
    assert len(files) == 3 and files.skipped == {"empty on both sides": 1}
    assert list(files.pairs()) == list(read_parallel_spec(specs).pairs())
    write(tmp_path / "p.tsv", "Four.\tQuatre.\n")  # read from disk on every pass
    assert list(files.pairs())[-1] == ("Four.", "Quatre.")
    with pytest.raises(DataError, match="no tab") as info:
        ParallelFiles([str(write(tmp_path / "bad.tsv", "a\tb\nc d\n"))])
    assert info.value.line == 2
