"""Hugging Face datasets both ways: tasks written with ``datasets`` load with ``-t`` and score
like the same data as a SentEval file; ``sentprobe export`` round-trips (same hash, same
scores) with a dataset card the Hub reads. Offline: every dataset is written here."""

from __future__ import annotations

import json
import os
import sys
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from sentprobe.cli.main import app
from sentprobe.datasets.builtin import resolve_tasks
from sentprobe.datasets.loaders.hf import shared_source
from sentprobe.datasets.mock import make_mock_task
from sentprobe.encoders.custom import CallableEncoder
from sentprobe.errors import DataError, SentprobeError
from sentprobe.evaluation.runner import run

datasets = pytest.importorskip("datasets", minversion="5.2")  # the version these were run with

KIM_RELEASE = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "dnc_function_words"


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
    assert card["sentprobe"] == {"suite": "mock", "format": fmt}


def test_export_of_a_manifest_suite_carries_its_manifest(tmp_path):
    out = tmp_path / "fr"
    assert CliRunner().invoke(app, ["export", "sample-fr", "-o", str(out)]).exit_code == 0
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(out / "README.md")
    assert card.data.to_dict()["language"] == ["fr"]
    assert json.loads((out / "manifest.json").read_text())["suite"] == "sample-fr"
    assert "manifest" not in card.data.to_dict()["sentprobe"]  # not 40 KB of YAML
    assert len(card.content.split("---")[1]) < 4000
    assert "@inproceedings{ravishankar-etal-2019-probing," in card.text  # BibTeX


def test_hub_specs_go_through_load_dataset(tmp_path):
    """``hf:NAME:CONFIG`` with a local folder as NAME: the Hub code path, offline."""
    out = tmp_path / "pq"
    assert (
        CliRunner().invoke(app, ["export", "mock", "-o", str(out), "-f", "parquet"]).exit_code == 0
    )
    task = resolve_tasks(f"hf:{out}:Mock4")[0]
    original = resolve_tasks("mock/Mock4")[0]
    assert task.name == "mock/Mock4" and task.metadata == original.metadata  # sentprobe.json
    assert task.content_hash() == original.content_hash()
    with pytest.raises(SentprobeError, match="cannot load the dataset"):
        resolve_tasks(f"hf:{tmp_path / 'nothing-here'}")


@pytest.mark.parametrize("fmt", ["hf", "parquet"])
def test_an_exported_suite_loads_whole_through_hf_with_its_metadata(tmp_path, fmt):
    out = tmp_path / "en"
    assert (
        CliRunner().invoke(app, ["export", "sample-en", "-o", str(out), "-f", fmt]).exit_code == 0
    )
    original = resolve_tasks("sample-en")
    loaded = resolve_tasks(f"hf:{out}")  # every config, one suite, as ORG/NAME on the Hub
    assert [t.name for t in loaded] == [t.name for t in original]
    assert [t.metadata for t in loaded] == [t.metadata for t in original]
    assert [t.content_hash() for t in loaded] == [t.content_hash() for t in original]
    assert {t.metadata.language for t in loaded} == {"en"}
    assert loaded[5].metadata.license == original[5].metadata.license != ""


def test_a_dataset_without_sidecars_takes_language_and_license_from_its_card(tmp_path):
    out = tmp_path / "plain"
    assert CliRunner().invoke(app, ["export", "sample-fr", "-o", str(out)]).exit_code == 0
    for sidecar in out.glob("*/sentprobe.json"):
        sidecar.unlink()
    task = resolve_tasks(f"hf:{out}:SubjNum")[0]
    assert task.name == f"{out}:SubjNum"
    assert task.metadata.language == "fr"  # the card's language, not "und"
    assert task.metadata.license == "mpl-2.0"
    # without sentprobe's section the configs are not one suite: name one, the error lists them
    card = (out / "README.md").read_text()
    (out / "README.md").write_text(card.replace("sentprobe:\n  suite: sample-fr", "x:\n  y: z"))
    with pytest.raises(SentprobeError, match=r"Config name is missing.*'SentLen'.*'SubjNum'"):
        resolve_tasks(f"hf:{out}")


def test_a_revision_is_passed_to_load_dataset(tmp_path, monkeypatch):
    out = tmp_path / "pq"
    assert (
        CliRunner().invoke(app, ["export", "mock", "-o", str(out), "-f", "parquet"]).exit_code == 0
    )
    seen = []
    real = datasets.load_dataset

    def load_dataset(name, config=None, revision=None, **kw):
        seen.append((name, config, revision))
        return real(name, config)

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    tasks = resolve_tasks(f"hf:{out}@v1.0")
    assert seen == [(str(out), c, "v1.0") for c in ("Mock", "Mock4", "MockNoDev")]
    assert [t.name for t in tasks] == ["mock/Mock", "mock/Mock4", "mock/MockNoDev"]


