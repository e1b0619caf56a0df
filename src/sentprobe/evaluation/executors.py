"""Where a run's units are computed: in this process (``local``, the default) or on a Ray
cluster (``ray``, ``ray:ADDRESS``, ``ray://HOST:PORT``; docs/scaling.md).

The Ray executor runs the runner's own code on the workers, so a distributed run gives the
same results as a local one: each job is one (row, task) pair of the table, i.e. one encoder
or baseline on one task with its probes and seeds (and one layer of it, when the encoder's
vectors were cached by an encoding job first), computed by a copy of the driver's
:class:`~sentprobe.evaluation.runner.Runner` whose results store only *collects* what would
be written. The driver alone writes the SQLite store, as each job
returns, so an interrupted distributed run resumes like a local one. Encoding comes first,
one job per encoder (on a GPU when the cluster has one), into the embedding cache, which
must be a directory every worker can reach (one machine, or a shared file system); probe
jobs then read the vectors from it, memory-mapped, without encoding. Ray retries a job
whose worker died (``MAX_RETRIES``).

Encoding is split across the cluster: an encoder's sentences (with ``--nli-train`` pairs
when a task is scored zero-shot) are dealt into one share per node (per GPU for a torch
model on a cluster with GPUs), each encoded by one job that loads the model once and uses
the node's cores. A probe job of a pre-encoded encoder that finds vectors missing stops the
run (:class:`CacheNotShared`): its node does not see the cache the encoding jobs wrote.
"""

from __future__ import annotations

import contextlib
import copy
import os
import socket
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from sentprobe.datasets.controls import controlled_name, is_control
from sentprobe.datasets.loaders.nli import NLIPairs
from sentprobe.encoders.base import Encoder, WrappedEncoder
from sentprobe.encoders.cache import EmbeddingCache
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.folds import ZERO_SHOT, protocol
from sentprobe.parallel import THREADS_VARIABLE
from sentprobe.registry import Baseline

if TYPE_CHECKING:
    from sentprobe.datasets import ProbingTask
    from sentprobe.evaluation.store import ResultRecord, ResultsStore


class Runner(Protocol):
    """What this module uses of ``evaluation.runner.Runner`` (which imports this module)."""

    tasks: list[ProbingTask]
    store: Any
    cache: EmbeddingCache
    keys: list[str]
    progress: bool
    only_views: set[int] | None
    nli_train: NLIPairs | None

    def run_row(
        self, row: Baseline | Encoder, probe: str | None = None, seeds: int | None = None
    ) -> None: ...


#: Times Ray runs a job again after its worker process (or node) died.
MAX_RETRIES = 3
#: Threads a worker's torch may use: the CPUs Ray gave the job (read through
#: parallel.thread_budget), so two jobs on one machine do not each take every core.
THREADS_ENV = THREADS_VARIABLE
#: Module names under which encoders/custom.py imports a user's encoder file.
USER_MODULE_PREFIX = "sentprobe_user_"

Row = tuple[Baseline | Encoder, str | None, int | None]


def check_executor(spec: str) -> None:
    """Fail early (before anything is written) on an unknown executor or a missing Ray."""
    if spec == "local":
        return
    if spec != "ray" and not spec.startswith(("ray:", "ray://")):
        raise SentprobeError(
            f"unknown executor {spec!r}; use local, ray, ray:ADDRESS or ray://HOST:PORT"
        )
    try:
        import ray  # noqa: F401
    except ImportError:
        raise SentprobeError(f"--executor {spec} needs Ray: pip install 'sentprobe[ray]'") from None


class CollectingStore:
    """What a worker's runner sees as its results store: the driver's records (read-only)
    plus what it adds, which is collected and sent back for the driver to write."""

    def __init__(self, existing: dict[str, ResultRecord]) -> None:
        self.existing = existing
        self.added: dict[str, ResultRecord] = {}
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def has(self, key: str) -> bool:
        return key in self.added or key in self.existing

    def get(self, key: str) -> ResultRecord | None:
        return self.added.get(key) or self.existing.get(key)

    def add(self, record: ResultRecord, key: str, *args: Any, **kwargs: Any) -> None:
        self.added[key] = record
        self.calls.append(((record, key, *args), kwargs))


