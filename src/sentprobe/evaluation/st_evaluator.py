"""sentprobe inside sentence-transformers training: a ``SentenceEvaluator`` that probes the
model being trained and returns sentprobe's scores.

    from sentprobe.evaluation.st_evaluator import ProbingEvaluator

    evaluator = ProbingEvaluator("sample-en", results="probing.sqlite")
    trainer = SentenceTransformerTrainer(model=model, ..., evaluator=evaluator)

Each call probes the model's current weights (their hash is the encoder fingerprint, so the
embedding cache never mixes two checkpoints) on every task with sentprobe's probe and
protocol, stores the results (a temporary store unless ``results`` names one; each call's row
is named ``<name>@epoch-E-step-S``), and returns ``<task>_accuracy`` (test) and
``<task>_dev_accuracy`` (the probe's selection score) per task and their means. The primary
metric, which ``load_best_model_at_end`` selects by, is the mean *dev* accuracy, so choosing a
checkpoint never looks at the test splits.
"""

from __future__ import annotations

import shutil
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

try:  # sentence-transformers >= 6 (the older path still works there, with a warning)
    from sentence_transformers.sentence_transformer.evaluation import SentenceEvaluator
except ImportError:  # pragma: no cover - sentence-transformers 3 to 5
    from sentence_transformers.evaluation import SentenceEvaluator  # type: ignore[no-redef]

from sentprobe.datasets import ProbingTask, resolve_tasks
from sentprobe.encoders.sbert import SentenceTransformerEncoder
from sentprobe.io import scratch_dir


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
        self.primary_metric = "mean_dev_accuracy"
        self.greater_is_better = True

    def __call__(
        self, model: Any, output_path: str | None = None, epoch: int = -1, steps: int = -1
    ) -> dict[str, float]:
        from sentprobe.evaluation.runner import run

        at = "" if epoch == -1 and steps == -1 else f"@epoch-{epoch}-step-{steps}"
        label = self.name + at
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
        for task, group in frame.groupby("task", sort=False):
            key = str(task).replace("/", "_")
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
