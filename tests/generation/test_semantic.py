"""Tense, SubjNum, ObjNum (lexical splits), SOMO and CoordInv on synthetic annotated corpora."""

import math
from collections import Counter

import pytest
from test_syntactic_annotated import check_balanced_disjoint

from gen_synth import coordinated_corpus, record, svo_corpus
from sentprobe.generation import SOMO, CoordInv, GenerationError, ObjNum, SubjNum, Tense
from sentprobe.generation.inputs import Item, surface
from sentprobe.generation.writer import senteval_lines

SIZES = {"train": 200, "dev": 40, "test": 40}
#: The synthetic corpus has 15 verb and 30 noun stems: too few forms for the default rules
#: (10% per form, 30 forms per class and split); test_lexical_rules.py checks those.
FEW_FORMS = {"max_form_share": 0.25, "min_forms": 3}


@pytest.fixture(scope="module")
def svo():
    return svo_corpus(3000, seed=0, aux_rate=0.2)


def by_text(corpus):
    return {" ".join(r.tokens): r for r in corpus}


def test_tense_rule_uses_finite_auxiliary_then_root():
    ptb, ud = Tense(), Tense(annotation="ud")
    has_eaten = record(
        [
            ("He", "PRON", "PRP", 3, "nsubj", {}),
            ("has", "AUX", "VBZ", 3, "aux", {"Tense": "Pres", "VerbForm": "Fin"}),
            ("eaten", "VERB", "VBN", 0, "root", {"Tense": "Past", "VerbForm": "Part"}),
            (".", "PUNCT", ".", 3, "punct", {}),
        ]
    )
    assert ptb.target(has_eaten) == ("PRES", 1) and ud.target(has_eaten) == ("PRES", 1)
    assert Tense(annotation="ud", ud_root_only=True).target(has_eaten) == ("PAST", 2)
    can_go = record(
        [
            ("He", "PRON", "PRP", 3, "nsubj", {}),
            ("can", "AUX", "MD", 3, "aux", {}),
            ("go", "VERB", "VB", 0, "root", {"VerbForm": "Inf"}),
        ]
    )
    assert ptb.target(can_go) == "main clause verb is a modal (MD)"
    assert ud.target(can_go) == "no finite verb in the main clause"


@pytest.mark.parametrize(
    "gen,slot",
    [
        (Tense(freq_band=(20, 5000), **FEW_FORMS), "verb"),
        (Tense(annotation="ud", freq_band=(20, 5000), **FEW_FORMS), "verb"),
        (SubjNum(freq_band=(20, 5000), **FEW_FORMS), "subj"),
        (SubjNum(annotation="ud", freq_band=(20, 5000), **FEW_FORMS), "subj"),
        (ObjNum(freq_band=(20, 5000), **FEW_FORMS), "obj"),
        (ObjNum(annotation="ud", freq_band=(20, 5000), **FEW_FORMS), "obj"),
    ],
)
def test_lexical_tasks_labels_and_no_form_in_two_splits(svo, gen, slot):
    task = gen.generate(svo, SIZES, seed=4)
    check_balanced_disjoint(task)
    records = by_text(svo)
    split_of_form: dict[str, set[str]] = {}
    for split, examples in task.splits.items():
        for sentence, label in examples:
            rec = records[sentence]
            rel = {"subj": "nsubj", "obj": "obj"}.get(slot)
            if rel:
                i = rec.deprels.index(rel)
                assert label == rec.xpos[i]  # NN / NNS
            else:
                finite = [j for j, x in enumerate(rec.xpos) if x in ("VBD", "VBZ")]
                i = finite[0]
                assert label == {"VBD": "PAST", "VBZ": "PRES"}[rec.xpos[i]]
            split_of_form.setdefault(rec.tokens[i].lower(), set()).add(split)
            assert task.targets[sentence] == rec.tokens[i].lower()  # what QUALITY.md checks
    assert all(len(s) == 1 for s in split_of_form.values()), split_of_form
    assert len(split_of_form) > 6  # several forms, spread over the splits
    assert {next(iter(s)) for s in split_of_form.values()} == {"train", "dev", "test"}
    assert senteval_lines(task) == senteval_lines(gen.generate(svo, SIZES, seed=4))


def test_frequency_band_rejects_and_error_says_what_to_relax(svo):
    task = SubjNum(freq_band=(20, 5000), **FEW_FORMS).generate(svo, SIZES, seed=0)
    assert "rejected: target form frequency outside [20, 5000]" not in task.stats
    with pytest.raises(GenerationError) as err:
        SubjNum(freq_band=(500, 5000)).generate(svo, SIZES, seed=0)  # no noun that frequent
    assert "widen freq_band" in str(err.value) and "train/NN: 0 of 100 items" in str(err.value)


