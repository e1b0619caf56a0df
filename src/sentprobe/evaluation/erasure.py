"""Erasure: an encoder's vectors with one task's property linearly removed, probed again.

Decodable is not the same as used (Elazar et al. 2021): removing a property and measuring what
else breaks asks whether the rest depends on it. LEACE (Belrose et al. 2023, the
``concept-erasure`` package) is the least-squares linear erasure: after it no linear
classifier predicts the task's labels better than a constant. Any projection also loses
information, so each LEACE erasure comes with a control: removing a random subspace of the
same rank (seeded), whose effect is the damage of erasing *something* of that size.

The eraser is fit on the erased task's training split only and applied to every task's vectors
(train, dev and test) when they are read: the embedding cache keeps the plain vectors under the
plain fingerprint, and an erased row is a row of its own (fingerprint, display name and the
``erasure`` of evaluation/identity.py), never merged with the plain one or the control.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sentprobe.datasets import ProbingTask
from sentprobe.encoders.base import Encoder, WrappedEncoder
from sentprobe.encoders.cache import EmbeddingCache, Vectors
from sentprobe.errors import SentprobeError, require
from sentprobe.evaluation.identity import ERASE_MARK

#: Bumped whenever a change alters erased vectors: part of each erased row's identity, so
#: results of an older eraser are computed again, not reused.
VERSION = "1"


def erased_tasks(names: Sequence[str], tasks: Sequence[ProbingTask]) -> list[ProbingTask]:
    """The tasks ``--erase`` names (a full name as ``-t`` gives it, or the short name: every
    task of that name, one per language or suite), each checked to have a training split
    with two labels; an unknown name is an error naming the run's tasks."""
    if names:
        require("concept_erasure", "erasure", "--erase")
    chosen: list[ProbingTask] = []
    for name in names:
        found = [t for t in tasks if name in (t.name, t.metadata.paper_name)]
        if not found:
            known = ", ".join(dict.fromkeys(t.metadata.paper_name or t.name for t in tasks))
            raise SentprobeError(f"--erase {name}: no such task in this run (tasks: {known})")
        for task in found:
            train = task.splits.get("train")
            if train is None or len(set(train.labels)) < 2:
                raise SentprobeError(
                    f"--erase {name}: {task.name} has no training split with two labels "
                    "to fit the eraser on"
                )
            if all(task is not t for t in chosen):
                chosen.append(task)
    return chosen


def check_erasable(encoder: Encoder) -> None:
    """An eraser is fit on one set of vectors and applied to others: refused for an encoder
    whose vectors are drawn per seed or built per task (one eraser would not fit them all)."""
    if encoder.uses_seed or encoder.prepare_per_task:
        why = "draws its weights per seed" if encoder.uses_seed else "is prepared per task"
        raise SentprobeError(f"--erase: {encoder.name} {why}; erase a deterministic encoder")


def _leace(X: np.ndarray, labels: Sequence[str]) -> tuple[Any, int]:
    """LEACE fit on ``X`` (n, d) and its labels: the eraser (a function of an array) and the
    rank of the subspace it removes."""
    import torch
    from concept_erasure import LeaceFitter

    classes = sorted(set(labels))
    z = torch.zeros(len(labels), len(classes), dtype=torch.float64)
    z[torch.arange(len(labels)), torch.tensor([classes.index(y) for y in labels])] = 1.0
    # Fit and erase on z-scored features: a probe z-scores them (probes/_common.py), so a
    # feature of tiny scale that LEACE's pseudo-inverse would treat as null is read at full
    # scale by the probe; on the same scale every feature is erased.
    X64 = np.asarray(X, dtype=np.float64)
    mean, sd = X64.mean(0), X64.std(0)
    sd[sd == 0] = 1.0
    eraser = LeaceFitter.fit(torch.from_numpy((X64 - mean) / sd), z).eraser
    rank = int(torch.linalg.matrix_rank(eraser.proj_left))

    def erase(x: np.ndarray) -> np.ndarray:
        scaled = torch.from_numpy((np.asarray(x, dtype=np.float64) - mean) / sd)
        return (eraser(scaled).numpy() * sd + mean).astype(np.float32)

    return erase, rank


