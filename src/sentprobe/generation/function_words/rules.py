"""The acceptability mutations of Kim et al. (2019, sec. 2.2), one function each, on Moses
tokens: wh-word swap, definite/indefinite article swap, coordinating-conjunction swap, and
the EOS re-segmentation draw.

Each returns a :class:`Mutation` (what was replaced by what, where) so the suite can record
every change; each also has a *stratum key*, the surface facts of a sentence that the mutation
could make informative (which wh-word or conjunction it contains and whether it comes first,
which article and how many). ``build.acceptability_items`` balances the two classes within
every stratum, so "contains why" or "contains an" cannot tell a mutated sentence from an
original one (with a random swap, mutated sentences would carry the rarer words far more
often than originals do).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from .articles import indefinite_for, looks_plural
from .lexicon import CONJUNCTIONS, DEFINITE, INDEFINITE, WH_WORDS

Tokens = tuple[str, ...]


@dataclass(frozen=True)
class Mutation:
    """One change to a sentence: the rule, the token positions, the words before and after."""

    rule: str
    positions: tuple[int, ...]
    replaced: tuple[str, ...]
    replacements: tuple[str, ...]

    def to_json(self) -> dict:
        return {
            "rule": self.rule,
            "positions": list(self.positions),
            "replaced": list(self.replaced),
            "replacements": list(self.replacements),
        }


def match_case(template: str, word: str) -> str:
    """``word`` cased like ``template`` ("What" -> "Who", "THE" -> "A")."""
    if len(template) > 1 and template.isupper():
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def apply(tokens: Sequence[str], mutation: Mutation) -> Tokens:
    out = list(tokens)
    for i, word in zip(mutation.positions, mutation.replacements):
        out[i] = word
    return tuple(out)


def positions_of(tokens: Sequence[str], words: Sequence[str]) -> list[int]:
    wanted = set(words)
    return [i for i, t in enumerate(tokens) if t.lower() in wanted]


# -- one word among several (wh-words, conjunctions) -------------------------------------------
def only_position(tokens: Sequence[str], words: Sequence[str]) -> int | None:
    """The position of the sentence's only word of ``words`` (None: none, or several)."""
    found = positions_of(tokens, words)
    return found[0] if len(found) == 1 else None


def only_key(tokens: Sequence[str], words: Sequence[str]) -> Hashable:
    """The sentence's only word of ``words`` and whether it comes first (None: not one)."""
    i = only_position(tokens, words)
    return None if i is None else (tokens[i].lower(), i == 0)


def swap_only(
    tokens: Sequence[str],
    words: Sequence[str],
    rule: str,
    rng: np.random.Generator,
    target: str | None = None,
) -> Mutation:
    """Replace the sentence's only word of ``words`` by ``target``, or by one of the others
    uniformly at random; case kept."""
    i = only_position(tokens, words)
    if i is None:
        raise ValueError(f"not exactly one of {'/'.join(words)} in {' '.join(tokens)!r}")
    others = [w for w in words if w != tokens[i].lower()]
    new = target or others[int(rng.integers(len(others)))]
    return Mutation(rule, (i,), (tokens[i],), (match_case(tokens[i], new),))


def swap_wh(tokens: Sequence[str], rng: np.random.Generator, target: str | None = None) -> Mutation:
    """Replace the only wh-word by ``target``, or one of the other five at random."""
    return swap_only(tokens, WH_WORDS, "wh-swap", rng, target)


def swap_conjunction(
    tokens: Sequence[str], rng: np.random.Generator, target: str | None = None
) -> Mutation:
    """Replace the only and/but/or by ``target``, or one of the other two at random."""
    return swap_only(tokens, CONJUNCTIONS, "conjunction-swap", rng, target)


