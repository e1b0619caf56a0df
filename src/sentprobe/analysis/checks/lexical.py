"""The paper's lexical split (Tense, SubjNum, ObjNum): target forms kept in one partition,
exactly with the generator's targets, else by a heuristic against random re-splits."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations

import numpy as np

from sentprobe.analysis.checks.base import (
    CheckOptions,
    _finding,
    _plural,
    _verb,
    paper_name,
)
from sentprobe.analysis.findings import Finding
from sentprobe.datasets.task import SPLITS, ProbingTask

#: Tasks whose paper version keeps each target form in one partition (Conneau et al. 2018).
LEXICAL_SPLIT_TASKS = frozenset({"Tense", "SubjNum", "ObjNum"})


def _forms(sentence: str) -> set[str]:
    return {t.lower() for t in sentence.split() if any(ch.isalpha() for ch in t)}


def _form_labels(forms: Sequence[set[str]], labels: Sequence[str]) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for fs, label in zip(forms, labels):
        for form in fs:
            out[form][label] += 1
    return out


def _perfect(
    train: tuple[Sequence[set[str]], Sequence[str]],
    test: tuple[Sequence[set[str]], Sequence[str]],
    min_total: int,
) -> tuple[list[tuple[str, str, int, int]], float]:
    """The forms in train and test with one and the same label every time (at least
    ``min_total`` times in all), and their matched mass: the sum over those forms of
    min(test count, train count scaled to the test size)."""
    tr, te = _form_labels(*train), _form_labels(*test)
    scale = len(test[1]) / max(1, len(train[1]))
    out, mass = [], 0.0
    for form, c_te in sorted(te.items()):  # sorted: the float sum must not depend on hash order
        c_tr = tr.get(form)
        if not c_tr or len(c_tr) != 1 or len(c_te) != 1:
            continue
        ((l_tr, n_tr),), ((l_te, n_te),) = c_tr.items(), c_te.items()
        if l_tr == l_te and n_tr + n_te >= min_total:
            out.append((form, l_tr, n_tr, n_te))
            mass += min(n_te, n_tr * scale)
    return sorted(out, key=lambda f: (-(f[2] + f[3]), f[0])), mass


def perfect_forms(
    train: tuple[Sequence[str], Sequence[str]],
    test: tuple[Sequence[str], Sequence[str]],
    min_total: int,
) -> list[tuple[str, str, int, int]]:
    """(form, label, train count, test count) of the word forms that occur in train and test
    with one and the same label every time, at least ``min_total`` times in all."""
    forms = ([_forms(s) for s in train[0]], train[1]), ([_forms(s) for s in test[0]], test[1])
    return _perfect(*forms, min_total)[0]


def check_target_forms(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """The lexical split of Tense/SubjNum/ObjNum: a target form (the main verb, the subject or
    object noun) must occur in one partition only, or the probe can memorise forms.

    With the generator's targets (``options.targets``) this is exact: a form in two splits is
    an error. Without them (published files carry no annotation) the split is tested as a
    whole: word forms that occur in train and test always with one label are counted, each
    weighted by min(test count, train count scaled to the test size) (the matched mass). A
    lexical split removes the train targets from test and the test targets from train, so a
    frequent train target that reappears in test as an ordinary word weighs little, while
    forms shared by nature (other verbs in the same tense, agreeing words) weigh as much as in
    any split. The mass is compared with the same mass when the same sentences are split at
    random ``lexical_resplits`` times: at or above ``lexical_ratio`` of it (and not far below
    in standard deviations), the partitions probably share target forms (a warning, never an
    error: it is a heuristic).
    """
    if options.targets:
        return _exact_targets(task, options.targets)
    if paper_name(task) not in LEXICAL_SPLIT_TASKS or not {"train", "test"} <= set(task.splits):
        return []
    th = options.thresholds
    train, test = task.splits["train"], task.splits["test"]
    forms = [_forms(s) for s in train.sentences] + [_forms(s) for s in test.sentences]
    labels = list(train.labels) + list(test.labels)
    n = len(train)
    found, mass = _perfect((forms[:n], labels[:n]), (forms[n:], labels[n:]), th.lexical_min_total)
    rng = np.random.default_rng(th.seed)
    masses = []
    for _ in range(th.lexical_resplits):
        order = rng.permutation(len(forms))
        a, b = order[:n], order[n:]
        masses.append(
            _perfect(
                ([forms[i] for i in a], [labels[i] for i in a]),
                ([forms[i] for i in b], [labels[i] for i in b]),
                th.lexical_min_total,
            )[1]
        )
    random_mass = float(np.mean(masses))
    sd = max(float(np.std(masses)), 0.05 * random_mass, 1.0)
    ratio = mass / random_mass if random_mass else 0.0
    z = (mass - random_mass) / sd
    enough = random_mass >= 2 * th.lexical_min_total
    shared = enough and ratio >= th.lexical_ratio and z > -3
    if not enough:
        verdict = "too few shared forms to tell"
    elif shared:
        verdict = (
            "as much as a random split gives: the partitions probably share target forms "
            "(lexical split violated)"
        )
    else:
        verdict = "well below a random split: target forms are kept apart"
    return [
        _finding(
            task,
            "lexical-split",
            "warning" if shared else "info",
            f"{_plural(len(found), 'word form')} {_verb(len(found), 'occurs', 'occur')} in "
            f"train and test always with the same label, matched mass {mass:.0f} test "
            f"occurrences vs {random_mass:.0f} when the same sentences are split at random "
            f"(ratio {ratio:.2f}); {verdict} [heuristic: no target annotation]",
            count=len(found),
            examples=[f"{f!r} always {lab!r} ({a} train, {b} test)" for f, lab, a, b in found[:5]],
            data={
                "mass": mass,
                "random_mass": random_mass,
                "ratio": ratio,
                "z": z,
                "heuristic": True,
            },
        )
    ]


def _exact_targets(task: ProbingTask, targets: dict[str, Sequence[str | None]]) -> list[Finding]:
    forms = {s: {t for t in ts if t} for s, ts in targets.items()}
    out = []
    for a, b in combinations([s for s in SPLITS if s in forms], 2):
        shared = sorted(forms[a] & forms[b])
        if shared:
            n = sum(1 for t in targets[b] if t in set(shared))
            out.append(
                _finding(
                    task,
                    "lexical-split",
                    "error",
                    f"{_plural(len(shared), 'target form')} "
                    f"{_verb(len(shared), 'occurs', 'occur')} in both {a} and {b} "
                    f"({n} {b} sentences); each form must stay in one partition",
                    count=len(shared),
                    examples=[repr(t) for t in shared[:5]],
                    data={"splits": [a, b], "heuristic": False},
                )
            )
    if not out:
        sizes = ", ".join(f"{len(v)} {s}" for s, v in forms.items())
        out.append(
            _finding(
                task,
                "lexical-split",
                "info",
                f"target forms are disjoint across splits ({sizes})",
                data={"forms": {s: len(v) for s, v in forms.items()}, "heuristic": False},
            )
        )
    return out
