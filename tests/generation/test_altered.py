"""The altered-sentence tasks (BShift, SOMO, CoordInv) carry no surface cue (issue 8, part 1).

Both classes must be the same kind of sentence with or without one alteration, so no rule
that looks at one position of the sentence (first or last token, last character, number of
punctuation tokens, casing of the first word) may tell them apart.
"""

from __future__ import annotations

import random
import unicodedata
from collections import Counter, defaultdict

import pytest

from gen_synth import NOUNS, VERBS, record, svo_corpus
from sentprobe.generation import SOMO, BigramShift, CoordInv, build_suite
from sentprobe.generation.inputs import Item, annotated_items, surface

# ------------------------------------------------------------------ single-position rules


def _punct(token: str) -> bool:
    return all(unicodedata.category(ch)[0] in "PS" for ch in token)


def _class(token: str) -> str:
    if _punct(token):
        return "punct"
    if token[:1].isupper():
        return "upper"
    return "lower" if token[:1].isalpha() else "other"


RULES = {
    "first token": lambda w: w[0],
    "first token class": lambda w: _class(w[0]),
    "last token": lambda w: w[-1],
    "last character": lambda w: w[-1][-1],
    "punctuation tokens": lambda w: sum(map(_punct, w)),
    "first-word casing": lambda w: (w[0][:1].isupper(), w[0].isupper()),
}


def rule_accuracy(task, rule) -> float:
    """Test accuracy (points) of "the most frequent train label of this feature value"."""
    table: dict[object, Counter] = defaultdict(Counter)
    for sentence, label in task.splits["train"]:
        table[rule(sentence.split())][label] += 1
    majority = Counter(lab for _, lab in task.splits["train"]).most_common(1)[0][0]
    hits = 0
    for sentence, label in task.splits["test"]:
        counts = table.get(rule(sentence.split()))
        hits += (counts.most_common(1)[0][0] if counts else majority) == label
    return 100 * hits / len(task.splits["test"])


def class_distributions(examples, rule) -> dict[str, Counter]:
    out: dict[str, Counter] = defaultdict(Counter)
    for sentence, label in examples:
        out[label][rule(sentence.split())] += 1
    return out


# ------------------------------------------------------------------ spaCy-style clauses


def _clause(words, offset, head):
    """Rows of a clause ``words`` (subject first, then the verb, then adverbs) whose verb is
    the root (``head`` None) or a conj of 1-based ``head``; words starting "the" take a noun."""
    rows, subj = [], []
    if words[0].lower() == "the":
        subj = [(words[0], "DET", "DT", offset + 1, "det", {})]
        subj.append((words[1], "NOUN", "NN", None, "nsubj", {}))
        rest = words[2:]
    else:
        upos, xpos = ("PROPN", "NNP") if words[0][:1].isupper() else ("PRON", "PRP")
        subj = [(words[0], upos, xpos, None, "nsubj", {})]
        rest = words[1:]
    vi = offset + len(subj)
    subj[-1] = subj[-1][:3] + (vi, "nsubj", {})
    rows = subj + [(rest[0], "VERB", "VBD", 0 if head is None else head,
                    "root" if head is None else "conj", {})]  # fmt: skip
    rows += [(w, "ADV", "RB", vi, "advmod", {}) for w in rest[1:]]
    return rows, vi


def spacy_coordinated(first: str, second: str, comma=True, cc="and", final=".", to_conj=True):
    """``first [,] cc second final`` parsed as spaCy does: the comma and (``to_conj``) the
    final punctuation attached to the second conjunct."""
    rows1, root = _clause(first.split(), 1, None)
    k = len(rows1) + 1
    rows2, conj = _clause(second.split(), k + 1 + comma, root)
    mid = [(",", "PUNCT", ",", conj, "punct", {})] if comma else []
    mid.append((cc, "CCONJ", "CC", conj, "cc", {}))
    end = [(final, "PUNCT", ".", conj if to_conj else root, "punct", {})]
    return record(rows1 + mid + rows2 + end)


