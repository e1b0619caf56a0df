"""Never a traceback, never a half-written file: the fault and bad-input matrix of every command.

Each case in ``CASES`` runs one command in-process (click's CliRunner: fast) from a working
directory whose path is longer than 80 characters, and checks the exit code, that one line of
stderr carries every expected fragment (file, line, option, problem: never hard-wrapped),
that no exception escaped and "Traceback" is not on stderr, and that nothing was written or
left half-written. Faults that need a real process (signals, SIGKILL, a file size limit) are
separate tests below. docs/reliability.md lists every case with its test;
``test_reliability_doc_lists_every_case`` keeps the two in step.
"""

from __future__ import annotations

import builtins
import errno
import gzip
import io
import json
import os
import re
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from sentprobe.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}

GOOD = [f"tr\t{'a' if i % 2 else 'b'}\tsentence number {i} here" for i in range(20)] + [
    "va\ta\tdev sentence one",
    "va\tb\tdev sentence two",
    "te\ta\ttest sentence one",
    "te\tb\ttest sentence two",
]

ENCODERS = """
import numpy as np


def encode(sentences):
    out = np.zeros((len(sentences), 8), dtype=np.float32)
    for i, s in enumerate(sentences):
        for tok in s.split():
            out[i, sum(map(ord, tok)) % 8] += 1
    return out


def boom(sentences):
    raise ValueError("boom")


def flat(sentences):
    return np.zeros(len(sentences))


def nan(sentences):
    out = encode(sentences)
    out[0, 0] = np.nan
    return out


def short(sentences):
    return encode(sentences)[:-1]
"""