class CacheNotShared(SentprobeError):
    """A probe job did not find the vectors its encoder's encoding jobs wrote: the cache
    directory is not shared by the machines. Stops the run even with ``--keep-going``."""


class _MustBeCached(WrappedEncoder):
    """A pre-encoded encoder as its probe jobs see it: everything is the encoder's, except
    that being asked to encode means the cache is not the one the encoding jobs wrote."""

    def __init__(self, encoder: Encoder, root: Path | None) -> None:
        super().__init__(encoder)
        self.root = root

    def prepare(self, sentences: Sequence[str]) -> None:
        raise CacheNotShared(
            f"{self.root}: {len(sentences)} vectors of {self.name} that its encoding jobs "
            f"wrote are missing on node {socket.gethostname()}: the embedding cache must be one "
            "directory every node sees (a shared file system mounted at the same path, given "
            "with --cache-dir or $SENTPROBE_CACHE)"
        )

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        self.prepare(sentences)
        raise AssertionError  # prepare raised

    def encode_batches(self, batches: Iterable[Sequence[str]]) -> Iterator[np.ndarray]:
        for batch in batches:
            yield self.encode(batch)


def _row_job(
    runner: Runner,
    existing: dict[str, ResultRecord],
    row: Row,
    pairs: NLIPairs | None,
    pre_encoded: bool,
    threads: int,
    *after: Any,
) -> tuple[list, list[str]]:
    """Run one row on the runner's task (and its control task); return the store calls and
    the unit keys. ``pairs``: the run's NLI training pairs (shipped once, through Ray's object
    store); ``pre_encoded``: the row's vectors are in the cache, encoding is an error;
    ``after``: results of the jobs this one waited for (the row's encoding)."""
    os.environ[THREADS_ENV] = str(threads)
    store = CollectingStore(existing)
    runner.store = store
    runner.cache = _worker_cache(runner.cache)
    runner.nli_train = pairs
    if pre_encoded:
        assert isinstance(row[0], Encoder)
        row = (_MustBeCached(row[0], runner.cache.root), row[1], row[2])
    runner.run_row(*row)
    return store.calls, runner.keys


def _encode_job(row: Row, sentences: list[str], cache: EmbeddingCache, threads: int) -> int:
    """Fill the shared cache with the row's encoder's vectors of ``sentences`` (this job's
    share), the model loaded once, on ``threads`` threads; how many were new."""
    encoder = row[0]
    assert isinstance(encoder, Encoder)
    os.environ[THREADS_ENV] = str(threads)
    cache = _worker_cache(cache)
    cache.vectors(encoder, sentences, progress=False)
    return cache.last_encoded


def _encoding_slots(nodes: list[dict[str, Any]], gpu: bool) -> list[tuple[dict[str, Any], int]]:
    """(Ray options, threads) of each encoding job of one encoder: one per GPU for a torch
    model on a cluster with GPUs, else one per node with CPUs, placed on it (softly: a job
    whose node died runs elsewhere) and reserving as many CPUs as the smallest node has, so
    that a retried job fits on any node."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    alive = [n for n in nodes if n.get("Alive")]
    if gpu:
        n_gpus = int(sum(n["Resources"].get("GPU", 0) for n in alive))
        return [({"num_gpus": 1, "num_cpus": 1}, 1)] * max(n_gpus, 1)
    cpus = [(n, int(n["Resources"].get("CPU", 0))) for n in alive]
    cpus = [(n, c) for n, c in cpus if c > 0]
    if not cpus:
        return [({"num_cpus": 1}, 1)]
    least = min(c for _, c in cpus)
    return [
        (
            {
                "num_cpus": least,
                "scheduling_strategy": NodeAffinitySchedulingStrategy(n["NodeID"], soft=True),
            },
            least,
        )
        for n, _ in cpus
    ]


def _task_groups(tasks: Sequence[ProbingTask]) -> list[list[int]]:
    """Indices of the tasks one probe job gets: a task with its control task (probed with
    the configuration its task's probe chose, which must be in the same job's store)."""
    names = {t.name: i for i, t in enumerate(tasks)}
    groups: dict[int, list[int]] = {}
    for i, task in enumerate(tasks):
        parent = names.get(controlled_name(task.name)) if is_control(task.name) else None
        groups.setdefault(i if parent is None else parent, []).append(i)
    return [groups[i] for i in sorted(groups)]


#: A worker process's caches by directory and settings: shard indexes are built and checksums
#: verified once per process, not once per job.
_WORKER_CACHES: dict[tuple[Any, ...], EmbeddingCache] = {}


def _worker_cache(cache: EmbeddingCache) -> EmbeddingCache:
    """This process's cache for the directory (and settings) of ``cache``."""
    return _WORKER_CACHES.setdefault((cache.root, cache.shard_size, cache.flush_seconds), cache)


