"""Class and length distributions: class counts, imbalanced and one-class splits, classes
missing from a split, tokens per sentence by class."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from sentprobe.analysis.checks.base import (
    CheckOptions,
    _finding,
    _splits,
    task_labels,
)
from sentprobe.analysis.findings import Finding, Severity
from sentprobe.datasets.task import ProbingTask


def class_counts(task: ProbingTask) -> dict[str, dict[str, int]]:
    """Examples per label per split (labels in the task's order)."""
    order = {label: i for i, label in enumerate(task_labels(task))}
    out = {}
    for name, split in _splits(task):
        c = Counter(split.labels)
        out[name] = dict(sorted(c.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
    return out


def check_balance(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Class counts per split (info) and splits whose largest/smallest class ratio exceeds
    ``imbalance_ratio`` (warning: the paper balances every split, and accuracies must then be
    read against the majority baseline)."""
    counts = class_counts(task)
    out = [
        _finding(
            task,
            "balance",
            "info",
            "classes per split: "
            + "; ".join(
                f"{s}: "
                + ", ".join(f"{k}={v}" for k, v in list(c.items())[:6])
                + (", ..." if len(c) > 6 else "")
                for s, c in counts.items()
            ),
            data={"counts": counts},
        )
    ]
    for name, c in counts.items():
        if len(c) < 2:
            continue  # one class: check_missing_classes reports it
        (big, n_big), (small, n_small) = (
            max(c.items(), key=lambda kv: kv[1]),
            min(c.items(), key=lambda kv: kv[1]),
        )
        ratio = n_big / n_small
        if ratio > options.thresholds.imbalance_ratio:
            total = sum(c.values())
            out.append(
                _finding(
                    task,
                    "imbalance",
                    "warning",
                    f"{name} split is imbalanced: {big!r} has {n_big} ({n_big / total:.0%}), "
                    f"{small!r} has {n_small} ({n_small / total:.0%}), ratio {ratio:.2f}; "
                    f"majority accuracy is {n_big / total:.1%}",
                    data={"split": name, "ratio": ratio, "majority": n_big / total},
                )
            )
    return out


def check_missing_classes(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """A split with one class, or an evaluation split lacking classes of train (Turkish
    X-Probe subj/obj number test files): accuracy there measures nothing, an error; a dev
    split, or a test split of a many-class task, missing a few classes is a warning."""
    out = []
    counts = class_counts(task)
    train = set(counts.get("train", {}))
    for name, c in counts.items():
        if len(c) == 1:
            (only,) = c
            out.append(
                _finding(
                    task,
                    "missing-class",
                    "error",
                    f"{name} split has a single class ({only!r}, {c[only]} examples): "
                    "accuracy on it says nothing about the probe",
                    data={"split": name, "classes": list(c)},
                )
            )
            continue
        missing = sorted(train - set(c)) if name != "train" else []
        if not missing:
            continue
        many = len(train) > options.thresholds.many_classes
        severity: Severity = "error" if name == "test" and not many else "warning"
        shown = ", ".join(repr(m) for m in missing[:5]) + (", ..." if len(missing) > 5 else "")
        out.append(
            _finding(
                task,
                "missing-class",
                severity,
                f"{name} split has no examples of {len(missing)} of the {len(train)} train "
                f"classes ({shown})",
                count=len(missing),
                data={"split": name, "missing": missing},
            )
        )
    return out


def length_stats(task: ProbingTask) -> dict[str, dict[str, float]]:
    """Token count per class over all splits: mean, std, min, max, n."""
    lengths: dict[str, list[int]] = defaultdict(list)
    for _, split in _splits(task):
        for sentence, label in zip(split.sentences, split.labels):
            lengths[label].append(len(sentence.split()))
    out = {}
    labels = task_labels(task)
    for label in [lab for lab in labels if lab in lengths] + sorted(set(lengths) - set(labels)):
        a = np.asarray(lengths[label], dtype=float)
        out[label] = {
            "mean": float(a.mean()),
            "std": float(a.std()),
            "min": float(a.min()),
            "max": float(a.max()),
            "n": int(a.size),
        }
    return out


def check_length(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Length distribution per class (info); whether it leaks is the Length baseline's call."""
    stats = length_stats(task)
    shown = ", ".join(f"{k}: {v['mean']:.1f}±{v['std']:.1f}" for k, v in list(stats.items())[:6])
    return [
        _finding(
            task,
            "length",
            "info",
            f"tokens per sentence by class: {shown}{', ...' if len(stats) > 6 else ''}",
            data={"per_class": stats},
        )
    ]
