"""Registered tasks and suites, and resolving a user's task spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentprobe import registry
from sentprobe.datasets import (
    SAMPLE_EN_DIR,
    list_suites,
    list_tasks,
    register_manifest_dir,
    resolve_tasks,
)
from sentprobe.datasets.task import PAPER_TASKS
from sentprobe.errors import DataError, SentprobeError

GOOD = [
    "tr\tA\tthe cat sat .",
    "tr\tB\tthe dogs ran .",
    "va\tA\tthis cat ate .",
    "va\tB\tthose dogs ate .",
    "te\tA\tmy cat hid .",
    "te\tB\tyour dogs hid .",
]


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let a test register entries without leaking them into other tests."""
    monkeypatch.setattr(registry.tasks, "_entries", dict(registry.tasks._entries))
    monkeypatch.setattr(registry.suites, "_entries", dict(registry.suites._entries))


def make_suite_dir(root: Path, suite: str = "tiny") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for file in ("word_content.txt", "sentence_length.txt"):
        (root / file).write_text("\n".join(GOOD) + "\n")
    tasks = {
        "WC": {"file": "word_content.txt", "labels": ["A", "B"]},
        "SentLen": {"file": "sentence_length.txt", "labels": ["A", "B"]},
    }
    manifest = {"suite": suite, "language": "en", "source": "unit test", "tasks": tasks}
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


def test_mock_suite_is_registered_and_resolves() -> None:
    assert "mock" in [s.name for s in list_suites()]
    tasks = resolve_tasks("mock")
    assert [t.name for t in tasks] == ["mock/Mock", "mock/Mock4", "mock/MockNoDev"]
    assert len(tasks[1].labels) == 4 and "dev" not in tasks[2].splits


def test_resolve_comma_separated_names_and_paths_without_repeats(tmp_path: Path) -> None:
    (tmp_path / "tree_depth.txt").write_text("\n".join(GOOD) + "\n")
    spec = f"mock/Mock4, {tmp_path / 'tree_depth.txt'},mock,mock/Mock"
    names = [t.name for t in resolve_tasks(spec)]
    assert names == ["mock/Mock4", "TreeDepth", "mock/Mock", "mock/MockNoDev"]
    assert [t.name for t in resolve_tasks(["mock/Mock", str(tmp_path)])] == [
        "mock/Mock",
        "TreeDepth",
    ]


def test_resolve_unknown_name_gives_the_closest_in_one_short_line() -> None:
    with pytest.raises(SentprobeError) as info:
        resolve_tasks("mock,sample-en/Tnese")
    message = str(info.value)
    assert "'sample-en/Tnese'" in message and "closest: sample-en/Tense" in message
    assert "\n" not in message and len(message) < 200, message
    with pytest.raises(SentprobeError, match=r"directory \(all: sentprobe tasks\)$"):
        resolve_tasks("zzzzqqqq")


def test_resolve_rejects_two_tasks_with_one_name(tmp_path: Path) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "tree_depth.txt").write_text("\n".join(GOOD) + "\n")
    with pytest.raises(SentprobeError, match="both named 'TreeDepth'"):
        resolve_tasks([str(tmp_path / "a"), str(tmp_path / "b")])


def test_resolve_propagates_data_errors(tmp_path: Path) -> None:
    (tmp_path / "tree_depth.txt").write_text("tr\tA\n")
    with pytest.raises(DataError):
        resolve_tasks(str(tmp_path / "tree_depth.txt"))


def test_manifest_dir_registration_is_lazy(tmp_path: Path, scratch_registry: None) -> None:
    root = make_suite_dir(tmp_path / "tiny")
    assert register_manifest_dir(root) == ["tiny/SentLen", "tiny/WC"]  # paper order
    (root / "word_content.txt").write_text("garbage without tabs\n")  # only read on use
    rows = {row.name: row for row in list_tasks()}
    assert rows["tiny/WC"].paper_name == "WC" and rows["tiny/WC"].n_labels == 2
    assert rows["tiny/WC"].category == "surface" and rows["tiny/WC"].source == "unit test"
    assert ("tiny", ["tiny/SentLen", "tiny/WC"]) in list_suites()
    with pytest.raises(DataError):
        resolve_tasks("tiny")
    (sentlen,) = resolve_tasks("tiny/SentLen")
    assert sentlen.name == "tiny/SentLen" and sentlen.metadata.language == "en"


def test_list_tasks_rows_for_mock() -> None:
    rows = {row.name: row for row in list_tasks()}
    assert rows["mock/Mock4"].n_labels == 4 and rows["mock/Mock"].category == "other"


@pytest.mark.skipif(
    not (SAMPLE_EN_DIR / "manifest.json").is_file(), reason="sample data not generated yet"
)
def test_shipped_sample_suite() -> None:
    (suite,) = [s for s in list_suites() if s.name == "sample-en"]
    papers = [name.split("/", 1)[1] for name in suite.tasks]
    assert papers == list(PAPER_TASKS)  # all ten, in the paper's order
    tasks = resolve_tasks("sample-en")
    assert [t.name for t in tasks] == suite.tasks
    for task in tasks:
        assert task.metadata.language == "en" and {"train", "test"} <= set(task.splits)
