"""Syntactic tasks (Conneau et al. 2018, sec. 2): BShift (no parser), TreeDepth, TopConst."""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import ClassVar, Literal

import numpy as np

from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.datasets.task import SPLITS

from .base import (
    GeneratedTask,
    GenerationError,
    Scan,
    assign_splits,
    edge_key,
    make_rng,
    per_class,
    shuffled,
    splits_from,
)
from .corpus import Tokens
from .inputs import Item, annotated_items, token_sequences
from .trees import constituency_depth, dependency_depth, implementation, top_constituent_sequence

__all__ = ["BigramShift", "TopConst", "TreeDepth", "is_punctuation", "length_matched_counts"]

_QUOTES = {'"', "\u201c", "\u201d", "\u201e", "``", "''"}


def is_punctuation(token: str) -> bool:
    """True for tokens made only of punctuation or symbols (".", "--", "%", "$", "=")."""
    return all(unicodedata.category(ch)[0] in "PS" for ch in token)


@dataclass
class BigramShift:
    """BShift: were two adjacent tokens swapped ("I") or is the sentence original ("O")?

    Rules (paper, plus fixes for X-Probe's defects): the swap never involves the first
    token (so capitalisation gives nothing away) nor the last one (so the sentence's end
    gives nothing away when it has no final punctuation), neither token is punctuation,
    the two tokens differ (otherwise nothing changes), sentences with double quotes are skipped,
    every sentence is used once (never in both versions) and an inverted sentence that
    equals another corpus sentence is rejected. Original and inverted sentences come from
    the same pool (sentences with at least one allowed swap), so eligibility is no cue, and
    are paired on ``edge_key`` (first token, last token, number of punctuation tokens), so
    no single-position rule tells the classes apart.
    """

    name: ClassVar[str] = "BShift"
    file: ClassVar[str] = "bigram_shift.txt"
    labels: ClassVar[list[str]] = ["O", "I"]

    first_position: int = 1
    skip_quotes: bool = True

    def positions(self, tokens: Tokens) -> list[int]:
        """Indices i such that tokens i and i+1 may be swapped (never the last token)."""
        return [
            i
            for i in range(self.first_position, len(tokens) - 2)
            if tokens[i] != tokens[i + 1]
            and not is_punctuation(tokens[i])
            and not is_punctuation(tokens[i + 1])
        ]

    def swap(self, tokens: Tokens, rng: np.random.Generator) -> Tokens | None:
        """``tokens`` with a random allowed adjacent pair swapped; None if there is none."""
        pos = self.positions(tokens)
        if not pos:
            return None
        i = pos[int(rng.integers(len(pos)))]
        return tokens[:i] + (tokens[i + 1], tokens[i]) + tokens[i + 2 :]

    def generate(
        self,
        sentences: Sequence[Tokens] | Sequence[AnnotatedSentence],
        sizes: Mapping[str, int],
        seed: int,
    ) -> GeneratedTask:
        return self.draw(self.scan(sentences), sizes, seed)

    def scan(self, sentences: Sequence[Tokens] | Sequence[AnnotatedSentence]) -> Scan:
        """The size-independent part: the sentences with an allowed swap, and the corpus's
        sentences (a swapped sentence that exists in it is not made)."""
        sentences = token_sequences(sentences)
        stats: Counter = Counter()
        pool: list[Tokens] = []
        for tokens in sentences:
            if self.skip_quotes and any(t in _QUOTES for t in tokens):
                stats["rejected: contains double quotes"] += 1
            elif not self.positions(tokens):
                stats["rejected: no swappable pair (inner, non-punctuation, distinct)"] += 1
            else:
                pool.append(tokens)
        stats["eligible"] = len(pool)
        return Scan((pool, {" ".join(t) for t in sentences}, len(sentences)), stats)

    def draw(self, scan: Scan, sizes: Mapping[str, int], seed: int) -> GeneratedTask:
        (pool, corpus, n_sentences), stats = scan.pools, Counter(scan.stats)
        counts = per_class(sizes, len(self.labels), self.name)
        rng = make_rng(seed, self.name)
        order = iter(rng.permutation(len(pool)).tolist())
        emitted: set[str] = set()
        splits: dict[str, list[tuple[str, str]]] = {}
        # Sentences are paired on what a single-position rule sees (``edge_key``: first and
        # last token, punctuation count; a swap changes none of them); a coin decides which
        # one of a pair is shown swapped, so both classes have identical edges in every split.
        waiting: dict[tuple, tuple[Tokens, str]] = {}
        try:
            for s in SPLITS:
                examples: list[tuple[str, str]] = []
                while len(examples) < 2 * counts[s]:
                    tokens = pool[next(order)]
                    swapped = self.swap(tokens, rng)
                    assert swapped is not None  # the pool holds only sentences with a swap
                    inverted = " ".join(swapped)
                    if inverted in corpus:
                        stats["rejected: inverted sentence exists in corpus"] += 1
                        continue
                    key = edge_key(tokens)
                    if key not in waiting:
                        waiting[key] = (tokens, inverted)
                        continue
                    pair = [waiting.pop(key), (tokens, inverted)]
                    if rng.integers(2):
                        pair.reverse()
                    (original, _), (_, inverted) = pair
                    if inverted in emitted:  # two sentences swapped into the same one
                        stats["rejected: inverted sentence made twice"] += 1
                        waiting[key] = pair[0]
                        continue
                    emitted.add(inverted)
                    examples += [(" ".join(original), "O"), (inverted, "I")]
                splits[s] = shuffled(examples, rng)
        except StopIteration:
            need = 2 * sum(counts.values())
            fit = len(pool) // 2
            raise GenerationError(
                f"{self.name}: needs {need} distinct sentences ({counts['train']}/"
                f"{counts['dev']}/{counts['test']} per class for train/dev/test), but only "
                f"{len(pool)} of {n_sentences} corpus sentences allow a swap; at most about "
                f"{fit} per class fit in total. Lower the sizes, or relax the rules "
                f"(skip_quotes=False), or use a larger corpus."
            ) from None
        stats["used"] = sum(len(v) for v in splits.values())
        return GeneratedTask(self.name, self.file, list(self.labels), splits, stats, asdict(self))


