"""Speed-up of the Ray executor from 1 to 2 local worker processes (docs/scaling.md).

One grid, ``--encoders`` x the ``--tasks`` suite with the default logistic probe and the
majority baseline, run four ways into fresh results stores, all on one warm embedding cache
(filled by an untimed first run, so the timings are probing, not encoding):

- ``local``: the default executor, one process, torch on 2 threads;
- ``ray, 1 CPU``: ``ray.init(num_cpus=1)``: one worker process at a time, 1 thread per job;
- ``ray, 2 CPUs``: ``ray.init(num_cpus=2)``: two worker processes at once, 1 thread each;
- ``local, 1 thread``: the default executor with ``SENTPROBE_NUM_THREADS=1``, the baseline the
  Ray jobs' single thread is measured against.

With ``--cold`` there is no warm-up and each configuration starts from an empty cache of its
own, so the timings include encoding: the Ray runs' encoding jobs (one per node, with all of
its CPUs) against the local executor's. Ray's start-up (``ray.init``) is timed separately and
not in the run times. Every run's scores are checked equal to the local run's. Usage::

    flock /tmp/sentprobe-heavy.lock python benchmarks/bench_ray.py
        [--encoders bov-glove,minilm] [--tasks sample-en] [--cache-dir DIR] [--cold]
        [--out benchmarks/results/ray.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from results_io import write_result

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _timed_run(
    encoders: list[str], tasks: str, work: Path, cache: Path, name: str, executor: str
) -> dict:
    from sentprobe.evaluation.runner import run

    start = time.perf_counter()
    frame = run(
        encoders,
        tasks,
        baselines="majority",
        results=work / f"{name}.sqlite",
        cache_dir=cache,
        executor=executor,
        progress=False,
    )
    seconds = time.perf_counter() - start
    scores = dict(zip(frame["key"], frame["test_score"], strict=True))
    return {"seconds": round(seconds, 2), "units": len(frame), "scores": scores}


def child(args: argparse.Namespace) -> int:
    """One configuration in a process of its own (Ray and torch threads set up from scratch)."""
    import ray

    work = Path(args.workdir)
    encoders = args.encoders.split(",")
    ray_seconds = 0.0
    if args.cpus:
        start = time.perf_counter()
        ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
        ray_seconds = time.perf_counter() - start
    cache = Path(args.cache_dir) if args.cache_dir else work / "cache"
    executor = "ray" if args.cpus else "local"
    result = _timed_run(encoders, args.tasks, work, cache, args.name, executor)
    result["ray_init_seconds"] = round(ray_seconds, 2)
    if args.cpus:
        ray.shutdown()
    Path(args.child_out).write_text(json.dumps(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoders", default="bov-glove,minilm")
    ap.add_argument("--tasks", default="sample-en", help="suite, or task files, comma-separated")
    ap.add_argument("--cache-dir", help="embedding cache to use (default: a fresh one)")
    ap.add_argument("--cold", action="store_true", help="each run from an empty cache")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "ray.json")
    ap.add_argument("--workdir", help=argparse.SUPPRESS)
    ap.add_argument("--name", help=argparse.SUPPRESS)
    ap.add_argument("--cpus", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--child-out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child_out:
        return child(args)

    configs = [  # (name, Ray CPUs or 0 for the local executor, torch threads or None)
        *([] if args.cold else [("warm-up (fills the cache)", 0, None)]),
        ("local", 0, None),
        ("ray, 1 CPU", 1, None),
        ("ray, 2 CPUs", 2, None),
        ("local, 1 thread", 0, "1"),
    ]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for i, (name, cpus, threads) in enumerate(configs):
            out = work / f"child{i}.json"
            env = {**os.environ}
            if threads:
                env["SENTPROBE_NUM_THREADS"] = threads
            cmd = [sys.executable, __file__, "--encoders", args.encoders, "--tasks", args.tasks,
                   "--workdir", str(work), "--name", f"run{i}", "--cpus", str(cpus),
                   "--child-out", str(out)]  # fmt: skip
            if args.cold:
                cmd += ["--cache-dir", str(work / f"cache{i}")]
            elif args.cache_dir:
                cmd += ["--cache-dir", args.cache_dir]
            load = os.getloadavg()[0]
            subprocess.run(cmd, check=True, env=env)
            result = json.loads(out.read_text())
            result.update(name=name, load_before=load, load_after=os.getloadavg()[0])
            rows.append(result)
            print(
                f"{name:<28} {result['seconds']:7.1f}s  {result['units']} units  "
                f"ray.init {result['ray_init_seconds']:.1f}s  load {load:.1f}",
                flush=True,
            )
    reference = next(r for r in rows if r["name"] == "local")["scores"]
    for row in rows:
        scores = row.pop("scores")
        assert row["name"].startswith("warm-up") or scores == reference, (
            f"{row['name']}: scores differ from local"
        )
    by_name = {r["name"]: r["seconds"] for r in rows}
    speedup = by_name["ray, 1 CPU"] / by_name["ray, 2 CPUs"]
    print(f"speed-up from 1 to 2 Ray worker processes: {speedup:.2f}x")
    result = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "encoders": args.encoders,
        "tasks": args.tasks,
        "cold": args.cold,
        "rows": rows,
        "speedup_1_to_2_workers": round(speedup, 2),
    }
    return write_result(args.out, result)


if __name__ == "__main__":
    sys.exit(main())
