import gzip

import pytest

from sentprobe.annotation.conllu import (
    conllu_string,
    format_conllu,
    parse_conllu,
    read_conllu,
    write_conllu,
)
from sentprobe.errors import DataError

SAMPLE = """# newdoc id = d1
# sent_id = s1
# text = Vino del mercado.
1\tVino\tvenir\tVERB\t_\tMood=Ind|Tense=Past\t0\troot\t_\t_
2-3\tdel\t_\t_\t_\t_\t_\t_\t_\t_
2\tde\tde\tADP\t_\t_\t4\tcase\t_\t_
3\tel\tel\tDET\t_\tDefinite=Def\t4\tdet\t_\t_
3.1\tx\tx\tX\t_\t_\t_\t_\t4:dep\t_
4\tmercado\tmercado\tNOUN\t_\tNumber=Sing\t1\tobl\t_\tSpaceAfter=No
5\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\t_

# sent_id = s2
# text = Hola
1\tHola\thola\tINTJ\t_\t_\t0\troot\t_\t_
"""


def test_words_multiword_tokens_and_metadata():
    first, second = parse_conllu(SAMPLE, lang="es")
    assert first.tokens == ["Vino", "de", "el", "mercado", "."]  # empty node 3.1 skipped
    assert first.surface_tokens() == ["Vino", "del", "mercado", "."]
    assert first.mwt == [(1, 2, "del")]
    assert first.heads == [0, 4, 4, 1, 1]
    assert first.feats[0] == {"Mood": "Ind", "Tense": "Past"}
    assert first.feats[1] == {}
    assert (first.sent_id, first.text, first.lang) == ("s1", "Vino del mercado.", "es")
    assert second.tokens == ["Hola"] and second.root == 0


def test_round_trip_through_text_and_json(tmp_path):
    records = parse_conllu(SAMPLE, lang="es")
    again = parse_conllu(conllu_string(records), lang="es")
    assert again == records
    assert [type(r).from_json(r.to_json()) for r in records] == records
    path = tmp_path / "out.conllu.gz"
    assert write_conllu(records, path) == 2
    assert list(read_conllu(path, lang="es")) == records
    assert "2-3\tdel" in format_conllu(records[0])


@pytest.mark.parametrize(
    "line, problem",
    [
        ("1\tVino\tvenir\tVERB\t_\t_\t0\troot\t_", "10 tab-separated columns"),
        ("x\tVino\tvenir\tVERB\t_\t_\t0\troot\t_\t_", "bad token id"),
        ("1\tVino\tvenir\tVERB\t_\t_\tnine\troot\t_\t_", "head"),
        ("2\tVino\tvenir\tVERB\t_\t_\t0\troot\t_\t_", "out of sequence"),
        ("1\tVino\tvenir\tVERB\t_\t_\t7\troot\t_\t_", "outside the sentence"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, line, problem):
    path = tmp_path / "bad.conllu.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("# sent_id = a\n1\tOk\tok\tINTJ\t_\t_\t0\troot\t_\t_\n\n# text = b\n" + line + "\n")
    with pytest.raises(DataError) as err:
        list(read_conllu(path))
    assert err.value.path == str(path)
    assert err.value.line == 5
    assert problem in err.value.problem


def test_sentence_without_root_is_an_error():
    with pytest.raises(DataError, match="no root"):
        parse_conllu("1\ta\ta\tX\t_\t_\t1\tdep\t_\t_\n")


def test_real_treebanks_keep_multiword_surface(shared_data):
    path = shared_data / "ud/es_gsd/es_gsd-ud-dev.conllu.gz"
    records = list(read_conllu(path))
    assert len(records) == 1400 and records[0].lang == "es"
    first = records[0]
    assert "del" in first.surface_tokens() and "del" not in first.tokens
    # Surface tokens joined without SpaceAfter=No gaps reproduce the text's words.
    assert first.text.replace(".", " .").split() == first.surface_tokens()
    assert all(r.heads.count(0) == 1 for r in records)
