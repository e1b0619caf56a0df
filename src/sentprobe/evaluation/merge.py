"""``sentprobe merge``: several results stores (the shards of ``run --shard``) into one.

The same unit key in two stores must hold the same result: the same scores, configuration,
counts and per-item predictions. Timings, the creation time and run bookkeeping
(``extra``'s ``seeds``, ``head_cached``, ``run_config``) may differ, since two runs of one
unit measure their own (and a shard's command differs in ``--shard``); the first store's
copy is kept. A key with two different results is refused with one
line, before anything is written. The output is written to a temporary file beside it and
renamed into place, so it is either the complete merge or untouched; an output that already
holds exactly the merge of the inputs (a merge stopped just after its rename) is left as it
is and the command succeeds, so "run it again" after an interruption is always right.

Order: when every unit carries a position from one sharded command (evaluation/shards.py),
units are written in the order one unsharded run writes them, so the merged store's report
is byte-identical to that run's; otherwise in the order of the stores given, each in its own
write order.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from sentprobe.errors import SentprobeError
from sentprobe.evaluation.predictions import Predictions, encode
from sentprobe.evaluation.shards import SHARD_META
from sentprobe.evaluation.store import Position, ResultRecord, ResultsStore
from sentprobe.io import connect_sqlite, replace_file, write_problem

#: Record fields two computations of one unit may differ in.
_RUN_FIELDS = {"encode_seconds", "probe_seconds", "created"}
#: ``extra`` entries that describe the run rather than the result.
_RUN_EXTRA = {"seeds", "head_cached", "run_config"}


@dataclass
class Merged:
    """What :func:`merge_stores` wrote: units, duplicates dropped, shards found missing."""

    units: int
    duplicates: int
    missing_shards: list[str] = field(default_factory=list)
    #: the output already held exactly this merge (a rerun of one stopped after its rename)
    already: bool = False


@dataclass
class _Unit:
    key: str
    record: ResultRecord
    predictions: Predictions | None
    position: Position | None
    source: Path


def _comparable(record: ResultRecord) -> dict[str, str]:
    """The record's fields that must agree between two copies of one unit, as JSON."""
    values = {k: v for k, v in asdict(record).items() if k not in _RUN_FIELDS}
    values["extra"] = {k: v for k, v in values["extra"].items() if k not in _RUN_EXTRA}
    return {k: json.dumps(v, sort_keys=True, default=str) for k, v in values.items()}


def _differs(a: _Unit, b: _Unit) -> str | None:
    """The first field in which two copies of a unit differ (None: the same result)."""
    ca, cb = _comparable(a.record), _comparable(b.record)
    for name, value in ca.items():
        if value != cb[name]:
            return f"{name} {value} vs {cb[name]}"
    both = a.predictions is not None and b.predictions is not None  # an old store kept none
    if both and encode(a.predictions) != encode(b.predictions):  # type: ignore[arg-type]
        return "test predictions differ"
    return None


def _read(path: Path) -> tuple[list[_Unit], dict | None]:
    with ResultsStore(path, readonly=True) as store:
        items = store.items()
        found = store.predictions_for(key for key, _ in items)
        positions = store.positions()
        shard = store.meta(SHARD_META)
    units = [_Unit(k, r, found.get(k), positions.get(k), path) for k, r in items]
    return units, json.loads(shard) if shard else None


def merge_stores(inputs: Sequence[Path], output: Path) -> Merged:
    """Merge the stores ``inputs`` into a new store ``output`` (which may be one of them)."""
    if not inputs:
        raise SentprobeError("merge needs at least one results store")
    output = Path(output)
    same = [p for p in inputs if p.exists() and output.exists() and p.samefile(output)]
    existing = output.exists() and not same
    wal = output.with_name(output.name + "-wal")
    if wal.exists() and wal.stat().st_size:
        raise SentprobeError(f"{output}: has an open write-ahead log ({wal}); a run is writing it")
    units: dict[str, _Unit] = {}
    order: list[_Unit] = []
    duplicates = 0
    shards: dict[str, set[int]] = {}
    counts: dict[str, int] = {}
    for path in inputs:
        read, shard = _read(Path(path))
        if shard:
            shards.setdefault(shard["plan"], set()).add(int(shard["index"]))
            counts[shard["plan"]] = int(shard["count"])
        for unit in read:
            first = units.get(unit.key)
            if first is None:
                units[unit.key] = unit
                order.append(unit)
                continue
            why = _differs(first, unit)
            if why is not None:
                raise SentprobeError(
                    f"{unit.source}: unit {unit.key} ({unit.record.encoder} / "
                    f"{unit.record.task}, seed {unit.record.seed}) conflicts with "
                    f"{first.source}: {why}"
                )
            duplicates += 1
    plans = {u.position[0] if u.position else None for u in order}
    if len(plans) == 1 and None not in plans:  # one sharded command: its unsharded order
        order = sorted(order, key=lambda u: u.position[1:] if u.position else (0, 0))
    missing = [
        f"{i}/{counts[plan]}"
        for plan, seen in shards.items()
        for i in range(1, counts[plan] + 1)
        if i not in seen
    ]
    if existing and not _holds(output, order):
        raise SentprobeError(
            f"{output}: already exists; merge into a new file, or name it among the inputs"
        )
    if not existing:  # else: the finished merge of these inputs (stopped after its rename)
        _write(output, order)
    return Merged(len(order), duplicates, missing, already=existing)


def _holds(output: Path, units: list[_Unit]) -> bool:
    """Whether the store ``output`` holds exactly ``units``, in order, with their results."""
    try:
        found, _ = _read(output)
    except SentprobeError:  # not a results store at all
        return False
    return [u.key for u in found] == [u.key for u in units] and not any(
        _differs(a, b) for a, b in zip(found, units, strict=True)
    )


def _write(output: Path, units: list[_Unit]) -> None:
    """All ``units`` into a temporary store beside ``output``, then renamed onto it."""
    tmp = output.with_name(f".{output.name}.merge-{os.getpid()}.tmp")
    try:
        with ResultsStore(tmp) as store:
            store.add_many((u.record, u.key, u.predictions, u.position) for u in units)
        con = connect_sqlite(tmp)  # one self-contained file: no -wal beside it
        try:
            con.execute("PRAGMA journal_mode=DELETE")
        finally:
            con.close()
        replace_file(tmp, output)
    except (OSError, SentprobeError) as e:  # a full disk: name the output, not the temp file
        if isinstance(e, OSError):
            problem = write_problem(output, e, "merged store", "-o")
        else:
            cause = e.__context__ if isinstance(e.__context__, sqlite3.Error) else e
            problem = (
                f"{output}: cannot write the merged store ({cause}): free space or choose "
                "another -o"
            )
        raise SentprobeError(f"{problem} (nothing written; the inputs are unchanged)") from None
    finally:
        for leftover in (tmp, *(tmp.with_name(tmp.name + s) for s in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)
