"""Sentence-level labels: each task's rule on hand-built records, names and refusals, the
comparison with gold labels, and agreement by construction with what the generators write."""

from __future__ import annotations

import math

import pytest

from gen_synth import depth_length_corpus, record, svo_corpus
from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.errors import SentprobeError
from sentprobe.generation import build_suite, generator_for
from sentprobe.generation.labeling import (
    Labelled,
    UnlabelableTask,
    compare_labels,
    labeler,
    needs_annotation,
    needs_constituency,
    obj_num_label,
    resolve_task,
    sentlen_label,
    subj_num_label,
    tense_label,
    top_const_label,
    tree_depth_label,
    with_constituency,
)

# "The dogs have eaten the bones ." with PTB tags, UD features and a PTB tree
HAVE_EATEN = record(
    [
        ("The", "DET", "DT", 2, "det", {}),
        ("dogs", "NOUN", "NNS", 4, "nsubj", {"Number": "Plur"}),
        ("have", "AUX", "VBP", 4, "aux", {"Tense": "Pres", "VerbForm": "Fin"}),
        ("eaten", "VERB", "VBN", 0, "root", {"Tense": "Past", "VerbForm": "Part"}),
        ("the", "DET", "DT", 6, "det", {}),
        ("bones", "NOUN", "NNS", 4, "obj", {"Number": "Plur"}),
        (".", "PUNCT", ".", 4, "punct", {}),
    ],
    constituency="(ROOT (S (NP (DT The) (NNS dogs)) (VP (VBP have) (VP (VBN eaten) "
    "(NP (DT the) (NNS bones)))) (. .)))",
)


def simple(subj_tag: str, verb: tuple[str, str, dict], obj: str | None = None) -> AnnotatedSentence:
    """``N V [N] .`` with the given subject tag, verb (form, tag, feats) and object tag."""
    number = {"NN": "Sing", "NNS": "Plur"}
    rows = [
        ("x", "NOUN" if subj_tag.startswith("NN") else "PRON", subj_tag, 2, "nsubj",
         {"Number": number.get(subj_tag, "Sing")}),
        (verb[0], "VERB", verb[1], 0, "root", verb[2]),
    ]  # fmt: skip
    if obj:
        rows.append(("y", "NOUN", obj, 2, "obj", {"Number": number[obj]}))
    rows.append((".", "PUNCT", ".", 2, "punct", {}))
    return record(rows)


PAST = ("ran", "VBD", {"Tense": "Past", "VerbForm": "Fin"})
PRES = ("runs", "VBZ", {"Tense": "Pres", "VerbForm": "Fin"})


# ----------------------------------------------------------------------------- each task


def test_sentlen_bins_surface_tokens_and_tokens_alone():
    assert sentlen_label(["w"] * 5) == Labelled("0")
    assert sentlen_label(["w"] * 28).label == "5"
    out = sentlen_label(["w"] * 4)
    assert out.label is None and "length 4" in out.reason
    # a multi-word token counts once: 6 words, 5 written tokens
    rec = record([(w, "X", "X", 0 if i == 0 else 1, "dep", {}) for i, w in enumerate("abcdef")])
    rec.mwt = [(1, 2, "bc")]
    assert sentlen_label(rec).label == "0" and sentlen_label(rec.tokens).label == "0"


def test_tree_depth_constituency_and_dependency():
    assert tree_depth_label(HAVE_EATEN, "paper").label == "6"
    assert tree_depth_label(HAVE_EATEN, "xprobe").label == "3"  # eaten -> bones -> the
    bare = with_constituency(simple("NN", PAST))
    assert tree_depth_label(bare, "paper").label == "4"  # (ROOT (S (NP x) (VP ran) .))
    nothing = simple("NN", PAST)
    assert tree_depth_label(nothing, "paper") == Labelled(None, "no constituency tree")
    assert nothing.constituency is None  # with_constituency copied, did not mutate


def test_top_const_raw_sequence_and_task_classes():
    assert top_const_label(HAVE_EATEN) == Labelled("NP_VP_.")
    assert top_const_label(HAVE_EATEN, classes=["NP_VP_.", "OTHER"]).label == "NP_VP_."
    assert top_const_label(HAVE_EATEN, classes=["ADVP_NP_VP_.", "OTHER"]).label == "OTHER"
    comma = with_constituency(HAVE_EATEN)
    comma.constituency = "(ROOT (S (NP (PRP He)) (, ,) (VP (VBD left)) (. .)))"
    assert top_const_label(comma).reason == "punctuation or quotes inside the sequence"
    noend = AnnotatedSentence(["x"], ["X"], [0], ["root"], constituency="(ROOT (S (NP (NN x))))")
    assert top_const_label(noend).label is None


