"""How a surface cue is scored and reported, shared by the single-position rules and the text
baselines: accuracy against the train majority on test, an exact one-sided binomial test, and
the severity where the task must carry no surface cue."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sentprobe.analysis.checks.base import (
    CheckOptions,
    _finding,
    expects_no_surface_cue,
    paper_margins,
    paper_name,
)
from sentprobe.analysis.findings import Finding, Severity
from sentprobe.datasets.task import ProbingTask
from sentprobe.evaluation.predictions import p_above_chance


def _majority(labels: Sequence[str]) -> str:
    c = Counter(labels)
    return min(c, key=lambda k: (-c[k], k))  # ties: first in sorted order, as MajorityProbe


@dataclass(frozen=True)
class CueScore:
    """A cue's test accuracy against the train-majority prediction on the same items, and the
    exact one-sided binomial test that its hits exceed what any constant prediction expects
    (``chance``: the largest class share of the test items)."""

    accuracy: float
    majority: float
    chance: float
    n: int
    p: float

    @property
    def gain_points(self) -> float:
        return 100 * (self.accuracy - self.majority)


def score_against_majority(
    predicted: Sequence[str], majority: str, gold: Sequence[str]
) -> CueScore:
    """Accuracy of ``predicted`` vs always ``majority`` on ``gold``. Significance: the number
    of hits against Binomial(n, largest class share), one-sided and exact, so a tiny test
    split cannot make a cue significant by noise (a cue independent of the label cannot beat
    the best constant prediction in expectation)."""
    n = len(gold)
    hits = sum(p == g for p, g in zip(predicted, gold))
    chance = max(Counter(gold).values()) / n if n else 1.0
    p = p_above_chance(hits, n, chance)
    return CueScore(
        accuracy=hits / max(n, 1),
        majority=sum(majority == g for g in gold) / max(n, 1),
        chance=chance,
        n=n,
        p=float(p),
    )


def _scored_test(task: ProbingTask) -> tuple[list[str], list[str]] | None:
    """Test items whose label occurs in train (others cannot be predicted by anything)."""
    if not {"train", "test"} <= set(task.splits):
        return None
    known = set(task.splits["train"].labels)
    test = task.splits["test"]
    pairs = [(s, y) for s, y in zip(test.sentences, test.labels) if y in known]
    if not pairs or len(known) < 2:
        return None
    return [s for s, _ in pairs], [y for _, y in pairs]


def _signed(x: float) -> str:
    return f"{x:+.1f}"


def _cue_finding(
    task: ProbingTask,
    options: CheckOptions,
    check: str,
    cue: str,
    score: CueScore,
    *,
    kind: str,
    allowed: float = 0.0,
    alarm: bool | None = None,
    prefix: str = "",
    data: dict | None = None,
    single_position: bool = False,
) -> Finding:
    """One cue's finding. Where the task must carry no surface cue (``alarm``, by default
    :func:`expects_no_surface_cue`), a significant gain (p < ``cue_p_value``) of
    ``cue_warning_points``/``cue_error_points`` over majority beyond ``allowed`` (the paper's own
    margin for that baseline, if any) is a warning/an error; so is, for a ``single_position``
    rule, a gain of ``rule_warning_points`` at p < ``rule_p_value``; elsewhere the gain is
    info, shown next to the paper's baseline margins."""
    th = options.thresholds
    if alarm is None:
        alarm = expects_no_surface_cue(task)
    gain = score.gain_points
    significant = score.p < th.cue_p_value
    severity: Severity = "info"
    if alarm and significant:
        if gain - allowed >= th.cue_error_points:
            severity = "error"
        elif gain - allowed >= th.cue_warning_points:
            severity = "warning"
    strong = score.p < th.rule_p_value and gain - allowed >= th.rule_warning_points
    if alarm and single_position and strong and severity == "info":
        severity = "warning"  # a single-position cue: small but certain (Thresholds)
    margins = paper_margins(task)
    beats = significant and bool(margins) and gain > max(margins.values())
    text = (
        f"{prefix}{cue} {kind}: {100 * score.accuracy:.1f}% vs majority "
        f"{100 * score.majority:.1f}% on test ({_signed(gain)} points, "
        f"p={score.p:.2g}{'' if significant else ', not significant'})"
    )
    if severity != "info":
        text += f"; {paper_name(task)} must carry no surface cue: the label leaks"
        if allowed > 0:
            text += f" (beyond the paper's own {_signed(allowed)} points)"
    elif margins and not alarm and significant:
        shown = ", ".join(f"{b} {_signed(m)}" for b, m in margins.items())
        text += f"; paper's baselines on {paper_name(task)}: {shown}"
        if beats:
            text += " (beaten)"
    return _finding(
        task,
        check,
        severity,
        text,
        data={
            "cue": cue,
            "kind": kind,
            "accuracy": score.accuracy,
            "majority": score.majority,
            "gain_points": gain,
            "p_value": score.p,
            "significant": significant,
            "n": score.n,
            "alarm": alarm,
            "allowed_points": allowed,
            "paper_margins": margins,
            "beats_paper": beats,
            **(data or {}),
        },
    )
