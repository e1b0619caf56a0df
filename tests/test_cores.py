"""process_map: results in the items' order, worker errors raised in the caller, and each
worker given its share of the threads."""

import os

import pytest

from sentprobe.parallel import THREADS_VARIABLE, available_cores, process_map, thread_budget


def test_results_keep_the_order_of_the_items():
    assert process_map(abs, [-3, 2, -1, 0], jobs=2, progress=False) == [3, 2, 1, 0]
    assert process_map(abs, [-5], progress=False) == [5]  # one item: no worker process
    assert process_map(abs, [], progress=False) == []


def test_a_worker_error_is_raised_in_the_caller():
    with pytest.raises(ValueError):
        process_map(int, ["1", "not a number", "3"], jobs=2, progress=False)


def test_workers_share_the_threads(monkeypatch):
    monkeypatch.setenv(THREADS_VARIABLE, "4")
    assert thread_budget() == 4
    shares = process_map(os.getenv, [THREADS_VARIABLE] * 2, jobs=2, progress=False)
    assert shares == ["2", "2"]
    monkeypatch.delenv(THREADS_VARIABLE)
    assert thread_budget() == available_cores() >= 1