def _cut(sent):
    return CoordInv().clauses(Item(sent, surface(sent)))


def test_final_punctuation_stays_final_when_attached_to_the_conjunct():
    sent = spacy_coordinated("The dog barked", "the cat ran away", comma=False)
    assert sent.heads[-1] == 7  # "." hangs off "ran", the conjunct, as spaCy attaches it
    assert _cut(sent).inverted() == "The cat ran away and the dog barked ."
    with_comma = spacy_coordinated("The dog barked loudly", "I ran", final="!")
    assert _cut(with_comma).inverted() == "I ran , and the dog barked loudly !"
    assert _cut(with_comma).original() == " ".join(with_comma.tokens)


def test_no_final_punctuation_is_rejected():
    sent = spacy_coordinated("The dog barked", "the cat ran away", comma=False)
    for field in ("tokens", "upos", "xpos", "heads", "deprels", "feats"):
        getattr(sent, field).pop()
    assert _cut(sent) == "no final punctuation"


def test_clause_starting_with_punctuation_is_rejected():
    # "The dog barked , and -- sadly -- the cat ran ." : "--" opens the second clause
    rows = [
        ("The", "DET", "DT", 2, "det", {}),
        ("dog", "NOUN", "NN", 3, "nsubj", {}),
        ("barked", "VERB", "VBD", 0, "root", {}),
        (",", "PUNCT", ",", 11, "punct", {}),
        ("and", "CCONJ", "CC", 11, "cc", {}),
        ("--", "PUNCT", ":", 7, "punct", {}),
        ("sadly", "ADV", "RB", 11, "advmod", {}),
        ("--", "PUNCT", ":", 7, "punct", {}),
        ("the", "DET", "DT", 10, "det", {}),
        ("cat", "NOUN", "NN", 11, "nsubj", {}),
        ("ran", "VERB", "VBD", 3, "conj", {}),
        (".", "PUNCT", ".", 11, "punct", {}),
    ]
    assert _cut(record(rows)) == "a clause starts with punctuation"


def test_exactly_one_coordinating_conjunction_in_the_whole_sentence():
    # "The dog and the cat barked , but the bird sang ." : the root has one conj with one
    # cc, yet the sentence has two coordinating conjunctions
    rows = [
        ("The", "DET", "DT", 2, "det", {}),
        ("dog", "NOUN", "NN", 6, "nsubj", {}),
        ("and", "CCONJ", "CC", 5, "cc", {}),
        ("the", "DET", "DT", 5, "det", {}),
        ("cat", "NOUN", "NN", 2, "conj", {}),
        ("barked", "VERB", "VBD", 0, "root", {}),
        (",", "PUNCT", ",", 11, "punct", {}),
        ("but", "CCONJ", "CC", 11, "cc", {}),
        ("the", "DET", "DT", 10, "det", {}),
        ("bird", "NOUN", "NN", 11, "nsubj", {}),
        ("sang", "VERB", "VBD", 6, "conj", {}),
        (".", "PUNCT", ".", 11, "punct", {}),
    ]
    assert _cut(record(rows)) == "not exactly one coordinating conjunction in the sentence"


def test_brackets_stay_with_their_clause():
    # "The dog barked ( loudly ) , and the cat ran ." : ")" belongs to the first clause
    rows = [
        ("The", "DET", "DT", 2, "det", {}),
        ("dog", "NOUN", "NN", 3, "nsubj", {}),
        ("barked", "VERB", "VBD", 0, "root", {}),
        ("(", "PUNCT", "-LRB-", 5, "punct", {}),
        ("loudly", "ADV", "RB", 3, "advmod", {}),
        (")", "PUNCT", "-RRB-", 5, "punct", {}),
        (",", "PUNCT", ",", 11, "punct", {}),
        ("and", "CCONJ", "CC", 11, "cc", {}),
        ("the", "DET", "DT", 10, "det", {}),
        ("cat", "NOUN", "NN", 11, "nsubj", {}),
        ("ran", "VERB", "VBD", 3, "conj", {}),
        (".", "PUNCT", ".", 11, "punct", {}),
    ]
    assert _cut(record(rows)).inverted() == "The cat ran , and the dog barked ( loudly ) ."


