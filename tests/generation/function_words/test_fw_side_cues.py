"""Only the function word may give the label away: EOS segments obey the length limits and
match between classes, "the -> a" never lands before a plural, lexical negation fixes the
article, "third" is no quantifier, and without WordNet only the Negation set fails."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gen_function_words import synthetic_corpus
from sentprobe.analysis.checks import CheckOptions, audit_view
from sentprobe.analysis.checks.agreement_cues import (
    article_before_plural,
    check_segment_length,
    wrong_article_sound,
)
from sentprobe.datasets.loaders.dnc import load_dnc
from sentprobe.generation.corpus import MosesPreprocessor
from sentprobe.generation.function_words import EndOfSentence, build_function_words
from sentprobe.generation.function_words.lexicon import QUANTIFIERS
from sentprobe.generation.function_words.negation import lexical_negation
from sentprobe.generation.function_words.rules import article_kind, swap_articles
from sentprobe.generation.function_words.wordnet import default_wordnet

NLI_PAIRS = __import__("pathlib").Path(__file__).parent / "nli_pairs.jsonl"


def _eos_paragraphs(n: int, seed: int = 0) -> list[list[tuple[str, ...]]]:
    """Paragraphs of sentences of 5+ words, short ones commoner (as in running text)."""
    rng = np.random.default_rng(seed)
    out = []
    for p in range(n):
        para = []
        for s in range(6):
            k = 4 + int(rng.geometric(0.1))  # 5 words or more, sentences over 40 skipped
            para.append(tuple(f"w{p}s{s}t{j}" for j in range(k)) + (".",))
        out.append(para)
    return out


def test_eos_wrong_segments_obey_the_limits_and_match_the_valid_ones():
    fw = EndOfSentence(size=400, sigma=3.0).generate(_eos_paragraphs(400), seed=0)
    for item in fw.items:
        for segment in (item.context, item.hypothesis):
            assert 5 <= len(segment.split()) <= 40, item
    shapes = {
        label: sorted(
            (len(i.context.split()), len(i.hypothesis.split()))
            for i in fw.items
            if i.label == label
        )
        for label in ("acceptable", "unacceptable")
    }
    assert shapes["acceptable"] == shapes["unacceptable"]  # coupled by segment lengths


def test_eos_segment_rule_stays_at_majority_on_a_generated_set(tmp_path):
    fw = EndOfSentence(size=800, sigma=3.0).generate(_eos_paragraphs(700, seed=1), seed=3)
    from sentprobe.generation.function_words import write_function_word_suite

    write_function_word_suite(tmp_path, [fw], {}, corpus="synthetic", corpus_license="CC0")
    (task,) = load_dnc(tmp_path)
    (finding,) = check_segment_length(audit_view(task), CheckOptions())
    assert finding.data["gain_points"] <= 3, finding.message


def test_the_to_a_never_before_a_plural_noun():
    plural = ["The", "houses", "near", "the", "river", "were", "swept", "away", "."]
    assert article_kind(plural) is None  # not a candidate at all: no "A houses"
    assert (
        article_kind(["The", "old", "stone", "houses", "by", "the", "river", "fell", "."]) is None
    )
    singular = ["The", "house", "near", "the", "river", "was", "swept", "away", "."]
    assert article_kind(singular) == "the"
    new = list(singular)
    m = swap_articles(singular)
    for i, w in zip(m.positions, m.replacements):
        new[i] = w
    assert not article_before_plural(" ".join(new)) and not wrong_article_sound(" ".join(new))


def test_definiteness_set_has_no_a_before_plurals():
    pre = MosesPreprocessor()
    paragraphs = synthetic_corpus(160)
    extra = [f"The {n}s near the gate were old in year {i} ." for i, n in enumerate("ab" * 60)]
    sentences = list(pre([s for p in paragraphs for s in p] + extra))
    from sentprobe.generation.function_words import DefinitenessCollocations

    fw = DefinitenessCollocations(size=None).generate(sentences, seed=0)
    assert fw.items
    assert not any(article_before_plural(i.context) for i in fw.items)


def test_lexical_negation_fixes_the_article():
    tokens, m = lexical_negation(["It", "is", "a", "common", "right", "."], 3, "uncommon")
    assert " ".join(tokens) == "It is an uncommon right ."
    assert m.positions == (2, 3) and m.replaced == ("a", "common")
    tokens, _ = lexical_negation(["An", "honest", "man", "."], 1, "dishonest")
    assert tokens[:2] == ["A", "dishonest"]
    tokens, m = lexical_negation(["The", "common", "room", "."], 1, "uncommon")
    assert tokens[0] == "The" and m.positions == (1,)


def test_third_is_not_a_quantifier():
    words = {w for ws in QUANTIFIERS.values() for w in ws}
    assert "third" not in words and "one-third" in words


def test_without_wordnet_only_negation_fails(tmp_path, monkeypatch):
    empty = tmp_path / "no-wordnet"
    empty.mkdir()
    monkeypatch.setenv("WNSEARCHDIR", str(empty))
    out = tmp_path / "suite"
    result = build_function_words([NLI_PAIRS], out, size=None, seed=0, skip_failed=True)
    assert set(result.failures) == {"nli-negation"}
    assert "WordNet" in result.failures["nli-negation"]
    built = {fw.name for fw in result.sets}
    assert built == {"nli-prepositions", "nli-comparatives", "nli-quantification", "nli-spatial"}
    manifest = json.loads((out / "manifest.json").read_text())
    assert "nli-negation" not in manifest["sets"]


@pytest.mark.skipif(
    not (default_wordnet() / "data.adj").is_file(),
    reason=f"WordNet not in {default_wordnet()} (Debian wordnet-base, or set WNSEARCHDIR)",
)
def test_antonyms_keep_the_part_of_speech():
    from sentprobe.generation.function_words.wordnet import antonyms_by_pos

    lexicon = antonyms_by_pos(default_wordnet())
    assert "cold" in lexicon["hot", "a"]
    assert all(pos in "arnv" for _, pos in lexicon)
    # "left" the adjective has "right"; the verb "leave" is no antonym of "right"
    assert ("right", "v") not in lexicon or "left" not in lexicon["right", "v"]


@pytest.mark.parametrize(
    ("sentence", "frame"),
    [
        ("It lies between the river and the road .", "between ... and"),
        ("Take either the red one or the blue one .", "either ... or"),
        ("He was not only tired but hungry .", "not only ... but"),
        ("It got more and more difficult .", "X and X"),
        ("It was nothing but trouble .", "nothing but"),
        ("Choose either red , green or blue .", "either ... or"),
        ("We like both tea and coffee .", "both ... and"),
        ("He left and so on Monday we met .", "and so on"),
        ("Do it this way or else it breaks .", "or else"),
        ("Ask whether or not it works .", "or not"),
        ("Apples and pears are fruit .", None),  # "apples or pears" is fine
        ("He came , but she left .", None),  # "and she left" is fine
        # "both" as a determiner of a subject whose clause the "and" runs through
        ("Ensure that both databases contain matching field names and field types .", None),
        ("They both agreed and left early .", None),  # floating "both"
        ("Both of them sang and danced .", None),
        ("The gap between them is small and the cost is low .", None),  # a clause between
        ("Between meals , eat fruit and nuts .", None),  # punctuation between
        ("If you want it and it works , keep it .", None),  # "X and X" across clauses
        ("He said nothing , but he left .", None),
        ("It is not red but blue .", None),  # "not" without "only"
        ("He left and so did she .", None),
        ("Say yes or not at all .", None),  # "or not" without "whether"
        ("Go there or elsewhere .", None),
    ],
)
def test_coordination_frames(sentence, frame):
    from sentprobe.generation.function_words.rules import coordination_frame

    assert coordination_frame(sentence.split()) == frame


@pytest.mark.parametrize(
    ("sentence", "frame"),
    [
        ("The man and the dog had the same idea .", "the same"),
        ("The rest of the town is the largest .", "the rest of"),
        ("Such a day and a night !", "such a"),
        ("A man bought a lot of apples .", "a lot of"),
        ("Once a week a man comes by .", "once a week"),
        ("Three times a day a nurse calls .", "times a day"),
        ("What a day , a great day !", "what a"),
        ("Many a man had a dream .", "many a"),
        ("The man saw the dog .", None),  # "a man saw a dog" is fine
        ("A man saw a dog .", None),
        ("The most important thing is the plan .", None),  # "a most important thing"
        ("The rest is in the box .", None),  # no "of"
        ("A lot was sold for a song .", None),  # "the lot was sold"
        ("Once a user logs in , a token is issued .", None),  # "once the user logs in"
        ("At times a man needs a rest .", None),  # "at times the man needs"
        ("What a user needs is a key .", None),  # not exclamative
        ("As such , a user needs a key .", None),
    ],
)
def test_article_frames(sentence, frame):
    from sentprobe.generation.function_words.rules import article_frame

    assert article_frame(sentence.split()) == frame


def test_collocation_sets_only_mutate_framed_sentences_and_a_frame_lookup_labels_them():
    from sentprobe.generation.function_words import (
        CoordinationCollocations,
        DefinitenessCollocations,
    )
    from sentprobe.generation.function_words.acceptability import FRAME_LOOKUP

    pre = MosesPreprocessor()
    sentences = list(pre(s for p in synthetic_corpus(160) for s in p))
    plain = list(pre(f"Zed fed the yak and the emu on day {i} ." for i in range(200)))
    for generator in (CoordinationCollocations, DefinitenessCollocations):
        fw = generator(size=None).generate(sentences + plain, seed=0)
        assert fw.name.endswith("-collocations")
        assert fw.items and all("yak" not in i.context for i in fw.items)
        mutated = [i.misc["mutation"] for i in fw.items if i.label == "unacceptable"]
        assert all(m["frame"] for m in mutated)
        assert fw.stats[FRAME_LOOKUP] == fw.stats["items"] == len(fw.items)


def _edge_corpus(n: int, seed: int = 0) -> list[list[tuple[str, ...]]]:
    """Sentences that start with a subject word, end with a noun, and hold function words and
    (less often) nouns and subject words inside: a wrong boundary drawn at random mostly falls
    after a function word, which no true sentence ends with."""
    rng = np.random.default_rng(seed)
    starts, nouns = ["he", "she", "they", "then"], [f"noun{i}" for i in range(30)]
    inner = ["the", "of", "and", "to", "in", "a", "was", "with"]
    out = []
    for _ in range(n):
        para = []
        for _ in range(6):
            k = int(rng.integers(6, 14))
            pools = [nouns, starts, inner]  # nouns and subject words occur inside too, often
            body = [str(rng.choice(pools[rng.choice(3, p=[0.35, 0.35, 0.3])])) for _ in range(k)]
            para.append((str(rng.choice(starts)), *body, str(rng.choice(nouns)), "."))
        out.append(para)
    return out


@pytest.mark.parametrize("check", ["segment1-last-token", "segment2-first-token"])
def test_eos_wrong_boundaries_have_the_words_of_true_ones(tmp_path, check):
    """The word before a wrong boundary is drawn as likely to end a sentence as the word
    before a true one (edge_weighting); without it the last word of the first segment reads
    the label."""
    from sentprobe.analysis.audit import audit_task
    from sentprobe.datasets.loaders.dnc import load_dnc_set
    from sentprobe.generation.function_words.pipeline import write_function_word_suite

    gains = {}
    for weighted in (False, True):
        fw = EndOfSentence(edge_weighting=weighted).generate(_edge_corpus(150), seed=0)
        out = tmp_path / str(weighted)
        write_function_word_suite(out, [fw], {}, corpus="x", corpus_license="x")
        task = load_dnc_set(out / "ACCEPTABILITY/acceptability-eos_data.json")
        (found,) = [f for f in audit_task(task, baselines=False) if f.check == check]
        gains[weighted] = found.data["gain_points"]
    assert gains[False] >= 15 and gains[True] <= gains[False] - 5, gains


def test_a_weighted_wrong_boundary_stays_within_the_limits():
    from sentprobe.generation.function_words.acceptability import weighted_boundary

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(20)]
    ends = {w: 1.0 for w in words}
    for _ in range(200):
        k = weighted_boundary(words, 10, 3.0, rng, ends, ends, min_side=5, max_side=15)
        assert k != 10 and 5 <= k <= 15
    assert weighted_boundary(words, 10, 3.0, rng, {}, {}, min_side=10, max_side=10) is None
