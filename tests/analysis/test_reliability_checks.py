"""The reliability checks (tense labels on non-indicative verbs, dev and test drawn unalike, a
test split too small to compare rows); each test also asserts the check is one ``run_checks``
runs, so an unregistered check fails too."""

from __future__ import annotations

import random

import pytest

from sentprobe.analysis.checks import CHECKS, CheckOptions
from sentprobe.analysis.checks.reliability import (
    check_dev_test,
    check_tense_labels,
    check_test_power,
    min_test_items,
)
from sentprobe.annotation.backends.base import Annotator
from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.datasets.task import ProbingTask, Split, TaskMetadata

WORDS = [f"w{i}" for i in range(60)]


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + " ."


def _task(sizes, length, *, name="Tense", lang="en", seed=0) -> ProbingTask:
    """Two classes; ``length(split, label)`` gives each sentence's number of words."""
    rng = random.Random(seed)
    splits = {}
    for split, n in sizes.items():
        sentences, labels = [], []
        for i in range(n):
            label = ("A", "B")[i % 2]
            sentences.append(_sentence(rng, length(split, label)) + f" {split}{i}")
            labels.append(label)
        splits[split] = Split(sentences, labels)
    meta = TaskMetadata(name=f"t/{name}", paper_name=name, language=lang, labels=("A", "B"))
    return ProbingTask(meta, splits)


def _findings(task, check, **options):
    """``check``'s findings; only the one check runs (the others train more baselines)."""
    assert check in CHECKS
    return check(task, CheckOptions(**options))


def test_min_test_items_is_the_ten_point_interval():
    assert min_test_items() == 193  # 1.96 * sqrt(0.5 / 193) <= 0.10 < 1.96 * sqrt(0.5 / 192)


@pytest.mark.parametrize("n_test,severity", [(40, "warning"), (194, "info")])
def test_a_test_split_too_small_to_separate_rows_is_flagged(n_test, severity):
    task = _task({"train": 40, "dev": 10, "test": n_test}, lambda s, y: 6)
    (finding,) = _findings(task, check_test_power, baselines=False)
    assert finding.severity == severity and finding.data["n"] == n_test


def test_dev_and_test_drawn_unalike_is_flagged():
    """Length decides the label in train and test, but dev's classes have the other length
    (as sample-en's Tense dev, PRES 16.7 vs PAST 10.9 tokens): Length is ~100% on test,
    ~0% on dev."""

    def confounded(split, label):
        long = (label == "B") != (split == "dev")
        return 14 if long else 4

    task = _task({"train": 40, "dev": 20, "test": 20}, confounded)
    found = {f.data["baseline"]: f for f in _findings(task, check_dev_test)}
    assert found["Length"].severity == "warning"
    assert found["Length"].data["test"] - found["Length"].data["dev"] > 0.5


def test_dev_and_test_drawn_alike_pass():
    def alike(split, label):
        return 14 if label == "B" else 4

    task = _task({"train": 40, "dev": 20, "test": 20}, alike)
    found = _findings(task, check_dev_test)
    assert {f.data["baseline"] for f in found} == {"Length", "NB-uni-tfidf"}
    assert all(f.severity == "info" for f in found)


class _Imperatives(Annotator):
    """natasha's error on instructional Russian: every sentence's first word is its root,
    a finite indicative past verb ('введите', an imperative)."""

    name = "fake-ru"

    def annotate(self, sentences, *, pretokenized=False):
        for words in sentences:
            n = len(words)
            yield AnnotatedSentence(
                tokens=list(words),
                upos=["VERB", *["NOUN"] * (n - 1)],
                heads=[0, *[1] * (n - 1)],
                deprels=["root", *["obj"] * (n - 1)],
                feats=[{"Mood": "Ind", "Tense": "Past", "VerbForm": "Fin"}, *[{}] * (n - 1)],
                lang="ru",
            )


def _russian_tense(first_word: str) -> ProbingTask:
    rng = random.Random(0)
    splits = {
        s: Split(
            [f"{first_word} {_sentence(rng, 4)}" for _ in range(n)], ["Past", "Pres"] * (n // 2)
        )
        for s, n in (("train", 20), ("dev", 10), ("test", 10))
    }
    meta = TaskMetadata(name="ru/Tense", paper_name="Tense", language="ru", labels=("Past", "Pres"))
    return ProbingTask(meta, splits)


def test_tense_labels_on_imperatives_are_flagged(monkeypatch):
    import sentprobe.annotation.backends.base as backends

    monkeypatch.setattr(backends, "default_annotator", lambda lang: _Imperatives())
    (finding,) = _findings(
        _russian_tense("введите"), check_tense_labels, baselines=False, annotate=True
    )
    assert finding.severity == "warning" and finding.count == 20
    assert "-л-" in finding.message
    # a real past form on the same trees passes, and nothing is annotated unless asked
    (ok,) = _findings(_russian_tense("открыли"), check_tense_labels, baselines=False, annotate=True)
    assert ok.severity == "info"
    assert _findings(_russian_tense("введите"), check_tense_labels, baselines=False) == []
