"""Tiny synthetic tasks generated in memory, so runner and CLI tests need no files (cf. MTEB's
mock tasks).

Each class owns a group of made-up words; a sentence mixes filler words with words of several
groups, and its label is the group that contributes most words. A bag-of-words probe can learn
this perfectly, a constant one cannot, which is what a test of the machinery needs.
"""

from __future__ import annotations

import random

from sentprobe.datasets.task import ProbingTask, Split, TaskMetadata
from sentprobe.datasets.validation import validate_task

_SYLLABLES = ("ka", "lo", "mi", "ne", "pu", "ra", "si", "to", "vu", "ze", "bo", "di")
_WORDS_PER_CLASS = 6
_N_FILLERS = 20


def _word(rng: random.Random, taken: set[str]) -> str:
    while True:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))
        if word not in taken:
            taken.add(word)
            return word


def make_mock_task(
    name: str = "Mock",
    n_train: int = 200,
    n_dev: int = 50,
    n_test: int = 50,
    n_classes: int = 2,
    seed: int = 0,
) -> ProbingTask:
    """A balanced synthetic task with labels "0".."n_classes-1"; ``n_dev=0`` omits dev."""
    if n_classes < 2:
        raise ValueError("n_classes must be at least 2")
    if min(n_train, n_test) < n_classes or n_dev < 0:
        raise ValueError("train and test need at least one sentence per class, dev >= 0")
    rng = random.Random(seed)
    taken: set[str] = set()
    groups = [[_word(rng, taken) for _ in range(_WORDS_PER_CLASS)] for _ in range(n_classes)]
    fillers = [_word(rng, taken) for _ in range(_N_FILLERS)]
    seen: set[str] = set()

    def sentence(label: int) -> str:
        while True:
            words = rng.choices(groups[label], k=rng.randint(3, 4))
            others = [c for c in range(n_classes) if c != label]
            words += rng.choices(groups[rng.choice(others)], k=rng.randint(0, 2))
            words += rng.choices(fillers, k=rng.randint(2, 6))
            rng.shuffle(words)
            text = " ".join(words)
            if text not in seen:  # unique, so no cross-split duplicate warnings
                seen.add(text)
                return text

    def split(n: int) -> Split:
        labels = [i % n_classes for i in range(n)]
        rng.shuffle(labels)
        return Split(sentences=[sentence(y) for y in labels], labels=[str(y) for y in labels])

    sizes = {"train": n_train, "dev": n_dev, "test": n_test}
    splits = {k: split(n) for k, n in sizes.items() if n > 0}
    task = ProbingTask(mock_metadata(name, n_classes), splits)
    return validate_task(task)


def mock_metadata(name: str = "Mock", n_classes: int = 2) -> TaskMetadata:
    """Metadata of a mock task, available without generating it (for listings)."""
    return TaskMetadata(
        name=name,
        language="und",
        labels=tuple(str(c) for c in range(n_classes)),
        source="sentprobe.datasets.mock (synthetic)",
        license="Apache-2.0",
        description=f"Synthetic {n_classes}-class task: the label is the dominant word group.",
    )


#: Registered mock tasks: name -> keyword arguments of make_mock_task.
MOCK_TASKS: dict[str, dict[str, int]] = {
    "mock/Mock": {},
    "mock/Mock4": {"n_classes": 4, "n_train": 240, "n_dev": 40, "n_test": 40, "seed": 1},
    "mock/MockNoDev": {"n_dev": 0, "seed": 2},
}
