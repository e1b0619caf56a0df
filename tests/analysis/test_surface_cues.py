"""The audit's new checks, each planted in a clean suite and seen, and not seen without it:
single-position rules, NB-bi / char-n-gram NB baselines, original/altered twins, the
no-surface-cue metadata, the tightened imbalance threshold and the lexical-split heuristic."""

from __future__ import annotations

import random

import pytest

from conftest import (
    Maker,
    bshift_rows,
    coordinv_rows,
    tense_rows,
    write_senteval_suite,
)
from sentprobe.analysis import audit_suite, quality_report
from sentprobe.analysis.checks import CheckOptions, run_checks
from sentprobe.datasets.task import ProbingTask, Split, TaskMetadata

Rows = dict[str, list[tuple[str, str]]]


def problems(report) -> dict[str, str]:
    """{check: severity} of the warnings and errors, but test-power: these fixtures' test
    splits are small on purpose (tests/analysis/test_reliability_checks.py tests that check)."""
    return {
        f.check: f.severity
        for f in report.findings
        if f.severity != "info" and f.check != "test-power"
    }


def finding(report, check: str):
    (f,) = [f for f in report.findings if f.check == check]
    return f


def audit_rows(tmp_path, baselines: bool = False, **tasks: Rows):
    return audit_suite(write_senteval_suite(tmp_path / "s", **tasks), baselines=baselines)


def alter(rows: Rows, label: str, change) -> Rows:
    return {s: [(change(x) if y == label else x, y) for x, y in pairs] for s, pairs in rows.items()}


def as_task(name: str, rows: Rows, **meta) -> ProbingTask:
    splits = {s: Split([x for x, _ in p], [y for _, y in p]) for s, p in rows.items()}
    return ProbingTask(TaskMetadata(name=name, paper_name=meta.pop("paper", None), **meta), splits)


# ---------------------------------------------------------------------------- position rules


def test_clean_altered_tasks_carry_no_position_cue(tmp_path, maker):
    report = audit_rows(
        tmp_path, bigram_shift=bshift_rows(maker), coordination_inversion=coordinv_rows(maker)
    )
    assert problems(report) == {}
    rules = {"first-token", "first-token-class", "last-token", "last-token-class", "last-char"}
    for f in report.findings:
        if f.check in rules | {"punct-count"}:
            assert f.severity == "info" and abs(f.data["gain_points"]) < 3


def test_final_punctuation_moved_inside_is_an_error(tmp_path, maker):
    """The sample-en CoordInv defect: inverted sentences end with the first conjunct's word."""
    rows = alter(
        coordinv_rows(maker), "I", lambda x: x.removesuffix(" .").replace(" , and", " . , and")
    )
    report = audit_rows(tmp_path, coordination_inversion=rows)
    found = problems(report)
    assert found["last-token"] == found["last-char"] == found["last-token-class"] == "error"
    assert "first-token" not in found and "punct-count" not in found
    f = finding(report, "last-char")
    assert f.data["gain_points"] == pytest.approx(50.0) and f.data["p_value"] < 1e-10
    assert "CoordInv must carry no surface cue" in f.message


def test_first_token_identity_without_a_class_change(tmp_path, maker):
    rows = alter(bshift_rows(maker), "I", lambda x: "A" + x.removeprefix("The"))
    found = problems(audit_rows(tmp_path, bigram_shift=rows))
    # "A" and "The" are both capitalised words; the planted "A" is also a word-presence cue
    assert found == {"first-token": "error", "contains-token": "error"}


def test_punctuation_count(tmp_path, maker):
    rows = alter(coordinv_rows(maker), "I", lambda x: x.replace(" and ", " and , "))
    found = problems(audit_rows(tmp_path, coordination_inversion=rows))
    assert found == {"punct-count": "error"}


