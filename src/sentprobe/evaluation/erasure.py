"""Erasure: an encoder's vectors with one task's property linearly removed, probed again.

Decodable is not the same as used (Elazar et al. 2021): removing a property and measuring what
else breaks asks whether the rest depends on it. LEACE (Belrose et al. 2023, the
``concept-erasure`` package) is the least-squares linear erasure: after it no linear
classifier predicts the task's labels *on the vectors it was fit on* better than a constant.
Any projection also loses information, so each LEACE erasure comes with controls: removing a
random subspace of the same rank in the same (z-scored) coordinates, one per control seed,
whose effect is the damage of erasing *something* of that size.

The eraser is fit on the erased task's training split (``fit="train"``) or on its training
and dev splits (``"train+dev"``), and applied to every task's vectors when they are read.
A probe trained on the vectors the eraser was fit on finds nothing to learn by construction,
so every erasure also gets a *held-out check* on items the eraser never saw: a probe trained
on the erased dev split and scored on the erased test split (``fit="train"``), or, where the
dev split was fit on or is missing, cross-fitted within the erased test split (stratified
folds: trained on the others, scored on each). The check is a row of its own
(``heldout:SPEC``), never merged with the erased score.

The embedding cache keeps the plain vectors under the plain fingerprint, and an erased row is
a row of its own (fingerprint, display name and the ``erasure`` of evaluation/identity.py),
never merged with the plain one, a control or the check.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sentprobe.datasets import ProbingTask
from sentprobe.datasets.task import Split
from sentprobe.encoders.base import Encoder, WrappedEncoder
from sentprobe.encoders.cache import EmbeddingCache, Vectors
from sentprobe.errors import SentprobeError, require
from sentprobe.evaluation.identity import ERASE_MARK

#: Bumped whenever a change alters erased vectors: part of each erased row's identity, so
#: results of an older eraser are computed again, not reused. 2: the random control works in
#: the eraser's z-scored coordinates.
VERSION = "2"
#: What the eraser can be fit on (``run --erase-fit``).
FITS = ("train", "train+dev")
#: How many random controls (seeds 0, 1, ...) each erasure gets by default.
CONTROL_SEEDS = 3
#: Folds of the cross-fitted held-out check (fewer when a label has fewer test items).
CHECK_FOLDS = 5


def erased_tasks(
    names: Sequence[str], tasks: Sequence[ProbingTask], fit: str = "train"
) -> list[ProbingTask]:
    """The tasks ``--erase`` names (a full name as ``-t`` gives it, or the short name: every
    task of that name, one per language or suite), each checked to have what the eraser is
    fit on (a training split with two labels; a dev split too for ``train+dev``) and a test
    split the held-out check can cross-fit on; an unknown name is an error naming the run's
    tasks."""
    if fit not in FITS:
        raise SentprobeError(f"--erase-fit {fit}: expected one of {', '.join(FITS)}")
    if names:
        require("concept_erasure", "erasure", "--erase")
    chosen = named_tasks("--erase", names, tasks)
    for name, task in chosen:
        train = task.splits.get("train")
        if train is None or len(set(train.labels)) < 2:
            raise SentprobeError(
                f"--erase {name}: {task.name} has no training split with two labels "
                "to fit the eraser on"
            )
        if fit == "train+dev" and not len(task.splits.get("dev") or []):
            raise SentprobeError(f"--erase-fit train+dev: {task.name} has no dev split")
        if fit == "train+dev" or not len(task.splits.get("dev") or []):
            counts = Counter(task.splits["test"].labels).most_common()
            if len(counts) < 2 or counts[-1][1] < 2:
                raise SentprobeError(
                    f"--erase {name}: {task.name}'s test split has too few items of a "
                    "label to cross-fit the held-out check on (at least 2 of each of "
                    "2 labels)"
                )
    return [task for _, task in chosen]


def erasure_record(
    spec: str, method: str, task: ProbingTask, rank: int, seed: int, fit: str
) -> dict[str, Any]:
    """What a result of an erased or intervened row records (``extra["erasure"]``): its spec,
    the task erased (name, language, content hash), the method, rank, seed and fit split."""
    meta = task.metadata
    return {
        "spec": spec,
        "method": method,
        "task": meta.paper_name or task.name,
        "task_name": task.name,
        "language": meta.language,
        "task_hash": task.content_hash(),
        "rank": rank,
        "seed": seed,
        "fit": fit,
    }


def named_tasks(
    option: str, names: Sequence[str], tasks: Sequence[ProbingTask]
) -> list[tuple[str, ProbingTask]]:
    """Each task ``option`` (``--erase``, ``--intervene``) names, with the name that found it:
    a full name as ``-t`` gives it, or the short name (every task of that name, one per
    language or suite); each task once, in order. An unknown name is an error naming the run's
    tasks."""
    chosen: list[tuple[str, ProbingTask]] = []
    for name in names:
        found = [t for t in tasks if name in (t.name, t.metadata.paper_name)]
        if not found:
            known = ", ".join(dict.fromkeys(t.metadata.paper_name or t.name for t in tasks))
            raise SentprobeError(f"{option} {name}: no such task in this run (tasks: {known})")
        chosen += [(name, t) for t in found if all(t is not c for _, c in chosen)]
    return chosen


def check_erasable(encoder: Encoder) -> None:
    """An eraser is fit on one set of vectors and applied to others: refused for an encoder
    whose vectors are drawn per seed or built per task (one eraser would not fit them all)."""
    if encoder.uses_seed or encoder.prepare_per_task:
        why = "draws its weights per seed" if encoder.uses_seed else "is prepared per task"
        raise SentprobeError(f"--erase: {encoder.name} {why}; erase a deterministic encoder")


@dataclass
class Fit:
    """A fitted erasure of one view: the function erasing an array, the rank it removes, and
    the z-scoring (mean and standard deviation of the vectors it was fit on) it works in."""

    erase: Callable[[np.ndarray], np.ndarray]
    rank: int
    mean: np.ndarray
    sd: np.ndarray


def _scaling(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation per feature (a constant feature's sd taken as 1)."""
    X64 = np.asarray(X, dtype=np.float64)
    mean, sd = X64.mean(0), X64.std(0)
    sd[sd == 0] = 1.0
    return mean, sd


