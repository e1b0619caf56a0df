"""``--sizes auto``: the largest balanced sizes per task, WC targets and TreeDepth range chosen
for the corpus, frequency bands by corpus size; all recorded."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from gen_synth import chain, depth_length_corpus, svo_corpus
from gen_treebank import synthetic_treebank
from sentprobe.errors import SentprobeError
from sentprobe.generation.autosize import (
    BAND_TIERS,
    AutoSizes,
    band_tier,
    choose_depths,
    largest_task,
    min_test_items,
)
from sentprobe.generation.base import GeneratedTask, GenerationError
from sentprobe.generation.pipeline import parse_sizes
from sentprobe.generation.suite import build_suite, generator_for, prepare
from sentprobe.generation.surface import TargetIndex, WordContent, select_targets
from sentprobe.generation.syntactic import TreeDepth


def test_auto_sizes_keep_the_ratio_and_the_bound():
    auto = AutoSizes()
    assert auto.per_class(1) == {"train": 10, "dev": 1, "test": 1}
    assert auto.sizes(3, 2) == {"train": 60, "dev": 6, "test": 6}
    assert auto.max_units(2) == 5000  # 100k/10k/10k for 2 classes: 50k/5k/5k per class
    assert auto.max_units(2, corpus_size=1200) == 50  # 12 sentences per unit and class
    small = AutoSizes.parse("auto:1000,200,200")
    assert small.per_class(2) == {"train": 10, "dev": 2, "test": 2}
    assert small.max_units(6) == 33  # 6 x 33 = 198 <= 200 dev sentences
    assert parse_sizes("auto") == AutoSizes() and parse_sizes("10,2,2")["dev"] == 2
    for bad in ("auto:1,2", "auto:0,1,1", "12,x,1"):
        with pytest.raises(SentprobeError):
            parse_sizes(bad)


def test_largest_task_finds_the_exact_maximum():
    """A generator that fills up to 37 units: bisection lands on 37, never above."""
    calls = []

    def generate(sizes):
        calls.append(sizes["dev"])
        if sizes["dev"] > 37 * 2:
            raise GenerationError("too big")
        return GeneratedTask("T", "t.txt", ["a", "b"], {"train": [], "dev": [], "test": []})

    _, k = largest_task(generate, AutoSizes(), n_classes=2, corpus_size=10_000, name="T")
    assert k == 37 and len(calls) < 15
    with pytest.raises(GenerationError, match="not even 1 unit"):
        largest_task(lambda s: generate({"dev": 999}), AutoSizes(), 2, 10_000, "T")
    with pytest.raises(GenerationError, match="smallest balanced sizes"):
        largest_task(generate, AutoSizes(), n_classes=2, corpus_size=20, name="T")


def _naive_targets(wc: WordContent, sentences, per_target: int) -> tuple[list[str], int]:
    """The rule as written: recount every target's pools over the corpus each round."""
    window = wc.candidates(sentences)
    dropped: set[str] = set()
    while True:
        targets = [w for w in window if w not in dropped][: wc.n_targets]
        pools = wc.pools(sentences, targets)
        short = {w for w in targets if len(pools[w]) < per_target}
        if not short:
            return targets, len(dropped)
        dropped |= short


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_incremental_target_selection_equals_the_rule_as_written(seed):
    rng = random.Random(seed)
    words = [f"w{i:03d}x" for i in range(300)]
    weights = [1 / (i + 1) for i in range(300)]
    sentences = [tuple(rng.choices(words, weights, k=rng.randint(5, 15))) for _ in range(1500)]
    for first_rank, n, need in ((21, 5, 12), (21, 40, 12), (51, 80, 6), (11, 300, 3), (1, 50, 40)):
        wc = WordContent(n, first_rank)
        expected, skipped = _naive_targets(wc, sentences, need)
        assert wc.select_targets(sentences, need) == expected
        window = wc.candidates(sentences)
        assert select_targets(window, TargetIndex(sentences, window), n, need) == (
            expected,
            skipped,
        )


def test_every_task_is_built_at_its_largest_size():
    corpus = synthetic_treebank()
    tasks = build_suite(
        corpus, ["SentLen", "BShift", "Tense", "SubjNum"], AutoSizes(), lang="xx", bands="auto"
    )
    for task in tasks:
        info = task.params["sizes"]
        k = info["units"]
        n_classes = len(task.labels)
        assert info["per_class"] == {"train": 10 * k, "dev": k, "test": k}
        assert task.counts()["test"] == dict.fromkeys(task.labels, k)  # balanced
        assert info["bound"] == "corpus"
        if task.name in ("SentLen", "BShift"):  # monotone in size: one more unit must fail
            with pytest.raises(GenerationError):
                generator_for(task.name, "xx").generate(
                    prepare(corpus, 5, 28, Counter()), AutoSizes().sizes(k + 1, n_classes), 2018
                )
    assert tasks[0].params["sizes"]["units"] >= 5


