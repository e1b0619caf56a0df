"""The voting rules of the human-judgment round trip (Kim et al. 2019, sec. 2.4) and the
agreement statistics, against published worked examples."""

from __future__ import annotations

import pytest

from sentprobe.analysis.votes import (
    decide,
    fleiss_kappa,
    krippendorff_alpha,
    majority,
    read_votes,
    table3_row,
)
from sentprobe.errors import DataError


def test_acceptability_keeps_only_a_majority_that_agrees_with_the_expected_label():
    assert decide(["natural", "natural", "unnatural"], False, "acceptable") == (
        "acceptable",
        "kept",
    )
    assert decide(["unnatural", "unnatural", "natural"], False, "acceptable")[0] is None
    assert decide(["neither", "neither", "natural"], False, "acceptable")[0] is None
    label, reason = decide(["natural", "unnatural", "neither"], False, "unacceptable")
    assert label is None and reason == "dropped: no majority"
    assert decide(["unnatural"] * 5, False, "unacceptable")[0] == "unacceptable"
    assert decide(["natural", "unnatural"], False, "acceptable")[0] is None  # a tie


def test_nli_likert_mapping_and_does_not_make_sense():
    assert decide(["5", "4", "1"], True, "neutral") == ("entailment", "kept")
    assert decide(["3", "3", "5"], True, "entailment")[0] == "neutral"
    assert decide(["2", "1", "3"], True, "entailment")[0] == "contradiction"
    assert decide(["5", "5", "does not make sense"], True, "entailment")[0] is None
    assert decide(["5", "3", "1"], True, "entailment") == (None, "dropped: no majority")
    assert decide(["5", "4", "2", "1"], True, "entailment")[0] is None  # 2 vs 2


def test_majority_is_strict():
    assert majority(["a", "a", "b"]) == "a"
    assert majority(["a", "b"]) is None and majority([]) is None


def test_krippendorff_alpha_on_krippendorffs_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders, 12 units,
    # missing values; nominal alpha = 0.743
    coders = [
        "1 2 3 3 2 1 4 1 2 . . .",
        "1 2 3 3 2 2 4 1 2 5 . 3",
        ". 3 3 3 2 3 4 2 2 5 1 .",
        "1 2 3 3 2 4 4 1 2 5 1 .",
    ]
    table = [row.split(" ") for row in coders]
    units = [[table[c][u] for c in range(4) if table[c][u] != "."] for u in range(12)]
    assert krippendorff_alpha(units) == pytest.approx(0.743, abs=5e-4)


def test_fleiss_kappa_on_fleiss_worked_example():
    # the worked example of Fleiss' kappa (14 raters, 10 subjects, 5 categories): 0.210
    counts = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]  # fmt: skip
    units = [[str(c) for c, n in enumerate(row) for _ in range(n)] for row in counts]
    assert fleiss_kappa(units) == pytest.approx(0.210, abs=5e-4)
    assert fleiss_kappa([["a", "b"], ["a", "a", "b"]]) is None  # unequal numbers of votes


def test_table3_row_matches_the_papers_arithmetic():
    # with 3 votes, Agree = U + (1 - U) / 3 and Accuracy = U + (1 - U) * 2 / 3 (Table 3)
    final = [(["natural"] * 3, "natural")] * 4 + [
        (["natural", "natural", "neither"], "natural")
    ] * 6
    row = table3_row(final)
    assert row == {"agree": 60.0, "unanimous": 40.0, "accuracy": 80.0, "size": 10,
                   "votes per item": "3"}  # fmt: skip


def test_bad_votes_file_names_file_and_line(tmp_path):
    kinds = {"acceptability-whwords:1": False, "nli-negation:2": True}
    path = tmp_path / "votes.csv"
    path.write_text("item_id,answer\nacceptability-whwords:1,natural\nnope:3,natural\n")
    with pytest.raises(DataError, match=r"votes.csv, line 3: unknown item id 'nope:3'"):
        read_votes(path, kinds)
    path.write_text("item_id,answer\nnli-negation:2,natural\n")
    with pytest.raises(DataError, match=r"line 2: item nli-negation:2: unknown answer 'natural'"):
        read_votes(path, kinds)
    path.write_text("id,vote\nx,y\n")
    with pytest.raises(DataError, match="item_id and answer"):
        read_votes(path, kinds)
    path.write_text("item_id,annotator,answer\nnli-negation:2,a1, Does  not make SENSE \n")
    assert read_votes(path, kinds) == {"nli-negation:2": ["does not make sense"]}


def test_nli_import_relabels_by_majority_and_drops_nonsense(tmp_path):
    from sentprobe.analysis.votes import export_rows, import_votes
    from sentprobe.generation.function_words.release import (
        Item,
        release_records,
        write_release_set,
    )

    items = [Item(f"Premise {i} .", f"Hypothesis {i} .", "entailment") for i in range(4)]
    data, meta = release_records(
        "nli-negation", items, first_pair_id=1, corpus="test", corpus_license="CC0"
    )
    write_release_set(tmp_path / "suite", "nli-negation", data, meta)
    rows = export_rows(tmp_path / "suite")
    assert rows[0]["options"].split(" | ") == ["1", "2", "3", "4", "5", "does not make sense"]
    votes = {  # 1: contradiction, 2: entailment, 3: nonsense vote, 4: no majority
        1: ["1", "2", "5"], 2: ["4", "5", "3"], 3: ["5", "5", "does not make sense"],
        4: ["5", "3", "1"],
    }  # fmt: skip
    lines = ["item_id,answer"] + [f"nli-negation:{i},{a}" for i, v in votes.items() for a in v]
    (tmp_path / "votes.csv").write_text("\n".join(lines) + "\n")
    (outcome,) = import_votes(tmp_path / "suite", tmp_path / "votes.csv", tmp_path / "final")
    assert [(d["pair-id"], d["label"]) for d, _ in outcome.kept] == [
        (1, "contradiction"),
        (2, "entailment"),
    ]
    assert outcome.kept[0][1]["misc"]["assigned_labels"] == "contradiction,contradiction,entailment"
    assert outcome.reasons["dropped: a 'does not make sense' vote"] == 1
    assert outcome.reasons["dropped: no majority"] == 1
    assert outcome.agreement["size"] == 2 and outcome.agreement["unanimous"] == 0.0