def length_matched_counts(
    available: Mapping[str, Mapping[int, int]], total: int, spread: float = 1.0
) -> dict[int, int]:
    """How many sentences of each length to take for EVERY class, so length says nothing.

    The target joint distribution of (length, class) is the product of a Gaussian over
    length (mean and standard deviation of all available sentences, the std scaled by
    ``spread``) and a uniform over classes: the paper's bivariate Gaussian with diagonal
    covariance, made balanced. The Gaussian is scaled up until ``total`` sentences per class
    are reached, clipped where some class runs out of sentences of that length. Returns
    ``{length: count}`` summing to ``total``, or raises ValueError with the maximum.
    """
    lengths = sorted({n for per_len in available.values() for n in per_len})
    common = {n: min(per_len.get(n, 0) for per_len in available.values()) for n in lengths}
    most = sum(common.values())
    if most < total:
        raise ValueError(most)
    weights = [(n, c) for per_len in available.values() for n, c in per_len.items()]
    size = sum(c for _, c in weights)
    mean = sum(n * c for n, c in weights) / size
    std = max(1.0, math.sqrt(sum(c * (n - mean) ** 2 for n, c in weights) / size)) * spread
    g = {n: math.exp(-0.5 * ((n - mean) / std) ** 2) for n in lengths}

    def take(k: float) -> dict[int, int]:
        return {n: min(int(k * g[n]), common[n]) for n in lengths}

    lo, hi = 0.0, 1.0
    while sum(take(hi).values()) < total:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sum(take(mid).values()) < total else (lo, mid)
    counts = take(hi)
    for n in sorted(lengths, key=lambda n: (-abs(n - mean), n)):  # trim the tails first
        while sum(counts.values()) > total and counts[n] > 0:
            counts[n] -= 1
    return {n: c for n, c in counts.items() if c}


