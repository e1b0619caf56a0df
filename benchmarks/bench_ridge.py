"""The closed-form ridge probe against the logistic probe: fit time of every view of a
``--layer all`` encoder (each view alone, and all views in one batched solve from summed
statistics) against one logistic fit of one view, per task, with both probes' dev and test
accuracy on every view.

The vectors come from (or go to) the embedding cache. Times are the best of ``--repeats``
runs, in wall seconds and in this process's CPU seconds (less sensitive to other processes
on a shared machine). Usage (repository root)::

    HF_HUB_OFFLINE=1 python benchmarks/bench_ridge.py [--model DIR] [--tasks sample-en]
        [--cache-dir DIR] [--repeats 2] [--probe-device cpu|cuda]
        [--out benchmarks/results/ridge.json]

``--model``: a Hugging Face model directory (default: the bundled all-MiniLM-L6-v2, as
``-e minilm``), read with ``layer="all", pooling="mean"``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from results_io import write_result  # noqa: E402

from sentprobe.datasets import resolve_tasks  # noqa: E402
from sentprobe.encoders.cache import EmbeddingCache  # noqa: E402
from sentprobe.encoders.hf import HFEncoder  # noqa: E402
from sentprobe.evaluation.runner import default_cache_dir  # noqa: E402
from sentprobe.probes import LogisticProbe, RidgeProbe, RidgeStats  # noqa: E402


def timed(fn, repeats):
    best_wall, best_cpu, out = float("inf"), float("inf"), None
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        best_wall = min(best_wall, time.perf_counter() - w)
        best_cpu = min(best_cpu, time.process_time() - c)
    return out, best_wall, best_cpu


def one_task(task, enc, cache, repeats: int, rows: list, device: str = "cpu") -> None:
    sp = task.splits
    sents = list(dict.fromkeys(task.sentences()))
    vec = cache.vectors(enc, sents, progress=False)
    index = {s: i for i, s in enumerate(sents)}
    V = len(enc.views)

    def rows_of(split, v):
        return vec.take(np.array([index[s] for s in sp[split].sentences]), v)

    X = {k: np.stack([rows_of(k, v) for v in range(V)], 1) for k in ("train", "dev", "test")}
    ytr, ydv, yte = (sp[k].labels for k in ("train", "dev", "test"))

    def each_view():
        return [
            RidgeProbe(device=device).fit(X["train"][:, v], ytr, X["dev"][:, v], ydv)
            for v in range(V)
        ]

    def batched():
        stats = RidgeStats(np.unique(ytr), views=V, device=device).update(X["train"], ytr)
        return RidgeProbe.fit_views(stats, X["dev"], ydv, device=device)

    ridges, r_wall, r_cpu = timed(each_view, repeats)
    _, b_wall, b_cpu = timed(batched, repeats)
    logregs = []
    lr_wall, lr_cpu = [], []
    for v in range(V):
        est, w, c = timed(
            lambda v=v: LogisticProbe(device=device).fit(
                X["train"][:, v], ytr, X["dev"][:, v], ydv
            ),
            1,
        )
        logregs.append(est)
        lr_wall.append(w)
        lr_cpu.append(c)
    row = {
        "task": task.metadata.paper_name or task.name,
        "n_train": len(ytr),
        "views": V,
        "ridge_all_views_wall": r_wall,
        "ridge_all_views_cpu": r_cpu,
        "ridge_batched_wall": b_wall,
        "ridge_batched_cpu": b_cpu,
        "logreg_one_view_wall_median": float(np.median(lr_wall)),
        "logreg_one_view_cpu_median": float(np.median(lr_cpu)),
        "ridge_test": [
            float((r.predict(X["test"][:, v]) == np.asarray(yte)).mean())
            for v, r in enumerate(ridges)
        ],
        "logreg_test": [
            float((m.predict(X["test"][:, v]) == np.asarray(yte)).mean())
            for v, m in enumerate(logregs)
        ],
    }
    rows.append(row)
    gap = max(abs(a - b) for a, b in zip(row["ridge_test"], row["logreg_test"]))
    print(
        f"{row['task']:10s} ridge x{V} views {r_cpu:6.2f} cpu-s (batched {b_cpu:6.2f})"
        f"  logreg 1 view {row['logreg_one_view_cpu_median']:6.2f} cpu-s"
        f"  largest test gap over views {100 * gap:4.1f} points"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--tasks", default="sample-en")
    ap.add_argument("--cache-dir", type=Path, default=None)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--probe-device", default="cpu")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "ridge.json")
    args = ap.parse_args(argv)
    if args.model is None:
        from sentprobe.encoders.sbert import minilm_path

        args.model = str(minilm_path())
    enc = HFEncoder(args.model, layer="all", pooling="mean")
    cache = EmbeddingCache(args.cache_dir or default_cache_dir())
    rows = []
    for task in resolve_tasks(args.tasks):
        one_task(task, enc, cache, args.repeats, rows, args.probe_device)
    return write_result(args.out, {"model": args.model, "tasks": rows})


if __name__ == "__main__":
    raise SystemExit(main())
