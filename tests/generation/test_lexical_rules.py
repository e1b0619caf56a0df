"""The lexical split's form rules: no form above 10% of a class and split, at least 30 (or,
for small splits, n/5) distinct forms, dev and test with one length histogram per class, and
the ``.forms`` sidecar of target forms beside every task file."""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict

import numpy as np
import pytest

from gen_synth import ROOTS, record
from sentprobe.generation import GenerationError, SubjNum, suite_manifest, write_generated_suite
from sentprobe.generation.lexical import FormRules, split_by_form

COUNTS = {"train": 600, "dev": 150, "test": 150}


def test_rule_figures_scale_with_the_split():
    rules = FormRules()
    assert (rules.cap(150), rules.min_distinct(150)) == (15, 30)
    assert (rules.cap(600), rules.min_distinct(600)) == (60, 30)
    assert (rules.cap(100), rules.min_distinct(100)) == (10, 20)  # a form per 5 items
    assert (rules.cap(20), rules.min_distinct(20)) == (2, 10)  # the cap implies 10
    assert (rules.cap(5), rules.min_distinct(5)) == (1, 5)
    with pytest.raises(ValueError):
        FormRules(max_share=0)


def zipf_candidates(n_forms: int, seed: int = 0, dominant: float = 0.4):
    """Two labels, ``n_forms`` forms each with Zipfian counts; one form of each label holds
    ``dominant`` of the label's items; each form has its own typical length (so a split made
    of a few forms has a length profile of its own)."""
    rng = random.Random(seed)
    candidates, lengths = [], []
    for label in ("NN", "NNS"):
        counts = [max(1, int(300 / (k + 1))) for k in range(n_forms)]
        counts[0] = int(dominant * sum(counts[1:]) / (1 - dominant))
        for k, c in enumerate(counts):
            mean = rng.randint(6, 26)
            for _ in range(c):
                candidates.append((label, f"{label.lower()}{k}"))
                lengths.append(min(28, max(5, mean + rng.randint(-2, 2))))
    return candidates, lengths


def spread(candidates, picked):
    """{(split, label): (items, distinct forms, largest form count)} and form -> splits."""
    out, where = {}, defaultdict(set)
    for s, by in picked.items():
        for lab, idx in by.items():
            forms = Counter(candidates[i][1] for i in idx)
            out[s, lab] = (len(idx), len(forms), max(forms.values()))
            for f in forms:
                where[f].add(s)
    return out, where


def test_split_caps_each_form_and_keeps_many_forms():
    candidates, lengths = zipf_candidates(400)
    picked = split_by_form(
        candidates, ["NN", "NNS"], COUNTS, np.random.default_rng(1), "SubjNum", "x", lengths
    )
    figures, where = spread(candidates, picked)
    assert all(len(s) == 1 for s in where.values())  # each form in one split
    for (s, _lab), (n, distinct, top) in figures.items():
        assert n == COUNTS[s]
        assert top <= COUNTS[s] // 10, figures  # the dominant form (40%) is capped
        assert distinct >= 30, figures
    assert picked == split_by_form(
        candidates, ["NN", "NNS"], COUNTS, np.random.default_rng(1), "SubjNum", "x", lengths
    )


def test_a_dominant_form_is_refused_beyond_the_cap():
    """Dev needs 150 items of a class; its forms are one of 500 items and 40 of 3: with the
    cap (15) only 135 fit, so the split is refused rather than filled with the big form."""
    candidates = [("NN", "big")] * 500 + [("NN", f"s{k}") for k in range(40) for _ in range(3)]
    counts = {"train": 0, "dev": 150, "test": 0}
    with pytest.raises(GenerationError, match=r"dev/NN: 135 of 150 items from 41 forms"):
        split_by_form(candidates, ["NN"], counts, np.random.default_rng(0), "SubjNum", "x")
    picked = split_by_form(
        candidates, ["NN"], counts, np.random.default_rng(0), "SubjNum", "x",
        rules=FormRules(max_share=0.2),
    )  # fmt: skip
    assert Counter(candidates[i][1] for i in picked["dev"]["NN"])["big"] == 30


def test_dev_and_test_get_one_length_histogram_per_class():
    candidates, lengths = zipf_candidates(400, seed=3)
    picked = split_by_form(
        candidates, ["NN", "NNS"], COUNTS, np.random.default_rng(0), "SubjNum", "x", lengths
    )
    natural = split_by_form(
        candidates, ["NN", "NNS"], COUNTS, np.random.default_rng(0), "SubjNum", "x", lengths,
        FormRules(match_lengths=False),
    )  # fmt: skip
    for lab in ("NN", "NNS"):
        hist = {s: Counter(lengths[i] for i in picked[s][lab]) for s in picked}
        assert hist["dev"] == hist["test"]
        unmatched = {s: Counter(lengths[i] for i in natural[s][lab]) for s in natural}
        assert unmatched["dev"] != unmatched["test"]  # forms of their own lengths
        train_mean = np.mean([lengths[i] for i in picked["train"][lab]])
        assert abs(train_mean - np.mean([lengths[i] for i in picked["dev"][lab]])) < 1


