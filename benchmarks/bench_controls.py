"""Cost of MDL probing and of control tasks on sample-en, encoding excluded (run by hand;
figures go to docs/benchmarks.md).

    SENTPROBE_CACHE=/tmp/me/cache HF_HUB_OFFLINE=1 python benchmarks/bench_controls.py \
        [-e minilm] [--repeats 3]

Encodes sample-en once through the embedding cache, then times, per task and interleaved so
background load hits all alike, the fit of: ``logreg`` on the task (the default probe),
``mdl`` on the task (``logreg`` plus the online code) and ``logreg`` on the task's control
task at the L2 the task's probe chose (what ``--controls`` adds: the runner probes a control
with its task's chosen configuration). Each time is the best of ``--repeats``; the sums over the ten
tasks are compared with ``logreg``'s.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from sentprobe.datasets import resolve_tasks
from sentprobe.datasets.controls import control_task
from sentprobe.encoders import get_encoder
from sentprobe.encoders.cache import EmbeddingCache
from sentprobe.evaluation.runner import default_cache_dir
from sentprobe.probes import make_probe


def _fit_seconds(probe: str, task, vectors: dict[str, np.ndarray], config=None) -> float:
    tr, dv = task.splits["train"], task.splits.get("dev")
    X = {
        name: np.stack([vectors[s] for s in split.sentences]) for name, split in task.splits.items()
    }
    est = make_probe(probe, task.metadata.paper_name or task.name)
    if config is not None:
        est.set_params(**config)
    start = time.perf_counter()
    est.fit(X["train"], tr.labels, *((X["dev"], dv.labels) if dv else ()))
    est.predict(X["test"])
    return time.perf_counter() - start


def _chosen_config(task, vectors: dict[str, np.ndarray]) -> dict:
    tr, dv = task.splits["train"], task.splits["dev"]
    est = make_probe("logreg", task.metadata.paper_name or task.name)
    X = [np.stack([vectors[s] for s in split.sentences]) for split in (tr, dv)]
    return est.fit(X[0], tr.labels, X[1], dv.labels).best_params_


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-e", "--encoder", default="minilm")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    tasks = resolve_tasks("sample-en")
    sentences = list(dict.fromkeys(s for t in tasks for s in t.sentences()))
    matrix = EmbeddingCache(default_cache_dir()).encode(get_encoder(args.encoder), sentences)
    vectors = dict(zip(sentences, matrix, strict=True))
    cases = {"logreg": [], "mdl": [], "control": []}
    for task in tasks:
        control = control_task(task)
        chosen = _chosen_config(task, vectors)  # what the runner gives the control's probe
        best = {name: float("inf") for name in cases}
        for _ in range(args.repeats):
            best["logreg"] = min(best["logreg"], _fit_seconds("logreg", task, vectors))
            best["mdl"] = min(best["mdl"], _fit_seconds("mdl", task, vectors))
            best["control"] = min(best["control"], _fit_seconds("logreg", control, vectors, chosen))
        for name in cases:
            cases[name].append(best[name])
        print(task.name, " ".join(f"{n}={best[n]:.2f}s" for n in cases), flush=True)
    base = sum(cases["logreg"])
    for name, times in cases.items():
        print(f"{name:<8} {sum(times):7.2f} s  x{sum(times) / base:.2f} of logreg")


if __name__ == "__main__":
    main()
