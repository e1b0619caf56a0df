"""Each defect class found in X-Probe's released data, on a suite that ``build`` makes from a
small CoNLL-U treebank written by the test: the generators never produce it, and ``audit``
finds it once the built suite is corrupted on purpose.

Defects (docs/multilingual.md): identical dev/test files, sentences shared by splits or
carrying two labels, lexical splits by characters instead of word forms, a casing cue from
swapping at the first position, unbalanced or one-class splits.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from gen_treebank import write_treebank
from sentprobe.analysis import audit_suite
from sentprobe.analysis.checks import lower_initial
from sentprobe.generation.autosize import AutoSizes
from sentprobe.generation.pipeline import build
from sentprobe.generation.suite import XPROBE_TASKS

FOLDERS = {
    "SentLen": "sentence_length",
    "WC": "word_content",
    "BShift": "bigram_shift",
    "TreeDepth": "tree_depth",
    "Tense": "past_present",
    "SubjNum": "subj_number",
    "ObjNum": "obj_number",
    "SOMO": "odd_man_out",
    "CoordInv": "coordination_inversion",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The nine tasks built from a two-file synthetic treebank, X-Probe layout."""
    root = tmp_path_factory.mktemp("xprobe")
    corpora = write_treebank(root / "tb")
    result = build(
        corpora,
        root / "suite",
        lang="xx",
        sizes=AutoSizes((400, 40, 40)),
        layout="xprobe",
        progress=False,
    )
    assert not result.failures and result.written
    return root / "suite", {t.name: t for t in result.tasks}


def read(folder: Path, split: str) -> list[tuple[str, str]]:
    lines = (folder / f"{split}.txt").read_text(encoding="utf-8").splitlines()
    return [tuple(line.split("\t")) for line in lines]  # type: ignore[misc]


def problems(report, task: str) -> dict[str, str]:
    return {f.check: f.severity for f in report.findings if f.task == task and f.severity != "info"}


# ---------------------------------------------------------------------------- the generators


@pytest.mark.parametrize("name", XPROBE_TASKS)
def test_splits_are_disjoint_balanced_and_single_labelled(built, name):
    suite, _ = built
    folder = suite / "xx" / FOLDERS[name]
    rows = {s: read(folder, s) for s in ("tr", "va", "te")}
    assert (folder / "va.txt").read_bytes() != (folder / "te.txt").read_bytes()
    sentences = {s: [x for x, _ in r] for s, r in rows.items()}
    for a, b in (("tr", "va"), ("tr", "te"), ("va", "te")):
        assert not set(sentences[a]) & set(sentences[b]), (name, a, b)
    labels: dict[str, set[str]] = {}
    for r in rows.values():
        for x, y in r:
            labels.setdefault(x, set()).add(y)
    assert all(len(ys) == 1 for ys in labels.values())  # one label per sentence
    all_labels = {y for r in rows.values() for _, y in r}
    for s, r in rows.items():
        counts = Counter(y for _, y in r)
        assert set(counts) == all_labels and len(set(counts.values())) == 1, (name, s, counts)


@pytest.mark.parametrize("name", ["Tense", "SubjNum", "ObjNum", "SOMO"])
def test_target_forms_are_whole_words_confined_to_one_split(built, name):
    _, tasks = built
    task = tasks[name]
    split_of: dict[str, set[str]] = {}
    for split, examples in task.splits.items():
        for sentence, _ in examples:
            form = task.targets.get(sentence)
            if form is None:
                assert name == "SOMO"  # SOMO's originals have no replacement word
                continue
            assert form in [t.lower() for t in sentence.split()]  # a word, not characters
            split_of.setdefault(form, set()).add(split)
    assert len(split_of) >= 3 and all(len(s) == 1 for s in split_of.values())


