"""Seq2Tree targets and DisSent pairs from annotated sentences."""

from __future__ import annotations

from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.training.dissent import Pair, extract_pairs
from sentprobe.training.trees import linearise


def record(rows: list[tuple[str, str, int, str]]) -> AnnotatedSentence:
    return AnnotatedSentence(
        tokens=[r[0] for r in rows],
        upos=[r[1] for r in rows],
        heads=[r[2] for r in rows],
        deprels=[r[3] for r in rows],
    )


def test_linearised_tree_is_vinyals_style_without_words():
    rec = AnnotatedSentence(
        tokens=["He", "left", "the", "house", "."],
        upos=["PRON", "VERB", "DET", "NOUN", "PUNCT"],
        heads=[2, 0, 4, 2, 2],
        deprels=["nsubj", "root", "det", "obj", "punct"],
        xpos=["PRP", "VBD", "DT", "NN", "."],
    )
    assert linearise(rec) == "(S (NP PRP )NP (VP VBD (NP DT NN )NP )VP . )S"
    rec.constituency = "(ROOT (FRAG (NP (NN Tea)) (. .)))"
    assert linearise(rec) == "(FRAG (NP NN )NP . )FRAG"


def test_subordinate_marker_either_order():
    after = record([("She", "PRON", 2, "nsubj"), ("left", "VERB", 0, "root"),
                    ("because", "SCONJ", 5, "mark"), ("it", "PRON", 5, "nsubj"),
                    ("rained", "VERB", 2, "advcl"), (".", "PUNCT", 2, "punct")])  # fmt: skip
    assert extract_pairs(after) == [Pair("She left", "it rained", "because")]
    before = record([("Because", "SCONJ", 3, "mark"), ("it", "PRON", 3, "nsubj"),
                     ("rained", "VERB", 6, "advcl"), (",", "PUNCT", 3, "punct"),
                     ("she", "PRON", 6, "nsubj"), ("stayed", "VERB", 0, "root"),
                     (".", "PUNCT", 6, "punct")])  # fmt: skip
    assert extract_pairs(before) == [Pair("she stayed", "it rained", "because")]


def test_coordination_needs_two_clauses():
    clauses = record([("He", "PRON", 2, "nsubj"), ("ran", "VERB", 0, "root"),
                      ("and", "CCONJ", 5, "cc"), ("she", "PRON", 5, "nsubj"),
                      ("walked", "VERB", 2, "conj")])  # fmt: skip
    assert extract_pairs(clauses) == [Pair("He ran", "she walked", "and")]
    nouns = record([("I", "PRON", 2, "nsubj"), ("saw", "VERB", 0, "root"),
                    ("cats", "NOUN", 2, "obj"), ("and", "CCONJ", 5, "cc"),
                    ("dogs", "NOUN", 3, "conj")])  # fmt: skip
    assert extract_pairs(nouns) == []


def test_short_clauses_and_other_words_give_nothing():
    short = record([("Go", "VERB", 0, "root"), ("if", "SCONJ", 3, "mark"),
                    ("asked", "VERB", 1, "advcl")])  # fmt: skip
    assert extract_pairs(short) == []  # "Go" and "asked": one word each
    other = record([("She", "PRON", 2, "nsubj"), ("left", "VERB", 0, "root"),
                    ("whereas", "SCONJ", 5, "mark"), ("he", "PRON", 5, "nsubj"),
                    ("stayed", "VERB", 2, "advcl")])  # fmt: skip
    assert extract_pairs(other) == []
