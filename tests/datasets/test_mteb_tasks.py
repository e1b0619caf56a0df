"""sentprobe tasks inside MTEB: evaluated by MTEB's own ``mteb.evaluate``, offline, with a
tiny MTEB encoder written here."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from sentprobe.datasets.builtin import resolve_tasks
from sentprobe.datasets.mteb_tasks import mteb_task_name, to_mteb_tasks

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
    # all of train was used (samples_per_label = the largest class), then the test split
    assert len(model.seen) == len(original.splits["train"]) + len(original.splits["test"])
    score = task_result.get_score()
    assert 0.5 < score <= 1.0  # 4 balanced classes: chance is 0.25; the words carry the label


def test_mtebs_few_shot_protocol_is_one_argument_away():
    (task,) = to_mteb_tasks(resolve_tasks("mock/Mock"), samples_per_label=8, n_experiments=2)
    assert task.samples_per_label == 8 and task.n_experiments == 2
