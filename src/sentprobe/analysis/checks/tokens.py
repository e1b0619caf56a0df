"""The "contains token X" rule: the best single word-presence rule, fitted on train.

Single-position rules look at the edges of a sentence; a mutation in the middle (a swapped
article, wh-word or conjunction) can leak through the mere presence of a word ("contains
an" -> mutated, when "the" -> "a/an" swaps make "an" commoner among mutated sentences than
among originals). For every token in at least ``MIN_SENTENCES`` train sentences, the rule
predicts the most frequent train label of the sentences with the token and of those without
it; the token whose rule fits train best is scored on test like every other cue.
"""

from __future__ import annotations

from collections import Counter

from sentprobe.analysis.checks.base import CheckOptions
from sentprobe.analysis.checks.cues import (
    _cue_finding,
    _majority,
    _scored_test,
    score_against_majority,
)
from sentprobe.analysis.findings import Finding
from sentprobe.datasets.task import ProbingTask

#: A token must occur in this many train sentences to be tried.
MIN_SENTENCES = 5


def _tokens(sentence: str) -> set[str]:
    return set(sentence.lower().split())


def best_presence_rule(
    features: list[set[str]], labels: list[str], min_sentences: int = MIN_SENTENCES
) -> tuple[str, str, str] | None:
    """(feature, label if present, label if absent) of the best-fitting "has feature X" rule
    on train (``features``: each text's set of features); ties go to the alphabetically
    first feature. None when no feature is in ``min_sentences`` texts."""
    totals = Counter(labels)
    with_feature: dict[str, Counter[str]] = {}
    for found, label in zip(features, labels):
        for feature in found:
            with_feature.setdefault(feature, Counter())[label] += 1
    best: tuple[int, str, str, str] | None = None
    for feature in sorted(with_feature):
        present = with_feature[feature]
        if sum(present.values()) < min_sentences:
            continue
        absent = totals - present
        yes = min(present, key=lambda k: (-present[k], k))
        no = min(totals, key=lambda k: (-absent[k], k))
        hits = present[yes] + absent[no]
        if best is None or hits > best[0]:
            best = (hits, feature, yes, no)
    return None if best is None else best[1:]


def best_token_rule(
    sentences: list[str], labels: list[str], min_sentences: int = MIN_SENTENCES
) -> tuple[str, str, str] | None:
    """(token, label if present, label if absent) of the best "contains token X" rule."""
    return best_presence_rule([_tokens(s) for s in sentences], labels, min_sentences)


def check_contains_token(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """The best "contains token X" rule of train, against majority on test (severities as
    for the single-position rules)."""
    test = _scored_test(task)
    if test is None:
        return []
    train = task.splits["train"]
    rule = best_token_rule(train.sentences, train.labels)
    if rule is None:
        return []
    token, yes, no = rule
    predicted = [yes if token in _tokens(s) else no for s in test[0]]
    score = score_against_majority(predicted, _majority(train.labels), test[1])
    return [
        _cue_finding(
            task,
            options,
            "contains-token",
            f"contains {token!r}",
            score,
            kind="rule",
            data={"token": token, "label_if_present": yes, "label_if_absent": no},
        )  # fmt: skip
    ]
