"""``report --format model-index``: a model's probing scores as the ``model-index`` block of a
Hugging Face model card (its YAML header), which the Hub shows as evaluation results.

One model per block: the rows of one encoder fingerprint (``-e NAME`` chooses it when the
store holds several). One result per task and probe, the mean test accuracy over seeds (in
percent), with the task's content hash as the dataset revision.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from sentprobe.errors import SentprobeError


def model_index(frame: pd.DataFrame) -> str:
    """The ``model-index`` YAML of the one encoder in ``frame``."""
    import yaml  # type: ignore[import-untyped]

    fingerprints = list(dict.fromkeys(frame["encoder_fingerprint"]))
    if len(fingerprints) != 1:
        names = ", ".join(dict.fromkeys(frame["encoder"].astype(str)))
        raise SentprobeError(
            f"--format model-index describes one model, the store holds {len(fingerprints)} "
            f"encoder fingerprints ({names}): choose one with -e NAME"
        )
    results: list[dict[str, Any]] = []
    keys = ["task", "task_hash", "probe"]
    for (task, task_hash, probe), group in frame.groupby(keys, sort=False):
        seeds = len(group)
        results.append(
            {
                "task": {"type": "text-classification", "name": "Probing (sentprobe)"},
                "dataset": {"name": str(task), "type": str(task), "revision": str(task_hash)},
                "metrics": [
                    {
                        "type": "accuracy",
                        "value": round(float(group["test_score"].mean()) * 100, 2),
                        "name": f"test accuracy, {probe} probe"
                        + (f", mean of {seeds} seeds" if seeds > 1 else ""),
                    }
                ],
                "source": {"name": "sentprobe", "url": "https://pypi.org/project/sentprobe/"},
            }
        )
    block = {"model-index": [{"name": str(frame["encoder"].iloc[0]), "results": results}]}
    return yaml.safe_dump(block, sort_keys=False, allow_unicode=True)
