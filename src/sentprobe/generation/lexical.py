"""Lexical splits: every target form lives in exactly one partition (train, dev or test).

The paper does this for Tense, SubjNum and ObjNum so a probe cannot pass by memorising
words. Forms are whole (lower-cased) word forms, not characters (X-Probe's defect).

A split confined to a handful of forms measures those forms, not the property: one noun
filling a dev class lets a probe fail or pass on what it knows of that noun, and the items of
one form are not independent draws. :class:`FormRules` therefore bounds how much of a class
one form may carry (``max_share``) and how few forms may carry it (``min_forms``), and draws
dev and test alike: the same length histogram per class (so the Length baseline scores dev and
test identically), items spread over as many forms as the split holds (the form with the fewest
items so far is drawn first), forms dealt to the splits in proportion to what each needs.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sentprobe.datasets.task import SPLITS

from .base import GenerationError

__all__ = ["FormRules", "form_frequencies", "in_band", "split_by_form"]


def form_frequencies(token_lists: Iterable[Sequence[str]]) -> Counter:
    """Corpus frequency of every lower-cased form."""
    return Counter(tok.lower() for tokens in token_lists for tok in tokens)


def in_band(freq: int, band: tuple[int, int]) -> bool:
    return band[0] <= freq <= band[1]


@dataclass(frozen=True)
class FormRules:
    """How many forms a class of a split must rest on.

    For ``n`` items of a class in a split: no form carries more than ``cap(n)`` =
    max(1, floor(``max_share`` * n)) of them, and at least ``min_distinct(n)`` distinct forms
    carry them: min(``min_forms``, ceil(n / ``items_per_form``)) (a form per 5 items until
    30 forms, so 150 items per class and more need 30), and never fewer than the cap
    itself implies (ceil(n / cap(n))). ``match_lengths``: every split gets the same length
    histogram per class (dev and test exactly, train in proportion as far as its pool allows).
    """

    max_share: float = 0.1
    min_forms: int = 30
    items_per_form: int = 5
    match_lengths: bool = True

    def __post_init__(self) -> None:
        if not 0 < self.max_share <= 1 or self.min_forms < 1 or self.items_per_form < 1:
            raise ValueError(
                f"max_form_share must be in (0, 1], min_forms and items_per_form at least 1: "
                f"{self.max_share}, {self.min_forms}, {self.items_per_form}"
            )

    def cap(self, n: int) -> int:
        """The most items of one form among ``n`` items of a class."""
        return max(1, math.floor(self.max_share * n + 1e-9))

    def min_distinct(self, n: int) -> int:
        """The fewest distinct forms that may carry ``n`` items of a class."""
        if n <= 0:
            return 0
        return max(min(self.min_forms, math.ceil(n / self.items_per_form)), -(-n // self.cap(n)))

    def describe(self) -> str:
        return (
            f"at most {self.max_share:.0%} of a class and split per form, at least "
            f"min({self.min_forms}, n/{self.items_per_form}) distinct forms per class and split"
        )


class _Picker:
    """The items of one class in one split: drawn one length at a time, each from the form
    with the fewest items so far (ties: a random order fixed per form), none beyond the cap."""

    def __init__(
        self,
        items: Mapping[str, Sequence[int]],
        lengths: Sequence[int],
        cap: int,
        rng: np.random.Generator,
    ) -> None:
        self.cap = cap
        self.picks: Counter[str] = Counter()
        self.by_len: dict[str, dict[int, list[int]]] = {}
        self.heaps: dict[int, list[tuple[int, float, str]]] = defaultdict(list)
        forms = sorted(items)
        ties = rng.random(len(forms))
        for form, tie in zip(forms, ties):
            idx = [items[form][j] for j in rng.permutation(len(items[form]))]
            per_len: dict[int, list[int]] = defaultdict(list)
            for i in idx:
                per_len[lengths[i]].append(i)
            self.by_len[form] = per_len
            for n in per_len:
                self.heaps[n].append((0, float(tie), form))
        for heap in self.heaps.values():
            heapq.heapify(heap)

    def peek(self, length: int) -> str | None:
        """The form the next item of ``length`` would come from, or None."""
        heap = self.heaps.get(length)
        while heap:
            picks, tie, form = heap[0]
            if not self.by_len[form].get(length) or self.picks[form] >= self.cap:
                heapq.heappop(heap)
            elif picks != self.picks[form]:
                heapq.heapreplace(heap, (self.picks[form], tie, form))
            else:
                return form
        return None

    def take(self, length: int, form: str) -> int:
        self.picks[form] += 1
        return self.by_len[form][length].pop()


def _quotas(weights: Mapping[int, int], n: int) -> dict[int, int]:
    """``n`` split over lengths in proportion to ``weights`` (largest remainders)."""
    total = sum(weights.values())
    exact = {k: n * w / total for k, w in weights.items()}
    out = {k: math.floor(v) for k, v in exact.items()}
    for k in sorted(exact, key=lambda k: (out[k] - exact[k], k))[: n - sum(out.values())]:
        out[k] += 1
    return out


def _fill(pickers: Sequence[_Picker], quotas: Mapping[int, int]) -> list[list[int]]:
    """``sum(quotas)`` items from every picker with one and the same length histogram as far
    as their pools allow: the quotas, then each shortfall at the nearest length where every
    picker still has an item, then (only if no length has one for all) each picker alone at
    the nearest lengths."""
    out: list[list[int]] = [[] for _ in pickers]
    everyone = list(range(len(pickers)))

    def take(group: Sequence[int], length: int) -> bool:
        forms = [pickers[k].peek(length) for k in group]
        if any(f is None for f in forms):
            return False
        for k, f in zip(group, forms):
            out[k].append(pickers[k].take(length, f))  # type: ignore[arg-type]
        return True

    short: list[int] = []
    for length in sorted(quotas):
        short += [length] * sum(not take(everyone, length) for _ in range(quotas[length]))
    lengths = sorted({n for p in pickers for n in p.heaps})

    def nearest(origin: int) -> list[int]:
        return sorted(lengths, key=lambda m: (abs(m - origin), m))

    left = [origin for origin in short if not any(take(everyone, m) for m in nearest(origin))]
    for k in everyone if len(pickers) > 1 else []:
        for origin in left:
            any(take([k], m) for m in nearest(origin))
    return out


def _deal(
    by_form: Mapping[str, Mapping[str, list[int]]],
    labels: Sequence[str],
    counts: Mapping[str, int],
    rules: FormRules,
    rng: np.random.Generator,
) -> dict[str, str]:
    """Each form to one split. Forms go largest first (random order within a power of two),
    each to the split that most needs one of its labels: the lowest of its capped items per
    item needed and its forms per form needed, so dev and test get the same mix of large
    and small forms and train, needing more, gets more of them."""
    active = [s for s in SPLITS if counts[s]]
    cap = {s: rules.cap(counts[s]) for s in active}
    need_forms = {s: rules.min_distinct(counts[s]) for s in active}
    items: dict[str, Counter[str]] = {s: Counter() for s in active}
    forms: dict[str, Counter[str]] = {s: Counter() for s in active}
    names = sorted(by_form)
    order = rng.permutation(len(names))
    size = {f: sum(len(v) for v in by_form[f].values()) for f in names}
    ranked = sorted(order.tolist(), key=lambda k: -math.floor(math.log2(size[names[k]])))
    where: dict[str, str] = {}

    def fill(s: str, lab: str) -> float:
        return min(items[s][lab] / counts[s], forms[s][lab] / need_forms[s])

    for k in ranked:
        form = names[k]
        labs = [lab for lab in labels if by_form[form].get(lab)]
        s = min(active, key=lambda s: min(fill(s, lab) for lab in labs))  # ties: SPLITS order
        where[form] = s
        for lab in labs:
            items[s][lab] += min(len(by_form[form][lab]), cap[s])
            forms[s][lab] += 1
    return where


def split_by_form(
    candidates: Sequence[tuple[str, str]],
    labels: Sequence[str],
    counts: Mapping[str, int],
    rng: np.random.Generator,
    task: str,
    relax: str,
    lengths: Sequence[int] | None = None,
    rules: FormRules | None = None,
) -> dict[str, dict[str, list[int]]]:
    """Choose ``counts[split]`` candidate indices per label per split, forms never shared,
    under ``rules`` (:class:`FormRules`).

    ``candidates[i] = (label, form)``, ``lengths[i]`` its length in tokens (None: all one
    length). Returns ``{split: {label: [candidate index, ...]}}``. Raises a GenerationError
    naming each class and split that the rules cannot fill, with the figures.
    """
    rules = rules or FormRules()
    lengths = list(lengths) if lengths is not None else [0] * len(candidates)
    if not rules.match_lengths:
        lengths = [0] * len(candidates)
    by_form: dict[str, dict[str, list[int]]] = {}
    for i, (label, form) in enumerate(candidates):
        by_form.setdefault(form, {}).setdefault(label, []).append(i)
    where = _deal(by_form, labels, counts, rules, rng) if by_form else {}
    out: dict[str, dict[str, list[int]]] = {s: {} for s in SPLITS}
    short: list[str] = []
    for lab in labels:
        weights = Counter(lengths[i] for i, (label, _) in enumerate(candidates) if label == lab)
        pickers = {
            s: _Picker(
                {f: by_form[f][lab] for f, s2 in where.items() if s2 == s and lab in by_form[f]},
                lengths,
                rules.cap(counts[s]),
                rng,
            )
            for s in SPLITS
        }
        # dev and test of one size are drawn together, so their histograms are identical
        groups = (
            [["train"], ["dev", "test"]]
            if counts["dev"] == counts["test"]
            else [[s] for s in SPLITS]
        )
        for group in groups:
            n = counts[group[0]]
            if not n:
                for s in group:
                    out[s][lab] = []
                continue
            drawn = _fill([pickers[s] for s in group], _quotas(weights, n) if weights else {})
            for s, idx in zip(group, drawn):
                out[s][lab] = idx
                distinct = len({candidates[i][1] for i in idx})
                if len(idx) < n or distinct < rules.min_distinct(n):
                    have = len({f for f, s2 in where.items() if s2 == s and lab in by_form[f]})
                    short.append(
                        f"{s}/{lab}: {len(idx)} of {n} items from {distinct} forms "
                        f"(needs {rules.min_distinct(n)}; {have} forms dealt to {s})"
                    )
    if short:
        n_forms = {lab: sum(1 for f in by_form.values() if lab in f) for lab in labels}
        raise GenerationError(
            f"{task}: with each target form confined to one split, {rules.describe()} "
            f"(at most {', '.join(f'{rules.cap(counts[s])} per form in {s}' for s in SPLITS)}), "
            f"these fall short: {'; '.join(short)}. {len(candidates)} candidate sentences "
            f"from {len(by_form)} forms ({', '.join(f'{n} {lab}' for lab, n in n_forms.items())}). "
            f"Lower the sizes, {relax}, or use a larger corpus."
        )
    for s in SPLITS:
        for lab in labels:
            out[s][lab] = sorted(out[s][lab])
    return out
