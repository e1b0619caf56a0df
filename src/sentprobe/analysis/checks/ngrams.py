"""The "contains n-gram X" rule on function-word sets: can one collocation read the label?

Kim et al. (2019)'s acceptability sets should make a model know the function word: its label
depends on how the word fits the whole sentence. A set built from a handful of frames ("the
same" -> "a same", "either ... or" -> "either ... and") is solved instead by remembering
which word goes with which neighbour. For every word n-gram (n = 1 to 3) in at least
``MIN_SENTENCES`` train texts, the rule predicts the most frequent train label of the texts
with it and of those without; the n-gram whose rule fits train best is scored on test. On a
set whose metadata says the function word is the property (the paper's wh-words, Def,
Coord, EOS: ``DncSet.function_word_property``), a significant gain of ``WARNING_POINTS`` over
majority is a warning; elsewhere (the ``*-collocations`` sets, which say in their name what
they test) it is information.

A cue spread over many rare words (each unacceptable item with its own rare word) gives no
single n-gram rule a gain; :func:`check_class_vocabulary` catches it: the words that occur in
train with one label only, and the rule "the text holds more of one label's words than of
the other's -> that label".
"""

from __future__ import annotations

from sentprobe.analysis.checks.base import CheckOptions, paper_name
from sentprobe.analysis.checks.cues import (
    _cue_finding,
    _majority,
    _scored_test,
    score_against_majority,
)
from sentprobe.analysis.checks.tokens import MIN_SENTENCES, best_presence_rule
from sentprobe.analysis.findings import Finding
from sentprobe.datasets.loaders.dnc import DNC_SETS
from sentprobe.datasets.task import ProbingTask

#: Longest n-gram tried.
MAX_N = 3
#: Points over majority (significant) that make the rule a warning on a function-word set.
WARNING_POINTS = 10.0


def ngrams(text: str, max_n: int = MAX_N) -> set[str]:
    """The word 1- to ``max_n``-grams of a text, lower-cased, space-joined."""
    words = text.lower().split()
    return {
        " ".join(words[i : i + n]) for n in range(1, max_n + 1) for i in range(len(words) - n + 1)
    }


def best_ngram_rule(
    texts: list[str], labels: list[str], min_sentences: int = MIN_SENTENCES
) -> tuple[str, str, str] | None:
    """(n-gram, label if present, label if absent) of the best-fitting rule on train; ties go
    to the alphabetically first n-gram. None when no n-gram is frequent enough."""
    return best_presence_rule([ngrams(t) for t in texts], labels, min_sentences)


def function_word_property(task: ProbingTask) -> bool | None:
    """Whether the task is a function-word set whose label should depend on the function word
    itself (True), one that tests something narrower (False), or no function-word set."""
    for info in DNC_SETS.values():
        if info.paper_name == paper_name(task) and info.format.startswith("acceptability"):
            return info.function_word_property
    return None


def check_lexical_ngram(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Function-word acceptability sets: the best "contains n-gram X" rule of train, against
    majority on test; a warning at ``WARNING_POINTS`` on a set meant to test the word."""
    meant = function_word_property(task)
    test = _scored_test(task) if meant is not None else None
    if test is None:
        return []
    train = task.splits["train"]
    rule = best_ngram_rule(train.sentences, train.labels)
    if rule is None:
        return []
    gram, yes, no = rule
    predicted = [yes if gram in ngrams(s) else no for s in test[0]]
    score = score_against_majority(predicted, _majority(train.labels), test[1])
    finding = _cue_finding(
        task, options, "lexical-ngram", f"contains {gram!r}", score, kind="rule", alarm=False,
        data={"ngram": gram, "label_if_present": yes, "label_if_absent": no,
              "function_word_property": meant},
    )  # fmt: skip
    significant = score.p < options.thresholds.cue_p_value
    if meant and significant and score.gain_points >= WARNING_POINTS:
        finding.severity = "warning"
        finding.message += (
            f"; {paper_name(task)} should test the function word, yet one n-gram reads the "
            "label: the set tests a collocation"
        )
    return [finding]


#: Train texts a word must occur in before it counts as one label's word.
VOCABULARY_MIN_COUNT = 1


def _words(text: str) -> set[str]:
    return set(text.lower().split())


def class_vocabulary(texts: list[str], labels: list[str]) -> dict[str, str]:
    """Word -> label, for the words of train texts that occur (in at least
    ``VOCABULARY_MIN_COUNT`` texts) with one label only."""
    seen: dict[str, set[str]] = {}
    count: dict[str, int] = {}
    for text, label in zip(texts, labels, strict=True):
        for w in _words(text):
            seen.setdefault(w, set()).add(label)
            count[w] = count.get(w, 0) + 1
    return {w: next(iter(ls)) for w, ls in seen.items() if len(ls) == 1
            and count[w] >= VOCABULARY_MIN_COUNT}  # fmt: skip


def check_class_vocabulary(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Function-word acceptability sets: the rule "the text holds more words that train saw
    with label X only than with any other label -> X" (else the train majority), against
    majority on test. Original and mutated sentences are different sentences, so each class
    has its own rare words in equal measure and the rule stays at majority; a cue planted as
    many rare words in one class (one per item) moves it. Its severity is that of a surface
    cue on a set that must carry none."""
    if function_word_property(task) is None:
        return []
    test = _scored_test(task)
    if test is None:
        return []
    train = task.splits["train"]
    vocab = class_vocabulary(list(train.sentences), list(train.labels))
    majority = _majority(train.labels)
    predicted = []
    for text in test[0]:
        votes: dict[str, int] = {}
        for w in _words(text):
            if w in vocab:
                votes[vocab[w]] = votes.get(vocab[w], 0) + 1
        ranked = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))
        top = ranked[0][0] if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]) else None
        predicted.append(top or majority)
    score = score_against_majority(predicted, majority, test[1])
    return [
        _cue_finding(
            task,
            options,
            "class-vocabulary",
            "more words seen with one label only",
            score,
            kind="rule",
            alarm=True,
            data={"words": len(vocab)},
        )  # fmt: skip
    ]
