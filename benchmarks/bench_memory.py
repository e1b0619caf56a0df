"""Peak memory of ``sentprobe run``: all 13 layers of a 768-d model, and a 1M-sentence task.

Two measurements, each a real ``sentprobe run`` process under ``/usr/bin/time -v`` (its
"Maximum resident set size" is the peak RSS), with a fresh results store and cache:

- ``layers``: ``--layer all`` on a 13-layer, 768-d model over a 100k/10k/10k task. The model
  is ``SyntheticLayers`` below (this file, loaded as user code): 13 views of 768 float32
  numbers per sentence, pseudo-random, with the sentence length in the first coordinate so
  the probe has something to learn. All layers of the train split are 100,000 x 13 x 768 x 4
  bytes = 4.0 GB; one layer's is 0.31 GB. The runner probes the 13 layers one after another,
  each read from the memory-mapped cache.
- ``million``: a 1,000,000 / 10,000 / 10,000 task (6 length classes) with ``bov-glove``
  (GloVe 6B 50d averages), the default logistic probe.

The task files are generated (deterministic, seed 0) under ``--workdir``. Usage::

    flock /tmp/sentprobe-heavy.lock python benchmarks/bench_memory.py [--only layers|million]
        [--workdir /tmp/bench-memory] [--out benchmarks/results/memory.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sentprobe.encoders.base import Encoder

LAYERS, DIM = 13, 768
#: Length classes of the generated tasks (tokens): 4-6, 7-9, ..., 19-21.
BINS = [(4, 6), (7, 9), (10, 12), (13, 15), (16, 18), (19, 21)]


class SyntheticLayers(Encoder):
    """A stand-in for a 12-layer, 768-d transformer with ``--layer all``: 13 views of
    pseudo-random vectors (seeded by the batch's text), the token count in coordinate 0."""

    name = "synthetic-13x768"
    batch_size = 512

    @property
    def fingerprint(self) -> str:
        return f"bench-synthetic-layers-{LAYERS}x{DIM}-v1"

    @property
    def views(self) -> list[str]:
        return [f"layer{i}" for i in range(LAYERS)]

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b("\n".join(sentences).encode()).digest()[:8], "big")
        out = np.random.default_rng(seed).standard_normal(
            (len(sentences), LAYERS, DIM), dtype=np.float32
        )
        out[:, :, 0] = np.array([len(s.split()) for s in sentences], dtype=np.float32)[:, None]
        return out


def _words() -> list[str]:
    """Alphabetic GloVe words (ranks 100-5100): sentences whose tokens BoV knows."""
    from sentprobe.encoders.static import load_word_vectors

    vectors = load_word_vectors("glove-6b-50d")
    ranked = sorted(vectors.index, key=vectors.index.__getitem__)
    return [w for w in ranked[100:5100] if w.isalpha()]


def make_task(path: Path, sizes: tuple[int, int, int], seed: int = 0) -> Path:
    """A SentEval-format length task of distinct random sentences, balanced over ``BINS``."""
    if path.exists():
        return path
    rng = np.random.default_rng(seed)
    words = np.array(_words())
    seen: set[str] = set()
    tmp = path.with_suffix(".part")
    with open(tmp, "w", encoding="utf-8") as fh:
        for split, n in zip(("tr", "va", "te"), sizes, strict=True):
            for i in range(n):
                label = i % len(BINS)
                lo, hi = BINS[label]
                while True:
                    toks = words[rng.integers(0, len(words), rng.integers(lo, hi + 1))]
                    sentence = " ".join(toks)
                    if sentence not in seen:
                        seen.add(sentence)
                        break
                fh.write(f"{split}\t{label}\t{sentence}\n")
    tmp.replace(path)
    return path


def measure(args: list[str], cwd: Path) -> dict[str, Any]:
    """Run ``sentprobe run`` under /usr/bin/time -v; wall time, peak RSS, exit code."""
    start = time.perf_counter()
    res = subprocess.run(
        ["/usr/bin/time", "-v", sys.executable, "-m", "sentprobe", "run", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", res.stderr)
    if res.returncode != 0:
        print(res.stderr[-3000:], file=sys.stderr)
    return {
        "command": "sentprobe run " + " ".join(args),
        "exit": res.returncode,
        "seconds": round(seconds, 1),
        "peak_rss_gb": round(int(peak.group(1)) / 2**20, 3) if peak else None,
        "load_after": os.getloadavg()[0],
        "table": res.stdout,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/bench-memory"))
    ap.add_argument("--only", choices=["layers", "million"])
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "memory.json")
    args = ap.parse_args(argv)
    work = args.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    here = Path(__file__).resolve()
    runs: dict[str, Any] = {}
    plan = {
        "layers": (
            make_task(work / "layers100k.txt", (100_000, 10_000, 10_000)),
            f"{here}:SyntheticLayers",
        ),
        "million": (make_task(work / "million.txt", (1_000_000, 10_000, 10_000)), "bov-glove"),
    }
    for name, (task, encoder) in plan.items():
        if args.only and name != args.only:
            continue
        for old in (work / f"{name}.sqlite", work / f"{name}-cache"):
            subprocess.run(["rm", "-rf", str(old)], check=True)
        print(f"{name}: load {os.getloadavg()}", flush=True)
        runs[name] = measure(
            ["-e", encoder, "-t", str(task), "--baselines", "none", "-q",
             "--results", str(work / f"{name}.sqlite"), "--cache-dir", str(work / f"{name}-cache")],
            work,
        )  # fmt: skip
        cache = sum(f.stat().st_size for f in (work / f"{name}-cache").rglob("*") if f.is_file())
        runs[name]["cache_gb"] = round(cache / 2**30, 2)
        print(json.dumps({k: v for k, v in runs[name].items() if k != "table"}), flush=True)
        print(runs[name]["table"], flush=True)
    from results_io import write_result  # here: the user-code loader imports this file too

    return write_result(args.out, {"date": time.strftime("%Y-%m-%dT%H:%M:%S"), "runs": runs})


if __name__ == "__main__":
    sys.exit(main())
