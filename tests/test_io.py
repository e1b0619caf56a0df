"""sentprobe.io: content hashes that ignore compression, corrupt input as a DataError (a
one-line message), never a raw EOFError; the CSV reader of user-written tables."""

from __future__ import annotations

import gzip
import hashlib
import os
import stat

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


def test_csv_table_reads_what_a_spreadsheet_saves(tmp_path):
    """A byte-order mark, spaces and capitals in the header, CRLF, blank lines and a quoted
    value spanning lines: read as plain CSV, each row numbered by the line it starts on."""
    from sentprobe.io import read_csv_table

    path = tmp_path / "sheet.csv"
    path.write_bytes(
        b'\xef\xbb\xbf Encoder , task ,score \r\n\r\na , STS,0.5\r\n"b\nc",STS,0.6\r\nd,X,1\r\n'
    )
    rows = read_csv_table(path, ("encoder", "task", "score"))
    assert rows == [
        (3, {"encoder": "a", "task": "STS", "score": "0.5"}),
        (4, {"encoder": "b\nc", "task": "STS", "score": "0.6"}),
        (6, {"encoder": "d", "task": "X", "score": "1"}),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model,task\n", "t.csv, line 1: header lacks column(s) encoder; the header must name "
         "the columns encoder, task (found: model, task)"),
        ("\ufeffencoder,task,x\n", "t.csv, line 1: unknown column(s) x; the columns are "
         "encoder, task, note"),
        ("encoder,task\na,b\n\n'c,d,e\n", "t.csv, line 4: 3 fields, the header has 2"),
        ("# only a comment\n\n", "t.csv: empty file; expected a header naming the columns "
         "encoder, task"),
    ],
)  # fmt: skip
def test_csv_table_errors_name_file_and_line(tmp_path, text, message):
    from sentprobe.io import read_csv_table

    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_csv_table(path, ("encoder", "task"), ("note",), comments=True)
    assert str(err.value) == f"{path.parent}/{message}"


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_atomic_writes_follow_the_umask(tmp_path, mask):
    """A file or folder written atomically gets the permissions a plain ``open`` or
    ``mkdir`` would give it under the umask (it was 0644 / 0755 whatever the umask, so a
    private umask of 077 still left caches and suites readable by everyone)."""
    from sentprobe.io import atomic_dir, atomic_write_bytes

    old = os.umask(mask)
    try:
        written = atomic_write_bytes(tmp_path / "f", b"x")
        with atomic_dir(tmp_path / "d") as folder:
            (folder / "x").write_bytes(b"x")
        (tmp_path / "plain").write_bytes(b"x")
        (tmp_path / "plain-dir").mkdir()
    finally:
        os.umask(old)
    assert stat.S_IMODE(written.stat().st_mode) == stat.S_IMODE((tmp_path / "plain").stat().st_mode)
    assert stat.S_IMODE((tmp_path / "d").stat().st_mode) == stat.S_IMODE(
        (tmp_path / "plain-dir").stat().st_mode
    )