ADVS = ["quickly", "slowly", "loudly", "again", "today", "there", "often", "never"]


def skewed_coordinated_corpus(n: int, seed: int = 0):
    """spaCy-style coordinated sentences whose clauses start differently: first clauses
    mostly with "The", second clauses mostly with "it" (so "It" would open most inverted
    sentences), final "." or "?", comma or not, clauses of random length."""
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        subj1 = rng.choices(["The " + rng.choice(NOUNS), "John", "Mary"], [6, 2, 2])[0]
        second = ["it", "he", "the " + rng.choice(NOUNS), "John", "I"]
        subj2 = rng.choices(second, [5, 2, 2, 1, 1])[0]
        c1 = f"{subj1} {rng.choice(VERBS)}ed " + " ".join(rng.choices(ADVS, k=rng.randint(0, 4)))
        c2 = f"{subj2} {rng.choice(VERBS)}s " + " ".join(rng.choices(ADVS, k=rng.randint(0, 4)))
        sent = spacy_coordinated(
            c1.strip(), c2.strip(), comma=rng.random() < 0.5, cc=rng.choice(["and", "but"]),
            final=rng.choices([".", "?"], [4, 1])[0], to_conj=rng.random() < 0.8,
        )  # fmt: skip
        key = " ".join(sent.tokens)
        if key not in seen:
            seen.add(key)
            out.append(sent)
    return out


SIZES = {"train": 600, "dev": 100, "test": 400}


def assert_no_single_position_cue(task):
    """Every rule sees the same distribution in both classes of every split, so it scores
    exactly the majority baseline on test."""
    for split, examples in task.splits.items():
        for name, rule in RULES.items():
            dist = class_distributions(examples, rule)
            assert dist[task.labels[0]] == dist[task.labels[1]], (split, name)
    for name, rule in RULES.items():
        assert rule_accuracy(task, rule) == 50.0, name


@pytest.fixture(scope="module")
def coordinv_task():
    return CoordInv().generate(skewed_coordinated_corpus(6000), SIZES, seed=3)