def test_warning_between_3_and_10_points(tmp_path):
    """An eighth of the inverted sentences end in '!': about +6 points over majority."""
    m = Maker(2)
    sizes = {"train": 400, "dev": 50, "test": 400}
    rows = {
        s: [(m.coordinv(False), "O") for _ in range(n)]
        + [(m.coordinv(True)[:-1] + ("!" if i % 8 == 0 else "."), "I") for i in range(n)]
        for s, n in sizes.items()
    }
    f = finding(audit_rows(tmp_path, coordination_inversion=rows), "last-char")
    assert 3 <= f.data["gain_points"] < 10 and f.data["significant"]
    assert f.severity == "warning"


def test_a_tiny_task_is_not_flagged_on_noise(tmp_path, maker):
    """Three test sentences per class, all solved by the rule: +50 points, but p = 1/64."""
    rows = alter(coordinv_rows(maker), "I", lambda x: x.removesuffix(" ."))
    rows = {
        s: pairs[:10] + pairs[-10:] if s == "train" else pairs[:3] + pairs[-3:]
        for s, pairs in rows.items()
    }
    f = finding(audit_rows(tmp_path, coordination_inversion=rows), "last-char")
    assert f.data["gain_points"] == pytest.approx(50.0)
    assert not f.data["significant"] and f.severity == "info"


def test_cues_are_info_where_the_paper_has_cues_too(tmp_path):
    """Tense sentences starting with the tense's own adverb: the rule is reported with the
    paper's baseline margins, not raised."""
    m = Maker(4)
    rows = tense_rows(m)
    rows = {
        s: [(("Yesterday " if y == "PAST" else "Now ") + x, y) for x, y in p]
        for s, p in rows.items()
    }
    f = finding(audit_rows(tmp_path, past_present=rows), "first-token")
    assert f.severity == "info" and f.data["gain_points"] == pytest.approx(50.0)
    assert f.data["paper_margins"] == {"Length": 6.5, "NB-uni-tfidf": 27.7, "NB-bi-tfidf": 25.9}
    assert f.data["beats_paper"] and "paper's baselines on Tense" in f.message


def test_metadata_decides_whether_a_cue_is_a_defect(maker):
    tense = tense_rows(maker)
    tense = {
        s: [(("Yesterday " if y == "PAST" else "Now ") + x, y) for x, y in p]
        for s, p in tense.items()
    }
    options = CheckOptions(baselines=False)

    def severity(task: ProbingTask) -> str:
        return next(f.severity for f in run_checks(task, options) if f.check == "first-token")

    assert severity(as_task("T", tense, paper="Tense")) == "info"
    assert severity(as_task("T", tense, paper="Tense", no_surface_cue=True)) == "error"
    bshift = alter(bshift_rows(maker), "I", lambda x: "A" + x.removeprefix("The"))
    assert severity(as_task("B", bshift, paper="BShift")) == "error"
    assert severity(as_task("B", bshift, paper="BShift", no_surface_cue=False)) == "info"
    assert severity(as_task("BShift", bshift)) == "error"  # no paper name: the task's name


# ---------------------------------------------------------------------------- baselines


def test_bigram_and_character_cues_need_the_new_baselines(tmp_path, maker):
    """Inverted sentences with 'and ,' for ', and' (same words, same length: a bigram) and a
    capitalised 'The' after 'and' (a casing NB-uni lower-cases away): NB-bi and NB-char catch
    them, the word baseline and the position rules do not."""
    bigram = alter(coordinv_rows(maker), "I", lambda x: x.replace(" , and ", " and , "))
    found = problems(audit_rows(tmp_path / "a", True, coordination_inversion=bigram))
    assert found.get("nb-bi-tfidf-baseline") in ("warning", "error")
    assert "nb-uni-tfidf-baseline" not in found
    casing = alter(coordinv_rows(Maker(1)), "I", lambda x: x.replace("and the", "and The"))
    report = audit_rows(tmp_path / "b", True, coordination_inversion=casing)
    found = problems(report)
    assert found.get("nb-char-tfidf-baseline") == "error"
    assert "nb-uni-tfidf-baseline" not in found and "first-token" not in found


