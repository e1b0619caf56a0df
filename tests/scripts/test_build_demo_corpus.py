"""The shipped demo corpus holds no ``sample-en`` item, nor one reordered or changed in a word."""

from __future__ import annotations

import gzip
from importlib import resources

from build_demo_corpus import _keys, sample_keys


def test_keys_match_reorderings_and_one_word_changes() -> None:
    keys = set(_keys("the cat sat on the mat ."))
    assert not keys.isdisjoint(_keys("The cat sat the on mat ."))  # BShift-like swap
    assert not keys.isdisjoint(_keys("the dog sat on the mat ."))  # SOMO-like change
    assert keys.isdisjoint(_keys("the dog sat on the rug ."))  # two words changed
    assert keys.isdisjoint(_keys("the cat sat on the mat"))  # another length


def test_shipped_demo_corpus_shares_no_key_with_sample_en() -> None:
    demo = resources.files("sentprobe.training") / "demo/corpus.txt.gz"
    with gzip.open(demo.open("rb"), "rt", encoding="utf-8") as f:
        lines = [line for line in f.read().splitlines() if line.strip()]
    probing = sample_keys()
    leaked = [line for line in lines if not probing.isdisjoint(_keys(line))]
    assert len(lines) > 10_000
    assert leaked == [], leaked[:5]
