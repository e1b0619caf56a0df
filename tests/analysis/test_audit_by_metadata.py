"""The audit's function-word checks follow a set's metadata, not its file name; a cue spread
over many rare words is caught without the baseline rows; the position rules read each
segment of a "first ||| second" pair (issue 48)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from dnc_fixture import write_set
from sentprobe.analysis.audit import audit_task
from sentprobe.datasets.loaders.dnc import load_dnc_set

RELEASE = Path(
    os.environ.get("SENTPROBE_DNC", Path(__file__).parents[3] / "shared/data/dnc_function_words")
)
_TEXT = "the cat a dog saw near house river we they found old green small took left garden road"
WORDS = _TEXT.split() + ["quickly", "today", "yesterday", "friend", "letter"]


def _sentences(rng: np.random.Generator, n: int) -> list[str]:
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(6, 12)))) + " ." for _ in range(n)]


def _acceptability_set(root: Path, stem: str, declared: str, plant: bool, pair: bool = False):
    """200 items in ten folds, both classes from the same words; ``plant``: every
    unacceptable item gets one word of a pool of 40 rare words."""
    rng = np.random.default_rng(0)
    firsts, seconds = _sentences(rng, 200), _sentences(rng, 200)
    pool = [f"zq{i}x" for i in range(40)]
    data, meta = [], []
    for i in range(200):
        good = i % 2 == 0
        text = firsts[i]
        if plant and not good:
            words = text.split()
            words.insert(int(rng.integers(len(words))), str(rng.choice(pool)))
            text = " ".join(words)
        data.append({"context": text, "hypothesis": seconds[i] if pair else "",
                     "label": "acceptable" if good else "unacceptable", "pair-id": i,
                     "type-of-inference": declared})  # fmt: skip
        part = (i // 2) % 10
        misc = {f"fold{f + 1}": "test" if part == f else "dev" if part == (f + 1) % 10
                else "train" for f in range(10)}  # fmt: skip
        meta.append({"pair-id": i, "misc": misc})
    write_set(root, stem, data, meta)
    return root / f"{stem}_data.json"


def _findings(path: Path, check: str):
    return [f for f in audit_task(load_dnc_set(path), baselines=False) if f.check == check]


def test_a_set_is_known_by_its_metadata_not_its_file_name(tmp_path):
    path = _acceptability_set(tmp_path, "definiteness", "acceptability-definiteness.tsv", False)
    task = load_dnc_set(path)
    assert task.metadata.paper_name == "Def"


def test_rare_words_in_one_class_are_caught_without_baselines(tmp_path):
    path = _acceptability_set(tmp_path, "my-set", "acceptability-definiteness.tsv", True)
    (found,) = _findings(path, "class-vocabulary")
    assert found.severity == "error", found.message
    clean = _acceptability_set(tmp_path / "c", "my-set", "acceptability-definiteness.tsv", False)
    (found,) = _findings(clean, "class-vocabulary")
    assert found.severity == "info", found.message


def test_position_rules_read_each_segment_of_a_pair(tmp_path):
    path = _acceptability_set(tmp_path, "pairs", "acceptability-eos.tsv", False, pair=True)
    data = json.loads(path.read_text())
    for d in data:  # the cue: the first segment of an unacceptable pair ends with "and"
        if d["label"] == "unacceptable":
            d["context"] = d["context"].replace(" .", " and")
        else:
            d["context"] = d["context"].replace(" .", " the")
    path.write_text(json.dumps(data))
    (found,) = _findings(path, "segment1-last-token")
    assert found.severity == "error" and found.data["gain_points"] == 50.0
    assert not _findings(_acceptability_set(tmp_path / "s", "single", "x.tsv", False),
                         "segment1-last-token")  # fmt: skip


@pytest.mark.skipif(not RELEASE.is_dir(), reason="the DNC release is not in ../shared/data")
@pytest.mark.parametrize("stem", ["definiteness", "Def", "anything-at-all"])
def test_the_releases_def_fails_the_audit_under_any_file_name(tmp_path, stem):
    from typer.testing import CliRunner

    from sentprobe.cli.main import app

    src = RELEASE / "ACCEPTABILITY/acceptability-definiteness"
    for suffix in ("_data.json", "_metadata.json"):
        shutil.copy(f"{src}{suffix}", tmp_path / f"{stem}{suffix}")
    res = CliRunner().invoke(
        app,
        [
            "audit",
            str(tmp_path / f"{stem}_data.json"),
            "--no-baselines",
            "--fail-on",
            "warning",
        ],  # fmt: skip
    )
    assert res.exit_code == 1, res.output
    assert "lexical-ngram: contains 'the'" in res.output


@pytest.mark.skipif(not RELEASE.is_dir(), reason="the DNC release is not in ../shared/data")
def test_release_eos_gains_are_what_the_release_measures():
    from sentprobe.analysis.checks.surface import RELEASE_EOS_GAINS

    task = load_dnc_set(RELEASE / "ACCEPTABILITY/acceptability-eos_data.json")
    found = {f.check: f for f in audit_task(task, baselines=False)}
    for check, gain in RELEASE_EOS_GAINS.items():
        assert round(found[check].data["gain_points"], 1) == gain
        assert found[check].severity == "info"  # the release is held to its own gain
