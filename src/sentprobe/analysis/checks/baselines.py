"""The text baselines as leakage alarms: Length, NB-uni-tfidf, NB-bi-tfidf and NB on
character n-grams, trained as ``sentprobe run`` trains them and scored like the rules.

The paper's baselines (labels, factories, Length's probe) come from the one baseline registry,
``sentprobe.registry.baselines`` (built-ins in :mod:`sentprobe.evaluation.baselines`), so the
audit trains the very rows a results table shows. NB-char-tfidf is the audit's own: not one of
the paper's rows, it stays out of the registry (and so out of ``--baselines``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from sentprobe import registry
from sentprobe.analysis.checks.base import (
    BIGRAM_LABEL_FORMATS,
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
from sentprobe.evaluation import baselines as _builtins  # noqa: F401  (registers them)


@dataclass(frozen=True)
class Baseline:
    """A text baseline trained as ``sentprobe run`` trains it (selection on dev, else CV).

    ``make()`` returns a text probe (``kind`` "text") or an encoder whose vectors go to the
    registered probe ``probe`` (``kind`` "encoder"), as :class:`sentprobe.registry.Baseline`.
    """

    name: str
    make: Callable[[], Any]
    kind: Literal["text", "encoder"]
    #: the paper's row whose margin on the task is tolerated before a cue counts as a leak
    paper_row: str | None
    #: paper tasks (besides the no-surface-cue ones) where the paper has it at chance
    at_chance: frozenset[str] = frozenset()
    probe: str | None = None
    #: not a ``sentprobe run`` row: trained by the audit only
    audit_only: bool = False

    @property
    def check(self) -> str:
        return f"{self.name.lower()}-baseline"

    @property
    def short(self) -> str:
        """Column title in QUALITY.md."""
        return self.name.removesuffix("-tfidf")

    @classmethod
    def registered(cls, name: str, at_chance: frozenset[str] = frozenset()) -> Baseline:
        """The registry's baseline ``name``, compared with its own row of the paper."""
        b = registry.baselines.get(name)
        return cls(b.label, b.make, b.kind, b.label, at_chance, probe=b.probe)


def _char_nb() -> Any:
    from sentprobe.analysis.charnb import CharNBTfidfProbe

    return CharNBTfidfProbe(ngram_range=(1, 4))


#: The label of the registry's Majority row, the reference of every gain.
MAJORITY = registry.baselines.get("majority").label
#: The paper's baselines that need no model, then the audit's own NB on character n-grams.
#: Length is at chance in the paper also on TreeDepth (the paper decorrelates depth and length);
#: NB-char (within-word n-grams: no order) is held to NB-uni-tfidf's margin.
BASELINES: tuple[Baseline, ...] = (
    Baseline.registered("length", frozenset({"TreeDepth"})),
    Baseline.registered("nb-uni"),
    Baseline.registered("nb-bi"),
    Baseline("NB-char-tfidf", _char_nb, "text", "NB-uni-tfidf", audit_only=True),
)


def baseline_predictions(task: ProbingTask, seed: int = 0) -> dict[str, np.ndarray]:
    """Test predictions of Majority and each of :data:`BASELINES` on the scored test items
    (those whose label occurs in train)."""
    import sentprobe.probes  # noqa: F401  (registers the probes)

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
    majority = registry.baselines.get("majority").make()
    out = {MAJORITY: majority.fit(train.sentences, train.labels).predict(test[0])}
    # CV folds when there is no dev split: at most 5, at least 2 examples of each class
    cv = min(5, min(Counter(train.labels).values()))
    for baseline in BASELINES:
        made = baseline.make()
        if baseline.kind == "encoder":
            probe = registry.probes.get(baseline.probe or "logreg")(paper_name(task), seed=seed)
            probe.fit(
                made.encode(train.sentences),
                np.asarray(train.labels),
                None if dev is None else made.encode(dev[0]),
                None if dev is None else np.asarray(dev[1]),
            )
            out[baseline.name] = probe.predict(made.encode(test[0]))
            continue
        if "cv" in made.get_params():
            if dev is None and cv < 2:
                continue
            made.set_params(cv=max(cv, 2))
        made.fit(train.sentences, train.labels, *(dev or (None, None)))
        out[baseline.name] = made.predict(test[0])
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
    majority = str(predictions.pop(MAJORITY)[0])
    margins = paper_margins(task)
    out = []
    for baseline in BASELINES:
        if baseline.name not in predictions:
            continue
        predicted = [str(p) for p in predictions[baseline.name]]
        score = score_against_majority(predicted, majority, test[1])
        allowed = max(0.0, margins.get(baseline.paper_row or "", 0.0))
        alarm = expects_no_surface_cue(task) or paper_name(task) in baseline.at_chance
        if baseline.paper_row == "NB-bi-tfidf" and task.metadata.format in BIGRAM_LABEL_FORMATS:
            alarm = False
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
