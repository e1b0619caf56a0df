"""``run --shard I/N``: a deterministic 1/N of a run's work, for a scheduler without Ray.

The work is split into *pairs*: one row of the table (an encoder or baseline) on one task,
with all its layers and seeds. A control task (``--controls``: one per seed, each drawn with
its own map) is a pair of its own in its task's shard, because it is probed with the
configuration its task's probe chose (read from the same store); the
seeds of a pair stay together, because a probe that does not depend on its seed is fitted
once and its other seeds are not computed (the store must see seed 0 first). The real
tasks' pairs are dealt to the N shards round-robin in row-major order (row 1 on tasks 1..T,
then row 2, ...), so N shards of one command share the pairs evenly and every shard computes
the same split from the same command line.

Each unit a shard writes carries its *position* (the plan's id, the row's index, the task's
place in the order the row visits tasks) so ``sentprobe merge`` (evaluation/merge.py) can
write the shards' units in the order one unsharded run writes them, and the merged store's
report is byte-identical to that run's.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sentprobe.datasets import ProbingTask
from sentprobe.datasets.controls import controlled_name, controls_after_their_tasks, is_control
from sentprobe.encoders.base import Encoder
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.predictions import Predictions
from sentprobe.evaluation.store import Position, ResultRecord, ResultsStore
from sentprobe.registry import Baseline

#: ``meta`` key of a sharded run's store: ``{"plan": ID, "index": I, "count": N}``.
SHARD_META = "shard"


def parse_shard(text: str) -> tuple[int, int]:
    """``I/N`` (1 <= I <= N) as ``(I, N)``; anything else is a one-line error."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise SentprobeError(f"--shard takes I/N with 1 <= I <= N (e.g. 2/8), got {text!r}")
    return int(match[1]), int(match[2])


@dataclass(frozen=True)
class Pair:
    """One row on one task: what a shard runs with ``runner.tasks = tasks``."""

    row: int  # index of the row in the run's rows
    task: int  # the task's place in the order the row visits the tasks
    tasks: tuple[ProbingTask, ...]  # the task, or a control task after its task
    shard: int  # 1..N


def visit_order(row: Baseline | Encoder, tasks: Sequence[ProbingTask]) -> list[ProbingTask]:
    """The order an unsharded run writes a row's tasks in (evaluation/runner.py): a text
    baseline puts each task's control tasks (one per map) right after it, an encoder all
    controls last."""
    if not isinstance(row, Baseline):
        controls = [t for t in tasks if is_control(t.name)]
        return [t for t in tasks if not is_control(t.name)] + controls
    return controls_after_their_tasks(list(tasks))


def plan(rows: Sequence[Baseline | Encoder], tasks: Sequence[ProbingTask], n: int) -> list[Pair]:
    """Every pair of the run with its shard (1..n), in the unsharded run's order."""
    real = [t for t in tasks if not is_control(t.name) or not _has_task(t, tasks)]
    index = {t.name: i for i, t in enumerate(real)}
    pairs = []
    own: tuple[ProbingTask, ...]
    for r, row in enumerate(rows):
        for position, task in enumerate(visit_order(row, tasks)):
            if task.name in index:
                own, shard = (task,), (r * len(real) + index[task.name]) % n + 1
            else:  # a control task: with its task (run first, so its choice is stored)
                parent = next(t for t in tasks if t.name == controlled_name(task.name))
                own, shard = (parent, task), (r * len(real) + index[parent.name]) % n + 1
            pairs.append(Pair(r, position, own, shard))
    return pairs


def _has_task(control: ProbingTask, tasks: Sequence[ProbingTask]) -> bool:
    return any(t.name == controlled_name(control.name) for t in tasks)


def plan_id(rows: Sequence[Any], tasks: Sequence[ProbingTask], n: int, extra: object) -> str:
    """Identifies a sharded command: its rows, tasks, N and ``extra`` (probe, seeds, NLI
    file); shards of different commands are never ordered as one run."""
    parts = [_row_id(row) for row in rows], [(t.name, t.content_hash()) for t in tasks]
    raw = json.dumps([*parts, n, extra], sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def _row_id(row: Any) -> str:
    if isinstance(row, Baseline):
        return f"baseline:{row.label}:{row.version}"
    if isinstance(row, Encoder):
        return row.fingerprint
    return repr(row)


class PositionedStore:
    """The results store as a sharded run's runner sees it: every unit it adds is written
    with ``position`` (set before each pair is run); the rest is the store's."""

    def __init__(self, store: ResultsStore, plan: str) -> None:
        self.store, self.plan = store, plan
        self.row = self.task = 0

    def add(self, record: ResultRecord, key: str, predictions: Predictions | None = None) -> None:
        position: Position = (self.plan, self.row, self.task)
        self.store.add(record, key, predictions, position=position)

    def __getattr__(self, name: str) -> Any:  # has, get, to_frame...: the store's own
        return getattr(self.store, name)
