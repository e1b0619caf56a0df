"""Data checks shared by ``sentprobe audit`` (published suites) and the quality report of
generated suites: one set of functions, each ``(task, options) -> list[Finding]``.

They look for what makes probing scores wrong or misleading without any encoder: the same
sentence in several splits or with several labels, unbalanced or one-class splits, target forms
shared between partitions (the paper's lexical split), an original sentence in one split and
its altered form in another, and surface cues that predict the label: single-position rules
(identity and class of the first and of the last token, the last character, the number of
punctuation tokens, casing of the first word) and the text baselines (Length, NB-uni-tfidf,
NB-bi-tfidf, NB on character n-grams). Every cue is fitted on train and scored on test against
the majority label with an exact one-sided binomial test; it is a defect only where the task must
carry no surface cue (:func:`expects_no_surface_cue`), elsewhere it is reported next to the
paper's own baseline margins. The numbers behind each finding are in ``Finding.data`` so
reports can tabulate them.

One module per family of checks: :mod:`.splits` (sizes, identical and overlapping splits,
several labels per sentence), :mod:`.balance` (classes and lengths), :mod:`.lexical` (the
lexical split), :mod:`.forms` (how many target forms carry each class of a lexical split),
:mod:`.twins` (original/altered forms across splits), :mod:`.surface` (the
single-position rules), :mod:`.tokens` (the best "contains token X" rule), :mod:`.ngrams`
(the best "contains n-gram X" rule on function-word sets),
:mod:`.agreement_cues` (article/noun agreement, segment lengths of two-sentence items),
:mod:`.baselines`
(the text baselines), :mod:`.reliability` (tense labels on non-indicative verbs, dev and test
drawn unalike, a test split too small to compare rows); :mod:`.cues` scores a cue,
:mod:`.views` shows cross-validated and sentence-pair tasks to the checks, and :mod:`.base`
holds the thresholds, options and what the paper says about a task.
"""

from __future__ import annotations

from sentprobe.analysis.checks.agreement_cues import AGREEMENT_CHECKS
from sentprobe.analysis.checks.balance import (
    check_balance,
    check_length,
    check_missing_classes,
    class_counts,
    length_stats,
)
from sentprobe.analysis.checks.base import (
    Check,
    CheckOptions,
    Thresholds,
    expects_no_surface_cue,
    paper_baselines,
    paper_margins,
    paper_name,
    task_labels,
)
from sentprobe.analysis.checks.baselines import (
    BASELINES,
    MAJORITY,
    Baseline,
    baseline_predictions,
    baseline_scores,
    check_baselines,
)
from sentprobe.analysis.checks.cues import CueScore, score_against_majority
from sentprobe.analysis.checks.forms import check_form_spread
from sentprobe.analysis.checks.lexical import LEXICAL_SPLIT_TASKS, check_target_forms, perfect_forms
from sentprobe.analysis.checks.ngrams import check_class_vocabulary, check_lexical_ngram
from sentprobe.analysis.checks.reliability import (
    RELIABILITY_CHECKS,
    check_dev_test,
    check_tense_labels,
    check_test_power,
)
from sentprobe.analysis.checks.splits import (
    check_identical_splits,
    check_labels_per_sentence,
    check_sizes,
    check_split_overlap,
)
from sentprobe.analysis.checks.surface import (
    CASING_RULE,
    PUNCT_CAP,
    RULES,
    SEGMENT_RULES,
    Rule,
    _rule_check,
    check_casing_cue,
    first_token,
    is_punct,
    last_token,
    lower_initial,
    rule_predictions,
    token_class,
)
from sentprobe.analysis.checks.tokens import best_token_rule, check_contains_token
from sentprobe.analysis.checks.twins import TWINS, check_twins
from sentprobe.analysis.checks.views import audit_view
from sentprobe.analysis.findings import Finding
from sentprobe.datasets.task import ProbingTask

#: Every check, in report order.
CHECKS: tuple[Check, ...] = (
    check_sizes,
    check_identical_splits,
    check_split_overlap,
    check_labels_per_sentence,
    check_missing_classes,
    check_balance,
    check_target_forms,
    check_form_spread,
    check_twins,
    *(_rule_check(rule) for rule in RULES if rule is not CASING_RULE),
    *(_rule_check(rule, pairs_only=True) for rule in SEGMENT_RULES),
    check_casing_cue,
    check_contains_token,
    check_lexical_ngram,
    check_class_vocabulary,
    *AGREEMENT_CHECKS,
    check_length,
    check_baselines,
    *RELIABILITY_CHECKS,
)


def run_checks(task: ProbingTask, options: CheckOptions | None = None) -> list[Finding]:
    """All checks on one task (a cross-validated or pair task as :func:`audit_view` shows it)."""
    options = options or CheckOptions()
    task = audit_view(task)
    return [f for check in CHECKS for f in check(task, options)]


__all__ = [
    "BASELINES",
    "Baseline",
    "CASING_RULE",
    "CHECKS",
    "Check",
    "CheckOptions",
    "CueScore",
    "LEXICAL_SPLIT_TASKS",
    "MAJORITY",
    "PUNCT_CAP",
    "RULES",
    "Rule",
    "TWINS",
    "Thresholds",
    "baseline_predictions",
    "baseline_scores",
    "check_balance",
    "check_baselines",
    "check_casing_cue",
    "check_form_spread",
    "check_identical_splits",
    "check_labels_per_sentence",
    "check_length",
    "check_missing_classes",
    "check_sizes",
    "check_split_overlap",
    "check_target_forms",
    "check_twins",
    "audit_view",
    "best_token_rule",
    "check_contains_token",
    "check_dev_test",
    "check_tense_labels",
    "check_test_power",
    "class_counts",
    "expects_no_surface_cue",
    "first_token",
    "is_punct",
    "last_token",
    "length_stats",
    "lower_initial",
    "paper_baselines",
    "paper_margins",
    "paper_name",
    "perfect_forms",
    "rule_predictions",
    "run_checks",
    "score_against_majority",
    "task_labels",
    "token_class",
]
