"""The UD Tense rule labels only finite indicative verbs: each refusal is planted in a tree as
the non-English annotators produce it (spaCy fr/es, natasha) and the refusal is asserted."""

import pytest

from gen_synth import record
from sentprobe.generation import Tense
from sentprobe.generation.semantic import indicative

UD = Tense(annotation="ud")
IND_PAST = {"Mood": "Ind", "Tense": "Past", "VerbForm": "Fin"}
IND_PRES = {"Mood": "Ind", "Tense": "Pres", "VerbForm": "Fin"}


def clause(verb, feats, lang, *, subject="Il", lemma=None, obj="fichier"):
    """'[subject] verb le obj .' with the verb as root; no subject when ``subject`` is None."""
    rows = [] if subject is None else [(subject, "PRON", "", 2, "nsubj", {})]
    v = len(rows) + 1
    rows += [
        (verb, "VERB", "", 0, "root", feats),
        ("le", "DET", "", v + 2, "det", {}),
        (obj, "NOUN", "", v, "obj", {"Number": "Sing"}),
        (".", "PUNCT", "", v, "punct", {}),
    ]
    sent = record(rows, lang=lang)
    sent.lemmas = [lemma or t.lower() for t in sent.tokens]
    return sent


def test_a_finite_indicative_verb_is_labelled():
    assert UD.target(clause("donna", IND_PAST, "fr", lemma="donner"))[0] == "PAST"
    assert UD.target(clause("ouvre", IND_PRES, "fr", lemma="ouvrir"))[0] == "PRES"
    assert UD.target(clause("открыла", IND_PAST, "ru", subject="Она"))[0] == "PAST"
    assert UD.target(clause("открылась", IND_PAST, "ru", subject="Она"))[0] == "PAST"
    assert UD.target(clause("abrió", IND_PAST, "es", subject=None))[0] == "PAST"  # pro-drop
    assert UD.target(clause("fue", IND_PAST, "es", subject=None))[0] == "PAST"


@pytest.mark.parametrize(
    "feats,reason",
    [
        ({"Mood": "Imp", "Tense": "Pres", "VerbForm": "Fin"}, "not indicative (Mood=Imp)"),
        ({"Mood": "Sub", "Tense": "Pres", "VerbForm": "Fin"}, "not indicative (Mood=Sub)"),
        ({"Mood": "Cnd", "Tense": "Pres", "VerbForm": "Fin"}, "not indicative (Mood=Cnd)"),
        ({"Tense": "Past", "VerbForm": "Fin"}, "no Mood feature"),
        ({"Tense": "Past"}, "not finite (VerbForm=none)"),
    ],
)
def test_non_indicative_or_unmarked_verbs_are_refused(feats, reason):
    found = UD.target(clause("ouvrit", feats, "fr", lemma="ouvrir"))
    assert isinstance(found, str) and reason in found


def test_a_participle_root_without_a_finite_auxiliary_is_refused():
    part = {"Tense": "Past", "VerbForm": "Part", "Mood": "Ind"}
    assert UD.target(clause("ouvert", part, "fr")) == "no finite verb in the main clause"


def test_ptb_tags_stand_in_for_a_missing_mood():
    """English annotators give VBD/VBZ/VBP (indicative forms) but no Mood on a plain verb."""
    sent = clause("opened", {"Tense": "Past", "VerbForm": "Fin"}, "en", subject="He")
    assert indicative(sent, 1) is None
    sent.xpos[1] = "VBD"
    assert indicative(sent, 1) is True and UD.target(sent)[0] == "PAST"


def test_a_subjectless_clause_is_refused_where_the_language_needs_a_subject():
    """spaCy fr calls the caption 'Inclut des salutations' and the imperative 'Ouvrez le menu'
    indicative; French has no pro-drop, so without a subject neither is a declarative."""
    for verb, feats in (("Inclut", IND_PAST), ("Ouvrez", IND_PRES)):
        found = UD.target(clause(verb, feats, "fr", subject=None, lemma="inclure"))
        assert found == "main clause has no subject (an imperative or a caption)"
    expl = clause("faut", IND_PRES, "fr", subject="il")
    expl.deprels[0] = "expl:subj"
    assert UD.target(expl)[0] == "PRES"


@pytest.mark.parametrize(
    "form,lemma",
    [("inclut", "inclure"), ("fournit", "fournir"), ("agit", "agir"), ("dit", "dire")],
)
def test_french_passe_simple_homographs_of_the_present_are_refused(form, lemma):
    found = UD.target(clause(form, IND_PAST, "fr", lemma=lemma))
    assert found == "French passé simple form that is also a present (ambiguous)"
    assert UD.target(clause(form, IND_PRES, "fr", lemma=lemma))[0] == "PRES"


def test_unambiguous_french_passe_simple_is_kept():
    for form, lemma in (
        ("fut", "être"),
        ("fit", "faire"),
        ("reçut", "recevoir"),
        ("joua", "jouer"),
    ):
        assert UD.target(clause(form, IND_PAST, "fr", lemma=lemma))[0] == "PAST"


def test_russian_imperatives_tagged_past_or_present_are_refused():
    """natasha tags 'введите' Mood=Ind Tense=Past; the -те imperative also passes for a
    present second person plural."""
    found = UD.target(clause("введите", IND_PAST, "ru", subject=None))
    assert found == "Russian past form without the past suffix -л- (an imperative?)"
    found = UD.target(clause("удерживайте", IND_PRES, "ru", subject=None))
    assert found == "Russian -те form: imperative and present second person plural alike"
    assert UD.target(clause("возвращает", IND_PRES, "ru", subject=None))[0] == "PRES"


def test_spanish_subjunctives_tagged_past_are_refused():
    found = UD.target(clause("Deseleccione", IND_PAST, "es", subject=None))
    assert found == "Spanish past form in unaccented -a/-e (a subjunctive or imperative?)"


def test_root_only_rule_still_refuses_imperatives_and_infinitives():
    root_only = Tense(annotation="ud", ud_root_only=True)
    part = {"Tense": "Past", "VerbForm": "Part"}
    assert root_only.target(clause("ouvert", part, "fr"))[0] == "PAST"  # X-Probe's rule
    imp = {"Mood": "Imp", "Tense": "Pres", "VerbForm": "Fin"}
    assert root_only.target(clause("ouvrez", imp, "fr")) == "tense word not indicative (Mood=Imp)"
    inf = {"Tense": "Pres", "VerbForm": "Inf"}
    assert root_only.target(clause("ouvrir", inf, "fr")) == "tense word not finite (VerbForm=Inf)"
