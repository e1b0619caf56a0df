"""A lexical split's ``.forms`` sidecar: read into ``Split.clusters`` by the SentEval and
X-Probe loaders and the manifest, part of the task's identity, refused when malformed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sentprobe.datasets.builtin import SAMPLE_EN_DIR
from sentprobe.datasets.loaders import (
    load_manifest_dir,
    load_senteval_file,
    load_xprobe_task,
    manifest_tasks,
)
from sentprobe.errors import DataError

LINES = [
    "tr\tNN\tthe cat sat .",
    "tr\tNNS\tthe dogs ran .",
    "",  # a blank line is no item line: the sidecar skips it too
    "va\tNN\tthis bird ate .",
    "va\tNNS\tthose fish ate .",
    "te\tNN\tmy cow hid .",
    "te\tNNS\tyour cows hid .",
]
FORMS = ["cat", "dogs", "bird", "fish", "cow", "cows"]


def write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_senteval_sidecar_gives_each_split_its_forms(tmp_path: Path) -> None:
    task_file = write(tmp_path / "subj_number.txt", LINES)
    without = load_senteval_file(task_file)
    assert all(s.clusters is None for s in without.splits.values())
    write(tmp_path / "subj_number.forms", FORMS)
    task = load_senteval_file(task_file)
    assert task.splits["train"].clusters == ["cat", "dogs"]
    assert task.splits["dev"].clusters == ["bird", "fish"]
    assert task.splits["test"].clusters == ["cow", "cows"]
    # the forms are part of the data's identity: results on another grouping are not reused
    assert task.content_hash() != without.content_hash()
    write(tmp_path / "subj_number.forms", [*FORMS[:-1], "cow"])
    assert load_senteval_file(task_file).content_hash() != task.content_hash()


def test_xprobe_sidecars_per_split_file(tmp_path: Path) -> None:
    folder = tmp_path / "fr" / "subj_number"
    write(folder / "tr.txt", ["le chat dort .\tNN", "les chats dorment .\tNNS"])
    write(folder / "te.txt", ["un rat court .\tNN", "des rats courent .\tNNS"])
    write(folder / "te.forms", ["rat", "rats"])
    task = load_xprobe_task(folder)
    assert task.splits["test"].clusters == ["rat", "rats"]
    assert task.splits["train"].clusters is None  # no tr.forms


@pytest.mark.parametrize(
    ("forms", "problem"),
    [
        (FORMS[:-1], "5 lines, but subj_number.txt has 6 item lines"),
        ([*FORMS, "extra"], "7 lines, but subj_number.txt has 6 item lines"),
        ([*FORMS[:2], "  ", *FORMS[3:]], "line 3: empty form"),
    ],
)
def test_malformed_sidecar_is_one_line_naming_it(
    tmp_path: Path, forms: list[str], problem: str
) -> None:
    task_file = write(tmp_path / "subj_number.txt", LINES)
    sidecar = write(tmp_path / "subj_number.forms", forms)
    with pytest.raises(DataError) as err:
        load_senteval_file(task_file)
    message = str(err.value)
    assert "\n" not in message and message.startswith(str(sidecar)) and problem in message


def test_xprobe_sidecar_counts_its_own_split_file(tmp_path: Path) -> None:
    folder = tmp_path / "en" / "past_present"
    write(folder / "tr.txt", ["he ran .\tPAST", "he runs .\tPRES"])
    write(folder / "te.txt", ["she sat .\tPAST", "she sits .\tPRES"])
    sidecar = write(folder / "te.forms", ["sat"])
    with pytest.raises(DataError, match="1 lines, but te.txt has 2 item lines") as err:
        load_xprobe_task(folder)
    assert err.value.path == str(sidecar)


def test_lenient_load_reports_a_bad_sidecar_and_keeps_the_items(tmp_path: Path) -> None:
    task_file = write(tmp_path / "subj_number.txt", LINES)
    write(tmp_path / "subj_number.forms", FORMS[:2])
    rejected: list = []
    task = load_senteval_file(task_file, rejected=rejected)
    assert len(task.splits["test"]) == 2 and task.splits["test"].clusters is None
    assert [p[2] for p in rejected if "item lines" in p[2]]


def test_rejected_rows_keep_forms_aligned(tmp_path: Path) -> None:
    bad = [*LINES[:5], "xx\tNN\tan unknown split .", *LINES[5:]]
    task_file = write(tmp_path / "subj_number.txt", bad)
    write(tmp_path / "subj_number.forms", [*FORMS[:4], "skipped", *FORMS[4:]])
    task = load_senteval_file(task_file, rejected=[])
    assert task.splits["test"].clusters == ["cow", "cows"]


def _suite(tmp_path: Path, forms: object) -> Path:
    write(tmp_path / "subj_number.txt", LINES)
    entry = {"file": "subj_number.txt", "labels": ["NN", "NNS"]}
    if forms is not None:
        entry["forms"] = forms
    manifest = {"suite": "toy", "tasks": {"SubjNum": entry}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return tmp_path


def test_manifest_declared_forms_are_read(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "subj_number.forms")
    write(suite / "subj_number.forms", FORMS)
    [task] = load_manifest_dir(suite)
    assert task.name == "toy/SubjNum" and task.splits["test"].clusters == ["cow", "cows"]


@pytest.mark.parametrize(
    ("forms", "problem"),
    [
        ("subj_number.forms", "names forms 'subj_number.forms', which is missing"),
        ("other.forms", "must lie beside its data as subj_number.forms"),
        (3, '"forms" must name a file'),
        ("../outside.forms", "outside"),
    ],
)
def test_manifest_forms_that_cannot_be_read_are_refused(
    tmp_path: Path, forms: object, problem: str
) -> None:
    suite = _suite(tmp_path / "suite", forms)
    write(suite / "other.forms", FORMS)
    with pytest.raises(DataError, match=problem) as err:
        manifest_tasks(suite)
    assert err.value.path == str(suite / "manifest.json") and "\n" not in str(err.value)


def test_sidecar_link_out_of_the_suite_is_refused(tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere.forms", FORMS)
    suite = tmp_path / "suite"
    task_file = write(suite / "subj_number.txt", LINES)
    (suite / "subj_number.forms").symlink_to(outside)
    with pytest.raises(DataError, match="outside"):
        load_senteval_file(task_file)


def test_builtin_sample_suite_reads_a_sidecar(tmp_path: Path) -> None:
    """The shipped suites load through the manifest loader: a sidecar beside a task file
    reaches the task (a copy of sample-en with one added)."""
    suite = tmp_path / "sample_en"
    shutil.copytree(SAMPLE_EN_DIR, suite)
    lines = [x for x in (suite / "subj_number.txt").read_text().splitlines() if x.strip()]
    write(suite / "subj_number.forms", [f"form{i % 7}" for i in range(len(lines))])
    task = next(t for t in load_manifest_dir(suite) if t.name.endswith("SubjNum"))
    test = task.splits["test"]
    assert test.clusters is not None and len(test.clusters) == len(test)


@pytest.mark.parametrize("fmt", ["hf", "parquet"])
def test_export_keeps_the_forms_and_the_hash(tmp_path: Path, fmt: str) -> None:
    """``sentprobe export`` writes each split's forms to a ``form`` column (empty in a split
    without them) and loads them back: the same task, the same content hash."""
    pytest.importorskip("datasets", minversion="5.2")
    from sentprobe.datasets.builtin import resolve_tasks
    from sentprobe.datasets.export import export_tasks

    folder = tmp_path / "en" / "subj_number"
    write(folder / "tr.txt", ["the cat sat .\tNN", "the cats sat .\tNNS"])
    write(folder / "te.txt", ["my cow hid .\tNN", "your cows hid .\tNNS"])
    write(folder / "te.forms", ["cow", "cows"])
    task = load_xprobe_task(folder)
    loaded = resolve_tasks(str(export_tasks([task], tmp_path / "out", fmt)))
    assert [t.content_hash() for t in loaded] == [task.content_hash()]
    assert loaded[0].splits["test"].clusters == ["cow", "cows"]
    assert loaded[0].splits["train"].clusters is None


def test_a_form_column_with_gaps_is_refused() -> None:
    from sentprobe.datasets.loaders.hf import task_from_columns
    from sentprobe.datasets.task import TaskMetadata

    cols = ["sentence", "label", "form"]
    rows = [{"sentence": "a cat .", "label": "NN", "form": "cat"},
            {"sentence": "two cats .", "label": "NNS", "form": ""}]  # fmt: skip
    splits = {"train": (cols, rows, None), "test": (cols, rows, None)}
    names = {"sentence": "sentence", "label": "label"}
    with pytest.raises(DataError, match=r"\[train split\], line 2: empty form"):
        task_from_columns("x", splits, names, TaskMetadata(name="x"))
