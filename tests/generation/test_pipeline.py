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
    assert list(stats_again) == list(stats)  # same order into the manifest as a first build
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


def test_converted_trees_are_remembered_and_follow_the_stored_chunks(tmp_path, corpus, monkeypatch):
    work = tmp_path / "work"
    ann = CountingAnnotator()
    records, _, _ = pipeline.annotate(corpus, work, lang="en", annotator=ann, progress=False)
    key = pipeline._store_key([work])
    pipeline._add_constituency(records, [work], key, progress=False)
    trees = [r.constituency for r in records]
    assert all(trees) and (work / pipeline.TREES_RECORD).exists()

    def no_converting(rec):
        raise AssertionError("converted a remembered tree again")

    again, _, _ = pipeline.annotate(corpus, work, lang="en", annotator=ann, progress=False)
    monkeypatch.setattr(pipeline, "dep_to_constituency", no_converting)
    pipeline._add_constituency(again, [work], key, progress=False)
    assert [r.constituency for r in again] == trees

    monkeypatch.setattr(pipeline, "dep_to_constituency", lambda rec: "(ROOT (X x))")
    fresh, _, _ = pipeline.annotate(corpus, work, lang="en", annotator=ann, progress=False)
    pipeline._add_constituency(fresh, [work], "another key", progress=False)  # other chunks/code
    assert {r.constituency for r in fresh} == {"(ROOT (X x))"}
    (work / pipeline.TREES_RECORD).write_bytes(b"not gzip")  # damaged: converted again
    damaged, _, _ = pipeline.annotate(corpus, work, lang="en", annotator=ann, progress=False)
    pipeline._add_constituency(damaged, [work], "another key", progress=False)
    assert {r.constituency for r in damaged} == {"(ROOT (X x))"}


def test_reading_with_a_progress_bar_returns_every_record(tmp_path, corpus, monkeypatch):
    """tqdm's ``update`` returns True when it redraws; an early version put that value in
    the list of records whenever the bar was shown (``sentprobe build`` without --quiet)."""
    work = tmp_path / "work"
    ann = CountingAnnotator()
    quiet, manifest, _ = pipeline.annotate(corpus, work, lang="en", annotator=ann, progress=False)

    class Redrawing:
        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n=1):
            return True

    monkeypatch.setattr(pipeline, "tqdm", Redrawing)
    shown = pipeline._read(work, manifest, progress=True)
    assert [r.tokens for r in shown] == [r.tokens for r in quiet]
