"""A results store from someone else cannot make sentprobe write outside its folder: SQLite
side files (``-wal``, ``-shm``, ``-journal``) planted as links to another file are refused
by SQLite, so adding a result fails in one line and the linked file is untouched
(docs/security.md). This already held; the test keeps it so."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from sentprobe.errors import SentprobeError
from sentprobe.evaluation.store import ResultsStore


@pytest.mark.parametrize("side", ["-wal", "-shm", "-journal"])
def test_side_files_linking_out_are_never_written(tmp_path, make_record, side):
    shared = tmp_path / "shared"
    shared.mkdir()
    store = shared / "results.sqlite"
    with ResultsStore(store) as s:
        s.add(make_record("a", "SentLen", 0.5), "k0")
    if side == "-journal":  # a store in rollback-journal mode, as an older tool may leave it
        db = sqlite3.connect(store)
        db.execute("PRAGMA journal_mode=DELETE")
        db.close()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n" * 100, encoding="utf-8")
    for name in ("-wal", "-shm", "-journal"):
        Path(f"{store}{name}").unlink(missing_ok=True)
    Path(f"{store}{side}").symlink_to(victim)
    try:
        with ResultsStore(store) as s:
            s.add(make_record("b", "SentLen", 0.6), "k1")
    except SentprobeError as e:
        assert "\n" not in str(e) and str(store) in str(e)
    assert victim.read_text(encoding="utf-8") == "keep me\n" * 100
    assert Path(f"{store}{side}").is_symlink() or not Path(f"{store}{side}").exists()
    shutil.rmtree(shared)
    assert victim.is_file()