def changed_position(a: list[str], b: list[str]) -> int:
    diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    assert len(a) == len(b) and len(diff) == 1
    return diff[0]


def test_somo_rules(svo):
    gen = SOMO()
    task = gen.generate(svo, SIZES, seed=2)
    check_balanced_disjoint(task)
    records = by_text(svo)
    freq = Counter(w for r in svo for w in r.tokens)
    bigram = Counter(b for r in svo for b in zip(r.tokens, r.tokens[1:]))
    owner: dict[str, str] = {}
    sources, positions = [], Counter()
    for split, examples in task.splits.items():
        for sentence, label in examples:
            words = sentence.split()
            if label == "O":
                assert sentence in records
                sources.append(sentence)
                continue
            assert sentence not in records
            orig = records[task.sources[sentence]]
            sources.append(" ".join(orig.tokens))
            i = changed_position(orig.tokens, words)
            positions[i] += 1
            o, r = orig.tokens[i], words[i]
            assert task.targets[sentence] == r
            assert 0 < i < len(words) - 1 and orig.upos[i] in ("NOUN", "VERB")
            assert 40 <= freq[o] <= 400 and 40 <= freq[r] <= 400
            assert {t.xpos[j] for t in svo for j, w in enumerate(t.tokens) if w == r} == {
                orig.xpos[i]
            }
            p, n = words[i - 1], words[i + 1]
            assert abs(math.log(bigram[p, r]) - math.log(bigram[p, o])) <= 1
            assert abs(math.log(bigram[r, n]) - math.log(bigram[o, n])) <= 1
            assert owner.setdefault(r, split) == split, f"{r} used in two splits"
    assert len(sources) == len(set(sources))  # no sentence in both versions
    assert len(positions) > 1  # not always the same (first) noun/verb
    assert senteval_lines(task) == senteval_lines(gen.generate(svo, SIZES, seed=2))


def test_coordinv_balance_casing_and_single_use():
    corpus = coordinated_corpus(3000, seed=0)
    records = by_text(corpus)
    task = CoordInv().generate(corpus, SIZES, seed=1)
    check_balanced_disjoint(task)
    originals = []
    for split, examples in task.splits.items():
        long_first = Counter()
        lower_initial = Counter()
        for sentence, label in examples:
            words = sentence.split()
            lower_initial[label] += words[0][0].islower()
            cut = words.index(",")
            first, second = words[:cut], words[cut + 2 : -1]
            long_first[label] += len(first) > len(second)
            if label == "O":
                originals.append(sentence)
                continue
            assert sentence not in records
            orig = records[task.sources[sentence]]
            src = " ".join(second + words[cut : cut + 2] + first + ["."])
            assert src.lower() == task.sources[sentence].lower()  # clauses swapped, nothing else
            originals.append(" ".join(orig.tokens))
            # casing follows the POS: proper nouns and "I" keep their capital
            o1 = orig.tokens[0]  # shown after the conjunction now, as second[0]
            assert second[0] == (o1 if orig.upos[0] == "PROPN" or o1 == "I" else o1.lower())
            new_first = orig.tokens[len(second) + 2]  # first word of the original 2nd clause
            assert words[0] == new_first[0].upper() + new_first[1:]
        assert long_first["O"] == long_first["I"] > 0, (split, long_first)  # paired on it
        assert lower_initial["O"] == lower_initial["I"] == 0
    assert len(originals) == len(set(originals))
    assert task.stats["rejected: clauses of equal length"] > 0


def test_coordinv_rejects_conjuncts_without_own_subject():
    gen = CoordInv()
    no_subj = record(
        [
            ("The", "DET", "DT", 2, "det", {}),
            ("cat", "NOUN", "NN", 3, "nsubj", {}),
            ("ate", "VERB", "VBD", 0, "root", {}),
            ("and", "CCONJ", "CC", 5, "cc", {}),
            ("slept", "VERB", "VBD", 3, "conj", {}),
            (".", "PUNCT", ".", 3, "punct", {}),
        ]
    )
    assert "no subject" in gen.clauses(Item(no_subj, surface(no_subj)))


def test_quality_report_checks_the_generated_targets_exactly(svo):
    from sentprobe.analysis.quality import quality_report

    task = SubjNum(freq_band=(20, 5000), **FEW_FORMS).generate(svo, SIZES, seed=4)
    assert "target forms are disjoint across splits" in quality_report([task], baselines=False)
    leaked = next(s for s, _ in task.splits["test"])
    task.targets[leaked] = task.targets[task.splits["train"][0][0]]
    assert "lexical-split: 1 target form occurs in both train and test" in quality_report(
        [task], baselines=False
    )
