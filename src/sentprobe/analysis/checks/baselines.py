"""The text baselines as leakage alarms: Length, NB-uni-tfidf, NB-bi-tfidf and NB on
character n-grams, trained as ``sentprobe run`` trains them and scored like the rules."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sentprobe.analysis.checks.base import (
    CheckOptions,
    expects_no_surface_cue,
    paper_margins,
    paper_name,
)
from sentprobe.analysis.checks.cues import (
    _cue_finding,
    _scored_test,
    score_against_majority,
)
from sentprobe.analysis.findings import Finding
from sentprobe.datasets.task import ProbingTask


@dataclass(frozen=True)
class Baseline:
    """A text baseline trained as ``sentprobe run`` trains it (selection on dev, else CV)."""

    name: str
    #: the paper's row whose margin on the task is tolerated before a cue counts as a leak
    paper_row: str | None
    #: paper tasks (besides the no-surface-cue ones) where the paper has it at chance
    at_chance: frozenset[str] = frozenset()

    @property
    def check(self) -> str:
        return f"{self.name.lower()}-baseline"


#: Length at chance in the paper also on TreeDepth (the paper decorrelates depth and length).
BASELINES: tuple[Baseline, ...] = (
    Baseline("Length", "Length", frozenset({"TreeDepth"})),
    Baseline("NB-uni-tfidf", "NB-uni-tfidf"),
    Baseline("NB-bi-tfidf", "NB-bi-tfidf"),
    Baseline("NB-char-tfidf", "NB-uni-tfidf"),  # within-word n-grams: no order, like NB-uni
)


def baseline_predictions(task: ProbingTask, seed: int = 0) -> dict[str, np.ndarray]:
    """Test predictions of Majority and each of :data:`BASELINES` on the scored test items
    (those whose label occurs in train)."""
    from sentprobe.analysis.charnb import CharNBTfidfProbe
    from sentprobe.encoders.length import LengthEncoder
    from sentprobe.probes import LogisticProbe, MajorityProbe, NBTfidfProbe

    test = _scored_test(task)
    if test is None:
        return {}
    train = task.splits["train"]
    known = set(train.labels)
    dev_split = task.splits.get("dev")
    dev = None
    if dev_split is not None:
        pairs = [(s, y) for s, y in zip(dev_split.sentences, dev_split.labels) if y in known]
        dev = ([s for s, _ in pairs], [y for _, y in pairs]) if pairs else None
    out = {"Majority": MajorityProbe().fit(train.sentences, train.labels).predict(test[0])}
    enc = LengthEncoder()
    length = LogisticProbe(random_state=seed).fit(
        enc.encode(train.sentences),
        np.asarray(train.labels),
        None if dev is None else enc.encode(dev[0]),
        None if dev is None else np.asarray(dev[1]),
    )
    out["Length"] = length.predict(enc.encode(test[0]))
    cv = min(5, min(Counter(train.labels).values()))
    if dev is None and cv < 2:
        return out
    text_probes: dict[str, Callable[[], NBTfidfProbe | CharNBTfidfProbe]] = {
        "NB-uni-tfidf": lambda: NBTfidfProbe(ngram_range=(1, 1), cv=max(cv, 2)),
        "NB-bi-tfidf": lambda: NBTfidfProbe(ngram_range=(1, 2), cv=max(cv, 2)),
        "NB-char-tfidf": lambda: CharNBTfidfProbe(ngram_range=(1, 4), cv=max(cv, 2)),
    }
    for name, make in text_probes.items():
        nb = make().fit(train.sentences, train.labels, *(dev or (None, None)))
        out[name] = nb.predict(test[0])
    return out


def baseline_scores(task: ProbingTask, seed: int = 0) -> dict[str, float]:
    """Test accuracy of Majority, Length, NB-uni/bi-tfidf and NB-char-tfidf."""
    test = _scored_test(task)
    if test is None:
        return {}
    gold = np.asarray(test[1])
    return {k: float(np.mean(v == gold)) for k, v in baseline_predictions(task, seed).items()}


def check_baselines(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Length, NB-uni-tfidf, NB-bi-tfidf and NB-char-tfidf as leakage alarms, scored against
    majority like the rules. A leak where the task must carry no surface cue (and Length on
    TreeDepth, at chance in the paper) once the gain exceeds the paper's own margin for that
    baseline (NB-bi-tfidf is 13.8 points above chance on the paper's BShift: bigrams see the
    swap); elsewhere info next to the paper's margins. Skipped with ``baselines=False``."""
    if not options.baselines:
        return []
    test = _scored_test(task)
    if test is None:
        return []
    predictions = baseline_predictions(task, options.thresholds.seed)
    majority = str(predictions.pop("Majority")[0])
    margins = paper_margins(task)
    out = []
    for baseline in BASELINES:
        if baseline.name not in predictions:
            continue
        predicted = [str(p) for p in predictions[baseline.name]]
        score = score_against_majority(predicted, majority, test[1])
        allowed = max(0.0, margins.get(baseline.paper_row or "", 0.0))
        alarm = expects_no_surface_cue(task) or paper_name(task) in baseline.at_chance
        finding = _cue_finding(
            task,
            options,
            baseline.check,
            baseline.name,
            score,
            kind="baseline",
            allowed=allowed,
            alarm=alarm,
            data={"baseline": baseline.name},
        )
        out.append(finding)
    return out
