"""sentprobe inside sentence-transformers training: a ``SentenceEvaluator`` that probes the
model being trained and returns sentprobe's scores.

    from sentprobe.evaluation.st_evaluator import ProbingEvaluator

    evaluator = ProbingEvaluator("sample-en", results="probing.sqlite")
    trainer = SentenceTransformerTrainer(model=model, ..., evaluator=evaluator)

Each call probes the model's current weights (their hash is the encoder fingerprint, so the
embedding cache never mixes two checkpoints) on every task with sentprobe's probe and
protocol, stores the results (a temporary store unless ``results`` names one; each call's row
is named ``<name>@epoch-E-step-S``, a fractional epoch to two decimals), and returns
``<task>_accuracy`` (test) and ``<task>_dev_accuracy`` (the probe's selection score) per task
and their means; ``<task>`` is the task's name as the results table shows it, with its
language where one name stands for several tasks (``Tense_en``, ``Tense_fr``). The primary
metric is the mean *dev* accuracy, so choosing a checkpoint never looks at the test splits.
The trainer's ``load_best_model_at_end`` selects by it only when told to:

    args = SentenceTransformerTrainingArguments(
        ..., eval_strategy="epoch", save_strategy="epoch", load_best_model_at_end=True,
        metric_for_best_model=evaluator.primary_metric, greater_is_better=True)

(without ``metric_for_best_model`` the trainer selects by ``eval_loss``, which an evaluator
without an ``eval_dataset`` does not give, and stops at the first evaluation).
"""

from __future__ import annotations

import re
import shutil
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

try:  # sentence-transformers >= 6 (the older path still works there, with a warning)
    from sentence_transformers.sentence_transformer.evaluation import SentenceEvaluator
except ImportError:  # pragma: no cover - sentence-transformers 3 to 5
    from sentence_transformers.evaluation import SentenceEvaluator  # type: ignore[no-redef]

from sentprobe.datasets import ProbingTask, resolve_tasks
from sentprobe.encoders.sbert import SentenceTransformerEncoder
from sentprobe.evaluation.identity import task_names
from sentprobe.io import scratch_dir


def checkpoint_suffix(epoch: float, steps: int) -> str:
    """The row name's checkpoint part: ``@epoch-2-step-20``; a fractional epoch (an
    evaluation every few steps) to two decimals, ``@epoch-0.67-step-2``; nothing outside
    training (epoch and steps -1)."""
    if epoch == -1 and steps == -1:
        return ""
    shown = str(int(epoch)) if float(epoch).is_integer() else f"{float(epoch):.2f}"
    return f"@epoch-{shown}-step-{steps}"


def metric_keys(frame: pd.DataFrame) -> list[str]:
    """Each record's metric key: its task's display name as the results table shows it
    (sentprobe.evaluation.identity.task_names), so one task name in two languages gives two
    keys (``Tense_en``, ``Tense_fr``) and never their mean; characters other than letters,
    digits and ``_`` become ``_``."""
    names = task_names(frame)
    return [re.sub(r"\W+", "_", str(n)).strip("_") or "task" for n in names]


class ProbingEvaluator(SentenceEvaluator):
    """Probe a ``SentenceTransformer`` on sentprobe tasks during (or after) training."""

    def __init__(
        self,
        tasks: str | Sequence[str] | Sequence[ProbingTask] = "sample-en",
        *,
        probe: str | None = None,
        seeds: int = 1,
        results: str | Path | None = None,
        cache_dir: str | Path | None = None,
        name: str = "sentprobe",
        batch_size: int = 64,
    ) -> None:
        super().__init__()
        given = [tasks] if isinstance(tasks, str) else list(tasks)
        loaded = all(isinstance(t, ProbingTask) for t in given)
        self.tasks: list[ProbingTask] = given if loaded else resolve_tasks(given)  # type: ignore[assignment, arg-type]
        self.probe, self.seeds, self.name, self.batch_size = probe, seeds, name, batch_size
        scratch = scratch_dir("sentprobe-evaluator-")
        weakref.finalize(self, shutil.rmtree, scratch, True)
        self.results = Path(results) if results is not None else scratch / "results.sqlite"
        self.cache_dir = Path(cache_dir) if cache_dir is not None else scratch / "cache"
        # prefixed from the start, as the metrics are: the trainer's metric_for_best_model
        # can be set to it before the first evaluation
        self.primary_metric = f"{name}_mean_dev_accuracy" if name else "mean_dev_accuracy"
        self.greater_is_better = True

    def __call__(
        self, model: Any, output_path: str | None = None, epoch: int = -1, steps: int = -1
    ) -> dict[str, float]:
        from sentprobe.evaluation.runner import run

        label = self.name + checkpoint_suffix(epoch, steps)
        encoder = SentenceTransformerEncoder(model, name=label, batch_size=self.batch_size)
        frame = run(
            [encoder],
            self.tasks,
            baselines="none",
            probe=self.probe,
            seeds=self.seeds,
            results=self.results,
            cache_dir=self.cache_dir,
            progress=False,
        )
        metrics: dict[str, float] = {}
        frame = frame.assign(_key=metric_keys(frame))
        for key, group in frame.groupby("_key", sort=False):
            metrics[f"{key}_accuracy"] = float(group["test_score"].mean())
            dev = group["dev_score"].dropna()
            metrics[f"{key}_dev_accuracy"] = float(dev.mean()) if len(dev) else float("nan")
        tests = [v for k, v in metrics.items() if not k.endswith("_dev_accuracy")]
        devs = [v for k, v in metrics.items() if k.endswith("_dev_accuracy") and v == v]
        metrics["mean_accuracy"] = sum(tests) / len(tests)
        metrics["mean_dev_accuracy"] = sum(devs) / len(devs) if devs else float("nan")
        metrics = self.prefix_name_to_metrics(metrics, self.name)
        self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        return metrics
