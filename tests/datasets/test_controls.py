"""Control tasks: the task's label counts, and labels that only the control word decides."""

from __future__ import annotations

from collections import Counter

import pytest

from sentprobe.datasets import ProbingTask, Split, TaskMetadata, resolve_tasks
from sentprobe.datasets.controls import (
    CONTROL_SUFFIX,
    control_task,
    control_word,
    controlled_name,
    is_control,
)


def _label_counts(task: ProbingTask) -> dict[str, Counter[str]]:
    return {name: Counter(split.labels) for name, split in task.splits.items()}


def _by_word(task: ProbingTask) -> dict[str, set[str]]:
    seen: dict[str, set[str]] = {}
    for split in task.splits.values():
        for sentence, label in zip(split.sentences, split.labels, strict=True):
            seen.setdefault(control_word(sentence), set()).add(label)
    return seen


def test_control_word_skips_function_words_and_punctuation() -> None:
    assert control_word("The old man 's boat sank .") == "old"
    assert control_word("Of the 3 dogs , two barked") == "dogs"
    assert control_word("It is what it is") == "it"  # no content word: the first token
    assert control_word("Ein Hund bellt") == "ein"  # not English: the first alphabetic token


@pytest.mark.parametrize("task", resolve_tasks("sample-en"), ids=lambda t: t.name)
def test_sample_controls_keep_label_counts_and_depend_on_the_word_only(task) -> None:
    control = control_task(task, seed=3)
    assert control.name == task.name + CONTROL_SUFFIX and is_control(control.name)
    assert controlled_name(control.metadata.paper_name or "") == task.metadata.paper_name
    assert [s.sentences for s in control.splits.values()] == [
        s.sentences for s in task.splits.values()
    ]
    # Same word type -> same label, in every split.
    assert all(len(labels) == 1 for labels in _by_word(control).values())
    if task.metadata.paper_name == "WC":
        # 10 items per label in all: a control word seen 17 times cannot fit; the warning
        # says by how much the counts differ (the stated tolerance), here under 2% of items.
        assert control.warnings and "differ" in control.warnings[0]
        got = sum(Counter(lb for s in control.splits.values() for lb in s.labels).values())
        moved = Counter(lb for s in task.splits.values() for lb in s.labels) - Counter(
            lb for s in control.splits.values() for lb in s.labels
        )
        assert sum(moved.values()) < 0.02 * got
    else:
        assert control.warnings == []
        assert _label_counts(control) == _label_counts(task)


def test_control_labels_are_random_but_seeded() -> None:
    task = resolve_tasks("sample-en/BShift")[0]
    a, b, c = control_task(task, 0), control_task(task, 0), control_task(task, 1)
    assert a.splits["train"].labels == b.splits["train"].labels
    assert a.splits["train"].labels != c.splits["train"].labels
    # not the task's labels again (BShift's label is not a function of the first word)
    same = sum(
        x == y for x, y in zip(a.splits["train"].labels, task.splits["train"].labels, strict=True)
    )
    assert same < 0.7 * len(task.splits["train"])


def test_pairs_sub_types_and_folds_are_kept() -> None:
    first = [f"the {w} sat ." for w in ("cat", "dog", "cat", "owl", "dog", "cat")]
    second = [f"a {w} ran ." for w in ("fox", "cat", "emu", "yak", "gnu", "elk")]
    split = Split(first, list("xyxyxy"), sentences2=second, groups=list("abcdef"))
    folds = [{"train": split, "test": Split(first[:2], ["x", "y"], second[:2])}]
    task = ProbingTask(
        TaskMetadata(name="Pairs"), {"train": split, "test": folds[0]["test"]}, folds=folds
    )
    control = control_task(task)
    train = control.splits["train"]
    assert train.sentences2 == second and train.groups == list("abcdef")
    assert control.folds is not None and control.folds[0]["train"].labels == train.labels
    labels = dict(zip(first, train.labels, strict=True))  # decided by the first sentence only
    assert labels["the cat sat ."] == control.folds[0]["test"].labels[0]


def test_frequent_word_types_keep_exact_counts_when_they_fit() -> None:
    # "alpha" and "beta" start 40 and 20 of 100 sentences, labels 70/30: both fit, counts exact.
    words = (
        ["alpha"] * 40 + ["beta"] * 20 + ["w" + "abcdefgh"[i % 8] * (1 + i // 8) for i in range(40)]
    )
    sentences = [f"the {w} ran ." for w in words]
    labels = ["x"] * 70 + ["y"] * 30
    task = ProbingTask(
        TaskMetadata(name="Toy"),
        {
            "train": Split(sentences, labels),
            "test": Split(["the alpha sat .", "the gamma sat ."], ["x", "y"]),
        },
    )
    for seed in range(5):
        control = control_task(task, seed)
        assert _label_counts(control) == _label_counts(task)
        assert all(len(v) == 1 for v in _by_word(control).values())
