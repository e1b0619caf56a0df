"""``--stream``: probe every view of an encoder as its vectors are produced, storing none.

For each task, the training sentences are encoded batch by batch and each batch is added to
the ridge probe's sufficient statistics of every view at once
(:class:`~sentprobe.probes.closed_form.RidgeStats`: a Gram matrix, class sums and counts per
view); then every view is solved for every L2 strength in one batched eigendecomposition
(:class:`~sentprobe.probes.closed_form.RidgeSolution`), and the dev and test sentences are
encoded and scored batch by batch, keeping only each strength's predicted class. The strength
best on dev is kept per view, as ``RidgeProbe.fit`` chooses it. Each sentence goes through
the encoder once; nothing is written to the embedding cache, and what is held is the
statistics (``views x (dim² + 3 dim + 2 classes x dim)`` float64 numbers) plus one batch.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch

from sentprobe.datasets import ProbingTask
from sentprobe.encoders.base import Encoder
from sentprobe.encoders.cache import _encode_batches
from sentprobe.errors import SentprobeError
from sentprobe.probes.closed_form import RidgeProbe, RidgeSolution, RidgeStats
from sentprobe.progress import tqdm


def check_streamable(task: ProbingTask, est: Any, probe: str, protocol: str | None) -> None:
    """Refuse, in one line, a unit ``--stream`` cannot compute: a probe that needs the
    vectors themselves, a task without a dev split (CV needs the items), a fold protocol."""
    if not isinstance(est, RidgeProbe):
        raise SentprobeError(
            f"--stream fits the closed-form probe from statistics; --probe {probe} needs the "
            "vectors (use --probe ridge, or run without --stream)"
        )
    if protocol is not None or "dev" not in task.splits:
        raise SentprobeError(
            f"--stream: task {task.name} has no dev split to choose the L2 strength on "
            "(or is probed by folds); run it without --stream"
        )


def _batches(
    encoder: Encoder, sentences: Sequence[str]
) -> Iterator[tuple[np.ndarray, np.ndarray, float]]:
    """(indices, vectors as (b, views, dim), seconds the encoder took) of length-sorted
    batches of ``sentences``."""
    order = np.argsort([len(s) for s in sentences], kind="stable")
    size = max(1, int(encoder.batch_size))
    groups = [order[i : i + size] for i in range(0, len(order), size)]
    stream = _encode_batches(encoder, [[sentences[i] for i in g] for g in groups])
    try:
        start = time.perf_counter()
        for idx, vectors in zip(groups, stream, strict=True):
            seconds = time.perf_counter() - start
            X = vectors if vectors.ndim == 3 else vectors[:, None]
            yield idx, X, seconds
            start = time.perf_counter()
    finally:
        stream.close()


def stream_task(
    encoder: Encoder,
    task: ProbingTask,
    views: int,
    probe: RidgeProbe,
    progress: bool = True,
) -> tuple[RidgeSolution, np.ndarray, np.ndarray, dict[str, float]]:
    """One pass of ``task``'s sentences through ``encoder``: the ridge solution of every
    view, the codes every (view, strength) predicts on dev and on test ((n, views,
    strengths) each), and the seconds spent encoding and probing."""
    splits = task.splits
    train, dev, test = splits["train"], splits["dev"], splits["test"]
    seconds = {"encode": 0.0, "probe": 0.0}
    bar = tqdm(
        total=len(train) + len(dev) + len(test),
        desc=f"streaming {encoder.name} / {task.name}",
        unit="sent",
        disable=not progress,
        leave=False,
    )
    stats = RidgeStats(np.unique(np.asarray(train.labels)), views=views, device=probe.device)
    labels = np.asarray(train.labels)
    with bar:
        for idx, X, enc in _batches(encoder, train.sentences):
            t0 = time.perf_counter()
            stats.update(X, labels[idx])
            seconds["encode"] += enc
            seconds["probe"] += time.perf_counter() - t0
            bar.update(len(idx))
        t0 = time.perf_counter()
        solution = RidgeSolution(stats, probe._strengths())
        del stats  # the solution holds what scoring needs
        seconds["probe"] += time.perf_counter() - t0
        scored = []
        for split in (dev, test):
            codes = np.empty((len(split), views, len(solution.l2)), dtype=np.int32)
            for idx, X, enc in _batches(encoder, split.sentences):
                t0 = time.perf_counter()
                codes[idx] = solution.predict_codes(X).cpu().numpy()
                seconds["encode"] += enc
                seconds["probe"] += time.perf_counter() - t0
                bar.update(len(idx))
            scored.append(codes)
    return solution, scored[0], scored[1], seconds


def adopt_view(
    est: RidgeProbe, solution: RidgeSolution, view: int, dev_codes: np.ndarray, y_dev: Any
) -> int:
    """Make ``est`` the view's model at the strength best on dev; returns the index of that
    strength (to read its test codes)."""
    est._adopt(solution, view, torch.from_numpy(dev_codes[:, view].astype(np.int64)), y_dev)
    return int(np.asarray([c == est.best_params_ for c in est._configs()]).argmax())


def stream_memory(views: int, dim: int, classes: int) -> int:
    """Bytes the statistics of ``views`` views of ``dim`` dimensions hold (float64)."""
    return 8 * views * (dim * dim + 3 * dim + 2 * classes * dim)
