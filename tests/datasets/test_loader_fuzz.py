"""Fuzz the loaders: no input makes one raise anything but sentprobe's own error type.

Inputs are random bytes and random line mutations of valid files (a tab too many or too few,
a split or label garbled, invalid UTF-8, a BOM, CRLF, a line dropped or repeated, the file
cut short, gzip whole or cut short), fed to the SentEval, X-Probe, TSV/JSONL table,
directory/manifest and ``sentprobe label`` readers. Hypothesis runs derandomized (the same
cases every run, so it cannot be flaky) and 2,500 cases take a few seconds.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sentprobe.cli.label import read_label_input
from sentprobe.datasets.loaders import (
    load_senteval_file,
    load_table,
    load_tasks,
    load_xprobe_task,
)
from sentprobe.errors import SentprobeError

SETTINGS = settings(
    max_examples=500,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)

SENTEVAL = [f"{sp}\t{lab}\tsentence {i} of {sp}" for sp in ("tr", "va", "te") for i, lab in
            enumerate("abab")]  # fmt: skip
XPROBE = [f"sentence {i}\t{lab}" for i, lab in enumerate("abab")]
TSV = ["sentence\tlabel\tsplit", *(f"s {i}\t{'ab'[i % 2]}\t{sp}" for i, sp in
       enumerate(["train"] * 4 + ["test"] * 2))]  # fmt: skip
JSONL = [json.dumps({"sentence": f"s {i}", "label": "ab"[i % 2], "split": sp})
         for i, sp in enumerate(["tr"] * 4 + ["te"] * 2)]  # fmt: skip

#: Pieces a mutation inserts: separators, split and label words, JSON syntax, bad bytes.
PIECES = [b"\t", b"\t\t", b"\n", b"\r\n", b"\r", b" ", b"", b"tr", b"va", b"te", b"xx", b"a",
          b"b", b"{", b"}", b'"', b":", b"[1]", b"null", b"\xff", b"\xc3", b"\xef\xbb\xbf",
          b"\x00", b"\x1f\x8b", "é".encode(), b"sentence", b"label", b"split"]  # fmt: skip
MUTATION = st.tuples(
    st.sampled_from(["insert", "delete_line", "repeat_line", "replace_line", "cut_char"]),
    st.integers(0, 30),
    st.integers(0, 40),
    st.one_of(st.sampled_from(PIECES), st.binary(max_size=6)),
)


@st.composite
def file_bytes(draw, lines: list[str]) -> bytes:
    """A valid file's lines, mutated, then maybe cut short, gzipped or both."""
    rows = [line.encode() for line in lines]
    for kind, i, pos, piece in draw(st.lists(MUTATION, max_size=5)):
        if not rows and kind != "insert":
            continue
        i %= max(len(rows), 1)
        if kind == "insert":
            if not rows:
                rows.append(piece)
            else:
                rows[i] = rows[i][:pos] + piece + rows[i][pos:]
        elif kind == "delete_line":
            del rows[i]
        elif kind == "repeat_line":
            rows.insert(i, rows[i])
        elif kind == "replace_line":
            rows[i] = piece
        else:
            rows[i] = rows[i][:pos] + rows[i][pos + 1 :]
    data = b"\n".join(rows) + draw(st.sampled_from([b"\n", b"", b"\r\n"]))
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    if draw(st.integers(0, 5)) == 0:
        data = gzip.compress(data, mtime=0)
        if draw(st.booleans()):
            data = data[: draw(st.integers(0, len(data)))]
    return data


ANY_BYTES = st.one_of(st.binary(max_size=200), st.just(b""))


@pytest.fixture(scope="module")
def scratch():
    d = Path(tempfile.mkdtemp(prefix="sentprobe-fuzz-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _only_own_errors(load: Callable[[], object]) -> None:
    with contextlib.suppress(SentprobeError):  # anything else fails, with a shrunk input
        load()


@SETTINGS
@given(data=st.one_of(file_bytes(SENTEVAL), ANY_BYTES))
def test_loaders_raise_only_data_errors(data: bytes, scratch: Path) -> None:
    """SentEval files, detected by name (load_tasks) and read as such."""
    path = scratch / "bigram_shift.txt"
    path.write_bytes(data)
    _only_own_errors(lambda: load_senteval_file(path))
    _only_own_errors(lambda: load_tasks(path))


@SETTINGS
@given(tr=file_bytes(XPROBE), te=st.one_of(file_bytes(XPROBE), ANY_BYTES))
def test_xprobe_folders(tr: bytes, te: bytes, scratch: Path) -> None:
    folder = scratch / "xx" / "past_present"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tr.txt").write_bytes(tr)
    (folder / "te.txt").write_bytes(te)
    _only_own_errors(lambda: load_xprobe_task(folder))
    _only_own_errors(lambda: load_tasks(scratch / "xx"))


@SETTINGS
@given(tsv=st.one_of(file_bytes(TSV), ANY_BYTES), jsonl=st.one_of(file_bytes(JSONL), ANY_BYTES))
def test_tables(tsv: bytes, jsonl: bytes, scratch: Path) -> None:
    (scratch / "t.tsv").write_bytes(tsv)
    (scratch / "t.jsonl").write_bytes(jsonl)
    _only_own_errors(lambda: load_table(scratch / "t.tsv"))
    _only_own_errors(lambda: load_table(scratch / "t.jsonl"))


MANIFEST = json.dumps(
    {"suite": "s", "tasks": {"BShift": {"file": "bigram_shift.txt", "labels": ["a", "b"]}}},
    indent=1,
).splitlines()


@SETTINGS
@given(manifest=st.one_of(file_bytes(MANIFEST), ANY_BYTES), task=file_bytes(SENTEVAL))
def test_directories_with_a_manifest(manifest: bytes, task: bytes, scratch: Path) -> None:
    d = scratch / "suite"
    d.mkdir(exist_ok=True)
    (d / "manifest.json").write_bytes(manifest)
    (d / "bigram_shift.txt").write_bytes(task)
    _only_own_errors(lambda: load_tasks(d))


@SETTINGS
@given(data=st.one_of(file_bytes(SENTEVAL), file_bytes(XPROBE), ANY_BYTES))
def test_label_input(data: bytes, scratch: Path) -> None:
    path = scratch / "label.txt"
    path.write_bytes(data)
    _only_own_errors(lambda: read_label_input(path))