def random_projection(dim: int, rank: int, seed: int) -> Any:
    """The orthogonal projection removing a random ``rank``-dimensional subspace of R^dim
    (a seeded Gaussian basis, orthonormalised): the control of an erasure of that rank."""
    basis, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((dim, rank)))

    def erase(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        return (x - (x @ basis) @ basis.T).astype(np.float32)

    return erase


class ErasedEncoder(WrappedEncoder):
    """``encoder`` with ``task``'s property erased (``method`` ``leace``, or ``random``: a random
    subspace of the rank LEACE removes, drawn with ``seed``; ``leace``: that LEACE erasure,
    whose fits it reuses, made here when not given). Its vectors are read from ``base`` (the
    plain encoder's vectors of the run's sentences, ``index``: sentence -> row) and erased per
    view; each view's eraser is fit on first use."""

    def __init__(
        self,
        encoder: Encoder,
        task: ProbingTask,
        method: str,
        base: Vectors,
        index: dict[str, int],
        seed: int = 0,
        leace: ErasedEncoder | None = None,
    ) -> None:
        super().__init__(encoder)
        self.task, self.method, self.seed = task, method, seed
        self.base, self.index = base, index
        if method == "leace":
            self.leace = self
        else:
            self.leace = leace or ErasedEncoder(encoder, task, "leace", base, index)
        meta = task.metadata
        what = f"{task.name}({meta.language},{task.content_hash()[:8]})"
        kind = "leace" if method == "leace" else f"random:seed{seed}"
        self.spec = f"{kind}:{what}:v{VERSION}"
        short = meta.paper_name or task.name
        self.name = f"{encoder.name} −{short}" + (" (random)" if method == "random" else "")
        self._fits: dict[int | None, tuple[Any, int]] = {}

    @property
    def fingerprint(self) -> str:
        return f"{self.encoder.fingerprint}{ERASE_MARK}{self.spec}"

    def _fit(self, view: int | None) -> tuple[Any, int]:
        if view not in self._fits:
            if self.method == "leace":
                train = self.task.splits["train"]
                rows = np.fromiter((self.index[s] for s in train.sentences), np.int64)
                self._fits[view] = _leace(self.base.take(rows, view), train.labels)
            else:  # a random subspace of the rank LEACE removes from this view
                rank = self.leace._fit(view)[1]
                dim = self.base.take(np.zeros(1, np.int64), view).shape[1]
                self._fits[view] = (random_projection(dim, rank, self.seed), rank)
        return self._fits[view]

    def erase(self, X: np.ndarray, view: int | None) -> np.ndarray:
        """``X`` (vectors of ``view``) with the property erased."""
        return self._fit(view)[0](X)

    def erasure(self, view: int | None) -> dict[str, Any]:
        """What a result of ``view`` records (``extra["erasure"]``)."""
        meta = self.task.metadata
        return {
            "spec": self.spec,
            "method": self.method,
            "task": meta.paper_name or self.task.name,
            "task_name": self.task.name,
            "language": meta.language,
            "task_hash": self.task.content_hash(),
            "rank": self._fit(view)[1],
            "seed": self.seed,
        }

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        raise SentprobeError("an erased encoder's vectors are read through ErasingCache")


class _ErasedVectors(Vectors):
    def __init__(self, encoder: ErasedEncoder, rows: np.ndarray) -> None:
        self.encoder, self.rows = encoder, rows

    def take(self, rows: np.ndarray, view: int | None = None) -> np.ndarray:
        return self.encoder.erase(self.encoder.base.take(self.rows[rows], view), view)


class ErasingCache(EmbeddingCache):
    """What the runner reads an :class:`ErasedEncoder`'s vectors from: the plain vectors it
    holds, erased as they are read; nothing erased is written anywhere."""

    def __init__(self) -> None:
        super().__init__(None)

    def vectors(
        self, encoder: Encoder, sentences: Sequence[str], progress: bool | str = True
    ) -> Vectors:
        if not isinstance(encoder, ErasedEncoder):
            raise SentprobeError(f"{encoder.name}: not an erased encoder")
        return _ErasedVectors(encoder, np.fromiter((encoder.index[s] for s in sentences), np.int64))
