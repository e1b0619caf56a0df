"""NLI labels that are right or not given: every rule measured against the release's
annotators, a rule under 80 % writes items for annotation only, and `run` refuses heuristic
labels unless asked (then marks the cells)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sentprobe.datasets.loaders.dnc import load_dnc
from sentprobe.errors import SentprobeError
from sentprobe.generation.function_words import build_function_words
from sentprobe.generation.function_words.nli import (
    MIN_RULE_AGREEMENT,
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


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    out = tmp_path_factory.mktemp("nli") / "suite"
    sets = ["nli-prepositions", "nli-comparatives", "nli-quantification", "nli-spatial"]
    result = build_function_words([NLI_PAIRS], out, sets=sets, size=None, seed=0)
    assert not result.failures, result.failures
    return out


@needs_release
def test_shipped_rule_table_is_what_the_release_says():
    from measure_nli_rules import measure

    measured = measure(RELEASE)
    shipped = json.loads(RULE_AGREEMENT_FILE.read_text())
    assert measured["rules"] == shipped["rules"]
    assert {r["labels"] for r in measured["rules"].values()} == {True, False}


@needs_release
def test_flip_rule_against_the_release_labels():
    """The negated-hypothesis rule, applied to the release's originals, reproduces the
    annotators' label of the negated member on at least 80 % of the Comp pairs."""
    from sentprobe.generation.function_words.release import read_release_set, release_sets

    items = read_release_set(release_sets(RELEASE)["nli-comparatives"])
    by_tuple: dict[int, list] = {}
    for data, meta in items:
        by_tuple.setdefault(meta["misc"]["tuple_id"], []).append(data)
    agree = n = 0
    for pair in by_tuple.values():
        if len(pair) != 2:
            continue
        negated = [" not " in f" {d['hypothesis']} " for d in pair]
        if sum(negated) != 1:
            continue
        original, mutated = (pair[1], pair[0]) if negated[0] else (pair[0], pair[1])
        n += 1
        agree += rule_label("nli-comparatives", original["label"]) == mutated["label"]
    assert n >= 40 and agree / n >= MIN_RULE_AGREEMENT


def test_rules_under_80_percent_do_not_label(suite):
    table = rule_agreement()
    assert table, "scripts/measure_nli_rules.py writes the table"
    for name, entry in table.items():
        assert rule_verified(name) == (entry["share"] >= MIN_RULE_AGREEMENT)
    data = json.loads((suite / "NLI/nli-prepositions_metadata.json").read_text())
    mutated = [m["misc"] for m in data if not m["misc"]["original"]]
    assert mutated and {m["expected_label"] for m in mutated} == {"unverified"}
    comp = json.loads((suite / "NLI/nli-comparatives_metadata.json").read_text())
    assert {m["misc"].get("expected_label") for m in comp if not m["misc"]["original"]} == {
        "heuristic"
    }
    tasks = {t.metadata.paper_name: t for t in load_dnc(suite)}
    prep = tasks["Prep"]
    assert prep.metadata.heuristic_labels == 0  # the swaps are not loaded at all
    assert any("not loaded" in w for w in prep.warnings)
    assert sum(map(len, (f["test"] for f in prep.folds or []))) == len(mutated)  # originals
    assert tasks["Comp"].metadata.heuristic_labels > 0


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