def _fresh_cache(cache: EmbeddingCache) -> EmbeddingCache:
    """A cache on the same directory without the driver's in-memory indexes (cheap to ship)."""
    return EmbeddingCache(cache.root, cache.shard_size, cache.flush_seconds)


def _worker_runner(runner: Runner, task_indices: list[int]) -> Runner:
    """A copy of the driver's runner for a task (and its control); its store and NLI pairs
    are set on the worker."""
    clone = copy.copy(runner)  # every setting of the driver's runner, whatever it holds
    clone.tasks = [runner.tasks[i] for i in task_indices]
    clone.store = None  # an SQLite connection does not travel
    clone.nli_train = None  # sent once through the object store, not with every job
    clone.cache = _fresh_cache(runner.cache)
    clone.keys = []
    clone.progress = False
    return clone


def _encodes_first(row: Row, cache: EmbeddingCache) -> bool:
    """Encode in a job of its own (then probe jobs only read the cache): an encoder whose
    vectors do not depend on the task or seed, with a cache to put them in."""
    enc = row[0]
    return (
        isinstance(enc, Encoder)
        and cache.root is not None
        and not enc.uses_seed
        and not enc.prepare_per_task
    )


def _connect(spec: str) -> Callable[[], None]:
    """``ray.init`` for ``spec`` unless Ray is up already; returns what undoes it."""
    import ray

    if ray.is_initialized():
        return lambda: None
    address = None if spec == "ray" else spec.removeprefix("ray:") if "://" not in spec else spec
    ray.init(address=address, include_dashboard=False, log_to_driver=False)
    return ray.shutdown


def _ship_user_code() -> None:
    """Send encoders loaded from a user's ``file.py`` by value: their module exists only in
    this process (``encoders/custom.py`` imports it under a private name)."""
    from ray import cloudpickle

    for name, module in list(sys.modules.items()):
        if name.startswith(USER_MODULE_PREFIX):
            cloudpickle.register_pickle_by_value(module)