def test_tense_paper_and_xprobe_vocabularies():
    assert tense_label(simple("NN", PAST)).label == "PAST"
    assert tense_label(simple("NN", PRES)).label == "PRES"
    assert tense_label(HAVE_EATEN, "paper").label == "PRES"  # the finite auxiliary
    assert tense_label(HAVE_EATEN, "xprobe").label == "Pres"  # X-Probe's label names
    assert tense_label(HAVE_EATEN, "xprobe", vocabulary="senteval").label == "PRES"
    modal = simple("NN", ("will", "MD", {"VerbForm": "Fin"}))
    assert tense_label(modal).reason == "main clause verb is a modal (MD)"
    bare = simple("NN", ("run", "VB", {"VerbForm": "Inf"}))
    assert tense_label(bare) == Labelled(None, "no finite verb in the main clause")


def test_subject_and_object_number():
    assert subj_num_label(simple("NN", PAST)).label == "NN"
    assert subj_num_label(simple("NNS", PAST)).label == "NNS"
    assert subj_num_label(HAVE_EATEN, "xprobe").label == "Plur"
    assert subj_num_label(simple("PRP", PAST)).reason == "subject not tagged NN/NNS"
    assert obj_num_label(simple("NN", PAST, obj="NNS")).label == "NNS"
    assert obj_num_label(simple("NN", PAST, obj="NN"), "xprobe").label == "Sing"
    assert obj_num_label(simple("NN", PAST)).reason == "main clause has no object"
    two = simple("NN", PAST)
    two.deprels[2] = "nsubj"  # the final "." as a second subject
    assert subj_num_label(two).reason == "main clause has several subjects"


def with_lemmas(rec: AnnotatedSentence, lemmas: str) -> AnnotatedSentence:
    rec.lemmas = lemmas.split()
    return rec


def test_comma_spliced_run_on_first_clause_is_the_main_clause():
    """spaCy roots a run-on on its *last* clause and hangs the first on it as a preceding
    ccomp; UD (and the label) take the first clause. The old rule read "we can go": a modal
    (Tense rejected), a pronoun subject, no object."""
    rec = with_lemmas(
        record(
            [
                ("The", "DET", "DT", 2, "det", {}),
                ("dog", "NOUN", "NN", 3, "nsubj", {"Number": "Sing"}),
                ("ate", "VERB", "VBD", 9, "ccomp", {"Tense": "Past", "VerbForm": "Fin"}),
                ("the", "DET", "DT", 5, "det", {}),
                ("bones", "NOUN", "NNS", 3, "obj", {"Number": "Plur"}),
                (",", "PUNCT", ",", 9, "punct", {}),
                ("we", "PRON", "PRP", 9, "nsubj", {}),
                ("can", "AUX", "MD", 9, "aux", {"VerbForm": "Fin"}),
                ("go", "VERB", "VB", 0, "root", {"VerbForm": "Inf"}),
                (".", "PUNCT", ".", 9, "punct", {}),
            ]
        ),
        "the dog eat the bone , we can go .",
    )
    assert tense_label(rec) == Labelled("PAST")
    assert subj_num_label(rec) == Labelled("NN")
    assert obj_num_label(rec) == Labelled("NNS")
    assert tense_label(rec, "xprobe").label == "Past"
    rec.lang = "fr"  # the pattern is the English parser's: other languages keep the root
    assert tense_label(rec, "xprobe").reason == "no finite verb in the main clause"


def test_reported_speech_keeps_the_speech_verb():
    """'" The dog ate the bones , " the men said .': the quote precedes the root as a
    ccomp too, but a verb of saying stays the main clause (UD EWT's gold trees do the same)."""
    rec = with_lemmas(
        record(
            [
                ('"', "PUNCT", "``", 4, "punct", {}),
                ("The", "DET", "DT", 3, "det", {}),
                ("dog", "NOUN", "NN", 4, "nsubj", {"Number": "Sing"}),
                ("ate", "VERB", "VBD", 11, "ccomp", {"Tense": "Past", "VerbForm": "Fin"}),
                ("the", "DET", "DT", 6, "det", {}),
                ("bones", "NOUN", "NNS", 4, "obj", {"Number": "Plur"}),
                (",", "PUNCT", ",", 4, "punct", {}),
                ('"', "PUNCT", "''", 4, "punct", {}),
                ("the", "DET", "DT", 10, "det", {}),
                ("men", "NOUN", "NNS", 11, "nsubj", {"Number": "Plur"}),
                ("say", "VERB", "VBP", 0, "root", {"Tense": "Pres", "VerbForm": "Fin"}),
                (".", "PUNCT", ".", 11, "punct", {}),
            ]
        ),
        '" the dog eat the bone , " the man say .',
    )
    assert tense_label(rec) == Labelled("PRES")
    assert subj_num_label(rec) == Labelled("NNS")
    assert obj_num_label(rec).reason == "main clause has no object"


