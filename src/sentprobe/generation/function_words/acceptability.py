"""Acceptability sets after Kim et al. (2019, sec. 2.2) from any tokenized corpus: wh-words
and end-of-sentence as the paper makes them, and definiteness and coordination restricted to
the collocations that select the function word (``*-collocations``: what they test is named
in their set names, since a swap outside such a frame is often still acceptable and the
paper's sets need annotators for their labels).

Every set follows the paper's protocol (find sentences with the construction, mutate half of
them) with the leak guards of sentprobe's other altered-sentence tasks: a corpus sentence is
used once (as an original or mutated, never both), a mutated sentence that is itself a corpus
sentence is dropped, and the two classes are balanced within every stratum of
``rules.*_key`` (the same function word at the same kind of position), so no word-presence
rule separates them. Items are dealt to ten folds in original/mutated couples of one stratum
(two different sentences, not a minimal pair), so every fold's test set is balanced too; a
set that cannot fill every fold (under ``MIN_COUPLES`` couples) is a GenerationError.

Long because the four sets share their balancing, dealing and size rules, which belong next
to the sets that use them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from sentprobe.datasets.loaders.dnc import describe_set

from ..base import GenerationError, is_punctuation, make_rng
from .lexicon import CONJUNCTIONS, WH_WORDS
from .release import N_FOLDS, Item
from .rules import (
    Mutation,
    Tokens,
    apply,
    article_frame,
    article_key,
    article_kind,
    coordination_frame,
    only_key,
    only_position,
    resegment_index,
    resegment_range,
    swap_articles,
    swap_only,
)


@dataclass
class FunctionWordSet:
    """A generated set: its release name (``acceptability-whwords``), items, counts, rules."""

    name: str
    items: list[Item]
    stats: Counter = field(default_factory=Counter)
    params: dict[str, Any] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        c = Counter(item.label for item in self.items)
        return dict(sorted(c.items()))


#: Couples (one acceptable, one unacceptable item) a set needs at least: one per fold chunk,
#: so every fold has train, dev and test items of both classes.
MIN_COUPLES = N_FOLDS


def _check_size(name: str, size: int | None, available: int, what: str) -> int:
    """Items to draw: ``size`` (even, so classes balance) or all ``available`` when None;
    a GenerationError when that is under ``MIN_COUPLES`` couples (a fold would be empty)."""
    least = 2 * MIN_COUPLES
    if size is not None and (size < least or size % 2):
        raise GenerationError(f"{name}: the size must be an even number >= {least}, got {size}")
    if available < least:
        raise GenerationError(
            f"{name}: the corpus yields {available} items ({what}), under the {least} that "
            f"fill {N_FOLDS} folds; use a larger corpus"
        )
    if size is None:
        return available
    if size > available:
        raise GenerationError(
            f"{name}: {size} items requested but the corpus yields only {available} "
            f"({what}); lower the size or use a larger corpus"
        )
    return size


def _deal(couples: Sequence[tuple[Item, Item]], rng: np.random.Generator) -> list[Item]:
    """Shuffle (acceptable, unacceptable) couples, give both members of couple i fold chunk
    i mod 10 (so every fold's test set is balanced) and the couple id i (``misc.couple``),
    and return the items in a shuffled order. A couple's two items come from different
    sentences: they are not a minimal pair and are not scored as one."""
    order = rng.permutation(len(couples))
    items: list[Item] = []
    for rank, p in enumerate(order):
        for item in couples[p]:
            item.chunk = rank % N_FOLDS
            item.misc["couple"] = rank
            items.append(item)
    return [items[i] for i in rng.permutation(len(items))]


def swap_counts(available: dict[str, int], rng: np.random.Generator) -> dict[tuple[str, str], int]:
    """How many sentences to mutate from each word x to each other word y, with as many
    x -> y as y -> x. Each such couple of swaps also keeps one original with x and one with y,
    so the couple uses two sentences of x and two of y; couples are added one pair of words
    at a time, in a random order each round, while both words have sentences left."""
    left = dict(available)
    words = sorted(left)
    pairs = [(x, y) for i, x in enumerate(words) for y in words[i + 1 :]]
    k: dict[tuple[str, str], int] = Counter()
    while True:
        added = False
        for p in rng.permutation(len(pairs)):
            x, y = pairs[p]
            if left[x] >= 2 and left[y] >= 2:
                left[x] -= 2
                left[y] -= 2
                k[x, y] += 1
                k[y, x] += 1
                added = True
        if not added:
            return dict(k)


def source_balanced(
    pairs: Sequence[tuple[Item, Item]], rng: np.random.Generator, slack: int = 1
) -> list[tuple[Item, Item]]:
    """Pairs (in a random order) such that every word is the word of as many originals as
    the source of mutated sentences, within ``slack``, at every prefix of the list.

    Pairing within strata drops sentences unevenly (a stratum of "the" x 3 has many
    originals, few mutated partners), which would leave originals and mutated sentences from
    different mixes of source sentences, and whatever else differs between those (genre,
    punctuation) would tell the classes apart."""
    balance: Counter[str] = Counter()
    out = []
    for p in rng.permutation(len(pairs)):
        original, mutated = pairs[p]
        x, s = original.misc["source_word"], mutated.misc["source_word"]
        if abs(balance[x] + 1) <= slack and abs(balance[s] - 1) <= slack:
            balance[x] += 1
            balance[s] -= 1
            out.append(pairs[p])
    return out


@dataclass
class SingleSentenceSet:
    """A single-sentence acceptability set: which sentences qualify (``word``: the function
    word that would be swapped, None if the sentence does not qualify), how one is mutated to
    another word, and its stratum key. ``size``: items in total (half mutated), None = as
    many as the corpus supports.

    The paper draws each replacement at random. Here the replacements are drawn so that every
    swap x -> y is matched by a swap y -> x and by one original with x and one with y: the
    sentences around each word then occur as often in both classes, so neither the swapped
    word nor the words that go with it tell the classes apart. Originals and mutated
    sentences are then paired within strata (``key`` of the sentence shown)."""

    name: ClassVar[str] = ""
    #: whether only sentences with a :meth:`frame` qualify (a collocation set)
    framed: ClassVar[bool] = False
    size: int | None = None

    def word(self, tokens: Tokens) -> str | None:
        raise NotImplementedError

    def key(self, tokens: Tokens) -> Hashable:
        raise NotImplementedError

    def frame(self, tokens: Tokens) -> str | None:
        """The frame that makes the swap unacceptable (recorded per item), None if none."""
        return None

    def mutate(self, tokens: Tokens, rng: np.random.Generator, target: str) -> Mutation:
        raise NotImplementedError

    def generate(self, sentences: Sequence[Tokens], seed: int) -> FunctionWordSet:
        """Balanced items from ``sentences`` (Moses tokens, in corpus order)."""
        rng = make_rng(seed, self.name)
        stats: Counter = Counter()
        corpus = {" ".join(s) for s in sentences}
        by_word: dict[str, list[int]] = defaultdict(list)
        for i, s in enumerate(sentences):
            w = self.word(s)
            if w is not None:
                by_word[w].append(i)
        stats["sentences read"] = len(sentences)
        stats["sentences with the construction"] = sum(map(len, by_word.values()))
        counts = swap_counts({w: len(ids) for w, ids in by_word.items()}, rng)
        keep: dict[Hashable, list[Item]] = defaultdict(list)
        mutated: dict[Hashable, list[Item]] = defaultdict(list)
        for w in sorted(by_word):
            ids = [by_word[w][j] for j in rng.permutation(len(by_word[w]))]
            targets = [y for (x, y), n in sorted(counts.items()) if x == w for _ in range(n)]
            for sent_id in ids[: len(targets)]:
                tokens = sentences[sent_id]
                item = Item(" ".join(tokens), "", "acceptable", corpus_sent_id=sent_id)
                item.misc["source_word"] = w
                keep[self.key(tokens)].append(item)
            for sent_id, target in zip(ids[len(targets) :], targets):
                tokens = sentences[sent_id]
                mutation = self.mutate(tokens, rng, target)
                new = apply(tokens, mutation)
                if " ".join(new) in corpus:
                    stats["rejected: mutated sentence is a corpus sentence"] += 1
                    continue
                record: dict[str, Any] = {**mutation.to_json(), "original": " ".join(tokens)}
                frame = self.frame(tokens)
                if frame is not None:
                    record["frame"] = frame
                misc = {"mutation": record, "source_word": w}
                item = Item(" ".join(new), "", "unacceptable", corpus_sent_id=sent_id, misc=misc)
                mutated[self.key(new)].append(item)
                stats[f"drawn: {w} -> {target}"] += 1
        pairs: list[tuple[Item, Item]] = []
        for key in sorted(set(keep) & set(mutated), key=repr):
            pairs += zip(keep[key], mutated[key])
        unpaired = sum(map(len, keep.values())) + sum(map(len, mutated.values())) - 2 * len(pairs)
        stats["dropped: no partner of the other class in its stratum"] = unpaired
        balanced = source_balanced(pairs, rng)
        stats["dropped: would unbalance the source words"] = 2 * (len(pairs) - len(balanced))
        n = _check_size(
            self.name, self.size, 2 * len(balanced), "balanced within strata and by source word"
        )
        items = _deal(balanced[: n // 2], rng)
        for item in items:
            if "mutation" in item.misc:
                m = item.misc["mutation"]
                stats[f"items: {m['replaced'][0].lower()} -> {m['replacements'][0].lower()}"] += 1
            stratum = self.key(tuple(item.context.split()))
            item.misc["stratum"] = repr(stratum)
            item.misc["subtype"] = str(stratum[0])  # type: ignore[index]
        stats["items"] = len(items)
        if self.framed:
            stats[FRAME_LOOKUP] = sum(
                (self.frame(tuple(item.context.split())) is not None)
                == (item.label == "acceptable")
                for item in items
            )
        return FunctionWordSet(self.name, items, stats, {"size": self.size, "seed": seed})


#: The stats key of a frame set's frame-lookup score: items the rule "the frame is intact
#: => acceptable, else unacceptable" labels right (``stats["items"]``: out of how many).
FRAME_LOOKUP = "frame lookup (frame intact => acceptable): items right"


def collocation_note(set_stats: dict[str, dict[str, int]]) -> str:
    """What the collocation sets of a suite test, with their frame-lookup score (from each
    set's generation ``stats``); "" when the suite has none."""
    rows = [
        f"{describe_set(name, False).paper_name}: {stats[FRAME_LOOKUP]} of {stats['items']} items "
        f"({100 * stats[FRAME_LOOKUP] / stats['items']:.1f} %)"
        for name, stats in sorted(set_stats.items())
        if FRAME_LOOKUP in stats and stats.get("items")
    ]
    if not rows:
        return ""
    return (
        "The *-collocations sets (Def-collocations, Coord-collocations) swap an article or "
        "conjunction only inside a frame that selects it (the same, such a, a lot of; "
        "either ... or, between ... and, and so on): they test knowledge of about twenty "
        "collocations, not definiteness or coordination as Kim et al.'s Def and Coord do. "
        "A lookup of those frames (frame intact => acceptable) labels "
        + "; ".join(rows)
        + "; the NB-bi-tfidf column of the table below is the same cue learnt from bigrams."
    )


@dataclass
class OneWordSwap(SingleSentenceSet):
    """Sentences with exactly one of ``words``; the mutated half has it replaced by one of
    the others (``rule``)."""

    words: ClassVar[tuple[str, ...]] = ()
    rule: ClassVar[str] = ""

    def word(self, tokens: Tokens) -> str | None:
        i = only_position(tokens, self.words)
        return None if i is None else tokens[i].lower()

    def key(self, tokens: Tokens) -> Hashable:
        return only_key(tokens, self.words)

    def mutate(self, tokens: Tokens, rng: np.random.Generator, target: str) -> Mutation:
        return swap_only(tokens, self.words, self.rule, rng, target)


@dataclass
class WhWords(OneWordSwap):
    """Sentences with exactly one wh-word (who, what, where, when, why, how); the mutated half
    has it replaced by one of the other five."""

    name: ClassVar[str] = "acceptability-whwords"
    words: ClassVar[tuple[str, ...]] = WH_WORDS
    rule: ClassVar[str] = "wh-swap"


@dataclass
class CoordinationCollocations(OneWordSwap):
    """Sentences whose only and/but/or stands in a frame that selects it
    (``rules.coordination_frame``: "between X and Y", "either X or Y", "not only X but Y",
    "more and more", "and so on", ...); the mutated half has it replaced by one of the other
    two. The label is then right by construction, but what it measures is knowledge of these
    collocations, not of coordination: the rule "frame intact => acceptable" labels every
    item (``FRAME_LOOKUP`` in the stats). Kim et al.'s Coord swaps the conjunction anywhere,
    where a swap often stays acceptable ("apples and pears" -> "apples or pears"); its labels
    need annotators, so that set is not generated."""

    name: ClassVar[str] = "acceptability-coordination-collocations"
    framed: ClassVar[bool] = True
    words: ClassVar[tuple[str, ...]] = CONJUNCTIONS
    rule: ClassVar[str] = "conjunction-swap"

    def word(self, tokens: Tokens) -> str | None:
        return None if coordination_frame(tokens) is None else super().word(tokens)

    def frame(self, tokens: Tokens) -> str | None:
        return coordination_frame(tokens)


@dataclass
class DefinitenessCollocations(SingleSentenceSet):
    """Sentences with two or more "the" (fewer than two a/an) or two or more a/an (fewer than
    two "the"), one of them in a frame that selects it (``rules.article_frame``: "the same",
    "the following", a superlative, "such a", "a lot of", ...); the mutated half has every
    occurrence swapped (a/an by the next word). As with :class:`CoordinationCollocations`,
    this tests the collocations (frame lookup labels every item), not definiteness: Kim et
    al.'s Def swaps articles anywhere ("a man saw a dog" -> "the man saw the dog" stays
    acceptable), which needs annotators."""

    name: ClassVar[str] = "acceptability-definiteness-collocations"
    framed: ClassVar[bool] = True

    def word(self, tokens: Tokens) -> str | None:
        return None if article_frame(tokens) is None else article_kind(tokens)

    def frame(self, tokens: Tokens) -> str | None:
        return article_frame(tokens)

    def key(self, tokens: Tokens) -> Hashable:
        return article_key(tokens)

    def mutate(self, tokens: Tokens, rng: np.random.Generator, target: str) -> Mutation:
        return swap_articles(tokens)


def eos_tokens(tokens: Sequence[str]) -> Tokens:
    """A sentence as the EOS set shows it: punctuation removed, lower-cased."""
    return tuple(t.lower() for t in tokens if not is_punctuation(t))


def _near_shapes(first: int, second: int, tolerance: int) -> list[tuple[int, int]]:
    """(first, second) segment lengths within ``tolerance`` words each, nearest first."""
    shapes = [
        (first + d1, second + d2)
        for d1 in range(-tolerance, tolerance + 1)
        for d2 in range(-tolerance, tolerance + 1)
    ]
    return sorted(shapes, key=lambda s: (abs(s[0] - first) + abs(s[1] - second), s))


#: Pseudo-count of the edge weights: a word never seen at a sentence edge keeps a small
#: weight, so a corpus whose words are all rare still has wrong boundaries to draw.
EDGE_SMOOTHING = 0.01


def edge_weights(sentences: Iterable[Tokens]) -> tuple[dict[str, float], dict[str, float]]:
    """Per word, the share of its occurrences that end a sentence, and the share that start
    one, in ``sentences`` (EOS tokens), each smoothed by ``EDGE_SMOOTHING``:
    (edge count + s) / (count + 1)."""
    count: Counter = Counter()
    end: Counter = Counter()
    start: Counter = Counter()
    for s in sentences:
        if not s:
            continue
        count.update(s)
        end[s[-1]] += 1
        start[s[0]] += 1

    def share(edge: Counter) -> dict[str, float]:
        return {w: (edge[w] + EDGE_SMOOTHING) / (c + 1) for w, c in count.items()}

    return share(end), share(start)


#: Weighted draws of a wrong boundary per pair before it is dropped for want of a valid
#: partner with the same segment lengths.
EDGE_DRAWS = 5

#: A weighted wrong boundary lies within this many sigmas of the true one: rare edge words
#: far off would otherwise pull it there (and leave segment lengths no valid pair has).
WINDOW_SIGMAS = 2.0


def weighted_boundary(
    words: Sequence[str],
    boundary: int,
    sigma: float,
    rng: np.random.Generator,
    ends: dict[str, float],
    starts: dict[str, float],
    *,
    min_side: int,
    max_side: int,
) -> int | None:
    """A wrong boundary k (not ``boundary``, both sides within the limits), drawn with weight
    N(k; boundary, sigma) x ends[words[k - 1]] x starts[words[k]], within ``WINDOW_SIGMAS``
    sigmas of ``boundary``: a word that ends sentences
    in the corpus is as likely before a wrong boundary as before a true one, and likewise
    after it. None when no allowed k has a positive weight."""
    window = max(1, round(WINDOW_SIGMAS * sigma))  # no farther than N(boundary, sigma) goes
    allowed = [
        k
        for k in resegment_range(len(words), min_side, max_side)
        if k != boundary and abs(k - boundary) <= window
    ]
    weights = np.array(
        [
            np.exp(-((k - boundary) ** 2) / (2 * sigma**2))
            * ends.get(words[k - 1], EDGE_SMOOTHING)
            * starts.get(words[k], EDGE_SMOOTHING)
            for k in allowed
        ]
    )
    if not allowed or weights.sum() <= 0:
        return None
    return int(allowed[int(rng.choice(len(allowed), p=weights / weights.sum()))])


@dataclass
class EndOfSentence:
    """Two adjacent sentences of one paragraph, punctuation and case removed. Valid half: split
    at the true boundary; invalid half: the concatenation re-split at round(N(boundary,
    sigma)), redrawn while it equals the true boundary. Adjacent pairs do not overlap, so
    no sentence is in two items. ``min_tokens``/``max_tokens`` bound each segment shown, the
    wrongly split ones too (otherwise "a segment under 5 words" marks invalid items), and
    each invalid item is coupled with a valid pair of the same segment lengths."""

    name: ClassVar[str] = "acceptability-eos"
    size: int | None = None
    sigma: float = 3.0
    min_tokens: int = 5
    max_tokens: int = 40
    #: a valid partner's segments may differ by this many words each when no pair of the
    #: very same lengths is left (nearest first). 0 by default: any tolerance is a cue at the
    #: tails of the length distribution (an invalid pair with a 4-word shift finds partners
    #: only inward), so an invalid pair without an exact partner is dropped
    length_tolerance: int = 0
    #: draw the wrong boundary among round(N(boundary, sigma)) positions weighted by how
    #: often the word before it ends a sentence and the word after it starts one in this
    #: corpus (:func:`edge_weights`), so the words at a wrong boundary are distributed as at
    #: a true one; without it the last word of the first segment reads the label (on 12,000
    #: Bible sentences 76 % against 50 %, the release 63 %)
    edge_weighting: bool = True
    #: powers of the two edge weights: the word after a wrong boundary reads the label more
    #: than the word before it, so its weight counts twice (measured on 12,000 Bible
    #: sentences, docs/function-words.md: with powers 1 and 2 the NB 1-3-gram gain is +4.3
    #: points, the release's +4.2; the boundary words +8.9 and +4.6, the release's +13.4, +6.7)
    end_power: float = 1.0
    start_power: float = 3.0

    def generate(self, paragraphs: Sequence[Sequence[Tokens]], seed: int) -> FunctionWordSet:
        rng = make_rng(seed, self.name)
        stats: Counter = Counter()
        pairs: list[tuple[Tokens, Tokens, int]] = []
        sent_id = 0
        used: set[Tokens] = set()
        cleaned = [[eos_tokens(s) for s in para] for para in paragraphs]
        ends, starts = edge_weights(s for para in cleaned for s in para)
        ends = {w: v**self.end_power for w, v in ends.items()}
        starts = {w: v**self.start_power for w, v in starts.items()}
        for clean in cleaned:
            i = 0
            while i + 1 < len(clean):
                a, b = clean[i], clean[i + 1]
                allowed = resegment_range(len(a) + len(b), self.min_tokens, self.max_tokens)
                if a in used or b in used:  # a repeated sentence would sit in two items
                    stats["skipped: a sentence already in a pair"] += 1
                    i += 1
                elif not all(self.min_tokens <= len(s) <= self.max_tokens for s in (a, b)):
                    stats[f"skipped: a sentence outside {self.min_tokens}-{self.max_tokens}"] += 1
                    i += 1
                elif len(allowed) < 2:
                    # every pair may be the invalid one, whose segments obey the same limits
                    stats["skipped: no wrong boundary within the limits"] += 1
                    i += 1
                else:
                    pairs.append((a, b, sent_id + i))
                    used.update((a, b))
                    i += 2
            sent_id += len(clean)
        stats["sentences read"] = sent_id
        stats["adjacent pairs"] = len(pairs)
        if len(pairs) < 2:
            _check_size(self.name, self.size, len(pairs), "adjacent pairs")
        # Half the pairs (at random) may be re-segmented, the other half are the valid pool.
        # Each invalid item is coupled with a valid pair of the same two segment lengths, so
        # "a segment shorter/longer than any true sentence" cannot tell the classes apart
        # (moving the boundary shortens one side and lengthens the other).
        order = rng.permutation(len(pairs))
        sources, pool = order[: len(order) // 2], order[len(order) // 2 :]
        valid_by_shape: dict[tuple[int, int], list[int]] = defaultdict(list)
        for p in pool:
            valid_by_shape[len(pairs[p][0]), len(pairs[p][1])].append(int(p))
        wanted = None if self.size is None else self.size // 2
        couples: list[tuple[Item, Item]] = []
        for p in sources:
            if wanted is not None and len(couples) >= wanted:
                break
            a2, b2, id2 = pairs[p]
            words = a2 + b2
            if self.edge_weighting:
                k = None
                for _ in range(EDGE_DRAWS):  # a boundary with a valid partner, or none
                    drawn = weighted_boundary(
                        words, len(a2), self.sigma, rng, ends, starts,
                        min_side=self.min_tokens, max_side=self.max_tokens,
                    )  # fmt: skip
                    if drawn is not None and any(
                        valid_by_shape.get(shape)
                        for shape in _near_shapes(drawn, len(words) - drawn, self.length_tolerance)
                    ):
                        k = drawn
                        break
                if k is None:
                    stats["dropped: no wrong boundary near the true one with a valid partner"] += 1
                    continue
            else:
                k = resegment_index(
                    len(words), len(a2), self.sigma, rng,
                    min_side=self.min_tokens, max_side=self.max_tokens,
                )  # fmt: skip
            partners = next(
                (
                    valid_by_shape[shape]
                    for shape in _near_shapes(k, len(words) - k, self.length_tolerance)
                    if valid_by_shape.get(shape)
                ),
                None,
            )
            if not partners:
                stats["dropped: no valid pair with the same segment lengths"] += 1
                continue
            a1, b1, id1 = pairs[partners.pop()]
            valid = Item(" ".join(a1), " ".join(b1), "acceptable", corpus_sent_id=id1)
            misc = {
                "mutation": {
                    "rule": "eos-resegment",
                    "positions": [k],
                    "true_boundary": len(a2),
                    "original": [" ".join(a2), " ".join(b2)],
                }
            }
            invalid = Item(
                " ".join(words[:k]),
                " ".join(words[k:]),
                "unacceptable",
                corpus_sent_id=id2,
                misc=misc,
            )
            stats["items: eos-resegment"] += 1
            stats[f"shift {min(abs(k - len(a2)), 5)}{'+' if abs(k - len(a2)) >= 5 else ''}"] += 1
            couples.append((valid, invalid))
        _check_size(
            self.name, self.size, 2 * len(couples),
            "adjacent pairs coupled with a valid pair of the same segment lengths",
        )  # fmt: skip
        items = _deal(couples, rng)
        stats["items"] = len(items)
        params = {"size": self.size, "sigma": self.sigma, "seed": seed,
                  "tokens per sentence": [self.min_tokens, self.max_tokens],
                  "edge_weighting": self.edge_weighting,
                  "edge_powers": [self.end_power, self.start_power]}  # fmt: skip
        return FunctionWordSet(self.name, items, stats, params)


#: The acceptability generators by release set name.
ACCEPTABILITY_SETS: dict[str, Callable[..., Any]] = {
    g.name: g for g in (WhWords, DefinitenessCollocations, CoordinationCollocations, EndOfSentence)
}
