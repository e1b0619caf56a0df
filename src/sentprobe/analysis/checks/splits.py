"""Split sizes and disjointness: identical splits, sentences shared between splits, sentences
with several labels."""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

from sentprobe.analysis.checks.base import (
    CheckOptions,
    _finding,
    _plural,
    _quote,
    _splits,
    _verb,
)
from sentprobe.analysis.findings import Finding, Severity
from sentprobe.datasets.task import ProbingTask


def check_sizes(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Split sizes and classes (info): the context every other number needs."""
    sizes = {name: len(split) for name, split in _splits(task)}
    labels = sorted({label for _, split in _splits(task) for label in split.labels})
    text = ", ".join(f"{n} {s}" for s, n in sizes.items())
    return [
        _finding(
            task,
            "sizes",
            "info",
            f"{text}; {_plural(len(labels), 'class')}",
            data={"sizes": sizes, "n_classes": len(labels)},
        )
    ]


def _identical_pairs(task: ProbingTask) -> list[tuple[str, str]]:
    return [
        (a, b)
        for (a, sa), (b, sb) in combinations(_splits(task), 2)
        if len(sa) and sa.sentences == sb.sentences and sa.labels == sb.labels
    ]


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        return a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def check_identical_splits(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Two splits with the same lines (X-Probe's tree_depth va.txt == te.txt): an error, since
    selecting on dev is then selecting on test."""
    out = []
    files = options.files or {}
    for a, b in _identical_pairs(task):
        fa, fb = files.get(a), files.get(b)
        if fa and fb and fa != fb and _same_bytes(fa, fb):
            what = f"{fa.name} and {fb.name} are byte-identical files"
        else:
            what = f"the {a} and {b} splits are identical"
        out.append(
            _finding(
                task,
                "identical-splits",
                "error",
                f"{what} ({len(task.splits[a])} lines in the same order); choosing the probe "
                f"on {a} then means choosing it on {b}",
                count=len(task.splits[a]),
                data={"splits": [a, b], "files": [str(fa), str(fb)] if fa and fb else None},
            )
        )
    return out


def check_split_overlap(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Sentences shared between two splits (not already reported as identical splits).

    The share is taken of the later split's distinct sentences (the one that scores): at or
    above ``error_fraction`` it is an error, below a warning.
    """
    out = []
    identical = set(_identical_pairs(task))
    for (a, sa), (b, sb) in combinations(_splits(task), 2):
        if (a, b) in identical:
            continue
        later = set(sb.sentences)
        shared = [s for s in dict.fromkeys(sa.sentences) if s in later]
        if not shared:
            continue
        share = len(shared) / max(1, len(later))
        severity: Severity = "error" if share >= options.thresholds.error_fraction else "warning"
        out.append(
            _finding(
                task,
                "split-overlap",
                severity,
                f"{_plural(len(shared), 'sentence')} of {b} also in {a} ({share:.1%} of {b}); "
                "a probe can score on them by memory",
                count=len(shared),
                examples=[_quote(s) for s in shared[:5]],
                data={"splits": [a, b], "share": share},
            )
        )
    return out


def check_labels_per_sentence(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Sentences carrying several labels, within one split or across splits (X-Probe's SOMO):
    they cap the reachable accuracy. Exact repeats within a split are reported as info."""
    per_split: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    repeats: Counter[str] = Counter()
    for name, split in _splits(task):
        seen: set[tuple[str, str]] = set()
        for sentence, label in zip(split.sentences, split.labels):
            if (sentence, label) in seen:
                repeats[name] += 1
            seen.add((sentence, label))
            per_split[sentence][name].add(label)
    within, across = [], []
    for sentence, by_split in per_split.items():
        labels = set().union(*by_split.values())
        if len(labels) < 2:
            continue
        where = "; ".join(f"{s}: {'/'.join(sorted(ls))}" for s, ls in by_split.items())
        example = f"{_quote(sentence)} ({where})"
        if any(len(ls) > 1 for ls in by_split.values()):
            within.append(example)
        else:
            across.append(example)
    out = []
    total = max(1, len(per_split))
    for kind, items in (("within a split", within), ("across splits", across)):
        if not items:
            continue
        share = len(items) / total
        severity: Severity = "error" if share >= options.thresholds.error_fraction else "warning"
        out.append(
            _finding(
                task,
                "multi-label",
                severity,
                f"{_plural(len(items), 'sentence')} {_verb(len(items), 'carries', 'carry')} "
                f"more than one label {kind} "
                f"({share:.2%} of distinct sentences); no probe can get them all right",
                count=len(items),
                examples=items[:5],
                data={"kind": kind, "share": share},
            )
        )
    if repeats:
        text = ", ".join(f"{n} in {s}" for s, n in repeats.items())
        out.append(
            _finding(
                task,
                "repeats",
                "info",
                f"sentences repeated with the same label within a split: {text}",
                count=sum(repeats.values()),
                data={"repeats": dict(repeats)},
            )
        )
    return out
