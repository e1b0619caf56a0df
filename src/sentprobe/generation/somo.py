"""SOMO (Conneau et al. 2018, sec. 2): a noun or verb replaced by another of the same tag whose
bigrams with its neighbours are about as frequent; original or altered?

It guards against the same leaks as CoordInv (see ``coordination``), and one more: two
sentences one word apart (templated text) are never in different splits.
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

from .base import (
    GeneratedTask,
    GenerationError,
    Scan,
    edge_key,
    make_rng,
    per_class,
    shuffled,
)
from .inputs import Item, annotated_items

__all__ = ["SOMO"]


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

    Splits are filled test, dev, train (the small splits get replacement words first). In
    each, sentences are drawn at random among those that can be altered in that split (a
    replacement not owned by another split, giving a new sentence) and paired on
    ``edge_key`` (first token, last token, number of punctuation tokens); a coin decides
    which of a pair is altered. Both classes are the same kind of sentence in every split,
    with identical distributions of what a single-position rule sees.
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
        for w, by_tag in tags.items():
            if self._in_band(w):
                best = min(by_tag, key=lambda t: (-by_tag[t], t))
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

    def _alteration(
        self,
        drawn: _Drawn,
        split: str,
        owner: Mapping[str, str],
        corpus: set[str],
        altered: set[str],
        rng: np.random.Generator,
        stats: Counter,
    ) -> tuple[str, str] | None:
        """A random allowed replacement of ``drawn`` in ``split``: (altered text, word), or
        None when none is left (its words belong to other splits, or every result exists)."""
        opts = {
            i: [r for r in rs if owner.get(r, split) == split] for i, rs in drawn.options.items()
        }
        opts = {i: rs for i, rs in opts.items() if rs}
        if not opts:
            stats["rejected: replacements all used by other splits"] += 1
            return None
        units = list(drawn.item.surface.units)
        while opts:
            i = sorted(opts)[int(rng.integers(len(opts)))]
            r = opts[i].pop(int(rng.integers(len(opts[i]))))
            if not opts[i]:
                del opts[i]
            unit = drawn.item.surface.unit_of_word(i)
            text = " ".join(units[:unit] + [r] + units[unit + 1 :])
            if text not in corpus and text not in altered:
                return text, r
        stats["rejected: every altered version exists already"] += 1
        return None

    def generate(
        self, sentences: Sequence[AnnotatedSentence], sizes: Mapping[str, int], seed: int
    ) -> GeneratedTask:
        return self.draw(self.scan(sentences), sizes, seed)

    def scan(self, sentences: Sequence[AnnotatedSentence]) -> Scan:
        """The size-independent part: the eligible sentences, the corpus's sentences and
        the word and bigram index (with its memo of fitting replacements)."""
        stats: Counter = Counter()
        items = annotated_items(sentences, stats, self.name)
        self._index(items)
        index = {k: v for k, v in vars(self).items() if k.startswith("_")}
        return Scan((items, {item.text for item in items}, index), stats)

    def draw(self, scan: Scan, sizes: Mapping[str, int], seed: int) -> GeneratedTask:
        (items, corpus, index), stats = scan.pools, Counter(scan.stats)
        vars(self).update(index)  # the scan's index (a pure function of the corpus)
        counts = per_class(sizes, 2, self.name)
        rng = make_rng(seed, self.name)
        stream = _Stream(items, rng)
        owner: dict[str, str] = {}  # replacement word -> the split it belongs to
        drawn: dict[str, dict[str, list[str]]] = {s: {"O": [], "C": []} for s in SPLITS}
        altered: set[str] = set()
        near: dict[str, str] = {}  # one-word-masked sentence -> the split it was used in
        sources: dict[str, str] = {}
        targets: dict[str, str] = {}  # altered sentence -> its replacement word
        try:
            for s in ("test", "dev", "train"):  # small splits first, so they get replacements
                # Sentences are drawn at random among those that can be altered in this split
                # and paired on their edges (``edge_key``); which one of a pair is altered is
                # a coin flip. Originals and altered sentences are the same kind of sentence,
                # with identical first tokens, last tokens and punctuation counts.
                waiting: dict[tuple, tuple[Item, tuple[str, str]]] = {}
                while len(drawn[s]["C"]) < counts[s]:
                    item = stream.next_with(self.options, stats)
                    change = self._alteration(item, s, owner, corpus, altered, rng, stats)
                    if change is None:
                        continue
                    key = edge_key(item.item.surface.units)
                    if key not in waiting:
                        waiting[key] = (item.item, change)
                        continue
                    pair = [waiting.pop(key), (item.item, change)]
                    if rng.integers(2):
                        pair.reverse()
                    (original, _), (source, (text, r)) = pair
                    if text in altered:  # another pair made this sentence meanwhile
                        stats["rejected: altered sentence exists already"] += 1
                        waiting[key] = pair[0]
                        continue
                    if _near_other_split(near, s, original.text, text):
                        # templated text ("Select the font from the list .") has natural
                        # one-word variants: one in another split, with the other label,
                        # would let a probe score by recognising the pair
                        stats["rejected: one word away from a sentence of another split"] += 1
                        continue
                    for sentence in (original.text, text):
                        near.update(dict.fromkeys(_one_word_masks(sentence), s))
                    owner[r] = s
                    targets[text] = r
                    altered.add(text)
                    sources[text] = source.text
                    drawn[s]["C"].append(text)
                    drawn[s]["O"].append(original.text)
                stats["not used: no partner with the same edges"] += len(waiting)
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


def _one_word_masks(sentence: str) -> list[str]:
    """The sentence with each token in turn replaced by a mask: two sentences of equal length
    that differ in one token share one of these."""
    tokens = sentence.split()
    return [" ".join([*tokens[:i], "\0", *tokens[i + 1 :]]) for i in range(len(tokens))]


def _near_other_split(near: Mapping[str, str], split: str, *sentences: str) -> bool:
    """Whether any of ``sentences`` is one token away from a sentence used in another split."""
    return any(near.get(m, split) != split for s in sentences for m in _one_word_masks(s))


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
