"""sentprobe: what linguistic information does a sentence encoder put into its vectors?

The Python API in a few names (imported lazily so the command line starts fast)::

    import sentprobe
    scores = sentprobe.evaluate("minilm", "sample-en")   # probe in memory: scores with CIs
    frame = sentprobe.run(["minilm"], "sample-en")       # probe into a results store (resumable)
    print(sentprobe.results_table(frame))                 # the paper's Table 2 layout
"""

from __future__ import annotations

from importlib import import_module, metadata
from typing import Any

try:  # one source: the version pyproject.toml gives the installed distribution
    __version__ = metadata.version("sentprobe")
except metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

_API = {
    "evaluate": "sentprobe.analysis.evaluate",
    "run": "sentprobe.evaluation.runner",
    "Runner": "sentprobe.evaluation.runner",
    "ResultsStore": "sentprobe.evaluation.store",
    "results_table": "sentprobe.reporting",
    "get_encoder": "sentprobe.encoders",
    "Encoder": "sentprobe.encoders.base",
    "EmbeddingCache": "sentprobe.encoders.cache",
    "resolve_tasks": "sentprobe.datasets",
    "load_tasks": "sentprobe.datasets",
    "ProbingTask": "sentprobe.datasets",
    "TaskMetadata": "sentprobe.datasets",
    "LogisticProbe": "sentprobe.probes",
    "MLPProbe": "sentprobe.probes",
    "SentEvalProbe": "sentprobe.probes",
    "SentprobeError": "sentprobe.errors",
    "DataError": "sentprobe.errors",
}

__all__ = [*_API, "__version__"]


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(import_module(_API[name]), name)
    raise AttributeError(f"module 'sentprobe' has no attribute {name!r}")
