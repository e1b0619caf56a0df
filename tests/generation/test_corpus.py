import bz2
import gzip
import lzma

import pytest

from sentprobe.errors import DataError
from sentprobe.generation.corpus import (
    MosesPreprocessor,
    SentenceSplitter,
    read_sentences,
)
from sentprobe.io import open_text

TEXT = "First line here.\nSecond line, with more words.\n\nThird one.\n"


@pytest.mark.parametrize(
    "opener,suffix", [(open, ".txt"), (gzip.open, ".gz"), (bz2.open, ".bz2"), (lzma.open, ".xz")]
)
def test_open_text_decompresses_transparently(tmp_path, opener, suffix):
    path = tmp_path / f"corpus{suffix}"
    with opener(path, "wt", encoding="utf-8") as f:
        f.write(TEXT)
    with open_text(path) as f:
        assert f.read() == TEXT
    assert list(read_sentences(path)) == [
        "First line here.",
        "Second line, with more words.",
        "Third one.",
    ]


def test_running_text_is_split_into_sentences(tmp_path):
    path = tmp_path / "running.txt"
    path.write_text(
        "Dr. Smith met Mr. Jones in the U.S. Army. They talked, e.g. about\n"
        "the weather. Did it rain? No. 5 was late!\n\nA new paragraph starts here.\n"
    )
    assert list(read_sentences(path, "running")) == [
        "Dr. Smith met Mr. Jones in the U.S. Army.",
        "They talked, e.g. about the weather.",
        "Did it rain?",
        "No. 5 was late!",
        "A new paragraph starts here.",
    ]


def test_splitter_keeps_closing_quotes_with_their_sentence():
    parts = SentenceSplitter().split('He said "stop." Then he left.')
    assert parts == ['He said "stop."', "Then he left."]


def test_undecodable_file_names_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine line\nalso fine\n\xff\xfe broken\n")
    with pytest.raises(DataError) as err:
        list(read_sentences(path))
    assert err.value.path == str(path) and err.value.line == 3
    assert "UTF-8" in str(err.value)


def test_corrupt_gzip_is_a_data_error(tmp_path):
    path = tmp_path / "bad.gz"
    path.write_bytes(gzip.compress(TEXT.encode())[:-12] + b"garbage")
    with pytest.raises(DataError, match="corrupt compressed data"):
        list(read_sentences(path))


def test_missing_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="cannot read file: No such file"):
        list(read_sentences(tmp_path / "nope.txt"))


def test_preprocessor_tokenizes_like_moses_filters_length_and_repeats():
    prep = MosesPreprocessor()
    raw = [
        "It doesn't matter, \u201creally\u201d.",  # 9 tokens after normalisation
        "Too short.",
        "It doesn't matter, \u201creally\u201d.",  # repeat
        " ".join(["word"] * 29) + ".",  # 30 tokens
    ]
    out = list(prep(raw))
    # MosesPunctNormalizer(en) moves the full stop inside the closing quote.
    assert out == [("It", "doesn", "'t", "matter", ",", '"', "really", ".", '"')]
    assert prep.stats["kept"] == 1
    assert prep.stats["rejected: duplicate"] == 1
    assert prep.stats["rejected: not 5-28 tokens"] == 2
