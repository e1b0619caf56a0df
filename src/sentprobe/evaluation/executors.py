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
"""

from __future__ import annotations

import contextlib
import copy
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from sentprobe.encoders.base import Encoder
from sentprobe.encoders.cache import EmbeddingCache
from sentprobe.errors import SentprobeError
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


def _row_job(
    runner: Runner, existing: dict[str, ResultRecord], row: Row, threads: int, *after: Any
) -> tuple[list, list[str]]:
    """Run one row on the runner's (one) task; return the store calls and the unit keys.
    ``after``: results of the jobs this one waited for (the row's encoding)."""
    os.environ[THREADS_ENV] = str(threads)
    store = CollectingStore(existing)
    runner.store = store
    runner.cache = _worker_cache(runner.cache)
    runner.run_row(*row)
    return store.calls, runner.keys


def _encode_job(row: Row, sentences: list[str], cache: EmbeddingCache, threads: int) -> int:
    """Fill the shared cache with the row's encoder's vectors of ``sentences``; how many were
    new."""
    encoder = row[0]
    assert isinstance(encoder, Encoder)
    os.environ[THREADS_ENV] = str(threads)
    cache = _worker_cache(cache)
    cache.vectors(encoder, sentences, progress=False)
    return cache.last_encoded


#: A worker process's caches by directory and settings: shard indexes are built and checksums
#: verified once per process, not once per job.
_WORKER_CACHES: dict[tuple[Any, ...], EmbeddingCache] = {}


def _worker_cache(cache: EmbeddingCache) -> EmbeddingCache:
    """This process's cache for the directory (and settings) of ``cache``."""
    return _WORKER_CACHES.setdefault((cache.root, cache.shard_size, cache.flush_seconds), cache)


def _fresh_cache(cache: EmbeddingCache) -> EmbeddingCache:
    """A cache on the same directory without the driver's in-memory indexes (cheap to ship)."""
    return EmbeddingCache(cache.root, cache.shard_size, cache.flush_seconds)


def _worker_runner(runner: Runner, task_index: int) -> Runner:
    """A copy of the driver's runner for one task; its store is set on the worker."""
    clone = copy.copy(runner)  # every setting of the driver's runner, whatever it holds
    clone.tasks = [runner.tasks[task_index]]
    clone.store = None  # an SQLite connection does not travel
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


def run_ray(spec: str, runner: Runner, rows: Sequence[Row], store: ResultsStore) -> None:
    """Run ``rows`` x ``runner.tasks`` as Ray jobs; write every result into ``store`` here."""
    import ray

    from sentprobe.progress import tqdm

    disconnect = _connect(spec)
    jobs: dict[Any, str] = {}
    pending: list[Any] = []
    try:
        _ship_user_code()
        gpus = ray.cluster_resources().get("GPU", 0) > 0
        existing_ref = ray.put(_stored_records(store))
        encode = ray.remote(_encode_job)
        probe = ray.remote(_row_job).options(max_retries=MAX_RETRIES, num_cpus=1)
        sentences = list(dict.fromkeys(s for task in runner.tasks for s in task.sentences()))
        sentences_ref = ray.put(sentences)
        for row in rows:
            after: list[Any] = []  # probe jobs of an encoder wait for its encoding job
            row_ref = ray.put(row)  # once: an encoder may hold large data (BoV: its vectors)
            if _encodes_first(row, runner.cache):
                enc = row[0]
                assert isinstance(enc, Encoder)
                opts = {"max_retries": MAX_RETRIES, "num_cpus": 1}
                if gpus and hasattr(enc, "device"):  # a torch model: on a GPU worker
                    opts["num_gpus"] = 1
                after = [
                    encode.options(**opts).remote(
                        row_ref, sentences_ref, _fresh_cache(runner.cache), 1
                    )
                ]
            # With its vectors cached first, a --layer all row is one job per layer and task.
            n_views = len(row[0].views or []) if after and isinstance(row[0], Encoder) else 0
            for t, task in enumerate(runner.tasks):
                for view in range(n_views) if n_views else [None]:
                    clone = _worker_runner(runner, t)
                    clone.only_views = None if view is None else {view}
                    ref = probe.remote(clone, existing_ref, row_ref, 1, *after)
                    at = "" if view is None else f" @ view {view}"
                    jobs[ref] = f"{getattr(row[0], 'name', row[0])} / {task.name}{at}"
        with tqdm(total=len(jobs), desc="ray jobs", disable=not runner.progress) as bar:
            pending = list(jobs)
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                try:
                    calls, keys = ray.get(done[0])
                except ray.exceptions.RayTaskError as e:
                    if isinstance(e.cause, SentprobeError):  # bad input: its own message
                        raise e.cause from None
                    raise _job_failed(jobs[done[0]], e.cause or e) from None
                except ray.exceptions.RayError as e:  # e.g. its worker died MAX_RETRIES times
                    raise _job_failed(jobs[done[0]], e) from None
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


def _job_failed(job: str, error: BaseException) -> SentprobeError:
    """One line: which job, and the first line of what went wrong."""
    first = (str(error).strip().splitlines() or [""])[0]
    return SentprobeError(f"ray job {job} failed: {type(error).__name__}: {first}")


def _stored_records(store: ResultsStore) -> dict[str, ResultRecord]:
    """Every record in ``store`` by unit key: what the workers' runners may skip."""
    from sentprobe.evaluation.store import FIELDS, ResultRecord

    frame = store.to_frame()
    return {
        row["key"]: ResultRecord(**{name: row[name] for name in FIELDS})
        for row in frame.to_dict("records")
    }