def test_a_task_under_the_test_floor_is_refused_with_its_figures():
    """``min_test``: the built-in suites' rule that a task too small to compare rows on is not
    shipped (the audit's test-power floor); below it the build says what the corpus gave."""
    corpus = synthetic_treebank()
    built = build_suite(corpus, ["SentLen", "BShift"], AutoSizes(), lang="xx", bands="auto")
    n_test = {t.name: sum(t.counts()["test"].values()) for t in built}
    floor = min(n_test.values()) + 1
    failures: dict[str, str] = {}
    kept = build_suite(
        corpus, ["SentLen", "BShift"], AutoSizes(min_test=floor), lang="xx", bands="auto",
        failures=failures,
    )  # fmt: skip
    smallest = min(n_test, key=n_test.get)
    assert smallest in failures and smallest not in {t.name for t in kept}
    assert f"only {n_test[smallest]} test items" in failures[smallest]
    assert f"need {floor}" in failures[smallest]
    assert "at least" in AutoSizes(min_test=floor).describe()
    assert min_test_items() == 193


def test_tree_depth_range_is_narrowed_only_when_the_lengths_do_not_overlap():
    gen = TreeDepth(structure="dependency", depths=(3, 7))
    rng = random.Random(1)
    # depth d: lengths 5+2(d-3) .. +5, 30 sentences each: depths 3 and 7 share no length,
    # any three neighbouring depths share two
    tied = [
        chain(d, n, rng)
        for d in range(3, 8)
        for n in range(5 + 2 * (d - 3), 11 + 2 * (d - 3))
        for _ in range(30)
    ]
    depths, info = choose_depths(gen, tied, AutoSizes())
    assert depths == (3, 5)  # widest with room, then most sentences, then lowest
    assert info["profile_capacity_per_class"] == 0 and info["capacity_per_class"] == 60
    assert "3-7" in info["why"]
    wide = depth_length_corpus(200, seed=2)
    depths, info = choose_depths(gen, wide, AutoSizes())
    assert depths == (3, 7) and "why" not in info


def test_wc_and_tree_depth_relaxations_are_recorded():
    corpus = synthetic_treebank()
    wc, depth = build_suite(corpus, ["WC", "TreeDepth"], AutoSizes(), lang="xx", bands="auto")
    relaxed = wc.params["sizes"]["relaxed"]
    assert relaxed["first_rank"][0] == 2001 and relaxed["first_rank"][1] < 2001
    assert relaxed["n_targets"] == [1000, len(wc.labels)]
    assert wc.params["n_targets"] == len(wc.labels) and len(wc.labels) >= 5
    assert all(n == 1 for n in wc.counts()["test"].values())
    assert [r["first_rank"] for r in wc.params["sizes"]["wc_ranks_tried"]][0] == 2001
    assert depth.params["sizes"]["tree_depth"]["profile_depths"] == [3, 7]
    # explicit parameters are never relaxed
    (fixed,) = build_suite(
        corpus, ["WC"], AutoSizes(), lang="xx", params={"WC": {"n_targets": 5, "first_rank": 21}}
    )
    assert fixed.params["n_targets"] == 5 and "relaxed" not in fixed.params["sizes"]


def test_frequency_bands_follow_the_corpus_size():
    assert band_tier(50_000).lexical == (1, 5000) and band_tier(50_000).somo == (1, 400)
    assert band_tier(20_000_000) == BAND_TIERS[0] and BAND_TIERS[0].lexical == (100, 5000)
    # below the paper's tier the lexical lower bound keeps its relative frequency
    assert band_tier(160_000).lexical == (2, 5000) and band_tier(2_500_000).lexical == (25, 5000)
    assert band_tier(9_999_999).lexical == (100, 5000) and band_tier(9_999_999).somo == (1, 400)
    corpus = svo_corpus(1500, seed=0)
    few = {"Tense": {"max_form_share": 0.25, "min_forms": 3}}  # 15 verb stems
    (tense,) = build_suite(
        corpus, ["Tense"], {"train": 100, "dev": 20, "test": 20}, bands="auto", params=few
    )
    assert tense.params["freq_band"] == (1, 5000)
    assert tense.params["bands"]["tier"] == "small corpus"
    assert tense.params["bands"]["corpus_tokens"] == sum(len(r.tokens) for r in corpus)
    with pytest.raises(GenerationError, match="freq_band"):  # the paper's band: too rare
        build_suite(corpus, ["Tense"], {"train": 100, "dev": 20, "test": 20}, bands="profile")
    (explicit,) = build_suite(
        corpus,
        ["Tense"],
        {"train": 100, "dev": 20, "test": 20},
        bands="auto",
        params={"Tense": {"freq_band": (2, 3000), **few["Tense"]}},
    )
    assert explicit.params["freq_band"] == (2, 3000) and "bands" not in explicit.params


def test_lexical_split_holds_at_auto_sizes():
    corpus = synthetic_treebank()
    for task in build_suite(corpus, ["SubjNum", "ObjNum"], AutoSizes(), lang="xx", bands="auto"):
        split_of: dict[str, set[str]] = {}
        for split, examples in task.splits.items():
            for sentence, _ in examples:
                split_of.setdefault(task.targets[sentence], set()).add(split)
        assert all(len(s) == 1 for s in split_of.values())
        assert Counter(len(s) for s in split_of.values())[1] > 3