def test_nb_bi_is_allowed_the_paper_own_margin_on_bshift(tmp_path, maker):
    report = audit_rows(tmp_path, True, bigram_shift=bshift_rows(maker))
    f = finding(report, "nb-bi-tfidf-baseline")
    assert f.data["allowed_points"] == pytest.approx(13.8) and f.severity == "info"


# ---------------------------------------------------------------------------- twins


def _swap(x: str) -> str:
    t = x.split()
    t[1], t[2] = t[2], t[1]
    return " ".join(t)


def _replace(x: str) -> str:
    t = x.split()
    t[2] = "zzzword"
    return " ".join(t)


def _invert(x: str) -> str:
    a, b = x.removesuffix(" .").split(" , and ")
    return f"{b[:1].upper()}{b[1:]} , and {a[:1].lower()}{a[1:]} ."


@pytest.mark.parametrize(
    "file,rows,twin",
    [
        ("bigram_shift", bshift_rows, _swap),
        ("odd_man_out", bshift_rows, _replace),
        ("coordination_inversion", coordinv_rows, _invert),
    ],
)
def test_original_in_train_and_its_altered_form_in_test(tmp_path, maker, file, rows, twin):
    clean = rows(maker)
    assert "altered-twins" not in {
        f.check for f in audit_rows(tmp_path / "a", **{file: clean}).findings
    }
    planted = dict(clean)
    originals = [x for x, y in clean["train"] if y == "O"][:3]
    planted["test"] = clean["test"] + [(twin(x), "I") for x in originals]
    f = finding(audit_rows(tmp_path / "b", **{file: planted}), "altered-twins")
    assert f.count == 3 and f.data["splits"] == ["train", "test"]
    assert f.severity == "error"  # 3 of 83 test sentences


def test_twins_with_one_label_are_not_twins(tmp_path, maker):
    rows = bshift_rows(maker)
    rows["test"] = rows["test"] + [(_replace(x), "O") for x, y in rows["train"][:3] if y == "O"]
    report = audit_rows(tmp_path, odd_man_out=rows)
    assert "altered-twins" not in {f.check for f in report.findings}


# ---------------------------------------------------------------------------- imbalance


def test_a_54_46_split_is_reported(tmp_path, maker):
    rows = coordinv_rows(maker)
    o = [p for p in rows["test"] if p[1] == "O"]
    i = [p for p in rows["test"] if p[1] == "I"]
    rows["test"] = o[:27] + i[:23]  # 54/46
    f = finding(audit_rows(tmp_path, coordination_inversion=rows), "imbalance")
    assert f.severity == "warning" and f.data["split"] == "test"


# ---------------------------------------------------------------------------- lexical split


def tense_with_train_verbs_as_words(seed: int, share: float) -> Rows:
    """A lexical split (each split its own verbs) where a share of dev/test sentences also
    carries one of train's verbs of the same tense as an ordinary second verb: what natural
    text does, and what the old heuristic counted as shared targets."""
    m = Maker(seed)
    rows = tense_rows(m)
    rng = random.Random(seed)
    train_verbs = {
        label: sorted({x.split()[3] for x, y in rows["train"] if y == label})
        for label in ("PAST", "PRES")
    }
    for split in ("dev", "test"):
        rows[split] = [
            (x[:-2] + " and " + rng.choice(train_verbs[y]) + " .", y)
            if rng.random() < share
            else (x, y)
            for x, y in rows[split]
        ]
    return rows


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_train_targets_reappearing_as_words_are_not_a_violation(tmp_path, seed):
    rows = tense_with_train_verbs_as_words(seed, 0.3)
    f = finding(audit_rows(tmp_path, past_present=rows), "lexical-split")
    assert f.count >= 4  # the train verbs occur in test, always with their label
    assert f.severity == "info" and f.data["ratio"] < 0.8


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shared_target_pool_is_a_violation(tmp_path, seed):
    f = finding(
        audit_rows(tmp_path, past_present=tense_rows(Maker(seed), shared_verbs=True)),
        "lexical-split",
    )
    assert f.severity == "warning" and f.data["ratio"] >= 0.8


