"""Whether a task's labels and splits can carry a headline number: a tense label on a verb
that is not finite indicative, dev and test disagreeing for a text baseline, and a test split
too small to tell two rows apart.

- :func:`check_tense_labels` re-annotates the dev and test sentences of a Tense task in a
  language other than English with the language's default annotator (only when
  ``CheckOptions.annotate``: it loads a parser) and labels them with the generators' UD rule
  (:func:`sentprobe.generation.semantic.tense_problem`): a label on a sentence the rule
  refuses (an imperative, subjunctive, conditional, infinitive or participle, a subjectless
  clause where the language needs a subject, a form without its tense's shape) is a warning.
  English is not re-annotated: its labels come from PTB tags VBD/VBZ/VBP, indicative forms.
- :func:`check_dev_test` trains Length and NB-uni-tfidf on train (model selection by
  cross-validation on train, so dev and test are both unseen) and compares their dev and
  test accuracy: a difference beyond what the two accuracies' sampling error allows
  (two-sided test of two proportions, p < ``cue_p_value``) means dev and test were not drawn
  alike (SubjNum's dev made of one subject form, Tense's dev longer than its test).
- :func:`check_test_power`: two rows ``POWER_POINTS`` apart are told apart on ``n`` test
  items (95% interval of the difference of two accuracies near 50%: ±1.96·sqrt(0.5/n)) only
  from ``min_test_items()`` items (193); below that the test split cannot carry a
  comparison of rows and the task is flagged.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from sentprobe.analysis.checks.base import CheckOptions, _finding, paper_name
from sentprobe.analysis.checks.baselines import BASELINES, Baseline
from sentprobe.analysis.checks.cues import _scored_test
from sentprobe.analysis.findings import Finding
from sentprobe.datasets.task import ProbingTask
from sentprobe.generation.autosize import POWER_POINTS, POWER_Z, min_test_items

#: The baselines whose dev and test scores are compared (the cheapest, and the ones a lexical
#: or length confound between dev and test moves).
DEV_TEST_BASELINES = ("Length", "NB-uni-tfidf")
#: Sentences of each evaluation split a tense check re-annotates at most.
TENSE_CHECK_LIMIT = 1000


def check_test_power(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Warning when the scored test split is too small to separate two rows by
    ``POWER_POINTS`` points."""
    test = _scored_test(task)
    if test is None:
        return []
    n, need = len(test[1]), min_test_items()
    if task.folds:  # cross-validation: every fold's test split is scored, once each
        n = sum(len(fold["test"]) for fold in task.folds)
    half = 100 * POWER_Z * math.sqrt(0.5 / n)
    data = {"n": n, "min_items": need, "half_width_points": round(half, 1)}
    if n >= need:
        return [
            _finding(
                task,
                "test-power",
                "info",
                f"{n} test items: two rows {POWER_POINTS:.0f} points apart are told apart "
                f"(95% interval of a difference: ±{half:.1f} points)",
                data=data,
            )
        ]
    return [
        _finding(
            task,
            "test-power",
            "warning",
            f"only {n} test items: the 95% interval of the difference of two rows' "
            f"accuracies is ±{half:.1f} points, so rows {POWER_POINTS:.0f} points apart cannot "
            f"be told apart (needs {need} items); do not compare rows on this task",
            count=n,
            data=data,
        )
    ]


def _dev_test_accuracy(task: ProbingTask, baseline: Baseline, seed: int) -> tuple | None:
    """(dev accuracy, dev n, test accuracy, test n) of ``baseline`` trained on train alone."""
    import sentprobe.probes  # noqa: F401  (registers the probes)
    from sentprobe import registry

    train = task.splits["train"]
    known = set(train.labels)
    held: dict[str, tuple[list[str], list[str]]] = {}
    for name in ("dev", "test"):
        split = task.splits[name]
        pairs = [(s, y) for s, y in zip(split.sentences, split.labels) if y in known]
        if not pairs:
            return None
        held[name] = ([s for s, _ in pairs], [y for _, y in pairs])
    cv = min(5, min(Counter(train.labels).values()))
    if cv < 2:
        return None
    made = baseline.make()
    if baseline.kind == "encoder":
        probe = registry.probes.get(baseline.probe or "logreg")(paper_name(task), seed=seed)
        probe.fit(made.encode(train.sentences), np.asarray(train.labels), None, None)

        def predict(sentences: list[str]) -> np.ndarray:
            return probe.predict(made.encode(sentences))
    else:
        if "cv" in made.get_params():
            made.set_params(cv=cv)
        made.fit(train.sentences, train.labels, None, None)
        predict = made.predict
    out = []
    for name in ("dev", "test"):
        sentences, gold = held[name]
        out += [float(np.mean(np.asarray(predict(sentences)) == np.asarray(gold))), len(gold)]
    return tuple(out)


