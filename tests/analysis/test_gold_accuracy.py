"""Tense label accuracy against gold UD: the rule applied to the gold tree and to the
annotator's tree of the same words, counted over the sentences both keep."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from sentprobe.analysis.agreement import gold_accuracy_markdown, gold_label_accuracy
from sentprobe.annotation.backends.base import Annotator
from sentprobe.annotation.conllu import read_conllu

CONLLU = """\
# sent_id = 1
1\tIl\til\tPRON\t_\t_\t2\tnsubj\t_\t_
2\tdonna\tdonner\tVERB\t_\tMood=Ind|Tense=Past|VerbForm=Fin\t0\troot\t_\t_
3\tla\tle\tDET\t_\t_\t4\tdet\t_\t_
4\tporte\tporte\tNOUN\t_\t_\t2\tobj\t_\t_
5\tbleue\tbleu\tADJ\t_\t_\t4\tamod\t_\t_
6\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

# sent_id = 2
1\tIl\til\tPRON\t_\t_\t2\tnsubj\t_\t_
2\tinclut\tinclure\tVERB\t_\tMood=Ind|Tense=Pres|VerbForm=Fin\t0\troot\t_\t_
3\tla\tle\tDET\t_\t_\t4\tdet\t_\t_
4\tliste\tliste\tNOUN\t_\t_\t2\tobj\t_\t_
5\tbleue\tbleu\tADJ\t_\t_\t4\tamod\t_\t_
6\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

# sent_id = 3
1\tOuvrez\touvrir\tVERB\t_\tMood=Imp|Tense=Pres|VerbForm=Fin\t0\troot\t_\t_
2\tla\tle\tDET\t_\t_\t3\tdet\t_\t_
3\tporte\tporte\tNOUN\t_\t_\t1\tobj\t_\t_
4\tbleue\tbleu\tADJ\t_\t_\t3\tamod\t_\t_
5\tvite\tvite\tADV\t_\t_\t1\tadvmod\t_\t_
6\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\t_

"""


class _Tagger(Annotator):
    """The gold trees with spaCy fr's errors: 'donna' tagged Pres, 'inclut' Past, the
    imperative 'Ouvrez' indicative."""

    name = "fake-fr"

    def __init__(self, gold: Path) -> None:
        self.gold = {tuple(s.tokens): s for s in read_conllu(gold)}

    def annotate(self, sentences, *, pretokenized=False):
        for words in sentences:
            sent = copy.deepcopy(self.gold[tuple(words)])
            feats = sent.feats[sent.root]
            feats["Mood"] = "Ind"
            feats["Tense"] = {"Past": "Pres", "Pres": "Past"}[feats["Tense"]]
            yield sent


@pytest.fixture
def gold(tmp_path: Path) -> Path:
    path = tmp_path / "fr_test-ud-dev.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    return path


def test_accuracy_counts_what_each_side_keeps(gold):
    res = gold_label_accuracy([gold], "fr", _Tagger(gold))
    # gold: donna Past, inclut Pres (the imperative refused); predicted: donna Pres,
    # inclut Past refused (a passé simple that is also a present), Ouvrez refused (no subject)
    assert (res["sentences"], res["gold_kept"], res["pred_kept"], res["both_kept"]) == (3, 2, 1, 1)
    assert res["agree"] == 0 and res["accuracy"] == 0.0
    assert res["confusion"] == {"Past": {"Pres": 1}}
    text = gold_accuracy_markdown(res)
    assert "0 / 1 = 0.0%" in text and "2 on gold, 1 on the annotator's trees" in text


def test_without_an_annotator_only_gold_is_counted(gold, tmp_path):
    de = tmp_path / "de_test-ud-dev.conllu"
    de.write_text(CONLLU, encoding="utf-8")  # no annotator ships for German
    res = gold_label_accuracy([de], "de")
    assert res["annotator"] is None and res["accuracy"] is None and res["gold_kept"] >= 1
    assert "no annotator ships for 'de'" in gold_accuracy_markdown(res)


@pytest.mark.slow
def test_russian_annotator_on_gold_ud(shared_data, tmp_path):
    """natasha on ru_gsd dev+test: every sentence both sides label gets the gold label."""
    pytest.importorskip("natasha")
    files = [shared_data / "ud/ru_gsd" / f"ru_gsd-ud-{s}.conllu.gz" for s in ("dev", "test")]
    res = gold_label_accuracy(files, "ru", store=tmp_path / "store")
    assert res["both_kept"] > 600 and res["accuracy"] >= 0.98