# ---------------------------------------------------------------------------- QUALITY.md


def test_quality_report_tabulates_cues_next_to_the_paper(maker):
    tense = tense_rows(maker)
    tense = {
        s: [(("Yesterday " if y == "PAST" else "Now ") + x, y) for x, y in p]
        for s, p in tense.items()
    }
    tasks = [
        as_task("Tense", tense, paper="Tense"),
        as_task("BShift", bshift_rows(maker), paper="BShift"),
    ]
    text = quality_report(tasks, baselines=False)
    assert "## Surface cues" in text
    row = next(
        line
        for line in text.splitlines()
        if line.startswith("| Tense ") and "+6.5 / +27.7 / +25.9" in line
    )
    assert "+50.0*" in row
    assert "- Tense: first token +50.0 points (paper's best baseline +27.7):" in text
    explained = quality_report(
        tasks, {"cue_notes": {"Tense": {"first-token": "planted adverbs"}}}, baselines=False
    )
    assert "(paper's best baseline +27.7): planted adverbs" in explained
    # info only: no warning for Tense but test-power (80 test items, as every fixture here)
    warned = [line for line in text.splitlines() if line.startswith("- **warning**")]
    assert warned and all("test-power" in line for line in warned)


def test_a_single_twin_is_a_warning(tmp_path, maker):
    rows = bshift_rows(maker)
    original = next(x for x, y in rows["train"] if y == "O")
    rows["test"] = rows["test"] + [(_swap(original), "I")]
    f = finding(audit_rows(tmp_path, bigram_shift=rows), "altered-twins")
    assert f.count == 1 and f.severity == "warning"


def _xprobe_bshift(lower_every: int, per_class: int = 3000) -> ProbingTask:
    """X-Probe's English BShift in miniature: one inverted sentence in ``lower_every`` is
    swapped at the first position, so it starts lower-case; the rest are swapped inside."""
    m = Maker(7)
    sizes = {"train": per_class, "dev": 100, "test": per_class}
    rows = {
        s: [(m.bshift(False), "O") for _ in range(n)]
        + [(m.bshift(True, lowercase=i % lower_every == 0), "I") for i in range(n)]
        for s, n in sizes.items()
    }
    return as_task("xprobe-en/BShift", rows, paper="BShift", language="en")


def test_a_small_certain_single_position_cue_warns():
    """X-Probe's release: the casing rule gains +2.5 points at p ~ 1e-7 (here 1 in 20 swaps at
    the first position: +2.5 at p ~ 6e-5). Below the 3-point cue threshold, but a
    single-position cue this certain on a no-surface-cue task is a warning."""
    from sentprobe.analysis.checks import CASING_RULE, check_casing_cue
    from sentprobe.analysis.checks.surface import RULES, _rule_check

    options = CheckOptions(baselines=False)
    task = _xprobe_bshift(lower_every=20)
    (casing,) = check_casing_cue(task, options)
    assert casing.data["gain_points"] == pytest.approx(2.5) and casing.data["p_value"] < 1e-3
    assert casing.severity == "warning" and "must carry no surface cue" in casing.message
    first_class = next(r for r in RULES if r.check == "first-token-class")
    assert _rule_check(first_class)(task, options)[0].severity == "warning"
    assert CASING_RULE.check == "casing-cue"
    # a gain under 2 points (1 in 50: +1.0) stays info; so does the same cue where the
    # task may carry surface cues
    (weak,) = check_casing_cue(_xprobe_bshift(lower_every=50), options)
    assert weak.data["gain_points"] < 2 and weak.severity == "info"
    allowed = ProbingTask(TaskMetadata(name="x/Other", no_surface_cue=False), task.splits)
    assert check_casing_cue(allowed, options)[0].severity == "info"
