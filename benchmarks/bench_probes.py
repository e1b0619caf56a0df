"""Time and score sentprobe's probes against scikit-learn on cached MiniLM embeddings.

Part 1, the 9-task suite (8k/2k/10k): sentprobe ``LogisticProbe()`` (default L2 grid, every
strength trained to convergence, dev selection) vs scikit-learn ``LogisticRegression``
(lbfgs, default max_iter/tol, C in 2**-2..2**3 chosen on dev, refit with that C on train,
test scored once) on the raw embeddings; ``--scaled`` adds StandardScaler + the same sklearn
search, and StandardScaler + a ``warm_start`` C path without refit (scikit-learn's best
configuration), as extra rows.
Part 2, the 100k-train SentLen task: ``MLPProbe()`` (27 configurations) and
``LogisticProbe()``.

Everything runs in this one process on 2 threads (torch and, via threadpoolctl, BLAS/OpenMP).
Build the data first with ``python benchmarks/data.py``. Usage (repository root)::

    HF_HUB_OFFLINE=1 python benchmarks/bench_probes.py [--workdir benchmarks/.work]
        [--out benchmarks/results/probes.json] [--scaled] [--tasks WC,SentLen] [--skip-mlp]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "2")

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
import torch  # noqa: E402
from bench_encoding import timed  # noqa: E402
from data import BIG_TASK, DEFAULT_WORKDIR, SUITE_TASKS, load_task  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from threadpoolctl import threadpool_info, threadpool_limits  # noqa: E402

import sentprobe.probes.linear as sp_linear  # noqa: E402
import sentprobe.probes.mlp as sp_mlp  # noqa: E402
from sentprobe.probes import LogisticProbe, MLPProbe  # noqa: E402

THREADS = 2
SKLEARN_CS = [2.0**k for k in range(-2, 4)]
MLP_LIMIT_S = 600.0


# -- instrumentation: where sentprobe's time goes (wrappers only; sentprobe is not modified) --
class Counters:
    """Calls and seconds per instrumented function."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = defaultdict(int)
        self.seconds: dict[str, float] = defaultdict(float)
        self.flops = 0.0

    def wrap(self, name: str, fn: Callable) -> Callable:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - t
                self.calls[name] += 1

        return wrapped

    def report(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {
            k: {"calls": self.calls[k], "seconds": round(self.seconds[k], 3)} for k in self.calls
        }
        if self.flops:  # the two matrix products of the logistic loss+grad
            out["logreg loss+grad"]["gflop"] = round(self.flops / 1e9, 1)
        return out


def _matmul_flops(stacked: Any, _w: Any, idx: Any) -> float:
    """Flops of one ``_Stacked`` call's products: logits (n x p by p x gK) and gradient
    (p x n by n x gK), 2 flops per multiply-add; the softmax's elementwise work not counted."""
    n, p = stacked.Xa.shape
    return 2 * 2.0 * n * p * stacked.K * len(idx)


def sgemm_gflops(m: int, k: int, n: int, repeats: int = 5) -> float:
    """Best-of-``repeats`` float32 GFLOP/s of an (m x k) @ (k x n) product on this process's
    threads: the machine's measured peak for that shape."""
    a, b = torch.randn(m, k), torch.randn(k, n)
    a @ b  # warm-up
    best, _ = timed(lambda: a @ b, repeats)
    return 2.0 * m * k * n / best / 1e9


@contextlib.contextmanager
def instrumented() -> Iterator[Counters]:
    """Count and time LogisticProbe's loss/gradient and dev checks, MLPProbe's steps/checks."""
    c = Counters()
    saved = [
        (sp_linear._Stacked, "__call__", sp_linear._Stacked.__call__),
        (sp_linear, "_accuracy", sp_linear._accuracy),
        (sp_mlp._StackedMLP, "adam_step", sp_mlp._StackedMLP.adam_step),
        (sp_mlp._StackedMLP, "accuracy", sp_mlp._StackedMLP.accuracy),
        (sp_mlp._StackedMLP, "keep", sp_mlp._StackedMLP.keep),
    ]
    names = ["logreg loss+grad", "logreg dev check", "mlp adam step", "mlp dev check", "mlp keep"]
    for (owner, attr, fn), name in zip(saved, names, strict=True):
        setattr(owner, attr, c.wrap(name, fn))
    loss_grad = sp_linear._Stacked.__call__

    def counted(*args: Any) -> Any:
        c.flops += _matmul_flops(*args)
        return loss_grad(*args)

    sp_linear._Stacked.__call__ = counted
    try:
        yield c
    finally:
        for owner, attr, fn in saved:
            setattr(owner, attr, fn)


# -- the contenders ----------------------------------------------------------------------------
def accuracy(pred: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(pred == y))


def run_sentprobe(d: dict[str, np.ndarray], probe: Any) -> dict[str, Any]:
    """Fit with dev selection, score test once; time covers both."""
    with instrumented() as counters:
        t = time.perf_counter()
        probe.fit(d["X_train"], d["y_train"], d["X_dev"], d["y_dev"])
        fit_s = time.perf_counter() - t
        test = accuracy(probe.predict(d["X_test"]), d["y_test"])
        total = time.perf_counter() - t
    return {
        "seconds": round(total, 3),
        "fit_seconds": round(fit_s, 3),
        "dev": round(float(probe.best_score_), 5),
        "test": round(test, 5),
        "best_params": {k: float(v) for k, v in probe.best_params_.items()},
        "n_iter": int(probe.n_iter_),
        "grid_dev": [round(float(s), 5) for _, s in probe.grid_scores_],
        "profile": counters.report(),
    }


def run_sklearn_warm(d: dict[str, np.ndarray]) -> dict[str, Any]:
    """scikit-learn's best configuration: StandardScaler, then one ``warm_start``
    LogisticRegression walked along the C grid from strong to weak regularisation (each fit
    starts from the last solution); the model of the best dev C is kept (no refit) and
    scores test once."""
    t = time.perf_counter()
    scaler = StandardScaler().fit(d["X_train"])
    X_train, X_dev, X_test = (scaler.transform(d[k]) for k in ("X_train", "X_dev", "X_test"))
    clf = LogisticRegression(warm_start=True)
    best: tuple[float, float, np.ndarray] | None = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for C in SKLEARN_CS:  # increasing C: strong to weak regularisation
            clf.set_params(C=C).fit(X_train, d["y_train"])
            dev = accuracy(clf.predict(X_dev), d["y_dev"])
            if best is None or dev > best[1]:
                best = (C, dev, clf.predict(X_test))
    assert best is not None
    return {
        "seconds": round(time.perf_counter() - t, 3),
        "dev": round(best[1], 5),
        "test": round(accuracy(best[2], d["y_test"]), 5),
        "C": best[0],
    }


def run_sklearn(d: dict[str, np.ndarray], scaled: bool = False) -> dict[str, Any]:
    """C on dev accuracy, refit on train with the chosen C, test scored once."""
    t = time.perf_counter()
    X_train, X_dev, X_test = d["X_train"], d["X_dev"], d["X_test"]
    if scaled:
        scaler = StandardScaler().fit(X_train)
        X_train, X_dev, X_test = (scaler.transform(x) for x in (X_train, X_dev, X_test))
    grid, fit_times, warned = [], [], 0
    for C in SKLEARN_CS:
        t_fit = time.perf_counter()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always", ConvergenceWarning)
            clf = LogisticRegression(C=C).fit(X_train, d["y_train"])
        fit_times.append(time.perf_counter() - t_fit)
        warned += sum(issubclass(x.category, ConvergenceWarning) for x in w)
        grid.append((C, accuracy(clf.predict(X_dev), d["y_dev"]), int(np.max(clf.n_iter_))))
    search_s = time.perf_counter() - t
    best = max(range(len(grid)), key=lambda i: grid[i][1])  # first best on ties
    C = grid[best][0]
    t_refit = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = LogisticRegression(C=C).fit(X_train, d["y_train"])
    refit_s = time.perf_counter() - t_refit
    test = accuracy(clf.predict(X_test), d["y_test"])
    total = time.perf_counter() - t
    return {
        "seconds": round(total, 3),
        "seconds_without_refit": round(total - refit_s, 3),
        "search_seconds": round(search_s, 3),
        "refit_seconds": round(refit_s, 3),
        "dev": round(grid[best][1], 5),
        "test": round(test, 5),
        "C": C,
        "grid": [
            {"C": c, "dev": round(a, 5), "n_iter": n, "seconds": round(s, 3)}
            for (c, a, n), s in zip(grid, fit_times, strict=True)
        ],
        "convergence_warnings": warned,
    }


# -- reporting -------------------------------------------------------------------------------------
def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    cpu = "?"
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        cpu = next(
            (ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name")),
            "?",
        )
    return {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)),
        "cpu": cpu,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "sklearn": sklearn.__version__,
        "numpy": np.__version__,
        "torch_threads": torch.get_num_threads(),
        "blas": [
            {k: i.get(k) for k in ("internal_api", "num_threads", "version")}
            for i in threadpool_info()
        ],
        "loadavg_start": os.getloadavg(),
    }


