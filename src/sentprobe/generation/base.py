"""What every task generator shares: its output type, seeding, balanced sampling, errors.

A generator is a small dataclass whose fields are its rules (defaults = the paper's) and
whose ``generate(sentences, sizes, seed)`` returns balanced, disjoint splits.
"""

from __future__ import annotations

import unicodedata
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from sentprobe.datasets.task import SPLITS
from sentprobe.errors import SentprobeError

#: A candidate sentence: its tokens, or a richer item carrying them (``assign_splits``).
S = TypeVar("S")

#: SentEval's partition codes.
SPLIT_CODES = {"train": "tr", "dev": "va", "test": "te"}

Example = tuple[str, str]  # (sentence, label)


class GenerationError(SentprobeError):
    """The corpus cannot fill the requested task; the message says what would work."""


@dataclass
class GeneratedTask:
    """A generated task: its splits of (sentence, label) plus how many sentences each rule took."""

    name: str
    file: str
    labels: list[str]
    splits: dict[str, list[Example]]
    stats: Counter = field(default_factory=Counter)
    params: dict = field(default_factory=dict)
    #: altered sentence -> the corpus sentence it was made from (SOMO, CoordInv), for audits
    sources: dict[str, str] = field(default_factory=dict)
    #: sentence -> its target form, for tasks whose forms must stay in one split (Tense,
    #: SubjNum, ObjNum: the lower-cased target word; SOMO: the replacement word)
    targets: dict[str, str] = field(default_factory=dict)

    def counts_summary(self) -> str:
        """E.g. ``"2000 train / 500 dev / 500 test, 6 labels"``."""
        sizes = " / ".join(f"{len(self.splits.get(s, []))} {s}" for s in SPLITS)
        return f"{sizes}, {len(self.labels)} labels"

    @property
    def target_forms(self) -> dict[str, list[str | None]] | None:
        """``{split: [target form of each example, or None]}`` in split order (what the
        quality report's exact lexical-split check reads), None without targets."""
        if not self.targets:
            return None
        return {s: [self.targets.get(text) for text, _ in ex] for s, ex in self.splits.items()}

    def counts(self) -> dict[str, dict[str, int]]:
        """Examples per label per split, labels in declared order."""
        out = {}
        for split, examples in self.splits.items():
            c = Counter(label for _, label in examples)
            out[split] = {label: c[label] for label in self.labels if c[label]}
        return out


@dataclass(frozen=True)
class Scan:
    """What a generator finds in a corpus before any size is known: its candidate pools (in
    the generator's own shape) and the rejection counts. ``--sizes auto`` scans once and
    draws many sizes from it (``generate = draw(scan(corpus), sizes, seed)``); a draw never
    mutates it."""

    pools: Any
    stats: Counter


def make_rng(seed: int, task: str) -> np.random.Generator:
    """One independent, reproducible stream per (seed, task), so tasks don't share draws."""
    return np.random.default_rng([seed, zlib.crc32(task.encode())])


def check_sizes(sizes: Mapping[str, int]) -> dict[str, int]:
    """Validate ``{"train": n, "dev": n, "test": n}``; missing splits are an error."""
    missing = [s for s in SPLITS if s not in sizes]
    unknown = [s for s in sizes if s not in SPLITS]
    if missing or unknown:
        raise ValueError(f"sizes needs exactly the splits {SPLITS}; got {sorted(sizes)}")
    if any(int(sizes[s]) < 0 for s in SPLITS):
        raise ValueError(f"sizes must be non-negative: {dict(sizes)}")
    return {s: int(sizes[s]) for s in SPLITS}


def per_class(sizes: Mapping[str, int], n_classes: int, task: str) -> dict[str, int]:
    """Examples per class per split: the requested total divided evenly (rounded down)."""
    out = {s: n // n_classes for s, n in check_sizes(sizes).items()}
    if any(sizes[s] and out[s] == 0 for s in SPLITS):
        raise GenerationError(
            f"{task}: sizes {dict(sizes)} give fewer than one example per class "
            f"for {n_classes} classes; ask for at least {n_classes} per split"
        )
    return out


def assign_splits(
    pools: Mapping[str, Sequence[S]],
    counts: Mapping[str, int],
    rng: np.random.Generator,
    task: str,
    what: str = "class",
) -> dict[str, dict[str, list[S]]]:
    """Draw ``sum(counts)`` distinct sentences per class and deal them out to the splits.

    ``pools`` maps each class to its candidate sentences (in a stable order). Raises a
    GenerationError naming every class that is short, and the largest size that would fit.
    """
    need = sum(counts.values())
    whats = what + ("es" if what.endswith("s") else "s")
    short = {c: len(p) for c, p in pools.items() if len(p) < need}
    if short:
        fewest = min(short.values())
        worst = ", ".join(f"{c!r} has {n}" for c, n in sorted(short.items())[:5])
        more = f" (and {len(short) - 5} more)" if len(short) > 5 else ""
        raise GenerationError(
            f"{task}: each {what} needs {need} sentences "
            f"({', '.join(f'{counts[s]} {s}' for s in SPLITS)}), but {len(short)} of "
            f"{len(pools)} {whats} fall short: {worst}{more}. The corpus supports at most "
            f"{fewest} per {what}; lower the sizes, use fewer {whats}, or a larger corpus."
        )
    out: dict[str, dict[str, list[S]]] = {s: {} for s in SPLITS}
    for cls, pool in pools.items():
        picked = rng.choice(len(pool), size=need, replace=False)
        start = 0
        for s in SPLITS:
            out[s][cls] = [pool[i] for i in picked[start : start + counts[s]]]
            start += counts[s]
    return out


def shuffled(examples: list[Example], rng: np.random.Generator) -> list[Example]:
    """Random order within a split (as in the SentEval files), reproducible from ``rng``."""
    return [examples[i] for i in rng.permutation(len(examples))]


def splits_from(
    drawn: Mapping[str, Mapping[str, Sequence[str]]], rng: np.random.Generator
) -> dict[str, list[Example]]:
    """``{split: {label: [sentence, ...]}}`` -> shuffled ``{split: [(sentence, label), ...]}``."""
    return {
        s: shuffled([(text, lab) for lab, texts in drawn[s].items() for text in texts], rng)
        for s in SPLITS
    }


def base_deprel(deprel: str) -> str:
    """The universal relation without its subtype (``nsubj:pass`` -> ``nsubj``)."""
    return deprel.split(":")[0]


def is_punctuation(token: str) -> bool:
    """True for tokens made only of punctuation or symbols (".", "--", "%", "$", "=")."""
    return bool(token) and all(unicodedata.category(ch)[0] in "PS" for ch in token)


def edge_key(tokens: Sequence[str]) -> tuple[str, str, int]:
    """What a single-position surface rule can see of a sentence: its first token (hence its
    class and casing), its last token (hence the last character) and its number of
    punctuation tokens. The altered-sentence tasks pair each original with an altered
    sentence of the same key, so every such rule is at chance in every split."""
    return tokens[0], tokens[-1], sum(map(is_punctuation, tokens))