def run_ray(
    spec: str, runner: Runner, rows: Sequence[Row], store: ResultsStore, keep_going: bool = False
) -> list[str]:
    """Run ``rows`` x ``runner.tasks`` as Ray jobs; write every result into ``store`` here.
    Returns the failed jobs, one line each (only with ``keep_going``: else the first failure
    is raised)."""
    import ray

    from sentprobe.progress import tqdm

    disconnect = _connect(spec)
    jobs: dict[Any, str] = {}
    pending: list[Any] = []
    failures: list[str] = []
    try:
        _ship_user_code()
        gpus = ray.cluster_resources().get("GPU", 0) > 0
        nodes = ray.nodes()
        existing_ref = ray.put(_stored_records(store))
        pairs = runner.nli_train
        pairs_ref = ray.put(pairs)  # once, not pickled into every job
        encode = ray.remote(_encode_job)
        probe = ray.remote(_row_job).options(max_retries=MAX_RETRIES, num_cpus=1)
        sentences = list(dict.fromkeys(s for task in runner.tasks for s in task.sentences()))
        if pairs is not None and any(protocol(t, pairs) == ZERO_SHOT for t in runner.tasks):
            sentences = list(dict.fromkeys([*sentences, *pairs.premises, *pairs.hypotheses]))
        shares: dict[int, list[Any]] = {}  # the sentences dealt into k shares, put once per k
        for row in rows:
            after: list[Any] = []  # probe jobs of an encoder wait for its encoding jobs
            row_ref = ray.put(row)  # once: an encoder may hold large data (BoV: its vectors)
            pre_encoded = _encodes_first(row, runner.cache)
            if pre_encoded:
                enc = row[0]
                assert isinstance(enc, Encoder)
                slots = _encoding_slots(nodes, gpus and hasattr(enc, "device"))
                if len(slots) not in shares:  # interleaved: each share has long and short ones
                    shares[len(slots)] = [
                        ray.put(sentences[i :: len(slots)]) for i in range(len(slots))
                    ]
                cache = _fresh_cache(runner.cache)
                after = [
                    encode.options(max_retries=MAX_RETRIES, **opts).remote(
                        row_ref, share, cache, threads
                    )
                    for (opts, threads), share in zip(slots, shares[len(slots)], strict=True)
                ]
            # With its vectors cached first, a --layer all row is one job per layer and task.
            n_views = len(row[0].views or []) if after and isinstance(row[0], Encoder) else 0
            for group in _task_groups(runner.tasks):
                for view in range(n_views) if n_views else [None]:
                    clone = _worker_runner(runner, group)
                    clone.only_views = None if view is None else {view}
                    ref = probe.remote(
                        clone, existing_ref, row_ref, pairs_ref, pre_encoded, 1, *after
                    )
                    at = "" if view is None else f" @ view {view}"
                    name = getattr(row[0], "label", None) or getattr(row[0], "name", row[0])
                    jobs[ref] = f"{name} / {runner.tasks[group[0]].name}{at}"
        with tqdm(total=len(jobs), desc="ray jobs", disable=not runner.progress) as bar:
            pending = list(jobs)
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                try:
                    calls, keys = ray.get(done[0])
                except ray.exceptions.RayError as e:  # raised in the job, or its worker died
                    cause = e.cause if isinstance(e, ray.exceptions.RayTaskError) else None
                    report_failure(e)
                    if isinstance(cause, CacheNotShared) or not keep_going:
                        if isinstance(cause, SentprobeError):  # bad input: its own message
                            raise cause from None
                        raise _job_failed(jobs[done[0]], cause or e) from None
                    failures.append(failure_line(jobs[done[0]], cause or e))
                    bar.update()
                    continue
                for args, kwargs in calls:
                    store.add(*args, **kwargs)
                runner.keys += keys
                bar.update()
    except BaseException:
        for ref in pending or list(jobs):  # what is still queued or running is of no use now
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        raise
    finally:
        disconnect()
    return failures


def _job_failed(job: str, error: BaseException) -> SentprobeError:
    """One line: which job, and the first line of what went wrong."""
    first = (str(error).strip().splitlines() or [""])[0]
    return SentprobeError(f"ray job {job} failed: {type(error).__name__}: {first}")


def failure_line(job: str, error: BaseException) -> str:
    """``--keep-going``'s line for a failed job: which, and the first line of why (a
    sentprobe error's own message; else the exception's type and message)."""
    first = (str(error).strip().splitlines() or [""])[0]
    return (
        f"{job}: {first}"
        if isinstance(error, SentprobeError)
        else (f"{job}: {type(error).__name__}: {first}")
    )


def report_failure(error: BaseException) -> None:
    """With ``SENTPROBE_DEBUG=1``, the failure's traceback on stderr (a Ray job's error
    carries the remote one in its text)."""
    if not os.environ.get("SENTPROBE_DEBUG"):
        return
    text = str(error) if "RayTaskError" in type(error).__name__ else ""
    if not text or "Traceback" not in text:
        text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    sys.stderr.write(text.rstrip("\n") + "\n")


def _stored_records(store: ResultsStore) -> dict[str, ResultRecord]:
    """Every record in ``store`` by unit key: what the workers' runners may skip."""
    from sentprobe.evaluation.store import FIELDS, ResultRecord

    frame = store.to_frame()
    return {
        row["key"]: ResultRecord(**{name: row[name] for name in FIELDS})
        for row in frame.to_dict("records")
    }
