"""Small synthetic SentEval / X-Probe suites, clean or with one planted defect each."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

SYLLABLES = ("ka", "lo", "mi", "ne", "pu", "ra", "si", "to", "vu", "ze", "bo", "di", "fe", "gu")


def words(rng: random.Random, n: int, suffix: str = "") -> list[str]:
    out: set[str] = set()
    while len(out) < n:
        out.add("".join(rng.choice(SYLLABLES) for _ in range(3)) + suffix)
    return sorted(out)


class Maker:
    """Builds sentences for the paper's tasks from made-up words (seeded, unique)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.nouns = words(self.rng, 300)
        self.adjs = words(self.rng, 120, "y")
        self.seen: set[str] = set()

    def _unique(self, make) -> list[str]:
        while True:
            tokens = make()
            text = " ".join(tokens)
            if text not in self.seen:
                self.seen.add(text)
                return tokens

    def clause(self) -> list[str]:
        r = self.rng
        return [r.choice(self.adjs), r.choice(self.nouns), r.choice(self.nouns) + "s"]

    def plain(self) -> list[str]:
        return self._unique(
            lambda: ["The", *self.clause(), "the", self.rng.choice(self.nouns), "."]
        )

    def bshift(self, inverted: bool, lowercase: bool = False) -> str:
        tokens = self.plain()
        if inverted:
            if lowercase:  # X-Probe's defect: a swap at the first position
                tokens[0], tokens[1] = tokens[1], tokens[0].lower()
            else:
                i = self.rng.randrange(1, len(tokens) - 2)
                tokens[i], tokens[i + 1] = tokens[i + 1], tokens[i]
        return " ".join(tokens)

    def coordinv(self, inverted: bool, longer_if_inverted: int = 0) -> str:
        def make() -> list[str]:
            a, b = self.clause(), self.clause()
            if inverted:
                a, b = b, a
                b = b + [self.rng.choice(self.nouns) for _ in range(longer_if_inverted)]
            return ["The", *a, ",", "and", "the", *b, "."]

        return " ".join(self._unique(make))

    def tense(self, verb: str) -> str:
        def make() -> list[str]:
            r = self.rng
            return [
                "The",
                r.choice(self.adjs),
                r.choice(self.nouns),
                verb,
                r.choice(self.nouns),
                ".",
            ]

        return " ".join(self._unique(make))


def senteval_lines(rows: dict[str, list[tuple[str, str]]]) -> str:
    short = {"train": "tr", "dev": "va", "test": "te"}
    return "".join(f"{short[s]}\t{y}\t{x}\n" for s, pairs in rows.items() for x, y in pairs)


SIZES = {"train": 60, "dev": 20, "test": 40}  # per class


def bshift_rows(m: Maker, lowercase_share: float = 0.0) -> dict[str, list[tuple[str, str]]]:
    rows = {}
    for split, n in SIZES.items():
        orig = [(m.bshift(False), "O") for _ in range(n)]
        inv = [(m.bshift(True, lowercase=i < lowercase_share * n), "I") for i in range(n)]
        rows[split] = orig + inv
    return rows


def coordinv_rows(m: Maker, longer: int = 0) -> dict[str, list[tuple[str, str]]]:
    return {
        split: [(m.coordinv(False), "O") for _ in range(n)]
        + [(m.coordinv(True, longer), "I") for _ in range(n)]
        for split, n in SIZES.items()
    }


def tense_rows(m: Maker, shared_verbs: bool = False) -> dict[str, list[tuple[str, str]]]:
    """Each split draws its verbs from its own pool (the lexical split) unless shared_verbs."""
    rows = {}
    for k, (split, n) in enumerate(SIZES.items()):
        pool = 0 if shared_verbs else k
        past = [f"{w}ed" for w in words(random.Random(100 + pool), 4)]
        present = [f"{w}es" for w in words(random.Random(200 + pool), 4)]
        rows[split] = [(m.tense(m.rng.choice(past)), "PAST") for _ in range(n)] + [
            (m.tense(m.rng.choice(present)), "PRES") for _ in range(n)
        ]
    return rows


def write_senteval_suite(directory: Path, **tasks: dict[str, list[tuple[str, str]]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for file, rows in tasks.items():
        (directory / f"{file}.txt").write_text(senteval_lines(rows), encoding="utf-8")
    return directory


def write_xprobe_task(folder: Path, rows: dict[str, list[tuple[str, str]]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for split, short in (("train", "tr"), ("dev", "va"), ("test", "te")):
        if split in rows:
            text = "".join(f"{x}\t{y}\n" for x, y in rows[split])
            (folder / f"{short}.txt").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def maker() -> Maker:
    return Maker(0)


@pytest.fixture
def clean_suite(tmp_path: Path, maker: Maker) -> Path:
    return write_senteval_suite(
        tmp_path / "clean",
        bigram_shift=bshift_rows(maker),
        coordination_inversion=coordinv_rows(maker),
        past_present=tense_rows(maker),
    )
