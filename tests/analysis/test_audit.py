"""`audit` finds each planted defect with its severity; a clean suite passes; the CLI gates."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import (
    Maker,
    bshift_rows,
    coordinv_rows,
    senteval_lines,
    tense_rows,
    write_senteval_suite,
    write_xprobe_task,
)
from sentprobe.analysis import audit_suite
from sentprobe.cli.main import main

#: The fixtures' test splits hold 80 items, fewer than the 193 the test-power check asks for,
#: to keep them fast: that warning is expected on every one of them (and tested on its own in
#: tests/analysis/test_reliability_checks.py).
SMALL_TEST = "test-power"


def problems(report, task=None):
    """{check: severity} of the warnings and errors (of one task if given), but the small
    fixtures' test-power warning."""
    return {
        f.check: f.severity
        for f in report.findings
        if f.severity != "info" and (task is None or f.task == task) and f.check != SMALL_TEST
    }


def run_cli(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["sentprobe", *args])
    try:
        main()
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    return code, capsys.readouterr().out


def test_clean_suite_passes(clean_suite):
    report = audit_suite(clean_suite)
    assert report.tasks == ["BShift", "Tense", "CoordInv"]
    assert problems(report) == {}
    assert {f.check for f in report.findings if f.severity != "info"} == {SMALL_TEST}
    checks = {f.check for f in report.findings}
    assert {"sizes", "balance", "length", "length-baseline", "nb-uni-tfidf-baseline"} <= checks
    assert {"nb-bi-tfidf-baseline", "nb-char-tfidf-baseline", "first-token", "last-char"} <= checks
    assert "lexical-split" in checks  # run on Tense, info only


def test_identical_dev_and_test_files_are_an_error(tmp_path, maker):
    rows = bshift_rows(maker)
    rows["dev"] = rows["test"]
    write_xprobe_task(tmp_path / "xp" / "en" / "tree_depth", rows)
    report = audit_suite(tmp_path / "xp", baselines=False)
    assert report.tasks == ["en/TreeDepth"]
    (finding,) = [f for f in report.findings if f.check == "identical-splits"]
    assert finding.severity == "error"
    assert "va.txt and te.txt are byte-identical" in finding.message
    assert "split-overlap" not in problems(report)  # one finding, not two


def test_sentence_with_two_labels_within_and_across_splits(tmp_path, maker):
    rows = bshift_rows(maker)
    rows["train"].append((rows["train"][0][0], "I"))  # an "O" sentence labelled "I" again
    rows["test"].append((rows["train"][1][0], "I"))  # a train "O" sentence in test as "I"
    write_senteval_suite(tmp_path / "s", bigram_shift=rows)
    report = audit_suite(tmp_path / "s", baselines=False)
    multi = {f.data["kind"]: f for f in report.findings if f.check == "multi-label"}
    assert multi["within a split"].severity == "warning"
    assert multi["within a split"].count == 1
    assert multi["across splits"].count == 1
    overlap = [f for f in report.findings if f.check == "split-overlap"]
    assert [f.data["splits"] for f in overlap] == [["train", "test"]]
    assert overlap[0].count == 1
    assert overlap[0].severity == "error"  # 1 of 81 test sentences: above the 1% threshold


def test_many_ambiguous_sentences_are_an_error(tmp_path, maker):
    rows = bshift_rows(maker)
    rows["train"] += [(s, "I") for s, y in rows["train"][:10] if y == "O"]
    write_senteval_suite(tmp_path / "s", bigram_shift=rows)
    report = audit_suite(tmp_path / "s", baselines=False)
    assert problems(report)["multi-label"] == "error"


def test_one_class_test_split_is_an_error(tmp_path, maker):
    rows = tense_rows(maker)
    rows["test"] = [(s, y) for s, y in rows["test"] if y == "PAST"]
    write_xprobe_task(tmp_path / "tr" / "past_present", rows)
    report = audit_suite(tmp_path / "tr", baselines=False)
    (finding,) = [f for f in report.findings if f.check == "missing-class"]
    assert finding.severity == "error" and finding.task == "tr/Tense"
    assert "single class" in finding.message


def test_imbalance_is_a_warning(tmp_path, maker):
    rows = coordinv_rows(maker)
    rows["train"] = [p for i, p in enumerate(rows["train"]) if p[1] == "O" or i % 3]
    write_senteval_suite(tmp_path / "s", coordination_inversion=rows)
    report = audit_suite(tmp_path / "s", baselines=False)
    (finding,) = [f for f in report.findings if f.check == "imbalance"]
    assert finding.severity == "warning" and finding.data["split"] == "train"
    assert finding.data["ratio"] == pytest.approx(60 / 40)


