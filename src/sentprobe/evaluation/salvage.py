"""Salvage a damaged results store: copy every result that can still be read into a new one.

A store cut short (a full disk, a copy that stopped, a crash of the file system) has lost
some of its SQLite pages; SQLite then refuses every query that touches them, and usually the
schema check of the whole file. Rather than rely on the ``sqlite3`` shell's ``.recover``
(absent from many installs, and failing on Debian's 3.40 build, which lacks the
``sqlite_dbpage`` table it needs), this reads the file read-only with the schema checks
relaxed, finds unit rows through every path that still works (the table scanned forward and
backward, the key index likewise, then each row id up to the highest seen), and copies each
row that reads back whole, with its predictions where they read too. The damaged file is
never written.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sentprobe.errors import SentprobeError
from sentprobe.evaluation.predictions import Predictions, decode
from sentprobe.evaluation.store import (
    _CLUSTER_COLUMNS,
    _PREDICTION_COLUMNS,
    FIELDS,
    ResultRecord,
    ResultsStore,
)
from sentprobe.io import connect_sqlite

__all__ = ["Salvaged", "salvage"]

#: Row ids probed one by one beyond what the scans found: a hole of lost pages is skipped
#: this far past the last id seen.
_PROBE_PAST = 4096


@dataclass(frozen=True)
class Salvaged:
    """What :func:`salvage` copied: results, of them with predictions, rows seen but lost."""

    results: int
    predictions: int
    unreadable: int


def _scan(db: sqlite3.Connection, sql: str) -> Iterator[int]:
    """Row ids from ``sql`` until the first damaged page stops the scan."""
    try:
        cursor = db.execute(sql)
        while (row := cursor.fetchone()) is not None:
            yield int(row[0])
    except sqlite3.DatabaseError:
        return


def _row_ids(db: sqlite3.Connection) -> list[int]:
    """Every row id of ``results`` that some path through the damaged file still reaches."""
    found: set[int] = set()
    for order in ("", " DESC"):
        found.update(_scan(db, f"SELECT rowid FROM results NOT INDEXED ORDER BY rowid{order}"))
        found.update(
            _scan(
                db,
                f"SELECT rowid FROM results INDEXED BY sqlite_autoindex_results_1 "
                f"ORDER BY key{order}",
            )  # fmt: skip
        )
    # the rows between two damaged pages are reached by neither scan: ask for each id
    top = max(found, default=0) + _PROBE_PAST
    for rowid in range(1, top + 1):
        if rowid not in found:
            try:
                if db.execute("SELECT 1 FROM results WHERE rowid=?", (rowid,)).fetchone():
                    found.add(rowid)
            except sqlite3.DatabaseError:
                continue
    return sorted(found)


def _read(db: sqlite3.Connection, rowid: int) -> tuple[str, ResultRecord] | None:
    """The unit at ``rowid``, or None when its row (or an overflow page of it) is lost."""
    try:
        row = db.execute(
            f"SELECT key, {', '.join(FIELDS)} FROM results WHERE rowid=?", (rowid,)
        ).fetchone()
        values = dict(zip(FIELDS, row[1:], strict=True))
        for name in ("config", "warnings", "extra"):
            values[name] = json.loads(values[name])
        record = ResultRecord(**values)
    except (sqlite3.DatabaseError, TypeError, ValueError):
        return None
    return (row[0], record) if isinstance(row[0], str) else None


def _optional(db: sqlite3.Connection, sql: str, key: str) -> tuple | None:
    try:
        return db.execute(sql, (key,)).fetchone()
    except sqlite3.DatabaseError:  # the table is missing or its page is lost
        return None


def salvage(damaged: str | Path, into: str | Path) -> Salvaged:
    """Copy the readable results of the store ``damaged`` into a new store ``into``, in their
    stored order. ``into`` must not exist; ``damaged`` is only read."""
    damaged, into = Path(damaged), Path(into)
    if not damaged.is_file():
        raise SentprobeError(f"{damaged}: no results store here")
    if into.exists():
        raise SentprobeError(f"{into}: already exists; salvage writes a new store")
    uri = damaged.resolve().as_uri()
    try:
        db = connect_sqlite(f"{uri}?mode=ro", isolation_level=None, uri=True)
        db.execute("PRAGMA writable_schema=ON")  # read past a schema entry of a lost page
        units = _row_ids(db)
    except sqlite3.DatabaseError as e:
        raise SentprobeError(f"{damaged}: nothing can be read ({e})") from None
    entries: list[tuple[ResultRecord, str, Predictions | None]] = []
    for rowid in units:
        got = _read(db, rowid)
        if got is None:
            continue
        key, record = got
        predictions = None
        stored = _optional(db, f"SELECT {_PREDICTION_COLUMNS} FROM predictions WHERE key=?", key)
        if stored is None:  # a store from before the cluster columns
            older = _PREDICTION_COLUMNS.replace(", ".join(_CLUSTER_COLUMNS), "NULL, NULL")
            stored = _optional(db, f"SELECT {older} FROM predictions WHERE key=?", key)
        if stored is not None:
            try:
                predictions = decode(*stored)
            except (TypeError, ValueError):
                predictions = None
        entries.append((record, key, predictions))
    db.close()
    if not entries:
        raise SentprobeError(f"{damaged}: no result could be read; nothing written")
    try:
        with ResultsStore(into) as store:
            for record, key, predictions in entries:
                store.add(record, key, predictions)
    except BaseException:
        for suffix in ("", "-wal", "-shm"):
            into.with_name(into.name + suffix).unlink(missing_ok=True)
        raise
    return Salvaged(
        results=len(entries),
        predictions=sum(e[2] is not None for e in entries),
        unreadable=len(units) - len(entries),
    )
