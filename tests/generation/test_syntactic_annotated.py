"""TreeDepth (decorrelated from length), TopConst, and the surface tasks on annotated input."""

import random
from collections import Counter

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from gen_synth import chain, depth_length_corpus, record, svo_corpus
from sentprobe.generation import (
    BigramShift,
    GenerationError,
    SentenceLength,
    TopConst,
    TreeDepth,
    WordContent,
)
from sentprobe.generation.inputs import surface
from sentprobe.generation.syntactic import length_matched_counts
from sentprobe.generation.trees import _own_tree_depth, dependency_depth, parse_bracketed
from sentprobe.generation.writer import senteval_lines


def check_balanced_disjoint(task):
    """Every split balanced over all labels, one label per sentence, no sentence in 2 splits."""
    seen: dict[str, str] = {}
    for split, examples in task.splits.items():
        counts = Counter(lab for _, lab in examples)
        assert set(counts) == set(task.labels), (split, counts)
        assert len(set(counts.values())) == 1, (split, counts)
        for sentence, _ in examples:
            assert sentence not in seen, f"{sentence!r} in {seen.get(sentence)} and {split}"
            seen[sentence] = split


def test_multiword_tokens_are_rendered_as_written():
    rows = [
        ("Je", "PRON", "", 2, "nsubj", {}),
        ("parle", "VERB", "", 0, "root", {}),
        ("de", "ADP", "", 5, "case", {}),
        ("le", "DET", "", 5, "det", {}),
        ("livre", "NOUN", "", 2, "obl", {}),
        (".", "PUNCT", "", 2, "punct", {}),
    ]
    sent = record(rows, lang="fr", mwt=[(2, 3, "du")])
    surf = surface(sent)
    assert surf.units == ("Je", "parle", "du", "livre", ".")
    assert surf.unit_of_word(3) == 2 and not surf.is_single_word(2)
    assert surf.units == tuple(sent.surface_tokens())


def test_surface_tasks_accept_records_like_token_tuples():
    records = svo_corpus(600, seed=1)
    tuples = [tuple(r.tokens) for r in records]
    sizes = {"train": 60, "dev": 12, "test": 12}
    for gen in (SentenceLength(bins=((5, 7), (8, 12))), BigramShift()):
        a = senteval_lines(gen.generate(records, sizes, seed=3))
        assert a == senteval_lines(gen.generate(tuples, sizes, seed=3))
    wc = WordContent(n_targets=3, first_rank=10)
    assert senteval_lines(wc.generate(records, sizes | {"train": 30}, 3)) == senteval_lines(
        wc.generate(tuples, sizes | {"train": 30}, 3)
    )


def test_depth_definitions():
    assert dependency_depth([0]) == 1
    assert dependency_depth([0, 1, 2, 1]) == 3  # 1 <- 2 <- 3, 1 <- 4
    assert dependency_depth(chain(4, 9, random.Random(0)).heads) == 4
    tree = "(ROOT (S (NP (PRP I)) (VP (VBD saw) (NP (DT the) (NN cat))) (. .)))"
    assert parse_bracketed(tree)[0] == "ROOT"
    assert _own_tree_depth(tree) == 5  # ROOT -> S -> VP -> NP -> NN -> cat


def test_length_matched_counts_are_feasible_and_sum_to_total():
    available = {"a": {5: 10, 6: 3, 7: 0}, "b": {5: 2, 6: 8, 7: 9}}
    counts = length_matched_counts(available, total=4)
    assert sum(counts.values()) == 4
    assert all(c <= min(available[k].get(n, 0) for k in available) for n, c in counts.items())
    with pytest.raises(ValueError):
        length_matched_counts(available, total=6)  # common support holds 2 + 3 = 5


def length_probe_accuracy(task) -> tuple[float, float]:
    """Test accuracy of logistic regression on sentence length alone, and the majority rate."""

    def xy(split):
        ex = task.splits[split]
        return np.array([[len(s.split())] for s, _ in ex], float), [lab for _, lab in ex]

    (xtr, ytr), (xte, yte) = xy("train"), xy("test")
    clf = LogisticRegression(max_iter=2000).fit(xtr, ytr)
    majority = Counter(yte).most_common(1)[0][1] / len(yte)
    return clf.score(xte, yte), majority