def test_shared_target_forms_violate_the_lexical_split(tmp_path):
    m = Maker(3)
    write_senteval_suite(tmp_path / "s", past_present=tense_rows(m, shared_verbs=True))
    report = audit_suite(tmp_path / "s", baselines=False)
    (finding,) = [f for f in report.findings if f.check == "lexical-split"]
    assert finding.severity == "warning"
    assert finding.count == 8  # the 4 past + 4 present verbs of the shared pool
    assert finding.data["heuristic"] is True


def test_lowercase_initial_inverted_sentences_are_a_casing_cue(tmp_path, maker):
    write_senteval_suite(tmp_path / "s", bigram_shift=bshift_rows(maker, lowercase_share=0.3))
    report = audit_suite(tmp_path / "s", baselines=False)
    (finding,) = [f for f in report.findings if f.check == "casing-cue"]
    assert finding.severity == "error"
    assert finding.data["lower_share"]["O"] == 0
    assert finding.data["lower_share"]["I"] == pytest.approx(0.3, abs=0.02)


def test_length_leak_is_caught_by_the_length_baseline(tmp_path, maker):
    write_senteval_suite(tmp_path / "s", coordination_inversion=coordinv_rows(maker, longer=3))
    report = audit_suite(tmp_path / "s")
    found = problems(report)
    assert found["length-baseline"] == "error"
    assert set(found) <= {"length-baseline", "nb-char-tfidf-baseline"}  # not a position rule
    (finding,) = [f for f in report.findings if f.check == "length-baseline"]
    assert finding.data["accuracy"] > 0.95 and finding.data["majority"] == 0.5


def test_rejected_lines_become_an_error_and_the_rest_is_audited(tmp_path, maker):
    rows = bshift_rows(maker)
    path = tmp_path / "s" / "bigram_shift.txt"
    write_senteval_suite(tmp_path / "s", bigram_shift=rows)
    with path.open("a", encoding="utf-8") as f:
        f.write("te\tZ\ta label never seen in train\nxx\tO\tan unknown split\n")
    report = audit_suite(tmp_path / "s", baselines=False)
    (load,) = [f for f in report.findings if f.check == "load"]
    assert load.severity == "error" and load.count == 2 and load.task == "BShift"
    assert any("never in train" in ex for ex in load.examples)
    sizes = next(f for f in report.findings if f.check == "sizes")
    assert sizes.data["sizes"]["test"] == 81  # the unseen-label line is kept for the audit


def test_cli_exit_codes_and_json(tmp_path, clean_suite, monkeypatch, capsys):
    code, out = run_cli(monkeypatch, capsys, "audit", str(clean_suite), "--no-baselines")
    assert code == 0 and "0 error(s), 3 warning(s)" in out  # the three small test splits
    assert out.count(f"warning {SMALL_TEST}") == 3

    bad = write_senteval_suite(
        tmp_path / "bad", bigram_shift=bshift_rows(Maker(5), lowercase_share=0.3)
    )
    code, out = run_cli(monkeypatch, capsys, "audit", str(bad), "--no-baselines", "-f", "json")
    assert code == 1
    doc = json.loads(out)
    errors = {f["check"] for f in doc["findings"] if f["severity"] == "error"}
    assert errors == {"casing-cue", "first-token", "first-token-class"}  # one cue, three views
    assert doc["findings"][0]["task"] == "BShift"

    warn = write_senteval_suite(tmp_path / "warn", past_present=tense_rows(Maker(3), True))
    args = ("audit", str(warn), "--no-baselines")
    assert run_cli(monkeypatch, capsys, *args)[0] == 0
    assert run_cli(monkeypatch, capsys, *args, "--fail-on", "warning")[0] == 1


def test_cli_missing_path_is_a_clean_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["sentprobe", "audit", str(tmp_path / "nope")])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert "error:" in err and "nope" in err and "Traceback" not in err


def test_single_senteval_file(tmp_path, maker):
    path = tmp_path / "odd_man_out.txt"
    path.write_text(senteval_lines(bshift_rows(maker)), encoding="utf-8")
    report = audit_suite(Path(path), baselines=False)
    assert report.tasks == ["SOMO"]