def test_too_few_forms_is_refused_with_the_figures():
    """12 forms of 20 items: the cap (15) leaves 180 items for the 150 needed, but 12 forms
    are fewer than 30."""
    candidates = [("NN", f"f{k}") for k in range(12) for _ in range(20)]
    counts = {"train": 0, "dev": 150, "test": 0}
    with pytest.raises(GenerationError) as err:
        split_by_form(
            candidates, ["NN"], counts, np.random.default_rng(0), "SubjNum", "widen freq_band"
        )
    text = str(err.value)
    assert "dev/NN: 150 of 150 items from 12 forms (needs 30; 12 forms dealt to dev)" in text
    assert "240 candidate sentences from 12 forms (12 NN)" in text
    assert "at most 10% of a class and split per form" in text and "widen freq_band" in text


# ---------------------------------------------------------------------------- generator + sidecar


def subject_corpus(n: int, n_stems: int = 100, seed: int = 0):
    """``The N Vs the N advs .``: 2 * n_stems subject forms (stem + "n", plural + "s")."""
    rng = random.Random(seed)
    stems = [f"{r}n" for r in ROOTS[:n_stems]]
    weights = [1 / (k + 1) ** 0.7 for k in range(len(stems))]  # Zipf-like
    out, seen = [], set()
    while len(out) < n:
        (stem,) = rng.choices(stems, weights)
        plural = rng.random() < 0.5
        subj = (stem + "s", "NNS") if plural else (stem, "NN")
        rows = [
            ("The", "DET", "DT", 2, "det", {}),
            (subj[0], "NOUN", subj[1], 3, "nsubj", {"Number": "Plur" if plural else "Sing"}),
            ("runs" if not plural else "run", "VERB", "VBZ", 0, "root", {}),
        ]
        for _ in range(rng.randint(0, 8)):
            rows.append((rng.choice(ROOTS) + "ly", "ADV", "RB", 3, "advmod", {}))
        rows.append((".", "PUNCT", ".", 3, "punct", {}))
        sent = record(rows)
        key = " ".join(sent.tokens)
        if key not in seen:
            seen.add(key)
            out.append(sent)
    return out


@pytest.fixture(scope="module")
def subjnum():
    corpus = subject_corpus(6000)
    return SubjNum(freq_band=(1, 5000)).generate(corpus, {"train": 400, "dev": 100, "test": 100}, 7)


def test_generator_applies_the_rules(subjnum):
    rules = FormRules()
    for examples in subjnum.splits.values():
        for label in ("NN", "NNS"):
            forms = Counter(subjnum.targets[x] for x, y in examples if y == label)
            n = sum(forms.values())
            assert max(forms.values()) <= rules.cap(n) and len(forms) >= rules.min_distinct(n)
    params = subjnum.params
    assert params["max_form_share"] == 0.1 and params["min_forms"] == 30


@pytest.mark.parametrize("layout", ["senteval", "xprobe"])
def test_forms_sidecar_beside_every_task_file(subjnum, tmp_path, layout):
    manifest = suite_manifest(
        [subjnum], corpus_sha256="x", annotator={}, seed=7, lang="en", layout=layout
    )
    write_generated_suite(tmp_path, [subjnum], manifest, layout=layout, lang="en")
    written = json.loads((tmp_path / "manifest.json").read_text())["tasks"]["SubjNum"]
    if layout == "senteval":
        assert written["forms"] == ["subj_number.forms"]
        pairs = [("subj_number.txt", "subj_number.forms", lambda row: row.split("\t")[2])]
    else:
        assert written["forms"] == [f"en/subj_number/{c}.forms" for c in ("tr", "va", "te")]
        pairs = [
            (f"en/subj_number/{c}.txt", f"en/subj_number/{c}.forms", lambda r: r.split("\t")[0])
            for c in ("tr", "va", "te")
        ]
    for task_file, forms_file, sentence in pairs:
        rows = (tmp_path / task_file).read_text(encoding="utf-8").splitlines()
        forms = (tmp_path / forms_file).read_bytes().decode("utf-8")
        assert forms.endswith("\n") and "\r" not in forms
        assert [subjnum.targets[sentence(r)] for r in rows] == forms.splitlines()
