"""Sizes and rules a corpus supports: ``--sizes auto`` and corpus-size-aware frequency bands.

The paper's 100k/10k/10k sets and frequency bands assume a corpus of many millions of
sentences; a UD treebank has one or two thousand. Asking for fixed sizes then fails task by
task, so ``AutoSizes`` asks each generator for the *largest* balanced sizes it can fill:

* sizes per class keep the proportions of ``largest`` (default the paper's 100k/10k/10k, so
  10:1:1): ``k`` units give ``10k/k/k`` sentences per class; ``k`` is the largest value for
  which the generator succeeds (bisection between 1 and the bound set by ``largest`` and by
  the corpus size; generators are not strictly monotone in size, so a slightly larger size
  may occasionally fit too);
* WC: as many target words as the corpus supports (at most the paper's 1000), each with one
  unit of sentences, from the highest vocabulary rank of ``WC_FIRST_RANKS`` that gives the
  most targets (the paper's rank 2001 only works on a large corpus); then more units per
  target while all targets keep them;
* TreeDepth: the profile's depth range if every class can get ``MIN_UNITS`` units of
  length-matched sentences, else the widest sub-range (at least ``MIN_DEPTH_CLASSES``
  classes) that can (on a treebank, depths 3 and 7 share almost no sentence lengths).

Frequency bands (corpus frequency of a target form: Tense/SubjNum/ObjNum; of the original and
replacement word: SOMO) follow ``BAND_TIERS`` by the size of the filtered corpus in tokens;
below the paper's tier the lexical tasks' lower bound keeps the paper's relative frequency
(100 per 10M tokens, at least 1: 25 in the 2.5M tokens of sample-en, 2 in a 200k-token
treebank), so a corpus keeps its rare words out whatever its size.
Every relaxation is recorded in the task's ``params`` (and so in manifest.json).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.datasets.task import SPLITS
from sentprobe.errors import SentprobeError

from .base import GeneratedTask, GenerationError
from .corpus import Tokens
from .inputs import annotated_items, surface, token_sequences
from .surface import TargetIndex, WordContent, select_targets
from .syntactic import TreeDepth

__all__ = [
    "BAND_TIERS",
    "LEXICAL_TASKS",
    "MIN_DEPTH_CLASSES",
    "MIN_UNITS",
    "POWER_POINTS",
    "POWER_Z",
    "WC_FIRST_RANKS",
    "AutoSizes",
    "BandTier",
    "band_tier",
    "choose_depths",
    "choose_wc",
    "corpus_tokens",
    "largest_task",
    "min_test_items",
]

#: Tasks whose target forms are confined to one split and filtered by ``freq_band``.
LEXICAL_TASKS = ("Tense", "SubjNum", "ObjNum")
#: Units per class below which a relaxation (narrower TreeDepth range) is preferred.
MIN_UNITS = 2
#: TreeDepth keeps at least this many depth classes when its range is narrowed.
MIN_DEPTH_CLASSES = 3
#: Vocabulary ranks WC's target window may start at, the paper's first.
WC_FIRST_RANKS = (2001, 1001, 501, 201, 101, 51, 21)
#: The paper's number of WC targets: never more.
WC_MAX_TARGETS = 1000


@dataclass(frozen=True)
class BandTier:
    """Frequency bands for corpora of at least ``min_tokens`` tokens (after filtering)."""

    name: str
    min_tokens: int
    lexical: tuple[int, int]  # Tense, SubjNum, ObjNum: the target form's frequency
    somo: tuple[int, int]  # SOMO: original and replacement word
    why: str


#: Largest first. The paper's bands come from a corpus of many millions of sentences; in a
#: treebank of 20k-250k tokens hardly any noun reaches 40 occurrences, so the lower bounds
#: drop: the lexical tasks' to the paper's relative frequency (``band_tier``), SOMO's to 1;
#: the upper bounds stay (a frequent form no longer fills a class: the lexical split caps
#: each form's share, ``lexical.FormRules``).
BAND_TIERS: tuple[BandTier, ...] = (
    BandTier(
        "paper",
        10_000_000,
        (100, 5000),
        (40, 400),
        "Conneau et al. (2018); X-Probe's 100-50,000 was a defect",
    ),
    BandTier(
        "small corpus",
        0,
        (1, 5000),  # the lower bound is scaled to the corpus by band_tier
        (1, 400),
        "below 10M tokens: the lexical tasks' lower bound scaled to the corpus (the paper's "
        "100 per 10M tokens, at least 1), SOMO's relaxed to 1, upper bounds kept",
    ),
)


def band_tier(n_tokens: int) -> BandTier:
    """The tier of a corpus of ``n_tokens`` tokens; below the paper's, the lexical lower bound
    scaled to the corpus (the paper's lower bound per ``BAND_TIERS[0].min_tokens`` tokens)."""
    tier = next(t for t in BAND_TIERS if n_tokens >= t.min_tokens)
    if tier is BAND_TIERS[0]:
        return tier
    paper = BAND_TIERS[0]
    low = min(paper.lexical[0], max(1, round(paper.lexical[0] * n_tokens / paper.min_tokens)))
    return dataclasses.replace(tier, lexical=(low, tier.lexical[1]))


def corpus_tokens(sentences: Sequence[AnnotatedSentence | Tokens]) -> int:
    """Surface tokens in the corpus (what the tiers are measured in)."""
    return sum(
        len(surface(s).units) if isinstance(s, AnnotatedSentence) else len(s) for s in sentences
    )


# ---------------------------------------------------------------------------- sizes

#: Two rows this many points apart must be separable on the test split.
POWER_POINTS = 10.0
#: Two-sided level of the interval used for that.
POWER_Z = 1.96


def min_test_items(points: float = POWER_POINTS, z: float = POWER_Z) -> int:
    """Smallest test split on which two accuracies ``points`` apart (both near 50%, the
    widest case) have a ``z`` interval of their difference that excludes 0."""
    return math.ceil(2 * 0.25 * (z / (points / 100)) ** 2)


@dataclass(frozen=True)
class AutoSizes:
    """Per task, the largest balanced sizes in the proportions of ``largest`` (at most it).

    ``min_test``: a task whose largest test split falls under it is refused (a
    GenerationError) rather than built too small to compare rows on; 0 (the default) builds
    whatever fits and leaves the warning to the audit's ``test-power`` check. The built-in
    suites use ``min_test_items()``.
    """

    largest: tuple[int, int, int] = (100_000, 10_000, 10_000)
    min_test: int = 0

    def __post_init__(self) -> None:
        if len(self.largest) != 3 or min(self.largest) < 1:
            raise SentprobeError(
                f"auto sizes need three positive numbers train,dev,test; got {self.largest}"
            )

    @classmethod
    def parse(cls, text: str) -> AutoSizes | None:
        """``"auto"`` or ``"auto:1000,200,200"`` -> AutoSizes; anything else -> None."""
        m = re.fullmatch(r"\s*auto(?::\s*([\d_,\s]+))?\s*", text)
        if not m:
            return None
        if m.group(1) is None:
            return cls()
        try:
            values = tuple(int(v.replace("_", "")) for v in m.group(1).split(","))
        except ValueError:
            values = ()
        if len(values) != 3:
            raise SentprobeError(f"--sizes auto:TRAIN,DEV,TEST needs three integers; got {text!r}")
        return cls(values)

    @property
    def parts(self) -> dict[str, float]:
        """Each split's share of a unit, the smallest split being 1 (10:1:1)."""
        unit = min(self.largest)
        return {s: n / unit for s, n in zip(SPLITS, self.largest)}

    def per_class(self, k: int) -> dict[str, int]:
        """Sentences per class in each split for ``k`` units."""
        return {s: max(1, round(k * p)) for s, p in self.parts.items()}

    def sizes(self, k: int, n_classes: int) -> dict[str, int]:
        """Total sentences per split for ``k`` units and ``n_classes`` classes."""
        return {s: n * n_classes for s, n in self.per_class(k).items()}

    def max_units(self, n_classes: int, corpus_size: int | None = None) -> int:
        """The most units ``largest`` (and, if given, a corpus of ``corpus_size`` sentences,
        each used once) allow for ``n_classes`` classes; 0 if not even one."""
        limits = [
            math.floor(cap / (n_classes * p)) for cap, p in zip(self.largest, self.parts.values())
        ]
        if corpus_size is not None:
            limits.append(math.floor(corpus_size / (n_classes * sum(self.parts.values()))))
        k = max(0, min(limits))
        while k > 0 and not self.fits(k, n_classes, corpus_size):
            k -= 1
        return k

    def fits(self, k: int, n_classes: int, corpus_size: int | None = None) -> bool:
        sizes = self.sizes(k, n_classes)
        if any(sizes[s] > cap for s, cap in zip(SPLITS, self.largest)):
            return False
        return corpus_size is None or sum(sizes.values()) <= corpus_size

    def describe(self) -> str:
        ratio = ":".join(f"{p:g}" for p in self.parts.values())
        floor = f", at least {self.min_test} test items" if self.min_test else ""
        return (
            f"auto (largest balanced sizes, {ratio}, at most "
            f"{'/'.join(map(str, self.largest))}{floor})"
        )


def largest_task(
    generate: Callable[[Mapping[str, int]], GeneratedTask],
    auto: AutoSizes,
    n_classes: int,
    corpus_size: int,
    name: str,
    upper: int | None = None,
) -> tuple[GeneratedTask, int]:
    """The task at the largest number of units ``generate`` can fill, and that number.

    ``generate(sizes)`` raises GenerationError when the corpus cannot fill ``sizes``.
    ``upper`` is a known bound on the units (e.g. from a cheaper count). The error for one
    unit is the generator's own, which says what is short.
    """
    hi = auto.max_units(n_classes, corpus_size)
    if upper is not None:
        hi = min(hi, upper)
    if hi < 1:
        one = auto.sizes(1, n_classes)
        raise GenerationError(
            f"{name}: even the smallest balanced sizes ({one['train']}/{one['dev']}/"
            f"{one['test']} for {n_classes} classes) need more than the corpus's "
            f"{corpus_size} sentences (or the --sizes auto bound {auto.largest})"
        )
    if hi > 1:  # the bound first: a task bound by the sizes, not the corpus, is done
        try:
            return generate(auto.sizes(hi, n_classes)), hi
        except GenerationError:
            pass
    try:
        best = (generate(auto.sizes(1, n_classes)), 1)
    except GenerationError as e:
        raise GenerationError(f"{e} [--sizes auto: not even 1 unit fits]") from None
    failed = hi  # hi > 1 failed above (hi == 1: nothing left to search)
    while failed - best[1] > 1:
        mid = (best[1] + failed) // 2
        try:
            best = (generate(auto.sizes(mid, n_classes)), mid)
        except GenerationError:
            failed = mid
    return best


# ---------------------------------------------------------------------------- WC


def choose_wc(
    sentences: Sequence[AnnotatedSentence | Tokens], auto: AutoSizes, gen: WordContent
) -> tuple[int, int, int, list[dict]]:
    """``(first_rank, n_targets, units, tried)`` for WC on this corpus.

    ``gen`` gives the eligibility rules (``min_chars``) and the wanted number of targets
    (``n_targets``, at most 1000). ``tried`` lists each rank's count, for the manifest.
    """
    tokens = token_sequences(sentences)
    probe = WordContent(gen.n_targets, min(WC_FIRST_RANKS), gen.min_chars)
    widest = probe.candidates(tokens)
    index = TargetIndex(tokens, widest)
    vocab_rank = {w: r for r, w in enumerate(probe.vocabulary(tokens), start=1)}
    need = sum(auto.per_class(1).values())
    cap = min(gen.n_targets, WC_MAX_TARGETS, len(tokens) // need)
    while cap > 0 and not auto.fits(1, cap, len(tokens)):
        cap -= 1
    best = (WC_FIRST_RANKS[0], 0)
    tried = []
    for rank in WC_FIRST_RANKS:
        window = [w for w in widest if vocab_rank[w] >= rank]
        lo, hi = 0, min(cap, len(window))
        while lo < hi:  # the most targets that all keep `need` sentences
            mid = (lo + hi + 1) // 2
            if len(select_targets(window, index, mid, need)[0]) == mid:
                lo = mid
            else:
                hi = mid - 1
        tried.append({"first_rank": rank, "targets": lo})
        if lo > best[1]:
            best = (rank, lo)
        if lo >= cap:
            break
    rank, n = best
    if n == 0:
        return rank, 0, 0, tried
    window = [w for w in widest if vocab_rank[w] >= rank]
    k = 1
    k_max = auto.max_units(n, len(tokens))
    while (
        k < k_max
        and len(select_targets(window, index, n, sum(auto.per_class(k + 1).values()))[0]) == n
    ):
        k += 1
    return rank, n, k, tried


# ---------------------------------------------------------------------------- TreeDepth


def depth_cells(gen: TreeDepth, sentences: Sequence[AnnotatedSentence]) -> dict[int, Counter]:
    """Sentences per depth and length, as ``gen`` counts them."""
    cells: dict[int, Counter] = defaultdict(Counter)
    for item in annotated_items(sentences, Counter(), gen.name):
        d = gen.depth(item.sent)
        if d is not None:
            cells[d][len(item)] += 1
    return cells


def _capacity(cells: Mapping[int, Counter], lo: int, hi: int, decorrelate: bool) -> int:
    """Sentences per class a depth range can give (length-matched when ``decorrelate``)."""
    classes = [cells.get(d, Counter()) for d in range(lo, hi + 1)]
    if not decorrelate:
        return min(sum(c.values()) for c in classes)
    lengths = {n for c in classes for n in c}
    return sum(min(c.get(n, 0) for c in classes) for n in lengths)


def choose_depths(
    gen: TreeDepth, sentences: Sequence[AnnotatedSentence], auto: AutoSizes
) -> tuple[tuple[int, int], dict]:
    """The depth range to use and a record of why (capacity of the profile's range and of
    the one chosen, in sentences per class)."""
    cells = depth_cells(gen, sentences)
    lo, hi = gen.depths

    def units(cap: int) -> int:
        k = 0
        while sum(auto.per_class(k + 1).values()) <= cap:
            k += 1
        return k

    full = _capacity(cells, lo, hi, gen.decorrelate)
    info = {"profile_depths": [lo, hi], "profile_capacity_per_class": full}
    if units(full) >= MIN_UNITS or hi - lo + 1 <= MIN_DEPTH_CLASSES:
        return (lo, hi), info
    ranges = [
        (a, b)
        for a in range(lo, hi + 1)
        for b in range(a + MIN_DEPTH_CLASSES - 1, hi + 1)
        if (a, b) != (lo, hi)
    ]
    caps = {r: _capacity(cells, *r, gen.decorrelate) for r in ranges}
    order = sorted(ranges, key=lambda r: (-(r[1] - r[0]), -caps[r], r[0]))
    for floor in (MIN_UNITS, 1):
        chosen = next((r for r in order if units(caps[r]) >= floor), None)
        if chosen is not None and units(caps[chosen]) > units(full):
            info |= {
                "depths": list(chosen),
                "capacity_per_class": caps[chosen],
                "why": f"the length-matched sample of depths {lo}-{hi} gives {full} "
                f"sentences per class, fewer than {MIN_UNITS} units "
                f"({sum(auto.per_class(MIN_UNITS).values())}); {chosen[0]}-{chosen[1]} "
                f"gives {caps[chosen]}",
            }
            return chosen, info
    return (lo, hi), info
