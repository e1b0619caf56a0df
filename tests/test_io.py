"""sentprobe.io.file_sha256: content hashes that ignore compression, and corrupt input as a
DataError (a one-line message), never a raw EOFError."""

from __future__ import annotations

import gzip
import hashlib

import pytest

from sentprobe.errors import DataError
from sentprobe.io import file_sha256


def test_content_hash_ignores_compression_and_raw_hash_does_not(tmp_path):
    text = b"one sentence .\nanother one .\n" * 1000
    plain, packed = tmp_path / "c.txt", tmp_path / "c.txt.gz"
    plain.write_bytes(text)
    packed.write_bytes(gzip.compress(text))
    assert file_sha256(plain) == file_sha256(packed) == hashlib.sha256(text).hexdigest()
    assert file_sha256(packed, decompress=False) == hashlib.sha256(packed.read_bytes()).hexdigest()


def test_truncated_gzip_is_a_data_error_naming_the_file(tmp_path):
    path = tmp_path / "c.txt.gz"
    path.write_bytes(gzip.compress(b"words and more words\n" * 5000)[:200])
    with pytest.raises(DataError, match="corrupt compressed data") as info:
        file_sha256(path)
    assert str(path) in str(info.value)
