"""The word lists of Kim et al. (2019): the function words each mutation targets.

Wh-words, articles and coordinating conjunctions are the paper's (sec. 2.2); the
prepositions are its Appendix D list, verbatim; the comparative, quantifier and spatial lists
are ours, built from the paper's examples (sec. 2.3: more/less, bigger/smaller; all, some,
number words, half, one-third, quarter; left, right, close, far) and from the ``task_desc``
sub-types of the DNC release (``compare_larger_smaller``, ``quant_least_most``,
``spatial_up_down``, ...), since the paper does not print them.
"""

from __future__ import annotations

#: The six wh-words (sec. 2.2); a mutation replaces one by another of the remaining five.
WH_WORDS: tuple[str, ...] = ("who", "what", "where", "when", "why", "how")

#: The coordinating conjunctions the paper swaps (sec. 2.2).
CONJUNCTIONS: tuple[str, ...] = ("and", "but", "or")

DEFINITE = "the"
INDEFINITE = ("a", "an")

#: Appendix D: prepositions likely to be swapped with each other without affecting
#: grammaticality (locatives plus about, for, to, with, without). Multi-word entries are
#: matched as token sequences, longest first.
PREPOSITIONS: tuple[str, ...] = (
    "about", "above", "across", "after", "against", "ahead of", "all over", "along",
    "among", "around", "at", "before", "behind", "below", "beneath", "beside", "by", "for",
    "from", "in", "in front of", "inside", "inside of", "into", "near", "nearby", "next to",
    "on", "on top of", "out of", "outside", "outside of", "over", "past", "through", "to",
    "under", "up", "within", "with", "without",
)  # fmt: skip

#: Comparative sub-types (the release's ``compare_*`` codes) -> their words; other
#: comparative adjectives and adverbs (PTB JJR/RBR) are ``compare_other``.
COMPARATIVES: dict[str, tuple[str, ...]] = {
    "compare_more_less": ("more", "less", "fewer"),
    "compare_larger_smaller": ("larger", "smaller"),
    "compare_bigger_smaller": ("bigger", "smaller"),
    "compare_higher_lower": ("higher", "lower"),
    "compare_older_younger": ("older", "younger"),
    "compare_longer_shorter": ("longer", "shorter"),
    "compare_better_worse": ("better", "worse"),
}

#: Quantification sub-types (the release's ``quant_*`` codes) -> their words.
QUANTIFIERS: dict[str, tuple[str, ...]] = {
    "quant_some_all": ("all", "some", "none", "every", "each", "any", "no"),
    "quant_least_most": ("least", "most", "many", "few", "several"),
    # fractions only: "third" alone is mostly an ordinal ("the nation's third largest employer")
    "quant_quarter_half": ("half", "quarter", "one-third", "thirds", "two-thirds", "percent"),
    "quant_num": (
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "twenty", "thirty", "forty", "fifty", "hundred", "hundreds",
        "thousand", "thousands", "million", "millions", "billion", "dozen", "dozens",
    ),
}  # fmt: skip

#: Spatial sub-types (the release's ``spatial_*`` codes) -> their words.
SPATIAL: dict[str, tuple[str, ...]] = {
    "spatial_left_right": ("left", "right"),
    "spatial_up_down": ("up", "down", "upstairs", "downstairs"),
    "spatial_behind_front": ("behind", "front"),
    "spatial_over_under": ("over", "under", "underneath"),
    "spatial_above_below": ("above", "below"),
    "spatial_close_far": ("close", "far"),
    "spatial_near_far": ("near", "nearby"),
    "spatial_inside_outside": ("inside", "outside"),
}
