"""The shipped function-word sample ``sample-kim-en`` (scripts/build_kim_sample.py): registered,
read by the DNC loader like the release, balanced in every fold, and clean under the audit."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from scipy.stats import binomtest

from sentprobe.analysis.audit import audit_suite
from sentprobe.analysis.checks.ngrams import best_ngram_rule, ngrams
from sentprobe.analysis.checks.surface import RULES, rule_predictions
from sentprobe.analysis.checks.tokens import best_token_rule
from sentprobe.datasets import resolve_tasks
from sentprobe.datasets.builtin import DNC_SAMPLE_DIRS
from sentprobe.datasets.task import Split
from sentprobe.generation.function_words.wordnet import default_wordnet

SAMPLE = DNC_SAMPLE_DIRS[0]


def test_sample_kim_en_loads_with_ten_balanced_folds():
    tasks = resolve_tasks("sample-kim-en")
    assert [t.name for t in tasks] == [
        f"sample-kim-en/{n}" for n in ("wh-words", "Def-collocations", "Coord-collocations", "EOS")
    ]
    manifest = json.loads((SAMPLE / "manifest.json").read_text())
    for task, counts in zip(tasks, (s["counts"] for s in manifest["sets"].values())):
        assert task.folds is not None and len(task.folds) == 10
        for fold in task.folds:
            test = Counter(fold["test"].labels)
            assert abs(test["acceptable"] - test["unacceptable"]) <= 1
        n = sum(len(fold["test"]) for fold in task.folds)
        assert n == counts["acceptable"] + counts["unacceptable"] >= 90
    eos = tasks[-1]
    assert eos.metadata.format == "acceptability-pair" and eos.splits["test"].sentences2


def test_sample_kim_en_records_every_mutation():
    meta = json.loads((SAMPLE / "ACCEPTABILITY/acceptability-whwords_metadata.json").read_text())
    data = json.loads((SAMPLE / "ACCEPTABILITY/acceptability-whwords_data.json").read_text())
    by_id = {m["pair-id"]: m for m in meta}
    for item in data:
        misc = by_id[item["pair-id"]]["misc"]
        assert ("mutation" in misc) == (item["label"] == "unacceptable")


def test_sample_kim_en_passes_the_audit():
    report = audit_suite("sample-kim-en", baselines=False)
    problems = [f for f in report.findings if f.severity != "info"]
    # the one set that is not cross-validated (Def-collocations, 40 test items) is too small
    # to tell rows 10 points apart: the test-power warning says so, and nothing else warns
    small = [f for f in problems if f.check == "test-power"]
    assert [f.task for f in small] == ["sample-kim-en/Def-collocations"]
    problems = [f for f in problems if f not in small]
    assert not problems, [f"{f.task}: {f.check}: {f.message}" for f in problems]
    text = (SAMPLE / "QUALITY.md").read_text()
    section = text.split("## Warnings and errors", 1)[1].split("\n## ", 1)[0]
    listed = [line for line in section.splitlines() if line.startswith("- **")]
    assert len(listed) == 1 and "Def-collocations: test-power" in listed[0], listed


def _token_rule(train: Split, texts: list[str]) -> list[str]:
    token, yes, no = best_token_rule(train.sentences, train.labels) or ("", "", "")
    return [yes if token in set(t.lower().split()) else no for t in texts]


def _ngram_rule(train: Split, texts: list[str]) -> list[str]:
    gram, yes, no = best_ngram_rule(train.sentences, train.labels) or ("", "", "")
    return [yes if gram in ngrams(t) else no for t in texts]


def _position_rule(check: str):
    (rule,) = [r for r in RULES if r.check == check]
    return lambda train, texts: rule_predictions(rule.feature, train, texts)


SURFACE = {r.check: _position_rule(r.check) for r in RULES}
SURFACE.update({"contains-token": _token_rule, "lexical-ngram": _ngram_rule})


CASES = [
    (task, check)
    for task in resolve_tasks("sample-kim-en")
    for check in ("contains-token", "first-token", "last-token", "punct-count", "lexical-ngram")
    if check != "lexical-ngram" or "collocations" not in task.name
]


@pytest.mark.parametrize(("task", "check"), CASES, ids=lambda x: getattr(x, "name", x))
def test_no_surface_rule_predicts_the_label_over_all_ten_folds(task, check):
    """Each rule fitted on a fold's train part and scored on its test part, pooled over the
    ten folds, so every item is scored once (not a 50-item half, where 17 points are not
    significant): the rule must not beat chance at p < 0.01. One n-gram may read the
    collocation sets (what their names say they test), not wh-words or EOS."""
    hits = n = 0
    for fold in task.folds or []:
        train, test = fold["train"], fold["test"]
        texts = [f"{a} ||| {b}" for a, b in zip(test.sentences, test.sentences2)] if (
            test.sentences2) else test.sentences  # fmt: skip
        if test.sentences2:
            train = Split([f"{a} ||| {b}" for a, b in zip(train.sentences, train.sentences2)],
                          train.labels)  # fmt: skip
        predicted = SURFACE[check](train, texts)
        hits += sum(p == y for p, y in zip(predicted, test.labels))
        n += len(test.labels)
    p = binomtest(hits, n, 0.5, alternative="greater").pvalue
    assert p >= 0.01, f"{task.name}: {check} rule {100 * hits / n:.1f}% on {n} items (p={p:.2g})"


@pytest.mark.parametrize(
    "check",
    [
        "segment-length",
        "article-sound",
        pytest.param(  # the audit reads plurals from WordNet: no article-plural rule without
            "article-plural",
            marks=pytest.mark.skipif(
                not (default_wordnet() / "data.noun").is_file(), reason="WordNet not installed"
            ),
        ),
    ],
)
def test_side_cue_rules_stay_within_3_points_of_majority(check):
    """Whatever the task's metadata says about surface cues and whatever the p-value: the
    agreement and segment-length rules gain at most 3 points on every set."""
    report = audit_suite(SAMPLE, baselines=False)
    found = [f for f in report.findings if f.check == check]
    assert found
    for f in found:
        assert f.data["gain_points"] <= 3, f.message


def test_collocation_sets_swap_only_inside_frames_and_say_so():
    names = ("acceptability-definiteness-collocations", "acceptability-coordination-collocations")
    for name in names:
        meta = json.loads((SAMPLE / f"ACCEPTABILITY/{name}_metadata.json").read_text())
        mutated = [m["misc"]["mutation"] for m in meta if "mutation" in m["misc"]]
        assert mutated and all(m.get("frame") for m in mutated)
    quality = (SAMPLE / "QUALITY.md").read_text()
    assert "not definiteness or coordination" in quality
    assert "Def-collocations: 90 of 90 items" in quality
