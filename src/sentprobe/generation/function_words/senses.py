"""Sense filters for the NLI sets' phenomenon words: a word of ``lexicon.SPATIAL`` or
``lexicon.QUANTIFIERS`` counts only where it is used for space or quantity, so a pair with
"far more accessible" or "over two hundred islands" is not taken for a spatial one.
"""

from __future__ import annotations

import re

from sentprobe.annotation.record import AnnotatedSentence


def _words(record: AnnotatedSentence) -> list[str]:
    return [t.lower() for t in record.tokens]


#: Words after which "far" is a degree adverb, not a distance ("far more accessible").
_DEGREE_AFTER_FAR = frozenset({"more", "less", "too", "better", "worse", "fewer"})
#: Words after which "left"/"right" name a side ("the left wing", "right hand").
SIDE_NOUNS = frozenset(
    """side hand arm leg foot eye ear wing bank corner turn lane column panel edge margin
    shoulder click""".split()  # noqa: SIM905
)
#: Words after which "right" is an intensifier ("right now", "right after").
_RIGHT_INTENSIFIED = frozenset(
    "now away after before there here back into through along off".split()  # noqa: SIM905
)
#: Words after which a quantifier word is not one ("all right", "at all", "no longer").
_NOT_QUANTITY = {
    "all": ("right",),
    "no": ("longer", "doubt", "matter"),
    "any": ("longer", "more"),
}
#: Forms of "be" before a predicative "over" ("the race was over": finished).
_BE = frozenset("is are was were be been being 's am".split())  # noqa: SIM905
#: Words that make "over (the) X" a stretch of time ("over time", "over the last years").
_TIME_WORDS = frozenset(
    """time last past next years months weeks days decades centuries course period
    weekend summer winter night generations""".split()  # noqa: SIM905
)
_YEAR = re.compile(r"^(1[0-9]|20)\d\d$")


def spatial_sense(record: AnnotatedSentence, i: int) -> bool:
    """Whether the spatial word at ``i`` is used for space, not degree, quantity, rightness
    or as a verb particle: "far more accessible", "over two hundred islands", "that's
    right", "set up", "the right to vote", "close to 50", "over the last 200 generations",
    "the race was over", "15 % above the target" are not spatial."""
    words = _words(record)
    w, nxt = words[i], words[i + 1] if i + 1 < len(words) else ""
    prev = words[i - 1] if i else ""
    nxt_num = i + 1 < len(words) and record.upos[i + 1] == "NUM"
    if record.upos[i] == "VERB" or record.deprels[i] == "compound:prt":
        return False
    if w == "far":
        return nxt not in _DEGREE_AFTER_FAR and record.xpos[i + 1 : i + 2] not in (["JJR"], ["RBR"])
    if w in ("over", "under", "above", "below"):
        after = words[i + 2] if i + 2 < len(words) else ""
        if w == "over" and (prev in _BE or nxt in _TIME_WORDS or after in _TIME_WORDS):
            return False  # "the race was over", "over time", "over the last 200 generations"
        if prev in ("%", "percent") or record.upos[i - 1 : i] == ["NUM"]:
            return False  # "15 % above the target": a difference in amount
        return not nxt_num and nxt not in ("average", "all", "way")
    if w in ("left", "right"):
        if w == "right" and nxt in _RIGHT_INTENSIFIED:
            return False
        if record.upos[i] == "ADV" or nxt in SIDE_NOUNS:  # "turn left", "the left wing"
            return True
        return prev in ("the", "to", "on", "at") and nxt not in ("to", "of")
    if w == "close":
        after = words[i + 2] if i + 2 < len(words) else ""
        return (
            nxt in ("to", "by")
            and not (i + 2 < len(words) and record.upos[i + 2] == "NUM")
            and after != "zero"
        )
    if w == "near":
        return record.upos[i] in ("ADP", "ADV")
    return True


def quantity_sense(record: AnnotatedSentence, i: int) -> bool:
    """Whether the quantifier word at ``i`` quantifies: not "most"/"least" as a degree word
    before an adjective or adverb ("most beautiful"), "one" as a pronoun ("the one who"),
    "all right", "at all", "no longer", "any more", a year ("in 1990")."""
    words = _words(record)
    w, nxt = words[i], words[i + 1] if i + 1 < len(words) else ""
    prev = words[i - 1] if i else ""
    if w in ("most", "least") and i + 1 < len(words) and record.upos[i + 1] in ("ADJ", "ADV"):
        return False
    if w == "one" and record.upos[i] != "NUM":
        return False
    if w == "all" and prev in ("at", "above"):
        return False
    if nxt in _NOT_QUANTITY.get(w, ()):
        return False
    if w == "percent":
        return record.upos[i - 1 : i] == ["NUM"]
    return not _YEAR.match(w)
