"""Hugging Face datasets both ways: tasks written with ``datasets`` load with ``-t`` and score
like the same data as a SentEval file; ``sentprobe export`` round-trips (same hash, same
scores) with a dataset card the Hub reads. Offline: every dataset is written here."""

from __future__ import annotations

import json
import os
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from sentprobe.cli.main import app
from sentprobe.datasets.builtin import resolve_tasks
from sentprobe.datasets.mock import make_mock_task
from sentprobe.encoders.custom import CallableEncoder
from sentprobe.errors import DataError, SentprobeError
from sentprobe.evaluation.runner import run

datasets = pytest.importorskip("datasets", minversion="5.2")  # the version these were run with


def _senteval_file(task, path):
    codes = {"train": "tr", "dev": "va", "test": "te"}
    lines = [
        f"{codes[name]}\t{label}\t{sentence}"
        for name, split in task.splits.items()
        for sentence, label in zip(split.sentences, split.labels)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _dataset_dict(task, text="sentence", label="label", class_label=True):
    names = task.labels
    feature = datasets.ClassLabel(names=names) if class_label else datasets.Value("string")
    features = datasets.Features({text: datasets.Value("string"), label: feature})
    hub = {"train": "train", "dev": "validation", "test": "test"}
    return datasets.DatasetDict(
        {
            hub[name]: datasets.Dataset.from_dict(
                {
                    text: split.sentences,
                    label: [names.index(y) if class_label else y for y in split.labels],
                },
                features=features,
            )
            for name, split in task.splits.items()
        }
    )


def _hashed_bag_of_words(sentences):
    out = np.zeros((len(sentences), 64), dtype=np.float32)
    for i, sentence in enumerate(sentences):
        for token in sentence.split():
            out[i, zlib.crc32(token.encode()) % 64] += 1
    return out


def _scores(tasks, tmp_path, tag):
    """Test scores of text baselines and of the logistic probe on a tiny encoder."""
    encoder = CallableEncoder(_hashed_bag_of_words, name="hashed", fingerprint="hashed-bow-v1")
    frame = run(
        [encoder],
        tasks,
        baselines="majority,nb-uni",
        results=tmp_path / f"{tag}.sqlite",
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    return sorted(zip(frame["encoder"], frame["test_score"], strict=True))


@pytest.mark.parametrize("class_label", [True, False])
def test_a_saved_dataset_scores_exactly_like_the_same_senteval_file(tmp_path, class_label):
    task = make_mock_task("Mock4", n_classes=4, n_train=120, n_dev=30, n_test=30, seed=1)
    folder = tmp_path / "mock4"
    _dataset_dict(task, class_label=class_label).save_to_disk(str(folder))
    from_file = resolve_tasks(str(_senteval_file(task, tmp_path / "mock4.txt")))
    from_hf = resolve_tasks(str(folder))
    assert from_hf[0].content_hash() == from_file[0].content_hash() == task.content_hash()
    assert _scores(from_hf, tmp_path, "hf") == _scores(from_file, tmp_path, "file")


def test_column_names_are_settable_and_a_missing_column_is_named(tmp_path):
    task = make_mock_task("M", n_train=40, n_dev=10, n_test=10)
    folder = tmp_path / "cols"
    _dataset_dict(task, text="text", label="y").save_to_disk(str(folder))
    with pytest.raises(DataError, match=r"no column 'sentence'.*columns: text, y"):
        resolve_tasks(str(folder))
    loaded = resolve_tasks(f"{folder}?sentence=text&label=y")
    assert loaded[0].content_hash() == task.content_hash()
    with pytest.raises(SentprobeError, match="unknown option 'text'"):
        resolve_tasks(f"{folder}?text=sentence")


def _rows(train, test, split_names=("train", "test")):
    return datasets.DatasetDict(
        {
            split_names[0]: datasets.Dataset.from_dict(
                {"sentence": [s for s, _ in train], "label": [y for _, y in train]}
            ),
            split_names[1]: datasets.Dataset.from_dict(
                {"sentence": [s for s, _ in test], "label": [y for _, y in test]}
            ),
        }
    )


def test_the_file_loaders_problems_fail_the_same_way(tmp_path):
    ok = [("a b", "x"), ("c d", "y")]
    unseen = tmp_path / "unseen"
    _rows(ok, [("e f", "x"), ("g h", "z")]).save_to_disk(str(unseen))
    with pytest.raises(DataError, match=r"\[test split\], line 2: label 'z' occurs in the test"):
        resolve_tasks(str(unseen))
    empty = tmp_path / "empty"
    _rows([("a b", "x"), ("  ", "y"), ("c", "y")], ok).save_to_disk(str(empty))
    with pytest.raises(DataError, match=r"\[train split\], line 2: empty sentence"):
        resolve_tasks(str(empty))
    split = tmp_path / "split"
    _rows(ok, ok, ("train", "unsupervised")).save_to_disk(str(split))
    with pytest.raises(DataError, match="unknown split 'unsupervised'"):
        resolve_tasks(str(split))
    no_test = tmp_path / "no_test"
    _rows(ok, ok, ("train", "validation")).save_to_disk(str(no_test))
    with pytest.raises(DataError, match="no test split"):
        resolve_tasks(str(no_test))


def test_cli_errors_are_one_line(tmp_path):
    ok = [("a b", "x"), ("c d", "y")]
    bad = tmp_path / "bad"
    _rows(ok, [("e f", "q")]).save_to_disk(str(bad))
    result = CliRunner().invoke(app, ["run", "-e", "minilm", "-t", str(bad), "-q"])
    assert result.exit_code == 1
    assert result.output.strip().count("\n") == 0, result.output
    assert "label 'q' occurs in the test split" in result.output


@pytest.mark.parametrize("fmt", ["hf", "parquet"])
def test_export_round_trip_same_hash_same_scores_and_a_dataset_card(tmp_path, fmt):
    out = tmp_path / f"mock-{fmt}"
    result = CliRunner().invoke(app, ["export", "mock", "-o", str(out), "--format", fmt])
    assert result.exit_code == 0, result.output
    original = resolve_tasks("mock")
    loaded = resolve_tasks(str(out))
    assert [t.name for t in loaded] == [t.name for t in original]
    assert [t.metadata for t in loaded] == [t.metadata for t in original]
    assert [t.content_hash() for t in loaded] == [t.content_hash() for t in original]
    # scored on one task (the data are equal, as the hashes say; this checks nothing else
    # about the loaded task, e.g. its label order, changes a score)
    assert _scores(loaded[1:2], tmp_path, f"{fmt}-loaded") == _scores(original[1:2], tmp_path, "o")

    # what datasets itself reads back, with the label names
    if fmt == "hf":
        dd = datasets.load_from_disk(str(out / "Mock4"))
    else:
        dd = datasets.load_dataset(str(out), "Mock4")  # through the card's configs
    assert sorted(dd) == ["test", "train", "validation"]
    assert dd["train"].features["label"].names == original[1].labels
    assert len(dd["validation"]) == len(original[1].splits["dev"])

    from huggingface_hub import DatasetCard

    card = DatasetCard.load(out / "README.md").data.to_dict()
    assert card["task_categories"] == ["text-classification"]
    assert card["license"] and "language" not in card  # the mock tasks' language is "und"
    assert [c["config_name"] for c in card["configs"]] == ["Mock", "Mock4", "MockNoDev"]
    assert "citation" in card["sentprobe"] and card["sentprobe"]["suite"] == "mock"


def test_export_of_a_manifest_suite_carries_its_manifest(tmp_path):
    out = tmp_path / "fr"
    assert CliRunner().invoke(app, ["export", "sample-fr", "-o", str(out)]).exit_code == 0
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(out / "README.md").data.to_dict()
    assert card["sentprobe"]["manifest"]["suite"] == "sample-fr"
    assert card["language"] == ["fr"]
    citation = resolve_tasks("sample-fr")[0].metadata.citation
    assert citation and citation in card["sentprobe"]["citation"]


def test_hub_specs_go_through_load_dataset(tmp_path):
    """``hf:NAME:CONFIG`` with a local folder as NAME: the Hub code path, offline."""
    out = tmp_path / "pq"
    assert (
        CliRunner().invoke(app, ["export", "mock", "-o", str(out), "-f", "parquet"]).exit_code == 0
    )
    task = resolve_tasks(f"hf:{out}:Mock4")[0]
    assert task.name == f"{out}:Mock4"
    assert task.content_hash() == resolve_tasks("mock/Mock4")[0].content_hash()
    assert task.labels == resolve_tasks("mock/Mock4")[0].labels
    with pytest.raises(SentprobeError, match="cannot load the dataset"):
        resolve_tasks(f"hf:{tmp_path / 'nothing-here'}")


def test_export_refuses_a_folder_with_files_and_leaves_nothing_on_failure(tmp_path):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "x").write_text("keep")
    result = CliRunner().invoke(app, ["export", "mock", "-o", str(taken)])
    assert result.exit_code == 1 and "not empty" in result.output
    result = CliRunner().invoke(app, ["export", "sample-kim-en", "-o", str(tmp_path / "kim")])
    assert result.exit_code == 1 and "single-sentence" in result.output
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == ["taken"]


def test_a_missing_datasets_package_names_the_extra(tmp_path, monkeypatch):
    folder = tmp_path / "d"
    _rows([("a", "x"), ("b", "y")], [("c", "x")]).save_to_disk(str(folder))
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(SentprobeError, match=r"pip install 'sentprobe\[hf-datasets\]'"):
        resolve_tasks(str(folder))


@pytest.mark.parametrize("fmt", ["hf", "parquet"])
def test_a_manifest_task_key_of_dots_is_exported_inside_the_output(tmp_path, fmt):
    """A manifest whose task key is ``..`` (or ``.``) made ``export -o parent/out`` write
    the task's splits, ``dataset_dict.json`` and ``sentprobe.json`` into ``parent``: a name
    from a file becomes one safe folder name inside ``-o``, and nothing lands beside it."""
    suite = tmp_path / "suite"
    suite.mkdir()
    lines = [f"tr\t{'a' if i % 2 else 'b'}\tsentence {i}" for i in range(8)]
    lines += ["va\ta\tdev one", "va\tb\tdev two", "te\ta\ttest one", "te\tb\ttest two"]
    (suite / "t.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (suite / "u.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = {"tasks": {"..": {"file": "t.txt"}, ".": {"file": "u.txt"}}}
    (suite / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    parent = tmp_path / "parent"
    parent.mkdir()
    result = CliRunner().invoke(app, ["export", str(suite), "-o", str(parent / "out2"), "-f", fmt])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in parent.iterdir()) == ["out2"]
    assert sorted(p.name for p in (parent / "out2").iterdir()) == ["README.md", "_", "__"]
    loaded = resolve_tasks(str(parent / "out2"))
    assert sorted(t.content_hash() for t in loaded) == sorted(
        t.content_hash() for t in resolve_tasks(str(suite))
    )


def test_a_full_disk_during_export_is_one_line_and_writes_nothing(tmp_path):
    """A full disk while ``export`` writes (here: a file size limit) is the disk's error,
    naming the output and the fix, not "unexpected OSError ... this is a bug"."""
    import resource
    import signal
    import subprocess

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(root / "src")}
    res = subprocess.run(
        [sys.executable, "-m", "sentprobe", "export", "mock", "-o", "out", "-f", "parquet"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, preexec_fn=limit,
    )  # fmt: skip
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr
    line = res.stderr.strip().splitlines()[-1]
    assert line.startswith("error: out: cannot write the export (File too large)"), line
    assert "free space or choose another -o (nothing of it was written)" in line
    assert list(tmp_path.iterdir()) == []
