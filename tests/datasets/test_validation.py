"""Malformed input: one test per problem, each checking the message names file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentprobe.datasets.loaders import load_senteval_file, load_table, load_xprobe_dir
from sentprobe.datasets.task import ProbingTask, Split, TaskMetadata
from sentprobe.datasets.validation import validate_task
from sentprobe.errors import DataError

GOOD = [
    "tr\tA\tthe cat sat .",
    "tr\tB\tthe dogs ran .",
    "tr\tA\ta cat slept .",
    "tr\tB\tsome dogs barked .",
    "va\tA\tthis cat ate .",
    "va\tB\tthose dogs ate .",
    "te\tA\tmy cat hid .",
    "te\tB\tyour dogs hid .",
]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def load_error(path: Path) -> DataError:
    with pytest.raises(DataError) as info:
        load_senteval_file(path)
    assert info.value.path == str(path)
    assert str(path) in str(info.value)
    return info.value


def test_unknown_split_names_allowed_ones(tmp_path: Path) -> None:
    path = write(tmp_path / "t.txt", GOOD[:2] + ["train2\tA\tan odd split ."] + GOOD[2:])
    err = load_error(path)
    assert err.line == 3
    assert "'train2'" in err.problem and "tr, va, te" in err.problem


def test_wrong_column_count_says_expected_and_found(tmp_path: Path) -> None:
    path = write(tmp_path / "t.txt", GOOD[:4] + ["te\tA"] + GOOD[4:])
    err = load_error(path)
    assert err.line == 5
    assert "expected 3" in err.problem and "found 2" in err.problem


def test_empty_sentence(tmp_path: Path) -> None:
    path = write(tmp_path / "t.txt", ["tr\tA\t   "] + GOOD)
    err = load_error(path)
    assert err.line == 1 and "empty sentence" in err.problem


def test_dev_label_unseen_in_train_names_label_split_and_first_line(tmp_path: Path) -> None:
    path = write(tmp_path / "t.txt", GOOD + ["va\tC\tnew label .", "va\tC\tagain ."])
    err = load_error(path)
    assert err.line == 9
    assert "'C'" in err.problem and "dev" in err.problem and "train" in err.problem
    assert "line 10" not in str(err)  # reported once, at its first occurrence


def test_test_label_unseen_in_train(tmp_path: Path) -> None:
    path = write(tmp_path / "t.txt", ["te\tZ\tunseen ."] + GOOD)
    err = load_error(path)
    assert err.line == 1 and "'Z'" in err.problem and "test" in err.problem


def test_bad_encoding_reports_line(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    data = "\n".join(GOOD).encode() + b"\nte\tA\tcaf\xe9 latin-1 .\n"
    path.write_bytes(data)
    err = load_error(path)
    assert err.line == 9 and "UTF-8" in err.problem and "0xe9" in err.problem


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("\n\n")
    err = load_error(path)
    assert err.line is None and "empty" in err.problem


@pytest.mark.parametrize(("drop", "missing"), [("tr", "train"), ("te", "test")])
def test_missing_train_or_test_split(tmp_path: Path, drop: str, missing: str) -> None:
    path = write(tmp_path / "t.txt", [line for line in GOOD if not line.startswith(drop)])
    err = load_error(path)
    assert f"no {missing} split" in err.problem


def test_missing_dev_is_fine(tmp_path: Path) -> None:
    task = load_senteval_file(write(tmp_path / "t.txt", [x for x in GOOD if x[:2] != "va"]))
    assert set(task.splits) == {"train", "test"}


def test_several_errors_reported_together_with_count(tmp_path: Path) -> None:
    bad = [f"xx\tA\tsentence {i} ." for i in range(12)]
    path = write(tmp_path / "t.txt", GOOD + bad)
    err = load_error(path)
    assert err.line == 9
    assert "also line 10" in str(err)
    assert "and 7 more problems" in str(err)  # 12 errors, 5 spelled out


def test_xprobe_errors_name_the_split_file(tmp_path: Path) -> None:
    task = tmp_path / "en" / "bigram_shift"
    task.mkdir(parents=True)
    write(task / "tr.txt", ["a b\tO", "b a\tI"])
    write(task / "te.txt", ["c d\tO", "d c\tI", "e f"])
    with pytest.raises(DataError) as info:
        load_xprobe_dir(task)
    assert info.value.path == str(task / "te.txt") and info.value.line == 3
    assert "expected 2" in info.value.problem


def test_xprobe_missing_train_file(tmp_path: Path) -> None:
    task = tmp_path / "tree_depth"
    task.mkdir()
    write(task / "te.txt", ["c d\t5"])
    with pytest.raises(DataError, match="no tr.txt"):
        load_xprobe_dir(task)


def test_jsonl_errors(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.jsonl",
        ['{"sentence": "a", "label": 1, "split": "train"}', "{not json", '{"sentence": "b"}'],
    )
    with pytest.raises(DataError) as info:
        load_table(path)
    assert info.value.line == 2 and "not valid JSON" in info.value.problem
    assert "line 3: missing key(s) label, split" in str(info.value)


def test_tsv_header_must_name_columns(tmp_path: Path) -> None:
    path = write(tmp_path / "t.tsv", ["text\tlabel\tsplit", "a\t1\ttrain"])
    with pytest.raises(DataError) as info:
        load_table(path)
    assert info.value.line == 1 and "missing sentence" in info.value.problem


def test_manifest_labels_are_enforced(tmp_path: Path) -> None:
    meta = TaskMetadata(name="T", labels=("A",))
    with pytest.raises(DataError) as info:
        load_senteval_file(write(tmp_path / "t.txt", GOOD), metadata=meta)
    assert info.value.line == 2 and "not among the declared labels" in info.value.problem


# ---------------------------------------------------------------------------- warnings


def test_warns_about_sentences_shared_between_splits(tmp_path: Path) -> None:
    task = load_senteval_file(write(tmp_path / "t.txt", GOOD + ["te\tA\tthe cat sat ."]))
    shared = [w for w in task.warnings if "more than one split" in w]
    assert len(shared) == 1 and shared[0].startswith("1 sentence") and "the cat sat" in shared[0]


def test_warns_about_sentences_with_several_labels(tmp_path: Path) -> None:
    task = load_senteval_file(write(tmp_path / "t.txt", GOOD + ["tr\tB\tthe cat sat ."]))
    assert any("more than one label" in w and "A, B" in w for w in task.warnings)


def test_warns_about_class_imbalance(tmp_path: Path) -> None:
    extra = [f"tr\tA\textra cat {i} ." for i in range(4)]
    task = load_senteval_file(write(tmp_path / "t.txt", GOOD + extra))
    imbalance = [w for w in task.warnings if "imbalanced" in w]
    assert len(imbalance) == 1 and "train" in imbalance[0] and "3.0x" in imbalance[0]


def test_warns_about_class_missing_from_test(tmp_path: Path) -> None:
    task = load_senteval_file(write(tmp_path / "t.txt", GOOD[:-1]))
    assert any(w.startswith("test split has no examples") and "'B'" in w for w in task.warnings)


def test_clean_task_has_no_warnings(tmp_path: Path) -> None:
    assert load_senteval_file(write(tmp_path / "t.txt", GOOD)).warnings == []


def test_validate_task_in_memory() -> None:
    splits = {"train": Split(["a", "b"], ["0", "1"]), "test": Split(["c"], ["2"])}
    with pytest.raises(DataError, match="never in train"):
        validate_task(ProbingTask(TaskMetadata(name="T"), splits))
    splits["test"] = Split(["a"], ["0"])
    task = validate_task(ProbingTask(TaskMetadata(name="T"), splits))
    assert any("more than one split" in w for w in task.warnings)
