"""A rebuild from stored annotation: an unchanged corpus file is recognised by its bytes (not
re-tokenized), a changed one goes through the checked path; the corpus hash is remembered."""

from __future__ import annotations

import pytest

from gen_synth import CountingAnnotator
from sentprobe.generation import pipeline
from sentprobe.generation.writer import corpus_sha256


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("".join(f"This is sentence number {i} of the corpus.\n" for i in range(40)))
    return path


def test_unchanged_corpus_is_read_from_the_store_without_tokenizing(tmp_path, corpus, monkeypatch):
    ann = CountingAnnotator()
    work = tmp_path / "work"
    first, _, stats = pipeline.annotate(corpus, work, lang="en", annotator=ann, progress=False)
    assert len(ann.seen) == 40 and (work / pipeline.INPUT_RECORD).exists()

    def no_tokenizing(*args, **kwargs):
        raise AssertionError("re-tokenized an unchanged corpus")

    monkeypatch.setattr(pipeline, "_tokenized", no_tokenizing)
    again, _, stats_again = pipeline.annotate(
        corpus, work, lang="en", annotator=ann, progress=False
    )
    assert [r.tokens for r in again] == [r.tokens for r in first] and stats_again == stats
    assert len(ann.seen) == 40

    monkeypatch.undo()
    corpus.write_text(corpus.read_text() + "One more sentence at the end of it.\n")
    changed, _, _ = pipeline.annotate(corpus, work, lang="en", annotator=ann, progress=False)
    assert len(changed) == 41 and len(ann.seen) == 40 + 41  # its one chunk is parsed again


def test_corpus_hash_is_remembered_and_follows_the_stored_chunks(tmp_path, corpus, monkeypatch):
    work = tmp_path / "work"
    records, _, _ = pipeline.annotate(
        corpus, work, lang="en", annotator=CountingAnnotator(), progress=False
    )
    expected = corpus_sha256(records)
    assert pipeline._cached_corpus_sha256(records, [work]) == expected
    monkeypatch.setattr(pipeline, "corpus_sha256", lambda records: "recomputed")
    assert pipeline._cached_corpus_sha256(records, [work]) == expected  # remembered
    chunk = next(work.glob("chunk-*"))
    chunk.write_bytes(chunk.read_bytes() + b"\0")  # other stored records: computed again
    assert pipeline._cached_corpus_sha256(records, [work]) == "recomputed"
