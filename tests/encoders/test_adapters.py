"""sentprobe in the sentence-transformers and MTEB ecosystems, with the shipped MiniLM: a
model in memory as an encoder (fingerprinted by its current weights), the training-time
``ProbingEvaluator``, and ``as_mteb_model`` for ``mteb.evaluate``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import sentprobe
from sentprobe.encoders import get_encoder
from sentprobe.encoders.sbert import minilm_path
from sentprobe.errors import SentprobeError

sentence_transformers = pytest.importorskip("sentence_transformers")
SENTENCES = ["The cat sat on the mat .", "Probing asks what a vector holds ."]


@pytest.fixture(scope="module")
def model():
    return sentence_transformers.SentenceTransformer(str(minilm_path()), device="cpu")


def _nudge(model) -> None:
    """One in-place change of the weights, as an optimizer step makes."""
    with torch.no_grad():
        next(model.parameters()).add_(1e-3)


def test_a_model_in_memory_encodes_like_the_named_one_and_its_weights_fingerprint_it(model):
    memory = get_encoder(model)
    named = get_encoder("minilm")
    np.testing.assert_allclose(memory.encode(SENTENCES), named.encode(SENTENCES), atol=1e-6)
    before = memory.fingerprint
    assert before.startswith("st-memory|") and memory.fingerprint == before  # stable
    _nudge(model)
    try:
        assert memory.fingerprint != before  # trained further: other vectors, other cache key
    finally:
        with torch.no_grad():
            next(model.parameters()).sub_(1e-3)
    with pytest.raises(SentprobeError, match="is not an encoder"):
        get_encoder(object())


@pytest.mark.slow  # three probes of MiniLM's vectors: about a minute on a shared 2-core CPU
def test_evaluator_returns_sentprobes_scores_for_each_checkpoint(model, tmp_path):
    from sentprobe.datasets.mock import make_mock_task
    from sentprobe.evaluation.st_evaluator import ProbingEvaluator

    task = make_mock_task(n_train=60, n_dev=20, n_test=20)  # small: MiniLM on a CPU
    evaluator = ProbingEvaluator([task], results=tmp_path / "probing.sqlite")
    metrics = evaluator(model, epoch=1, steps=10)
    assert evaluator.primary_metric == "sentprobe_mean_dev_accuracy"
    assert set(metrics) == {
        "sentprobe_Mock_accuracy",
        "sentprobe_Mock_dev_accuracy",
        "sentprobe_mean_accuracy",
        "sentprobe_mean_dev_accuracy",
    }
    # the same number sentprobe run gives the shipped MiniLM on this task
    frame = sentprobe.run(
        ["minilm"],
        [task],
        baselines="none",
        results=tmp_path / "run.sqlite",
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    assert metrics["sentprobe_Mock_accuracy"] == pytest.approx(frame["test_score"].iloc[0])

    _nudge(model)  # a later checkpoint: probed again, stored as its own row
    try:
        evaluator(model, epoch=2, steps=20)
    finally:
        with torch.no_grad():
            next(model.parameters()).sub_(1e-3)
    with sentprobe.ResultsStore(tmp_path / "probing.sqlite", readonly=True) as store:
        records = store.records()
    assert [r.encoder for r in records] == [
        "sentprobe@epoch-1-step-10",
        "sentprobe@epoch-2-step-20",
    ]
    assert records[0].encoder_fingerprint != records[1].encoder_fingerprint


@pytest.mark.slow  # MTEB's classification of 1,000 sentences, twice, with MiniLM on a CPU
def test_as_mteb_model_scores_like_mtebs_own_sentence_transformers_wrapper(model):
    mteb = pytest.importorskip("mteb", minversion="2.26")
    from sentprobe.datasets.mteb_tasks import to_mteb_tasks
    from sentprobe.encoders.mteb import as_mteb_model

    adapted = as_mteb_model("minilm")
    assert adapted.mteb_model_meta.name == "sentprobe/MiniLM-L6"
    ours = mteb.evaluate(adapted, to_mteb_tasks("mock/Mock4"), cache=None, show_progress_bar=False)
    theirs = mteb.evaluate(model, to_mteb_tasks("mock/Mock4"), cache=None, show_progress_bar=False)
    assert ours.task_results[0].get_score() == pytest.approx(
        theirs.task_results[0].get_score(), abs=1e-6
    )
