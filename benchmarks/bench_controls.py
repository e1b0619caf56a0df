"""Cost of MDL probing and of control tasks on sample-en (run by hand; figures go to
docs/benchmarks.md).

    SENTPROBE_CACHE=/tmp/me/cache HF_HUB_OFFLINE=1 python benchmarks/bench_controls.py \
        [-e minilm] [--repeats 2]

Encodes sample-en once (into the cache), then, alternating so background load hits all alike,
probes the cached vectors with: ``logreg`` (the default probe), ``mdl`` (``logreg`` plus the
online code) and ``logreg`` with ``--controls`` (the tasks and their control tasks), each into
a fresh results store, baselines off. Reports the summed probe seconds of the ten tasks (what
the runner records per unit: encoding excluded) and the best of ``--repeats`` runs of each.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from sentprobe import run
from sentprobe.datasets.controls import is_control


def _probe_seconds(encoder: str, tmp: Path, name: str, **kw) -> tuple[float, float, float]:
    """(probe seconds of the tasks, of the control tasks, wall seconds of the run)."""
    start = time.perf_counter()
    frame = run([encoder], "sample-en", baselines="none", results=tmp / f"{name}.sqlite", **kw)
    wall = time.perf_counter() - start
    control = frame["task"].map(is_control)
    return (
        float(frame.loc[~control, "probe_seconds"].sum()),
        float(frame.loc[control, "probe_seconds"].sum()),
        wall,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-e", "--encoder", default="minilm")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    run([args.encoder], "sample-en", baselines="none", progress=False,
        results=Path(tempfile.mkdtemp()) / "warm.sqlite")  # fmt: skip  # encode once
    best: dict[str, tuple[float, float, float]] = {}
    for r in range(args.repeats):
        for name, kw in (
            ("logreg", {}),
            ("mdl", {"probe": "mdl"}),
            ("controls", {"controls": True}),
        ):
            tmp = Path(tempfile.mkdtemp())
            got = _probe_seconds(args.encoder, tmp, f"{name}{r}", progress=False, **kw)
            if name not in best or sum(got[:2]) < sum(best[name][:2]):
                best[name] = got
    base = best["logreg"][0]
    print(f"{'run':<10} {'tasks s':>8} {'controls s':>10} {'total/logreg':>12}")
    for name, (tasks, controls, _) in best.items():
        print(f"{name:<10} {tasks:8.2f} {controls:10.2f} {(tasks + controls) / base:12.2f}")


if __name__ == "__main__":
    main()
