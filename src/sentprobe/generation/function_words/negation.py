"""Negating a sentence, the two ways of Kim et al. (2019, sec. 2.3): explicit negation (add
"not") and lexical negation (swap a word for its WordNet antonym), on annotated sentences.

Explicit negation puts "not" after the first auxiliary or copula of the main verb ("is
not", "can not", "has not"), or uses do-support with the verb's lemma ("ended" -> "did not
end", "turns" -> "does not turn", "Turn" -> "Do not turn"). A sentence without a finite main
verb or already negated is left alone (None): the generators skip it and count why.
"""

from __future__ import annotations

from collections.abc import Sequence

from sentprobe.annotation.record import AnnotatedSentence

from ..base import base_deprel
from .articles import indefinite_for
from .lexicon import INDEFINITE
from .rules import Mutation, match_case
from .wordnet import UPOS_TO_WORDNET

NEGATORS = frozenset({"not", "n't", "never", "no", "nobody", "nothing", "neither", "nor"})
_DO = {"VBD": "did", "VBZ": "does", "VBP": "do", "VB": "do"}


def is_negated(record: AnnotatedSentence) -> bool:
    return any(t.lower() in NEGATORS for t in record.tokens)


def explicit_negation(record: AnnotatedSentence) -> tuple[list[str], Mutation] | None:
    """The tokens with "not" added to the main clause, and the change; None if the sentence
    is already negated or has no finite (or imperative) main verb."""
    if is_negated(record):
        return None
    tokens = list(record.tokens)
    root = record.root
    helpers = [
        j
        for j in record.children(root)
        if base_deprel(record.deprels[j]) in ("aux", "cop") and record.upos[j] != "PART"
    ]
    if helpers and min(helpers) < root:
        i = min(helpers)
        return (
            [*tokens[: i + 1], "not", *tokens[i + 1 :]],
            Mutation("explicit-negation", (i + 1,), (), ("not",)),
        )
    tag = record.xpos[root] if record.xpos else ""
    if record.upos[root] == "AUX" or record.lemmas[root] == "be" and tag in ("VBZ", "VBP", "VBD"):
        return (
            [*tokens[: root + 1], "not", *tokens[root + 1 :]],
            Mutation("explicit-negation", (root + 1,), (), ("not",)),
        )
    if record.upos[root] != "VERB" or tag not in _DO:
        return None
    if tag == "VB" and root != 0:  # a bare verb not at the start: not an imperative
        return None
    do = match_case(tokens[root], _DO[tag])
    lemma = record.lemmas[root] if root else record.lemmas[root].lower()
    new = [*tokens[:root], do, "not", lemma, *tokens[root + 1 :]]
    return new, Mutation("explicit-negation", (root,), (tokens[root],), (do, "not", lemma))


def antonym_positions(
    record: AnnotatedSentence, lexicon: dict[tuple[str, str], frozenset[str]]
) -> list[int]:
    """Positions of uninflected content words (form = lemma) that have a WordNet antonym of
    their own part of speech (``lexicon``: :func:`.wordnet.antonyms_by_pos`)."""
    return [
        i
        for i, (tok, lemma, upos) in enumerate(zip(record.tokens, record.lemmas, record.upos))
        if upos in UPOS_TO_WORDNET
        and tok.lower() == lemma.lower()
        and (tok.lower(), UPOS_TO_WORDNET[upos]) in lexicon
    ]


def lexical_negation(
    tokens: Sequence[str], position: int, antonym: str
) -> tuple[list[str], Mutation]:
    """``tokens`` with the word at ``position`` replaced by ``antonym`` (case kept), and an
    "a"/"an" right before it made to fit the antonym's sound ("a common" -> "an uncommon",
    not "a uncommon"): a broken article would tell mutated items from originals."""
    new = list(tokens)
    new[position] = match_case(tokens[position], antonym)
    where, old = [position], [tokens[position]]
    if position > 0 and tokens[position - 1].lower() in INDEFINITE:
        article = match_case(tokens[position - 1], indefinite_for(antonym))
        if article != tokens[position - 1]:
            new[position - 1] = article
            where, old = [position - 1, position], [tokens[position - 1], tokens[position]]
    mutation = Mutation("lexical-negation", tuple(where), tuple(old), tuple(new[i] for i in where))
    return new, mutation
