"""``sentprobe.evaluate``: probe encoders on tasks in memory and return scores with CIs.

The units are those ``sentprobe.run`` computes (``evaluation.runner.plan_run`` and
``execute``: the same loading, checks, probes, seeds and records), kept in a
:class:`~sentprobe.evaluation.memory.MemoryStore` instead of an SQLite results store, so
nothing is written unless ``cache_dir`` names an embedding cache. Each record gets the
percentile bootstrap interval of its test accuracy over test items, or over their target
word forms where the task's split is lexical (analysis/stats.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sentprobe.analysis.erasure import erasure_effects
from sentprobe.analysis.stats import CONFIDENCE, accuracy_interval
from sentprobe.datasets import ProbingTask
from sentprobe.encoders.cache import EmbeddingCache
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.erasure import CONTROL_SEEDS
from sentprobe.evaluation.memory import MemoryStore
from sentprobe.evaluation.runner import EncoderSpecs, execute, plan_run
from sentprobe.reporting.tables import probe_mark

#: how to probe vectors computed elsewhere, said when an array is passed as an encoder
PRECOMPUTED_HOW = (
    "pass a function that looks the vectors up, e.g. row = {s: i for i, s in "
    "enumerate(sentences)}; evaluate(lambda batch: vectors[[row[s] for s in batch]], ...)"
)


def _check_encoders(encoders: Any) -> None:
    """Refuse, in one line each, the objects people pass that are not encoders."""
    items = encoders.keys() if isinstance(encoders, Mapping) else encoders
    if isinstance(encoders, (str, np.ndarray)) or callable(encoders):
        items = [encoders]
    for item in items:
        if isinstance(item, np.ndarray) or (
            isinstance(item, (list, tuple)) and item and isinstance(item[0], np.ndarray)
        ):
            raise SentprobeError(f"evaluate takes encoders, not vectors: {PRECOMPUTED_HOW}")
        config = getattr(item, "config", None)
        if config is not None and hasattr(item, "base_model_prefix"):  # transformers' models
            name = getattr(config, "_name_or_path", "") or "MODEL"
            raise SentprobeError(
                f"evaluate takes a transformers model by name: 'hf:{name}' (its layers and "
                "pooling through encoder_options, e.g. {'layer': -1, 'pooling': 'mean'})"
            )


def evaluate(
    encoders: EncoderSpecs,
    tasks: str | Sequence[str] | Sequence[ProbingTask] = "sample-en",
    *,
    probe: str | None = None,
    seeds: int = 1,
    baselines: str | Sequence[str] | None = "none",
    encoder_options: dict[str, Any] | None = None,
    controls: bool = False,
    nli_train: str | Path | None = None,
    allow_heuristic_labels: bool = False,
    cache_dir: str | Path | None = None,
    confidence: float = CONFIDENCE,
    progress: bool = False,
    erase: Sequence[str] = (),
    erase_fit: str = "train",
    erase_controls: int = CONTROL_SEEDS,
) -> pd.DataFrame:
    """Probe ``encoders`` on ``tasks`` and return one row per (row, task, seed) result.

    ``encoders``: a name (``"minilm"``, ``"hf:bert-base-uncased"``), an ``Encoder``, a
    function from a list of sentences to an (n, d) array, or a list of them. ``tasks``: a
    suite or task name, files, or loaded ``ProbingTask`` objects. ``probe``: a registered
    probe name (``logreg``, ``mlp``, ``paper``, ``mdl``, ``senteval``; None: each task's
    own, else logreg). ``baselines``: as ``sentprobe run --baselines`` (none by default).
    ``erase``: tasks whose property is erased from each encoder before every task is probed
    again (``sentprobe.run``'s); the erased rows are in the frame, and ``attrs["erasure"]``
    holds what ``report --erasure`` prints (``analysis.erasure.erasure_effects``);
    ``erase_fit`` and ``erase_controls`` are ``sentprobe.run``'s.
    The other options are ``sentprobe.run``'s.

    Columns: the results store's record fields (``encoder``, ``task``, ``probe``, ``seed``,
    ``test_score``, ``dev_score``, ``config``...; scores are fractions) plus ``ci_low`` and
    ``ci_high``, the ``confidence`` bootstrap interval of ``test_score`` over test items (over
    their target word forms where the test split has ``clusters``: a lexical split).
    Nothing is written to disk: no results store, and no embedding cache unless
    ``cache_dir`` names one (then vectors are reused across calls and with ``run``).
    The ``mark`` column holds ∅ where the probe says nothing (a single class predicted on
    test, or dev at the dev majority and test not above the test's), as the tables mark it.

    Vectors computed elsewhere: pass a function that looks them up by sentence
    (:data:`PRECOMPUTED_HOW`); a transformers model: its name, ``"hf:NAME"``.
    """
    if not 0 < confidence < 1:
        raise SentprobeError(
            f"confidence must be a fraction between 0 and 1 (e.g. 0.95), got {confidence!r}"
        )
    _check_encoders(encoders)
    units = plan_run(
        encoders,
        tasks,
        baselines=baselines,
        probe=probe,
        seeds=seeds,
        encoder_options=encoder_options,
        controls=controls,
        nli_train=nli_train,
        allow_heuristic_labels=allow_heuristic_labels,
        erase=erase,
        erase_fit=erase_fit,
        erase_controls=erase_controls,
    )
    cache = EmbeddingCache(None if cache_dir is None else Path(cache_dir).expanduser())
    cache.check_writable()
    store = MemoryStore()
    frame = execute(units, store, cache, progress=progress)
    found = store.predictions_for(frame["key"])
    bounds = [
        accuracy_interval([found[key].correct], confidence=confidence, clusters=found[key].clusters)
        if key in found
        else None
        for key in frame["key"]
    ]
    at = list(frame.columns).index("test_score") + 1
    frame.insert(at, "ci_low", [b[0] if b else None for b in bounds])
    frame.insert(at + 1, "ci_high", [b[1] if b else None for b in bounds])
    marks = [
        probe_mark(extra or {}, dev)[0] for extra, dev in zip(frame["extra"], frame["dev_score"])
    ]
    frame.insert(at + 2, "mark", marks)
    if erase:
        frame.attrs["erasure"] = erasure_effects(frame, found)
    return frame
