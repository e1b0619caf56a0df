"""How many target forms carry each class of a lexical split (Tense, SubjNum, ObjNum).

A class whose items share a handful of target forms measures those forms: one subject noun
filling a dev class lets a probe fail or pass on what it knows of that noun, and the items of
one form are not independent draws. With the target forms known (a generator's output, or the
``.forms`` sidecar a suite writes beside each task file, which the loaders read into
``Split.clusters``),
each class of each split is held to the generator's own rules
(:class:`sentprobe.generation.lexical.FormRules`): no form above ``max_share`` of the class,
at least ``min_distinct`` forms.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from sentprobe.analysis.checks.base import CheckOptions, _finding, _splits, task_labels
from sentprobe.analysis.findings import Finding
from sentprobe.datasets.task import ProbingTask
from sentprobe.generation.lexical import FormRules

#: The rules a class is held to: the generators' defaults.
FORM_RULES = FormRules()

__all__ = ["FORM_RULES", "check_form_spread", "form_spread"]


def form_spread(task: ProbingTask, targets: Mapping[str, Sequence[str | None]]) -> list[dict]:
    """Per split and class (items with a known form only): items, distinct forms, the most
    frequent form and its count."""
    out = []
    for split, data in _splits(task):
        column = targets.get(split)
        if column is None or len(column) != len(data):
            continue
        for label in task_labels(task):
            forms = Counter(f for f, y in zip(column, data.labels) if y == label and f)
            if not forms:
                continue
            top, count = min(forms.items(), key=lambda kv: (-kv[1], kv[0]))
            n = sum(forms.values())
            out.append(
                {
                    "split": split,
                    "label": label,
                    "items": n,
                    "forms": len(forms),
                    "top": top,
                    "top_count": count,
                    "top_share": count / n,
                }
            )
    return out


def check_form_spread(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """A class of a split whose most frequent target form exceeds the cap, or whose distinct
    forms fall under the minimum: a warning; the figures of every class otherwise (info)."""
    if not options.targets:
        return []
    rows = form_spread(task, options.targets)
    if not rows:
        return []
    bad = []
    for r in rows:
        problems = []
        if r["top_count"] > FORM_RULES.cap(r["items"]):
            problems.append(
                f"{r['top']!r} is {r['top_count']} of {r['items']} ({r['top_share']:.0%}; "
                f"at most {FORM_RULES.cap(r['items'])})"
            )
        if r["forms"] < FORM_RULES.min_distinct(r["items"]):
            problems.append(
                f"{r['forms']} distinct forms (at least {FORM_RULES.min_distinct(r['items'])})"
            )
        if problems:
            bad.append(f"{r['split']} {r['label']}: {', '.join(problems)}")
    figures = "; ".join(
        f"{r['split']} {r['label']} {r['forms']} forms, top {r['top_share']:.1%}" for r in rows
    )
    data = {"classes": rows, "max_share": FORM_RULES.max_share}
    if bad:
        return [
            _finding(
                task,
                "lexical-forms",
                "warning",
                f"{len(bad)} class(es) rest on too few target forms ({FORM_RULES.describe()}): "
                f"a probe is scored on what it knows of those words",
                count=len(bad),
                examples=bad,
                data=data,
            )
        ]
    return [
        _finding(
            task,
            "lexical-forms",
            "info",
            f"every class rests on enough target forms ({FORM_RULES.describe()}): {figures}",
            data=data,
        )
    ]
