"""A synthetic corpus whose properties the tests can predict."""

from __future__ import annotations

import itertools
import random

import pytest

SYLLABLES = ["ba", "ke", "di", "lo", "mu", "ra", "si", "to", "ve", "zu"]
WORDS = ["".join(p) for p in itertools.product(SYLLABLES, repeat=2)]  # 100 four-letter words


def synthetic_corpus(n: int = 3000, seed: int = 0) -> list[tuple[str, ...]]:
    """``n`` distinct sentences of 5-28 tokens: capitalised first word, some commas and
    double quotes, a full stop; word frequencies are Zipf-like so ranks are spread out."""
    rng = random.Random(seed)
    weights = [1 / (i + 1) for i in range(len(WORDS))]
    seen, out = set(), []
    while len(out) < n:
        length = rng.randint(5, 28)
        words = rng.choices(WORDS, weights, k=length - 1)
        if length > 8 and rng.random() < 0.3:
            words[rng.randrange(1, length - 2)] = ","
        if rng.random() < 0.05:
            words[-1] = '"'
        tokens = (words[0].capitalize(), *words[1:], ".")
        if tokens not in seen:
            seen.add(tokens)
            out.append(tokens)
    return out


@pytest.fixture(scope="session")
def corpus() -> list[tuple[str, ...]]:
    return synthetic_corpus()


@pytest.fixture(scope="session")
def make_corpus():
    """The factory itself, for tests that need another size or seed."""
    return synthetic_corpus
