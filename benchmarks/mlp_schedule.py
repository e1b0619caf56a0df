"""How often should ``MLPProbe`` check dev, and how patiently? (issue 25)

Trains ``MLPProbe()``'s 27-configuration grid on a benchmark task for a fixed number of
epochs with no early stopping, recording every configuration's dev and test accuracy after
each epoch, then replays stopping rules on those curves: a check every ``E`` epochs, a
configuration stopping after ``P`` checks without a strict dev improvement, at most ``M``
checks. For each rule it prints the training cost (epochs of the whole grid, a configuration
weighted by its hidden size, since the wide first layer is the cost) and the test accuracy of
the configuration the rule selects on dev. The grid's arithmetic is ``MLPProbe``'s own
(``_StackedMLP``); only stopping is replayed, so all rules are compared on the same
trajectories. Build the data first with ``python benchmarks/data.py``. Usage::

    python benchmarks/mlp_schedule.py --tasks BShift,SentLen,FirstWord --epochs 80
        [--batch-size 256] [--lr 2e-3] [--out benchmarks/results/mlp_schedule.json]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch
from data import DEFAULT_WORKDIR, load_task
from results_io import write_result

from sentprobe.probes._common import Standardizer, check_xy, encode_labels
from sentprobe.probes.mlp import MLPProbe, _StackedMLP

RULES = [(4, 3, 30), (2, 3, 30), (1, 3, 30), (1, 4, 100), (1, 5, 100)]  # (every, patience, max)


def curves(d: dict[str, np.ndarray], epochs: int, batch: int, lr: float) -> dict:
    """Dev and test accuracy of every configuration after every epoch (seed 0 streams)."""
    Xt, y = check_xy(d["X_train"], d["y_train"])
    classes = np.unique(y)
    scale = Standardizer(Xt)
    X, y = scale(Xt), encode_labels(y, classes)
    split = {s: (scale(check_xy(d[f"X_{s}"])[0]), encode_labels(d[f"y_{s}"], classes))
             for s in ("dev", "test")}  # fmt: skip
    configs = MLPProbe()._configs()
    init, order_seed, drop_seed = np.random.SeedSequence(0).generate_state(3)
    net = _StackedMLP(X.shape[1], len(classes), configs, int(init))
    order_gen = torch.Generator().manual_seed(int(order_seed))
    drop = torch.Generator().manual_seed(int(drop_seed))
    dev, test, start = [], [], time.perf_counter()
    for _ in range(epochs):
        order = torch.randperm(len(X), generator=order_gen)
        for i in range(0, len(X), batch):
            net.adam_step(X[order[i : i + batch]], y[order[i : i + batch]], lr, drop)
        dev.append([round(a, 5) for a in net.accuracy(*split["dev"]).tolist()])
        test.append([round(a, 5) for a in net.accuracy(*split["test"]).tolist()])
    hid = [configs[i]["nhid"] for i in net.ids]
    return {"hid": hid, "dev": dev, "test": test, "seconds": time.perf_counter() - start,
            "configs": [configs[i] for i in net.ids]}  # fmt: skip


def replay(curve: dict, every: int, patience: int, most: int) -> tuple[float, float]:
    """(grid epochs trained, test % of the dev-selected configuration) under one rule."""
    dev, test, hid = np.array(curve["dev"]), np.array(curve["test"]), np.array(curve["hid"])
    stops, bests = [], []
    for j in range(dev.shape[1]):
        best, stale, at, e = -1.0, 0, 0, 0
        for check in range(1, most + 1):
            e = min(check * every, len(dev)) - 1
            if dev[e, j] > best:
                best, at, stale = dev[e, j], e, 0
            else:
                stale += 1
            if stale >= patience or e == len(dev) - 1:
                break
        stops.append(e)
        bests.append(at)
    stops_a = np.array(stops)
    cost = sum(hid[stops_a >= e].sum() for e in range(len(dev))) / hid.sum()
    chosen = int(np.argmax([dev[b, j] for j, b in enumerate(bests)]))
    return float(cost), float(test[bests[chosen], chosen] * 100)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default="BShift,SentLen,FirstWord")
    ap.add_argument("--epochs", type=int, default=80)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--workdir", default=str(DEFAULT_WORKDIR))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    torch.set_num_threads(2)
    runs = {}
    for task in args.tasks.split(","):
        runs[task] = curves(load_task(Path(args.workdir), task), args.epochs, args.batch_size,
                            args.lr)  # fmt: skip
        print(f"{task}: {args.epochs} epochs in {runs[task]['seconds']:.1f} s", flush=True)
    rules = []
    for every, patience, most in RULES:
        per = {t: replay(c, every, patience, most) for t, c in runs.items()}
        cost = sum(c for c, _ in per.values())
        mean = float(np.mean([a for _, a in per.values()]))
        tests = " / ".join(f"{a:.2f}" for _, a in per.values())
        print(f"every {every} epoch(s), patience {patience}, at most {most} checks: "
              f"{cost:.1f} grid epochs, test {tests} (mean {mean:.2f})")  # fmt: skip
        rules.append({"every": every, "patience": patience, "max_checks": most,
                      "grid_epochs": cost, "tests": per})  # fmt: skip
    if args.out:
        write_result(Path(args.out), {"argv": vars(args), "rules": rules, "curves": runs})


if __name__ == "__main__":
    main()