def test_tree_depth_decorrelated_from_length():
    corpus = depth_length_corpus(1500, seed=0)
    sizes = {"train": 1000, "dev": 250, "test": 250}
    gen = TreeDepth(structure="dependency", depths=(3, 7))
    task = gen.generate(corpus, sizes, seed=1)
    check_balanced_disjoint(task)
    assert task.labels == ["3", "4", "5", "6", "7"]
    acc, majority = length_probe_accuracy(task)
    assert abs(acc - majority) <= 0.05, (acc, majority)
    # the same corpus without decorrelation: length is a strong cue (so the check can fail)
    plain = TreeDepth(structure="dependency", depths=(3, 7), decorrelate=False)
    acc_plain, majority = length_probe_accuracy(plain.generate(corpus, sizes, seed=1))
    assert acc_plain > majority + 0.10
    # every split has the same length histogram in every class
    for examples in task.splits.values():
        hist = {
            lab: Counter(len(s.split()) for s, la in examples if la == lab) for lab in task.labels
        }
        assert all(h == hist["3"] for h in hist.values())
    assert senteval_lines(task) == senteval_lines(gen.generate(corpus, sizes, seed=1))


def test_tree_depth_too_small_says_what_fits():
    corpus = depth_length_corpus(60, seed=0)
    with pytest.raises(GenerationError) as err:
        TreeDepth(structure="dependency", depths=(3, 7)).generate(
            corpus, {"train": 500, "dev": 50, "test": 50}, seed=0
        )
    msg = str(err.value)
    assert "at most" in msg and "decorrelate=False" in msg and "narrow depths" in msg


def top_tree(labels: list[str], rng: random.Random) -> tuple[list[str], str]:
    """Words and a bracketed tree whose top constituents are ``labels``."""
    words, parts = [], []
    for lab in labels:
        w = "." if lab == "." else ("," if lab == "," else rng.choice(["ba", "ke", "di"]) + lab)
        words.append(w + str(rng.randint(0, 10**6)) if lab not in ".," else w)
        parts.append(f"({lab} ({'NN' if lab not in '.,' else lab} {words[-1]}))")
    return words, f"(ROOT (S {' '.join(parts)}))"


def test_top_const_classes_and_exclusions():
    rng = random.Random(0)
    seqs = [["NP", f"X{i}", "VP", "."] for i in range(25)]  # 25 sequences, Zipf-ish counts
    corpus = []
    for i, seq in enumerate(seqs):
        for _ in range(200 - 5 * i):
            words, tree = top_tree(seq, rng)
            corpus.append(
                record(
                    [(w, "X", "X", 0 if j == 0 else 1, "dep", {}) for j, w in enumerate(words)],
                    constituency=tree,
                )
            )
    bad = [["NP", ",", "VP", "."], ["NP", "VP"], ["NP", "VP", "?"]]
    for seq in bad:
        for _ in range(300):  # frequent, but excluded
            words, tree = top_tree(seq, rng)
            corpus.append(
                record(
                    [(w, "X", "X", 0 if j == 0 else 1, "dep", {}) for j, w in enumerate(words)],
                    constituency=tree,
                )
            )
    task = TopConst().generate(corpus, {"train": 400, "dev": 100, "test": 100}, seed=0)
    check_balanced_disjoint(task)
    assert len(task.labels) == 20 and task.labels[-1] == "OTHER"
    assert set(task.labels[:-1]) == {"_".join(s) for s in seqs[:19]}
    assert task.stats["rejected: punctuation or quotes inside the sequence"] == 300
    assert task.stats["rejected: does not end in '.'"] == 600
    other = {s for split in task.splits.values() for s, lab in split if lab == "OTHER"}
    assert all(any(f"X{i}" in s for i in range(19, 25)) for s in other)
