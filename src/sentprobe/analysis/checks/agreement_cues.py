"""Cues a mutation can leave besides the function word itself: article/noun agreement and the
length of the segments of a two-sentence item.

Kim et al. (2019)'s mutations should change only the function word, yet a careless one also
breaks something a model can spot without knowing the function word: "the -> a" before a
plural noun ("A houses were swept away") is a number-agreement error, an antonym swapped in
after "a"/"an" ("an common") breaks the article's sound rule, and an EOS boundary moved by a
few tokens leaves a segment shorter than any true sentence. Each rule here is fitted on train
and scored on test against majority like every other cue (:mod:`.cues`), so it is a warning
or an error only on a task that must carry no surface cue, and information elsewhere:

- ``article-sound``: the text has an "a"/"an" whose form is not the one the next word's sound
  takes (:func:`sentprobe.generation.function_words.articles.takes_an`: an hour, a
  university, an FBI, an 8);
- ``article-plural``: the text has an "a"/"an" directly before a plural noun by WordNet
  (``wordnet.is_plural_noun``: an irregular plural such as "data" or "criteria", or an -s
  form that is no noun lemma but whose stem is). It is deliberately not the generator's own
  test (``articles.looks_plural``), so a word that filter misreads is still seen here. It
  misses "a big houses" and needs WordNet (no finding without it), but it reads both
  classes alike, so what it measures is the difference between them;
- ``segment-length`` (two-sentence items only): the best rule "a segment shorter than L or
  longer than H tokens" (either sentence; punctuation tokens not counted), L and H fitted on
  train.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from sentprobe.analysis.checks.base import CheckOptions, _quote
from sentprobe.analysis.checks.cues import (
    _cue_finding,
    _majority,
    _scored_test,
    score_against_majority,
)
from sentprobe.analysis.checks.surface import is_punct
from sentprobe.analysis.checks.views import PAIR_SEPARATOR
from sentprobe.analysis.findings import Finding
from sentprobe.datasets.task import ProbingTask
from sentprobe.generation.function_words.articles import takes_an
from sentprobe.generation.function_words.wordnet import is_plural_noun, noun_forms


def _article_pairs(text: str) -> list[tuple[str, str]]:
    """(article, next token) for every "a"/"an" followed by a word (pair separators and
    punctuation are not words)."""
    tokens = text.split()
    return [
        (t.lower(), tokens[i + 1])
        for i, t in enumerate(tokens[:-1])
        if t.lower() in ("a", "an") and not is_punct(tokens[i + 1])
    ]


def wrong_article_sound(text: str) -> bool:
    """Whether some "a"/"an" does not match the sound of the next word ("an common")."""
    return any(
        art != ("an" if takes_an(nxt) else "a")
        for art, nxt in _article_pairs(text)
        if any(ch.isalnum() for ch in nxt)
    )


def article_before_plural(text: str) -> bool:
    """Whether some "a"/"an" stands directly before a plural noun ("a houses", "a data")."""
    return any(is_plural_noun(nxt) for _, nxt in _article_pairs(text))


def _presence_rule(
    feature: Callable[[str], bool], sentences: Sequence[str], labels: Sequence[str]
) -> tuple[str, str]:
    """(label when the feature holds, label when it does not): the most frequent train label
    of each side (ties and an empty side: the train majority label)."""
    default = _majority(labels)
    sides: dict[bool, Counter[str]] = {True: Counter(), False: Counter()}
    for sentence, label in zip(sentences, labels):
        sides[feature(sentence)][label] += 1

    def pick(c: Counter[str]) -> str:
        if not c:
            return default
        top = max(c.values())
        best = sorted(k for k, v in c.items() if v == top)
        return default if default in best else best[0]

    return pick(sides[True]), pick(sides[False])


def _feature_check(
    check: str, name: str, feature: Callable[[str], bool], needs: Callable[[], bool] = lambda: True
):
    def run(task: ProbingTask, options: CheckOptions) -> list[Finding]:
        test = _scored_test(task)
        if test is None or not needs():
            return []
        train = task.splits["train"]
        yes, no = _presence_rule(feature, train.sentences, train.labels)
        present = [feature(s) for s in test[0]]
        predicted = [yes if p else no for p in present]
        score = score_against_majority(predicted, _majority(train.labels), test[1])
        share = {
            label: float(np.mean([p for p, y in zip(present, test[1]) if y == label]))
            for label in sorted(set(test[1]))
        }
        shown = ", ".join(f"{label} {100 * s:.1f}%" for label, s in share.items())
        finding = _cue_finding(
            task, options, check, name, score, kind="rule",
            data={"share_per_class": share, "label_if_present": yes, "label_if_absent": no},
        )  # fmt: skip
        found = [
            (s, y)
            for split in task.splits.values()
            for s, y in zip(split.sentences, split.labels)
            if feature(s)
        ]
        finding.message += f"; test items with it: {shown}"
        if found:
            finding.message += f"; {len(found)} in all, e.g. {found[0][1]}: {_quote(found[0][0])}"
        finding.data["items"] = len(found)
        return [finding]

    run.__name__ = f"check_{check.replace('-', '_')}"
    run.__doc__ = f"The rule '{name} decides the label', fitted on train, scored on test."
    return run


check_article_sound = _feature_check(
    "article-sound", "has an a/an that does not fit the next word's sound", wrong_article_sound
)
check_article_plural = _feature_check(
    "article-plural", "has a/an before a plural noun", article_before_plural,
    needs=lambda: bool(noun_forms()[0]),
)  # fmt: skip


def segment_lengths(text: str) -> tuple[int, int] | None:
    """Words (punctuation tokens not counted) of the shorter and the longer segment of a
    two-sentence item as the audit shows it (``first ||| second``); None for one sentence."""
    parts = text.split(PAIR_SEPARATOR)
    if len(parts) != 2:
        return None
    n = [sum(not is_punct(t) for t in p.split()) for p in parts]
    return min(n), max(n)


def fit_length_rule(lengths: np.ndarray, labels: Sequence[str]) -> tuple[int, int, str, str]:
    """(L, H, label outside, label inside) of the best rule "shorter segment < L or longer
    segment > H" on train (``lengths``: rows of shorter, longer); ties: the widest range."""
    y = np.asarray(labels)
    classes = sorted(set(labels))
    default = _majority(labels)
    shorter, longer = lengths[:, 0], lengths[:, 1]
    lows = np.unique(np.concatenate([shorter, [shorter.min()]]))
    highs = np.unique(longer)
    onehot = np.stack([y == c for c in classes], axis=1).astype(int)
    best: tuple[int, int, int, str, str] | None = None
    for lo in lows:
        for hi in highs[::-1]:
            out = (shorter < lo) | (longer > hi)
            n_out, n_in = onehot[out].sum(0), onehot[~out].sum(0)

            def top(n: np.ndarray) -> str:
                if n.sum() == 0:
                    return default
                best_n = n.max()
                cands = [c for c, k in zip(classes, n) if k == best_n]
                return default if default in cands else cands[0]

            lab_out, lab_in = top(n_out), top(n_in)
            hits = int(n_out[classes.index(lab_out)] + n_in[classes.index(lab_in)])
            if best is None or hits > best[0]:
                best = (hits, int(lo), int(hi), lab_out, lab_in)
    assert best is not None
    return best[1], best[2], best[3], best[4]


def check_segment_length(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Two-sentence items: the fitted rule "a segment shorter than L or longer than H words
    decides the label" (EOS re-segmentation must not leave segments no true sentence has)."""
    test = _scored_test(task)
    if test is None:
        return []
    train = task.splits["train"]
    rows = [segment_lengths(s) for s in train.sentences]
    test_rows = [segment_lengths(s) for s in test[0]]
    if any(r is None for r in rows) or any(r is None for r in test_rows):
        return []
    lo, hi, outside, inside = fit_length_rule(np.array(rows), train.labels)
    predicted = [outside if a < lo or b > hi else inside for a, b in test_rows]  # type: ignore[misc]
    score = score_against_majority(predicted, _majority(train.labels), test[1])
    name = f"a segment under {lo} or over {hi} words"
    return [
        _cue_finding(
            task,
            options,
            "segment-length",
            name,
            score,
            kind="rule",
            data={
                "min_words": lo,
                "max_words": hi,
                "label_outside": outside,
                "label_inside": inside,
            },
        )  # fmt: skip
    ]


#: This module's checks, in report order.
AGREEMENT_CHECKS = (check_article_sound, check_article_plural, check_segment_length)
