"""The generated suite shipped in the package obeys the rules and matches its manifest."""

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

import sentprobe

SUITE = Path(sentprobe.__file__).parent / "datasets" / "data" / "sample_en"
CODES = {"tr": "train", "va": "dev", "te": "test"}
TASKS = ["SentLen", "WC", "BShift", "TreeDepth", "TopConst", "Tense", "SubjNum", "ObjNum",
         "SOMO", "CoordInv"]  # fmt: skip
LABELS = {
    "SentLen": {"0", "1", "2", "3", "4", "5"},
    "BShift": {"O", "I"},
    "TreeDepth": {str(d) for d in range(5, 13)},
    "Tense": {"PAST", "PRES"},
    "SubjNum": {"NN", "NNS"},
    "ObjNum": {"NN", "NNS"},
    "SOMO": {"O", "C"},
    "CoordInv": {"O", "I"},
}


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
    assert list(manifest["tasks"]) == TASKS
    for key in ("description", "source", "license", "citation", "generator", "annotator"):
        assert manifest[key]
    assert manifest["generator"]["seed"] == 2018
    # every source is redistributable and named with its licence (NOTICE carries the texts)
    notice = (SUITE / "NOTICE").read_text(encoding="utf-8")
    assert [s["name"] for s in manifest["sources"]] == [
        "python-doc", "django-doc", "libreoffice-help", "web-bible", "shakespeare", "wordnet",
    ]  # fmt: skip
    for source in manifest["sources"]:
        assert source["license"] and source["license"].split()[0] in manifest["license"]
    for package in ("python3.11-doc", "python-django-doc", "libreoffice-help-en-us",
                    "sword-text-web", "shakespeare 0.6", "wordnet-base"):  # fmt: skip
        assert package in notice


def test_sizes_keep_the_main_job_small(manifest):
    """About 17k distinct sentences in all: `sentprobe run` encodes them in ~2 minutes."""
    distinct = set()
    for entry in manifest["tasks"].values():
        distinct |= {s for ex in read(entry["file"]).values() for s, _ in ex}
    assert 12_000 <= len(distinct) <= 20_000


@pytest.mark.parametrize("task", TASKS)
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
    if task in LABELS:
        assert set(entry["labels"]) == LABELS[task]


def test_wc_and_bshift_rules_hold(manifest):
    wc = read(manifest["tasks"]["WC"]["file"])
    targets = set(manifest["tasks"]["WC"]["labels"])
    assert len(targets) == manifest["tasks"]["WC"]["params"]["n_targets"]
    for examples in wc.values():
        for sentence, label in examples:
            assert [t for t in sentence.lower().split() if t in targets] == [label]
    bshift = read(manifest["tasks"]["BShift"]["file"])
    for examples in bshift.values():
        for sentence, _ in examples:
            assert '"' not in sentence
            assert sentence[0].isupper() or sentence[0].isdigit()  # first token never moved


def test_topconst_has_19_sequences_and_other(manifest):
    labels = manifest["tasks"]["TopConst"]["labels"]
    assert len(labels) == 20 and "OTHER" in labels
    assert all(label == "OTHER" or label.endswith("_.") for label in labels)


def test_tree_depth_classes_share_one_length_histogram(manifest):
    """Decorrelated from length: per split, every depth has the same sentence lengths."""
    for examples in read(manifest["tasks"]["TreeDepth"]["file"]).values():
        hist = defaultdict(Counter)
        for sentence, label in examples:
            hist[label][len(sentence.split())] += 1
        assert len({tuple(sorted(h.items())) for h in hist.values()}) == 1


def test_altered_sentences_keep_their_length_and_case(manifest):
    for task in ("SOMO", "CoordInv"):
        splits = read(manifest["tasks"][task]["file"])
        by_label = defaultdict(list)
        for examples in splits.values():
            for sentence, label in examples:
                by_label[label].append(len(sentence.split()))
        (a, b) = by_label.values()
        assert abs(sum(a) / len(a) - sum(b) / len(b)) < 1.0  # no length cue on average
    for examples in read(manifest["tasks"]["CoordInv"]["file"]).values():
        assert not any(s[0].islower() for s, _ in examples)  # both classes start upper-case


def test_quality_report_ships_without_findings(manifest):
    report = (SUITE / "QUALITY.md").read_text(encoding="utf-8")
    assert "Quality report: sample-en" in report
    assert "**error**" not in report and "| warning |" not in report