#: Frames in which replacing the conjunction by either other one is ungrammatical, by the
#: conjunction: correlatives ("between X and Y", "both X and Y", "either X or Y", "not only X
#: but Y"), reduplication ("more and more"), idioms ("and so on", "or else", "whether or
#: not", "nothing but"). Outside them a swap is often still acceptable ("apples and pears" ->
#: "apples or pears"; "..., but he left" -> "..., and he left").
#: A correlative's first word -> the conjunction and how many words may stand between them:
#: "both" and "between" open a short conjunct ("both X and", "between the two X and"); a
#: longer stretch is a clause ("both databases contain names and types": "both" is the
#: determiner of the subject, and the "and" joins something else).
CORRELATIVES = {"both": ("and", 3), "between": ("and", 4), "either": ("or", 6)}
#: Words after which "both" floats ("they both", "are both") instead of opening a conjunct.
FLOATING_BOTH_AFTER = frozenset(
    "we they you us them these those are were is was be been being".split()  # noqa: SIM905
)
IDIOM_AFTER = {"and": (("so", "on"), ("so", "forth")), "or": (("else",), ("not",))}
BUT_AFTER = frozenset({"nothing", "anything", "all", "cannot"})
#: Words that make the stretch between a correlative's first word and the conjunction a
#: clause ("the difference between them is small and ..."): verbs, auxiliaries, subordinators.
CLAUSE_WORDS = frozenset(
    """is are was were be been am has have had do does did will would can could may might
    must should shall that which who whom whose when where if because while""".split()  # noqa: SIM905
)
#: Words whose "X and X" is one reduplicated phrase ("more and more", "again and again",
#: "on and on"); another repeated word is usually two phrases ("... it and it works").
REDUPLICATED = frozenset(
    """more less again over on round around through by back forth up down out far faster
    slower better worse bigger smaller higher lower louder closer further deeper larger
    longer stronger weaker harder""".split()  # noqa: SIM905
)


#: Words that open a clause after the conjunction ("... between her fingers and she opened",
#: "nothing but the implication was"): subject pronouns and negative/universal subjects.
CLAUSE_SUBJECTS = frozenset(
    "i you he she it we they there nothing everything everyone nobody someone".split()  # noqa: SIM905
)
#: Finite verbs and auxiliaries: one within three words after the conjunction makes what
#: follows a clause, not the second conjunct of a correlative or idiom.
CLAUSE_VERBS = CLAUSE_WORDS - {"that", "which", "who", "whom", "whose", "when", "where", "if",
                               "because", "while"}  # fmt: skip
#: "do nothing but stare": a verb follows, and "do nothing or stare" stays acceptable.
DO_FORMS = frozenset({"do", "does", "did", "doing", "done"})
#: "either way", "either side": "either" as a determiner of its own, not a correlative.
EITHER_ALONE = frozenset({"way", "side", "of", "end", "direction"})


def clause_follows(low: Sequence[str], i: int) -> bool:
    """Whether the conjunction at ``i`` joins clauses: the next word is a subject pronoun,
    or a finite verb or auxiliary comes within the next three words."""
    after = list(low[i + 1 : i + 4])
    return bool(after) and (after[0] in CLAUSE_SUBJECTS or any(t in CLAUSE_VERBS for t in after))


def coordination_frame(tokens: Sequence[str]) -> str | None:
    """The frame that makes any swap of the sentence's only and/but/or unacceptable (a rule a
    reader can check), or None when a swap may well stay acceptable."""
    i = only_position(tokens, CONJUNCTIONS)
    if i is None:
        return None
    low = [t.lower() for t in tokens]
    word, after = low[i], tuple(low[i + 1 : i + 3])
    clausal = clause_follows(low, i)
    # a correlative's second conjunct may be followed by the sentence's verb ("between the
    # signifier and the signified is arbitrary"): only a subject pronoun makes it a clause
    subject_next = low[i + 1 : i + 2] != [] and low[i + 1] in CLAUSE_SUBJECTS
    for cue, (conj, gap) in CORRELATIVES.items():
        if conj != word:
            continue
        for j in range(max(0, i - gap - 1), i - 1):
            between = tokens[j + 1 : i]
            if low[j] != cue or not between:
                continue
            if cue == "both" and (
                j > 0 and low[j - 1] in FLOATING_BOTH_AFTER or low[j + 1] == "of"
            ):
                continue
            if any(t.lower() in CLAUSE_WORDS for t in between) or subject_next:
                continue
            if cue == "either" and low[j + 1] in EITHER_ALONE:
                continue
            if cue != "either" and any(not any(c.isalnum() for c in t) for t in between):
                continue
            return f"{cue} ... {word}"
    if word == "but" and "not" in low[max(0, i - 8) : i] and "only" in low[max(0, i - 8) : i]:
        return "not only ... but"
    if word == "but" and i > 0 and low[i - 1] in BUT_AFTER and not clausal:
        if i > 1 and low[i - 2] in DO_FORMS:  # "do nothing but stare": "or stare" is fine
            return None
        return f"{low[i - 1]} but"
    for idiom in IDIOM_AFTER.get(word, ()):
        if after[: len(idiom)] == idiom and (idiom != ("not",) or low[i - 1 : i] == ["whether"]):
            return f"{word} {' '.join(idiom)}"
    if word == "and" and 0 < i < len(low) - 1 and low[i - 1] == low[i + 1] in REDUPLICATED:
        return "X and X"
    return None


