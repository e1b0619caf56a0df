"""``report --format mteb -o DIR``: stored results in MTEB's results layout, which MTEB's own
``ResultCache(DIR).load_results()`` (and ``TaskResult.from_disk``) read back.

The layout is MTEB's: ``DIR/results/<model>/<revision>/<task>.json`` (one file per model and
task) beside a ``model_meta.json``. A row probed as ``-e mteb:NAME`` keeps MTEB's model name
and revision (from its fingerprint); any other row is named after its label (``/`` as ``__``)
with the first 12 hex digits of a hash of its fingerprint as the revision, so two different
models never share a folder. Task names are :func:`~sentprobe.datasets.mteb_tasks
.mteb_task_name`'s. Each file's ``test`` score has MTEB's ``main_score`` (accuracy, mean over
seeds, as a fraction) and sentprobe's extra fields: the 95% bootstrap interval, the dev score,
the probe and its selection, the number of seeds. The JSON is written directly, so this works
without the ``mteb`` package.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from sentprobe.datasets.mteb_tasks import MTEB_LANGUAGES, mteb_task_name
from sentprobe.errors import SentprobeError
from sentprobe.io import atomic_write_text

#: ``-e mteb:NAME`` fingerprints: ``mteb|NAME@REVISION[|weights=...]``.
_MTEB_FINGERPRINT = re.compile(r"^mteb\|(?P<name>.+)@(?P<revision>[^|@]+)(\||$)")


def model_folder(encoder: str, fingerprint: str) -> tuple[str, str]:
    """(MTEB model name, revision) of a stored row."""
    found = _MTEB_FINGERPRINT.match(fingerprint or "")
    if found:
        return found["name"], found["revision"]
    return encoder, hashlib.sha1((fingerprint or encoder).encode()).hexdigest()[:12]


def _mteb_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("mteb")
    except Exception:  # not installed: MTEB's loader accepts a missing version
        return None


def write_mteb_results(
    frame: pd.DataFrame,
    out: str | Path,
    interval: Callable[[Sequence[str]], tuple[float, float] | None] | None = None,
) -> list[Path]:
    """Write one MTEB result file per (row, task) of ``frame`` under ``out``; returns them."""
    if frame.empty:
        raise SentprobeError("no stored results to write")
    several = frame.groupby(["encoder", "task"])["probe"].nunique()
    if (several > 1).any():
        (encoder, task) = several[several > 1].index[0]
        raise SentprobeError(
            f"{encoder} on {task} has results of several probes; MTEB's layout holds one per "
            "model and task: choose one with --probe"
        )
    version = _mteb_version()
    written: list[Path] = []
    out = Path(out) / "results"
    for (encoder, fingerprint), rows in frame.groupby(["encoder", "encoder_fingerprint"]):
        name, revision = model_folder(str(encoder), str(fingerprint))
        folder = out / name.replace("/", "__") / revision
        meta = {"name": name, "revision": revision, "sentprobe_row": str(encoder)}
        written.append(
            atomic_write_text(folder / "model_meta.json", json.dumps(meta, indent=2) + "\n")
        )
        for task, cells in rows.groupby("task"):
            keys = list(cells["key"])
            bounds = interval(keys) if interval is not None else None
            accuracy = float(cells["test_score"].mean())
            language = str(cells["language"].iloc[0])
            dev = cells["dev_score"].dropna()
            score: dict[str, Any] = {
                "accuracy": accuracy,
                "main_score": accuracy,
                "hf_subset": "default",
                "languages": [MTEB_LANGUAGES.get(language, "und-Zyyy")],
                "sentprobe_ci95_low": None if bounds is None else float(bounds[0]),
                "sentprobe_ci95_high": None if bounds is None else float(bounds[1]),
                "sentprobe_dev_score": float(dev.mean()) if len(dev) else None,
                "sentprobe_probe": str(cells["probe"].iloc[0]),
                "sentprobe_selection": str(cells["selection"].iloc[0]),
                "sentprobe_seeds": int(cells["seed"].nunique()),
                "sentprobe_task": str(task),
            }
            doc = {
                "dataset_revision": str(cells["task_hash"].iloc[0]),
                "task_name": mteb_task_name(str(task)),
                "mteb_version": version,
                "scores": {"test": [score]},
                "evaluation_time": float(
                    cells["encode_seconds"].fillna(0).sum() + cells["probe_seconds"].fillna(0).sum()
                ),
                "kg_co2_emissions": None,
            }
            path = folder / f"{mteb_task_name(str(task))}.json"
            written.append(atomic_write_text(path, json.dumps(doc, indent=2) + "\n"))
    return written
