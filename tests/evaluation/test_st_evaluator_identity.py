"""Issue 46: ``ProbingEvaluator`` keys its metrics by task identity (one key per language
where one task name stands for several), names rows readably, and the documented
``load_best_model_at_end`` recipe works in a real ``SentenceTransformerTrainer``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

sentence_transformers = pytest.importorskip("sentence_transformers")
torch = pytest.importorskip("torch")

from sentprobe.encoders.sbert import minilm_path  # noqa: E402
from sentprobe.evaluation.st_evaluator import (  # noqa: E402
    ProbingEvaluator,
    checkpoint_suffix,
)
from sentprobe.evaluation.store import ResultsStore  # noqa: E402

TOKENIZER = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """A randomly initialised two-layer BERT (16 dimensions) with MiniLM's tokenizer."""
    from transformers import BertConfig, BertModel

    folder = tmp_path_factory.mktemp("tiny")
    for name in TOKENIZER:
        shutil.copy(minilm_path() / name, folder / name)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=128,
    )  # fmt: skip
    BertModel(config).save_pretrained(folder)
    return folder


def _model(folder: Path):
    from sentence_transformers import SentenceTransformer, models

    transformer = models.Transformer(str(folder), max_seq_length=64)
    pooling = models.Pooling(transformer.get_word_embedding_dimension(), "mean")
    return SentenceTransformer(modules=[transformer, pooling], device="cpu")


def test_checkpoint_names_are_readable():
    assert checkpoint_suffix(0.6666666666666666, 2) == "@epoch-0.67-step-2"
    assert checkpoint_suffix(2.0, 20) == "@epoch-2-step-20"
    assert checkpoint_suffix(-1, -1) == ""


def test_one_task_name_in_two_languages_gives_two_keys(tiny, tmp_path):
    evaluator = ProbingEvaluator(
        ["sample-en/SubjNum", "sample-fr/SubjNum"],
        results=tmp_path / "e.sqlite",
        cache_dir=tmp_path,
    )
    model = _model(tiny)
    metrics = evaluator(model, epoch=0.6666666666666666, steps=2)
    assert {k for k in metrics if k.endswith("_accuracy") and "mean" not in k} == {
        "sentprobe_SubjNum_en_accuracy",
        "sentprobe_SubjNum_en_dev_accuracy",
        "sentprobe_SubjNum_fr_accuracy",
        "sentprobe_SubjNum_fr_dev_accuracy",
    }
    with ResultsStore(tmp_path / "e.sqlite", readonly=True) as store:
        frame = store.to_frame()
    assert set(frame["encoder"]) == {"sentprobe@epoch-0.67-step-2"}
    stored = dict(zip(frame["language"], frame["test_score"], strict=True))
    assert metrics["sentprobe_SubjNum_en_accuracy"] == pytest.approx(stored["en"])
    assert metrics["sentprobe_SubjNum_fr_accuracy"] == pytest.approx(stored["fr"])
    assert stored["en"] != stored["fr"]
    mean = (stored["en"] + stored["fr"]) / 2
    assert mean not in [v for k, v in metrics.items() if "SubjNum" in k]


def test_load_best_model_at_end_recipe_in_a_real_trainer(tiny, tmp_path):
    from sentence_transformers import (
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
        losses,
    )

    from datasets import Dataset
    from sentprobe.datasets.mock import make_mock_task

    model = _model(tiny)
    task = make_mock_task(n_train=60, n_dev=20, n_test=20)
    evaluator = ProbingEvaluator([task], results=tmp_path / "p.sqlite", cache_dir=tmp_path)
    pairs = Dataset.from_dict(
        {
            "anchor": [f"a sentence number {i}" for i in range(16)],
            "positive": [f"the sentence {i} again" for i in range(16)],
        }
    )
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path / "out"),
        num_train_epochs=2,
        per_device_train_batch_size=8,
        eval_strategy="epoch",
        save_strategy="epoch",
        load_best_model_at_end=True,
        metric_for_best_model=evaluator.primary_metric,  # the documented recipe
        greater_is_better=True,
        report_to=[],
        use_cpu=True,
    )
    trainer = SentenceTransformerTrainer(
        model=model, args=args, train_dataset=pairs,
        loss=losses.MultipleNegativesRankingLoss(model), evaluator=evaluator,
    )  # fmt: skip
    trainer.train()
    assert trainer.state.best_metric is not None
    devs = [
        log[f"eval_{evaluator.primary_metric}"]
        for log in trainer.state.log_history
        if f"eval_{evaluator.primary_metric}" in log
    ]
    assert len(devs) == 2 and trainer.state.best_metric == pytest.approx(max(devs))
    with ResultsStore(tmp_path / "p.sqlite", readonly=True) as store:
        names = [r.encoder for r in store.records()]
    assert names == ["sentprobe@epoch-1-step-2", "sentprobe@epoch-2-step-4"]
