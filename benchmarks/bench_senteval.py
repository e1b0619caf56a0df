"""Time and score ``SentEvalProbe`` against SentEval's own classifier code (issue 15).

SentEval is not on PyPI and its licence keeps its code out of this repository, so the
benchmark takes the path of a user's checkout (``--senteval DIR``, the directory holding
``senteval/``). It loads ``senteval/utils.py``, ``senteval/tools/classifier.py`` and
``senteval/tools/validation.py`` by file path under a synthetic ``senteval`` package, so
``senteval/__init__.py`` (the whole engine and its task datasets) never runs.

SentEval was written for PyTorch 0.3/0.4 and CUDA; a shim, applied inside this process only,
makes its code run on CPU under a modern PyTorch without changing its arithmetic:

- ``.cuda()`` on modules and tensors returns them unchanged (SentEval calls it
  unconditionally; ``torch.cuda.manual_seed`` is already a no-op without CUDA);
- ``loss_fn.size_average = False`` takes effect: the loss is set to ``reduction="sum"``
  (summed cross-entropy, as SentEval behaved when it was written and as ``SentEvalProbe``
  does; PyTorch >= 1.0 ignores the attribute, which would silently turn SentEval's loss into
  a mean and change every learning rate by a factor of 64);
- ``Variable(..., volatile=True)`` has no effect today (PyTorch warns), so ``score`` and
  ``predict`` run under ``torch.no_grad()``, which is what ``volatile`` meant (no graph;
  this only makes SentEval faster);
- ``inspect.getargspec`` (removed in Python 3.11), used by ``utils.get_optimizer`` to check
  optimiser keywords, is given to that module as ``inspect.getfullargspec``.

Protocol, on the same data, as a SentEval user runs the paper's grid: for each
``(nhid, dropout)`` in (50, 100, 200) x (0, 0.1, 0.2), SentEval's ``SplitClassifier`` with the
configuration keys ``senteval/probing.py`` passes (``nclasses``, ``seed`` 1111,
``usepytorch``, ``classifier``: optim adam, batch_size 64, tenacity 5, epoch_size 4, plus nhid
and dropout) runs its own L2 grid (1e-5..1e-2), picks on dev, retrains and scores test; the
(nhid, dropout) with the best dev accuracy (first in grid order on ties) gives SentEval's
test accuracy. WC is trained as ``senteval/probing.py`` trains WordContent: logistic
regression (``nhid=0``) alone. sentprobe: ``SentEvalProbe()`` (the same 36 configurations,
or the 4 logistic ones for WC, dev selection, retrain) at seed 1111, fit + one test
prediction. Both are timed (wall clock) in this
process, one after the other per task, on 2 threads. Per configuration the dev accuracies of
both sides are recorded; ``SentEvalProbe``'s test accuracy over ``--seeds`` gives the seed
spread against which "same accuracy within seed noise" is judged (|SentEval - sentprobe at
the same seed| <= 2 standard deviations). ``--logistic`` adds SentEval's logistic
regression (``nhid=0``, 4 L2 values) against ``SentEvalProbe(nhid=0)``, an exactness check
without dropout. ``--mlp-probe`` adds sentprobe's fast ``MLPProbe()`` (its own 27-configuration
grid, not SentEval's classifier) on the same data, timed against SentEval's grid (issue 25).
Build the data first with ``python benchmarks/data.py``. Usage::

    python benchmarks/bench_senteval.py --senteval ~/src/SentEval [--tasks BShift,SentLen]
        [--logistic] [--mlp-probe] [--limit-train N] [--out benchmarks/results/senteval.json]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import inspect
import logging
import math
import os
import sys
import time
import types
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "2")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from bench_probes import machine  # noqa: E402
from data import DEFAULT_WORKDIR, load_task  # noqa: E402
from results_io import write_result  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import sentprobe.probes.senteval as sp_senteval  # noqa: E402
from sentprobe.probes import MLPProbe, SentEvalProbe  # noqa: E402
from sentprobe.probes.senteval import SENTEVAL_DROPOUT, SENTEVAL_L2, SENTEVAL_NHID  # noqa: E402

THREADS = 2
SEED = 1111  # SentEval's default seed (senteval/probing.py, engine params)
SENTEVAL_FILES = ("utils.py", "tools/classifier.py", "tools/validation.py")
#: ``params.classifier`` of SentEval's paper setting (README "config for probing tasks")
CLASSIFIER = {"optim": "adam", "batch_size": 64, "tenacity": 5, "epoch_size": 4}
#: minibatch steps, per configuration (SentEval: per MLP; sentprobe: grid steps x members)
STEPS: Counter[str] = Counter()
#: SentEval's probing.py trains WordContent with nhid=0 whatever the user's nhid (and
#: ``make_probe("senteval", "WC")`` does the same)
LOGISTIC_TASKS = {"WC"}


# -- SentEval, loaded from a checkout and shimmed for CPU ---------------------------------------
def _load(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    with warnings.catch_warnings():  # SentEval's "\d" regex literal: a SyntaxWarning today
        warnings.simplefilter("ignore")
        spec.loader.exec_module(module)
    return module


def load_senteval(root: Path) -> types.SimpleNamespace:
    """SentEval's utils, classifier and validation modules from the checkout at ``root``."""
    pkg_dir = root / "senteval"
    missing = [f for f in SENTEVAL_FILES if not (pkg_dir / f).is_file()]
    if missing:
        sys.exit(f"error: {root}: not a SentEval checkout (no senteval/{missing[0]})")
    package = types.ModuleType("senteval")
    package.__path__ = [str(pkg_dir)]
    tools = types.ModuleType("senteval.tools")
    tools.__path__ = [str(pkg_dir / "tools")]
    sys.modules["senteval"], sys.modules["senteval.tools"] = package, tools
    utils = _load("senteval.utils", pkg_dir / "utils.py")
    package.utils = utils  # type: ignore[attr-defined]  # ``from senteval import utils``
    classifier = _load("senteval.tools.classifier", pkg_dir / "tools/classifier.py")
    validation = _load("senteval.tools.validation", pkg_dir / "tools/validation.py")
    _shim(utils, classifier)
    return types.SimpleNamespace(utils=utils, classifier=classifier, validation=validation)


