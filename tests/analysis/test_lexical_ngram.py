"""The lexical n-gram check on function-word sets: a set built from a few frames is solved by
one collocation, which is a warning where the metadata says the function word is the
property (the paper's Def) and information where the set is named for its collocations."""

from __future__ import annotations

import numpy as np
import pytest

from sentprobe.analysis.checks import CheckOptions, audit_view, run_checks
from sentprobe.analysis.checks.ngrams import best_ngram_rule, check_lexical_ngram, ngrams
from sentprobe.datasets.task import ProbingTask, Split, TaskMetadata

NOUNS = ["house", "river", "garden", "letter", "window", "table", "road", "book"]
VERBS = ["saw", "liked", "painted", "sold", "kept", "found"]


def _task(paper_name: str, items: list[tuple[str, str]]) -> ProbingTask:
    meta = TaskMetadata(
        name=f"t/{paper_name}", paper_name=paper_name, labels=("acceptable", "unacceptable"),
        no_surface_cue=True, format="acceptability-single",
    )  # fmt: skip
    half = len(items) // 2

    def split(part):
        return Split([s for s, _ in part], [y for _, y in part])

    splits = {"train": split(items[:half]), "test": split(items[half:])}
    return audit_view(ProbingTask(meta, splits))


def _frame_set(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """Originals with "the same", mutated ones with "a same" (the only difference)."""
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        noun, verb = NOUNS[int(rng.integers(len(NOUNS)))], VERBS[int(rng.integers(len(VERBS)))]
        article = "the" if i % 2 else "a"
        label = "acceptable" if i % 2 else "unacceptable"
        items.append((f"Anna {verb} {article} same {noun} as the man in year {i} .", label))
    return items


def test_ngrams_and_the_best_rule():
    assert ngrams("The same house") == {
        "the", "same", "house", "the same", "same house", "the same house"
    }  # fmt: skip
    texts = ["a same dog", "the same dog", "a same cat", "the same cat"] * 3
    labels = ["unacceptable", "acceptable"] * 6
    gram, yes, no = best_ngram_rule(texts, labels)
    assert (yes, no) in (("unacceptable", "acceptable"), ("acceptable", "unacceptable"))
    assert gram in ("a", "a same", "the", "the same")


def test_a_collocation_that_reads_the_label_warns_on_def_only():
    items = _frame_set(200)
    (finding,) = check_lexical_ngram(_task("Def", items), CheckOptions())
    assert finding.severity == "warning" and finding.data["gain_points"] >= 10, finding.message
    assert "tests a collocation" in finding.message
    (named,) = check_lexical_ngram(_task("Def-collocations", items), CheckOptions())
    assert named.severity == "info" and named.data["function_word_property"] is False
    assert not check_lexical_ngram(_task("Tense", items), CheckOptions())  # no DNC set


def test_no_warning_without_the_cue():
    rng = np.random.default_rng(1)
    items = [(s, ["acceptable", "unacceptable"][int(rng.integers(2))]) for s, _ in _frame_set(200)]
    (finding,) = check_lexical_ngram(_task("Def", items), CheckOptions())
    assert finding.severity == "info"


@pytest.mark.parametrize("paper_name", ["wh-words", "Coord", "EOS"])
def test_run_checks_includes_it_for_every_paper_acceptability_set(paper_name):
    found = [f.check for f in run_checks(_task(paper_name, _frame_set(60)))]
    assert "lexical-ngram" in found