def test_coordinv_edges_are_identically_distributed_in_both_classes(coordinv_task):
    task = coordinv_task
    assert task.counts() == {s: {"O": n // 2, "I": n // 2} for s, n in SIZES.items()}
    assert_no_single_position_cue(task)
    for examples in task.splits.values():
        for sentence, _ in examples:
            words = sentence.split()
            assert words[-1] in (".", "?") and not _punct(words[0])
            assert words.count("and") + words.count("but") == 1


def test_coordinv_inverts_only_the_clauses(coordinv_task):
    for text, source in coordinv_task.sources.items():
        assert sorted(text.lower().split()) == sorted(source.lower().split())
        assert text.split()[-1] == source.split()[-1]


def test_coordinv_multilingual_path_gets_the_same_guarantees():
    """X-Probe (UD, any language) builds CoordInv with the same generator and rules."""
    corpus = skewed_coordinated_corpus(6000, seed=1)
    for rec in corpus:
        rec.lang = "xx"
    (task,) = build_suite(corpus, ["CoordInv"], SIZES, seed=5, lang="xx")
    assert_no_single_position_cue(task)
    for examples in task.splits.values():
        assert all(s.split()[-1] in (".", "?") for s, _ in examples)


# ------------------------------------------------------------------ SOMO


@pytest.fixture(scope="module")
def somo_corpus():
    """SVO sentences with varied edges: other determiners first, some without final "."."""
    rng = random.Random(7)
    corpus = svo_corpus(6000, seed=3, aux_rate=0.2)
    for rec in corpus:
        if rng.random() < 0.3:
            rec.tokens[0] = rng.choice(["A", "This", "Each"])
        if rng.random() < 0.3:
            for field in ("tokens", "upos", "xpos", "heads", "deprels", "feats"):
                getattr(rec, field).pop()
    return corpus


@pytest.fixture(scope="module")
def somo_task(somo_corpus):
    # test and dev take most replacement words first, so many train sentences cannot be altered
    return SOMO().generate(somo_corpus, {"train": 1000, "dev": 100, "test": 300}, seed=1)


def test_somo_originals_are_drawn_like_the_altered_sentences(somo_corpus, somo_task):
    """Every original could have been altered in its own split (with a replacement word no
    earlier split owns): originals are not the leftovers that could not be altered."""
    corpus, task, gen = somo_corpus, somo_task, SOMO()
    items = {item.text: item for item in annotated_items(corpus, Counter(), "SOMO")}
    gen._index(list(items.values()))
    taken: set[str] = set()  # replacement words of the splits generated before this one
    for split in ("test", "dev", "train"):  # the generation order
        for sentence, label in task.splits[split]:
            if label == "O":
                options = gen.options(items[sentence])
                assert any(r not in taken for rs in options.values() for r in rs), (
                    split,
                    sentence,
                )
        taken |= {task.targets[s] for s, lab in task.splits[split] if lab == "C"}


def test_somo_has_no_single_position_cue(somo_task):
    assert_no_single_position_cue(somo_task)


# ------------------------------------------------------------------ BShift


def test_bshift_never_swaps_the_last_token():
    assert BigramShift().positions(("A", "b", "c", "d")) == [1]
    rng = random.Random(0)
    corpus = [
        (rng.choice(NOUNS).capitalize(), *rng.choices(NOUNS, k=rng.randint(3, 12)), "zend")
        for _ in range(4000)
    ]
    task = BigramShift().generate(corpus, {"train": 600, "dev": 100, "test": 400}, seed=0)
    for examples in task.splits.values():
        assert {s.split()[-1] for s, _ in examples} == {"zend"}


def test_bshift_has_no_single_position_cue(corpus):
    """On the synthetic raw-text corpus (commas, quotes, Zipf-like words)."""
    task = BigramShift().generate(corpus, {"train": 1000, "dev": 200, "test": 400}, seed=2)
    assert_no_single_position_cue(task)


def test_coordinv_small_corpus_pairs_on_coarser_keys_and_says_so():
    """A treebank-sized pool cannot pair every original on its exact edges; the rest is
    paired on coarser keys (the stats count each level) rather than nothing being built."""
    corpus = skewed_coordinated_corpus(120, seed=4)
    task = CoordInv().generate(corpus, {"train": 40, "dev": 10, "test": 10}, seed=0)
    assert task.counts()["train"] == {"O": 20, "I": 20}
    levels = [k for k in task.stats if k.startswith("paired on")]
    assert levels[0] == "paired on first and last token, punctuation count, clause order"
    assert len(levels) > 1 and sum(task.stats[k] for k in levels) == 30
    for examples in task.splits.values():  # final punctuation stays final at every level
        assert all(s.split()[-1] in (".", "?") for s, _ in examples)


def test_somo_keeps_one_word_variants_in_one_split(somo_task):
    """Templated text has natural one-word variants of a sentence; one of them in another
    split (with the other label) is a twin a probe can recognise, so SOMO keeps them apart."""
    owner: dict[str, str] = {}
    for split in ("test", "dev", "train"):
        for sentence, _ in somo_task.splits[split]:
            tokens = sentence.split()
            for i in range(len(tokens)):
                mask = " ".join([*tokens[:i], "\0", *tokens[i + 1 :]])
                assert owner.setdefault(mask, split) == split, (split, sentence)