# -- articles -----------------------------------------------------------------------------------
#: Words after which "the" cannot become "a": "the same", "the following", superlatives
#: ("the most" is not one: "a most unusual day" is fine), "the rest of".
DEFINITE_ONLY = frozenset(
    """same following latter former least largest biggest greatest highest lowest smallest
    latest earliest oldest newest longest shortest easiest simplest fastest slowest strongest
    weakest nearest furthest farthest finest worst hardest widest deepest""".split()  # noqa: SIM905
)
#: "a" + these cannot become "the" + them ("a lot of" -> "the lot of"), nor "such a", "many
#: a" and the rate "a" of "once a week", "three times a day" ("such the", "once the week").
#: Left out on purpose: "a few", "a little" ("the few who came", "the little house"),
#: "quite a", "half a", "rather a" ("quite the opposite", "half the time").
INDEFINITE_ONLY_AFTER = {("lot", "of"), ("couple", "of"), ("great", "deal"), ("good", "deal")}
INDEFINITE_ONLY_BEFORE = frozenset({"such", "many"})
#: "once a", "twice a", "times a" are a rate only before a unit of time ("once a week"; not
#: "once a user logs in", "at times a man must").
RATE_BEFORE = frozenset({"once", "twice", "times"})
TIME_UNITS = frozenset(
    """second minute hour day night week fortnight month quarter year decade century
    session""".split()  # noqa: SIM905
)


def article_frame(tokens: Sequence[str]) -> str | None:
    """An article occurrence that the swap makes unacceptable ("the same" -> "a same", "a
    lot of" -> "the lot of", "such a" -> "such the"), or None: swapping "the" and "a"
    elsewhere often leaves an acceptable sentence ("a man saw a dog" -> "the man saw the
    dog")."""
    kind = article_kind(tokens)
    low = [t.lower() for t in tokens]
    for i, t in enumerate(low):
        nxt = low[i + 1] if i + 1 < len(low) else ""
        if kind == "the" and t == DEFINITE and nxt in DEFINITE_ONLY:
            return f"the {nxt}"
        if kind == "the" and t == DEFINITE and (nxt, *low[i + 2 : i + 3]) == ("rest", "of"):
            return "the rest of"
        if kind == "a" and t in INDEFINITE:
            if (nxt, *low[i + 2 : i + 3]) in INDEFINITE_ONLY_AFTER:
                return f"a {nxt} {low[i + 2]}"
            if i > 0 and low[i - 1] in INDEFINITE_ONLY_BEFORE:
                return f"{low[i - 1]} a"
            if i > 0 and low[i - 1] in RATE_BEFORE and nxt in TIME_UNITS:
                return f"{low[i - 1]} a {nxt}"
            if i == 1 and low[0] == "what" and low[-1] == "!":  # exclamative "What a day !"
                return "what a"
    return None


def article_kind(tokens: Sequence[str]) -> str | None:
    """ "the" or "a" when the sentence has two or more of that article and fewer than two of
    the other (the paper swaps all occurrences of a repeated article); else None. A "the"
    sentence with a plural noun phrase (:func:`plural_after_the`) is None too: whether it is
    kept as an original or mutated, both classes then hold only singular "the" phrases."""
    n_def = len(positions_of(tokens, (DEFINITE,)))
    n_indef = len(positions_of(tokens, INDEFINITE))
    if n_def >= 2 and n_indef < 2:
        return None if plural_after_the(tokens) else "the"
    if n_indef >= 2 and n_def < 2:
        return "a"
    return None


