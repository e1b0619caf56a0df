"""The synthetic mock task: deterministic, balanced, and learnable from its words."""

from __future__ import annotations

from collections import Counter

import pytest
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression

from sentprobe.datasets.mock import make_mock_task


def test_sizes_labels_and_balance() -> None:
    task = make_mock_task(n_train=120, n_dev=30, n_test=60, n_classes=3)
    assert {k: len(v) for k, v in task.splits.items()} == {"train": 120, "dev": 30, "test": 60}
    assert task.labels == ["0", "1", "2"]
    assert Counter(task.splits["train"].labels) == {"0": 40, "1": 40, "2": 40}
    assert task.warnings == []


def test_deterministic_per_seed() -> None:
    assert make_mock_task(seed=3).content_hash() == make_mock_task(seed=3).content_hash()
    assert make_mock_task(seed=3).content_hash() != make_mock_task(seed=4).content_hash()


def test_no_dev_split() -> None:
    assert set(make_mock_task(n_dev=0).splits) == {"train", "test"}


@pytest.mark.parametrize("n_classes", [2, 4])
def test_learnable_from_words_but_not_trivially_constant(n_classes: int) -> None:
    task = make_mock_task(n_classes=n_classes, n_train=400, n_test=200)
    vectorizer = CountVectorizer(token_pattern=r"\S+")
    x_train = vectorizer.fit_transform(task.splits["train"].sentences)
    x_test = vectorizer.transform(task.splits["test"].sentences)
    model = LogisticRegression(max_iter=1000).fit(x_train, task.splits["train"].labels)
    assert model.score(x_test, task.splits["test"].labels) > 0.9
    majority = Counter(task.splits["test"].labels).most_common(1)[0][1] / len(task.splits["test"])
    assert majority <= 1 / n_classes + 0.01


def test_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        make_mock_task(n_classes=1)
    with pytest.raises(ValueError):
        make_mock_task(n_train=1, n_classes=2)
