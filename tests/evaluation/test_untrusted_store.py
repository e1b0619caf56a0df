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


TASK = [f"tr\t{'a' if i % 2 else 'b'}\tsentence number {i} here" for i in range(20)] + [
    "va\ta\tdev sentence one",
    "va\tb\tdev sentence two",
    "te\ta\ttest sentence one",
    "te\tb\ttest sentence two",
]


@pytest.mark.parametrize(
    "planted",
    [
        "CREATE TRIGGER cheat AFTER INSERT ON results BEGIN UPDATE results SET test_score = "
        "0.999; DELETE FROM predictions; END",
        "CREATE VIEW best AS SELECT * FROM results",
        "CREATE TABLE notes (x TEXT)",
    ],
    ids=["trigger", "view", "table"],
)
def test_a_store_with_sql_of_its_own_is_refused_for_writing(tmp_path, monkeypatch, planted):
    """A trigger planted in a shared store would run on the next write (it set every score
    to 0.999 and deleted the predictions): a store holding a trigger, a view or a table
    sentprobe does not make is refused in one line before anything is written, and reading
    it (``report``) still works."""
    from typer.testing import CliRunner

    from sentprobe.cli.main import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.txt").write_text("\n".join(TASK) + "\n", encoding="utf-8")
    args = ["run", "-t", "t.txt", "--results", "r.sqlite", "--cache-dir", "cache", "-q"]
    res = CliRunner().invoke(app, [*args, "--baselines", "majority"])
    assert res.exit_code == 0, res.output
    db = sqlite3.connect("r.sqlite")
    db.execute(planted)
    db.commit()
    before = db.execute("SELECT key, test_score FROM results").fetchall()
    preds = db.execute("SELECT COUNT(*) FROM predictions").fetchone()
    db.close()
    res = CliRunner().invoke(app, [*args, "--baselines", "majority,length"])
    assert res.exit_code == 1
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "r.sqlite: holds" in errors[0] and "refused" in errors[0], errors
    assert planted.split()[1].lower() in errors[0]
    assert "Traceback" not in res.output
    db = sqlite3.connect("r.sqlite")
    assert db.execute("SELECT key, test_score FROM results").fetchall() == before
    assert db.execute("SELECT COUNT(*) FROM predictions").fetchone() == preds
    db.close()
    res = CliRunner().invoke(app, ["report", "--results", "r.sqlite", "-f", "csv"])
    assert res.exit_code == 0, res.output


def test_the_schema_is_not_trusted(tmp_path):
    """SQLite's ``trusted_schema`` is off on every connection: SQL in a store's schema may
    not call functions with side effects."""
    with ResultsStore(tmp_path / "r.sqlite") as s:
        assert s._db.execute("PRAGMA trusted_schema").fetchone() == (0,)
    with ResultsStore(tmp_path / "r.sqlite", readonly=True) as s:
        assert s._db.execute("PRAGMA trusted_schema").fetchone() == (0,)