def _two_proportions(a: float, n_a: int, b: float, n_b: int) -> float:
    """Two-sided p-value that two accuracies on independent samples differ (pooled z-test)."""
    from scipy.stats import norm

    pooled = (a * n_a + b * n_b) / (n_a + n_b)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b))
    if se == 0:
        return 1.0 if a == b else 0.0
    return float(2 * norm.sf(abs(a - b) / se))


def check_dev_test(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Warning when Length or NB-uni-tfidf (trained on train only) scores differently on dev
    and on test beyond sampling error (p < ``cue_p_value``). Skipped with
    ``baselines=False``."""
    if not options.baselines or not {"train", "dev", "test"} <= set(task.splits):
        return []
    if len(set(task.splits["train"].labels)) < 2:
        return []
    out = []
    for baseline in BASELINES:
        if baseline.name not in DEV_TEST_BASELINES:
            continue
        scores = _dev_test_accuracy(task, baseline, options.thresholds.seed)
        if scores is None:
            continue
        dev, n_dev, test, n_test = scores
        p = _two_proportions(dev, n_dev, test, n_test)
        apart = p < options.thresholds.cue_p_value
        text = (
            f"{baseline.name} trained on train: {100 * dev:.1f}% on dev ({n_dev}), "
            f"{100 * test:.1f}% on test ({n_test}), {100 * (dev - test):+.1f} points "
            f"(p={p:.2g})"
        )
        if apart:
            text += "; dev and test were not drawn alike: a score selected on dev misleads"
        out.append(
            _finding(
                task,
                "dev-test",
                "warning" if apart else "info",
                text,
                data={
                    "baseline": baseline.name,
                    "dev": dev,
                    "test": test,
                    "n_dev": n_dev,
                    "n_test": n_test,
                    "p_value": p,
                },
            )
        )
    return out


def check_tense_labels(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Warning when a Tense label sits on a sentence whose main-clause verb, as the
    language's default annotator sees it, is not finite indicative (or fails the other
    checks of the generators' UD rule); only with ``CheckOptions.annotate``."""
    lang = task.metadata.language
    if paper_name(task) != "Tense" or lang in ("en", "und", "") or not options.annotate:
        return []
    from sentprobe.annotation.backends.base import AnnotatorError, default_annotator
    from sentprobe.generation.semantic import Tense, tense_problem

    try:
        annotator = default_annotator(lang)
    except (AnnotatorError, ImportError) as e:
        return [_finding(task, "tense-labels", "info", f"tense labels not re-checked: {e}")]
    rule = Tense(annotation="ud")
    sentences = [
        (split, s, y)
        for split in ("dev", "test")
        if split in task.splits
        for s, y in list(zip(task.splits[split].sentences, task.splits[split].labels))[
            :TENSE_CHECK_LIMIT
        ]
    ]
    parsed = annotator.annotate([s.split() for _, s, _ in sentences], pretokenized=True)
    reasons: Counter = Counter()
    examples: list[str] = []
    for (split, text, label), sent in zip(sentences, parsed):
        sent.lang = lang
        i = rule.tense_word(sent)
        problem = "no finite verb in the main clause" if i is None else tense_problem(sent, i)
        if problem is None:
            continue
        reasons[problem] += 1
        if len(examples) < 5:
            word = "" if i is None else f" [{sent.tokens[i]}]"
            examples.append(f"{split}: {label}{word}: {text}")
    n, bad = len(sentences), sum(reasons.values())
    data = {"checked": n, "flagged": bad, "reasons": dict(reasons.most_common())}
    if bad / max(n, 1) < options.thresholds.error_fraction or bad < 2:
        return [
            _finding(
                task,
                "tense-labels",
                "info",
                f"{n - bad} of {n} dev/test tense labels sit on a finite indicative verb "
                f"({annotator.version().get('annotator')})",
                data=data,
            )
        ]
    why = "; ".join(f"{r}: {k}" for r, k in reasons.most_common(3))
    return [
        _finding(
            task,
            "tense-labels",
            "warning",
            f"{bad} of {n} dev/test tense labels sit on a verb the rule refuses ({why}): "
            "imperatives, subjunctives and non-finite forms carry no tense label",
            count=bad,
            examples=examples,
            data=data,
        )
    ]


#: The checks of this module, in report order.
RELIABILITY_CHECKS = (check_tense_labels, check_dev_test, check_test_power)
