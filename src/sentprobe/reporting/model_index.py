"""``report --format model-index``: a model's probing scores as the ``model-index`` block of a
Hugging Face model card (its YAML header), which the Hub shows as evaluation results.

One model per block: one row identity (sentprobe.evaluation.identity; a seeded row's draws,
one encoder fingerprint per seed, are one row), chosen with ``-e NAME`` when the store holds
several. One result per task identity and probe: the mean test accuracy over seeds (in
percent) on the ``test`` split, the dataset named by its full task name with its language
(``sample-en/Tense (en)``), its language as the dataset config and the task's content hash as
its revision. Control tasks are no datasets of their own and are left out. The block is built
with ``huggingface_hub``'s ``EvalResult`` and ``ModelCardData``, so the Hub's own reader
parses it back.
"""

from __future__ import annotations

import pandas as pd

from sentprobe.datasets.controls import is_control
from sentprobe.datasets.identity import full_task_name, is_path_source, mteb_name
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.identity import TASK, resolve

_SOURCE_URL = "https://pypi.org/project/sentprobe/"


def dataset_names(task: str, language: str, source: str) -> tuple[str, str]:
    """(name, type) of a task identity on the Hub: the full task name with its language
    (``sample-en/Tense (en)``), and the full name as the type (a task loaded from a path: its
    MTEB name, ``sentprobe.Tense.de.1a2b3c4d``, which holds no path)."""
    path = is_path_source(source)
    full = mteb_name(task, language, source) if path else full_task_name(task, source)
    shown = f"{full} ({language})" if language and language not in ("und", "nan") else full
    return shown, full


def model_index(frame: pd.DataFrame) -> str:
    """The ``model-index`` YAML of the one row in ``frame``."""
    import yaml  # type: ignore[import-untyped]
    from huggingface_hub import EvalResult, ModelCardData

    df = resolve(frame)
    df = df[~df["task"].map(is_control)]
    rows = list(dict.fromkeys(df["row_id"]))
    if len(rows) != 1:
        names = ", ".join(dict.fromkeys(df["encoder"].astype(str)))
        raise SentprobeError(
            f"--format model-index describes one model, the results hold {len(rows)} rows "
            f"({names or 'none'}): choose one with -e NAME"
        )
    results = []
    for (source, language, task, probe), group in df.groupby([*TASK, "probe"], sort=False):
        name, kind = dataset_names(str(task), str(language), str(source))
        seeds = group["seed"].nunique()
        results.append(
            EvalResult(
                task_type="text-classification",
                task_name="Probing (sentprobe)",
                dataset_type=kind,
                dataset_name=name,
                dataset_config=str(language) or None,
                dataset_split="test",
                dataset_revision=str(group["task_hash"].iloc[-1]),
                metric_type="accuracy",
                metric_value=round(float(group["test_score"].mean()) * 100, 2),
                metric_name=f"test accuracy, {probe} probe"
                + (f", mean of {seeds} seeds" if seeds > 1 else ""),
                source_name="sentprobe",
                source_url=_SOURCE_URL,
            )
        )
    card = ModelCardData(model_name=str(df["encoder"].iloc[0]), eval_results=results)
    block = {"model-index": card.to_dict()["model-index"]}
    return yaml.safe_dump(block, sort_keys=False, allow_unicode=True)