def _shim(utils: types.ModuleType, classifier: types.ModuleType) -> None:
    """The module-level part of the shim (see the module docstring); SentEval's copies only."""
    if not hasattr(inspect, "getargspec"):
        utils.inspect = types.SimpleNamespace(getargspec=inspect.getfullargspec)  # type: ignore[attr-defined]

    mlp_init = classifier.MLP.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        mlp_init(self, *args, **kwargs)
        if getattr(self.loss_fn, "size_average", None) is False:
            self.loss_fn.reduction = "sum"

    classifier.MLP.__init__ = init
    base = classifier.PyTorchClassifier
    trainepoch = base.trainepoch

    def counted(self: Any, X: Any, y: Any, epoch_size: int = 1) -> None:
        STEPS["senteval"] += epoch_size * math.ceil(len(X) / self.batch_size)
        trainepoch(self, X, y, epoch_size=epoch_size)

    base.trainepoch = counted  # instrumentation only: minibatch steps, for the profile
    for name in ("score", "predict"):
        setattr(base, name, _no_grad(getattr(base, name)))


def _no_grad(fn: Callable) -> Callable:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="volatile was removed")
            return fn(*args, **kwargs)

    return wrapped


@contextlib.contextmanager
def cpu_only() -> Iterator[None]:
    """``.cuda()`` returns its module or tensor unchanged, only while SentEval runs."""
    saved = [(cls, vars(cls).get("cuda")) for cls in (torch.nn.Module, torch.Tensor)]
    for cls, _ in saved:
        cls.cuda = lambda self, *a, **k: self  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        for cls, fn in saved:
            if fn is None:
                del cls.cuda
            else:
                cls.cuda = fn  # type: ignore[method-assign]


