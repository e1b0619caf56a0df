"""Results store: one SQLite file where runs accumulate, one row per finished unit.

A *unit* is (encoder fingerprint, task data hash and name, probe signature, seed). Each
finished unit is committed at once, so a killed run keeps its work and a rerun skips what
``has`` finds. SQLite needs no server, WAL mode lets a reader (``sentprobe report``) work
while a run writes, and the file is easy to copy or inspect with any SQLite tool.

Schema version 2 added the ``predictions`` table (per-item test predictions, keyed like
``results``); a version-1 file is upgraded when opened for writing and read as is (without
predictions) when opened read-only.

Long because the file's whole schema (results, predictions, a sharded run's unit positions,
meta) and every way of opening, checking, reading and writing it live in one class: split,
each part would need the others' private connection and table rules.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import sqlite3
import time
import warnings
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from sentprobe.errors import SentprobeError
from sentprobe.evaluation.predictions import Predictions, decode, encode
from sentprobe.evaluation.provenance import environment, package_versions
from sentprobe.io import (
    NETWORK_FILE_SYSTEMS,
    check_writable_dir,
    check_writable_file,
    connect_sqlite,
    file_system_type,
    printable,
)

SCHEMA_VERSION = 2
#: Older versions this sentprobe reads (and upgrades when it writes).
_UPGRADABLE = {1}
_PREDICTIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS predictions (key TEXT PRIMARY KEY, labels TEXT, dtype TEXT, "
    "gold BLOB, pred BLOB, group_names TEXT, group_index BLOB, cluster_names TEXT, "
    "cluster_index BLOB)"
)
#: Each test item's target form (a lexical split): optional columns, added to an older table
#: when a store is opened for writing and read as NULL from one opened read-only; older
#: sentprobe versions name their columns and so ignore them.
_CLUSTER_COLUMNS = ("cluster_names", "cluster_index")
_PREDICTION_COLUMNS = "labels, dtype, gold, pred, group_names, group_index, " + ", ".join(
    _CLUSTER_COLUMNS
)
#: A sharded run's place of each unit in the unsharded run's order (``run --shard``), so
#: ``sentprobe merge`` writes the shards' units in the order one run would have; an optional
#: table (added when a store is opened for writing; older sentprobe versions ignore it).
_POSITIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS positions (key TEXT PRIMARY KEY, plan TEXT, row INTEGER, "
    "task INTEGER)"
)
#: A unit's place in a sharded run: (plan id, row index, task position in the row's order).
Position = tuple[str, int, int]
#: The tables sentprobe makes; a store opened for writing that holds anything else (a
#: trigger, a view, another table) is refused: a trigger is SQL the store brought with it,
#: and it would run on sentprobe's next write (docs/security.md).
_TABLES = frozenset({"meta", "results", "predictions", "positions"})


def _known_columns() -> dict[str, list[list[tuple]]]:
    """Each table's columns as ``PRAGMA table_info`` lists them (name, type, NOT NULL,
    default, primary key), in every form this sentprobe writes or upgrades."""

    def cols(*spec: str) -> list[tuple]:
        return [(n, t, 0, None, int(i == 0)) for i, (n, t) in enumerate(c.split() for c in spec)]

    predictions = cols("key TEXT", "labels TEXT", "dtype TEXT", "gold BLOB", "pred BLOB",
                       "group_names TEXT", "group_index BLOB")  # fmt: skip
    return {
        "meta": [cols("key TEXT", "value TEXT")],
        "results": [cols("key TEXT", *(f"{n} {_SQL_TYPES.get(n, 'TEXT')}" for n in FIELDS))],
        "predictions": [predictions, predictions + cols("x X", *_CLUSTER_SPEC)[1:]],
        "positions": [cols("key TEXT", "plan TEXT", "row INTEGER", "task INTEGER")],
    }


_CLUSTER_SPEC = ("cluster_names TEXT", "cluster_index BLOB")


def _column_text(columns: list[tuple]) -> str:
    shown = (f"{c[0]} {c[1]}" + (" PRIMARY KEY" if c[4] else "") for c in columns)
    return "(" + ", ".join(shown) + ")"


# How long a process waits for another one's lock on the store before giving up.
_BUSY_TIMEOUT_S = 30.0


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class ResultRecord:
    """One probe trained and scored on one task with one encoder and one seed."""

    encoder: str
    encoder_fingerprint: str
    task: str
    task_source: str
    task_hash: str
    category: str
    language: str
    seed: int
    probe: str
    selection: str  # "dev" or "cv5"
    config: dict[str, Any]
    dev_score: float | None
    test_score: float
    n_train: int
    n_dev: int
    n_test: int
    n_classes: int
    dim: int
    encode_seconds: float = 0.0
    probe_seconds: float = 0.0
    created: str = field(default_factory=_now)
    warnings: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


FIELDS = [f.name for f in fields(ResultRecord)]
_JSON_FIELDS = {"config", "warnings", "extra"}
_SQL_TYPES = {
    "seed": "INTEGER",
    "n_train": "INTEGER",
    "n_dev": "INTEGER",
    "n_test": "INTEGER",
    "n_classes": "INTEGER",
    "dim": "INTEGER",
    "dev_score": "REAL",
    "test_score": "REAL",
    "encode_seconds": "REAL",
    "probe_seconds": "REAL",
}


def unit_key(
    encoder_fingerprint: str, task_hash: str, probe_signature: str, seed: int, task: str = ""
) -> str:
    """Identity of a unit of work: same inputs, same key, so finished units are skipped.

    ``task`` is the task's name: two tasks with the same data but different names are two
    units (two records, each labelled with its own name), not one shared record.
    """
    parts = json.dumps([encoder_fingerprint, task_hash, task, probe_signature, int(seed)])
    return hashlib.sha256(parts.encode("utf-8")).hexdigest()[:32]


class ResultsStore:
    """Append/upsert ``ResultRecord``s into an SQLite file; usable as a context manager."""

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        """Open (or create) the store at ``path``; ``readonly`` opens an existing one for
        reading only, so a store on read-only media or in a folder without write permission
        can be reported on (no write lock is taken, nothing is created). Opened for writing,
        the folder and the file are checked first: one that cannot be written fails here,
        before any work, with the reason (a file in the way, permissions, space)."""
        self.path = Path(path)
        self.readonly = readonly
        if self.path.is_dir():
            raise SentprobeError(f"{self.path}: results store path is a directory")
        if readonly and not self.path.is_file():
            raise SentprobeError(f"{self.path}: no results store here")
        try:
            self._db = self._connect_readonly() if readonly else self._connect()
            if readonly:
                self._check_schema()
            else:
                self._setup()
        except sqlite3.DatabaseError as e:
            self._abandon()
            raise self._error(e) from None
        except SentprobeError:
            self._abandon()
            raise

    def _abandon(self) -> None:
        """Close a store that failed to open; one this open created and left empty (a full
        disk) is removed, so no 0-byte file is left behind."""
        if hasattr(self, "_db"):
            self._db.close()
        if getattr(self, "_created", False):
            try:
                if self.path.stat().st_size == 0:
                    self.path.unlink()
            except OSError:
                pass

    def _connect(self) -> sqlite3.Connection:
        """A writing connection, once the folder (SQLite creates ``-wal``/``-shm`` files
        beside the store) and the file itself are known to be writable."""
        check_writable_dir(self.path.parent, "results store", "--results", self.path)
        if self.path.exists():
            check_writable_file(self.path, "results store", "--results")
        kind = file_system_type(self.path.parent)
        if kind in NETWORK_FILE_SYSTEMS:
            warnings.warn(
                f"{self.path}: the results store is on a network file system ({kind}), where "
                "SQLite's WAL mode is not safe (its shared memory does not work between "
                "hosts): keep it on a local disk and copy it when done, or give each host its "
                "own store (per-shard stores, merged afterwards; docs/scaling.md)",
                stacklevel=3,
            )
        self._created = not self.path.exists()
        # isolation_level=None: transactions are ours (BEGIN IMMEDIATE in _setup), not the
        # sqlite3 module's implicit ones, which commit a CREATE TABLE on its own.
        return _defensive(connect_sqlite(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None))

    def _connect_readonly(self) -> sqlite3.Connection:
        """``mode=ro``; in a read-only folder, a WAL store whose ``-shm`` file is gone cannot
        be opened that way, so it is opened ``immutable`` (safe then: with no ``-wal`` file
        there is nothing outside the main file, and no writer can start in that folder)."""
        uri = self.path.resolve().as_uri()
        db = connect_sqlite(
            f"{uri}?mode=ro", timeout=_BUSY_TIMEOUT_S, isolation_level=None, uri=True
        )
        try:
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError as e:
            wal = self.path.with_name(self.path.name + "-wal")
            if getattr(e, "sqlite_errorname", "") != "SQLITE_CANTOPEN" or wal.exists():
                db.close()
                raise
            db.close()
            db = connect_sqlite(f"{uri}?immutable=1", isolation_level=None, uri=True)
        return _defensive(db)

    def _error(self, e: sqlite3.Error) -> SentprobeError:
        """The one-line error for an SQLite failure: damaged (with how to salvage what is
        readable), not writable, or not a results file at all."""
        name = getattr(e, "sqlite_errorname", "")
        if name.startswith("SQLITE_CORRUPT"):
            return SentprobeError(
                f"{self.path}: damaged results store ({e}); `sentprobe salvage {self.path} "
                "NEW.sqlite` copies the results that can still be read into a new store"
            )
        if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_FULL", "SQLITE_IOERR")):
            if self.readonly:
                return SentprobeError(f"{self.path}: cannot read the results store ({e})")
            fix = (
                "free space"
                if name.startswith(("SQLITE_FULL", "SQLITE_IOERR"))
                else "fix the permissions"
            )
            return SentprobeError(
                f"{self.path}: cannot write the results store ({e}): {fix} or choose another "
                "--results"
            )
        return SentprobeError(f"{self.path}: not a sentprobe results file ({e})")

    def _check_schema(self) -> None:
        """The read-only open's check: a sentprobe results file of this schema version."""
        tables = {
            r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if "meta" not in tables:
            raise SentprobeError(f"{self.path}: an SQLite file, but not a sentprobe results file")
        self._check_version()
        self._has_predictions = "predictions" in tables
        self._has_positions = "positions" in tables
        self._has_clusters = self._has_predictions and set(_CLUSTER_COLUMNS) <= self._columns()

    def _columns(self) -> set[str]:
        """The columns of the predictions table."""
        return {r[1] for r in self._db.execute("PRAGMA table_info(predictions)")}

    def _check_version(self) -> int | None:
        row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        version = int(row[0]) if row else None
        if version != SCHEMA_VERSION and version not in _UPGRADABLE:
            raise SentprobeError(
                f"{self.path}: results schema version {version}, this sentprobe reads "
                f"version {SCHEMA_VERSION}; use a matching sentprobe or a new results file"
            )
        return version

    def _setup(self) -> None:
        """Check the schema, or create it; safe when several processes open a new file at once.

        The check and the creation happen in one write transaction (``BEGIN IMMEDIATE`` takes
        the write lock first; the others wait up to the busy timeout), so no process can see
        the tables of another one's half-finished creation.
        """
        db = self._db
        db.execute(f"PRAGMA busy_timeout={int(_BUSY_TIMEOUT_S * 1000)}")
        db.execute("BEGIN IMMEDIATE")
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "meta" in tables:
                self._check_objects()
                if self._check_version() != SCHEMA_VERSION:  # upgrade: add what is new
                    db.execute(_PREDICTIONS_TABLE)
                    db.execute(
                        "UPDATE meta SET value=? WHERE key='schema_version'",
                        (str(SCHEMA_VERSION),),
                    )
                for column in (c for c in _CLUSTER_COLUMNS if c not in self._columns()):
                    kind = "TEXT" if column.endswith("names") else "BLOB"
                    db.execute(f"ALTER TABLE predictions ADD COLUMN {column} {kind}")
                db.execute(_POSITIONS_TABLE)
            elif tables:
                raise SentprobeError(
                    f"{self.path}: an SQLite file, but not a sentprobe results file"
                )
            else:
                columns = ", ".join(f"{n} {_SQL_TYPES.get(n, 'TEXT')}" for n in FIELDS)
                db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
                db.execute(
                    "INSERT INTO meta VALUES ('schema_version', ?), ('created', ?)",
                    (str(SCHEMA_VERSION), _now()),
                )
                db.execute(f"CREATE TABLE results (key TEXT PRIMARY KEY, {columns})")
                db.execute(_PREDICTIONS_TABLE)
                db.execute(_POSITIONS_TABLE)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # SQLite rolls back itself on some errors (a full disk)
                db.execute("ROLLBACK")
            raise
        self._use_wal()
        self._has_predictions = self._has_positions = self._has_clusters = True

    def _check_objects(self) -> None:
        """Compare the store's schema with sentprobe's own before any write, so none of a
        planted one runs or shapes what is written: the tables (those of the schema
        versions this sentprobe upgrades), each one's columns (name, type, NOT NULL, default,
        primary key) and no index, trigger or view beyond the primary keys' own. A trigger
        runs on the next write; a planted UNIQUE index makes ``INSERT OR REPLACE`` delete
        other results; one line names what differs."""
        found = []
        for kind, name, table, sql in self._db.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master"
        ):
            if kind == "table" and name in _TABLES:
                continue
            if kind == "index" and sql is None and name == f"sqlite_autoindex_{table}_1":
                continue  # the PRIMARY KEY's own
            found.append(f"{kind} {name!r}")
        for table, expected in _known_columns().items():
            columns = [tuple(r[1:]) for r in self._db.execute(f"PRAGMA table_info({table})")]
            if columns and columns not in expected:
                found.append(f"table {table!r} with columns {_column_text(columns)}")
        if found:
            raise SentprobeError(
                f"{self.path}: holds {', '.join(found)}, which sentprobe never makes; "
                "refused: a results store opened for writing must have exactly sentprobe's "
                "schema (a trigger would run on the next write, an index could delete results)"
            )

    def _use_wal(self) -> None:
        """WAL mode (readers never block the writer), switched on outside any transaction.

        It is a property of the file, so only the first process changes anything. The switch
        needs an exclusive lock, and SQLite can answer SQLITE_BUSY at once, without its busy
        handler, while another process opens the same new file: retry until the timeout.
        """
        deadline = time.monotonic() + _BUSY_TIMEOUT_S
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as e:
                busy = getattr(e, "sqlite_errorname", "").startswith("SQLITE_BUSY")
                if not busy or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _query(self, sql: str, params: tuple = ()) -> list[tuple]:
        try:
            return self._db.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as e:
            if getattr(e, "sqlite_errorname", "").startswith("SQLITE_CORRUPT"):
                raise self._error(e) from None
            raise SentprobeError(f"{self.path}: cannot read results ({e})") from None

    def has(self, key: str) -> bool:
        return bool(self._query("SELECT 1 FROM results WHERE key=?", (key,)))

    def get(self, key: str) -> ResultRecord | None:
        rows = self._query(f"SELECT {', '.join(FIELDS)} FROM results WHERE key=?", (key,))
        return _to_record(rows[0], self.path, key) if rows else None

    def add(
        self,
        record: ResultRecord,
        key: str,
        predictions: Predictions | None = None,
        *,
        position: Position | None = None,
    ) -> None:
        """Insert or replace the unit ``key`` and its test ``predictions`` (none: any stored
        ones are removed) in one transaction, committed immediately. ``position``: the
        unit's place in a sharded run (``run --shard``), read back by ``merge``."""
        self.add_many([(record, key, predictions, position)])

    def add_many(
        self, entries: Iterable[tuple[ResultRecord, str, Predictions | None, Position | None]]
    ) -> None:
        """:meth:`add` for several units in one transaction (all or none are written)."""
        if self.readonly:
            raise SentprobeError(f"{self.path}: cannot write result (opened read-only)")
        placeholders = ", ".join("?" * (len(FIELDS) + 1))
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                for record, key, predictions, position in entries:
                    values = [_to_sql(name, v) for name, v in asdict(_stamped(record)).items()]
                    # REPLACE gives the row a new rowid, so rowid order is "last written" order.
                    db.execute(
                        f"INSERT OR REPLACE INTO results (key, {', '.join(FIELDS)}) "
                        f"VALUES ({placeholders})",
                        (key, *values),
                    )
                    db.execute("DELETE FROM predictions WHERE key=?", (key,))
                    if predictions is not None:
                        db.execute(
                            f"INSERT INTO predictions (key, {_PREDICTION_COLUMNS}) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (key, *encode(predictions)),
                        )
                    db.execute("DELETE FROM positions WHERE key=?", (key,))
                    if position is not None:
                        db.execute("INSERT INTO positions VALUES (?, ?, ?, ?)", (key, *position))
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        except sqlite3.DatabaseError as e:
            if getattr(e, "sqlite_errorname", "").startswith("SQLITE_CORRUPT"):
                raise self._error(e) from None
            raise SentprobeError(f"{self.path}: cannot write result ({e})") from None

    def predictions(self, key: str) -> Predictions | None:
        """The unit's per-item test predictions; None when they were not stored (a result
        from before schema version 2, or a store that has no predictions table yet)."""
        return self.predictions_for([key]).get(key)

    def predictions_for(self, keys: Iterable[str]) -> dict[str, Predictions]:
        """The stored predictions of those ``keys`` that have any (one query per 500 keys)."""
        wanted = list(dict.fromkeys(keys))
        if not self._has_predictions:
            return {}
        found: dict[str, Predictions] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            columns = _PREDICTION_COLUMNS
            if not self._has_clusters:  # a read-only store written before they existed
                columns = columns.replace(", ".join(_CLUSTER_COLUMNS), "NULL, NULL")
            rows = self._query(
                f"SELECT key, {columns} FROM predictions "
                f"WHERE key IN ({', '.join('?' * len(chunk))})",
                tuple(chunk),
            )
            for key, *values in rows:
                try:
                    found[key] = decode(*values)
                except (ValueError, TypeError) as e:  # json and numpy errors are ValueErrors
                    raise SentprobeError(
                        f"{self.path}: damaged predictions of unit {key} ({e})"
                    ) from None
        return found

    def positions(self) -> dict[str, Position]:
        """Each unit's place in the sharded run that wrote it (units of a sharded run only)."""
        if not self._has_positions:
            return {}
        rows = self._query("SELECT key, plan, row, task FROM positions")
        return {key: (plan, int(row), int(task)) for key, plan, row, task in rows}

    def meta(self, key: str) -> str | None:
        """A value of the store's ``meta`` table (e.g. ``shard``, written by ``run --shard``)."""
        rows = self._query("SELECT value FROM meta WHERE key=?", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        """Set a ``meta`` value (committed at once)."""
        if self.readonly:
            raise SentprobeError(f"{self.path}: cannot write (opened read-only)")
        try:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
        except sqlite3.DatabaseError as e:
            raise SentprobeError(f"{self.path}: cannot write ({e})") from None

    def items(self) -> list[tuple[str, ResultRecord]]:
        """(unit key, record) of every stored unit, in the order they were (last) written."""
        return self._select(None, None, None)

    def records(
        self, encoder: str | None = None, task: str | None = None, probe: str | None = None
    ) -> list[ResultRecord]:
        """Stored records in the order they were (last) written, optionally filtered."""
        return [record for _, record in self._select(encoder, task, probe)]

    def _select(
        self, encoder: str | None, task: str | None, probe: str | None
    ) -> list[tuple[str, ResultRecord]]:
        filters = {"encoder": encoder, "task": task, "probe": probe}
        where = [f"{name}=?" for name, value in filters.items() if value is not None]
        params = tuple(value for value in filters.values() if value is not None)
        sql = f"SELECT key, {', '.join(FIELDS)} FROM results"
        if where:
            sql += " WHERE " + " AND ".join(where)
        rows = self._query(sql + " ORDER BY rowid", params)
        return [(row[0], _to_record(row[1:], self.path, row[0])) for row in rows]

    def to_frame(self) -> pd.DataFrame:
        """One row per record (columns: ``key`` plus the record fields), in write order."""
        return records_frame(self._select(None, None, None))

    def __len__(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM results")[0][0])


def _defensive(db: sqlite3.Connection) -> sqlite3.Connection:
    """SQLite's settings for a file from elsewhere: its schema is not trusted (functions with
    side effects are not called from it), and where Python offers it, defensive mode (no
    writes to the schema or pages by hand)."""
    db.execute("PRAGMA trusted_schema=OFF")
    if hasattr(db, "setconfig"):  # Python >= 3.12
        db.setconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)  # type: ignore[attr-defined]
    return db


def records_frame(items: Iterable[tuple[str, ResultRecord]]) -> pd.DataFrame:
    """(key, record) pairs as a frame: columns ``key`` plus the record fields."""
    rows = [{"key": key, **asdict(record)} for key, record in items]
    return pd.DataFrame(rows, columns=["key", *FIELDS])


def _json_default(value: Any) -> Any:
    """numpy scalars/arrays (common in configs and scores) as plain JSON; else their str."""
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def _to_sql(name: str, value: Any) -> Any:
    if name in _JSON_FIELDS:
        return json.dumps(value, sort_keys=True, default=_json_default)
    if value is None:
        return None
    sql_type = _SQL_TYPES.get(name)
    if sql_type == "INTEGER":
        return int(value)
    if sql_type == "REAL":
        return float(value)  # also turns numpy scalars into types sqlite3 can bind
    return str(value)


#: How deep a stored JSON value may nest (sentprobe's own are 3 or 4 levels deep).
MAX_JSON_DEPTH = 32
_COUNTS = {"n_train", "n_dev", "n_test", "n_classes", "dim"}
_SCORES = {"dev_score", "test_score"}
_OPTIONAL = {"dev_score"}


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _json_value(name: str, text: Any) -> tuple[Any, str | None]:
    """(value, problem) of a JSON column: valid JSON of the field's type, nested at most
    ``MAX_JSON_DEPTH`` deep."""
    if not isinstance(text, str):
        return None, f"is {type(text).__name__}, not JSON text"
    try:
        value = json.loads(text)
    except RecursionError:
        return None, f"is JSON nested deeper than {MAX_JSON_DEPTH} levels"
    except ValueError as e:
        return None, f"is not valid JSON ({e})"
    wanted = list if name == "warnings" else dict
    if not isinstance(value, wanted):
        return None, f"is a JSON {type(value).__name__}, not a {wanted.__name__}"
    if _depth(value) > MAX_JSON_DEPTH:
        return None, f"is JSON nested deeper than {MAX_JSON_DEPTH} levels"
    if name == "warnings" and not all(isinstance(w, str) for w in value):
        return None, "holds a warning that is not text"
    run_config = value.get("run_config") if isinstance(value, dict) else None
    if name == "extra" and run_config is not None and not _is_run_config(run_config):
        return None, "holds a run_config that is not a command and a table of its settings"
    return value, None


def _is_run_config(value: Any) -> bool:
    """What ``RUN_CONFIG`` records: {} or {"command": str, "settings": {...}}."""
    return isinstance(value, dict) and (
        not value
        or (isinstance(value.get("command"), str) and isinstance(value.get("settings"), dict))
    )


def _value_problem(name: str, value: Any) -> str | None:
    """What is wrong with a stored scalar value (type, range, finiteness), or None."""
    if value is None:
        return None if name in _OPTIONAL else "is missing (NULL)"
    if name in _SQL_TYPES and _SQL_TYPES[name] == "INTEGER":
        if not isinstance(value, int) or isinstance(value, bool):
            return f"is {value!r}, not an integer"
        return f"is {value}, below 0" if name in _COUNTS and value < 0 else None
    if name in _SQL_TYPES:  # REAL
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return f"is {value!r}, not a number"
        if not math.isfinite(value):
            return f"is {value}, not a finite number"
        if name in _SCORES and not 0.0 <= value <= 1.0:
            return f"is {value}, outside 0..1"
        return f"is {value}, below 0" if value < 0 else None
    if not isinstance(value, str):
        return f"is {value!r}, not text"
    return None  # control characters in names are shown escaped (sentprobe.io.printable)


def _to_record(row: tuple, store: Path | None = None, key: str | None = None) -> ResultRecord:
    """A stored row as a record, every value checked (type, range, finiteness, JSON nesting):
    a crafted store is refused in one line naming it and the row, never a traceback."""
    values: dict[str, Any] = {}
    for name, v in zip(FIELDS, row, strict=True):
        if name in _JSON_FIELDS:
            values[name], problem = _json_value(name, v)
        else:
            values[name], problem = v, _value_problem(name, v)
        if problem is not None:
            where = f"{store}: " if store is not None else ""
            row_name = f"row {printable(key)!r}" if key is not None else "a row"
            raise SentprobeError(
                f"{where}{row_name}: {name} {problem}; not a value sentprobe stores "
                "(the store was changed by hand or damaged)"
            )
    return ResultRecord(**values)


#: The settings of the command that is running (set by the CLI's ``--config`` machinery):
#: every result stored meanwhile records them in ``extra["run_config"]``.
RUN_CONFIG: ContextVar[dict[str, Any] | None] = ContextVar("sentprobe_run_config", default=None)
log = logging.getLogger(__name__)


def _stamped(record: ResultRecord) -> ResultRecord:
    """``record`` with the package versions and the running command's settings (a result
    that has them, e.g. one copied from another store, keeps its own); logged, so ``-v``
    shows each probe's choice."""
    log.info(
        "stored %s on %s (seed %d): %s, selected by %s: %s; dev %s, test %.4f; "
        "encoding %.1f s, probe %.1f s",
        record.encoder,
        record.task,
        record.seed,
        record.probe,
        record.selection,
        record.config,
        "-" if record.dev_score is None else f"{record.dev_score:.4f}",
        record.test_score,
        record.encode_seconds,
        record.probe_seconds,
    )
    log.debug("%s: encoder fingerprint %s", record.encoder, record.encoder_fingerprint)
    extra = record.extra
    if "versions" not in extra:  # the code and environment that computed it (provenance.py)
        extra = {**extra, "versions": package_versions(), "environment": environment()}
    config = RUN_CONFIG.get()
    if config is not None and "run_config" not in extra:
        extra = {**extra, "run_config": config}
    return replace(record, extra=extra)
