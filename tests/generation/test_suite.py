"""build_suite + both writers: profiles, X-Probe labels and layout, manifest, determinism."""

import json

import pytest

from gen_synth import svo_corpus
from sentprobe.generation import (
    build_suite,
    corpus_sha256,
    generator_for,
    suite_manifest,
    write_generated_suite,
)

SIZES = {"train": 100, "dev": 20, "test": 20}
TASKS = ["SentLen", "BShift", "Tense", "SubjNum", "ObjNum", "SOMO"]
#: 15 verb and 30 noun stems: too few forms for the default 10% per form and 30 per class
PARAMS = {
    t: {"freq_band": (20, 5000), "max_form_share": 0.25, "min_forms": 3}
    for t in ("Tense", "SubjNum", "ObjNum")
} | {"SentLen": {"bins": ((5, 7), (8, 12))}}


@pytest.fixture(scope="module")
def corpus():
    return svo_corpus(3000, seed=0)


def test_profiles_pick_rules_by_language():
    assert generator_for("TreeDepth", "en").structure == "constituency"
    ru = generator_for("TreeDepth", "ru")
    assert ru.structure == "dependency" and ru.depths == (3, 7)
    assert generator_for("Tense", "fr").annotation == "ud"
    assert "NOUN" in generator_for("CoordInv", "de").keep_case_upos
    assert generator_for("SOMO", "en", freq_band=(1, 9)).freq_band == (1, 9)
    with pytest.raises(ValueError, match="unknown task"):
        generator_for("Nope", "en")


def write(corpus, out, layout, seed=7):
    tasks = build_suite(corpus, TASKS, SIZES, seed=seed, lang="en", layout=layout, params=PARAMS)
    manifest = suite_manifest(
        tasks,
        corpus_sha256=corpus_sha256(corpus),
        annotator={"name": "synthetic", "version": "0"},
        seed=seed,
        lang="en",
        layout=layout,
    )
    return tasks, write_generated_suite(out, tasks, manifest, layout=layout)


def test_xprobe_layout_labels_and_manifest(corpus, tmp_path):
    tasks, path = write(corpus, tmp_path / "x", "xprobe")
    root = path.parent
    lines = (root / "en" / "past_present" / "tr.txt").read_text().splitlines()
    assert len(lines) == 100 and {ln.split("\t")[1] for ln in lines} == {"Past", "Pres"}
    subj = (root / "en" / "subj_number" / "te.txt").read_text().splitlines()
    assert {ln.split("\t")[1] for ln in subj} == {"Sing", "Plur"}
    assert all(len(ln.split("\t")) == 2 for ln in subj)
    forms = (root / "en" / "subj_number" / "te.forms").read_text().splitlines()
    assert len(forms) == len(subj) and all(
        f.startswith(ln.split()[1].lower()) for f, ln in zip(forms, subj)
    )
    manifest = json.loads(path.read_text())
    assert manifest["tasks"]["SubjNum"]["forms"] == [
        f"en/subj_number/{c}.forms" for c in ("tr", "va", "te")
    ]
    assert "forms" not in manifest["tasks"]["SOMO"]  # originals have no target form
    entry = manifest["tasks"]["SOMO"]
    assert entry["counts"]["train"] == {"O": 50, "C": 50}
    assert entry["params"]["freq_band"] == [40, 400] and entry["stats"]["used"] == 140
    assert manifest["annotator"] == {"name": "synthetic", "version": "0"}
    assert len(manifest["corpus_sha256"]) == 64 and manifest["layout"] == "xprobe"
    assert not list(root.rglob("*.tmp"))


def test_senteval_layout_is_byte_identical_for_a_seed(corpus, tmp_path):
    _, a = write(corpus, tmp_path / "a", "senteval")
    _, b = write(corpus, tmp_path / "b", "senteval")
    names = sorted(p.name for p in a.parent.iterdir())
    assert "past_present.txt" in names and "odd_man_out.txt" in names
    assert "past_present.forms" in names and "odd_man_out.forms" not in names
    for name in names:
        assert (a.parent / name).read_bytes() == (b.parent / name).read_bytes()
    first = (a.parent / "past_present.txt").read_text().splitlines()[0].split("\t")
    assert first[0] == "tr" and first[1] in ("PAST", "PRES")


def test_corpus_filter_applies_to_every_task(corpus):
    [task] = build_suite(
        corpus,
        ["SentLen"],
        SIZES,
        seed=0,
        min_tokens=6,
        max_tokens=9,
        params={"SentLen": {"bins": ((6, 7), (8, 9))}},
    )
    assert task.stats["corpus: rejected: not 6-9 tokens"] > 0
    assert all(6 <= len(s.split()) <= 9 for ex in task.splits.values() for s, _ in ex)


def test_parser_errors_and_tokens_with_spaces_are_filtered_before_every_task():
    from collections import Counter

    from sentprobe.generation.suite import is_tree, prepare

    assert is_tree([2, 0, 2]) and is_tree([]) and is_tree([0])
    for broken in ([2, 1, 2, 0], [0, 0], [2, 3, 1], [0, 5]):  # cycle, two roots, no root, range
        assert not is_tree(broken)
    good, cyclic, spaced = svo_corpus(3, seed=5)
    cyclic.heads = [2, 1] + cyclic.heads[2:]
    spaced.tokens[1] = "25 000"
    stats: Counter = Counter()
    assert prepare([good, cyclic, spaced], 5, 28, stats) == [good]
    assert stats["rejected: heads do not form one tree (parser error)"] == 1
    assert stats["rejected: token with a space inside"] == 1