class LogCapture(logging.Handler):
    """SplitClassifier's per-L2 dev scores, which it only logs (as a list of pairs)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lists: list[list[tuple[str, float]]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.msg, list):
            self.lists.append(record.msg)


@contextlib.contextmanager
def captured_log() -> Iterator[LogCapture]:
    capture, root = LogCapture(), logging.getLogger()
    old_level = root.level
    root.addHandler(capture)
    root.setLevel(logging.INFO)
    try:
        yield capture
    finally:
        root.removeHandler(capture)
        root.setLevel(old_level)


def label_ids(classes: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Index in ``classes``; -1 (never predicted, so wrong) for a label unseen in train, as
    SentEvalProbe counts it (SentEval itself raises KeyError; only ``--limit-train`` can
    leave a dev/test label out of train on these tasks)."""
    pos = np.clip(np.searchsorted(classes, labels), 0, len(classes) - 1)
    return np.where(classes[pos] == labels, pos, -1)


def split_classifier(
    se: types.SimpleNamespace, d: dict[str, np.ndarray], seed: int, nhid: int, dropout: float
) -> dict[str, Any]:
    """One SentEval ``SplitClassifier`` run (its L2 grid, selection, retrain, test), timed."""
    classes = np.unique(d["y_train"])  # SentEval numbers the sorted train labels
    X = {"train": d["X_train"], "valid": d["X_dev"], "test": d["X_test"]}
    y = {k: label_ids(classes, d[f"y_{s}"]) for k, s in
         (("train", "train"), ("valid", "dev"), ("test", "test"))}  # fmt: skip
    config = {
        "nclasses": len(classes),
        "seed": seed,
        "usepytorch": True,
        "classifier": {"nhid": nhid, "dropout": dropout, **CLASSIFIER},
    }
    steps = STEPS["senteval"]
    with captured_log() as log, cpu_only():
        t = time.perf_counter()
        dev, test = se.validation.SplitClassifier(X, y, config).run()
        seconds = time.perf_counter() - t
    return {
        "nhid": nhid,
        "dropout": dropout,
        "dev_by_l2": [float(s) for _, s in log.lists[-1]],
        "dev": float(dev),
        "test": float(test),
        "seconds": round(seconds, 2),
        "config_steps": STEPS["senteval"] - steps,
    }


def run_senteval(
    se: types.SimpleNamespace, d: dict[str, np.ndarray], seed: int, grid: list[tuple[int, float]]
) -> dict:
    """The grid as a SentEval user runs it: one SplitClassifier per (nhid, dropout), the
    best dev accuracy (first in grid order on ties) gives the test accuracy."""
    rows = []
    for nhid, dropout in grid:
        rows.append(split_classifier(se, d, seed, nhid, dropout))
        print(f"    SentEval {rows[-1]}", flush=True)
    best = max(range(len(rows)), key=lambda i: (rows[i]["dev"], -i))
    seconds = round(sum(r["seconds"] for r in rows), 2)
    steps = sum(r["config_steps"] for r in rows)
    return {
        "seconds": seconds,
        "test": rows[best]["test"],
        "chosen": rows[best],
        "configs": rows,
        "config_steps": steps,
        "ms_per_config_step": round(1000 * seconds / steps, 4),
    }


# -- sentprobe ------------------------------------------------------------------------------
@contextlib.contextmanager
def counted_grid_steps() -> Iterator[None]:
    """Count SentEvalProbe's minibatch steps and configurations trained in them (a wrapper
    only; sentprobe is not modified)."""
    step = sp_senteval._Grid.adam_step

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        STEPS["grid"] += 1
        STEPS["sentprobe"] += len(self.order)
        step(self, *args, **kwargs)

    sp_senteval._Grid.adam_step = counted  # type: ignore[method-assign]
    try:
        yield
    finally:
        sp_senteval._Grid.adam_step = step  # type: ignore[method-assign]


