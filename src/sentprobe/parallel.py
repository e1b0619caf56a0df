"""The machine's cores: how many a process may use, and an ordered map over worker processes.

Worker processes are spawned, never forked: a forked child of a process whose torch or
OpenMP thread pool has started can hang.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import TypeVar

from sentprobe.progress import tqdm

T = TypeVar("T")
R = TypeVar("R")

#: Threads per process for torch (``set_torch_threads``, the probes); a Ray job or a worker
#: of :func:`process_map` is given its share of the cores through it.
THREADS_VARIABLE = "SENTPROBE_NUM_THREADS"


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def thread_budget() -> int:
    """Threads this process should compute with: its share when it was given one, else
    every available core (torch starts with fewer in some containers)."""
    share = os.environ.get(THREADS_VARIABLE, "")
    return int(share) if share.isdigit() and int(share) > 0 else available_cores()


def _worker_setup(threads: int) -> None:
    os.environ[THREADS_VARIABLE] = str(threads)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle


def process_map(
    fn: Callable[[T], R],
    items: Iterable[T],
    *,
    jobs: int | None = None,
    desc: str = "",
    progress: bool = True,
) -> list[R]:
    """``[fn(item) for item in items]``, the items spread over ``jobs`` worker processes (default
    one per core; in this process when that is one), each with its share of the threads.

    ``fn`` and the items must pickle. Starting a worker costs seconds (it imports what ``fn``
    needs), so this pays for work of many seconds per item, not for small inputs. An error in
    a worker is raised here once the running items have finished.
    """
    items = list(items)
    jobs = max(1, min(jobs or available_cores(), len(items)))
    with tqdm(total=len(items), desc=desc, disable=not progress) as bar:
        if jobs == 1:
            out = []
            for item in items:
                out.append(fn(item))
                bar.update()
            return out
        context = multiprocessing.get_context("spawn")
        threads = max(1, thread_budget() // jobs)
        pool = ProcessPoolExecutor(
            jobs, mp_context=context, initializer=_worker_setup, initargs=(threads,)
        )
        try:
            futures = [pool.submit(fn, item) for item in items]
            for _ in as_completed(futures):
                bar.update()
            return [f.result() for f in futures]
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