def _in_z(mean: np.ndarray, sd: np.ndarray, remove: Callable[[np.ndarray], np.ndarray]) -> Any:
    """The erasure that z-scores vectors, applies ``remove`` there and scales back."""

    def erase(x: np.ndarray) -> np.ndarray:
        z = (np.asarray(x, dtype=np.float64) - mean) / sd
        return (remove(z) * sd + mean).astype(np.float32)

    return erase


def _leace(X: np.ndarray, labels: Sequence[str]) -> Fit:
    """LEACE fit on ``X`` (n, d) and its labels."""
    import torch
    from concept_erasure import LeaceFitter

    classes = sorted(set(labels))
    z = torch.zeros(len(labels), len(classes), dtype=torch.float64)
    z[torch.arange(len(labels)), torch.tensor([classes.index(y) for y in labels])] = 1.0
    # Fit and erase on z-scored features: a probe z-scores them (probes/_common.py), so a
    # feature of tiny scale that LEACE's pseudo-inverse would treat as null is read at full
    # scale by the probe; on the same scale every feature is erased.
    mean, sd = _scaling(X)
    scaled = (np.asarray(X, dtype=np.float64) - mean) / sd
    eraser = LeaceFitter.fit(torch.from_numpy(scaled), z).eraser
    rank = int(torch.linalg.matrix_rank(eraser.proj_left))
    remove = lambda z: eraser(torch.from_numpy(z)).numpy()  # noqa: E731
    return Fit(_in_z(mean, sd, remove), rank, mean, sd)


def random_projection(
    dim: int, rank: int, seed: int, mean: np.ndarray | None = None, sd: np.ndarray | None = None
) -> Any:
    """The orthogonal projection removing a random ``rank``-dimensional subspace (a seeded
    Gaussian basis, orthonormalised): the control of an erasure of that rank. Given the
    eraser's ``mean`` and ``sd`` it works in the eraser's z-scored coordinates, as LEACE
    does: in raw coordinates it would mix large-scale features into tiny-scale ones and wipe
    out what those carry for a standardising probe, damage no LEACE erasure does."""
    basis, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((dim, rank)))
    remove = lambda x: x - (x @ basis) @ basis.T  # noqa: E731
    if mean is None or sd is None:
        return lambda x: remove(np.asarray(x, dtype=np.float64)).astype(np.float32)
    return _in_z(mean, sd, remove)


class HeldOutTask(ProbingTask):
    """The erased task as its held-out check probes it: trained on its dev split and scored
    on its test split, or cross-fitted on stratified folds of its test split. Its data are
    the task's own, so it keeps the task's name and content hash: the check is told apart by
    its row (``heldout:SPEC``), and tables see no other task data in the task's column."""

    source_hash: str = ""

    def content_hash(self) -> str:
        return self.source_hash


