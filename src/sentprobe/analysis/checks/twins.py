"""Original/altered twins: an original sentence in one split and its altered form (BShift,
SOMO, CoordInv) in another."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable
from itertools import combinations

from sentprobe.analysis.checks.base import (
    CheckOptions,
    _finding,
    _plural,
    _quote,
    _splits,
    _verb,
    paper_name,
)
from sentprobe.analysis.findings import Finding, Severity
from sentprobe.datasets.task import ProbingTask


def _lowered(sentence: str) -> list[str]:
    return sentence.lower().split()


def _is_swap(a: list[str], b: list[str]) -> bool:
    diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    return (
        len(a) == len(b)
        and len(diff) == 2
        and diff[1] == diff[0] + 1
        and a[diff[0]] == b[diff[1]]
        and a[diff[1]] == b[diff[0]]
    )


def _is_replacement(a: list[str], b: list[str]) -> bool:
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1


def _is_reordering(a: list[str], b: list[str]) -> bool:
    return a != b and sorted(a) == sorted(b)


#: How each altered-sentence task alters a sentence: keys that group candidate twins, and the
#: exact relation between an original and its altered form.
TWINS: dict[str, tuple[Callable[[list[str]], list[Hashable]], Callable[..., bool], str]] = {
    "BShift": (lambda t: [tuple(sorted(t))], _is_swap, "two adjacent words swapped"),
    "CoordInv": (lambda t: [tuple(sorted(t))], _is_reordering, "the same words reordered"),
    # one word replaced: the first or the second half is unchanged
    "SOMO": (
        lambda t: [("a", len(t), *t[: len(t) // 2]), ("b", len(t), *t[len(t) // 2 :])],
        _is_replacement,
        "one word replaced",
    ),
}


def check_twins(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """An original sentence in one split and its altered form (BShift: two adjacent words
    swapped; SOMO: one word replaced; CoordInv: the same words reordered; compared
    lower-cased; the two with different labels) in another: a probe can score by recognising
    the pair. At or above ``error_fraction`` of the later split (and ``twin_error_count``
    sentences) an error, below a warning."""
    spec = TWINS.get(paper_name(task))
    if spec is None:
        return []
    keys, related, what = spec
    groups: dict[Hashable, list[tuple[int, int]]] = defaultdict(list)
    splits = _splits(task)
    tokens = [[_lowered(s) for s in split.sentences] for _, split in splits]
    for k, sentences in enumerate(tokens):
        for i, toks in enumerate(sentences):
            for key in keys(toks):
                groups[hash(key)].append((k, i))
    pairs: dict[tuple[int, int], list[str]] = defaultdict(list)
    later: dict[tuple[int, int], set[int]] = defaultdict(set)
    seen: set[tuple[int, int, int, int]] = set()
    for members in groups.values():
        if len(members) < 2 or len({k for k, _ in members}) < 2:
            continue
        for (ka, ia), (kb, ib) in combinations(members, 2):
            if ka == kb or (ka, ia, kb, ib) in seen:
                continue
            seen.add((ka, ia, kb, ib))
            if splits[ka][1].labels[ia] == splits[kb][1].labels[ib]:
                continue  # an original and its altered form differ in label
            if related(tokens[ka][ia], tokens[kb][ib]):
                a, b = splits[ka][1].sentences[ia], splits[kb][1].sentences[ib]
                pairs[(ka, kb)].append(f"{_quote(a, 60)} ~ {_quote(b, 60)}")
                later[(ka, kb)].add(ib)
    out = []
    for (ka, kb), examples in sorted(pairs.items()):
        (a, _), (b, sb) = splits[ka], splits[kb]
        n = len(later[(ka, kb)])
        share = n / max(1, len(sb))
        th = options.thresholds
        error = share >= th.error_fraction and n >= th.twin_error_count
        severity: Severity = "error" if error else "warning"
        out.append(
            _finding(
                task,
                "altered-twins",
                severity,
                f"{_plural(n, 'sentence')} of {b} {_verb(n, 'is', 'are')} "
                f"the altered or original form of a {a} sentence ({what}; {share:.1%} of {b}); "
                "a probe can score by recognising the pair",
                count=n,
                examples=examples[:5],
                data={"splits": [a, b], "share": share, "pairs": len(examples)},
            )
        )
    return out
