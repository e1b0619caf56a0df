"""Parser-free syntactic task (Conneau et al. 2018, sec. 2): BShift."""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import ClassVar

import numpy as np

from sentprobe.datasets.task import SPLITS

from .base import GeneratedTask, GenerationError, make_rng, per_class, shuffled
from .corpus import Tokens

__all__ = ["BigramShift", "is_punctuation"]

_QUOTES = {'"', "\u201c", "\u201d", "\u201e", "``", "''"}


def is_punctuation(token: str) -> bool:
    """True for tokens made only of punctuation or symbols (".", "--", "%", "$", "=")."""
    return all(unicodedata.category(ch)[0] in "PS" for ch in token)


@dataclass
class BigramShift:
    """BShift: were two adjacent tokens swapped ("I") or is the sentence original ("O")?

    Rules (paper, plus fixes for X-Probe's defects): the swap never involves the first
    token (so capitalisation gives nothing away), neither token is punctuation, the two
    tokens differ (otherwise nothing changes), sentences with double quotes are skipped,
    every sentence is used once (never in both versions) and an inverted sentence that
    equals another corpus sentence is rejected. Original and inverted sentences come from
    the same pool (sentences with at least one allowed swap), so eligibility is no cue.
    """

    name: ClassVar[str] = "BShift"
    file: ClassVar[str] = "bigram_shift.txt"
    labels: ClassVar[list[str]] = ["O", "I"]

    first_position: int = 1
    skip_quotes: bool = True

    def positions(self, tokens: Tokens) -> list[int]:
        """Indices i such that tokens i and i+1 may be swapped."""
        return [
            i
            for i in range(self.first_position, len(tokens) - 1)
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
        self, sentences: Sequence[Tokens], sizes: Mapping[str, int], seed: int
    ) -> GeneratedTask:
        stats: Counter = Counter()
        pool: list[Tokens] = []
        for tokens in sentences:
            if self.skip_quotes and any(t in _QUOTES for t in tokens):
                stats["rejected: contains double quotes"] += 1
            elif not self.positions(tokens):
                stats["rejected: no swappable pair (non-initial, non-punctuation, distinct)"] += 1
            else:
                pool.append(tokens)
        stats["eligible"] = len(pool)
        counts = per_class(sizes, len(self.labels), self.name)
        rng = make_rng(seed, self.name)
        order = iter(rng.permutation(len(pool)).tolist())
        corpus = {" ".join(t) for t in sentences}
        emitted: set[str] = set()
        splits: dict[str, list[tuple[str, str]]] = {}
        try:
            for s in SPLITS:
                examples = []
                for _ in range(counts[s]):
                    examples.append((" ".join(pool[next(order)]), "O"))
                for _ in range(counts[s]):
                    while True:
                        inverted = " ".join(self.swap(pool[next(order)], rng))
                        if inverted not in corpus and inverted not in emitted:
                            break
                        stats["rejected: inverted sentence exists in corpus"] += 1
                    emitted.add(inverted)
                    examples.append((inverted, "I"))
                splits[s] = shuffled(examples, rng)
        except StopIteration:
            need = 2 * sum(counts.values())
            fit = len(pool) // 2
            raise GenerationError(
                f"{self.name}: needs {need} distinct sentences ({counts['train']}/"
                f"{counts['dev']}/{counts['test']} per class for train/dev/test), but only "
                f"{len(pool)} of {len(sentences)} corpus sentences allow a swap; at most about "
                f"{fit} per class fit in total. Lower the sizes, or relax the rules "
                f"(skip_quotes=False), or use a larger corpus."
            ) from None
        stats["used"] = sum(len(v) for v in splits.values())
        return GeneratedTask(self.name, self.file, list(self.labels), splits, stats, asdict(self))