def heldout_task(task: ProbingTask, fit: str) -> HeldOutTask:
    """``task`` as the held-out check of an eraser fit on ``fit`` probes it: dev -> test when
    the eraser never saw dev (``train``) and there is one, else cross-fitted on the test
    split (the eraser never saw it)."""
    dev, test = task.splits.get("dev"), task.splits["test"]
    if fit == "train" and dev is not None and len(dev):
        made = HeldOutTask(task.metadata, {"train": dev, "test": test}, list(task.warnings))
        made.source_hash = task.content_hash()
        return made
    from sklearn.model_selection import StratifiedKFold

    labels = np.asarray(test.labels)
    k = min(CHECK_FOLDS, min(Counter(test.labels).values()))
    folds = []
    for tr, te in StratifiedKFold(k, shuffle=True, random_state=0).split(labels, labels):
        folds.append({"train": _subset(test, tr), "test": _subset(test, te)})
    made = HeldOutTask(task.metadata, folds[0], list(task.warnings), folds=folds)
    made.source_hash = task.content_hash()
    return made


def check_protocol(task: ProbingTask) -> str:
    """How a :func:`heldout_task` is scored, in words for tables."""
    if task.folds is None:
        return "trained on erased dev, scored on erased test"
    return f"{len(task.folds)}-fold cross-fitting within erased test"


def _subset(split: Split, rows: np.ndarray) -> Split:
    pick = lambda xs: None if xs is None else [xs[i] for i in rows]  # noqa: E731
    return Split(
        [split.sentences[i] for i in rows],
        [split.labels[i] for i in rows],
        pick(split.sentences2),
        pick(split.groups),
        pick(split.pairs),
    )


class ErasedEncoder(WrappedEncoder):
    """``encoder`` with ``task``'s property erased (``method`` ``leace``, or ``random``: a random
    subspace of the rank LEACE removes, drawn with ``seed`` in LEACE's z-scored coordinates;
    ``leace``: that LEACE erasure, whose fits it reuses, made here when not given). ``fit``:
    the splits LEACE is fit on (:data:`FITS`). ``check``: this is the held-out check of
    ``leace`` (its vectors, a row of its own). Its vectors are read from ``base`` (the plain
    encoder's vectors of the run's sentences, ``index``: sentence -> row) and erased per
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
        fit: str = "train",
        check: bool = False,
    ) -> None:
        super().__init__(encoder)
        self.task, self.method, self.seed, self.check = task, method, seed, check
        self.base, self.index = base, index
        if method == "leace" and not check:
            self.leace, self.fit = self, fit
        else:
            self.leace = leace or ErasedEncoder(encoder, task, "leace", base, index, fit=fit)
            self.fit = self.leace.fit
        meta = task.metadata
        what = f"{task.name}({meta.language},{task.content_hash()[:8]})"
        kind = "leace" if method == "leace" else f"random:seed{seed}"
        fitted = "" if self.fit == "train" else f"[{self.fit}]"
        self.spec = f"{'heldout:' if check else ''}{kind}{fitted}:{what}:v{VERSION}"
        short = meta.paper_name or task.name
        suffix = " (held-out check)" if check else " (random)" if method == "random" else ""
        self.name = f"{encoder.name} −{short}" + suffix
        self._fits: dict[int | None, Fit] = {}

    @property
    def fingerprint(self) -> str:
        return f"{self.encoder.fingerprint}{ERASE_MARK}{self.spec}"

    def _fit(self, view: int | None) -> Fit:
        if self.leace is not self:
            leace = self.leace._fit(view)
            if self.method == "leace":  # the held-out check: LEACE's own erasure
                return leace
        if view not in self._fits:
            if self.method == "leace":
                splits = ("train", "dev") if self.fit == "train+dev" else ("train",)
                sentences = [s for n in splits for s in self.task.splits[n].sentences]
                labels = [y for n in splits for y in self.task.splits[n].labels]
                rows = np.fromiter((self.index[s] for s in sentences), np.int64)
                self._fits[view] = _leace(self.base.take(rows, view), labels)
            else:  # a random subspace of the rank LEACE removes, in LEACE's coordinates
                dim = len(leace.mean)
                erase = random_projection(dim, leace.rank, self.seed, leace.mean, leace.sd)
                self._fits[view] = Fit(erase, leace.rank, leace.mean, leace.sd)
        return self._fits[view]

    def erase(self, X: np.ndarray, view: int | None) -> np.ndarray:
        """``X`` (vectors of ``view``) with the property erased."""
        return self._fit(view).erase(X)

    def erasure(self, view: int | None) -> dict[str, Any]:
        """What a result of ``view`` records (``extra["erasure"]``): the spec, what was erased
        and how; a held-out check also the spec of the erasure it checks (``of``)."""
        record = erasure_record(
            self.spec, self.method, self.task, self._fit(view).rank, self.seed, self.fit
        )
        return record | ({"check": "heldout", "of": self.leace.spec} if self.check else {})

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
