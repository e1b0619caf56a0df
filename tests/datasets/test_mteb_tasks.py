"""sentprobe tasks inside MTEB: evaluated by MTEB's own ``mteb.evaluate``, offline, with a
tiny MTEB encoder written here."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from sentprobe.datasets.builtin import resolve_tasks
from sentprobe.datasets.mteb_tasks import mteb_task_name, to_mteb_tasks
from sentprobe.encoders.base import Encoder
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.runner import run

mteb = pytest.importorskip("mteb", minversion="2.26")  # the version these were run with


class HashedBagOfWords:
    """The smallest MTEB encoder: MTEB's ``encode`` protocol over hashed token counts."""

    def __init__(self) -> None:
        from mteb.models import ModelMeta

        self.mteb_model_meta = ModelMeta.create_empty(
            overwrites={"name": "sentprobe-tests/hashed-bow", "revision": "1"}
        )
        self.seen: list[str] = []

    def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kw):
        rows = []
        for batch in inputs:
            for sentence in batch["text"]:
                self.seen.append(sentence)
                v = np.zeros(64, dtype=np.float32)
                for tok in sentence.split():
                    v[zlib.crc32(tok.encode()) % 64] += 1
                rows.append(v)
        return np.stack(rows)

    def similarity(self, a, b):
        return a @ b.T

    def similarity_pairwise(self, a, b):
        return (a * b).sum(-1)


def test_a_suite_runs_through_mteb_evaluate_and_returns_mteb_results():
    tasks = to_mteb_tasks("mock/Mock4")
    assert isinstance(tasks[0], mteb.AbsTask)
    model = HashedBagOfWords()
    result = mteb.evaluate(model, tasks, cache=None, show_progress_bar=False)
    assert type(result).__name__ == "ModelResult"
    (task_result,) = result.task_results
    assert isinstance(task_result, mteb.TaskResult)
    assert task_result.task_name == mteb_task_name("mock/Mock4") == "sentprobe.mock.Mock4"
    original = resolve_tasks("mock/Mock4")[0]
    assert task_result.dataset_revision == original.content_hash()
    # all of train and the dev split (sentprobe's probe chooses its strength there), then test
    assert len(model.seen) == sum(len(s) for s in original.splits.values())
    score = task_result.get_score()
    assert 0.5 < score <= 1.0  # 4 balanced classes: chance is 0.25; the words carry the label


def test_mtebs_few_shot_protocol_is_one_argument_away():
    (task,) = to_mteb_tasks(
        resolve_tasks("mock/Mock"), probe=None, samples_per_label=8, n_experiments=2
    )
    assert task.samples_per_label == 8 and task.n_experiments == 2


class _SentprobeBagOfWords(Encoder):
    """The same hashed bag of words as a sentprobe encoder, for ``sentprobe run``."""

    name = "hashed-bow"
    fingerprint = "tests-hashed-bow-v1"

    def encode(self, sentences):
        return HashedBagOfWords().encode([{"text": list(sentences)}], task_metadata=None,
                                         hf_split="", hf_subset="")  # fmt: skip


def test_mteb_scores_a_task_as_sentprobe_run_does(tmp_path):
    """One task, one encoder, one number: inside MTEB the task is scored by sentprobe's own
    probe (strength chosen on dev), so MTEB's score is ``sentprobe run``'s. MTEB's default
    classifier (C = 1, no dev) lands elsewhere on this task; ``probe=None`` still gives it."""
    frame = run(
        [_SentprobeBagOfWords()],
        "mock/Mock4",
        baselines="none",
        results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    (sentprobe_score,) = frame.loc[frame["encoder"] == "hashed-bow", "test_score"]
    scored = {}
    for probe in ("task", None):
        (task,) = to_mteb_tasks("mock/Mock4", probe=probe)
        result = mteb.evaluate(HashedBagOfWords(), [task], cache=None, show_progress_bar=False)
        scored[probe] = result.task_results[0].get_score()
    assert scored["task"] == pytest.approx(sentprobe_score)
    assert scored[None] != pytest.approx(sentprobe_score)


def test_an_unknown_probe_fails_before_mteb_runs():
    with pytest.raises(SentprobeError, match="unknown probe 'nope'"):
        to_mteb_tasks("mock/Mock", probe="nope")
