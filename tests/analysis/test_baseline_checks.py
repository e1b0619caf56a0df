"""The audit's text baselines are the registry's rows, not a second list of names."""

from sentprobe import registry
from sentprobe.analysis.checks import BASELINES, MAJORITY, baseline_scores
from sentprobe.datasets.task import ProbingTask, Split, TaskMetadata
from sentprobe.evaluation.baselines import baseline_names


def test_paper_baselines_come_from_the_registry():
    shared = [b for b in BASELINES if not b.audit_only]
    assert [b.make for b in shared] == [
        registry.baselines.get(n).make for n in ("length", "nb-uni", "nb-bi")
    ]
    assert [b.name for b in shared] == [
        registry.baselines.get(n).label for n in ("length", "nb-uni", "nb-bi")
    ]
    assert registry.baselines.get("majority").label == MAJORITY
    # the audit's own NB on character n-grams is no `sentprobe run` row
    (extra,) = [b for b in BASELINES if b.audit_only]
    assert extra.name not in {registry.baselines.get(n).label for n in baseline_names()}


def test_baseline_scores_train_every_baseline():
    def split(n):
        sents = [" ".join(["w"] * (2 + i % 2 * 3)) + f" x{i % 2}" for i in range(n)]
        return Split(sents, ["short" if i % 2 == 0 else "long" for i in range(n)])

    meta = TaskMetadata(name="t", labels=("long", "short"))
    task = ProbingTask(meta, {"train": split(40), "dev": split(10), "test": split(10)})
    scores = baseline_scores(task)
    assert list(scores) == [MAJORITY, *(b.name for b in BASELINES)]
    assert scores[MAJORITY] == 0.5 and scores["Length"] == 1.0
