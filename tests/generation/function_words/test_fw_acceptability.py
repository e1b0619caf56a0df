"""The acceptability sets: balanced within strata, symmetric swaps, folds, every mutation
recorded, deterministic by seed; and the written suite reads back with the DNC loader."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from gen_function_words import synthetic_corpus, write_corpus
from sentprobe.datasets.loaders.dnc import load_dnc
from sentprobe.errors import SentprobeError
from sentprobe.generation.base import GenerationError
from sentprobe.generation.corpus import MosesPreprocessor
from sentprobe.generation.function_words import (
    CoordinationCollocations,
    DefinitenessCollocations,
    EndOfSentence,
    WhWords,
    build_function_words,
)
from sentprobe.generation.function_words.release import chunk_of, fold_splits


@pytest.fixture
def paragraphs() -> list[list[str]]:
    """160 paragraphs of the synthetic corpus (tests/gen_function_words.py)."""
    return synthetic_corpus(160)


@pytest.fixture
def corpus_file(tmp_path):
    return write_corpus(tmp_path / "corpus.txt")


def _sentences(paragraphs):
    pre = MosesPreprocessor()
    return list(pre(s for p in paragraphs for s in p))


@pytest.mark.parametrize("generator", [WhWords, DefinitenessCollocations, CoordinationCollocations])
def test_single_sentence_sets_are_balanced_in_every_stratum_and_fold(generator, paragraphs):
    fw = generator(size=None).generate(_sentences(paragraphs), seed=1)
    assert fw.counts()["acceptable"] == fw.counts()["unacceptable"] > 20
    strata = Counter((item.misc["stratum"], item.label) for item in fw.items)
    for (stratum, _), n in strata.items():
        assert strata[stratum, "acceptable"] == strata[stratum, "unacceptable"] == n
    folds = Counter((item.chunk, item.label) for item in fw.items)
    for k in range(10):
        assert folds[k, "acceptable"] == folds[k, "unacceptable"]
    sources = [item.corpus_sent_id for item in fw.items]
    assert len(sources) == len(set(sources))  # a corpus sentence is used once
    for item in fw.items:
        if item.label == "unacceptable":
            m = item.misc["mutation"]
            tokens = m["original"].split()
            assert [tokens[i] for i in m["positions"]] == m["replaced"]
            changed = item.context.split()
            assert [changed[i] for i in m["positions"]] == m["replacements"]
        else:
            assert "mutation" not in item.misc


def test_swaps_are_symmetric_so_context_words_are_no_cue(paragraphs):
    fw = WhWords(size=None).generate(_sentences(paragraphs), seed=3)
    swaps = Counter(
        (i.misc["mutation"]["replaced"][0].lower(), i.misc["mutation"]["replacements"][0].lower())
        for i in fw.items
        if i.label == "unacceptable"
    )
    # every source word is as frequent among originals as among the mutated sentences' sources
    sources = Counter(x for (x, _), n in swaps.items() for _ in range(n))
    targets = Counter(y for (_, y), n in swaps.items() for _ in range(n))
    kept = Counter(i.misc["subtype"] for i in fw.items if i.label == "acceptable")
    assert targets == kept
    assert all(abs(sources[w] - kept[w]) <= 1 for w in kept)


#: The synthetic corpus's sentences end in six words that never occur inside one, so
#: boundaries weighted by their edge words (EndOfSentence.edge_weighting, tested in
#: test_fw_side_cues.py) find few valid partners there; tests that need a fixed number of EOS
#: items from it draw the paper's unweighted boundaries.
UNWEIGHTED_EOS = {"acceptability-eos": {"edge_weighting": False}}


@pytest.mark.parametrize("weighted", [False, True])
def test_eos_pairs_are_adjacent_and_invalid_ones_resegmented(paragraphs, weighted):
    tokenized = [[MosesPreprocessor().tokenize(s) for s in p] for p in paragraphs[:100]]
    size = None if weighted else 100
    fw = EndOfSentence(size=size, sigma=2.0, edge_weighting=weighted).generate(tokenized, seed=0)
    counts = fw.counts()
    assert counts["acceptable"] == counts["unacceptable"] >= (10 if weighted else 50)
    for item in fw.items:
        assert item.context == item.context.lower() and "." not in item.context.split()
        if item.label == "unacceptable":
            m = item.misc["mutation"]
            assert m["positions"][0] != m["true_boundary"]
            assert len(item.context.split()) == m["positions"][0]
            assert (item.context + " " + item.hypothesis).split() == " ".join(m["original"]).split()


def test_same_seed_same_items_other_seed_other_items(paragraphs):
    a = DefinitenessCollocations(size=40).generate(_sentences(paragraphs), seed=5)
    b = DefinitenessCollocations(size=40).generate(_sentences(paragraphs), seed=5)
    c = DefinitenessCollocations(size=40).generate(_sentences(paragraphs), seed=6)
    texts = [[(i.context, i.label, i.chunk) for i in x.items] for x in (a, b, c)]
    assert texts[0] == texts[1] != texts[2]


def test_too_small_a_corpus_says_how_many_it_supports(paragraphs):
    with pytest.raises(GenerationError, match="yields only"):
        WhWords(size=100_000).generate(_sentences(paragraphs), seed=0)


def test_fold_splits_test_each_chunk_once():
    for chunk in range(10):
        splits = fold_splits(chunk)
        assert Counter(splits.values()) == {"train": 8, "dev": 1, "test": 1}
        assert chunk_of(splits) == chunk


def test_written_suite_reads_back_like_the_release(corpus_file, tmp_path):
    out = tmp_path / "suite"
    result = build_function_words([corpus_file], out, size=60, seed=2, params=UNWEIGHTED_EOS)
    assert not result.failures
    data = json.loads((out / "ACCEPTABILITY/acceptability-whwords_data.json").read_text())
    meta = json.loads((out / "ACCEPTABILITY/acceptability-whwords_metadata.json").read_text())
    release = {"context", "hypothesis", "label", "label-set", "binary-label", "pair-id", "split",
               "type-of-inference"}  # fmt: skip
    assert set(data[0]) == release
    assert {f"fold{k}" for k in range(1, 11)} <= set(meta[0]["misc"])
    tasks = {t.name: t for t in load_dnc(out)}
    assert set(tasks) == {"wh-words", "Def-collocations", "Coord-collocations", "EOS"}
    assert all(len(t.folds or []) == 10 for t in tasks.values())
    assert tasks["EOS"].splits["test"].sentences2 is not None
    ids = [d["pair-id"] for f in out.glob("*/*_data.json") for d in json.loads(f.read_text())]
    assert len(ids) == len(set(ids)) == 240
    again = tmp_path / "again"
    build_function_words([corpus_file], again, size=60, seed=2, params=UNWEIGHTED_EOS)
    for f in out.glob("*/*.json"):
        assert f.read_bytes() == (again / f.relative_to(out)).read_bytes()


def test_a_corpus_without_the_construction_writes_nothing(tmp_path):
    corpus = tmp_path / "plain.txt"
    corpus.write_text("This sentence has no function word of interest here .\n" * 3)
    result = build_function_words(
        [corpus], tmp_path / "out", size=None, sets=["acceptability-whwords"]
    )
    assert "yields 0 items" in result.failures["acceptability-whwords"]
    assert not (tmp_path / "out").exists()


def test_a_build_that_fails_while_writing_leaves_the_old_suite_whole(corpus_file, tmp_path):
    out = tmp_path / "suite"
    build_function_words([corpus_file], out, size=60, seed=2)
    before = {f: f.read_bytes() for f in out.rglob("*") if f.is_file()}

    def fail(folder, result):
        assert (folder / "manifest.json").exists()  # the new suite is written, then this fails
        raise RuntimeError("QUALITY.md could not be written")

    with pytest.raises(RuntimeError):
        build_function_words([corpus_file], out, size=30, seed=3, finish=fail)
    assert {f: f.read_bytes() for f in out.rglob("*") if f.is_file()} == before
    assert not list(tmp_path.glob(".tmp-*"))  # no staging folder left


def test_an_output_folder_that_is_not_a_suite_is_refused(corpus_file, tmp_path):
    out = tmp_path / "documents"
    out.mkdir()
    (out / "thesis.tex").write_text("mine")
    with pytest.raises(SentprobeError, match="not a sentprobe suite"):
        build_function_words([corpus_file], out, size=60, seed=2)
    assert [p.name for p in out.iterdir()] == ["thesis.tex"]


def test_generated_couples_are_not_scored_as_minimal_pairs(corpus_file, tmp_path):
    """An original and a mutated item of one couple are two different sentences: they share
    a fold (``misc.couple``) but are no minimal pair, so no pair accuracy is computed."""
    out = tmp_path / "suite"
    build_function_words([corpus_file], out, size=60, seed=2, params=UNWEIGHTED_EOS)
    meta = json.loads((out / "ACCEPTABILITY/acceptability-whwords_metadata.json").read_text())
    by_couple: dict[int, set] = {}
    for m in meta:
        assert "pair" not in m["misc"]
        by_couple.setdefault(m["misc"]["couple"], set()).add(m["corpus-sent-id"])
    assert all(len(sources) == 2 for sources in by_couple.values())  # two corpus sentences
    for task in load_dnc(out):
        assert all(split.pairs is None for fold in task.folds or [] for split in fold.values())


def test_a_small_corpus_builds_the_sets_it_can_fill_with_skip_failed(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from gen_function_words import synthetic_corpus
    from sentprobe.cli.main import app

    lines = ["\n".join(p) for p in synthetic_corpus(14)]
    lines += [f"Anna asked {'who' if i % 2 else 'what'} Ben saw on day {i} ." for i in range(60)]
    (tmp_path / "small.txt").write_text("\n\n".join(lines) + "\n")
    monkeypatch.chdir(tmp_path)
    args = ["build", "--family", "kim2019", "-c", "small.txt", "-o", "suite", "--sizes", "auto"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code != 0 and not (tmp_path / "suite").exists()
    result = CliRunner().invoke(app, [*args, "--skip-failed"])
    assert result.exit_code == 0, result.output
    for name in ("acceptability-definiteness-collocations", "acceptability-eos"):
        assert f"{name}: the corpus yields" in result.output and "fill 10 folds" in result.output
    tasks = load_dnc(tmp_path / "suite")
    assert [t.name for t in tasks] == ["wh-words"]
    for fold in tasks[0].folds or []:
        assert all(len(fold[split]) for split in ("train", "dev", "test"))


def test_eos_refuses_a_file_of_independent_lines(tmp_path):
    """One sentence a line and no blank line: nothing says two lines follow each other in a
    document, so EOS pairs none of them (issue 48) and says how to mark documents."""
    lines = [s for p in synthetic_corpus(60) for s in p]
    corpus = tmp_path / "lines.txt"
    corpus.write_text("\n".join(lines) + "\n")
    result = build_function_words([corpus], tmp_path / "s", sets=["acceptability-eos"], size=40,
                                  skip_failed=True)  # fmt: skip
    assert "has no blank line" in result.failures["acceptability-eos"]
    assert "--running" in result.failures["acceptability-eos"]
    paragraphs = tmp_path / "paragraphs.txt"
    paragraphs.write_text("\n\n".join("\n".join(p) for p in synthetic_corpus(60)) + "\n")
    result = build_function_words([paragraphs], tmp_path / "t", sets=["acceptability-eos"],
                                  size=40, params=UNWEIGHTED_EOS)  # fmt: skip
    assert not result.failures
