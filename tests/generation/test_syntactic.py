import numpy as np
import pytest

from sentprobe.generation import BigramShift, GenerationError
from sentprobe.generation.syntactic import is_punctuation
from sentprobe.generation.writer import senteval_lines

SIZES = {"train": 200, "dev": 50, "test": 50}


def swapped_at(original: tuple[str, ...], inverted: tuple[str, ...]) -> int | None:
    """The position i if ``inverted`` is ``original`` with tokens i and i+1 swapped."""
    diff = [i for i, (a, b) in enumerate(zip(original, inverted, strict=False)) if a != b]
    if len(original) != len(inverted) or len(diff) != 2 or diff[1] != diff[0] + 1:
        return None
    i = diff[0]
    return i if (original[i], original[i + 1]) == (inverted[i + 1], inverted[i]) else None


def test_punctuation_tokens():
    assert all(map(is_punctuation, [".", ",", "--", "...", "%", "$", "(", "'"]))
    assert not any(map(is_punctuation, ["word", "'s", "3.5", "e.g."]))


def test_swap_never_touches_first_token_punctuation_or_equal_pairs():
    bs = BigramShift()
    tokens = ("The", "old", "cat", "cat", ",", "sat", "on", "mats", ".")
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        out = bs.swap(tokens, rng)
        i = swapped_at(tokens, out)
        assert i is not None and i >= 1
        assert not is_punctuation(tokens[i]) and not is_punctuation(tokens[i + 1])
        seen.add(i)
    # 0 is the start, (cat, cat) are equal, the pairs with "," or "." are punctuation
    assert seen == {1, 5, 6}
    assert bs.swap(("Hello", "world", ",", ".", "!"), rng) is None  # only pair is at 0


def test_generate_balanced_disjoint_and_each_sentence_in_one_version(corpus):
    task = BigramShift().generate(corpus, SIZES, seed=5)
    originals = {" ".join(t): t for t in corpus}
    used_originals = []
    for split, examples in task.splits.items():
        labels = [lab for _, lab in examples]
        assert labels.count("O") == labels.count("I") == SIZES[split] // 2
        for sentence, label in examples:
            assert '"' not in sentence
            if label == "O":
                assert sentence in originals
                used_originals.append(sentence)
                continue
            assert sentence not in originals
            tokens = tuple(sentence.split())
            sources = [o for o in corpus if len(o) == len(tokens) and swapped_at(o, tokens)]
            assert len(sources) == 1
            assert swapped_at(sources[0], tokens) >= 1
            used_originals.append(" ".join(sources[0]))
    # no corpus sentence shows up twice (as O and as the source of an I, or across splits)
    assert len(used_originals) == len(set(used_originals)) == sum(SIZES.values())
    assert task.stats["rejected: contains double quotes"] > 0


def test_generate_is_deterministic(corpus):
    a = senteval_lines(BigramShift().generate(corpus, SIZES, seed=5))
    assert a == senteval_lines(BigramShift().generate(corpus, SIZES, seed=5))
    assert a != senteval_lines(BigramShift().generate(corpus, SIZES, seed=6))


def test_too_small_corpus_says_how_many_fit(corpus):
    with pytest.raises(GenerationError) as err:
        BigramShift().generate(corpus[:100], SIZES, seed=0)
    msg = str(err.value)
    assert "needs 300 distinct sentences" in msg and "allow a swap" in msg
    assert "skip_quotes=False" in msg
