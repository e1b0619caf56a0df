"""Lexical splits: every target form lives in exactly one partition (train, dev or test).

The paper does this for Tense, SubjNum and ObjNum so a probe cannot pass by memorising
words. Forms are whole (lower-cased) word forms, not characters (X-Probe's defect).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from sentprobe.datasets.task import SPLITS

from .base import GenerationError

__all__ = ["form_frequencies", "in_band", "split_by_form"]


def form_frequencies(token_lists: Iterable[Sequence[str]]) -> Counter:
    """Corpus frequency of every lower-cased form."""
    return Counter(tok.lower() for tokens in token_lists for tok in tokens)


def in_band(freq: int, band: tuple[int, int]) -> bool:
    return band[0] <= freq <= band[1]


def split_by_form(
    candidates: Sequence[tuple[str, str]],
    labels: Sequence[str],
    counts: Mapping[str, int],
    rng: np.random.Generator,
    task: str,
    relax: str,
) -> dict[str, dict[str, list[int]]]:
    """Choose ``counts[split]`` candidate indices per label per split, forms never shared.

    ``candidates[i] = (label, form)``. Forms are taken in random order; each goes to the
    split whose demand is least filled (as a fraction) among those it can help, so every
    split fills at the same pace and big forms do not all land in one split. Returns
    ``{split: {label: [candidate index, ...]}}``.
    """
    by_form: dict[str, dict[str, list[int]]] = {}
    for i, (label, form) in enumerate(candidates):
        by_form.setdefault(form, {}).setdefault(label, []).append(i)
    forms = sorted(by_form)
    have: dict[str, Counter[str]] = {s: Counter() for s in SPLITS}
    pools: dict[str, dict[str, list[int]]] = {s: {lab: [] for lab in labels} for s in SPLITS}

    def missing(s: str) -> float:
        if not counts[s]:
            return 0.0
        return sum(max(0, counts[s] - have[s][lab]) for lab in labels) / (counts[s] * len(labels))

    for k in rng.permutation(len(forms)).tolist():
        groups = by_form[forms[k]]
        useful = [s for s in SPLITS if any(have[s][lab] < counts[s] for lab in groups)]
        if not useful:
            continue
        s = max(useful, key=missing)  # ties: SPLITS order
        for lab, idx in groups.items():
            have[s][lab] += len(idx)
            pools[s][lab].extend(idx)
    short = [
        f"{s}/{lab}: {have[s][lab]} of {counts[s]}"
        for s in SPLITS
        for lab in labels
        if have[s][lab] < counts[s]
    ]
    if short:
        fit = min(
            (have[s][lab] * sum(counts.values()) // counts[s])
            for s in SPLITS
            for lab in labels
            if counts[s]
        )
        raise GenerationError(
            f"{task}: with each target form confined to one split, only these fall short "
            f"(per split/label: found of needed): {'; '.join(short)}. {len(candidates)} "
            f"candidate sentences from {len(forms)} forms; about {fit} per class in total "
            f"would fit in these proportions. Lower the sizes, {relax}, or use a larger corpus."
        )
    out: dict[str, dict[str, list[int]]] = {s: {} for s in SPLITS}
    for s in SPLITS:
        for lab in labels:
            pool = sorted(pools[s][lab])
            out[s][lab] = [pool[j] for j in rng.choice(len(pool), counts[s], replace=False)]
    return out
