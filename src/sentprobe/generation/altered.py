"""Tasks on altered sentences (Conneau et al. 2018, sec. 2): SOMO and CoordInv.

Both label a sentence as original or altered, so both guard against the same leaks: a
corpus sentence is used once (never in both versions), an altered sentence that equals a
real one is dropped, originals come from the same pool as the sentences that were altered
(being alterable is no cue), and nothing about casing differs between the classes.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import ClassVar, Literal

import numpy as np

from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.datasets.task import SPLITS

from .base import GeneratedTask, GenerationError, make_rng, per_class, shuffled
from .inputs import Item, annotated_items
from .trees import subtree

__all__ = ["SOMO", "CoordInv", "capitalise", "decapitalise"]


def _base(deprel: str) -> str:
    return deprel.split(":")[0]


# --------------------------------------------------------------------------------------------
# SOMO


@dataclass
class SOMO:
    """SOMO: was a noun or verb replaced by another word ("C") or is the sentence original ("O")?

    Rules: the replaced word is a random one (not the first: X-Probe's defect) among the
    sentence's words with UPOS in ``upos``, not the first or last word (both neighbours are
    real words), not inside a multi-word token, with corpus frequency in ``freq_band``. The
    replacement has the same tag (``ptb``: the same PTB tag, so NN stays NN; ``ud``: the
    same UPOS and morphological features) as its most frequent analysis, frequency in
    ``freq_band``, and its bigrams with BOTH neighbours occur in the corpus with a
    log-frequency (natural log) within ``max_log_diff`` of the original bigrams'. Each
    replacement word is used in one split only. Counts are case-sensitive (German nouns).
    """

    name: ClassVar[str] = "SOMO"
    file: ClassVar[str] = "odd_man_out.txt"
    labels: ClassVar[list[str]] = ["O", "C"]

    annotation: Literal["ptb", "ud"] = "ptb"
    freq_band: tuple[int, int] = (40, 400)
    max_log_diff: float = 1.0
    upos: tuple[str, ...] = ("NOUN", "VERB")

    def tag(self, sent: AnnotatedSentence, i: int) -> str:
        """What a replacement must share with the original word."""
        if self.annotation == "ptb" and sent.xpos:
            return sent.xpos[i]
        feats = sent.feats[i] if i < len(sent.feats) and sent.feats[i] else {}
        return "|".join([sent.upos[i], *(f"{k}={v}" for k, v in sorted(feats.items()))])

    def _index(self, items: Sequence[Item]) -> None:
        """Unigram and bigram counts, and in-band words by their most frequent tag."""
        self._freq: Counter = Counter()
        self._bigram: Counter = Counter()
        pairs: Counter = Counter()  # (word, tag) -> count; C-level counting, same result
        for item in items:
            sent, words = item.sent, item.sent.tokens
            self._freq.update(words)
            self._bigram.update(zip(words, words[1:]))
            if self.annotation == "ptb" and sent.xpos:
                pairs.update(zip(words, sent.xpos))
            else:
                pairs.update((w, self.tag(sent, i)) for i, w in enumerate(words))
        self._next: dict[str, set[str]] = {}  # word -> words seen right after it
        self._prev: dict[str, set[str]] = {}  # word -> words seen right before it
        for p, w in self._bigram:
            self._next.setdefault(p, set()).add(w)
            self._prev.setdefault(w, set()).add(p)
        self._fits_left: dict[tuple[str, str, int], frozenset[str]] = {}
        self._fits_right: dict[tuple[str, str, int], frozenset[str]] = {}
        tags: dict[str, Counter] = {}
        for (w, t), c in pairs.items():
            tags.setdefault(w, Counter())[t] += c
        self._by_tag: dict[str, set[str]] = {}
        for w, c in tags.items():
            if self._in_band(w):
                best = min(c, key=lambda t: (-c[t], t))
                self._by_tag.setdefault(best, set()).add(w)

    def _in_band(self, word: str) -> bool:
        return self.freq_band[0] <= self._freq[word] <= self.freq_band[1]

    def _close(self, a: int, b: int) -> bool:
        return a > 0 and b > 0 and abs(math.log(a) - math.log(b)) <= self.max_log_diff

    def options(self, item: Item) -> dict[int, list[str]]:
        """Replaceable positions -> their allowed replacements (sorted)."""
        sent, out = item.sent, {}
        words = sent.tokens
        for i in range(1, len(words) - 1):
            o = words[i]
            if sent.upos[i] not in self.upos or not self._in_band(o):
                continue
            if not item.surface.is_single_word(i):
                continue
            p, n = words[i - 1], words[i + 1]
            tag = self.tag(sent, i)
            left = self._left(p, tag, self._bigram[p, o])
            if left:
                rs = sorted(left & self._right(n, tag, self._bigram[o, n]) - {o})
                if rs:
                    out[i] = rs
        return out

    def _left(self, p: str, tag: str, po: int) -> frozenset[str]:
        """Words of ``tag`` whose bigram after ``p`` is as frequent as ``po`` (``_close``);
        the same (p, tag, po) recurs across sentences, so each is computed once."""
        key = (p, tag, po)
        if key not in self._fits_left:
            same_tag = self._by_tag.get(tag, set())
            self._fits_left[key] = frozenset(
                r
                for r in self._next.get(p, set()) & same_tag
                if self._close(self._bigram[p, r], po)
            )
        return self._fits_left[key]

    def _right(self, n: str, tag: str, on: int) -> frozenset[str]:
        """Words of ``tag`` whose bigram before ``n`` is as frequent as ``on``."""
        key = (n, tag, on)
        if key not in self._fits_right:
            same_tag = self._by_tag.get(tag, set())
            self._fits_right[key] = frozenset(
                r
                for r in self._prev.get(n, set()) & same_tag
                if self._close(self._bigram[r, n], on)
            )
        return self._fits_right[key]

    def generate(
        self, sentences: Sequence[AnnotatedSentence], sizes: Mapping[str, int], seed: int
    ) -> GeneratedTask:
        stats: Counter = Counter()
        items = annotated_items(sentences, stats, self.name)
        self._index(items)
        counts = per_class(sizes, 2, self.name)
        rng = make_rng(seed, self.name)
        corpus = {item.text for item in items}
        stream = _Stream(items, rng)
        owner: dict[str, str] = {}  # replacement word -> the split it belongs to
        spare: list[Item] = []  # alterable sentences that could not be altered in this split
        drawn: dict[str, dict[str, list[str]]] = {s: {"O": [], "C": []} for s in SPLITS}
        altered: set[str] = set()
        sources: dict[str, str] = {}
        targets: dict[str, str] = {}  # altered sentence -> its replacement word
        try:
            for s in ("test", "dev", "train"):  # small splits first, so they get replacements
                while len(drawn[s]["C"]) < counts[s]:
                    item = stream.next_with(self.options, stats)
                    opts = {
                        i: [r for r in rs if owner.get(r, s) == s] for i, rs in item.options.items()
                    }
                    opts = {i: rs for i, rs in opts.items() if rs}
                    if not opts:
                        stats["kept as original: replacements all used by other splits"] += 1
                        spare.append(item.item)
                        continue
                    i = sorted(opts)[int(rng.integers(len(opts)))]
                    r = opts[i][int(rng.integers(len(opts[i])))]
                    units = list(item.item.surface.units)
                    units[item.item.surface.unit_of_word(i)] = r
                    text = " ".join(units)
                    if text in corpus or text in altered:
                        stats["kept as original: altered sentence exists already"] += 1
                        spare.append(item.item)
                        continue
                    owner[r] = s
                    targets[text] = r
                    altered.add(text)
                    sources[text] = item.item.text
                    drawn[s]["C"].append(text)
                while len(drawn[s]["O"]) < counts[s]:
                    original = spare.pop(0) if spare else stream.next_with(self.options, stats).item
                    drawn[s]["O"].append(original.text)
        except StopIteration:
            made = {s: min(len(v["O"]), len(v["C"])) for s, v in drawn.items()}
            raise GenerationError(
                f"{self.name}: ran out of sentences with a replaceable noun/verb "
                f"({stream.alterable} of {len(items)} qualify); made per class "
                f"{made} of {counts}. Lower the sizes, widen freq_band (now "
                f"{list(self.freq_band)}), raise max_log_diff (now {self.max_log_diff}), "
                f"use annotation='ud' tags or a larger corpus."
            ) from None
        stats["eligible (alterable sentences seen)"] = stream.alterable
        stats["replacement words used"] = len(owner)
        splits = {
            s: shuffled([(t, lab) for lab in self.labels for t in drawn[s][lab]], rng)
            for s in SPLITS
        }
        stats["used"] = sum(len(v) for v in splits.values())
        return GeneratedTask(
            self.name, self.file, list(self.labels), splits, stats, asdict(self), sources, targets
        )


@dataclass
class _Drawn:
    item: Item
    options: dict[int, list[str]]


class _Stream:
    """Corpus items in a seeded random order, each handed out at most once."""

    def __init__(self, items: Sequence[Item], rng: np.random.Generator) -> None:
        self._items = items
        self._order: Iterator[int] = iter(rng.permutation(len(items)).tolist())
        self.alterable = 0

    def next_with(self, options, stats: Counter) -> _Drawn:
        """The next item that has replacement options (others are counted as rejected)."""
        while True:
            item = self._items[next(self._order)]
            opts = options(item)
            if opts:
                self.alterable += 1
                return _Drawn(item, opts)
            stats["rejected: no replaceable noun/verb with matching bigrams"] += 1


# --------------------------------------------------------------------------------------------
# CoordInv


def capitalise(token: str) -> str:
    return token[:1].upper() + token[1:]


def decapitalise(token: str) -> str:
    return token[:1].lower() + token[1:]


@dataclass(frozen=True)
class Clauses:
    """A sentence cut as ``first sep cc second tail`` (surface tokens), e.g.
    ``They were tired`` ``,`` ``but`` ``they went on`` ``.``."""

    first: tuple[str, ...]
    sep: tuple[str, ...]
    cc: tuple[str, ...]
    second: tuple[str, ...]
    tail: tuple[str, ...]
    keep_first_case: bool  # the first word is a proper noun / "I": never lower-cased

    def original(self) -> str:
        return " ".join(self.first + self.sep + self.cc + self.second + self.tail)

    def inverted(self) -> str:
        second = (capitalise(self.second[0]), *self.second[1:])
        old = self.first[0] if self.keep_first_case else decapitalise(self.first[0])
        return " ".join(second + self.sep + self.cc + (old, *self.first[1:]) + self.tail)


@dataclass
class CoordInv:
    """CoordInv: were two coordinated main clauses swapped ("I") or not ("O")?

    A sentence qualifies when its root has exactly one ``conj`` dependent, that conjunct has
    exactly one ``cc`` and the root none (no sentence-initial "And"), both root and conjunct
    have their own subject (``subject_relations``), the second clause is one contiguous span
    after the first, and only punctuation follows it. Sentences whose first word starts with
    a lower-case letter are dropped, so every sentence in both classes starts upper-case.
    Inverting capitalises the new first word and lower-cases the old one unless its UPOS is
    in ``keep_case_upos`` (proper nouns; add NOUN for German), its PTB tag is NNP/NNPS, it is
    in ``keep_case_words`` ("I") or it has capitals after the first letter ("NASA", "McCain").
    Clauses of equal length are dropped; in every split and class half the sentences show
    the longer clause first.
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
        root = sent.root
        kids = sent.children(root)
        conj = [j for j in kids if _base(sent.deprels[j]) == "conj"]
        if len(conj) != 1:
            return "root does not have exactly one conj"
        c = conj[0]
        if any(sent.deprels[j] == "cc" for j in kids):
            return "conjunction before the first clause"
        ccs = [j for j in sent.children(c) if sent.deprels[j] == "cc"]
        if len(ccs) != 1:
            return "conjunct does not have exactly one cc"
        k = ccs[0]
        subj = self.subject_relations
        if not any(sent.deprels[j] in subj for j in kids) or not any(
            sent.deprels[j] in subj for j in sent.children(c)
        ):
            return "a conjunct has no subject of its own (not two clauses)"
        span = subtree(sent.heads, c)
        a, b = span[0], span[-1]
        if span != list(range(a, b + 1)) or not root < a <= k:
            return "second clause is not one span after the first"
        n = len(sent.tokens)
        punct = [u == "PUNCT" for u in sent.upos]
        if not all(punct[a:k]) or not all(punct[b + 1 : n]):
            return "more than punctuation around the conjunction or after the second clause"
        end1 = a
        while end1 > 0 and punct[end1 - 1]:
            end1 -= 1
        if end1 == 0 or k + 1 > b:
            return "empty clause"
        segments = [(0, end1), (end1, k), (k, k + 1), (k + 1, b + 1), (b + 1, n)]
        parts = []
        spans = list(zip(item.surface.units, item.surface.spans))
        for lo, hi in segments:  # surface tokens whose words all fall in [lo, hi)
            inside = [(u, last) for u, (first, last) in spans if lo <= first < hi]
            if any(last >= hi for _, last in inside):
                return "multi-word token across a clause boundary"
            parts.append(tuple(u for u, _ in inside))
        return Clauses(*parts, keep_first_case=self.keeps_case(sent, 0))

    def generate(
        self, sentences: Sequence[AnnotatedSentence], sizes: Mapping[str, int], seed: int
    ) -> GeneratedTask:
        stats: Counter = Counter()
        items = annotated_items(sentences, stats, self.name)
        pools: dict[str, list[Clauses]] = {"first longer": [], "second longer": []}
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
                key = "first longer" if len(cl.first) > len(cl.second) else "second longer"
                pools[key].append(cl)
        stats["eligible"] = sum(len(p) for p in pools.values())
        counts = per_class(sizes, 2, self.name)
        rng = make_rng(seed, self.name)
        corpus = {item.text for item in items}
        inverted: set[str] = set()
        sources: dict[str, str] = {}
        streams = {key: iter(rng.permutation(len(p)).tolist()) for key, p in pools.items()}
        splits = {}
        try:
            for s in SPLITS:
                n, long_first = counts[s], counts[s] - counts[s] // 2
                examples: list[tuple[str, str]] = []
                # original with the longer clause first comes from "first longer"; inverted
                # with the longer clause first from "second longer", and so on.
                for label, key, m in (
                    ("O", "first longer", long_first),
                    ("O", "second longer", n - long_first),
                    ("I", "second longer", long_first),
                    ("I", "first longer", n - long_first),
                ):
                    for _ in range(m):
                        while True:
                            cl = pools[key][next(streams[key])]
                            text = cl.original() if label == "O" else cl.inverted()
                            if label == "O" or (text not in corpus and text not in inverted):
                                break
                            stats["rejected: inverted sentence exists in corpus"] += 1
                        if label == "I":
                            inverted.add(text)
                            sources[text] = cl.original()
                        examples.append((text, label))
                splits[s] = shuffled(examples, rng)
        except StopIteration:
            need = sum(counts.values())
            have = {k: len(p) for k, p in pools.items()}
            raise GenerationError(
                f"{self.name}: each clause-length group needs {need} sentences (half of "
                f"every class shows the longer clause first), but the corpus has {have} "
                f"of {len(items)} sentences; at most {min(have.values())} per class in "
                f"total fit. Lower the sizes, add subject_relations, or use a larger corpus."
            ) from None
        stats["used"] = sum(len(v) for v in splits.values())
        return GeneratedTask(
            self.name, self.file, list(self.labels), splits, stats, asdict(self), sources
        )
