"""The "contains token X" rule and the audit's view of cross-validated and pair tasks: a
planted word-presence cue is found, a clean task passes, folds are pooled, pairs joined."""

from __future__ import annotations

import numpy as np

from sentprobe.analysis.audit import audit_task
from sentprobe.analysis.checks import audit_view, best_token_rule
from sentprobe.datasets.task import ProbingTask, Split, TaskMetadata

WORDS = ["cat", "dog", "tree", "house", "river", "stone", "cloud", "apple", "road", "lamp"]


def _sentences(n: int, rng: np.random.Generator, planted: float) -> list[str]:
    """Sentences of random words; a share ``planted`` of them contain "an"."""
    out = []
    for _ in range(n):
        words = list(rng.choice(WORDS, size=6))
        if rng.random() < planted:
            words[3] = "an"
        out.append(" ".join(["The", *words, "."]))
    return out


def _task(planted: float, seed: int = 0) -> ProbingTask:
    rng = np.random.default_rng(seed)
    splits = {}
    for split, n in (("train", 400), ("test", 400)):
        ok = _sentences(n // 2, rng, 0.2)
        bad = _sentences(n // 2, rng, planted)
        splits[split] = Split(ok + bad, ["acceptable"] * len(ok) + ["unacceptable"] * len(bad))
    meta = TaskMetadata("Def", labels=("acceptable", "unacceptable"), no_surface_cue=True)
    return ProbingTask(meta, splits)


def _finding(task: ProbingTask):
    found = [f for f in audit_task(task, baselines=False) if f.check == "contains-token"]
    assert len(found) == 1
    return found[0]


def test_contains_an_is_found_where_no_cue_is_allowed():
    f = _finding(_task(planted=0.5))
    assert f.data["token"] == "an" and f.data["label_if_present"] == "unacceptable"
    assert f.severity == "error" and f.data["gain_points"] >= 10


def test_a_clean_task_passes():
    f = _finding(_task(planted=0.2))
    assert f.severity == "info"


def test_best_token_rule_needs_enough_sentences():
    assert best_token_rule(["a b", "c d"], ["x", "y"], min_sentences=5) is None
    assert best_token_rule(["a b"] * 5 + ["c"] * 5, ["x"] * 5 + ["y"] * 5)[:2] == ("a", "x")


def test_folds_pooled_and_pairs_joined():
    first = ["s1", "s2", "s3", "s4"]
    second = ["t1", "t2", "t3", "t4"]
    labels = ["acceptable", "unacceptable"] * 2
    folds = []
    for k in range(4):  # fold k tests item k
        test = Split([first[k]], [labels[k]], [second[k]])
        rest = [i for i in range(4) if i != k]
        train = Split(
            [first[i] for i in rest], [labels[i] for i in rest], [second[i] for i in rest]
        )
        folds.append({"train": train, "test": test})
    task = ProbingTask(TaskMetadata("EOS"), folds[0], folds=folds)
    view = audit_view(task)
    assert view.splits["train"].sentences == ["s1 ||| t1", "s2 ||| t2"]
    assert view.splits["test"].sentences == ["s3 ||| t3", "s4 ||| t4"]
    single = ProbingTask(TaskMetadata("x"), {"train": Split(["a"], ["y"])})
    assert audit_view(single) is single