def pct(x: float) -> str:
    return f"{100 * x:.2f}"


def suite_report(rows: list[dict[str, Any]], scaled: bool) -> dict[str, Any]:
    """Totals, means and the acceptance criteria; prints a table."""
    kinds = ["sentprobe", "sklearn"] + (["sklearn_scaled", "sklearn_warm"] if scaled else [])
    head = (
        f"{'task':<10}{'K':>5} | {'sentprobe dev/test':>19} {'s':>7} | "
        f"{'sklearn dev/test':>17} {'s':>7} {'C':>5} | {'diff':>6}"
    )
    if scaled:
        head += f" | {'scaled dev/test':>16} {'s':>7}"
    print(head)
    for r in rows:
        sp, sk = r["sentprobe"], r["sklearn"]
        line = (
            f"{r['task']:<10}{r['classes']:>5} | {pct(sp['dev']):>9}/{pct(sp['test']):<9} "
            f"{sp['seconds']:>7.2f} | {pct(sk['dev']):>8}/{pct(sk['test']):<8} "
            f"{sk['seconds']:>7.2f} {sk['C']:>5g} | {100 * (sp['test'] - sk['test']):>+6.2f}"
        )
        if scaled:
            sc = r["sklearn_scaled"]
            line += f" | {pct(sc['dev']):>7}/{pct(sc['test']):<8} {sc['seconds']:>7.2f}"
        print(line)
    total = {k: round(sum(r[k]["seconds"] for r in rows), 2) for k in kinds}
    mean = {k: round(float(np.mean([r[k]["test"] for r in rows])), 5) for k in kinds}
    no_refit = round(sum(r["sklearn"]["seconds_without_refit"] for r in rows), 2)
    worst = min(rows, key=lambda r: r["sentprobe"]["test"] - r["sklearn"]["test"])
    worst_gap = 100 * (worst["sentprobe"]["test"] - worst["sklearn"]["test"])
    criteria = {
        "time: sentprobe <= sklearn / 10": total["sentprobe"] <= total["sklearn"] / 10,
        "accuracy: mean test >= sklearn - 0.3 points": 100 * mean["sentprobe"]
        >= 100 * mean["sklearn"] - 0.3,
        "accuracy: no task more than 1.5 points below sklearn": worst_gap >= -1.5,
    }
    print(f"total seconds: {total}  (sklearn without the refit: {no_refit})")
    for kind in kinds[1:]:
        print(f"time ratio {kind}/sentprobe: {total[kind] / total['sentprobe']:.2f}x")
    print(f"mean test accuracy: { {k: pct(v) for k, v in mean.items()} }")
    print(f"worst task: {worst['task']} ({worst_gap:+.2f} points)")
    for name, ok in criteria.items():
        print(f"  [{'PASS' if ok else 'FAIL'}] {name}")
    return {
        "total_seconds": total,
        "sklearn_seconds_without_refit": no_refit,
        "time_ratio_sklearn_over_sentprobe": round(total["sklearn"] / total["sentprobe"], 3),
        "time_ratios_over_sentprobe": {
            k: round(total[k] / total["sentprobe"], 3) for k in kinds[1:]
        },
        "mean_test": mean,
        "worst_task": {"task": worst["task"], "points": round(worst_gap, 2)},
        "criteria": criteria,
    }


