"""What the checks see of a cross-validated or sentence-pair task (Kim et al. 2019's sets).

A task with ``folds`` (each item in exactly one fold's test split) is checked on one larger
disjoint split instead of its first fold (a tenth of the items as test gives the binomial
test little power): train = the items tested in the first half of the folds, test = those
tested in the second half. A pair task (``Split.sentences2``) is checked on the pair as one
text, ``first ||| second``, so the first-token rule reads the first sentence, the last-token
rule the second, and the text baselines both.
"""

from __future__ import annotations

from sentprobe.datasets.task import ProbingTask, Split

PAIR_SEPARATOR = " ||| "


def _joined(split: Split) -> Split:
    if split.sentences2 is None:
        return split
    texts = [f"{a}{PAIR_SEPARATOR}{b}" for a, b in zip(split.sentences, split.sentences2)]
    return Split(texts, list(split.labels), groups=split.groups)


def _concat(parts: list[Split]) -> Split:
    return Split(
        [s for p in parts for s in p.sentences],
        [y for p in parts for y in p.labels],
        None if any(p.sentences2 is None for p in parts) else
        [s for p in parts for s in p.sentences2 or []],
    )  # fmt: skip


def audit_view(task: ProbingTask) -> ProbingTask:
    """The task as the checks see it: folds pooled into a half/half split, pairs joined."""
    splits = task.splits
    if task.folds and len(task.folds) >= 2:
        tests = [fold["test"] for fold in task.folds if "test" in fold]
        half = len(tests) // 2
        splits = {"train": _concat(tests[:half]), "test": _concat(tests[half:])}
    if not task.folds and all(s.sentences2 is None for s in splits.values()):
        return task
    view = ProbingTask(task.metadata, {k: _joined(v) for k, v in splits.items()})
    view.warnings = list(task.warnings)
    return view
