"""The shipped parallel sample: pairs by page and paragraph id, and its selection rules."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from build_parallel_sample import select_pairs
from corpora.parallel_help import help_sentence_pairs

from sentprobe.datasets.parallel import read_tsv_pairs, shipped_parallel_path

EN = """<html><body><div id="DisplayArea">
<p id="p1">Opens the dialog. Click the button to close it.</p>
<p id="p2">Choose the file you want to open.</p>
<p id="p3">Only in English.</p>
<p id="p4" class="MAC" hidden>Hidden on other platforms.</p>
<p id="p5">One sentence here.</p>
</div></body></html>"""
FR = """<html><body><div id="DisplayArea">
<p id="p2">Choisissez le fichier que vous voulez ouvrir.</p>
<p id="p1">Ouvre la boîte de dialogue. Cliquez sur le bouton pour la fermer.</p>
<p id="p4" class="MAC" hidden>Masqué sur les autres plates-formes.</p>
<p id="p5">Une phrase ici. Et une autre phrase.</p>
</div></body></html>"""


def test_pairs_follow_page_and_paragraph_id(tmp_path: Path) -> None:
    for lang, page in (("en-US", EN), ("fr", FR)):
        (tmp_path / lang / "text").mkdir(parents=True)
        (tmp_path / lang / "text" / "page.html").write_text(page, encoding="utf-8")
    stats: Counter = Counter()
    got = list(help_sentence_pairs("fr", stats, root=tmp_path))
    assert got == [
        ("Opens the dialog.", "Ouvre la boîte de dialogue.", "text/page.html#p1"),
        ("Click the button to close it.", "Cliquez sur le bouton pour la fermer.",
         "text/page.html#p1"),
        ("Choose the file you want to open.", "Choisissez le fichier que vous voulez ouvrir.",
         "text/page.html#p2"),
    ]  # fmt: skip
    assert stats["paragraphs without a translation"] == 1  # p3; p4 hidden on both sides
    assert stats["paragraphs with different sentence counts"] == 1  # p5


def test_selection_drops_repeats_reused_translations_and_probing_sentences() -> None:
    pairs = [
        ("A cat.", "Un chat .", "a"),
        ("A cat.", "Un chat .", "b"),  # repeat
        ("The cat.", "Un chat .", "c"),  # same translation, another source
        ("It sleeps.", "Il dort.", "d"),  # in the probing sample (as tokens, any order)
        ("A dog.", "Un chien.", "e"),
    ]
    stats: Counter = Counter()
    kept = select_pairs(pairs, {tuple(sorted(["dort", "Il", "."]))}, "fr", stats)
    assert kept == [("A cat.", "Un chat ."), ("A dog.", "Un chien.")]
    assert stats["repeated pair"] == 1
    assert stats["translation already paired with another English sentence"] == 1
    assert stats["in the probing sample sample-fr"] == 1


def test_shipped_sample_reads_with_one_source_per_translation() -> None:
    corpus = read_tsv_pairs(shipped_parallel_path("fr"))
    assert len(corpus) > 10_000
    assert len(set(corpus.target)) == len(corpus)


def test_overlap_counts_test_items_on_either_side_in_any_order_and_case() -> None:
    from build_parallel_sample import suite_overlap

    from sentprobe.datasets import resolve_tasks

    test = resolve_tasks("sample-en/SentLen")[0].splits["test"].sentences
    first, second = test[:2]
    reordered = " ".join(reversed(second.upper().split()))
    pairs = [(first, "Une phrase."), ("Autre.", reordered), ("Nothing here.", "Rien.")]
    (row,) = [
        r for r in suite_overlap(pairs, "fr", ("sample-en",)) if r["task"].endswith("SentLen")
    ]
    assert (row["en"], row["fr"]) == (1, 1)  # the first as is, the second reordered, upper case
    assert row["test"] == len(test)