def _text(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def _files(d: Path) -> None:
    """The inputs every case may use, in the (long) working directory ``d``."""
    (d / "good.txt").write_bytes(_text(GOOD))
    (d / "enc.py").write_text(ENCODERS)
    (d / "empty.txt").write_bytes(b"")
    (d / "latin1.txt").write_bytes(_text(GOOD[:3]) + b"tr\ta\tbad \xff\xfe bytes\n")
    (d / "big.txt").write_bytes(b"x" * 10_000_000 + b"\n")
    (d / "xprobe_layout.txt").write_bytes(_text(["a sentence\tA", "another one\tB"]))
    packed = gzip.compress(_text(GOOD * 50))
    (d / "truncated.txt.gz").write_bytes(packed[: len(packed) // 2])
    (d / "adir").mkdir()
    (d / "badmanifest").mkdir()
    (d / "badmanifest" / "manifest.json").write_text('{"tasks": {\n  "x": oops}\n')
    (d / "bad.jsonl").write_text(
        '{"sentence": "a b", "label": "a", "split": "tr"}\n{"sentence": "c d", "label":\n'
    )
    (d / "plain.txt").write_text("The dog ran .\nA cat sat .\n")
    np.save(d / "m.npy", np.ones((5, 4), dtype=np.float32))
    (d / "m.txt").write_text("\n".join(["one", "two", "three", "four"]) + "\n")
    (d / "trunc.npy").write_bytes((d / "m.npy").read_bytes()[:90])
    (d / "garbage.sqlite").write_bytes(b"this is not an sqlite database at all" * 100)
    newer = sqlite3.connect(d / "newer.sqlite")
    newer.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    newer.execute("INSERT INTO meta VALUES ('schema_version', '99')")
    newer.commit()
    newer.close()
    (d / "afile").write_text("a file, not a directory\n")


RUN = ["--results", "out/r.sqlite", "--cache-dir", "out/cache", "-o", "out/t.md", "-q"]


def run(*args: str) -> list[str]:
    """``sentprobe run`` on good.txt with no baselines and everything written under out/."""
    return ["run", "-t", "good.txt", "--baselines", "none", *RUN[:-1], *args, "-q"]


@dataclass
class Case:
    id: str
    args: list[str]
    code: int
    expect: list[str]
    #: optional set-up before the command: (working dir, monkeypatch)
    setup: Callable[[Path, pytest.MonkeyPatch], object] | None = None
    #: result rows the store may hold afterwards (None: the store must not exist)
    rows: int | None = None
    marks: list = field(default_factory=list)
    #: where the message is: stderr, or stdout for audit (a load error is one of its findings)
    stream: str = "stderr"
    #: a further check of the working dir afterwards (e.g. that a file was not changed)
    after: Callable[[Path], None] | None = None


def _unreadable(d: Path, mp: pytest.MonkeyPatch) -> None:
    """good.txt unreadable: by permissions, or (as root, who reads anything) by failing every
    open() of it, whichever module (``sentprobe.io``, the loaders) opens it."""
    target = d / "good.txt"
    if os.geteuid() != 0:
        target.chmod(0)
        return
    real_open = builtins.open

    def deny(path, *a, **kw):
        if isinstance(path, (str, os.PathLike)) and Path(path).resolve() == target.resolve():
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *a, **kw)

    real_os_open = os.open

    def deny_fd(path, *a, **kw):  # sentprobe.io.open_regular opens by os.open
        if isinstance(path, (str, os.PathLike)) and Path(path).resolve() == target.resolve():
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_os_open(path, *a, **kw)

    mp.setattr(builtins, "open", deny)
    mp.setattr(io, "open", deny)  # Path.open / Path.read_bytes go through io.open
    mp.setattr(os, "open", deny_fd)


def _readonly_cache(d: Path, mp: pytest.MonkeyPatch) -> None:
    """out/cache read-only: by permissions, or (as root) a read-only file system error."""
    cache = d / "out" / "cache"
    cache.mkdir(parents=True)
    if os.geteuid() != 0:
        cache.chmod(0o555)
        return
    import sentprobe.encoders.shards as shards_mod

    def erofs(path, data, fsync=False):
        raise OSError(errno.EROFS, "Read-only file system", str(path))

    mp.setattr(shards_mod, "atomic_write_bytes", erofs)


def _damaged_shard(d: Path, mp: pytest.MonkeyPatch) -> None:
    """A finished run whose cache shard is then truncated on disk."""
    res = CliRunner().invoke(app, run("-e", "enc.py:encode"), catch_exceptions=False)
    assert res.exit_code == 0, res.stderr
    shard = next((d / "out" / "cache").glob("*/*.shard"))
    shard.write_bytes(shard.read_bytes()[:-9])
    (d / "out" / "t.md").unlink()
    sqlite3.connect(d / "out" / "r.sqlite").execute("DELETE FROM results").connection.commit()


def _crosslang_store(d: Path, mp: pytest.MonkeyPatch) -> None:
    res = CliRunner().invoke(app, run("-e", "enc.py:encode"), catch_exceptions=False)
    assert res.exit_code == 0, res.stderr
    (d / "out" / "t.md").unlink()


def _stored_units(path: Path, n: int) -> dict:
    """A results store of ``n`` units, each with its test predictions; key -> record."""
    from sentprobe.evaluation.predictions import Predictions
    from sentprobe.evaluation.provenance import package_versions
    from sentprobe.evaluation.store import ResultRecord, ResultsStore

    units = {}
    versions = {"versions": package_versions()}  # given: the store keeps them as they are
    with ResultsStore(path) as store:
        for i in range(n):
            record = ResultRecord(
                encoder=f"enc{i % 7}", encoder_fingerprint=f"fp{i % 7}", task=f"task{i}",
                task_source="synthetic", task_hash=f"h{i}", category="other", language="en",
                seed=0, probe="logreg", selection="dev", config={"C": 1.0}, dev_score=0.5,
                test_score=i / n, n_train=10, n_dev=2, n_test=4, n_classes=2, dim=8,
                extra=dict(versions),
            )  # fmt: skip
            store.add(record, f"k{i}", Predictions.from_labels("abab", "abba"))
            units[f"k{i}"] = record
    return units


def _halved_store(d: Path, mp: pytest.MonkeyPatch | None) -> dict:
    """full.sqlite, a results store of 300 units, and half.sqlite, a copy of it cut to half
    its size (a copy or a disk that stopped); the units by key."""
    units = _stored_units(d / "full.sqlite", 300)
    data = (d / "full.sqlite").read_bytes()
    (d / "half.sqlite").write_bytes(data[: len(data) // 2])
    (d / "before.bytes").write_bytes(data[: len(data) // 2])
    return units


def _read_only_store(d: Path, mp: pytest.MonkeyPatch) -> None:
    """A finished run's store in a folder nobody may write: by permissions, or (as root, who
    writes anyway) by making the folder immutable (``chattr +i``), undone at teardown."""
    _crosslang_store(d, mp)
    folder = d / "out"
    for name in ("r.sqlite-wal", "r.sqlite-shm"):  # as a clean close leaves it
        (folder / name).unlink(missing_ok=True)
    (d / "before.bytes").write_bytes((folder / "r.sqlite").read_bytes())
    _make_read_only(folder, mp)


def _make_read_only(folder: Path, mp: pytest.MonkeyPatch) -> None:
    if os.geteuid() != 0:
        folder.chmod(0o555)
    else:
        done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"running as root, and chattr +i fails here: {done.stderr.strip()}")
    _READ_ONLY.append(folder)


#: Folders a case made read-only; ``_writable_again`` undoes it (before the checks and at
#: teardown, since pytest must be able to delete them).
_READ_ONLY: list[Path] = []


def _writable_again() -> None:
    while _READ_ONLY:
        folder = _READ_ONLY.pop()
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        else:
            folder.chmod(0o755)


def _unchanged(name: str) -> Callable[[Path], None]:
    """After the command: the file ``name`` holds exactly what it held before (before.bytes)."""

    def check(d: Path) -> None:
        assert (d / name).read_bytes() == (d / "before.bytes").read_bytes()

    return check


def _hf_dir_without_config(d: Path, mp: pytest.MonkeyPatch) -> None:
    """A model folder with weights but no config.json."""
    (d / "weights").mkdir()
    (d / "weights" / "model.safetensors").write_bytes(b"weights")


#: What a spreadsheet saves: a byte-order mark, spaces around header names, CRLF.
SHEET = "\ufeff{}\r\n{}\r\n"


def _sheet(path: Path, header: str, rows: list[str]) -> None:
    path.write_bytes(SHEET.format(header, "\r\n".join(rows)).encode("utf-8"))


def _scores_store(d: Path) -> None:
    """scores.sqlite: WC probed with five encoders (enc0 worst ... enc4 best)."""
    from sentprobe.evaluation.store import ResultsStore

    units = _stored_units(d / "scores.sqlite", 5)
    with ResultsStore(d / "scores.sqlite") as store:
        for i, (key, record) in enumerate(units.items()):
            record.encoder, record.task, record.test_score = f"enc{i}", "WC", i / 10
            store.add(record, key)


def _bad_sheet(d: Path, mp: pytest.MonkeyPatch) -> None:
    _scores_store(d)
    _sheet(d / "down.csv", " encoder , Task , score ", ["enc0,STS,1", "enc1,STS,high"])


CASES = [
    # usage: click's own messages, exit 2
    Case("usage-unknown-command", ["frobnicate"], 2, ["Error: No such command 'frobnicate'"]),
    Case("usage-close-command", ["reprot"], 2, ["No such command 'reprot'", "Did you mean"]),
    Case("usage-unknown-option", ["run", "--bogus"], 2, ["Error: No such option: --bogus"]),
    Case("usage-close-option", ["run", "--task", "x"], 2, ["No such option: --task", "--tasks"]),
    Case("usage-missing-value", ["run", "--tasks"], 2, ["'--tasks' requires an argument"]),
    Case("usage-wrong-type", ["run", "--seeds", "many"], 2, ["Invalid value for '--seeds'"]),
    Case("usage-out-of-range", ["run", "--seeds", "0"], 2, ["Invalid value for '--seeds'"]),
    Case("usage-bad-choice", ["report", "-f", "xml"], 2, ["Invalid value for '--format'", "xml"]),
    Case("usage-bad-layer", ["run", "--layer", "deep"], 2, ["Invalid value for '--layer'", "deep"]),
    Case("usage-bad-metric", ["crosslang", "--metric", "f1"], 2, ["'--metric'", "f1"]),
    Case("usage-bad-layout", ["build", "-c", "x", "-o", "y", "--layout", "q"], 2, ["'--layout'"]),
    Case("usage-missing-argument", ["audit"], 2, ["Missing argument"]),
    Case("usage-missing-option", ["build", "-o", "out/s"], 2, ["Missing option '--corpus'"]),
    Case(
        "usage-extra-argument", ["tasks", "extra"], 2, ["Got unexpected extra argument", "(extra)"]
    ),
    Case("usage-encoders-option", ["encoders", "--all"], 2, ["No such option: --all"]),
    Case(
        "usage-conflicting-options",
        run("-e", "bov-glove", "--layer", "3"),
        1,
        ["error: encoder 'bov-glove' does not take option(s) layer"],
    ),
    Case(
        "usage-compare-without-gold",
        ["label", "plain.txt", "--task", "SentLen", "--compare"],
        1,
        ["plain.txt", "--compare needs gold labels"],
    ),
    # input files: exit 1, the file (and line) named
    Case("input-missing", ["run", "-t", "nope.txt", *RUN], 1, ["'nope.txt'", "no such file"]),
    Case("input-directory", ["label", "adir", "--task", "SentLen"], 1, ["adir", "directory"]),
    Case(
        "input-unreadable",
        run("-e", "enc.py:encode"),
        1,
        ["good.txt", "cannot read file", "Permission denied"],
        setup=_unreadable,
    ),
    Case("input-empty", ["audit", "empty.txt"], 1, ["empty.txt", "empty"], stream="stdout"),
    Case("input-not-utf8", ["run", "-t", "latin1.txt", *RUN], 1, ["latin1.txt, line 4", "UTF-8"]),
    Case(
        "input-10mb-line",
        ["run", "-t", "big.txt", *RUN],
        1,
        ["big.txt, line 1: header must name the columns", "xxx..."],
    ),
    Case(
        "input-wrong-layout",
        ["run", "-t", "xprobe_layout.txt", *RUN],
        1,
        ["xprobe_layout.txt, line 1", "header must name the columns"],
    ),
    Case("input-truncated-gzip", ["run", "-t", "truncated.txt.gz", *RUN], 1, ["corrupt gzip"]),
    Case(
        "input-bad-manifest",
        ["run", "-t", "badmanifest", *RUN],
        1,
        ["manifest.json, line 2: not valid JSON"],
    ),
    Case(
        "input-bad-jsonl",
        ["audit", "bad.jsonl"],
        1,
        ["bad.jsonl, line 2: not valid JSON"],
        stream="stdout",
    ),
    Case(
        "input-label-not-utf8",
        ["label", "latin1.txt", "-t", "SentLen"],
        1,
        ["latin1.txt, line 4", "UTF-8"],
    ),
    Case(
        "input-build-missing-corpus",
        ["build", "-q", "-c", "missing.conllu", "-o", "out/s"],
        1,
        ["missing.conllu", "no such corpus file"],
    ),
    Case(
        "input-build-truncated-gzip",
        ["build", "-q", "-c", "truncated.txt.gz", "-o", "out/s"],
        1,
        ["truncated.txt.gz", "corrupt"],
    ),
    Case(
        "input-spreadsheet-csv-bad-line",
        ["correlate", "-d", "down.csv", "--results", "scores.sqlite", "-o", "out/t.md"],
        1,
        ["down.csv, line 3: score 'high' is not a finite number"],
        setup=_bad_sheet,
    ),
    Case(
        "input-store-missing",
        ["crosslang", "--results", "nope.sqlite"],
        1,
        ["nope.sqlite: no results store here"],
    ),
    # encoders
    Case(
        "encoder-unknown-name",
        run("-e", "minlm"),
        1,
        ["unknown encoder 'minlm'", "did you mean 'minilm'"],
    ),
    Case(
        "encoder-hub-name-mistyped",  # found before the baselines are computed and stored
        ["run", "-t", "good.txt", *RUN[:-1], "-e", "hf:no-such-org/no-such-modle", "-q"],
        1,
        ["could not load model 'no-such-org/no-such-modle'"],
    ),
    Case(
        "encoder-comma-separated",
        run("-e", "minilm,bov-glove"),
        1,
        [
            "unknown encoder 'minilm,bov-glove'",
            "-e takes one encoder and repeats",
            "-e minilm -e bov-glove",
        ],
    ),
    Case(
        "encoder-raises", run("-e", "enc.py:boom"), 1, ["ValueError: boom", "enc.py, line"], rows=0
    ),
    Case(
        "encoder-wrong-shape",
        run("-e", "enc.py:flat"),
        1,
        ["encoder 'flat'", "2-d array", "(24,)"],
        rows=0,
    ),
    Case("encoder-nan", run("-e", "enc.py:nan"), 1, ["NaN or infinite"], rows=0),
    Case(
        "encoder-wrong-rows",
        run("-e", "enc.py:short"),
        1,
        ["returned 23 rows for 24 sentences"],
        rows=0,
    ),
    Case(
        "encoder-precomputed-rows",
        run("-e", "precomputed:m.npy:m.txt"),
        1,
        ["m.npy: has 5 rows but m.txt has 4 sentences"],
    ),
    Case(
        "encoder-precomputed-truncated",
        run("-e", "precomputed:trunc.npy:m.txt"),
        1,
        ["trunc.npy: cannot read matrix"],
    ),
    Case(
        "encoder-dir-without-weights",
        run("-e", "adir/model"),
        1,
        ["could not load model", "no file named"],
        setup=lambda d, mp: (
            (d / "adir" / "model").mkdir()
            or (d / "adir" / "model" / "config.json").write_text(
                json.dumps(
                    {
                        "model_type": "bert",
                        "hidden_size": 8,
                        "num_hidden_layers": 1,
                        "num_attention_heads": 1,
                        "intermediate_size": 8,
                        "vocab_size": 10,
                    }
                )
            )
        ),  # fmt: skip
        rows=0,
    ),
    Case(
        "encoder-dir-without-config",
        run("-e", "hf:weights"),
        1,
        ["weights: no config.json in weights"],
        setup=_hf_dir_without_config,
    ),
    # stores and caches
    Case(
        "store-not-sqlite",
        ["report", "--results", "garbage.sqlite"],
        1,
        ["garbage.sqlite: not a sentprobe results file"],
    ),
    Case("store-newer-schema", ["report", "--results", "newer.sqlite"], 1, ["schema version 99"]),
    Case(
        "store-damaged",
        ["report", "--results", "half.sqlite"],
        1,
        ["half.sqlite: damaged results store", "`sentprobe salvage half.sqlite NEW.sqlite`"],
        setup=_halved_store,
        after=_unchanged("half.sqlite"),
    ),
    Case(
        "store-read-only-folder-report",
        ["report", "--results", "out/r.sqlite", "-f", "csv"],
        0,
        ["encode,50.0"],
        setup=_read_only_store,
        rows=1,
        after=_unchanged("out/r.sqlite"),
        stream="stdout",
    ),
    Case(
        "store-read-only-folder-run",
        run("-e", "enc.py:encode"),
        1,
        ["out/r.sqlite: cannot write the results store", "not writable", "--results"],
        setup=_read_only_store,
        rows=1,
        after=_unchanged("out/r.sqlite"),
    ),
    Case(
        "store-cache-under-a-file",
        run("-e", "enc.py:encode", "--baselines", "majority", "--cache-dir", "afile/cache"),
        1,
        ["afile/cache: cannot write the embedding cache", "afile is a file, not a folder"],
    ),
    Case(
        "store-results-under-a-file",
        run("-e", "enc.py:encode", "--results", "afile/r.sqlite"),
        1,
        ["afile/r.sqlite: cannot write the results store", "afile is a file, not a folder"],
    ),
    Case(
        "store-readonly-cache",
        run("-e", "enc.py:encode"),
        1,
        ["out/cache", "cannot write the embedding cache"],
        setup=_readonly_cache,
        rows=0,
    ),
    Case(
        "store-truncated-shard",
        run("-e", "enc.py:encode"),
        0,
        ["warning:", "damaged embedding cache shard", "truncated"],
        setup=_damaged_shard,
        rows=1,
    ),
    Case(
        "store-output-not-dir",
        ["report", "--results", "out/r.sqlite", "-o", "afile/t.md"],
        1,
        ["afile/t.md: cannot write"],
        setup=_crosslang_store,
        rows=1,
    ),  # fmt: skip
    Case(
        "store-crosslang-unknown-reference",
        ["crosslang", "--results", "out/r.sqlite", "--reference", "zz"],
        1,
        ["zz"],
        setup=_crosslang_store,
        rows=1,
    ),
]


@pytest.fixture
def workdir(tmp_path, monkeypatch) -> Iterator[Path]:
    """A working directory whose path is over 80 characters (messages must not wrap)."""
    d = tmp_path / ("a-directory-with-a-long-name-" * 3)
    d.mkdir()
    assert len(str(d)) > 80
    _files(d)
    monkeypatch.chdir(d)
    yield d
    _writable_again()


def _leftovers(d: Path) -> list[str]:
    """Temp or partial files: cache shard temps, atomic-write temps, the table's temp."""
    return [
        str(p.relative_to(d))
        for p in d.rglob("*")
        if p.name.startswith((".tmp-", ".t.md.")) or p.name.endswith(".part")
    ]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=c.marks) for c in CASES])
def test_fault(case: Case, workdir: Path, monkeypatch) -> None:
    if case.setup:
        case.setup(workdir, monkeypatch)
    res = CliRunner().invoke(app, case.args, prog_name="sentprobe")
    _writable_again()
    err = res.stderr
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in err
    assert res.exit_code == case.code, err
    text = err if case.stream == "stderr" else res.stdout
    lines = [line for line in text.splitlines() if all(e in line for e in case.expect)]
    assert lines, f"no single {case.stream} line has all of {case.expect}:\n{text}"
    assert not _leftovers(workdir)
    out = workdir / "out"
    if case.code != 0:
        assert not (out / "t.md").exists() and not (out / "s").exists()
    store = out / "r.sqlite"
    if case.rows is None:
        assert not store.exists()
    elif store.exists():
        con = sqlite3.connect(store)
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == case.rows
        con.close()
    if case.after:
        case.after(workdir)


def test_messages_never_wrap_with_a_long_path(workdir: Path) -> None:
    """Issue 8 part 6: an error naming a >80-character path stays on one line when stderr is
    not a terminal (it was hard-wrapped at 80 columns, so tests depended on the temp path)."""
    bad = workdir / "latin1.txt"
    assert len(str(bad)) > 80
    res = CliRunner().invoke(app, ["run", "-t", str(bad), "--results", "o/r.sqlite"])
    assert res.exit_code == 1
    first = res.stderr.splitlines()[0]
    assert first.startswith(f"error: {bad}, line 4: not valid UTF-8 (byte 0xff")
    assert len(first) > 120


def test_reliability_doc_lists_every_case() -> None:
    """docs/reliability.md has one row per case, each naming its test, and >= 30 rows."""
    doc = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    named = set(re.findall(r"test_fault\[([\w-]+)\]", doc))
    assert named == {c.id for c in CASES}
    tests = set(re.findall(r"`(tests/[\w/]+\.py::\w+)", doc))
    assert len(named) + len(tests) >= 30
    for ref in tests:
        path, name = ref.split("::")
        assert f"def {name}(" in (ROOT / path).read_text(encoding="utf-8"), ref


def test_damaged_store_is_salvaged(workdir: Path) -> None:
    """Case 1's way out: ``sentprobe salvage`` copies every unit that still reads back whole
    (with its predictions) into a new store, reads the damaged one only, and writes nothing
    when nothing can be read or the new store's path is taken."""
    from sentprobe.evaluation.predictions import Predictions
    from sentprobe.evaluation.store import ResultsStore

    units = _halved_store(workdir, None)
    damaged = (workdir / "half.sqlite").read_bytes()
    expected = Predictions.from_labels("abab", "abba")
    for source, new in (("full.sqlite", "all.sqlite"), ("half.sqlite", "new.sqlite")):
        res = CliRunner().invoke(app, ["salvage", source, new])
        assert res.exit_code == 0, res.stderr
        said = re.fullmatch(
            rf"salvaged (\d+) results \((\d+) with predictions\) into {new}; \d+ rows found "
            r"but unreadable\n",
            res.stderr,
        )
        assert said, res.stderr
        with ResultsStore(new, readonly=True) as store:
            keys = list(store.to_frame()["key"])
            records = store.records()
            kept = store.predictions_for(keys)
        assert len(records) == int(said[1]) and len(kept) == int(said[2])
        assert all(units[k] == r for k, r in zip(keys, records, strict=True))
        assert all(p.labels == expected.labels and (p.pred == expected.pred).all()
                   for p in kept.values())  # fmt: skip
        if source == "full.sqlite":  # an undamaged store: everything, in the same order
            assert keys == list(units) and len(kept) == 300
        else:
            assert 0 < len(records) < 300
    assert (workdir / "half.sqlite").read_bytes() == damaged
    # the new store's path is taken: refused, that file untouched
    res = CliRunner().invoke(app, ["salvage", "half.sqlite", "afile"])
    assert res.exit_code == 1 and "afile: already exists" in res.stderr
    assert (workdir / "afile").read_text() == "a file, not a directory\n"
    # nothing readable: refused, nothing written
    res = CliRunner().invoke(app, ["salvage", "garbage.sqlite", "none.sqlite"])
    assert res.exit_code == 1 and res.stderr.startswith("error: garbage.sqlite: ")
    assert not list(workdir.glob("none.sqlite*"))


def test_spreadsheet_csv_reads_everywhere(workdir: Path) -> None:
    """Case 6: a CSV saved by a spreadsheet (byte-order mark, spaces around header names,
    CRLF) reads in ``correlate``, ``report --reference`` and the vote import alike."""
    from sentprobe.analysis.votes import read_votes

    _scores_store(workdir)
    _sheet(workdir / "down.csv", " encoder , Task , score ", [f"enc{i},STS,{i}" for i in range(5)])
    res = CliRunner().invoke(
        app, ["correlate", "-d", "down.csv", "--results", "scores.sqlite", "-f", "json"]
    )
    assert res.exit_code == 0, res.stderr
    (cell,) = json.loads(res.stdout)
    assert cell["probing_task"] == "WC" and cell["n"] == 5 and cell["rho"] == pytest.approx(1)
    _sheet(workdir / "human.csv", " row , task , score , note ", ["Human,WC,97.5, by hand"])
    res = CliRunner().invoke(
        app, ["report", "--results", "scores.sqlite", "--reference", "human.csv", "-f", "csv"]
    )
    assert res.exit_code == 0, res.stderr
    assert "Human,97.5" in res.stdout.replace(" ", "")
    _sheet(workdir / "votes.csv", " item_id , answer ", ["nli-negation:2, Does not make sense"])
    assert read_votes(workdir / "votes.csv", {"nli-negation:2": True}) == {
        "nli-negation:2": ["does not make sense"]
    }


# ---------------------------------------------------------------------------- real processes

SLOW_ENCODER = """
import os, time
import numpy as np

LOG = os.environ["ENCODE_LOG"]
DIM = int(os.environ.get("ENCODE_DIM", "16"))


def encode(sentences):
    time.sleep(float(os.environ.get("ENCODE_SLEEP", "0")))
    out = np.zeros((len(sentences), DIM), dtype=np.float32)
    for i, s in enumerate(sentences):
        for tok in s.split():
            out[i, sum(map(ord, tok)) % DIM] += 1
    with open(LOG, "a") as fh:
        fh.write(f"{len(sentences)}\\n")
    return out
"""
#: A task of 120 distinct sentences: 15 encoder batches of 8.
TASK = [f"tr\t{'ab'[i % 2]}\ttrain sentence {i} {'x' * (i % 5)}" for i in range(100)]
TASK += [f"{sp}\t{'ab'[i % 2]}\t{sp} sentence {i}" for sp in ("va", "te") for i in range(10)]
N_TASK = len(TASK)


def _slow_run(tmp_path: Path, **env: str) -> tuple[list[str], dict[str, str]]:
    (tmp_path / "slow_enc.py").write_text(SLOW_ENCODER)
    (tmp_path / "task.txt").write_bytes(_text(TASK))
    args = [sys.executable, "-m", "sentprobe", "run", "-e", "slow_enc.py:encode", "-t",
            "task.txt", "--baselines", "majority", "--batch-size", "8", "--results", "r.sqlite",
            "--cache-dir", "cache", "-q"]  # fmt: skip
    full = {**ENV, "ENCODE_LOG": str(tmp_path / "encode.log"), **env}
    full["PYTHONPATH"] = str(tmp_path) + os.pathsep + ENV.get("PYTHONPATH", "")
    return args, full


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _encoded(tmp_path: Path) -> int:
    log = tmp_path / "encode.log"
    return sum(map(int, log.read_text().split())) if log.exists() else 0


def _wait(proc: subprocess.Popen, ready: Callable[[], bool]) -> None:
    deadline = time.time() + 120
    while not ready() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()


def _flushed(tmp_path: Path) -> int:
    """Sentences in the cache's shards (each header and key checksum verified)."""
    from sentprobe.encoders.cache import _read_header

    return sum(_read_header(p)[0].n for p in (tmp_path / "cache").glob("*/*.shard"))


def _rows(tmp_path: Path) -> int:
    con = sqlite3.connect(tmp_path / "r.sqlite")
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    n = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    con.close()
    return n


def _stored(tmp_path: Path) -> dict[str, str]:
    """Stored units: key -> creation time (a recomputed unit gets a new one)."""
    con = sqlite3.connect(tmp_path / "r.sqlite")
    rows = dict(con.execute("SELECT key, created FROM results").fetchall())
    con.close()
    return rows


def _rerun_encodes(tmp_path: Path, args: list[str], env: dict[str, str], flushed: int) -> None:
    """The rerun encodes only what was not flushed and leaves finished units untouched."""
    before, stored = _encoded(tmp_path), _stored(tmp_path)
    res = subprocess.run(args, cwd=tmp_path, env={**env, "ENCODE_SLEEP": "0"},
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert _encoded(tmp_path) - before == N_TASK - flushed  # only what was not flushed
    assert _rows(tmp_path) == 2  # majority and the encoder
    after = _stored(tmp_path)
    assert stored and all(after[k] == v for k, v in stored.items())  # not recomputed


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_run_exits_cleanly_and_resumes(tmp_path, sig, code):
    """SIGINT/SIGTERM mid-encoding: status 130/143, one line, no traceback, no partial rows,
    no temp files; what was encoded is saved, and the rerun encodes only the rest."""
    args, env = _slow_run(tmp_path, ENCODE_SLEEP="0.2")
    # as from a terminal: a shell starts background jobs with SIGINT ignored, and a Python
    # started with SIGINT ignored keeps ignoring it (right for `sentprobe run &`, but then
    # there is nothing to test), so the child gets the default disposition back
    proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)  # fmt: skip
    _wait(proc, lambda: _encoded(tmp_path) >= 16)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    name = "SIGINT" if sig == signal.SIGINT else "SIGTERM"
    assert err.strip().splitlines()[-1].startswith(f"interrupted ({name}): finished work is saved")
    assert "Traceback" not in err
    assert not _leftovers(tmp_path)
    assert _rows(tmp_path) == 1  # the majority baseline's unit only
    flushed = _flushed(tmp_path)
    assert 16 <= flushed == _encoded(tmp_path) < N_TASK  # the interrupted work was kept
    if sig == signal.SIGINT:  # resuming is the same after either signal
        _rerun_encodes(tmp_path, args, env, flushed)


def test_killed_run_loses_at_most_the_flush_interval(tmp_path):
    """SIGKILL before the first full shard (4,096 sentences): vectors flushed by time survive,
    and the rerun encodes exactly the sentences that were not flushed."""
    args, env = _slow_run(tmp_path, ENCODE_SLEEP="0.1", SENTPROBE_CACHE_FLUSH_SECONDS="0.25")
    proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip
    _wait(proc, lambda: _flushed(tmp_path) > 0)
    _wait(proc, lambda: _encoded(tmp_path) > _flushed(tmp_path))  # some work not yet flushed
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    flushed = _flushed(tmp_path)
    assert 0 < flushed < _encoded(tmp_path) < N_TASK
    _rerun_encodes(tmp_path, args, env, flushed)


def _limit_file_size(limit: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_disk_full_mid_write_stops_cleanly(tmp_path):
    """A file size limit (like a full disk) hit while writing a cache shard: one line, exit 1,
    no partial shard or temp file; the store and cache stay valid, and a rerun completes."""
    # 120 vectors of 4 KB: a shard over the 200 KB limit (and a probe still quick on the rerun)
    args, env = _slow_run(tmp_path, ENCODE_DIM="1024")
    res = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300, preexec_fn=_limit_file_size(200_000))  # fmt: skip
    assert res.returncode == 1, res.stderr
    assert "cannot write the embedding cache (File too large)" in res.stderr
    assert "Traceback" not in res.stderr
    assert not _leftovers(tmp_path) and _flushed(tmp_path) == 0
    assert [p.name for p in (tmp_path / "cache").glob("*/*")] == ["meta.json"]
    assert _rows(tmp_path) == 1  # majority; nothing half-written for the encoder
    # case 8: with room again, the same command completes
    res = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert _rows(tmp_path) == 2 and _flushed(tmp_path) == N_TASK and not _leftovers(tmp_path)


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path, make_record):
    """``sentprobe report | head``: a closed pipe is the reader's choice, not a bug."""
    from sentprobe.evaluation.store import ResultsStore

    store = tmp_path / "results.sqlite"
    with ResultsStore(store) as results:
        results.add(make_record("enc", "SentLen", 0.7), "k1")
    read, write = os.pipe()
    os.close(read)  # gone before anything is written
    try:
        done = subprocess.run(
            [sys.executable, "-m", "sentprobe", "report", "--results", str(store), "-f", "csv"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write)
    assert done.returncode == 0 and done.stderr == ""


# ------------------------------------------------------------------------------------ builds

#: ``sentprobe build`` whose QUALITY.md step (the last, inside the lock) waits for the file
#: $BUILD_GO, then copies what the build made to $BUILD_SNAPSHOT before it replaces --out.
HELD_BUILD = """
import os, shutil, sys, time
from pathlib import Path

import sentprobe.analysis.quality as quality

real = quality.write_quality_report


def held(folder, result, **options):
    deadline = time.time() + 180
    while not Path(os.environ["BUILD_GO"]).exists() and time.time() < deadline:
        time.sleep(0.05)
    written = real(folder, result, **options)
    shutil.copytree(folder, os.environ["BUILD_SNAPSHOT"])
    return written


quality.write_quality_report = held
sys.argv = ["sentprobe", *sys.argv[1:]]
from sentprobe.cli.main import main

main()
"""


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _small_build(corpus: Path, out: str, *extra: str) -> list[str]:
    return ["build", "-q", "-c", str(corpus), "--lang", "xx", "-o", out, "--tasks", "SentLen",
            "--sizes", "40,10,10", *extra]  # fmt: skip


def test_two_builds_into_one_folder_never_mix(tmp_path):
    """Case 7: two ``sentprobe build`` runs into the same -o at once (seeds 1 and 2). The
    second waits for the first (saying so), each writes its whole suite, and the folder ends
    as exactly the suite of the one that finished last: never files of both."""
    from gen_treebank import write_treebank

    corpus = write_treebank(tmp_path / "tb")[0]
    go = tmp_path / "go"
    procs, logs = [], []
    for seed in (1, 2):
        logs.append(tmp_path / f"err{seed}.txt")
        env = {**ENV, "BUILD_GO": str(go), "BUILD_SNAPSHOT": str(tmp_path / f"snap{seed}")}
        with open(logs[-1], "w") as err:
            procs.append(subprocess.Popen(
                [sys.executable, "-c", HELD_BUILD, *_small_build(corpus, "suite", "--seed",
                 str(seed))], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=err,
            ))  # fmt: skip
    deadline = time.time() + 240
    waiting = []
    while not waiting and time.time() < deadline and all(p.poll() is None for p in procs):
        waiting = [i for i, log in enumerate(logs) if "waiting: another" in log.read_text()]
        time.sleep(0.1)
    go.touch()  # whatever happened, let the builds finish
    codes = [p.wait(timeout=300) for p in procs]
    errs = [log.read_text() for log in logs]
    assert codes == [0, 0], errs
    assert len(waiting) == 1, f"neither build waited for the other: {errs}"
    assert "holds suite.annotations (same --out)" in errs[waiting[0]]
    snaps = [_tree(tmp_path / f"snap{seed}") for seed in (1, 2)]
    assert snaps[0] != snaps[1] and snaps[0].keys() == snaps[1].keys()  # the seeds differ
    assert _tree(tmp_path / "suite") == snaps[waiting[0]]  # the later build's, whole
    assert not _leftovers(tmp_path)


def test_disk_full_during_a_build_writes_nothing_and_a_rerun_completes(workdir, monkeypatch):
    """Case 8 for builds: the disk fills while the annotation is stored, then (another time)
    while the suite is written. Each: exit 1, one line naming the folder and the cause, no
    suite, no temp file, the annotation already stored kept; a rerun with room completes."""
    import sentprobe.analysis.quality as quality
    import sentprobe.annotation.store as annotation_store
    from gen_treebank import write_treebank

    corpus = write_treebank(workdir / "tb")[0]
    args = _small_build(corpus, "out/s")

    def full(path, *a, **kw):  # as a write on a full disk fails: no file name
        raise OSError(errno.ENOSPC, "No space left on device")

    store = workdir / "out" / "s.annotations"
    for module, name, expect in (
        (annotation_store, "atomic_write_bytes", ["out/s.annotations: cannot write the "
         "annotation store (No space left on device): free space", "a rerun resumes"]),
        (quality, "atomic_write_text", ["out/s: cannot write the suite (No space left on "
         "device): free space or choose another --out", "nothing of it was written"]),
    ):  # fmt: skip
        with monkeypatch.context() as mp:
            mp.setattr(module, name, full)
            res = CliRunner().invoke(app, args)
        assert res.exit_code == 1, res.stderr
        assert "Traceback" not in res.stderr
        assert any(all(e in line for e in expect) for line in res.stderr.splitlines()), res.stderr
        assert not (workdir / "out" / "s").exists() and not _leftovers(workdir)
        chunks = sorted(store.glob("chunk-*")) if store.exists() else []
        if module is annotation_store:
            assert not chunks  # nothing half-stored
        else:
            assert len(chunks) == 1  # what the first attempt could not store, the second did
            kept = chunks[0].stat().st_mtime_ns
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.stderr
    assert {"manifest.json", "QUALITY.md"} <= set(os.listdir(workdir / "out" / "s"))
    assert chunks[0].stat().st_mtime_ns == kept  # the stored annotation was reused
    assert not _leftovers(workdir)