@pytest.mark.parametrize("name", ["BShift", "CoordInv"])
def test_first_word_casing_does_not_predict_the_label(built, name):
    _, tasks = built
    task = tasks[name]
    for split, examples in task.splits.items():
        lower = Counter(label for sentence, label in examples if lower_initial(sentence))
        total = Counter(label for _, label in examples)
        shares = {label: lower[label] / total[label] for label in total}
        assert max(shares.values()) - min(shares.values()) <= 0.1, (split, shares)
    if name == "BShift":  # never swapped at the first position
        for sentence, label in task.splits["train"]:
            if label == "I":
                assert sentence.split()[0][:1].isupper()


def test_the_clean_built_suite_passes_the_audit(built):
    suite, _ = built
    report = audit_suite(suite, baselines=False)
    assert len(report.tasks) == 9 and report.counts()["error"] == 0


# ---------------------------------------------------------------------------- audit


def _identical(folder: Path) -> None:
    shutil.copyfile(folder / "te.txt", folder / "va.txt")


def _shared(folder: Path) -> None:
    with (folder / "te.txt").open("a", encoding="utf-8") as f:
        f.write("\t".join(read(folder, "tr")[0]) + "\n")


def _multi_label(folder: Path) -> None:
    rows = read(folder, "tr")
    other = next(y for _, y in rows if y != rows[0][1])
    with (folder / "tr.txt").open("a", encoding="utf-8") as f:
        f.write(f"{rows[0][0]}\t{other}\n")


def _imbalance(folder: Path) -> None:
    rows = read(folder, "tr")
    first = rows[0][1]
    kept = [r for i, r in enumerate(rows) if r[1] != first or i % 2]
    (folder / "tr.txt").write_text("".join(f"{x}\t{y}\n" for x, y in kept), encoding="utf-8")


def _missing_class(folder: Path) -> None:
    rows = read(folder, "te")
    kept = [r for r in rows if r[1] == rows[0][1]]
    (folder / "te.txt").write_text("".join(f"{x}\t{y}\n" for x, y in kept), encoding="utf-8")


def _lexical_leak(folder: Path) -> None:
    """The test split made of train's sentences with another first word: every target form
    of test is then a train form with the same label (what a character split lets through)."""
    rows = [("A " + x.split(" ", 1)[1], y) for x, y in read(folder, "tr")]
    (folder / "te.txt").write_text("".join(f"{x}\t{y}\n" for x, y in rows), encoding="utf-8")
    if (folder / "tr.forms").is_file():  # test's forms are train's, line for line
        (folder / "te.forms").write_bytes((folder / "tr.forms").read_bytes())


def _casing(folder: Path) -> None:
    for split in ("tr", "va", "te"):
        rows = [(x[:1].lower() + x[1:] if y == "I" else x, y) for x, y in read(folder, split)]
        (folder / f"{split}.txt").write_text(
            "".join(f"{x}\t{y}\n" for x, y in rows), encoding="utf-8"
        )


CORRUPTIONS = {
    "identical split files": ("TreeDepth", _identical, "identical-splits", "error"),
    "shared sentences": ("SentLen", _shared, "split-overlap", None),
    "multi-label": ("SOMO", _multi_label, "multi-label", None),
    "imbalance": ("BShift", _imbalance, "imbalance", None),
    "missing class": ("SubjNum", _missing_class, "missing-class", "error"),
    "lexical-split violation": (
        "SubjNum",
        _lexical_leak,
        "lexical-split",
        "error",
    ),  # exact: .forms
    "casing cue": ("BShift", _casing, "casing-cue", "error"),
}


@pytest.mark.parametrize("defect", CORRUPTIONS)
def test_audit_detects_each_defect_planted_in_a_built_suite(built, tmp_path, defect):
    suite, _ = built
    name, corrupt, check, severity = CORRUPTIONS[defect]
    copy = tmp_path / "suite"
    shutil.copytree(suite, copy)
    before = problems(audit_suite(copy, baselines=False), f"xx/{name}")
    assert check not in before
    corrupt(copy / "xx" / FOLDERS[name])
    after = problems(audit_suite(copy, baselines=False), f"xx/{name}")
    assert check in after, (defect, after)
    if severity:
        assert after[check] == severity
