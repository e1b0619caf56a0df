"""The NLI sets from a small premise/hypothesis file (spaCy annotation; a few seconds)."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from sentprobe.errors import DataError
from sentprobe.generation.function_words import build_function_words
from sentprobe.generation.function_words.lexicon import PREPOSITIONS
from sentprobe.generation.function_words.nli import read_nli_pairs
from sentprobe.generation.function_words.wordnet import antonyms, default_wordnet

NLI_PAIRS = __import__("pathlib").Path(__file__).parent / "nli_pairs.jsonl"
HAVE_WORDNET = (default_wordnet() / "data.adj").is_file()
needs_wordnet = pytest.mark.skipif(
    not HAVE_WORDNET,
    reason=f"WordNet not in {default_wordnet()} (Debian wordnet-base, or set WNSEARCHDIR)",
)


@pytest.fixture(scope="module")
def nli_suite(tmp_path_factory):
    """The NLI sets of nli_pairs.jsonl; without WordNet all but Negation (which says why)."""
    out = tmp_path_factory.mktemp("nli") / "suite"
    result = build_function_words([NLI_PAIRS], out, size=None, seed=0, skip_failed=True)
    assert set(result.failures) == (set() if HAVE_WORDNET else {"nli-negation"}), result.failures
    return out


def _items(out, name):
    data = json.loads((out / f"NLI/{name}_data.json").read_text())
    meta = json.loads((out / f"NLI/{name}_metadata.json").read_text())
    return list(zip(data, meta))


def test_preposition_swap_stays_within_appendix_d(nli_suite):
    items = _items(nli_suite, "nli-prepositions")
    mutated = [(d, m) for d, m in items if not m["misc"]["original"]]
    assert mutated and len(items) == 2 * len(mutated)  # each with its original pair
    for _, m in mutated:
        mutation = m["misc"]["mutation"]
        old = " ".join(mutation["replaced"]).lower()
        new = " ".join(mutation["replacements"]).lower()
        assert old in PREPOSITIONS and new in PREPOSITIONS and old != new
        assert m["misc"]["task_desc"] == old


@needs_wordnet
def test_negation_makes_all_16_patterns_per_pair(nli_suite):
    items = _items(nli_suite, "nli-negation")
    by_tuple = Counter(m["misc"]["tuple_id"] for _, m in items)
    assert by_tuple and set(by_tuple.values()) == {16}
    patterns = {m["misc"]["task_desc"] for _, m in items}
    sides = ("unchanged", "neg", "lneg", "lexpneg")
    assert patterns == {f"{p}-{h}" for p in sides for h in sides}
    cold = [(d, m) for d, m in items if m["misc"]["antonyms"] == ["cold", "hot"]]
    rows = {m["misc"]["task_desc"]: (d["context"], d["hypothesis"]) for d, m in cold}
    assert rows["lexpneg-unchanged"][0] == "The water in the lake is not hot ."
    assert rows["unchanged-neg"][1] == "The lake is not hot ."
    assert rows["neg-lneg"] == ("The water in the lake is not cold .", "The lake is cold .")


@needs_wordnet
def test_wordnet_antonyms():
    lexicon = antonyms(default_wordnet())
    assert "dirty" in lexicon["clean"] and "aunt" in lexicon["uncle"]
    assert "clean" in lexicon["dirty"]  # symmetric


def test_nli_file_errors_name_the_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"premise": "A.", "hypothesis": "B.", "label": "entailment"}\n{"premise": 1}\n')
    with pytest.raises(DataError, match="line 2"):
        read_nli_pairs(bad)
    bad.write_text('{"premise": "A.", "hypothesis": "B.", "label": "maybe"}\n')
    with pytest.raises(DataError, match="unknown label"):
        read_nli_pairs(bad)
    pairs = read_nli_pairs(NLI_PAIRS)
    assert len(pairs) == 94  # the MNLI-style pair without a gold label ("-") is skipped


@pytest.fixture(scope="module")
def annotated():
    """One sentence, Moses-tokenized and annotated as the NLI generators see it."""
    from sentprobe.annotation import default_annotator
    from sentprobe.generation.corpus import MosesPreprocessor

    annotator, pre = default_annotator("en"), MosesPreprocessor()

    def one(sentence: str):
        return next(iter(annotator.annotate([" ".join(pre.tokenize(sentence))], pretokenized=True)))

    return one


@pytest.mark.parametrize(
    ("sentence", "spatial"),
    [
        ("The lamp hangs above the table.", True),
        ("The box is under the bed.", True),
        ("The shop is on the left side of the road.", True),
        ("The school is far from the station.", True),
        ("The shop is close to the station.", True),
        ("Prices are far more accessible now.", False),  # degree
        ("Over two hundred islands were counted.", False),  # quantity
        ("That answer is right.", False),  # correctness
        ("They set up the tent.", False),  # verb particle
        ("Close to 50 people came.", False),  # quantity
        ("Come here right now.", False),  # intensifier
        # issue 48: time, "finished", a difference in amount
        ("It changed over the last 200 generations.", False),
        ("The race was over.", False),
        ("Sales were 15 % above the target.", False),
        ("The bird flew over the house.", True),
    ],
)
def test_spatial_words_count_only_in_their_spatial_sense(annotated, sentence, spatial):
    from sentprobe.generation.function_words.lexicon import SPATIAL
    from sentprobe.generation.function_words.nli import _subtypes

    assert bool(_subtypes(annotated(sentence), SPATIAL)) == spatial


@pytest.mark.parametrize(
    ("sentence", "quantity"),
    [
        ("Two dogs barked at night.", True),
        ("Most dogs barked at night.", True),
        ("Some of the guests left early.", True),
        ("The most beautiful garden is here.", False),  # degree
        ("This one is better.", False),  # pronoun
        ("It is not clear at all.", False),
        ("He was born in 1990.", False),  # a year
        ("She no longer lives here.", False),
    ],
)
def test_quantifiers_count_only_as_quantities(annotated, sentence, quantity):
    from sentprobe.generation.function_words.lexicon import QUANTIFIERS
    from sentprobe.generation.function_words.nli import _subtypes

    assert bool(_subtypes(annotated(sentence), QUANTIFIERS)) == quantity


@needs_wordnet
def test_negation_antonyms_leave_out_pairs_that_are_no_negation():
    from sentprobe.generation.function_words.wordnet import negation_antonyms

    lexicon = negation_antonyms(default_wordnet())
    for (word, pos), other in [(("more", "a"), "less"), (("most", "a"), "least"),
                               (("uncle", "n"), "aunt"), (("borrow", "v"), "lend"),
                               (("sharp", "a"), "natural"), (("buy", "v"), "sell")]:  # fmt: skip
        assert other in antonyms(default_wordnet()).get(word, ())  # WordNet has the pair
        assert other not in lexicon.get((word, pos), ())
    assert "cold" in lexicon["hot", "a"] and "dirty" in lexicon["clean", "a"]


@needs_wordnet
def test_negation_set_never_swaps_more_for_less(nli_suite):
    items = _items(nli_suite, "nli-negation")
    assert items and all(m["misc"]["antonyms"] != ["more", "less"] for _, m in items)


def test_no_source_pair_is_both_comparative_and_quantified(annotated):
    """Comp/Quant overlap resolved (issue 48): a pair with a comparative on both sides goes
    to Comparatives only."""
    from collections import Counter

    from sentprobe.generation.function_words.nli import Comparatives, Pair, Quantification

    premise = annotated("The list was on more than one site.")
    pair = Pair(premise, annotated("It was on more than two sites."), "entailment", 0)
    rng = np.random.default_rng(0)
    assert Comparatives().items_for(pair, rng, Counter())
    stats: Counter = Counter()
    assert Quantification().items_for(pair, rng, stats) == []
    assert stats["skipped: a comparative pair (nli-comparatives takes it)"] == 1


def test_a_preposition_selected_by_the_word_before_is_not_swapped(annotated):
    from collections import Counter

    from sentprobe.generation.function_words.nli import Pair, Prepositions

    pair = Pair(annotated("Frank's office is far from here."),
                annotated("The office is far from the station."), "entailment", 0)  # fmt: skip
    stats: Counter = Counter()
    assert Prepositions().items_for(pair, np.random.default_rng(0), stats) == []
    assert stats["skipped: every preposition is selected by the word before it"] == 1


def test_fixed_expressions_hold_no_antonym():
    from sentprobe.generation.function_words.nli import in_fixed_expression

    assert in_fixed_expression(["they", "trained", "in", "order", "to", "score"], 3)
    assert not in_fixed_expression(["the", "order", "was", "placed"], 1)


@needs_wordnet
def test_negation_never_puts_both_antonyms_on_one_side(annotated):
    from collections import Counter

    from sentprobe.generation.function_words.nli import Negation, Pair

    pair = Pair(annotated("The room was clean and dirty at once."),
                annotated("The room was dirty."), "contradiction", 0)  # fmt: skip
    stats: Counter = Counter()
    assert Negation().items_for(pair, np.random.default_rng(0), stats) == []
    assert stats["skipped: both antonyms on one side"] >= 1
