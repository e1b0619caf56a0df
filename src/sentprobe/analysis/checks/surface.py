"""Single-position surface rules (first/last token and its class, last character, number of
punctuation tokens, casing of the first word): cheap enough to run on every audit."""

from __future__ import annotations

import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from sentprobe.analysis.checks.base import (
    Check,
    CheckOptions,
    _finding,
    _splits,
    paper_name,
)
from sentprobe.analysis.checks.cues import (
    _cue_finding,
    _majority,
    _scored_test,
    score_against_majority,
)
from sentprobe.analysis.findings import Finding
from sentprobe.datasets.task import ProbingTask, Split


def is_punct(token: str) -> bool:
    """A token made of punctuation and symbols only."""
    return bool(token) and all(unicodedata.category(ch)[0] in "PS" for ch in token)


def token_class(token: str) -> str:
    """punct, number, all-caps, capitalised, lower or other (no letter, digit or punct)."""
    if is_punct(token):
        return "punct"
    if any(ch.isdigit() for ch in token):
        return "number"
    letters = [ch for ch in token if ch.isalpha()]
    if not letters:
        return "other"
    if len(letters) > 1 and all(ch.isupper() for ch in letters):
        return "all-caps"
    return "capitalised" if letters[0].isupper() else "lower"


def first_token(sentence: str) -> str:
    parts = sentence.split(None, 1)
    return parts[0] if parts else ""


def last_token(sentence: str) -> str:
    parts = sentence.rsplit(None, 1)
    return parts[-1] if parts else ""


def lower_initial(sentence: str) -> bool | None:
    """Whether the first word with a letter starts lower-case (None: no cased letter)."""
    for token in sentence.split():
        for ch in token:
            if ch.isalpha():
                if ch.islower():
                    return True
                if ch.isupper():
                    return False
                return None  # an uncased script
    return None


#: Punctuation counts at or above this are one feature value.
PUNCT_CAP = 10


@dataclass(frozen=True)
class Rule:
    """A single-position surface rule: a sentence's feature value decides the label (the most
    frequent train label of that value; unseen values and ties: the train majority label)."""

    check: str
    name: str
    feature: Callable[[str], Hashable]


#: The single-position rules, cheap enough to run on every audit (also with --no-baselines).
RULES: tuple[Rule, ...] = (
    Rule("first-token", "first token", first_token),
    Rule("first-token-class", "class of the first token", lambda s: token_class(first_token(s))),
    Rule("last-token", "last token", last_token),
    Rule("last-token-class", "class of the last token", lambda s: token_class(last_token(s))),
    Rule("last-char", "last character", lambda s: s.rstrip()[-1:]),
    Rule(
        "punct-count",
        "number of punctuation tokens",
        lambda s: min(PUNCT_CAP, sum(map(is_punct, s.split()))),
    ),
    Rule("casing-cue", "casing of the first word", lower_initial),
)


#: How a sentence pair is shown to the checks (``views.PAIR_SEPARATOR``, stripped).
SEGMENT_SEPARATOR = "|||"


def segments(text: str) -> tuple[str, str]:
    """The two segments of a pair joined as ``first ||| second`` (the second empty when the
    text is one sentence)."""
    first, _, second = text.partition(f" {SEGMENT_SEPARATOR} ")
    return first, second


#: The position rules on each segment of a sentence pair where the joined text hides them: the
#: last token of the first segment and the first token of the second (an EOS boundary moved
#: into a sentence shows there), with their classes. Run on pair tasks only.
SEGMENT_RULES: tuple[Rule, ...] = (
    Rule("segment1-last-token", "last token of the first segment",
         lambda s: last_token(segments(s)[0])),
    Rule("segment1-last-token-class", "class of the last token of the first segment",
         lambda s: token_class(last_token(segments(s)[0]))),
    Rule("segment2-first-token", "first token of the second segment",
         lambda s: first_token(segments(s)[1])),
    Rule("segment2-first-token-class", "class of the first token of the second segment",
         lambda s: token_class(first_token(segments(s)[1]))),
)  # fmt: skip

