"""Kim et al. (2019)'s probing protocol: cross-validation on a task's folds, sentence-pair
features, and an NLI head trained once per (encoder, training file) and scored zero-shot.

A task with ``folds`` (see ``ProbingTask``) is probed as one *unit* per (row, seed) whose
result is the mean test accuracy over its folds (each fold's test split used once, a fresh
probe per fold, early-stopped on the fold's dev split); the per-fold accuracies go to
``extra["fold_scores"]`` (tables show their standard deviation) and the predictions of all
folds, concatenated, are the unit's stored predictions (so agreement, confidence intervals and
sub-type breakdowns see every item once).

Inputs by format (``TaskMetadata.format``): one sentence -> its vector; "acceptability-pair"
(EOS) -> both vectors concatenated; "nli-pair" -> [u, v, |u - v|, u * v]. Text rows (Majority,
NB) get the sentence, or both sentences joined by a space.

NLI sets (``format == "nli-pair"``) are scored *zero-shot* when the run has an NLI training
set (``run --nli-train``): a head trained on it (cached on disk under the encoder's
fingerprint, the file's hash and the probe, so the five sets and later runs reuse it) labels
every item. Without one they fall back to cross-validation within the set, recorded as
protocol "cv-fallback", which tables mark as not the paper's protocol.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import pickle
import secrets
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sentprobe.datasets.loaders.nli import NLIPairs, drop_pairs
from sentprobe.datasets.task import ProbingTask, Split
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.predictions import Predictions
from sentprobe.io import atomic_write_bytes, create_private
from sentprobe.probes import MLPProbe
from sentprobe.registry import probes

FOLDS, FALLBACK, ZERO_SHOT, PAIRS = "folds", "cv-fallback", "zero-shot", "pairs"
#: What each protocol means, for tables and docs.
PROTOCOL_NOTES = {
    PAIRS: "sentence pairs on the task's own train / dev / test splits, features by format",
    FOLDS: "cross-validation on the task's folds (each fold's test split once), mean over folds",
    FALLBACK: "k-fold CV within the NLI set (no --nli-train): NOT the paper's protocol, which "
    "scores NLI sets zero-shot with a head trained on MNLI",
    ZERO_SHOT: "zero-shot: an NLI head trained on --nli-train labels every item",
}
#: The paper's classifier (Section 3.3: "a 512d MLP"; jiant: tanh, dropout 0.2, Adam 1e-4,
#: batches of 32): sentprobe's sigmoid MLP with 512 hidden units and dropout 0.2, but Adam at
#: 2e-3 on batches of 128, dev checked every epoch, stopped after 2 stale checks (at most 20):
#: a run of the suite fits ~540 such probes, and this keeps it within minutes on a CPU.
KIM_MLP: dict[str, Any] = {
    "nhid": 512,
    "dropout": 0.2,
    "l2": 1e-5,
    "lr": 2e-3,
    "batch_size": 128,
    "eval_steps": 1,
    "max_checks": 20,
    "patience": 2,
}
#: Share of the NLI training file held out for the head's early stopping.
NLI_DEV_SHARE = 0.1

probes.register("kim-mlp", lambda task, seed=0: MLPProbe(**KIM_MLP, random_state=seed))

#: sentences -> the row's inputs for them (a vector matrix, or the texts themselves)
Lookup = Callable[[Sequence[str]], Any]


def protocol(task: ProbingTask, nli_train: NLIPairs | None) -> str | None:
    """How ``task`` is probed: None (single sentences on its train/dev/test splits), or one
    of the protocols (pairs on those splits, folds, zero-shot)."""
    if task.folds is None:
        pairs = any(split.sentences2 is not None for split in task.splits.values())
        return PAIRS if pairs else None
    if task.metadata.format == "nli-pair":
        return ZERO_SHOT if nli_train is not None else FALLBACK
    return FOLDS


def protocol_signature(task: ProbingTask, nli_train: NLIPairs | None) -> str:
    """What to add to a unit's probe signature: "" for ordinary tasks (their keys stay as
    they were), else the protocol (and the NLI training file's hash)."""
    name = protocol(task, nli_train)
    if name is None:
        return ""
    return f":{name}:{nli_train.sha}" if name == ZERO_SHOT and nli_train else f":{name}"


def pair_inputs(fmt: str, first: Any, second: Any | None) -> Any:
    """Inputs of items from the inputs of their sentences (see the module docstring)."""
    if second is None or fmt in ("single", "acceptability-single"):
        return first
    if not isinstance(first, np.ndarray):
        return [f"{a} {b}" for a, b in zip(first, second, strict=True)]
    if fmt == "nli-pair":
        return np.hstack([first, second, np.abs(first - second), first * second])
    return np.hstack([first, second])


def split_inputs(split: Split, fmt: str, lookup: Lookup) -> Any:
    second = None if split.sentences2 is None else lookup(split.sentences2)
    return pair_inputs(fmt, lookup(split.sentences), second)


def all_items(task: ProbingTask) -> Split:
    """Every item once: the folds' test splits, concatenated in fold order."""
    parts = [fold["test"] for fold in task.folds or []] or [task.splits["test"]]

    def cat(attr: str) -> list[str] | None:
        lists = [getattr(p, attr) for p in parts]
        return None if any(x is None for x in lists) else [v for x in lists for v in x]

    return Split(
        sentences=[s for p in parts for s in p.sentences],
        labels=[s for p in parts for s in p.labels],
        sentences2=cat("sentences2"),
        groups=cat("groups"),
        pairs=cat("pairs"),
        clusters=cat("clusters"),
    )


@dataclass
class Outcome:
    """What a unit produced, ready for the results store."""

    predictions: Predictions
    test_score: float
    dev_score: float | None
    selection: str
    config: dict[str, Any]
    n_train: int
    n_dev: int
    n_test: int
    dim: int
    extra: dict[str, Any] = field(default_factory=dict)

    def fields(self) -> dict[str, Any]:
        """The ``ResultRecord`` fields (everything but the predictions and ``extra``)."""
        return {
            "test_score": self.test_score,
            "dev_score": self.dev_score,
            "selection": self.selection,
            "config": self.config,
            "n_train": self.n_train,
            "n_dev": self.n_dev,
            "n_test": self.n_test,
            "dim": self.dim,
        }


def without_evaluated_pairs(pairs: NLIPairs, tasks: Sequence[ProbingTask]) -> NLIPairs:
    """``pairs`` less every training pair that is an item of an NLI task of ``tasks``
    (``run --nli-train``, unless ``--keep-nli-overlap``); each such task says how many went."""
    nli = [t for t in tasks if t.metadata.format == "nli-pair"]
    items = [all_items(t) for t in nli]
    evaluated = [(p, h) for s in items for p, h in zip(s.sentences, s.sentences2 or [])]
    kept = drop_pairs(pairs, evaluated)
    if kept.dropped:
        for task in nli:
            task.warnings.append(
                f"--nli-train: {kept.dropped} of {len(pairs)} training pairs left out because "
                "the probed NLI sets hold them (zero-shot stays zero-shot; --keep-nli-overlap "
                "keeps them)"
            )
    return kept


def pair_accuracy(pairs: Sequence[str], correct: Any) -> dict[str, float | int]:
    """Minimal-pair accuracy (``extra``): the share of pairs (items with one pair id, at least
    two of them) whose every item is right, and how many pairs; {} without pair ids."""
    if not len(pairs):
        return {}
    members: dict[str, list[bool]] = {}
    for pair, ok in zip(pairs, correct, strict=True):
        members.setdefault(pair, []).append(bool(ok))
    full = [all(v) for v in members.values() if len(v) >= 2]
    return {"pair_accuracy": float(np.mean(full)), "pairs": len(full)} if full else {}


def _heuristic(task: ProbingTask) -> dict[str, int]:
    """``extra`` of a unit scored on heuristic labels (tables mark its cell)."""
    n = task.metadata.heuristic_labels
    return {"heuristic_labels": n} if n else {}


def check_heuristic_labels(tasks: Sequence[ProbingTask], allow: bool) -> list[ProbingTask]:
    """The tasks to score: items whose labels are a generator's rule, not annotators'
    (generated NLI sets labelled by a confirmed rule) are scored only when ``allow`` (``run
    --allow-heuristic-labels``): a number on them measures agreement with the rule, not with
    people. Without it such a set is skipped in one warning line while the others run; when
    every set is such a set, the run is refused."""
    flagged = [t for t in tasks if t.metadata.heuristic_labels]
    if not flagged or allow:
        return list(tasks)
    shown = ", ".join(f"{t.name} ({t.metadata.heuristic_labels})" for t in flagged)
    advice = (
        "annotate them (sentprobe annotate) or pass --allow-heuristic-labels to score them "
        "anyway (their cells are marked)"
    )
    if len(flagged) == len(tasks):
        raise SentprobeError(f"items with heuristic labels, not annotators': {shown}; {advice}")
    for t in flagged:
        warnings.warn(
            f"skipped {t.name}: {t.metadata.heuristic_labels} items with heuristic labels, not "
            f"annotators'; {advice}",
            stacklevel=2,
        )
    return [t for t in tasks if not t.metadata.heuristic_labels]


def _dim(X: Any) -> int:
    return int(X.shape[1]) if isinstance(X, np.ndarray) else 0


def cross_validate(
    task: ProbingTask, lookup: Lookup, make_estimator: Callable[[], Any], name: str
) -> Outcome:
    """One fresh estimator per fold, fitted on train (early-stopped on dev), scored on test."""
    folds = task.folds or [task.splits]
    fmt = task.metadata.format
    gold: list[str] = []
    pred: list[str] = []
    groups: list[str] = []
    pairs: list[str] = []
    scores: list[float] = []
    dev_scores: list[float] = []
    est: Any = None
    dim = 0
    for fold in folds:
        tr, dv, te = fold["train"], fold.get("dev"), fold["test"]
        est = make_estimator()
        X_tr = split_inputs(tr, fmt, lookup)
        dim = _dim(X_tr)
        dev = (split_inputs(dv, fmt, lookup), dv.labels) if dv is not None and len(dv) else ()
        est.fit(X_tr, tr.labels, *dev)
        predicted = [str(p) for p in est.predict(split_inputs(te, fmt, lookup))]
        scores.append(float(np.mean(np.asarray(predicted) == np.asarray(te.labels))))
        if getattr(est, "best_score_", None) is not None:
            dev_scores.append(float(est.best_score_))
        gold += te.labels
        pred += predicted
        groups += te.groups or []
        pairs += te.pairs or []
    predictions = Predictions.from_labels(gold, pred, task.labels, groups or None)
    mean = lambda xs: float(np.mean(xs)) if xs else None  # noqa: E731
    return Outcome(
        predictions=predictions,
        test_score=float(np.mean(scores)),
        dev_score=mean(dev_scores),
        selection=f"{name}{len(folds)}" if task.folds else getattr(est, "selection_", "dev"),
        config=dict(getattr(est, "best_params_", {}) or {}),
        n_train=round(float(np.mean([len(f["train"]) for f in folds]))),
        n_dev=round(float(np.mean([len(f["dev"]) if "dev" in f else 0 for f in folds]))),
        n_test=len(gold),
        dim=dim,
        extra={
            "protocol": name,
            "fold_scores": scores,
            **_heuristic(task),
            **pair_accuracy(pairs, np.asarray(gold) == np.asarray(pred)),
        },  # fmt: skip
    )


def train_head(pairs: NLIPairs, lookup: Lookup, estimator: Any, seed: int = 0) -> Any:
    """Fit ``estimator`` on the NLI pairs' features, early-stopped on a stratified
    ``NLI_DEV_SHARE`` of them (seeded)."""
    y = np.asarray(pairs.labels, dtype=object)
    rng = np.random.default_rng(seed)
    dev = np.zeros(len(y), dtype=bool)
    for label in sorted(set(pairs.labels)):
        idx = np.flatnonzero(y == label)
        rng.shuffle(idx)
        dev[idx[: int(len(idx) * NLI_DEV_SHARE)]] = True
    X = pair_inputs("nli-pair", lookup(pairs.premises), lookup(pairs.hypotheses))
    take = (lambda m: X[m]) if isinstance(X, np.ndarray) else (lambda m: list(np.asarray(X)[m]))
    dev_args = (take(dev), list(y[dev])) if dev.any() else ()
    estimator.fit(take(~dev), list(y[~dev]), *dev_args)
    estimator.n_head_train_ = int((~dev).sum())
    estimator.n_head_dev_ = int(dev.sum())
    return estimator


#: Names the file holding this user's key for signing cached NLI heads (default
#: ``$XDG_CONFIG_HOME/sentprobe/head-signing.key``, else ``~/.config/...``).
KEY_FILE_ENV = "SENTPROBE_KEY_FILE"
_TAG = 32  # bytes of an HMAC-SHA256 tag


def _key_file() -> Path:
    if os.environ.get(KEY_FILE_ENV):
        return Path(os.environ[KEY_FILE_ENV])
    config = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(config) / "sentprobe" / "head-signing.key"


def signing_key() -> bytes | None:
    """This user's secret for signing the heads sentprobe pickles, made on first use (mode
    0600, kept outside every cache, store and suite); None when it cannot be kept (heads
    then stay in memory). A head file is unpickled only when signed with it, so a cache
    from someone else cannot run code here: their heads are trained again."""
    path = _key_file()
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        try:
            create_private(path, secrets.token_bytes(_TAG))  # another process's is kept
            key = path.read_bytes()
        except OSError:
            return None
    except OSError:
        return None
    return key if len(key) >= _TAG else None


class HeadCache:
    """Trained NLI heads by key, in memory and as signed pickles under ``directory``
    (written atomically, so a killed run leaves no half-written head). Each file starts
    with an HMAC-SHA256 of the pickle under :func:`signing_key`; one without a valid tag
    (another user's, or planted) is never unpickled: the head is trained again."""

    def __init__(self, directory: str | Path | None) -> None:
        self.directory = None if directory is None else Path(directory)
        self._memory: dict[str, Any] = {}

    @staticmethod
    def key(fingerprint: str, pairs: NLIPairs, signature: str, seed: int) -> str:
        raw = json.dumps([fingerprint, pairs.sha, signature, seed])
        return hashlib.sha256(raw.encode()).hexdigest()[:32]

    def get(self, key: str, train: Callable[[], Any]) -> tuple[Any, bool]:
        """(head, whether it came from the cache)."""
        if key in self._memory:
            return self._memory[key], True
        stored = self._file(key)
        if stored is not None and stored[0].is_file():
            data = stored[0].read_bytes()
            tag, body = data[:_TAG], data[_TAG:]
            if hmac.compare_digest(tag, hmac.new(stored[1], body, "sha256").digest()):
                try:
                    head = pickle.loads(body)  # noqa: S301 (signed by this user's key)
                    self._memory[key] = head
                    return head, True
                except (pickle.UnpicklingError, EOFError, AttributeError, ImportError):
                    pass  # an unreadable head is retrained and rewritten
        head = train()
        self._memory[key] = head
        if stored is not None:
            body = pickle.dumps(head)
            atomic_write_bytes(stored[0], hmac.new(stored[1], body, "sha256").digest() + body)
        return head, False

    def _file(self, key: str) -> tuple[Path, bytes] | None:
        """Where head ``key`` is kept on disk, and the key that signs it (None: memory only)."""
        secret = None if self.directory is None else signing_key()
        if self.directory is None or secret is None:
            return None
        return self.directory / f"{key}.pkl", secret


def zero_shot(task: ProbingTask, lookup: Lookup, head: Any, pairs: NLIPairs) -> Outcome:
    """Every item of ``task`` labelled by the trained NLI ``head``."""
    items = all_items(task)
    X = split_inputs(items, task.metadata.format, lookup)
    predicted = [str(p) for p in head.predict(X)]
    predictions = Predictions.from_labels(
        items.labels, predicted, task.labels, items.groups, items.clusters
    )
    return Outcome(
        predictions=predictions,
        test_score=predictions.accuracy,
        dev_score=getattr(head, "best_score_", None),
        selection="nli-train",
        config=dict(getattr(head, "best_params_", {}) or {}),
        n_train=int(getattr(head, "n_head_train_", len(pairs))),
        n_dev=int(getattr(head, "n_head_dev_", 0)),
        n_test=len(items),
        dim=_dim(X),
        extra={
            "protocol": ZERO_SHOT, "nli_train": str(pairs.path), "nli_train_sha": pairs.sha,
            "nli_train_dropped": pairs.dropped, **_heuristic(task),
            **pair_accuracy(items.pairs or [], predictions.correct),
        },
    )  # fmt: skip