def run_sentprobe(d: dict[str, np.ndarray], seed: int, **params: Any) -> dict[str, Any]:
    """``SentEvalProbe`` fit with dev selection, test scored once; time covers both."""
    probe = SentEvalProbe(random_state=seed, **params)
    steps = STEPS.copy()
    t = time.perf_counter()
    with counted_grid_steps():
        probe.fit(d["X_train"], d["y_train"], d["X_dev"], d["y_dev"])
    test = float(np.mean(probe.predict(d["X_test"]) == d["y_test"]))
    seconds = time.perf_counter() - t
    config_steps = STEPS["sentprobe"] - steps["sentprobe"]
    return {
        "seconds": round(seconds, 2),
        "grid_steps": STEPS["grid"] - steps["grid"],
        "config_steps": config_steps,
        "ms_per_config_step": round(1000 * seconds / config_steps, 4),
        "test": round(100 * test, 2),
        "dev": round(100 * probe.best_score_, 2),
        "chosen": probe.best_params_,
        "grid_dev": [{**c, "dev": round(100 * s, 2)} for c, s in probe.grid_scores_],
    }


def run_mlp_probe(d: dict[str, np.ndarray]) -> dict[str, Any]:
    """sentprobe's own fast ``MLPProbe()`` (its default 27-configuration grid, dev selection,
    test scored once) on the same data: the ``mlp`` probe's ratio to SentEval's classifier."""
    probe = MLPProbe()
    t = time.perf_counter()
    probe.fit(d["X_train"], d["y_train"], d["X_dev"], d["y_dev"])
    test = float(np.mean(probe.predict(d["X_test"]) == d["y_test"]))
    return {
        "seconds": round(time.perf_counter() - t, 2),
        "test": round(100 * test, 2),
        "dev": round(100 * probe.best_score_, 2),
        "chosen": probe.best_params_,
        "configurations": len(probe.grid_scores_),
    }


def compare_dev(senteval: list[dict], sentprobe: list[dict]) -> dict[str, Any]:
    """Per configuration, SentEval's dev accuracy minus SentEvalProbe's (points)."""
    ours = {(g["nhid"], g["dropout"], g["l2"]): g["dev"] for g in sentprobe}
    diffs = []
    for row in senteval:  # SentEval's regs: 10**-5 .. 10**-2, SentEvalProbe's SENTEVAL_L2
        for l2, s in zip(SENTEVAL_L2, row["dev_by_l2"], strict=True):
            diffs.append(round(s - ours[(row["nhid"], row["dropout"], l2)], 2))
    a = np.abs(diffs)
    return {
        "diffs": diffs,
        "identical": int(np.sum(a == 0)),
        "n": len(diffs),
        "max_abs": float(a.max()),
        "mean_abs": round(float(a.mean()), 3),
    }


def spread(tests: list[float]) -> dict[str, float]:
    return {
        "mean": round(float(np.mean(tests)), 3),
        "std": round(float(np.std(tests, ddof=1)), 3),
        "min": float(min(tests)),
        "max": float(max(tests)),
    }