#: The gain over majority (points) of the segment rules on Kim et al.'s released EOS set
#: under the audit's protocol (`tests/analysis/test_audit_by_metadata.py` measures them again
#: when the release is present): moving a sentence boundary puts other words at it, so the
#: words there carry some label in the paper's own set too. On a set named EOS a segment rule
#: is held to the release's gain plus the usual margins, as the text baselines are held to
#: the paper's margins.
RELEASE_EOS_GAINS = {"segment1-last-token": 13.4, "segment2-first-token": 6.7}

#: Its own check (:func:`check_casing_cue`) also reports the casing shares per class.
CASING_RULE = RULES[-1]


def rule_predictions(
    feature: Callable[[str], Hashable], train: Split, sentences: Sequence[str]
) -> list[str]:
    """Per feature value the most frequent train label (ties and unseen values: the train
    majority label)."""
    default = _majority(train.labels)
    table: dict[Hashable, Counter[str]] = defaultdict(Counter)
    for sentence, label in zip(train.sentences, train.labels):
        table[feature(sentence)][label] += 1
    rule = {}
    for value, counts in table.items():
        top = max(counts.values())
        best = sorted(label for label, c in counts.items() if c == top)
        rule[value] = default if default in best else best[0]
    return [rule.get(feature(s), default) for s in sentences]


def _rule_check(rule: Rule, pairs_only: bool = False) -> Check:
    def check(task: ProbingTask, options: CheckOptions) -> list[Finding]:
        test = _scored_test(task)
        if test is None:
            return []
        if pairs_only and not all(f" {SEGMENT_SEPARATOR} " in t for t in test[0]):
            return []
        train = task.splits["train"]
        predicted = rule_predictions(rule.feature, train, test[0])
        score = score_against_majority(predicted, _majority(train.labels), test[1])
        allowed = RELEASE_EOS_GAINS.get(rule.check, 0.0) if paper_name(task) == "EOS" else 0.0
        finding = _cue_finding(
            task, options, rule.check, rule.name, score, kind="rule", single_position=True,
            allowed=allowed,
        )  # fmt: skip
        return [finding]

    check.__name__ = f"check_{rule.check.replace('-', '_')}"
    check.__doc__ = (
        f"The rule 'the {rule.name} decides the label', fitted on train, against majority on "
        "test (see :func:`_cue_finding` for the severities)."
    )
    return check


def check_casing_cue(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Casing of the first word (X-Probe's BShift swaps at the first position, so
    lower-case-initial sentences are almost all inverted): the share of lower-case-initial
    sentences per class, and the casing rule scored like every other single-position rule."""
    rows: dict[bool, Counter[str]] = {True: Counter(), False: Counter()}
    for _, split in _splits(task):
        for sentence, label in zip(split.sentences, split.labels):
            cue = lower_initial(sentence)
            if cue is not None:
                rows[cue][label] += 1
    if not rows[True] or not rows[False]:
        return []  # no variation (or an uncased script): nothing to learn from casing
    labels = sorted(set(rows[True]) | set(rows[False]))
    share = {
        label: rows[True][label] / max(1, rows[True][label] + rows[False][label])
        for label in labels
    }
    shown = ", ".join(f"{label}={share[label]:.1%}" for label in labels[:6])
    more = ", ..." if len(labels) > 6 else ""
    prefix = f"lower-case-initial sentences per class: {shown}{more}; "
    found = _rule_check(CASING_RULE)(task, options)
    if not found:
        return [
            _finding(task, "casing-cue", "info", prefix.rstrip("; "), data={"lower_share": share})
        ]
    (finding,) = found
    finding.message = prefix + finding.message
    finding.data["lower_share"] = share
    return [finding]
