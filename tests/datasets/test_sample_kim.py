"""The shipped function-word sample ``sample-kim-en`` (scripts/build_kim_sample.py): registered,
read by the DNC loader like the release, balanced in every fold, and clean under the audit."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from sentprobe.analysis.audit import audit_suite
from sentprobe.datasets import resolve_tasks
from sentprobe.datasets.builtin import DNC_SAMPLE_DIRS

SAMPLE = DNC_SAMPLE_DIRS[0]


def test_sample_kim_en_loads_with_ten_balanced_folds():
    tasks = resolve_tasks("sample-kim-en")
    assert [t.name for t in tasks] == [
        f"sample-kim-en/{n}" for n in ("wh-words", "Def", "Coord", "EOS")
    ]
    manifest = json.loads((SAMPLE / "manifest.json").read_text())
    for task, counts in zip(tasks, (s["counts"] for s in manifest["sets"].values())):
        assert task.folds is not None and len(task.folds) == 10
        for fold in task.folds:
            test = Counter(fold["test"].labels)
            assert abs(test["acceptable"] - test["unacceptable"]) <= 1
        n = sum(len(fold["test"]) for fold in task.folds)
        assert n == counts["acceptable"] + counts["unacceptable"] >= 100
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
    assert not problems, [f"{f.task}: {f.check}: {f.message}" for f in problems]
    assert "None: every split is balanced" in (SAMPLE / "QUALITY.md").read_text()


@pytest.mark.parametrize("check", ["contains-token", "first-token", "last-token", "punct-count"])
def test_no_surface_rule_beats_majority_by_3_points(check):
    report = audit_suite(SAMPLE, baselines=False)
    for f in report.findings:
        if f.check == check:
            assert f.data["gain_points"] < 3 or not f.data["significant"], f.message


@pytest.mark.parametrize("check", ["segment-length", "article-sound", "article-plural"])
def test_side_cue_rules_stay_within_3_points_of_majority(check):
    """Whatever the task's metadata says about surface cues and whatever the p-value: the
    agreement and segment-length rules gain at most 3 points on every set."""
    report = audit_suite(SAMPLE, baselines=False)
    found = [f for f in report.findings if f.check == check]
    assert found
    for f in found:
        assert f.data["gain_points"] <= 3, f.message


def test_def_and_coord_swaps_are_in_frames_that_break_them():
    for name in ("acceptability-definiteness", "acceptability-coordinating-conjunctions"):
        meta = json.loads((SAMPLE / f"ACCEPTABILITY/{name}_metadata.json").read_text())
        mutated = [m["misc"]["mutation"] for m in meta if "mutation" in m["misc"]]
        assert mutated and all(m.get("frame") for m in mutated)
