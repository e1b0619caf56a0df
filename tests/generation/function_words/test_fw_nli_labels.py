"""NLI labels that are right or not given: a mutated item has no label until an annotated
sample confirms its rule, a set without a labelled mutated item is refused rather than
scored as its originals, the mutation must change the label, and `run` refuses heuristic
labels unless asked (then marks the cells)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sentprobe.datasets.loaders.dnc import UnverifiedSetError, load_dnc, load_dnc_set
from sentprobe.errors import SentprobeError
from sentprobe.generation.function_words import build_function_words
from sentprobe.generation.function_words.labels import (
    RULE_AGREEMENT_FILE,
    rule_agreement,
    rule_label,
    rule_verified,
)

NLI_PAIRS = Path(__file__).parent / "nli_pairs.jsonl"
RELEASE = Path(
    os.environ.get("SENTPROBE_DNC", Path(__file__).parents[4] / "shared/data/dnc_function_words")
)
needs_release = pytest.mark.skipif(
    not RELEASE.is_dir(), reason="the DNC release is not in ../shared/data"
)
CHANGING = ["nli-prepositions", "nli-comparatives", "nli-quantification", "nli-spatial"]


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    out = tmp_path_factory.mktemp("nli") / "suite"
    result = build_function_words([NLI_PAIRS], out, sets=CHANGING, size=None, seed=0)
    assert not result.failures, result.failures
    return out


def _items(out: Path, name: str) -> list[tuple[dict, dict]]:
    data = json.loads((out / f"NLI/{name}_data.json").read_text())
    meta = json.loads((out / f"NLI/{name}_metadata.json").read_text())
    return list(zip(data, meta))


@needs_release
def test_shipped_rule_table_is_what_the_release_says():
    from measure_nli_rules import measure

    measured = measure(RELEASE)
    shipped = json.loads(RULE_AGREEMENT_FILE.read_text())
    assert measured["rules"] == shipped["rules"]
    assert {r["reaches_bar"] for r in measured["rules"].values()} == {True, False}


@needs_release
def test_negated_hypothesis_rule_on_release_examples():
    """Three Comp tuples of the release, their labels written out by hand: the rule maps
    the original's label to the annotators' label of the negated member."""
    from sentprobe.generation.function_words.release import read_release_set, release_sets

    labels = {d["pair-id"]: d["label"] for d, _ in read_release_set(
        release_sets(RELEASE)["nli-comparatives"])}  # fmt: skip
    # (original, negated): hypotheses "... has a larger GDP" / "... has not a larger GDP"
    for original, negated, gold in [(572486, 572485, "contradiction"),
                                    (572487, 572488, "entailment"),
                                    (572490, 572489, "entailment")]:  # fmt: skip
        assert labels[negated] == gold
        assert rule_label("nli-comparatives", labels[original]) == gold


def test_rules_label_only_after_an_annotated_sample_confirms_them():
    measured_only = {"r": {"n": 157, "agree": 139, "share": 0.885}}
    assert not rule_verified("r", measured_only)  # the release's agreement is not enough
    small = {"r": {**measured_only["r"], "annotated": {"n": 20, "agree": 19, "share": 0.95}}}
    assert not rule_verified("r", small)
    weak = {"r": {**measured_only["r"], "annotated": {"n": 80, "agree": 56, "share": 0.7}}}
    assert not rule_verified("r", weak)
    good = {"r": {**measured_only["r"], "annotated": {"n": 80, "agree": 72, "share": 0.9}}}
    assert rule_verified("r", good)
    # no annotated sample is on record yet: no generated NLI item carries a rule's label
    assert not any(rule_verified(name) for name in rule_agreement())


@pytest.mark.parametrize("name", CHANGING)
def test_mutated_items_carry_no_label_and_change_it(suite, name):
    items = _items(suite, name)
    originals = {m["misc"]["tuple_id"]: d for d, m in items if m["misc"]["original"]}
    mutated = [(d, m) for d, m in items if not m["misc"]["original"]]
    assert len(mutated) == len(originals) >= 10
    expected = {"entailment": "contradiction", "contradiction": "entailment"}
    if name == "nli-prepositions":
        expected = {"entailment": "neutral", "contradiction": "neutral"}
    for d, m in mutated:
        assert d["label"] == "" and d["binary-label"] is None
        assert m["misc"]["expected_label"] == "unverified"
        original = originals[m["misc"]["tuple_id"]]
        assert original["label"] != "neutral"  # its mutation would not change the label
        assert m["misc"]["candidate_label"] == expected[original["label"]]
        if name != "nli-prepositions":
            assert " not " in f" {d['hypothesis']} "
            assert " not " not in f" {original['hypothesis']} "


@pytest.mark.parametrize("name", CHANGING)
def test_a_set_of_unverified_mutations_is_refused_not_loaded_as_its_originals(suite, name):
    with pytest.raises(UnverifiedSetError, match=f"{name}: all .* mutated items await annotation"):
        load_dnc_set(suite / f"NLI/{name}_data.json")
    with pytest.raises(UnverifiedSetError, match="sentprobe annotate export"):
        load_dnc(suite)


def test_run_refuses_a_set_of_unverified_mutations_in_one_line(suite, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from sentprobe.cli.main import app

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", "-t", str(suite), "--baselines", "majority"])
    assert result.exit_code != 0 and isinstance(result.exception, SystemExit)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "nli-prepositions: all" in lines[0], result.output
    assert "sentprobe annotate export" in lines[0]


def test_run_refuses_heuristic_labels_unless_asked_and_marks_the_cells(tmp_path):
    from dnc_fixture import nli_items, write_set
    from sentprobe.evaluation.runner import run
    from sentprobe.reporting.tables import HEURISTIC, results_table

    data, meta = nli_items(60)
    for m in meta[::3]:
        m["misc"]["expected_label"] = "heuristic"
    write_set(tmp_path / "gen/NLI", "nli-comparatives", data, meta)
    tasks = load_dnc(tmp_path / "gen", suite="gen")
    assert tasks[0].metadata.heuristic_labels == 20
    common = {"baselines": "majority", "results": tmp_path / "r.sqlite", "progress": False,
              "cache_dir": tmp_path / "cache"}  # fmt: skip
    with pytest.raises(SentprobeError, match="--allow-heuristic-labels"):
        run([], tasks, **common)
    frame = run([], tasks, allow_heuristic_labels=True, **common)
    assert all(e.get("heuristic_labels") == 20 for e in frame["extra"])
    assert HEURISTIC in results_table(frame)


def test_nli_train_leaves_out_the_pairs_the_probed_sets_hold(tmp_path):
    from dnc_fixture import nli_items, write_set
    from sentprobe.datasets.loaders.nli import load_nli_pairs
    from sentprobe.evaluation.folds import without_evaluated_pairs
    from sentprobe.evaluation.runner import run

    data, meta = nli_items(60)
    write_set(tmp_path / "rel/NLI", "nli-negation", data, meta)
    tasks = load_dnc(tmp_path / "rel", suite="rel")
    train = tmp_path / "train.jsonl"
    rows = (
        [  # three of the set's own pairs (as MNLI spells them: no space before ".")
            {
                "premise": d["context"].replace(" .", "."),
                "hypothesis": d["hypothesis"],
                "label": "neutral",
            }
            for d in data[:3]
        ]
        + [
            {"premise": f"A cat sat {i}.", "hypothesis": "A cat sat.", "label": lab}
            for i, lab in enumerate(["entailment", "contradiction", "neutral"] * 10)
        ]
    )
    train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pairs = load_nli_pairs(train)
    kept = without_evaluated_pairs(pairs, tasks)
    assert (len(pairs), len(kept), kept.dropped) == (33, 30, 3) and kept.sha != pairs.sha
    assert any("3 of 33 training pairs left out" in w for w in tasks[0].warnings)
    common = {"baselines": "majority", "cache_dir": tmp_path / "cache", "progress": False,
              "nli_train": train}  # fmt: skip
    frame = run([], load_dnc(tmp_path / "rel"), results=tmp_path / "a.sqlite", **common)
    assert {e["nli_train_dropped"] for e in frame["extra"]} == {3}
    frame = run([], load_dnc(tmp_path / "rel"), results=tmp_path / "b.sqlite",
                keep_nli_overlap=True, **common)  # fmt: skip
    assert {e["nli_train_dropped"] for e in frame["extra"]} == {0}


def test_pair_accuracy_counts_a_pair_right_only_when_all_its_items_are():
    from sentprobe.evaluation.folds import pair_accuracy

    got = pair_accuracy(["a", "a", "b", "b", "c"], [True, True, True, False, True])
    assert got == {"pair_accuracy": 0.5, "pairs": 2}  # "c" has one item: not a pair
    assert pair_accuracy([], []) == {}


def test_report_by_subtype_shows_pair_accuracy(tmp_path):
    from dnc_fixture import nli_items, write_set
    from sentprobe.analysis.subtypes import PAIRS, subtype_scores
    from sentprobe.evaluation.runner import run
    from sentprobe.evaluation.store import ResultsStore

    data, meta = nli_items(60)
    for k, m in enumerate(meta):
        m["misc"]["tuple_id"] = k // 2  # 30 minimal pairs
    write_set(tmp_path / "rel/NLI", "nli-spatial", data, meta)
    tasks = load_dnc(tmp_path / "rel")
    assert tasks[0].folds and all(f["test"].pairs for f in tasks[0].folds)
    frame = run([], tasks, baselines="majority", results=tmp_path / "r.sqlite",
                cache_dir=tmp_path / "c", progress=False)  # fmt: skip
    (extra,) = list(frame["extra"])
    with ResultsStore(tmp_path / "r.sqlite", readonly=True) as store:
        found = store.predictions_for(frame["key"])
    (predictions,) = found.values()
    right = predictions.correct
    # folds keep a tuple together, in item order of the folds' test parts
    scores = subtype_scores(frame, found)
    row = scores[scores["subtype"] == PAIRS].iloc[0]
    assert row["n"] == extra["pairs"] == 30
    assert row["accuracy"] == pytest.approx(100 * extra["pair_accuracy"])
    assert extra["pair_accuracy"] <= right.mean()


def test_annotated_items_load_with_the_votes_labels(suite, tmp_path):
    """The round trip gives the unlabelled items their voted labels: the final suite loads,
    and each mutated item records the rule's guess it replaced."""
    import csv

    from sentprobe.analysis.votes import export_items, import_votes

    export_items(suite, tmp_path / "items.csv")
    with (tmp_path / "items.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    answer = {"entailment": "5", "neutral": "3", "contradiction": "1"}
    items = {f"{name}:{d['pair-id']}": (d, m) for name in CHANGING for d, m in _items(suite, name)}
    votes = tmp_path / "votes.csv"
    with votes.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["item_id", "answer"])
        for r in rows:
            data, meta = items[r["item_id"]]
            label = data["label"] or meta["misc"]["candidate_label"]
            writer.writerows([[r["item_id"], answer[label]]] * 3)
    import_votes(suite, votes, tmp_path / "final")
    (task,) = [t for t in load_dnc(tmp_path / "final") if t.metadata.paper_name == "Comp"]
    assert sum(len(f["test"]) for f in task.folds or []) == len(_items(suite, "nli-comparatives"))
    final = _items(tmp_path / "final", "nli-comparatives")
    mutated = [(d, m) for d, m in final if not m["misc"]["original"]]
    assert mutated and all(m["misc"]["expected_label"] == "annotated" for _, m in mutated)
    assert all(d["label"] == m["misc"]["expected_label_before_votes"] for d, m in mutated)


def test_an_nli_set_that_cannot_fill_ten_folds_fails_alone(tmp_path):
    small = tmp_path / "small.jsonl"
    small.write_text("".join(NLI_PAIRS.read_text().splitlines(keepends=True)[:40]))
    result = build_function_words(
        [small], tmp_path / "out", sets=CHANGING, size=None, seed=0, skip_failed=True
    )
    assert result.failures and result.sets and result.written
    for name, reason in result.failures.items():
        assert "under the 10 that fill" in reason, (name, reason)
    assert {fw.name for fw in result.sets} | set(result.failures) == set(CHANGING)


def test_quality_md_states_each_rule_and_the_sets_not_scored(suite, tmp_path):
    import shutil

    from sentprobe.analysis.quality import write_function_word_quality

    copy = tmp_path / "suite"
    shutil.copytree(suite, copy)
    write_function_word_quality(copy, json.loads((copy / "manifest.json").read_text()))
    quality = (copy / "QUALITY.md").read_text()
    assert "| nli-comparatives:negated-hypothesis | 90.9 % of 44 | none | no |" in quality
    assert "given that the label changed" in quality
    for name in CHANGING:
        assert f"- {name}: all " in quality and "mutated items await annotation" in quality
