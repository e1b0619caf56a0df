"""The generated suite shipped in the package obeys the rules and matches its manifest."""

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

import sentprobe

SUITE = Path(sentprobe.__file__).parent / "datasets" / "data" / "sample_en"
CODES = {"tr": "train", "va": "dev", "te": "test"}


@pytest.fixture(scope="module")
def manifest():
    if not (SUITE / "manifest.json").exists():
        pytest.skip("sample suite not generated")
    return json.loads((SUITE / "manifest.json").read_text(encoding="utf-8"))


def read(name):
    splits = defaultdict(list)
    for line in (SUITE / name).read_text(encoding="utf-8").splitlines():
        code, label, sentence = line.split("\t")
        splits[CODES[code]].append((sentence, label))
    return splits


def test_manifest_fields(manifest):
    assert manifest["suite"] == "sample-en" and manifest["language"] == "en"
    assert len(manifest["corpus_sha256"]) == 64
    assert set(manifest["tasks"]) == {"SentLen", "WC", "BShift"}
    for key in ("description", "source", "license", "citation", "generator"):
        assert manifest[key]


@pytest.mark.parametrize("task", ["SentLen", "WC", "BShift"])
def test_files_match_manifest_and_are_balanced_and_disjoint(manifest, task):
    entry = manifest["tasks"][task]
    splits = read(entry["file"])
    seen = set()
    for split in ("train", "dev", "test"):
        counts = Counter(label for _, label in splits[split])
        assert dict(counts) == entry["counts"][split]
        assert len(set(counts.values())) == 1 and set(counts) == set(entry["labels"])
        sentences = {s for s, _ in splits[split]}
        assert len(sentences) == len(splits[split]) and not sentences & seen
        seen |= sentences
    lengths = {len(s.split()) for ex in splits.values() for s, _ in ex}
    assert min(lengths) >= 5 and max(lengths) <= 28


def test_wc_and_bshift_rules_hold(manifest):
    wc = read(manifest["tasks"]["WC"]["file"])
    targets = set(manifest["tasks"]["WC"]["labels"])
    for examples in wc.values():
        for sentence, label in examples:
            assert [t for t in sentence.lower().split() if t in targets] == [label]
    bshift = read(manifest["tasks"]["BShift"]["file"])
    for examples in bshift.values():
        for sentence, _ in examples:
            assert '"' not in sentence
            assert sentence[0].isupper() or sentence[0].isdigit()  # first token never moved
