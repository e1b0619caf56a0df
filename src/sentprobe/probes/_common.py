"""Shared plumbing for the probes: label encoding, feature scaling, thread set-up, CV folds
(input and parameter checks: ``_validation.py``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import product
from typing import Any

import numpy as np
import torch

from sentprobe.errors import SentprobeError
from sentprobe.parallel import thread_budget

#: Below this many input values (items x dimensions) a probe trains on one thread: its
#: matrices are too small for threads to pay, and on a busy machine their synchronisation
#: made a fit on iris 75 times slower with two threads than with one (173 s against 2.3 s).
#: sample-en's tasks (1,200 x 384 MiniLM vectors) stay above it, on every core as before.
SMALL_FIT = 100_000


@contextmanager
def probe_threads(n_items: int, n_dims: int) -> Iterator[None]:
    """Train with this process's thread budget (one thread for a small fit), then give torch
    back the thread count it had: fitting a probe leaves the global torch state unchanged."""
    before = torch.get_num_threads()
    n = 1 if n_items * n_dims < SMALL_FIT else thread_budget()  # a Ray or worker share
    if n != before:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


def as_grid(**params: Any) -> list[dict[str, Any]]:
    """Expand parameters that may be scalars or sequences into a list of configurations."""
    keys = list(params)
    values = [v if isinstance(v, (list, tuple, np.ndarray)) else [v] for v in params.values()]
    return [dict(zip(keys, combo)) for combo in product(*values)]


def encode_labels(y: Sequence, classes: np.ndarray) -> torch.Tensor:
    """Map labels to indices of ``classes``; labels unseen in training become -1 (never right)."""
    labels = np.asarray(y)
    pos = np.searchsorted(classes, labels)
    pos = np.clip(pos, 0, len(classes) - 1)
    found = classes[pos] == labels
    return torch.from_numpy(np.where(found, pos, -1).astype(np.int64))


def available_memory() -> int | None:
    """Bytes of memory the system can give without swapping (``MemAvailable`` of Linux's
    ``/proc/meminfo``); None where that cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_fit_size(probe: str, n_items: int, n_classes: int, n_dims: int) -> None:
    """Refuse, before any training, a fit whose arrays cannot fit in memory: a full-batch
    probe holds at least two float32 matrices of items x classes (scores and their gradient)
    and the weights; 20,000 classes of 3 items each took 9.9 GB, and a million classes would
    exhaust any machine after minutes of work. The number is a lower bound."""
    need = 4 * (2 * n_items * n_classes + 3 * n_classes * n_dims)
    have = available_memory()
    if have is not None and need > have:
        raise SentprobeError(
            f"{probe}: training on {n_items:,} items of {n_classes:,} classes ({n_dims:,} "
            f"dimensions) needs at least {need / 1e9:,.1f} GB of memory, and {have / 1e9:,.1f} "
            "GB is available; refused before training: merge rare classes, use fewer items, "
            "or run it on a machine with more memory"
        )


class Standardizer:
    """z-scores features with training statistics: makes one L2 grid fit every encoder's scale.

    As scikit-learn's ``StandardScaler``: population standard deviation, and a feature that is
    constant on train (variance within float rounding of zero) gets scale 1, so a test value
    that differs from the training constant stays a small number instead of exploding.
    """

    def __init__(self, X: torch.Tensor) -> None:
        X64 = X.double()
        mean = X64.mean(0)
        var = X64.var(0, correction=0)
        # sklearn's _is_constant_feature: the variance is below what rounding alone can produce
        n, eps = len(X64), torch.finfo(torch.float64).eps
        constant = var <= n * eps * var + (n * mean * eps) ** 2
        self.mean = mean.to(X.dtype)
        self.scale = torch.where(constant, torch.ones_like(var), var.sqrt()).to(X.dtype)

    def __call__(self, X: torch.Tensor) -> torch.Tensor:
        return (X - self.mean) / self.scale


def holdout_split(y: np.ndarray, fraction: float, seed: int) -> np.ndarray | None:
    """Indices of a held-out ``fraction`` of the items (at least one; one of each class where
    every class has two items or more, as scikit-learn's stratified ``train_test_split``);
    None when fewer than two items leave nothing to hold out."""
    from sklearn.model_selection import train_test_split

    if len(y) < 2:
        return None
    counts = np.unique(y, return_counts=True)[1]
    n_held = min(max(int(np.ceil(fraction * len(y))), 1), len(y) - 1)
    stratify = None
    if counts.min() >= 2 and len(counts) <= n_held <= len(y) - len(counts):
        stratify = y
    elif counts.min() >= 2 and len(counts) <= len(y) - len(counts):
        n_held, stratify = len(counts), y
    _, held = train_test_split(
        np.arange(len(y)), test_size=n_held, random_state=seed, stratify=stratify
    )
    return np.sort(held)


def stratified_folds(y: np.ndarray, k: int, seed: int) -> list[np.ndarray]:
    """Index arrays of ``k`` folds with each class spread evenly (sklearn's StratifiedKFold)."""
    from sklearn.model_selection import KFold, StratifiedKFold

    smallest = int(np.unique(y, return_counts=True)[1].min())
    if smallest >= 2:  # fewer folds than k when a class is too small to appear in each
        splitter = StratifiedKFold(n_splits=min(k, smallest), shuffle=True, random_state=seed)
    else:
        splitter = KFold(n_splits=k, shuffle=True, random_state=seed)
    return [test for _, test in splitter.split(np.zeros(len(y)), y)]
