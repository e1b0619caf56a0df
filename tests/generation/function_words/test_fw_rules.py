"""Each mutation rule of the function-word generators (Kim et al. 2019), on single sentences."""

from __future__ import annotations

import numpy as np
import pytest

from sentprobe.generation.function_words.articles import indefinite_for
from sentprobe.generation.function_words.lexicon import CONJUNCTIONS, WH_WORDS
from sentprobe.generation.function_words.rules import (
    apply,
    article_kind,
    coordination_frame,
    resegment_index,
    swap_articles,
    swap_conjunction,
    swap_wh,
)


@pytest.mark.parametrize(
    "word, article",
    [
        ("hour", "an"), ("honest", "an"), ("heir", "an"), ("university", "a"),
        ("one-time", "a"), ("European", "a"), ("FBI", "an"), ("MP3", "an"), ("BBC", "a"),
        ("X-ray", "an"), ("apple", "an"), ("house", "a"), ("unusual", "an"), ("unique", "a"),
        ("user", "a"), ("unimportant", "an"), ("8", "an"), ("80", "an"), ("11", "an"),
        ("18,000", "an"), ("1990s", "a"), ("100", "a"), ("e-mail", "an"), ("once", "a"),
    ],
)  # fmt: skip
def test_a_or_an_by_the_sound_of_the_next_word(word, article):
    assert indefinite_for(word) == article
    assert indefinite_for(word, capital=True) == article.capitalize()


def test_wh_swap_replaces_the_only_wh_word_by_another_of_the_five():
    tokens = ("I", "know", "where", "you", "live", ".")
    seen = set()
    for seed in range(60):
        m = swap_wh(tokens, np.random.default_rng(seed))
        assert m.positions == (2,) and m.replaced == ("where",)
        assert m.replacements[0] in WH_WORDS and m.replacements[0] != "where"
        seen.add(m.replacements[0])
    assert seen == set(WH_WORDS) - {"where"}  # each of the other five is drawn
    first = swap_wh(("What", "is", "it", "?"), np.random.default_rng(0), target="why")
    assert apply(("What", "is", "it", "?"), first) == ("Why", "is", "it", "?")  # case kept
    with pytest.raises(ValueError):
        swap_wh(("Who", "knows", "what", "?"), np.random.default_rng(0))  # two wh-words


def test_article_swap_needs_two_of_the_same_article_and_swaps_all():
    def split(text: str) -> tuple[str, ...]:
        return tuple(text.split(" "))

    assert article_kind(split("the cat saw a dog")) is None  # one of each
    assert article_kind(split("the cat saw the dog and the bird")) == "the"
    assert article_kind(split("the cat and the dog ate a pie and an egg")) is None  # both
    tokens = split("The owner of the hotel gave the heir an hour")
    m = swap_articles(tokens)
    assert m.rule == "the->a" and m.positions == (0, 3, 6)
    assert " ".join(apply(tokens, m)) == "An owner of a hotel gave an heir an hour"
    tokens = split("A man met an old friend in a bar")
    m = swap_articles(tokens)
    assert m.rule == "a->the"
    assert " ".join(apply(tokens, m)) == "The man met the old friend in the bar"


def test_conjunction_swap_uses_the_other_two():
    tokens = ("Rooms", "very", "clean", "and", "smelled", "fresh", ".")
    drawn = {swap_conjunction(tokens, np.random.default_rng(s)).replacements[0] for s in range(30)}
    assert drawn == set(CONJUNCTIONS) - {"and"}
    with pytest.raises(ValueError):
        swap_conjunction(("tea", "or", "coffee", "and", "cake"), np.random.default_rng(0))


@pytest.mark.parametrize("sigma", [0.3, 1.0, 3.0, 10.0])
def test_gaussian_resegmentation_never_returns_the_true_boundary(sigma):
    rng = np.random.default_rng(0)
    draws = [resegment_index(12, 5, sigma, rng) for _ in range(2000)]
    assert 5 not in draws
    assert min(draws) >= 1 and max(draws) <= 11  # both sides keep a word
    if sigma < 0.5:
        assert set(draws) == {4, 6}  # one word off: the nearest wrong boundaries
    # the draw is a rounded Gaussian around the boundary: symmetric on average
    assert abs(np.mean(draws) - 5) < 0.5 + 0.1 * sigma


def test_resegmentation_without_another_boundary_is_an_error():
    with pytest.raises(ValueError):
        resegment_index(2, 1, 1.0, np.random.default_rng(0))
    with pytest.raises(ValueError):
        resegment_index(10, 4, 0.0, np.random.default_rng(0))


@pytest.mark.parametrize(
    "sentence",
    [  # issue 48: read in full, these swaps stayed acceptable or the frame was clausal
        "Emma still hadn't said anything and she jumped to her feet .",
        "Emma still hadn't said anything but she jumped to her feet .",
        "Callum could do nothing or stare .",
        "Callum could do nothing but stare .",
        "They said nothing but the implication was unmistakable .",
        "He tried it all but nothing worked .",
        "Tears seeped out between her fingers and she opened her eyes .",
        "strengthen both our abilities and we will be",
        "Either way , I'll go or stay .",
    ],
)
def test_clausal_conjunctions_are_no_frame(sentence):
    assert coordination_frame(sentence.split()) is None


@pytest.mark.parametrize(
    ("sentence", "frame"),
    [
        ("It was nothing but a dream .", "nothing but"),
        ("She liked both Anna and Ben .", "both ... and"),
        ("You can have either tea or coffee .", "either ... or"),
        ("It sat between the door and the window .", "between ... and"),
    ],
)
def test_phrasal_frames_are_kept(sentence, frame):
    assert coordination_frame(sentence.split()) == frame