def test_object_of_an_infinitive_after_a_copula_root():
    """ "The best way is to use coupons .": spaCy roots *is* with an xcomp *use*; in UD
    *use* is the root and *coupons* the main clause's object (the old rule found none)."""
    rec = with_lemmas(
        record(
            [
                ("The", "DET", "DT", 3, "det", {}),
                ("best", "ADJ", "JJS", 3, "amod", {}),
                ("way", "NOUN", "NN", 4, "nsubj", {"Number": "Sing"}),
                ("is", "AUX", "VBZ", 0, "root", {"Tense": "Pres", "VerbForm": "Fin"}),
                ("to", "PART", "TO", 6, "mark", {}),
                ("use", "VERB", "VB", 4, "xcomp", {"VerbForm": "Inf"}),
                ("coupons", "NOUN", "NNS", 6, "obj", {"Number": "Plur"}),
                (".", "PUNCT", ".", 4, "punct", {}),
            ]
        ),
        "the good way be to use coupon .",
    )
    assert obj_num_label(rec) == Labelled("NNS")
    assert subj_num_label(rec) == Labelled("NN") and tense_label(rec) == Labelled("PRES")
    rec.lemmas[3] = "seem"  # only a copula root: "seems to use" keeps no main-clause object
    assert obj_num_label(rec).reason == "main clause has no object"


def small_clause(verb: tuple[str, str, dict], mark: bool = False) -> AnnotatedSentence:
    rows = [
        ("Johnson", "PROPN", "NNP", 2, "nsubj", {"Number": "Sing"}),
        ("let", "VERB", "VBD", 0, "root", {"Tense": "Past", "VerbForm": "Fin"}),
        ("the", "DET", "DT", 4, "det", {}),
        ("dogs", "NOUN", "NNS", 5, "nsubj", {"Number": "Plur"}),
        (verb[0], "VERB", verb[1], 2, "ccomp", verb[2]),
        (".", "PUNCT", ".", 2, "punct", {}),
    ]
    if mark:  # "Johnson let that the dogs cross ."
        rows = [(f, u, x, h + (h > 2), d, ft) for f, u, x, h, d, ft in rows]
        rows.insert(2, ("that", "SCONJ", "IN", 6, "mark", {}))
    return with_lemmas(record(rows), " ".join(r[0].lower() for r in rows))


def test_small_clause_subject_is_the_main_clause_object():
    """ "Johnson let the dogs cross .": spaCy says nsubj(cross, dogs) under a ccomp; UD says
    obj(let, dogs) + xcomp(let, cross). A full finite or marked clause is not one."""
    assert obj_num_label(small_clause(("cross", "VB", {"VerbForm": "Inf"}))) == Labelled("NNS")
    finite = small_clause(("crossed", "VBD", {"Tense": "Past", "VerbForm": "Fin"}))
    assert obj_num_label(finite).reason == "main clause has no object"  # "saw the dogs crossed"
    marked = small_clause(("cross", "VB", {"VerbForm": "Inf"}), mark=True)
    assert obj_num_label(marked).reason == "main clause has no object"


def test_task_names_and_refusals():
    assert resolve_task("tense") == "Tense" and resolve_task("subj_number") == "SubjNum"
    assert resolve_task("TreeDepth") == "TreeDepth"
    for task, why in [("WC", "target words"), ("bigram_shift", "swapped"), ("SOMO", "replaced")]:
        with pytest.raises(UnlabelableTask, match=why):
            resolve_task(task)
    with pytest.raises(SentprobeError, match="unknown task 'Nope'"):
        resolve_task("Nope")
    with pytest.raises(SentprobeError, match="unknown profile"):
        labeler("Tense", "bogus")
    assert not needs_annotation("SentLen") and needs_annotation("Tense")
    assert needs_constituency("TreeDepth", "paper") and not needs_constituency(
        "TreeDepth", "xprobe"
    )
    assert labeler("past_present", lang="fr")(HAVE_EATEN).label == "Pres"  # fr -> xprobe


# ---------------------------------------------------------------------------- comparison


def cells(markdown: str, start: str, last: bool = False) -> list[str]:
    """Cells of the first (or last) table row containing ``start``."""
    rows = [ln for ln in markdown.splitlines() if start in ln]
    row = rows[-1] if last else rows[0]
    return [c.strip().replace("\\|", "|") for c in row.strip().strip("|").split(" | ")]


