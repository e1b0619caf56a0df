"""What every check shares: thresholds and options, the finding helpers, and what the
paper says about a task (its name, its text baselines' margins, whether it may carry a surface
cue)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from sentprobe.analysis.findings import Finding, Severity
from sentprobe.datasets.task import ALTERED_TASKS, PAPER_TASKS, SPLITS, ProbingTask, Split


@dataclass(frozen=True)
class Thresholds:
    """Where an observation turns into a warning or an error (fractions, ratios, points)."""

    #: share of an evaluation split (or of all sentences) above which overlap/ambiguity is an error
    error_fraction: float = 0.01
    #: largest/smallest class size above which a split counts as imbalanced (paper: balanced;
    #: 54/46 is 1.17)
    imbalance_ratio: float = 1.1
    #: a surface cue must beat majority at this level (exact one-sided binomial test on test)
    cue_p_value: float = 0.01
    #: and gain this many points over majority for a warning / an error where the task must
    #: carry no surface cue
    cue_warning_points: float = 3.0
    cue_error_points: float = 10.0
    #: a single-position rule (first/last token, casing...) is a warning from this many points
    #: when it is this significant: on X-Probe's English BShift (some swaps at the first
    #: position, so lower-case-initial sentences are mostly altered) the casing rule gains
    #: 2.5 points at p ~ 1e-7
    rule_p_value: float = 0.001
    rule_warning_points: float = 2.0
    #: lexical heuristic: a form needs this many occurrences (train + test) to count
    lexical_min_total: int = 5
    #: lexical heuristic: shared-form mass at or above this share of a random split's = violated
    lexical_ratio: float = 0.8
    #: lexical heuristic: random re-splits of the same sentences to compare with
    lexical_resplits: int = 8
    #: original/altered twins across splits: an error from ``error_fraction`` of the later split
    #: and this many sentences (one chance near-duplicate in a 40-sentence split: a warning)
    twin_error_count: int = 3
    #: missing classes in test are an error up to this many classes (a warning above)
    many_classes: int = 10
    seed: int = 0


@dataclass
class CheckOptions:
    """What the checks may use besides the task itself."""

    thresholds: Thresholds = field(default_factory=Thresholds)
    #: train the Length and NB baselines (seconds on 100k sentences; off for speed; the
    #: single-position rules always run)
    baselines: bool = True
    #: split -> file it was read from, so identical splits can be called byte-identical files
    files: dict[str, Path] | None = None
    #: split -> target form of each sentence (None if unknown), when a generator provides them
    targets: dict[str, Sequence[str | None]] | None = None
    #: re-annotate what a label rests on with the language's default annotator (loads a
    #: parser: the tense check of :mod:`.reliability`)
    annotate: bool = False


Check = Callable[[ProbingTask, CheckOptions], list[Finding]]


def _quote(text: str, limit: int = 70) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}{'es' if word.endswith('s') else 's'}"


def _verb(n: int, singular: str, plural: str) -> str:
    return singular if n == 1 else plural


def task_labels(task: ProbingTask) -> list[str]:
    """The task's label order; also for a task read leniently without a train split."""
    if task.metadata.labels or "train" in task.splits:
        return task.labels
    return sorted({label for split in task.splits.values() for label in split.labels})


def paper_name(task: ProbingTask) -> str:
    """The paper's task name if known, else the last part of the task name."""
    return task.metadata.paper_name or task.name.rsplit("/", 1)[-1]


def _splits(task: ProbingTask) -> list[tuple[str, Split]]:
    return [(s, task.splits[s]) for s in SPLITS if s in task.splits]


def _finding(task: ProbingTask, check: str, severity: Severity, message: str, **kw) -> Finding:
    return Finding(check=check, severity=severity, message=message, task=task.name, **kw)


@cache
def paper_baselines() -> dict[str, dict[str, float]]:
    """Conneau et al. (2018), Table 2: test accuracy of the text baselines (Majority vote,
    Length, NB-uni-tfidf, NB-bi-tfidf) per paper task, from the shipped reference table that
    ``report --reference conneau2018`` shows."""
    from sentprobe.reporting.reference import load_published

    frame = load_published("conneau2018")
    return {
        row: dict(zip(part["task"], part["score"].astype(float), strict=True))
        for row, part in frame.groupby("row")
        if row in ("Majority vote", "Length", "NB-uni-tfidf", "NB-bi-tfidf")
    }


def paper_margins(task: ProbingTask) -> dict[str, float]:
    """Points over Majority of the paper's Length, NB-uni-tfidf and NB-bi-tfidf on this task
    ({} for a task not in the paper)."""
    name = paper_name(task)
    if name not in PAPER_TASKS:
        return {}
    table = paper_baselines()
    majority = table["Majority vote"][name]
    return {
        b: round(table[b][name] - majority, 1) for b in ("Length", "NB-uni-tfidf", "NB-bi-tfidf")
    }


#: Task formats (``TaskMetadata.format``) whose label is, by design, a fact about neighbouring
#: words: Kim et al. (2019)'s acceptability sets swap one function word among its neighbours
#: (or move a sentence boundary), so a bigram model sees the very infelicity the task is about,
#: as NB-bi-tfidf sees BShift's swap in Conneau et al. (2018). The paper has no NB margin for
#: these sets, so NB-bi-tfidf is reported there (info), not counted as a leak.
BIGRAM_LABEL_FORMATS = frozenset({"acceptability-single", "acceptability-pair"})


def expects_no_surface_cue(task: ProbingTask) -> bool:
    """The task's metadata says no surface cue may predict the label (by default the paper's
    altered-sentence tasks, BShift, SOMO and CoordInv, whose classes are the same kind of
    sentence with or without one alteration)."""
    meta = task.metadata
    if meta.no_surface_cue is not None:
        return meta.no_surface_cue
    return paper_name(task) in ALTERED_TASKS
