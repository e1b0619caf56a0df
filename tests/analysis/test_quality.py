"""The quality report of a generated suite: same checks as `audit`, rendered as Markdown."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from conftest import Maker, bshift_rows, coordinv_rows, tense_rows
from sentprobe.analysis import quality_report
from sentprobe.analysis.checks import CHECKS
from sentprobe.analysis.quality import as_probing_task


@dataclass
class Generated:
    """The shape of generation.base.GeneratedTask that the report relies on."""

    name: str
    labels: list[str]
    splits: dict[str, list[tuple[str, str]]]
    stats: Counter = field(default_factory=Counter)


def test_clean_generated_suite_report():
    m = Maker(0)
    tasks = [
        Generated("BShift", ["O", "I"], bshift_rows(m), Counter({"rejected: quotes": 7})),
        Generated("Tense", ["PAST", "PRES"], tense_rows(m)),
    ]
    text = quality_report(tasks, {"title": "Suite X", "seed": 13})
    assert text.startswith("# Suite X\n")
    # the only warnings: 80 test items, too few to tell rows 10 points apart (test-power)
    warned = [line for line in text.splitlines() if line.startswith("- **warning**")]
    assert len(warned) == 2 and all("test-power: only 80 test items" in w for w in warned)
    assert "| BShift " in text and "| Tense " in text
    overview = next(line for line in text.splitlines() if line.startswith("| BShift "))
    cells = [c.strip() for c in overview.strip("|").split("|")]
    assert cells[1:4] == ["120", "40", "80"]  # sizes
    assert cells[8] == "50.0"  # Majority
    assert cells[-1] == "warning"  # test-power, as above
    assert "| rejected: quotes |" in text.replace("  ", " ")  # generator counts
    assert "- seed: 13" in text


def test_defects_and_exact_target_forms_are_reported():
    m = Maker(1)
    rows = tense_rows(m)
    targets = {s: [x.split()[3] for x, _ in pairs] for s, pairs in rows.items()}
    targets["test"][0] = targets["train"][0]  # one target form leaks into test
    tasks = [
        Generated("Tense", ["PAST", "PRES"], rows),
        Generated("CoordInv", ["O", "I"], coordinv_rows(m, longer=3)),
    ]
    text = quality_report(tasks, {"targets": {"Tense": targets}})
    assert "- **error** Tense: lexical-split: 1 target form occurs in both train and test" in text
    assert "- **error** CoordInv: length-baseline" in text
    coord = next(line for line in text.splitlines() if line.startswith("| CoordInv "))
    assert coord.rstrip(" |").endswith("**error**")


def test_one_set_of_checks():
    """The report runs exactly the audit's checks (no second implementation)."""
    import sentprobe.analysis.quality as quality

    assert not any(name.startswith("check_") for name in vars(quality))
    # 18 checks (lexical-ngram, class-vocabulary, lexical-forms, tense-labels, dev-test and
    # test-power among them) + the 6 single-position rules besides casing + 4 per-segment
    # rules of a pair + 3 function-word agreement cues
    assert len(CHECKS) == 31


def test_generated_task_conversion():
    task = as_probing_task(Generated("SentLen", ["0", "1"], {"train": [("a b", "0")]}))
    assert task.metadata.paper_name == "SentLen" and task.metadata.category == "surface"
    assert task.splits["train"].sentences == ["a b"]


def test_large_suites_are_audited_in_worker_processes_with_the_same_report(monkeypatch):
    from sentprobe.analysis import quality

    m = Maker(0)
    tasks = [
        Generated("BShift", ["O", "I"], bshift_rows(m)),
        Generated("Tense", ["PAST", "PRES"], tense_rows(m)),
    ]
    here = quality_report(tasks, {"title": "Suite X"})
    monkeypatch.setattr(quality, "PARALLEL_FROM", 0)  # as if the suite were large
    workers = []
    real = quality.process_map
    monkeypatch.setattr(
        quality, "process_map", lambda *a, **kw: workers.append(kw["jobs"]) or real(*a, **kw)
    )
    assert quality_report(tasks, {"title": "Suite X"}) == here
    assert workers == [None]  # one worker per core
