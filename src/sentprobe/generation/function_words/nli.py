"""The five NLI sets of Kim et al. (2019, sec. 2.3) from a premise/hypothesis file.

- prepositions: one Appendix D preposition of the hypothesis (a preposition by its tag, not a
  verb particle or infinitival "to") is replaced by another from the list at random; the item
  keeps the original pair too;
- comparatives, quantification, spatial: pairs whose premise and hypothesis both contain a word
  of the phenomenon (``lexicon.COMPARATIVES`` ... plus any PTB-tagged comparative, and any
  numeral for quantities; no word tagged as a verb, so "left" as in "she left" does not
  count); the mutated pair negates the hypothesis; the sub-type is the hypothesis's word's;
- negation: pairs with a WordNet antonym pair across premise and hypothesis (an uninflected
  word of one whose antonym is in the other); all 16 patterns: each side unchanged,
  explicitly negated ("neg"), lexically negated (the word swapped for its antonym, "lneg")
  or both ("lexpneg"), named ``<premise>-<hypothesis>`` as the release's ``task_desc``.

Labels: the original pair keeps its label. A mutated pair's label would be its rule's
(negating one side swaps entailment and contradiction; two negations of one side cancel; a
preposition swap is neutral). In Prep, Comp, Quant and Spatial the release keeps only
mutations that change the label, so a pair whose rule would keep it (a neutral original) is
not used. The rule labels items only when a fresh annotated sample of generated items (the
``sentprobe annotate`` round trip) confirmed it: at least ``MIN_ANNOTATED`` items, agreement
``MIN_RULE_AGREEMENT`` or more (:mod:`.labels`); the agreement
with the release's annotators that ``scripts/measure_nli_rules.py`` measures is conditional
on a change (every release pair of those sets changed label) and does not suffice. Until
then a mutated item is ``unverified``: its ``label`` is empty, the rule's guess is
``misc.candidate_label``, and the loader does not score it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.errors import DataError
from sentprobe.io import iter_lines

from ..base import GenerationError, make_rng
from .acceptability import FunctionWordSet
from .labels import (
    keeps_label,
    rule_label,
    rule_name,
    rule_verified,
)
from .lexicon import COMPARATIVES, PREPOSITIONS, QUANTIFIERS, SPATIAL
from .negation import antonym_positions, explicit_negation, is_negated, lexical_negation
from .release import N_FOLDS as NLI_FOLDS
from .release import Item
from .rules import Mutation, match_case
from .senses import quantity_sense, spatial_sense

LABELS = {"entailment": "entailment", "neutral": "neutral", "contradiction": "contradiction",
          "e": "entailment", "n": "neutral", "c": "contradiction"}  # fmt: skip


@dataclass
class Pair:
    """A premise/hypothesis pair from the input file, annotated."""

    premise: AnnotatedSentence
    hypothesis: AnnotatedSentence
    label: str
    pair_id: str

    def text_records(self) -> tuple[AnnotatedSentence, AnnotatedSentence]:
        return self.premise, self.hypothesis

    def text(self) -> tuple[str, str]:
        return " ".join(self.premise.tokens), " ".join(self.hypothesis.tokens)


def _field(obj: dict, names: Sequence[str]) -> Any:
    return next((obj[n] for n in names if n in obj), None)


def read_nli_pairs(path: Path) -> list[tuple[str, str, str, str]]:
    """(premise, hypothesis, label, id) of a JSONL (``premise``/``hypothesis``/``label``, or
    MNLI's ``sentence1``/``sentence2``/``gold_label``) or TSV file with those header names.
    Pairs without a gold label (MNLI's "-") are skipped; anything else malformed is a
    DataError naming the line."""
    path = Path(path)
    out: list[tuple[str, str, str, str]] = []
    header: list[str] | None = None
    is_json = path.name.removesuffix(".gz").endswith((".jsonl", ".json", ".ndjson"))
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        if is_json:
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise DataError(path, lineno, f"malformed JSON: {e.msg}") from None
            if not isinstance(obj, dict):
                raise DataError(path, lineno, "expected a JSON object")
        else:
            cells = line.split("\t")
            if header is None:
                header = cells
                continue
            obj = dict(zip(header, cells))
        premise = _field(obj, ("premise", "sentence1", "context"))
        hypothesis = _field(obj, ("hypothesis", "sentence2"))
        label = _field(obj, ("label", "gold_label"))
        if not isinstance(premise, str) or not isinstance(hypothesis, str) or label is None:
            raise DataError(path, lineno, "needs premise, hypothesis and label fields")
        if str(label) == "-":
            continue
        if str(label).lower() not in LABELS:
            raise DataError(
                path, lineno, f"unknown label {label!r} (entailment/neutral/contradiction)"
            )
        pid = _field(obj, ("pairID", "id", "pair-id"))
        out.append((premise, hypothesis, LABELS[str(label).lower()], str(pid or lineno)))
    if header is not None and not out and not {"premise", "sentence1"} & set(header):
        raise DataError(path, 1, "the TSV header must name premise, hypothesis and label")
    return out


def _words(record: AnnotatedSentence) -> list[str]:
    return [t.lower() for t in record.tokens]


def _item(pair: Pair, context: Sequence[str], hyp: Sequence[str], label: str, **misc) -> Item:
    return Item(" ".join(context), " ".join(hyp), label, corpus_sent_id=pair.pair_id, misc=misc)


def _mutated(pair: Pair, set_name: str, context, hyp, pattern: str = "", **misc) -> Item:
    """A mutated item: the rule's label, recorded as ``heuristic`` when an annotated sample
    confirmed the rule; else no label (``unverified``) and the rule's guess as
    ``candidate_label``, so no reader takes it for gold."""
    guess = rule_label(set_name, pair.label, pattern)
    if rule_verified(rule_name(set_name, pattern)):
        return _item(pair, context, hyp, guess, expected_label="heuristic", **misc)
    return _item(pair, context, hyp, "", expected_label="unverified", candidate_label=guess, **misc)


@dataclass
class NLISet:
    """An NLI set: ``size`` = items at most (None: all the input supports)."""

    name: ClassVar[str] = ""
    size: int | None = None

    def items_for(self, pair: Pair, rng: np.random.Generator, stats: Counter) -> list[Item]:
        raise NotImplementedError

    def generate(self, pairs: Sequence[Pair], seed: int) -> FunctionWordSet:
        rng = make_rng(seed, self.name)
        stats: Counter = Counter({"pairs read": len(pairs)})
        groups = [g for g in (self.items_for(p, rng, stats) for p in pairs) if g]
        stats["pairs used"] = len(groups)
        available = sum(map(len, groups))
        if len(groups) < NLI_FOLDS:
            raise GenerationError(
                f"{self.name}: {len(groups)} input pairs have the phenomenon, under the "
                f"{NLI_FOLDS} that fill the fallback protocol's folds; use a larger input"
            )
        n = available if self.size is None else min(self.size, available)
        items: list[Item] = []
        for tuple_id, g in enumerate(rng.permutation(len(groups))):
            if len(items) + len(groups[g]) > n:
                if tuple_id < NLI_FOLDS:
                    raise GenerationError(
                        f"{self.name}: {n} items hold only {tuple_id} input pairs with their "
                        f"mutations, under the {NLI_FOLDS} that fill the folds; raise the size"
                    )
                break
            for item in groups[g]:
                item.misc["tuple_id"] = tuple_id
            items += groups[g]
        stats["items"] = len(items)
        return FunctionWordSet(self.name, items, stats, {"size": self.size, "seed": seed})


def _preposition_spans(record: AnnotatedSentence) -> list[tuple[int, int, str]]:
    """(start, end, preposition) of each Appendix D preposition, longest match first; the
    first word must be a preposition (UD ADP, not a verb particle) or the entry multi-word."""
    words = _words(record)
    entries = sorted((p.split() for p in PREPOSITIONS), key=len, reverse=True)
    spans, i = [], 0
    while i < len(words):
        for entry in entries:
            if words[i : i + len(entry)] == entry:
                single_ok = record.upos[i] == "ADP" and record.deprels[i] != "compound:prt"
                if len(entry) > 1 or single_ok:
                    spans.append((i, i + len(entry), " ".join(entry)))
                    i += len(entry) - 1
                break
        i += 1
    return spans


def _selected(record: AnnotatedSentence, start: int) -> bool:
    """Whether the preposition at ``start`` is selected by the word before it (an adjective,
    adverb or verb particle: "far from", "close to", "next to", "because of", "out of"), so
    swapping it makes no sentence ("far by Frank's office")."""
    return start > 0 and record.upos[start - 1] in ("ADJ", "ADV", "ADP", "SCONJ", "PART")


@dataclass
class Prepositions(NLISet):
    name: ClassVar[str] = "nli-prepositions"

    def items_for(self, pair: Pair, rng: np.random.Generator, stats: Counter) -> list[Item]:
        spans = _preposition_spans(pair.hypothesis)
        if not spans:
            return []
        if keeps_label(self.name, pair.label):
            stats["skipped: the swap would keep the label (a neutral pair)"] += 1
            return []
        spans = [sp for sp in spans if not _selected(pair.hypothesis, sp[0])]
        if not spans:
            stats["skipped: every preposition is selected by the word before it"] += 1
            return []
        start, end, prep = spans[int(rng.integers(len(spans)))]
        others = [p for p in PREPOSITIONS if p != prep and len(p.split()) == 1]
        new = others[int(rng.integers(len(others)))]
        tokens = list(pair.hypothesis.tokens)
        replacement = match_case(tokens[start], new).split()
        mutated = tokens[:start] + replacement + tokens[end:]
        mutation = Mutation(
            "preposition-swap", tuple(range(start, end)), tuple(tokens[start:end]),
            tuple(replacement),
        )  # fmt: skip
        stats[f"swapped: {prep}"] += 1
        hyp = " ".join(tokens)
        return [
            _item(pair, pair.premise.tokens, pair.hypothesis.tokens, pair.label,
                  task_desc=prep, category="prepswap", original=True),
            _mutated(pair, self.name, pair.premise.tokens, mutated, task_desc=prep,
                     category="prepswap", original=False,
                     mutation={**mutation.to_json(), "original": hyp}),
        ]  # fmt: skip


def _subtypes(record: AnnotatedSentence, table: dict[str, tuple[str, ...]]) -> list[str]:
    """The sub-types of ``table`` whose words occur in the sentence in the phenomenon's
    sense (not as a verb: "she left"; :func:`spatial_sense`, :func:`quantity_sense`), in
    table order; numerals (UD NUM, not years) count for ``quant_num``, comparative
    adjectives and adverbs (PTB JJR, RBR: "wider") for ``compare_other``."""
    words = _words(record)
    sense = spatial_sense if table is SPATIAL else quantity_sense if table is QUANTIFIERS else None

    def counts(i: int) -> bool:
        return record.upos[i] != "VERB" and (sense is None or sense(record, i))

    found = [
        name
        for name, vocab in table.items()
        if any(w in vocab and counts(i) for i, w in enumerate(words))
        or (
            name == "quant_num" and any(u == "NUM" and counts(i) for i, u in enumerate(record.upos))
        )
    ]
    if "compare_more_less" in table and not found and {"JJR", "RBR"} & set(record.xpos):
        found.append("compare_other")
    return found


@dataclass
class NegatedHypothesis(NLISet):
    """Pairs with a word of the phenomenon in both sentences (the paper: "a comparative
    phrase in both", "at least one quantifier in both"); the sub-type recorded is the
    hypothesis's; mutated: the hypothesis negated."""

    table: ClassVar[dict[str, tuple[str, ...]]] = {}
    category: ClassVar[str] = "grounded"

    def items_for(self, pair: Pair, rng: np.random.Generator, stats: Counter) -> list[Item]:
        in_premise, in_hypothesis = (_subtypes(r, self.table) for r in pair.text_records())
        if not in_premise or not in_hypothesis:
            return []
        if keeps_label(self.name, pair.label):
            stats["skipped: negating the hypothesis would keep the label (a neutral pair)"] += 1
            return []
        sub = in_hypothesis[0]
        negated = explicit_negation(pair.hypothesis)
        if negated is None:
            stats["skipped: hypothesis negated already or no finite main verb"] += 1
            return []
        tokens, mutation = negated
        stats[f"sub-type: {sub}"] += 1
        hyp = " ".join(pair.hypothesis.tokens)
        return [
            _item(pair, pair.premise.tokens, pair.hypothesis.tokens, pair.label,
                  task_desc=sub, category=self.category, original=True),
            _mutated(pair, self.name, pair.premise.tokens, tokens, task_desc=sub,
                     category=self.category, original=False,
                     mutation={**mutation.to_json(), "original": hyp}),
        ]  # fmt: skip


@dataclass
class Comparatives(NegatedHypothesis):
    name: ClassVar[str] = "nli-comparatives"
    table: ClassVar[dict[str, tuple[str, ...]]] = COMPARATIVES


@dataclass
class Quantification(NegatedHypothesis):
    """Quantifier pairs that are not comparative pairs: a pair with a comparative in both
    sentences ("more than one site") goes to Comparatives only, so no source pair is in
    both sets."""

    name: ClassVar[str] = "nli-quantification"
    table: ClassVar[dict[str, tuple[str, ...]]] = QUANTIFIERS

    def items_for(self, pair: Pair, rng: np.random.Generator, stats: Counter) -> list[Item]:
        if all(_subtypes(r, COMPARATIVES) for r in pair.text_records()):
            stats["skipped: a comparative pair (nli-comparatives takes it)"] += 1
            return []
        return super().items_for(pair, rng, stats)


@dataclass
class Spatial(NegatedHypothesis):
    name: ClassVar[str] = "nli-spatial"
    table: ClassVar[dict[str, tuple[str, ...]]] = SPATIAL


def _negation_forms(
    record: AnnotatedSentence, position: int, antonym: str
) -> dict[str, tuple[list[str], list[dict]]] | None:
    """The four forms of one side, with their mutations; None if one cannot be made."""
    lex_tokens, lex = lexical_negation(record.tokens, position, antonym)
    swapped = replace(
        record,
        tokens=lex_tokens,
        lemmas=[*record.lemmas[:position], antonym, *record.lemmas[position + 1 :]],
    )
    neg, both = explicit_negation(record), explicit_negation(swapped)
    if neg is None or both is None:
        return None
    return {
        "unchanged": (list(record.tokens), []),
        "neg": (neg[0], [neg[1].to_json()]),
        "lneg": (lex_tokens, [lex.to_json()]),
        "lexpneg": (both[0], [lex.to_json(), both[1].to_json()]),
    }


#: Words that are no antonym inside these expressions (previous word, word, next word):
#: "in order to" is no "order" that "disorder" negates.
FIXED_EXPRESSIONS = frozenset(
    {("in", "order", "to"), ("in", "order", "that"), ("at", "first", ""), ("at", "last", ""),
     ("at", "least", ""), ("at", "most", ""), ("all", "right", ""), ("right", "away", "")}
)  # fmt: skip


def in_fixed_expression(words: Sequence[str], i: int) -> bool:
    """Whether ``words[i]`` is part of one of ``FIXED_EXPRESSIONS``."""
    prev = words[i - 1] if i else ""
    nxt = words[i + 1] if i + 1 < len(words) else ""
    return (prev, words[i], nxt) in FIXED_EXPRESSIONS or (prev, words[i], "") in FIXED_EXPRESSIONS


@dataclass
class Negation(NLISet):
    """All 16 negation patterns of pairs with an antonym pair across the two sentences."""

    name: ClassVar[str] = "nli-negation"
    wordnet: str | None = None

    def items_for(self, pair: Pair, rng: np.random.Generator, stats: Counter) -> list[Item]:
        from .wordnet import UPOS_TO_WORDNET, default_wordnet, negation_antonyms

        lexicon = negation_antonyms(self.wordnet or default_wordnet())
        if is_negated(pair.premise) or is_negated(pair.hypothesis):
            return []
        hyp_words = _words(pair.hypothesis)
        found = []
        prem_words = _words(pair.premise)
        for i in antonym_positions(pair.premise, lexicon):
            pos = UPOS_TO_WORDNET[pair.premise.upos[i]]
            word = pair.premise.tokens[i].lower()
            if in_fixed_expression(prem_words, i):
                continue
            for j in antonym_positions(pair.hypothesis, lexicon):
                same_pos = UPOS_TO_WORDNET[pair.hypothesis.upos[j]] == pos
                if not same_pos or hyp_words[j] not in lexicon[word, pos]:
                    continue
                if in_fixed_expression(hyp_words, j):
                    continue
                if hyp_words[j] in prem_words or word in hyp_words:
                    # both antonyms on one side: swapping gives "physical and physical"
                    stats["skipped: both antonyms on one side"] += 1
                    continue
                found.append((i, j))
        if not found:
            return []
        i, j = found[int(rng.integers(len(found)))]
        a, b = pair.premise.tokens[i].lower(), hyp_words[j]
        p_forms = _negation_forms(pair.premise, i, b)
        h_forms = _negation_forms(pair.hypothesis, j, a)
        if p_forms is None or h_forms is None:
            stats["skipped: a sentence cannot take explicit negation"] += 1
            return []
        stats[f"antonyms: {a}/{b}"] += 1
        items = []
        for p_name, (p_tokens, p_mut) in p_forms.items():
            for h_name, (h_tokens, h_mut) in h_forms.items():
                pattern = f"{p_name}-{h_name}"
                misc = {"task_desc": pattern, "category": "negation", "antonyms": [a, b],
                        "mutation": {"premise": p_mut, "hypothesis": h_mut,
                                     "original": list(pair.text())}}  # fmt: skip
                if pattern == "unchanged-unchanged":
                    item = _item(pair, p_tokens, h_tokens, pair.label, original=True,
                                 expected_label="original", **misc)  # fmt: skip
                else:
                    item = _mutated(
                        pair, self.name, p_tokens, h_tokens, pattern, original=False, **misc
                    )
                items.append(item)
        return items


#: The NLI generators by release set name.
NLI_SETS = {g.name: g for g in (Prepositions, Comparatives, Quantification, Spatial, Negation)}


def annotate_pairs(
    raw: Iterable[tuple[str, str, str, str]], annotator: Any, tokenize: Any
) -> list[Pair]:
    """Tokenize (Moses) and annotate both sides of every pair, in one annotator pass."""
    raw = list(raw)
    sides = [" ".join(tokenize(s)) for p, h, _, _ in raw for s in (p, h)]
    records = list(annotator.annotate(sides, pretokenized=True))
    return [
        Pair(records[2 * k], records[2 * k + 1], label, pid)
        for k, (_, _, label, pid) in enumerate(raw)
    ]
