"""Article/noun agreement and segment-length cues (Kim et al. 2019's sets): each rule flags the
cue it is built for, planted in an otherwise clean set, and stays quiet without it."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from sentprobe.analysis.checks import CheckOptions, audit_view, run_checks
from sentprobe.analysis.checks.agreement_cues import (
    article_before_plural,
    check_article_plural,
    check_article_sound,
    check_segment_length,
    segment_lengths,
    wrong_article_sound,
)
from sentprobe.datasets.task import ProbingTask, Split, TaskMetadata
from sentprobe.generation.function_words.articles import looks_plural
from sentprobe.generation.function_words.wordnet import default_wordnet

NOUNS = ["house", "river", "garden", "letter", "window", "table", "road", "book"]
ADJS = ["old", "big", "red", "quiet", "early", "open", "odd", "usual"]

#: the audit reads plurals from WordNet (Debian wordnet-base); without it, no article-plural rule
needs_wordnet = pytest.mark.skipif(
    not (default_wordnet() / "data.noun").is_file(),
    reason=f"WordNet not in {default_wordnet()} (Debian wordnet-base, or set WNSEARCHDIR)",
)


def _task(items: list[tuple[str, str]], pair: bool = False) -> ProbingTask:
    """A Kim-style acceptability task: no surface cue allowed; first half train, rest test."""
    meta = TaskMetadata(
        name="t/Def",
        paper_name="Def",
        language="en",
        category="semantic",
        labels=("acceptable", "unacceptable"),
        source="",
        license="",
        citation="",
        no_surface_cue=True,
        format="acceptability-pair" if pair else "acceptability-single",
    )
    half = len(items) // 2

    def split(part):
        if pair:
            return Split([a for (a, _), _ in part], [y for _, y in part], [b for (_, b), _ in part])
        return Split([s for s, _ in part], [y for _, y in part])

    return audit_view(
        ProbingTask(meta, {"train": split(items[:half]), "test": split(items[half:])})
    )


def _sentences(n: int, seed: int, plural_in_mutated: bool) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        noun, adj = NOUNS[i % len(NOUNS)], ADJS[int(rng.integers(len(ADJS)))]
        label = "acceptable" if i % 2 else "unacceptable"
        if label == "unacceptable" and plural_in_mutated and i % 4 == 0:
            items.append((f"A {noun}s stood near a {adj} {noun} in year {i} .", label))
        else:
            article = "an" if adj[0] in "aeiou" else "a"
            items.append((f"The {noun} stood near {article} {adj} {noun} in year {i} .", label))
    return items


@needs_wordnet
def test_looks_plural_and_article_rules():
    assert looks_plural("houses") and looks_plural("children") and looks_plural("people")
    assert not any(map(looks_plural, ["glass", "status", "news", "this", "basis", "Paris"]))
    assert article_before_plural("We saw a houses .")
    assert not article_before_plural("We saw a house and the houses .")
    assert wrong_article_sound("It is a uncommon right .") and wrong_article_sound("an common")
    assert not wrong_article_sound("an hour , a university , an FBI agent , an uncommon right")


@needs_wordnet
def test_article_plural_does_not_share_the_generators_plural_test(monkeypatch):
    """The audit reads plurals from WordNet, not with the generator's ``looks_plural``: a
    word that test misses ("a data is") is still caught, even with ``looks_plural`` gone."""
    from sentprobe.generation.function_words import articles

    monkeypatch.setattr(articles, "looks_plural", lambda word: False)
    assert article_before_plural("Here a data is stored .")
    assert article_before_plural("We saw a letters and a criteria .")
    assert not article_before_plural("A means to an end ; a species ; a news item ; a glass .")


@needs_wordnet
def test_article_plural_flags_a_planted_agreement_cue_only():
    planted = check_article_plural(_task(_sentences(400, 0, True)), CheckOptions())
    (finding,) = planted
    assert finding.severity in ("warning", "error"), finding.message
    assert finding.data["share_per_class"]["unacceptable"] > 0.4
    (clean,) = check_article_plural(_task(_sentences(400, 0, False)), CheckOptions())
    assert clean.severity == "info" and clean.data["items"] == 0


def test_article_sound_flags_a_planted_a_an_cue():
    items = _sentences(400, 1, False)
    bad = [
        (s.replace(" an ", " a ").replace(" a old", " an old"), y)
        if y == "unacceptable" and i % 4 == 0
        else (s, y)
        for i, (s, y) in enumerate(items)
    ]
    assert sum(wrong_article_sound(s) for s, _ in bad) > 50
    (finding,) = check_article_sound(_task(bad), CheckOptions())
    assert finding.severity in ("warning", "error"), finding.message
    (clean,) = check_article_sound(_task(items), CheckOptions())
    assert clean.severity == "info"


def _eos_items(n: int, short_cut: bool) -> list[tuple[tuple[str, str], str]]:
    """Unacceptable pairs re-split 2-3 words off the true boundary; acceptable pairs of the
    same segment lengths (clean) or split at their own boundary (``short_cut``: the wrong
    split may leave segments of 2-4 words, no true sentence has under 5)."""
    rng = np.random.default_rng(3)
    items = []
    for i in range(n // 2):
        a, b = int(rng.integers(5, 20)), int(rng.integers(5, 20))
        k = a + int(rng.choice([-3, -2, 2, 3]))
        if not short_cut:
            k = min(max(k, 5), a + b - 5)
        words = [f"w{i}x{j}" for j in range(a + b)]
        items.append(((" ".join(words[:k]), " ".join(words[k:])), "unacceptable"))
        cut = a if short_cut else k  # clean: a true pair with the same segment lengths
        words = [f"v{i}x{j}" for j in range(a + b)]
        items.append(((" ".join(words[:cut]), " ".join(words[cut:])), "acceptable"))
    order = np.random.default_rng(4).permutation(len(items))
    return [items[j] for j in order]


def test_segment_length_flags_wrongly_split_segments_shorter_than_any_true_one():
    task = _task(_eos_items(600, short_cut=True), pair=True)
    assert segment_lengths(task.splits["train"].sentences[0]) is not None
    (finding,) = check_segment_length(task, CheckOptions())
    assert finding.severity in ("warning", "error"), finding.message
    assert finding.data["min_words"] == 5
    (clean,) = check_segment_length(
        _task(_eos_items(600, short_cut=False), pair=True), CheckOptions()
    )
    assert clean.data["gain_points"] < 3, clean.message


@needs_wordnet
def test_single_sentence_tasks_get_no_segment_rule_and_run_checks_includes_the_rules():
    task = _task(_sentences(100, 0, False))
    assert check_segment_length(task, CheckOptions()) == []
    checks = {f.check for f in run_checks(task, CheckOptions(baselines=False))}
    assert {"article-sound", "article-plural"} <= checks


RELEASE = Path(
    os.environ.get("SENTPROBE_DNC", Path(__file__).parents[3] / "shared/data/dnc_function_words")
)


@pytest.mark.skipif(not RELEASE.is_dir(), reason="the DNC release is not in ../shared/data")
def test_the_release_cues_are_seen():
    """The release's own agreement slips: "the -> a" made a/an errors only in mutated Def
    items, and lexical negation left a/an unfixed in Negation items."""
    from sentprobe.datasets.loaders.dnc import load_dnc

    tasks = {t.metadata.paper_name: audit_view(t) for t in load_dnc(RELEASE)}
    (definite,) = check_article_sound(tasks["Def"], CheckOptions())
    share = definite.data["share_per_class"]
    assert share["unacceptable"] > share["acceptable"] == 0
    (negation,) = check_article_sound(tasks["Negation"], CheckOptions())
    assert negation.data["items"] >= 20 and "e.g." in negation.message
