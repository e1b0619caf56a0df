from collections import Counter

import pytest

from sentprobe.generation import GenerationError, SentenceLength, WordContent
from sentprobe.generation.writer import senteval_lines

SIZES = {"train": 120, "dev": 30, "test": 30}


def check_balanced_and_disjoint(task):
    seen = set()
    for split, examples in task.splits.items():
        counts = Counter(label for _, label in examples)
        assert len(set(counts.values())) == 1, (split, counts)
        assert set(counts) == set(task.labels)
        sentences = {s for s, _ in examples}
        assert len(sentences) == len(examples)
        assert not sentences & seen, f"{split} shares sentences with another split"
        seen |= sentences


@pytest.mark.parametrize(
    "length,label",
    [
        (4, None),
        (5, "0"),
        (8, "0"),
        (9, "1"),
        (12, "1"),
        (13, "2"),
        (16, "2"),
        (17, "3"),
        (20, "3"),
        (21, "4"),
        (25, "4"),
        (26, "5"),
        (28, "5"),
        (29, None),
    ],
)
def test_sentlen_bins_match_senteval(length, label):
    assert SentenceLength().label(("w",) * length) == label


def test_sentlen_generate_is_balanced_disjoint_and_correct(corpus):
    task = SentenceLength().generate(corpus, SIZES, seed=1)
    check_balanced_and_disjoint(task)
    assert [len(task.splits[s]) for s in ("train", "dev", "test")] == [120, 30, 30]
    for examples in task.splits.values():
        for sentence, label in examples:
            assert SentenceLength().label(tuple(sentence.split())) == label


def test_same_seed_same_bytes_other_seed_other_bytes(corpus):
    a = senteval_lines(SentenceLength().generate(corpus, SIZES, seed=7))
    b = senteval_lines(SentenceLength().generate(list(corpus), SIZES, seed=7))
    c = senteval_lines(SentenceLength().generate(corpus, SIZES, seed=8))
    assert a == b and a != c


def test_sentlen_error_says_what_fits(corpus):
    with pytest.raises(GenerationError) as err:
        SentenceLength().generate(corpus[:100], SIZES, seed=1)
    msg = str(err.value)
    assert "SentLen" in msg and "supports at most" in msg and "lower the sizes" in msg


def test_wc_candidates_follow_rank_length_and_alphabet_rules():
    # Frequencies: zzzz 10, yyyy 9, ab 8, x1y2 7, kilo 6 (as "Kilo"), mike 5, nova 4, oscar 3
    counts = {
        "zzzz": 10,
        "yyyy": 9,
        "ab": 8,
        "x1y2": 7,
        "Kilo": 6,
        "mike": 5,
        "nova": 4,
        "oscar": 3,
    }
    sentences = [(w,) for w, n in counts.items() for _ in range(n)]
    wc = WordContent(n_targets=3, first_rank=3, min_chars=4)
    assert wc.vocabulary(sentences)[:5] == ["zzzz", "yyyy", "ab", "x1y2", "kilo"]
    assert wc.candidates(sentences) == ["kilo", "mike", "nova", "oscar"]


def test_wc_pools_keep_only_exactly_one_target_exactly_once():
    sentences = [
        ("Zzzz", "kilo", "yyyy"),
        ("Kilo", "and", "kilo"),  # same target twice (case-insensitive)
        ("kilo", "and", "mike"),  # two targets
        ("zzzz", "yyyy"),  # none
        ("Mike", "runs"),
    ]
    pools = WordContent().pools(sentences, ["kilo", "mike"])
    assert pools == {"kilo": [("Zzzz", "kilo", "yyyy")], "mike": [("Mike", "runs")]}


def test_wc_generate_balanced_and_labels_appear_exactly_once(corpus):
    wc = WordContent(n_targets=10, first_rank=21)
    task = wc.generate(corpus, {"train": 60, "dev": 20, "test": 20}, seed=3)
    check_balanced_and_disjoint(task)
    targets = set(task.labels)
    vocab = wc.vocabulary(corpus)
    assert all(vocab.index(t) >= 20 and len(t) >= 4 and t.isalpha() for t in targets)
    for examples in task.splits.values():
        for sentence, label in examples:
            hits = [t for t in sentence.lower().split() if t in targets]
            assert hits == [label]


def test_wc_error_reports_how_many_targets_fit(corpus):
    wc = WordContent(n_targets=80, first_rank=21)
    with pytest.raises(GenerationError) as err:
        wc.generate(corpus, {"train": 80 * 30, "dev": 80 * 10, "test": 80 * 10}, seed=0)
    assert "n_targets <=" in str(err.value) and "larger corpus" in str(err.value)