def wc_flop_report(rows: list[dict[str, Any]], d: dict[str, np.ndarray]) -> dict[str, Any]:
    """WC's loss/gradient evaluations, their matrix-product rate, and this machine's float32
    matrix-product peak at the same shapes and at a square 2048 product (issue 25)."""
    row = next(r for r in rows if r["task"] == "WC")
    prof = row["sentprobe"]["profile"]["logreg loss+grad"]
    n, p, k = len(d["y_train"]), d["X_train"].shape[1] + 1, row["classes"]
    peaks = {
        "logits n x p @ p x K": sgemm_gflops(n, p, k),
        "gradient p x n @ n x K": sgemm_gflops(p, n, k),
        "square 2048": sgemm_gflops(2048, 2048, 2048),
    }
    rate = prof["gflop"] / prof["seconds"]
    out = {
        "evaluations": prof["calls"],
        "gflop": prof["gflop"],
        "seconds": prof["seconds"],
        "gflop_per_s": round(rate, 1),
        "sgemm_peak_gflop_per_s": {k: round(v, 1) for k, v in peaks.items()},
        "fraction_of_peak": round(rate / max(peaks.values()), 3),
        "wc_seconds": row["sentprobe"]["seconds"],
    }
    print(
        f"WC: {out['evaluations']} loss/gradient evaluations, {out['gflop']} GFLOP of matrix "
        f"products in {out['seconds']} s = {out['gflop_per_s']} GFLOP/s; float32 sgemm peak "
        f"{out['sgemm_peak_gflop_per_s']} GFLOP/s: {100 * out['fraction_of_peak']:.0f}% of it",
        flush=True,
    )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "results" / "probes.json"
    )
    ap.add_argument("--tasks", help="comma-separated subset of the suite (default: all 9)")
    ap.add_argument("--scaled", action="store_true", help="add StandardScaler + sklearn")
    ap.add_argument("--skip-suite", action="store_true")
    ap.add_argument("--skip-mlp", action="store_true")
    args = ap.parse_args(argv)

    threadpool_limits(limits=THREADS)
    torch.set_num_threads(THREADS)
    result: dict[str, Any] = {"machine": machine()}
    print(json.dumps(result["machine"]), flush=True)

    # Warm up both libraries (first-call allocations, thread pools) outside the timings.
    rng = np.random.default_rng(0)
    Xw, yw = rng.normal(size=(200, 384)).astype(np.float32), rng.integers(0, 3, 200)
    LogisticProbe().fit(Xw, yw, Xw, yw)
    LogisticRegression().fit(Xw, yw)

    if not args.skip_suite:
        tasks = args.tasks.split(",") if args.tasks else SUITE_TASKS
        rows = []
        for name in tasks:
            d = load_task(args.workdir, name)
            row: dict[str, Any] = {
                "task": name,
                "classes": len(np.unique(d["y_train"])),
                "sizes": {s: len(d[f"y_{s}"]) for s in ("train", "dev", "test")},
            }
            row["sentprobe"] = run_sentprobe(d, LogisticProbe())
            row["sklearn"] = run_sklearn(d)
            if args.scaled:
                row["sklearn_scaled"] = run_sklearn(d, scaled=True)
                row["sklearn_warm"] = run_sklearn_warm(d)
            rows.append(row)
            sp, sk = row["sentprobe"], row["sklearn"]
            print(
                f"{name}: sentprobe {pct(sp['test'])} in {sp['seconds']:.2f}s "
                f"(l2={sp['best_params']['l2']:g}, {sp['n_iter']} it, profile {sp['profile']}); "
                f"sklearn {pct(sk['test'])} in {sk['seconds']:.2f}s (C={sk['C']:g}, "
                f"{sk['convergence_warnings']} convergence warnings)",
                flush=True,
            )
        result["suite"] = {"tasks": rows, "summary": suite_report(rows, args.scaled)}
        if "WC" in tasks:
            result["suite"]["wc_flops"] = wc_flop_report(rows, load_task(args.workdir, "WC"))

    if not args.skip_mlp:
        d = load_task(args.workdir, BIG_TASK)
        big: dict[str, Any] = {
            "task": BIG_TASK,
            "classes": len(np.unique(d["y_train"])),
            "sizes": {s: len(d[f"y_{s}"]) for s in ("train", "dev", "test")},
        }
        print(f"{BIG_TASK}: {big['sizes']}, MLPProbe() ...", flush=True)
        mlp = run_sentprobe(d, MLPProbe())
        mlp["under_10_min"] = mlp["seconds"] < MLP_LIMIT_S
        big["mlp"] = mlp
        print(
            f"  MLPProbe: {mlp['seconds']:.1f}s, best {mlp['best_params']}, dev "
            f"{pct(mlp['dev'])}, test {pct(mlp['test'])}, chosen at check {mlp['n_iter']}, "
            f"profile {mlp['profile']}",
            flush=True,
        )
        big["logreg"] = lr = run_sentprobe(d, LogisticProbe())
        print(
            f"  LogisticProbe: {lr['seconds']:.1f}s, l2={lr['best_params']['l2']:g}, dev "
            f"{pct(lr['dev'])}, test {pct(lr['test'])}, profile {lr['profile']}",
            flush=True,
        )
        print(f"  [{'PASS' if mlp['under_10_min'] else 'FAIL'}] MLPProbe under 10 minutes")
        result["big"] = big

    result["machine"]["loadavg_end"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