#: Words that end the noun phrase an article opens (for :func:`plural_after_the`).
_NP_END = frozenset(
    """of in on at by for from to with into and or but that which who whom whose is are was
    were be been has have had will would can could may might must should""".split()  # noqa: SIM905
)


def plural_after_the(tokens: Sequence[str], window: int = 3) -> bool:
    """Whether some "the" opens a noun phrase with a plural-looking word in its first
    ``window`` words ("the houses", "the old stone houses"): "the -> a" there would make a
    number-agreement error ("a houses"), a cue a model can spot without knowing anything of
    definiteness. The phrase ends at punctuation or a preposition, conjunction or verb of
    ``_NP_END``; the test is deliberately wider than the audit's (next word only)."""
    for i in positions_of(tokens, (DEFINITE,)):
        for t in tokens[i + 1 : i + 1 + window]:
            if t.lower() in _NP_END or not any(ch.isalnum() for ch in t):
                break
            if looks_plural(t):
                return True
    return False


def swap_articles(tokens: Sequence[str]) -> Mutation:
    """Every "the" -> "a"/"an" (by the next word's sound), or every "a"/"an" -> "the"."""
    kind = article_kind(tokens)
    if kind is None:
        raise ValueError(f"no repeated article to swap in {' '.join(tokens)!r}")
    if kind == "the":
        where = positions_of(tokens, (DEFINITE,))
        new = [
            match_case(tokens[i], indefinite_for(tokens[i + 1]) if i + 1 < len(tokens) else "a")
            for i in where
        ]
        rule = "the->a"
    else:
        where = positions_of(tokens, INDEFINITE)
        new = [match_case(tokens[i], DEFINITE) for i in where]
        rule = "a->the"
    return Mutation(rule, tuple(where), tuple(tokens[i] for i in where), tuple(new))


def article_key(tokens: Sequence[str]) -> Hashable:
    """Which article is repeated, how often (1-3+), how many of the other (0, 1), whether
    "an" occurs and whether the sentence starts with an article."""
    kind = article_kind(tokens)
    if kind is None:
        return None
    n_def = len(positions_of(tokens, (DEFINITE,)))
    n_indef = len(positions_of(tokens, INDEFINITE))
    same, other = (n_def, n_indef) if kind == "the" else (n_indef, n_def)
    has_an = any(t.lower() == "an" for t in tokens)
    first = tokens[0].lower() if tokens[0].lower() in (DEFINITE, *INDEFINITE) else ""
    return (kind, min(same, 3), other, has_an, first)


# -- end of sentence ----------------------------------------------------------------------------
def resegment_range(n_tokens: int, min_side: int = 1, max_side: int | None = None) -> range:
    """The boundaries that leave both sides ``min_side``..``max_side`` tokens long."""
    hi = n_tokens - min_side if max_side is None else min(n_tokens - min_side, max_side)
    lo = min_side if max_side is None else max(min_side, n_tokens - max_side)
    return range(max(lo, 1), max(hi, 0) + 1)


def resegment_index(
    n_tokens: int,
    boundary: int,
    sigma: float,
    rng: np.random.Generator,
    max_draws: int = 10_000,
    min_side: int = 1,
    max_side: int | None = None,
) -> int:
    """A wrong sentence boundary: round(N(boundary, sigma)), redrawn while it equals the true
    ``boundary`` or leaves a side shorter than ``min_side`` (default: empty) or longer than
    ``max_side`` tokens, so the wrongly split sentences obey the limits the true ones do."""
    allowed = resegment_range(n_tokens, min_side, max_side)
    if not [k for k in allowed if k != boundary]:
        raise ValueError(f"no other boundary than {boundary} in {n_tokens} tokens")
    if sigma <= 0:
        raise ValueError(f"sigma must be positive, got {sigma}")
    for _ in range(max_draws):
        k = int(np.rint(rng.normal(boundary, sigma)))
        if k != boundary and k in allowed:
            return k
    raise ValueError(
        f"no boundary other than {boundary} of {n_tokens} tokens in {max_draws} draws at "
        f"sigma={sigma}"
    )
