"""`annotate import` keeps an (original, mutated) NLI pair only when its two labels differ, as
the release does: on the release's own Prep pairs, voted as the release's annotators voted,
every pair survives; a pair whose votes agree on one label is dropped."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from sentprobe.analysis.votes import import_votes, item_id

RELEASE = Path(
    os.environ.get("SENTPROBE_DNC", Path(__file__).parents[3] / "shared/data/dnc_function_words")
)
LIKERT_OF = {"entailment": "5", "neutral": "3", "contradiction": "1"}


@pytest.mark.skipif(not RELEASE.is_dir(), reason="the DNC release is not in ../shared/data")
def test_label_must_change_on_the_release_pairs(tmp_path):
    suite = tmp_path / "suite/NLI"
    suite.mkdir(parents=True)
    for kind in ("data", "metadata"):
        shutil.copy(RELEASE / f"NLI/nli-prepositions_{kind}.json", suite)
    data = json.loads((suite / "nli-prepositions_data.json").read_text())
    meta = {
        m["pair-id"]: m for m in json.loads((suite / "nli-prepositions_metadata.json").read_text())
    }
    by_tuple: dict[int, list[int]] = {}
    for d in data:
        by_tuple.setdefault(meta[d["pair-id"]]["misc"]["tuple_id"], []).append(d["pair-id"])
    planted = next(iter(by_tuple.values()))  # this pair's votes: both members entailment
    with (tmp_path / "votes.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "answer"])
        for d in data:
            votes = meta[d["pair-id"]]["misc"]["assigned_labels"].split(",")
            if d["pair-id"] in planted:
                votes = ["entailment"] * 3
            for label in votes:
                w.writerow([item_id("nli-prepositions", d["pair-id"]), LIKERT_OF[label]])
    (outcome,) = import_votes(tmp_path / "suite", tmp_path / "votes.csv", tmp_path / "final")
    kept = {d["pair-id"] for d, _ in outcome.kept}
    assert outcome.reasons["dropped: the mutation did not change the label"] == 2
    assert not kept & set(planted)
    # every other release pair has two different labels: all kept (majority = release label)
    assert len(kept) == len(data) - 2
    labels = {d["pair-id"]: d["label"] for d, _ in outcome.kept}
    assert all(labels[p] == d["label"] for d in data for p in [d["pair-id"]] if p in labels)
