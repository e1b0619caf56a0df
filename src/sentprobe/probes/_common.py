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


#: Rows per block of the reductions over items below: short enough that no BLAS or torch
#: kernel splits one block's sum between threads (a split is what makes a sum follow the
#: thread count), long enough that the per-block overhead stays below a percent.
BLOCK = 256


@contextmanager
def single_threaded() -> Iterator[None]:
    """Run the enclosed torch work on one thread: for small kernels whose result follows
    the thread count (LAPACK's eigendecomposition), where one thread costs nothing."""
    before = torch.get_num_threads()
    if before != 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if before != 1:
            torch.set_num_threads(before)


def _pad_rows(t: torch.Tensor, rows: int) -> torch.Tensor:
    extra = rows - len(t)
    return t if not extra else torch.cat([t, t.new_zeros(extra, *t.shape[1:])])


def item_blocks(X: torch.Tensor) -> torch.Tensor:
    """``X`` (n, p) as ``(c, p, BLOCK)``: its rows in blocks, transposed, zero rows padding
    the last block; the left operand of :func:`item_product`."""
    n, p = X.shape
    c = max(1, -(-n // BLOCK))
    return _pad_rows(X, c * BLOCK).view(c, BLOCK, p).transpose(1, 2).contiguous()


def item_product(blocks: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """``X.T @ M`` (p, m) for ``blocks = item_blocks(X)``, the same bits for any thread count.

    One matrix product over all n items lets the BLAS split the sum over items between
    threads when the result is small (e.g. 385 x 140 from 1,200 items), so its rounding,
    and from there an L-BFGS path, followed the thread count. Here each block of ``BLOCK``
    items is one product of its own (not split), and the blocks' products are added in a
    fixed order (a sum over the blocks axis, parallel over the result's entries only).
    """
    c, p, B = blocks.shape
    Mb = _pad_rows(M, c * B).view(c, B, -1)
    out = None
    for s in range(0, c, 16):  # 16 blocks at a time: a (16, p, m) temporary at most
        part = torch.bmm(blocks[s : s + 16], Mb[s : s + 16]).sum(0)
        out = part if out is None else out.add_(part)
    assert out is not None
    return out


def row_sums(t: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
    """``t.sum(-1)`` (t: (g, m)) in an order that does not follow the thread count.

    torch splits a sum between threads when it has a single result (g = 1) of at least
    32,768 terms; here every row is first summed in blocks of ``BLOCK`` (many results,
    each on one thread), then over its few blocks.
    """
    g, m = t.shape
    c = max(1, -(-m // BLOCK))
    if c * BLOCK != m:
        t = torch.cat([t, t.new_zeros(g, c * BLOCK - m)], 1)
    return t.reshape(g, c, BLOCK).sum(-1, dtype=dtype).sum(-1)


def as_grid(**params: Any) -> list[dict[str, Any]]:
    """Expand parameters that may be scalars or sequences into a list of configurations."""
    keys = list(params)
    values = [v if isinstance(v, (list, tuple, np.ndarray)) else [v] for v in params.values()]
    return [dict(zip(keys, combo)) for combo in product(*values)]


def encode_labels(y: Sequence | np.ndarray, classes: np.ndarray) -> torch.Tensor:
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