def test_the_card_passes_the_hubs_metadata_rules(tmp_path):
    """What the Hub's card spec asks, checked offline: licence name and link for "other",
    a known size category, sources, annotation creators; the YAML parses as a DatasetCard."""
    from huggingface_hub import DatasetCard, DatasetCardData

    out = tmp_path / "en"
    assert CliRunner().invoke(app, ["export", "sample-en", "-o", str(out)]).exit_code == 0
    card = DatasetCard.load(out / "README.md")
    data = card.data.to_dict()
    assert isinstance(card.data, DatasetCardData)
    assert data["license"] == "other" and data["license_name"] == "sample-en-license"
    assert data["license_link"] == "LICENSE.md" and (out / "LICENSE.md").is_file()
    assert "PSF-2.0" in (out / "LICENSE.md").read_text()
    assert data["size_categories"] == ["10K<n<100K"]  # 10 tasks of 1,800 items
    assert data["annotations_creators"] == ["machine-generated"]
    assert data["source_datasets"] == ["original"]
    assert "@inproceedings{conneau-etal-2018-cram," in card.text


def test_export_refuses_a_folder_with_files_and_leaves_nothing_on_failure(tmp_path, monkeypatch):
    from sentprobe.datasets import export

    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "x").write_text("keep")
    result = CliRunner().invoke(app, ["export", "mock", "-o", str(taken)])
    assert result.exit_code == 1 and "not empty" in result.output

    def fail(*args, **kwargs):  # after the task folders are written
        raise SentprobeError("card failed")

    monkeypatch.setattr(export, "dataset_card", fail)
    result = CliRunner().invoke(app, ["export", "sample-kim-en", "-o", str(tmp_path / "kim")])
    assert result.exit_code == 1 and "card failed" in result.output
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == ["taken"]


def test_a_missing_datasets_package_names_the_extra(tmp_path, monkeypatch):
    folder = tmp_path / "d"
    _rows([("a", "x"), ("b", "y")], [("c", "x")]).save_to_disk(str(folder))
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(SentprobeError, match=r"pip install 'sentprobe\[hf-datasets\]'"):
        resolve_tasks(str(folder))