@dataclass
class TreeDepth:
    """TreeDepth: the depth of the sentence's syntax tree, one class per depth in ``depths``.

    ``structure="constituency"`` (English, the paper): depth of the PTB tree, 5-12.
    ``structure="dependency"`` (X-Probe): nodes on the longest root-to-leaf path of the
    dependency tree; the range is a parameter (profile table in ``suite.py``). With
    ``decorrelate`` every class gets the same number of sentences of each length, drawn to a
    Gaussian over length (``length_matched_counts``), and every split gets the same length
    histogram per class, so a classifier on length alone is at chance.
    """

    name: ClassVar[str] = "TreeDepth"
    file: ClassVar[str] = "tree_depth.txt"

    structure: Literal["constituency", "dependency"] = "constituency"
    depths: tuple[int, int] = (5, 12)
    decorrelate: bool = True
    length_spread: float = 1.0

    @property
    def labels(self) -> list[str]:
        return [str(d) for d in range(self.depths[0], self.depths[1] + 1)]

    def depth(self, sent: AnnotatedSentence) -> int | None:
        if self.structure == "dependency":
            return dependency_depth(sent.heads)
        return constituency_depth(sent.constituency) if sent.constituency else None

    def generate(
        self, sentences: Sequence[AnnotatedSentence], sizes: Mapping[str, int], seed: int
    ) -> GeneratedTask:
        return self.draw(self.scan(sentences), sizes, seed)

    def scan(self, sentences: Sequence[AnnotatedSentence]) -> Scan:
        """The size-independent part: eligible sentences per depth and length."""
        stats: Counter = Counter()
        cells: dict[str, dict[int, list[Item]]] = {label: {} for label in self.labels}
        for item in annotated_items(sentences, stats, self.name):
            d = self.depth(item.sent)
            if d is None:
                stats["rejected: no constituency tree"] += 1
            elif str(d) not in cells:
                stats[f"rejected: depth outside {list(self.depths)}"] += 1
            else:
                cells[str(d)].setdefault(len(item), []).append(item)
        stats["eligible"] = sum(len(v) for c in cells.values() for v in c.values())
        return Scan(cells, stats)

    def draw(self, scan: Scan, sizes: Mapping[str, int], seed: int) -> GeneratedTask:
        cells, stats = scan.pools, Counter(scan.stats)
        counts = per_class(sizes, len(self.labels), self.name)
        rng = make_rng(seed, self.name)
        if not self.decorrelate:
            pools = {lab: [it for n in sorted(c) for it in c[n]] for lab, c in cells.items()}
            drawn = assign_splits(pools, counts, rng, self.name, "depth")
            splits = splits_from(
                {
                    s: {lab: [it.text for it in its] for lab, its in by.items()}
                    for s, by in drawn.items()
                },
                rng,
            )
        else:
            splits = self._decorrelated(cells, counts, rng, stats)
        stats["used"] = sum(len(v) for v in splits.values())
        params = asdict(self) | {"depth_function": self._depth_function()}
        return GeneratedTask(self.name, self.file, self.labels, splits, stats, params)

    def _depth_function(self) -> str:
        if self.structure == "dependency":
            return "sentprobe.generation.trees.dependency_depth"
        return implementation("tree_depth")

    def _decorrelated(self, cells, counts, rng, stats) -> dict[str, list[tuple[str, str]]]:
        total = sum(counts.values())
        available = {lab: {n: len(v) for n, v in c.items()} for lab, c in cells.items()}
        try:
            per_length = length_matched_counts(available, total, self.length_spread)
        except ValueError as e:
            raise GenerationError(
                f"{self.name}: every depth class needs {total} sentences with the same length "
                f"distribution, but the corpus supports at most {e.args[0]} per class "
                f"(sentences per depth: "
                f"{ {lab: sum(v.values()) for lab, v in available.items()} }; rejected: "
                f"{ {k: v for k, v in stats.items() if k.startswith('rejected')} }). Lower the "
                f"sizes, narrow depths (now {list(self.depths)}), set decorrelate=False, or "
                f"use a larger corpus."
            ) from None
        # one shared assignment of length slots to splits, so every class has the same
        # length histogram in every split
        slots = [n for n in sorted(per_length) for _ in range(per_length[n])]
        order = rng.permutation(total)
        bounds = np.cumsum([0] + [counts[s] for s in SPLITS])
        split_of = {}
        for k, s in enumerate(SPLITS):
            for j in order[bounds[k] : bounds[k + 1]]:
                split_of[int(j)] = s
        drawn: dict[str, dict[str, list[str]]] = {s: {} for s in SPLITS}
        for lab, by_len in cells.items():
            picked = {
                n: [by_len[n][i] for i in rng.choice(len(by_len[n]), c, replace=False)]
                for n, c in per_length.items()
            }
            for j, n in enumerate(slots):
                drawn[split_of[j]].setdefault(lab, []).append(picked[n].pop().text)
        stats["not used: outside the length-matched sample"] = stats["eligible"] - total * len(
            cells
        )
        return splits_from(drawn, rng)


