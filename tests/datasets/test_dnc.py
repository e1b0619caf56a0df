"""The DNC loader (Kim et al. 2019): folds, pairs, sub-types, every error case, the real data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dnc_fixture import acceptability_items, nli_items, write_release, write_set
from sentprobe.datasets import resolve_tasks
from sentprobe.datasets.loaders import load_tasks
from sentprobe.datasets.loaders.dnc import (
    item_groups,
    load_dnc,
    load_dnc_set,
    negation_group,
    nli_folds,
    wh_group,
)
from sentprobe.datasets.loaders.nli import load_nli_pairs
from sentprobe.errors import DataError, SentprobeError

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "dnc_function_words"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_folds_pairs_and_groups(tmp_path):
    tasks = load_dnc(write_release(tmp_path), suite="mini")
    assert [t.name for t in tasks] == ["mini/wh-words", "mini/EOS", "mini/Negation"]
    wh, eos, neg = tasks
    assert wh.metadata.format == "acceptability-single" and wh.metadata.probe == "kim-mlp"
    assert len(wh.folds or []) == 10
    tested = [s for fold in wh.folds or [] for s in fold["test"].sentences]
    assert sorted(tested) == sorted(s for split in wh.splits.values() for s in split.sentences)
    assert wh.splits["test"].sentences2 is None
    groups = {g for fold in wh.folds or [] for g in fold["test"].groups or []}
    assert groups == {"none", "who", "what", "how"}  # the wh-word of each fixture sentence
    assert eos.metadata.format == "acceptability-pair"
    assert eos.splits["train"].sentences2 and eos.splits["train"].sentences2[0].startswith("and")
    assert set(eos.sentences()) >= set(eos.splits["train"].sentences2)
    assert neg.metadata.format == "nli-pair" and neg.metadata.labels == (
        "entailment",
        "neutral",
        "contradiction",
    )
    assert "P:lexical H:explicit" in {g for f in neg.folds or [] for g in f["test"].groups or []}
    # the generic loader recognises the folder
    assert [t.name for t in load_tasks(tmp_path)] == ["wh-words", "EOS", "Negation"]


def test_group_rules():
    assert wh_group("Who knows why ?", {}) == "several"
    assert wh_group("I know how .", {}) == "how"
    assert wh_group("Nothing here .", {}) == "none"
    assert negation_group("", {"task_desc": "lexpneg-unchanged"}) == "P:both H:none"
    assert negation_group("", {"task_desc": "odd"}) == "odd"


def test_subtype_in_metadata_wins(tmp_path):
    data, meta = acceptability_items()
    for m in meta:
        m["misc"]["subtype"] = "given"
    task = load_dnc_set(write_set(tmp_path, "acceptability-whwords", data, meta))
    assert set(task.splits["test"].groups or []) == {"given"}


def test_nli_folds_keep_groups_together_and_test_each_item_once():
    labels = ["a"] * 30 + ["b"] * 20
    groups = [i // 5 for i in range(50)]  # ten groups of five
    folds = nli_folds(labels, groups)
    assert all(sum(f[i] == "test" for f in folds) == 1 for i in range(len(labels)))
    assert all(sum(f[i] == "dev" for f in folds) == 1 for i in range(len(labels)))
    for f in folds:
        assert all(len({f[i] for i in range(g * 5, g * 5 + 5)}) == 1 for g in range(10))
        assert f.count("test") == 5
    assert nli_folds(labels, groups) == folds  # seeded
    assert item_groups([["x"], ["y"], ["x", "z"], ["z"]]) == [0, 1, 0, 0]


def _error(tmp_path, stem, data, meta) -> str:
    path = write_set(tmp_path, stem, data, meta)
    with pytest.raises(DataError) as info:
        load_dnc_set(path)
    return str(info.value)


def test_malformed_json(tmp_path):
    _, meta = acceptability_items()
    message = _error(tmp_path, "acceptability-whwords", '[{"context": "x",', meta)
    assert "acceptability-whwords_data.json" in message and "malformed JSON" in message


def test_missing_metadata_entry(tmp_path):
    data, meta = acceptability_items()
    message = _error(tmp_path, "acceptability-whwords", data, meta[1:])
    assert "pair-id 1000" in message and "no entry in acceptability-whwords_metadata" in message


def test_missing_metadata_file(tmp_path):
    data, _ = acceptability_items()
    path = write_set(tmp_path, "acceptability-def", data, [])
    path.with_name("acceptability-def_metadata.json").unlink()
    with pytest.raises(DataError, match="no metadata file"):
        load_dnc_set(path)


def test_unknown_label(tmp_path):
    data, meta = acceptability_items()
    data[3]["label"] = "entailment"
    message = _error(tmp_path, "acceptability-whwords", data, meta)
    assert "pair-id 1003" in message and "unknown label 'entailment'" in message


def test_fold_lacking_a_split(tmp_path):
    data, meta = acceptability_items()
    for m in meta:  # nothing is dev in fold 4
        if m["misc"]["fold4"] == "dev":
            m["misc"]["fold4"] = "train"
    message = _error(tmp_path, "acceptability-whwords", data, meta)
    assert "fold4 has no dev items" in message and "_metadata.json" in message


def test_bad_fold_value_and_missing_folds(tmp_path):
    data, meta = acceptability_items()
    meta[5]["misc"]["fold2"] = "holdout"
    assert "pair-id 1005: fold2 is 'holdout'" in _error(tmp_path, "acceptability-x", data, meta)
    data, meta = acceptability_items()
    for m in meta:
        m["misc"] = {}
    assert "no fold1..fold10" in _error(tmp_path, "acceptability-x", data, meta)


def test_item_tested_twice(tmp_path):
    data, meta = acceptability_items()
    meta[0]["misc"]["fold5"] = "test"  # item 0 is also tested in fold 1
    meta[0]["misc"]["fold1"] = "test"
    assert "in the test split of 2 folds" in _error(tmp_path, "acceptability-x", data, meta)


def test_pair_set_without_hypothesis(tmp_path):
    data, meta = nli_items()
    data[2]["hypothesis"] = ""
    assert "pair-id 2002: empty 'hypothesis'" in _error(tmp_path, "nli-negation", data, meta)


def test_not_a_release_folder(tmp_path):
    with pytest.raises(DataError, match="no \\*_data.json"):
        load_dnc(tmp_path)


def test_missing_release_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("SENTPROBE_DNC", str(tmp_path / "nowhere"))
    with pytest.raises(SentprobeError, match="SENTPROBE_DNC"):
        resolve_tasks("kim2019/EOS")


def test_registered_suite_reads_sentprobe_dnc(monkeypatch, tmp_path):
    write_release(tmp_path)
    monkeypatch.setenv("SENTPROBE_DNC", str(tmp_path))
    (task,) = resolve_tasks("kim2019/EOS")
    assert task.name == "kim2019/EOS" and task.metadata.format == "acceptability-pair"


def test_nli_training_file(tmp_path):
    pairs = load_nli_pairs(FIXTURES / "nli_tiny.jsonl")
    assert len(pairs) == 120 and set(pairs.labels) == {"entailment", "neutral", "contradiction"}
    tsv = tmp_path / "mnli.tsv"
    tsv.write_text(
        "sentence1\tsentence2\tgold_label\nA b .\tA .\tentailment\nA b .\tC .\t-\n"
        "A b .\tNot a .\tcontradiction\n"
    )
    assert load_nli_pairs(tsv).labels == ["entailment", "contradiction"]  # "-" skipped
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"premise": "a", "hypothesis": "b", "label": "entailment"})
        + "\n"
        + json.dumps({"premise": "a", "hypothesis": "b", "label": "maybe"})
        + "\n"
    )
    with pytest.raises(DataError, match=r"bad.jsonl, line 2: unknown label 'maybe'"):
        load_nli_pairs(bad)
    header = tmp_path / "h.tsv"
    header.write_text("text\tlabel\nx\tentailment\n")
    with pytest.raises(DataError, match="line 1: header lacks column"):
        load_nli_pairs(header)


@pytest.mark.skipif(not REAL.is_dir(), reason="needs ../shared/data/dnc_function_words")
def test_real_release():
    tasks = load_dnc(REAL, suite="kim2019")
    sizes = {t.metadata.paper_name: sum(len(f["test"]) for f in t.folds or []) for t in tasks}
    # the sizes of the paper's Table 3
    assert sizes == {
        "wh-words": 584,
        "Def": 508,
        "Coord": 456,
        "EOS": 478,
        "Prep": 358,
        "Comp": 89,
        "Quant": 323,
        "Spatial": 157,
        "Negation": 591,
    }
    negation = tasks[-1]
    # the fallback's folds never split the mutations of one MNLI pair (same premise)
    for fold in negation.folds or []:
        test = set(fold["test"].sentences)
        assert not test & set(fold["train"].sentences)
    patterns = {g for f in negation.folds or [] for g in f["test"].groups or []}
    assert len(patterns) == 16
    prep = tasks[4]
    assert "in front of" in {g for f in prep.folds or [] for g in f["test"].groups or []}


def test_the_kim2019_suite_is_the_releases_nine_sets():
    """The generated-only collocation sets are no part of the release: the suite names the
    paper's nine, each read from its release file."""
    from sentprobe import registry

    names = registry.suites.get("kim2019")
    assert [n.removeprefix("kim2019/") for n in names] == [
        "wh-words", "Def", "Coord", "EOS", "Prep", "Comp", "Quant", "Spatial", "Negation",
    ]  # fmt: skip


def test_a_single_data_file_is_a_task(tmp_path):
    """``-t .../acceptability-eos_data.json`` (or its metadata file): the set alone, with the
    same content as when the whole release is loaded."""
    release = write_release(tmp_path)
    whole = {t.metadata.paper_name: t for t in resolve_tasks(str(release))}
    for name in ("acceptability-eos_data.json", "acceptability-eos_metadata.json"):
        (task,) = resolve_tasks(str(release / "ACCEPTABILITY" / name))
        assert task.content_hash() == whole["EOS"].content_hash()
        assert task.folds is not None and len(task.folds) == len(whole["EOS"].folds)