class _FakeHfApi:
    """Records what ``sentprobe push`` asks of the Hub and keeps a copy of the upload."""

    calls: list = []
    uploaded: dict = {}

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", repo_id, kwargs))

    def upload_folder(self, *, folder_path, repo_id, repo_type, commit_message):
        from pathlib import Path

        root = Path(folder_path)
        self.uploaded.update(
            {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
        )
        self.calls.append(("upload_folder", repo_id, repo_type, commit_message))
        return type(
            "Commit", (), {"commit_url": f"https://huggingface.co/datasets/{repo_id}/commit/1"}
        )


def test_push_exports_and_uploads_a_suite(tmp_path, monkeypatch):
    import huggingface_hub

    _FakeHfApi.calls, _FakeHfApi.uploaded = [], {}
    monkeypatch.setattr(huggingface_hub, "HfApi", _FakeHfApi)
    result = CliRunner().invoke(app, ["push", "mock", "me/mock-probing", "--private"])
    assert result.exit_code == 0, result.output
    assert _FakeHfApi.calls == [
        (
            "create_repo",
            "me/mock-probing",
            {"repo_type": "dataset", "private": True, "exist_ok": True},
        ),
        ("upload_folder", "me/mock-probing", "dataset", "sentprobe export of mock"),
    ]
    files = _FakeHfApi.uploaded
    assert {"README.md", "LICENSE.md", "Mock4/train.parquet", "Mock4/sentprobe.json"} <= set(files)
    assert "uploaded to https://huggingface.co/datasets/me/mock-probing/commit/1" in result.output
    # what was uploaded loads back as the suite, as -t hf:me/mock-probing would
    copy = tmp_path / "hub-copy"
    for rel, data in files.items():
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_bytes(data)
    loaded, original = resolve_tasks(f"hf:{copy}"), resolve_tasks("mock")
    assert [(t.name, t.content_hash()) for t in loaded] == [
        (t.name, t.content_hash()) for t in original
    ]


def test_push_failure_is_one_line(tmp_path, monkeypatch):
    import huggingface_hub

    class Refusing(_FakeHfApi):
        def create_repo(self, repo_id, **kwargs):
            raise RuntimeError("401 Unauthorized\nmore detail")

    monkeypatch.setattr(huggingface_hub, "HfApi", Refusing)
    result = CliRunner().invoke(app, ["push", "mock", "me/x"])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "to me/x: 401 Unauthorized" in result.output


@pytest.mark.parametrize("fmt", ["hf", "parquet"])
def test_pairs_subtypes_and_folds_round_trip(tmp_path, fmt):
    """Kim et al.'s format: GLUE's sentence1/sentence2, subtype, pair_id and each row's
    place in every fold; the same tasks come back (hash, metadata, folds) by folder and hf:."""
    out = tmp_path / "kim"
    result = CliRunner().invoke(app, ["export", "sample-kim-en", "-o", str(out), "-f", fmt])
    assert result.exit_code == 0, result.output
    original = resolve_tasks("sample-kim-en")
    assert any(t.splits["train"].sentences2 is not None for t in original)  # EOS: pairs
    assert any(t.splits["train"].groups is not None for t in original)  # wh-words: sub-types
    for spec in (str(out), f"hf:{out}"):
        loaded = resolve_tasks(spec)
        assert [t.name for t in loaded] == [t.name for t in original]
        # the same metadata; a local source path is shared as its file name only
        shared = [replace(t.metadata, source=shared_source(t.metadata.source)) for t in original]
        assert [t.metadata for t in loaded] == shared
        assert [t.content_hash() for t in loaded] == [t.content_hash() for t in original]
        for a, b in zip(original, loaded, strict=True):
            assert len(b.folds) == len(a.folds) == 10
            assert b.folds[3]["test"] == a.folds[3]["test"]  # same items, same order
    features = (
        datasets.load_from_disk(str(out / "EOS"))
        if fmt == "hf"
        else datasets.load_dataset(str(out), "EOS")
    )["train"].features
    # EOS items are couples of sentences, not minimal pairs: no pair_id (the release's NLI
    # sets carry one: test_kims_release_exports_with_crowdsourced_labels)
    assert list(features) == ["sentence1", "sentence2", "label", "folds"]


@pytest.mark.skipif(not KIM_RELEASE.is_dir(), reason="needs Kim et al.'s release in ../shared")
def test_kims_release_exports_with_crowdsourced_labels(tmp_path, monkeypatch):
    monkeypatch.setenv("SENTPROBE_DNC", str(KIM_RELEASE))
    out = tmp_path / "kim2019"
    assert CliRunner().invoke(app, ["export", "kim2019", "-o", str(out)]).exit_code == 0
    original = resolve_tasks("kim2019")
    loaded = resolve_tasks(f"hf:{out}")
    assert [t.content_hash() for t in loaded] == [t.content_hash() for t in original]
    from huggingface_hub import DatasetCard

    data = DatasetCard.load(out / "README.md").data.to_dict()
    assert data["annotations_creators"] == ["crowdsourced"]
    assert data["size_categories"] == ["1K<n<10K"]  # the paper's 3,544 items


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
    exported = sorted(p.name for p in (parent / "out2").iterdir())
    assert exported == ["LICENSE.md", "README.md", "_", "__", "manifest.json"]
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


@pytest.mark.parametrize("first,second", [("sentence1", "sentence2"), ("question", "sentence")])
def test_a_pair_dataset_without_sidecar_is_probed_on_both_sentences(tmp_path, first, second):
    """An MRPC/QNLI-style parquet export without ``sentprobe.json``: the label depends on the
    second sentence only, so a probe of the first alone would sit at chance."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    folder = tmp_path / "mrpc"
    folder.mkdir()
    for name, n in (("train", 120), ("validation", 40), ("test", 40)):
        labels = rng.integers(0, 2, n)
        table = pa.table(
            {
                first: [f"the first sentence number {i} ." for i in range(n)],
                second: [f"it is {'yes' if y else 'no'} {i} ." for i, y in enumerate(labels)],
                "label": labels.tolist(),
                "idx": list(range(n)),
            }
        )
        pq.write_table(table, folder / f"{name}.parquet")
    (task,) = resolve_tasks(str(folder))
    assert task.metadata.format == "nli-pair"
    assert task.splits["test"].sentences2[0].startswith("it is")
    scores = dict(_scores([task], tmp_path, "pairs"))
    assert scores["hashed"] > 0.9  # the first sentence alone carries nothing


def test_a_local_folder_rewritten_in_place_is_read_afresh(tmp_path):
    """`datasets` caches local files by path and modification time: a folder exported again
    in place (same path, same times) must not come back as its old rows."""
    import os

    import pandas as pd

    out = tmp_path / "pq"
    assert (
        CliRunner().invoke(app, ["export", "mock", "-o", str(out), "-f", "parquet"]).exit_code == 0
    )
    before = resolve_tasks(f"hf:{out}:Mock")[0]
    file = out / "Mock" / "train.parquet"
    stat = file.stat()
    frame = pd.read_parquet(file)
    frame.loc[0, "sentence"] = "a sentence that was not there before ."
    frame.to_parquet(file, index=False)
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    after = resolve_tasks(f"hf:{out}:Mock")[0]
    assert "a sentence that was not there before ." in after.splits["train"].sentences
    assert after.content_hash() != before.content_hash()
