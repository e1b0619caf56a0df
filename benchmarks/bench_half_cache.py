"""What a half-precision embedding cache (``--cache-dtype float16|bfloat16``) does to probe
accuracy: each task's cached float32 vectors rounded as the half cache stores them
(``sentprobe.encoders.cache.to_store`` / ``from_store``: the exact values a run with that
cache probes), then probed by ``logreg`` and ``ridge`` as ``sentprobe run`` does (train, L2
chosen on dev, test scored). Usage (repository root)::

    HF_HUB_OFFLINE=1 python benchmarks/bench_half_cache.py [--tasks sample-en]
        [--cache-dir DIR] [--probes logreg,ridge] [--out benchmarks/results/half_cache.json]

The encoder is ``-e minilm``; its float32 vectors come from (or go to) the cache.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from results_io import write_result  # noqa: E402

from sentprobe.datasets import resolve_tasks  # noqa: E402
from sentprobe.encoders import get_encoder  # noqa: E402
from sentprobe.encoders.cache import EmbeddingCache, from_store, to_store  # noqa: E402
from sentprobe.evaluation.runner import default_cache_dir  # noqa: E402
from sentprobe.probes import make_probe  # noqa: E402

DTYPES = ("float32", "float16", "bfloat16")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default="sample-en")
    ap.add_argument("--cache-dir", type=Path, default=None)
    ap.add_argument("--probes", default="logreg,ridge")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "half_cache.json")
    args = ap.parse_args(argv)
    enc = get_encoder("minilm")
    cache = EmbeddingCache(args.cache_dir or default_cache_dir())
    rows = []
    for task in resolve_tasks(args.tasks):
        name = task.metadata.paper_name or task.name
        sp = task.splits
        X32 = {k: cache.encode(enc, sp[k].sentences, progress=False) for k in sp}
        for dtype in DTYPES:
            X = {k: from_store(to_store(v, dtype), dtype) for k, v in X32.items()}
            for probe in args.probes.split(","):
                est = make_probe(probe, name)
                est.fit(X["train"], sp["train"].labels, X["dev"], sp["dev"].labels)
                test = float((est.predict(X["test"]) == np.asarray(sp["test"].labels)).mean())
                rows.append({"task": name, "dtype": dtype, "probe": probe, "test": test,
                             "dev": float(est.best_score_)})  # fmt: skip
                print(f"{name:10s} {dtype:9s} {probe:7s} test {100 * test:5.1f}")
    for probe in args.probes.split(","):
        for dtype in DTYPES:
            mine = [r for r in rows if r["probe"] == probe and r["dtype"] == dtype]
            base = [r for r in rows if r["probe"] == probe and r["dtype"] == "float32"]
            gaps = [100 * (a["test"] - b["test"]) for a, b in zip(mine, base)]
            print(f"{probe:7s} {dtype:9s} largest |test change| {max(map(abs, gaps)):.1f} points")
    return write_result(args.out, {"encoder": "minilm", "rows": rows})


if __name__ == "__main__":
    raise SystemExit(main())