def test_compare_counts_per_class_and_confusion():
    gold = ["A", "A", "A", "B", "B", "B"]
    pred = [Labelled("A"), Labelled("A"), Labelled("B"), Labelled("B"), Labelled("C"),
            Labelled(None, "no subject")]  # fmt: skip
    cmp = compare_labels(gold, pred)
    assert (cmp.n, cmp.labelled, cmp.unlabelled, cmp.agree) == (6, 5, 1, 3)
    assert cmp.agreement == pytest.approx(0.6)
    rows = {r["class"]: r for r in cmp.per_class()}
    assert rows["A"]["agreement"] == pytest.approx(2 / 3) and rows["A"]["precision"] == 1.0
    assert rows["B"]["unlabelled"] == 1 and rows["B"]["agreement"] == pytest.approx(0.5)
    assert cmp.predicted_classes == ["A", "B", "C"]
    md = cmp.to_markdown("T")
    assert "- agreement: 3 of 5 labelled sentences = 60.0% (50.0% of all 6)" in md
    assert "  - no subject: 1" in md
    assert cells(md, "gold \\ predicted") == ["gold \\ predicted", "A", "B", "C", "-"]
    assert cells(md, "| A ", last=True) == ["A", "2", "1", "0", "0"]
    assert cells(md, "| B ", last=True) == ["B", "0", "1", "1", "1"]
    assert cells(md, "| A ") == ["A", "3", "0", "2", "66.7", "2", "100.0"]
    assert math.isnan(compare_labels([], []).agreement)


# ------------------------------------------------------- agreement with the generators


def fronted(rec: AnnotatedSentence) -> AnnotatedSentence:
    """``Sadly`` + the record: a pre-subject adverb, so TopConst gets ADVP_NP_VP_."""
    root = rec.root + 2
    return AnnotatedSentence(
        tokens=["Sadly", rec.tokens[0].lower(), *rec.tokens[1:]],
        upos=["ADV", *rec.upos],
        heads=[root] + [h + 1 if h else 0 for h in rec.heads],
        deprels=["advmod", *rec.deprels],
        xpos=["RB", *rec.xpos],
        feats=[{}, *rec.feats],
        lang=rec.lang,
    )


@pytest.fixture(scope="module")
def english():
    plain = svo_corpus(1200, seed=0, aux_rate=0.3)
    return [with_constituency(r) for r in plain + [fronted(r) for r in svo_corpus(600, seed=5)]]


SIZES = {"train": 40, "dev": 10, "test": 10}
#: 15 verb and 30 noun stems: the lexical split's form rules relaxed (labels are tested here)
PARAMS = {
    t: {"freq_band": (1, 10_000), "max_form_share": 0.5, "min_forms": 2}
    for t in ("Tense", "SubjNum", "ObjNum")
} | {
    "SentLen": {"bins": ((5, 8), (9, 12))},
    "TreeDepth": {"depths": (5, 6)},
    "TopConst": {"n_frequent": 1},
}


def by_text(records: list[AnnotatedSentence]) -> dict[str, AnnotatedSentence]:
    return {" ".join(r.tokens): r for r in records}


@pytest.mark.parametrize("layout", ["senteval", "xprobe"])
@pytest.mark.parametrize("profile", ["paper", "xprobe"])
def test_labeling_reproduces_every_written_label(english, profile, layout):
    tasks = ["SentLen", "TreeDepth", "TopConst", "Tense", "SubjNum", "ObjNum"]
    if profile == "xprobe":
        tasks.remove("TreeDepth")  # dependency depths: the chain corpus below
    built = build_suite(english, tasks, SIZES, seed=3, profile=profile, layout=layout,
                        params=PARAMS)  # fmt: skip
    source = by_text(english)
    for task in built:
        assert {lab for ex in task.splits.values() for _, lab in ex} == set(task.labels)
        gen = generator_for(task.name, "en", profile, **PARAMS.get(task.name, {}))
        label = labeler(task.name, profile, vocabulary=layout, classes=task.labels)
        for examples in task.splits.values():
            for text, written in examples:
                rec = source[text]
                assert label(rec) == Labelled(written), (task.name, text)
                if task.name == "SentLen":  # the generator's own bins, passed in
                    assert sentlen_label(rec, generator=gen).label == written


def test_dependency_tree_depth_reproduces_written_labels():
    corpus = depth_length_corpus(120, seed=0)
    (task,) = build_suite(corpus, ["TreeDepth"], SIZES, seed=1, lang="xx", layout="xprobe")
    source = by_text(corpus)
    label = labeler("TreeDepth", lang="xx")
    written = [(t, lab) for ex in task.splits.values() for t, lab in ex]
    assert {lab for _, lab in written} == {"3", "4", "5", "6", "7"}
    assert all(label(source[t]) == Labelled(lab) for t, lab in written)
