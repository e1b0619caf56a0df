"""CoordInv (Conneau et al. 2018, sec. 2): the two coordinated main clauses of a sentence in
their original order or inverted.

Like every altered-sentence task, it guards against leaks: a corpus sentence is used once
(never in both versions), an altered sentence that equals a real one is dropped, originals
are drawn exactly like the sentences that get altered (being alterable is no cue), and
nothing at the edges of a sentence (first token and its casing, last token, final
punctuation) differs between the classes.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import ClassVar

import numpy as np

from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.datasets.task import SPLITS

from .base import (
    GeneratedTask,
    GenerationError,
    Scan,
    base_deprel,
    edge_key,
    is_punctuation,
    make_rng,
    per_class,
    shuffled,
)
from .inputs import Item, annotated_items
from .trees import subtree

__all__ = ["CoordInv", "capitalise", "decapitalise"]


def capitalise(token: str) -> str:
    return token[:1].upper() + token[1:]


def decapitalise(token: str) -> str:
    return token[:1].lower() + token[1:]


_OPENING = {"(": ")", "[": "]", "{": "}"}
_CLOSING = {v: k for k, v in _OPENING.items()}
_QUOTE_CHARS = set("\"'`\u00ab\u00bb\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u2039\u203a")


def _is_quote(token: str) -> bool:
    return bool(token) and all(ch in _QUOTE_CHARS for ch in token)


def _balanced(tokens: Sequence[str]) -> bool:
    """Brackets pair up inside ``tokens`` and quotes come in pairs, so moving the span
    elsewhere cannot separate a bracket or quote from its partner."""
    stack: list[str] = []
    for tok in tokens:
        if tok in _OPENING:
            stack.append(tok)
        elif tok in _CLOSING and (not stack or stack.pop() != _CLOSING[tok]):
            return False
    return not stack and sum(map(_is_quote, tokens)) % 2 == 0


@dataclass(frozen=True)
class Clauses:
    """A sentence cut as ``first sep cc second tail`` (surface tokens), e.g.
    ``They were tired`` ``,`` ``but`` ``they went on`` ``.``: ``tail`` is the sentence's
    final punctuation, which stays final when the clauses swap."""

    first: tuple[str, ...]
    sep: tuple[str, ...]
    cc: tuple[str, ...]
    second: tuple[str, ...]
    tail: tuple[str, ...]
    keep_first_case: bool  # the first word is a proper noun / "I": never lower-cased

    def original_tokens(self) -> tuple[str, ...]:
        return self.first + self.sep + self.cc + self.second + self.tail

    def inverted_tokens(self) -> tuple[str, ...]:
        second = (capitalise(self.second[0]), *self.second[1:])
        old = self.first[0] if self.keep_first_case else decapitalise(self.first[0])
        return second + self.sep + self.cc + (old, *self.first[1:]) + self.tail

    def original(self) -> str:
        return " ".join(self.original_tokens())

    def inverted(self) -> str:
        return " ".join(self.inverted_tokens())

    def key(self, label: str) -> tuple:
        """What a single-position rule sees of the sentence shown with ``label``
        (``edge_key``), and whether its longer clause comes first. Originals and inverted
        sentences are paired on it, so none of it tells the classes apart."""
        first_longer = len(self.first) > len(self.second)
        if label == "O":
            return *edge_key(self.original_tokens()), first_longer
        return *edge_key(self.inverted_tokens()), not first_longer


def _is_coordinating_conjunction(sent: AnnotatedSentence, i: int) -> bool:
    return (
        base_deprel(sent.deprels[i]) == "cc"
        or sent.upos[i] == "CCONJ"
        or (i < len(sent.xpos) and sent.xpos[i] == "CC")
    )


@dataclass
class CoordInv:
    """CoordInv: were two coordinated main clauses swapped ("I") or not ("O")?

    A sentence qualifies when it has exactly one coordinating conjunction (UPOS CCONJ, PTB
    tag CC or relation ``cc``, anywhere in the sentence), its root has exactly one ``conj``
    dependent and that conjunction belongs to it, both root and conjunct have their own
    subject (``subject_relations``), it ends in punctuation, and the second clause is one
    contiguous span running from the conjunction to that final punctuation (parsers that
    attach the final "." to the conjunct are handled: the final punctuation is cut off and
    stays final). Only punctuation may stand between the clauses; neither clause may start
    with punctuation or hold a bracket or quote whose partner is outside it. Sentences whose
    first word starts with a lower-case letter are dropped. Inverting capitalises the new
    first word and lower-cases the old one unless its UPOS is in ``keep_case_upos`` (proper
    nouns; add NOUN for German), its PTB tag is NNP/NNPS, it is in ``keep_case_words`` ("I")
    or it has capitals after the first letter ("NASA", "McCain"). Clauses of equal length
    are dropped.

    Every original is paired with an inverted sentence (from another corpus sentence) that
    shows the same first token, last token and number of punctuation tokens (``edge_key``)
    and the longer clause on the same side (``Clauses.key``); pairs are dealt out to the
    splits, so in every split the two classes have identical distributions of those. A
    corpus too small for that (a treebank of a thousand sentences) pairs what is left on
    coarser keys, counted in the stats ("paired on ...") and reported by the audit.
    """

    name: ClassVar[str] = "CoordInv"
    file: ClassVar[str] = "coordination_inversion.txt"
    labels: ClassVar[list[str]] = ["O", "I"]

    subject_relations: tuple[str, ...] = ("nsubj", "nsubj:pass", "csubj", "expl")
    keep_case_upos: tuple[str, ...] = ("PROPN",)
    keep_case_words: tuple[str, ...] = ("I",)

    def keeps_case(self, sent: AnnotatedSentence, i: int) -> bool:
        tok = sent.tokens[i]
        return (
            sent.upos[i] in self.keep_case_upos
            or (i < len(sent.xpos) and sent.xpos[i] in ("NNP", "NNPS"))
            or tok in self.keep_case_words
            or any(ch.isupper() for ch in tok[1:])
        )

    def clauses(self, item: Item) -> Clauses | str:
        """The sentence cut into its two clauses, or why it does not qualify."""
        sent = item.sent
        n = len(sent.tokens)
        ccs = [j for j in range(n) if _is_coordinating_conjunction(sent, j)]
        if len(ccs) != 1:
            return "not exactly one coordinating conjunction in the sentence"
        k = ccs[0]
        root = sent.root
        kids = sent.children(root)
        conj = [j for j in kids if base_deprel(sent.deprels[j]) == "conj"]
        if len(conj) != 1:
            return "root does not have exactly one conj"
        c = conj[0]
        if sent.heads[k] != c + 1 or sent.deprels[k] != "cc":
            return "the conjunction is not the cc of the root's conjunct"
        subj = self.subject_relations
        if not any(sent.deprels[j] in subj for j in kids) or not any(
            sent.deprels[j] in subj for j in sent.children(c)
        ):
            return "a conjunct has no subject of its own (not two clauses)"
        punct = [u == "PUNCT" or is_punctuation(t) for u, t in zip(sent.upos, sent.tokens)]
        end = n  # the final punctuation: [end, n)
        while end > 0 and punct[end - 1]:
            end -= 1
        if end == n:
            return "no final punctuation"
        span = [j for j in subtree(sent.heads, c) if j < end]
        a, b = span[0], span[-1]
        if span != list(range(a, b + 1)) or not root < a <= k:
            return "second clause is not one span after the first"
        if b != end - 1 or not all(punct[a:k]):
            return "more than punctuation around the conjunction or after the second clause"
        end1 = a  # the first clause ends before the punctuation between the clauses
        while end1 > 0 and punct[end1 - 1] and sent.tokens[end1 - 1] not in _CLOSING:
            end1 -= 1
        if end1 == 0 or k + 1 >= end:
            return "empty clause"
        segments = [(0, end1), (end1, k), (k, k + 1), (k + 1, end), (end, n)]
        parts = []
        spans = list(zip(item.surface.units, item.surface.spans))
        for lo, hi in segments:  # surface tokens whose words all fall in [lo, hi)
            inside = [(u, last) for u, (first, last) in spans if lo <= first < hi]
            if any(last >= hi for _, last in inside):
                return "multi-word token across a clause boundary"
            parts.append(tuple(u for u, _ in inside))
        first, sep, cc, second, tail = parts
        if is_punctuation(first[0]) or is_punctuation(second[0]):
            return "a clause starts with punctuation"
        if not _balanced(first) or not _balanced(second):
            return "a bracket or quote crosses a clause boundary"
        return Clauses(first, sep, cc, second, tail, keep_first_case=self.keeps_case(sent, 0))

    def generate(
        self, sentences: Sequence[AnnotatedSentence], sizes: Mapping[str, int], seed: int
    ) -> GeneratedTask:
        return self.draw(self.scan(sentences), sizes, seed)

    def scan(self, sentences: Sequence[AnnotatedSentence]) -> Scan:
        """The size-independent part: the qualifying sentences' clauses, and the corpus's
        sentences (an inverted sentence that exists in it is not made)."""
        stats: Counter = Counter()
        items = annotated_items(sentences, stats, self.name)
        pool: list[Clauses] = []
        for item in items:
            if item.surface.units[0][:1].islower():
                stats["rejected: first word not capitalised"] += 1
                continue
            cl = self.clauses(item)
            if isinstance(cl, str):
                stats[f"rejected: {cl}"] += 1
            elif len(cl.first) == len(cl.second):
                stats["rejected: clauses of equal length"] += 1
            else:
                pool.append(cl)
        stats["eligible"] = len(pool)
        return Scan((pool, {item.text for item in items}, len(items)), stats)

    def draw(self, scan: Scan, sizes: Mapping[str, int], seed: int) -> GeneratedTask:
        (pool, corpus, n_items), stats = scan.pools, Counter(scan.stats)
        counts = per_class(sizes, 2, self.name)
        need = sum(counts.values())
        rng = make_rng(seed, self.name)
        pairs = self._pairs(pool, need, corpus, rng, stats)
        if len(pairs) < need:
            raise GenerationError(
                f"{self.name}: {need} pairs of an original and an inverted sentence with the "
                f"longer clause on the same side are needed "
                f"({', '.join(f'{counts[s]} {s}' for s in SPLITS)} per class), but the "
                f"{len(pool)} qualifying sentences of {n_items} give {len(pairs)}. Lower "
                f"the sizes, add subject_relations, or use a larger corpus."
            )
        pairs = [pairs[j] for j in rng.permutation(len(pairs))]
        sources: dict[str, str] = {}
        splits, start = {}, 0
        for s in SPLITS:
            examples: list[tuple[str, str]] = []
            for o, i in pairs[start : start + counts[s]]:
                text = i.inverted()
                sources[text] = i.original()
                examples += [(o.original(), "O"), (text, "I")]
            start += counts[s]
            splits[s] = shuffled(examples, rng)
        stats["used"] = sum(len(v) for v in splits.values())
        return GeneratedTask(
            self.name, self.file, list(self.labels), splits, stats, asdict(self), sources
        )

    @staticmethod
    def _pairs(
        pool: Sequence[Clauses],
        need: int,
        corpus: set[str],
        rng: np.random.Generator,
        stats: Counter,
    ) -> list[tuple[Clauses, Clauses]]:
        """Up to ``need`` (original, to-invert) pairs of distinct sentences with equal keys.

        Sentences come in a seeded random order; each is paired with the first waiting
        sentence it matches (as original with one waiting to be inverted, or the other way
        round), else it waits in both roles. Each sentence is used once. A corpus too small
        for ``need`` pairs on the whole key (a treebank of a thousand sentences holds a few
        dozen candidates) pairs its remaining sentences on coarser keys (``_COARSER``); the
        stats count the pairs of each level, and the audit reports any cue that results.
        """
        used: set[int] = set()
        inverted: set[str] = set()
        pairs: list[tuple[Clauses, Clauses]] = []
        order = rng.permutation(len(pool)).tolist()
        for level, (what, coarse) in enumerate(_COARSER):
            waiting: dict[str, dict[tuple, deque[int]]] = {"O": {}, "I": {}}

            def partner(role: str, key: tuple, waiting=waiting) -> int | None:
                queue = waiting[role].get(key)
                while queue:
                    j = queue.popleft()
                    if j not in used and (role == "O" or pool[j].inverted() not in inverted):
                        return j
                return None

            before = len(pairs)
            for j in order:
                if len(pairs) >= need:
                    break
                if j in used:
                    continue
                cl = pool[j]
                text = cl.inverted()
                invertible = text not in corpus and text not in inverted
                if level == 0 and text in corpus:
                    stats["not inverted: inverted sentence exists in corpus"] += 1
                key_o, key_i = coarse(cl.key("O")), coarse(cl.key("I"))
                p = partner("I", key_o)
                if p is not None:
                    pairs.append((cl, pool[p]))
                    inverted.add(pool[p].inverted())
                elif invertible and (p := partner("O", key_i)) is not None:
                    pairs.append((pool[p], cl))
                    inverted.add(text)
                else:
                    waiting["O"].setdefault(key_o, deque()).append(j)
                    if invertible:
                        waiting["I"].setdefault(key_i, deque()).append(j)
                    continue
                used.update((j, p))
            if len(pairs) > before:
                stats[f"paired on {what}"] = len(pairs) - before
        return pairs


def _shape(token: str) -> str:
    """The class and casing of a first token: "Aa", "AA", "0" (digit) or "x"."""
    if token[:1].isdigit():
        return "0"
    if token[:1].isupper():
        return "AA" if token.isupper() and len(token) > 1 else "Aa"
    return "x"


#: CoordInv's pairing keys, finest first: (first token, last token, punctuation count,
#: longer clause first) as ``Clauses.key`` gives it, then coarser ones for small corpora.
_COARSER: tuple[tuple[str, Callable[[tuple], tuple]], ...] = (
    ("first and last token, punctuation count, clause order", lambda k: k),
    (
        "first-token shape, last token, punctuation count, clause order",
        lambda k: (_shape(k[0]), *k[1:]),
    ),
    ("first-token shape, last token, clause order", lambda k: (_shape(k[0]), k[1], k[3])),
    ("clause order only", lambda k: (k[3],)),
)