def bench_task(
    se: types.SimpleNamespace,
    d: dict[str, np.ndarray],
    seeds: list[int],
    logistic: bool,
    mlp: bool = True,
    mlp_probe: bool = False,
) -> dict[str, Any]:
    """SentEval's grid, then SentEvalProbe's, then the seed spread (and the logistic check).
    ``mlp=False``: the grid is logistic regression alone (SentEval's probing.py for WC)."""
    grid = [(h, p) for h in SENTEVAL_NHID for p in SENTEVAL_DROPOUT] if mlp else [(0, 0.0)]
    params = {} if mlp else {"nhid": 0, "dropout": 0.0}
    print(f"  SentEval: {len(grid)} SplitClassifier run(s) ...", flush=True)
    se_run = run_senteval(se, d, SEED, grid)
    print(f"  SentEval: {se_run['seconds']} s, test {se_run['test']}", flush=True)
    sp_run = run_sentprobe(d, SEED, **params)
    print(f"  SentEvalProbe: {sp_run['seconds']} s, test {sp_run['test']}", flush=True)
    dev = compare_dev(se_run["configs"], sp_run["grid_dev"])
    tests = [sp_run["test"]]
    for seed in seeds:
        tests.append(run_sentprobe(d, seed, **params)["test"])
        print(f"  SentEvalProbe seed {seed}: test {tests[-1]}", flush=True)
    sd = spread(tests)
    diff = round(se_run["test"] - sp_run["test"], 2)
    row: dict[str, Any] = {
        "senteval": se_run,
        "sentprobe": sp_run,
        "ratio": round(se_run["seconds"] / sp_run["seconds"], 2),
        "dev_senteval_minus_sentprobe": dev,
        "sentprobe_seed_tests": dict(zip([SEED, *seeds], tests, strict=True)),
        "sentprobe_seed_spread": sd,
        "test_diff": diff,
        "criteria": {
            "time: sentprobe <= SentEval / 10": se_run["seconds"] >= 10 * sp_run["seconds"],
            "accuracy: |test diff| <= 2 seed std": abs(diff) <= 2 * sd["std"],
        },
    }
    if mlp_probe and mlp:
        fast = run_mlp_probe(d)
        row["mlp_probe"] = {**fast, "ratio": round(se_run["seconds"] / fast["seconds"], 2)}
        print(f"  MLPProbe: {fast['seconds']} s, test {fast['test']}, "
              f"{row['mlp_probe']['ratio']}x SentEval's time", flush=True)  # fmt: skip
    if logistic and mlp:
        se_lr = split_classifier(se, d, SEED, 0, 0.0)
        sp_lr = run_sentprobe(d, SEED, nhid=0, dropout=0.0)
        row["logistic"] = {
            "senteval": se_lr,
            "sentprobe": sp_lr,
            "ratio": round(se_lr["seconds"] / sp_lr["seconds"], 2),
            "dev_senteval_minus_sentprobe": compare_dev([se_lr], sp_lr["grid_dev"]),
        }
        print(f"  logistic: {row['logistic']}", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--senteval", type=Path, required=True, help="a SentEval checkout")
    ap.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    ap.add_argument("--tasks", default="BShift,SentLen", help="comma-separated suite tasks")
    ap.add_argument("--seeds", default="1112,1113,1114,1115",
                    help="extra SentEvalProbe seeds for the spread (besides 1111)")  # fmt: skip
    ap.add_argument("--logistic", action="store_true", help="add the nhid=0 exactness check")
    ap.add_argument("--mlp-probe", action="store_true", help="add MLPProbe() on the same data")
    ap.add_argument("--limit-train", type=int, help="first N train examples (time estimates)")
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "results/senteval.json"
    )
    args = ap.parse_args(argv)
    se = load_senteval(args.senteval)
    seeds = [int(s) for s in args.seeds.split(",") if s]

    threadpool_limits(limits=THREADS)
    torch.set_num_threads(THREADS)
    os.environ["SENTPROBE_NUM_THREADS"] = str(THREADS)  # SentEvalProbe's use_all_cores()
    result: dict[str, Any] = {"machine": machine(), "argv": sys.argv[1:]}

    # Warm up both sides (first-call allocations, thread pools) outside the timings.
    rng = np.random.default_rng(0)
    Xw, yw = rng.normal(size=(256, 384)).astype(np.float32), rng.integers(0, 3, 256)
    warm = {f"{k}_{s}": v for s in ("train", "dev", "test") for k, v in (("X", Xw), ("y", yw))}
    split_classifier(se, warm, SEED, 50, 0.1)
    run_sentprobe(warm, SEED, nhid=50, dropout=0.1)

    result["tasks"] = {}
    for name in args.tasks.split(","):
        d = load_task(args.workdir, name)
        if args.limit_train:
            d["X_train"], d["y_train"] = (
                d["X_train"][: args.limit_train],
                d["y_train"][: args.limit_train],
            )
        sizes = {s: len(d[f"y_{s}"]) for s in ("train", "dev", "test")}
        print(f"{name}: {sizes}, {len(np.unique(d['y_train']))} classes", flush=True)
        load_before = os.getloadavg()
        row = bench_task(
            se, d, seeds, args.logistic, mlp=name not in LOGISTIC_TASKS, mlp_probe=args.mlp_probe
        )
        row["loadavg_before_after"] = [load_before, os.getloadavg()]
        row["sizes"], row["classes"] = sizes, len(np.unique(d["y_train"]))
        result["tasks"][name] = row
        print(
            f"  ratio {row['ratio']}x, test diff {row['test_diff']}, {row['criteria']}", flush=True
        )
    result["machine"]["loadavg_end"] = os.getloadavg()
    return write_result(args.out, result)


if __name__ == "__main__":
    sys.exit(main())
