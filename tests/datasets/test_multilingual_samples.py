"""The built-in X-Probe-layout samples (sample-fr, sample-es, sample-ru): registered, named
without clashes, carrying their language, small, licensed, and clean by the audit."""

from __future__ import annotations

import json

import pytest

from sentprobe.analysis import audit_suite
from sentprobe.datasets import list_suites, list_tasks, resolve_tasks
from sentprobe.datasets.builtin import DATA_DIR
from sentprobe.generation.suite import XPROBE_TASKS

LANGS = ("fr", "es", "ru")


def _manifest(lang: str) -> dict:
    return json.loads((DATA_DIR / f"sample_{lang}" / "manifest.json").read_text("utf-8"))


def shipped(lang: str) -> list[str]:
    """X-Probe's tasks less those the build refused (stated in manifest and QUALITY.md)."""
    refused = _manifest(lang).get("refused") or {}
    return [t for t in XPROBE_TASKS if t not in refused]


@pytest.mark.parametrize("lang", LANGS)
def test_sample_is_registered_with_its_language(lang):
    suites = {s.name: s.tasks for s in list_suites()}
    assert suites[f"sample-{lang}"] == [f"sample-{lang}/{t}" for t in shipped(lang)]
    quality = (DATA_DIR / f"sample_{lang}" / "QUALITY.md").read_text(encoding="utf-8")
    for task, why in (_manifest(lang).get("refused") or {}).items():
        assert f"- {task}: {why}" in quality
    rows = {t.name: t for t in list_tasks()}
    for task in shipped(lang):
        row = rows[f"sample-{lang}/{task}"]
        assert row.language == lang and row.paper_name == task and row.n_labels >= 2


def test_task_names_never_clash_across_languages():
    names = [t.name for t in list_tasks()]
    assert len(names) == len(set(names))
    assert {n.split("/")[0] for n in names if "/" in n} >= {f"sample-{x}" for x in (*LANGS, "en")}


@pytest.mark.parametrize("lang", LANGS)
def test_sample_loads_and_passes_the_audit(lang):
    tasks = resolve_tasks(f"sample-{lang}")
    assert [t.metadata.paper_name for t in tasks] == shipped(lang)
    for task in tasks:
        assert task.metadata.language == lang and "MPL-2.0" in task.metadata.license
        assert len(task.splits["train"]) >= 5 * len(task.labels)  # 5:1:1, at least 1 unit
    report = audit_suite(f"sample-{lang}", baselines=False)
    assert report.counts()["error"] == 0, report.to_text("error")


@pytest.mark.parametrize("lang", LANGS)
def test_sample_files_are_small_and_attributed(lang):
    folder = DATA_DIR / f"sample_{lang}"
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    assert size < 2_000_000
    notice = (folder / "NOTICE").read_text(encoding="utf-8")
    assert f"libreoffice-help-{lang}" in notice and "Mozilla Public License" in notice
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["suite"] == f"sample-{lang}" and manifest["layout"] == "xprobe"
    assert manifest["language"] == lang and manifest["bands"]["rule"] == "auto"
    assert (folder / "QUALITY.md").is_file()


#: Imperatives and present-tense forms a tagger called past in the LibreOffice help.
NOT_PAST = {"fr": ("inclut", "ouvrez", "fournit", "agit"), "ru": ("введите", "щёлкните")}


@pytest.mark.parametrize("lang", ["fr", "ru"])
def test_no_imperative_or_present_is_labelled_past(lang):
    if "Tense" not in shipped(lang):
        return  # refused: nothing labelled
    (task,) = resolve_tasks(f"sample-{lang}/Tense")
    for split in task.splits.values():
        for sentence, label in zip(split.sentences, split.labels):
            words = set(sentence.lower().split())
            assert label != "Past" or not words & set(NOT_PAST[lang]), sentence


@pytest.mark.parametrize("lang", LANGS)
def test_tense_label_accuracy_against_gold_ud_is_stated(lang):
    accuracy = _manifest(lang)["label_accuracy"]["Tense"]
    assert accuracy["accuracy"] >= 0.95 and accuracy["both_kept"] > 500
    quality = (DATA_DIR / f"sample_{lang}" / "QUALITY.md").read_text(encoding="utf-8")
    assert "## Label accuracy against gold UD" in quality
    assert f"{100 * accuracy['accuracy']:.1f}%" in quality