#: PTB tags of punctuation and quotes; TopConst drops sequences with one inside.
PUNCT_TAGS = frozenset({",", ":", ".", "``", "''", "-LRB-", "-RRB-", "HYPH", "NFP", '"', "#", "$"})


@dataclass
class TopConst:
    """TopConst: the sequence of top constituents under the clause node (e.g. NP_VP_.).

    Classes are the ``n_frequent`` most frequent sequences (ties alphabetical) plus OTHER
    for the rest. As in the paper, sequences with punctuation or quotes anywhere but the end,
    or not ending in ``final``, are dropped (also from OTHER). Needs constituency trees.
    """

    name: ClassVar[str] = "TopConst"
    file: ClassVar[str] = "top_constituents.txt"

    n_frequent: int = 19
    other: str = "OTHER"
    final: str = "."

    def sequence(self, sent: AnnotatedSentence) -> tuple[str, ...] | str:
        """The sentence's top-constituent sequence, or why it is rejected."""
        if not sent.constituency:
            return "no constituency tree"
        seq = top_constituent_sequence(sent.constituency)
        if not seq or seq[-1] != self.final:
            return f"does not end in {self.final!r}"
        if any(tag in PUNCT_TAGS for tag in seq[:-1]):
            return "punctuation or quotes inside the sequence"
        return seq

    def class_name(self, seq: tuple[str, ...], frequent: Collection[str] | None = None) -> str:
        """The label a sequence gets (``NP_VP_.``), or ``other`` when it is not one of the
        ``frequent`` classes; shared with ``generation.labeling``."""
        label = "_".join(seq)
        return label if frequent is None or label in frequent else self.other

    def generate(
        self, sentences: Sequence[AnnotatedSentence], sizes: Mapping[str, int], seed: int
    ) -> GeneratedTask:
        return self.draw(self.scan(sentences), sizes, seed)

    def scan(self, sentences: Sequence[AnnotatedSentence]) -> Scan:
        """The size-independent part: eligible sentences per class."""
        stats: Counter = Counter()
        found: list[tuple[str, Item]] = []
        for item in annotated_items(sentences, stats, self.name):
            seq = self.sequence(item.sent)
            if isinstance(seq, str):
                stats[f"rejected: {seq}"] += 1
            else:
                found.append((self.class_name(seq), item))
        freq = Counter(label for label, _ in found)
        frequent = sorted(freq, key=lambda x: (-freq[x], x))[: self.n_frequent]
        labels = sorted(frequent) + [self.other]
        pools: dict[str, list[Item]] = {lab: [] for lab in labels}
        for label, item in found:
            pools[label if label in frequent else self.other].append(item)
        stats["eligible"] = len(found)
        return Scan(pools, stats)

    def draw(self, scan: Scan, sizes: Mapping[str, int], seed: int) -> GeneratedTask:
        pools, stats = scan.pools, Counter(scan.stats)
        labels = list(pools)
        counts = per_class(sizes, len(labels), self.name)
        rng = make_rng(seed, self.name)
        drawn = assign_splits(pools, counts, rng, self.name, "sequence")
        splits = splits_from(
            {
                s: {lab: [it.text for it in its] for lab, its in by.items()}
                for s, by in drawn.items()
            },
            rng,
        )
        stats["used"] = sum(len(v) for v in splits.values())
        params = asdict(self) | {"top_constituents_function": implementation("top_constituents")}
        return GeneratedTask(self.name, self.file, labels, splits, stats, params)
