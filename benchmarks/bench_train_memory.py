"""Peak memory of ``sentprobe train`` against corpus size: the data path streams the corpus.

    python benchmarks/bench_train_memory.py [--sizes 300000 3000000] [--max-steps 200]
        [--workdir /tmp/bench-train-memory] [--out benchmarks/results/train_memory.json]

For each size N, a corpus of N sentences is written under ``--workdir`` (not shipped: the
19,327 sentences of the demo corpus, repeated, each repeat shuffled with its own seed), and
one real ``sentprobe train`` process runs under ``/usr/bin/time -v`` (its "Maximum resident
set size" is the peak RSS): autoencoder, ``bilstm-max``, ``--preset demo``, ``--vectors
none``, stopped by ``--max-steps`` (the first passes over the corpus, counting and the
vocabulary, read all N sentences; training reads the shuffle buffer's worth and more).
Seconds are wall time of the whole process, on whatever load the machine has.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

from sentprobe.training.demo import demo_corpus


def write_corpus(path: Path, n: int) -> None:
    with gzip.open(demo_corpus(), "rt", encoding="utf-8") as f:
        base = [line.strip() for line in f if line.strip()]
    with path.open("w", encoding="utf-8") as out:
        written, seed = 0, 0
        while written < n:
            part = base[:]
            random.Random(seed).shuffle(part)
            part = part[: n - written]
            out.write("\n".join(part) + "\n")
            written, seed = written + len(part), seed + 1


def measure(corpus: Path, run: Path, max_steps: int) -> dict[str, float]:
    command = [
        "/usr/bin/time", "-v", sys.executable, "-m", "sentprobe", "train", "--quiet",
        "--arch", "bilstm-max", "--objective", "autoencoder", "--preset", "demo",
        "--vectors", "none", "--data", str(corpus), "-o", str(run),
        "--max-steps", str(max_steps),
    ]  # fmt: skip
    res = subprocess.run(command, capture_output=True, text=True)
    if res.returncode:
        raise SystemExit(res.stderr[-2000:])
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", res.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", res.stderr)
    assert peak and wall, res.stderr[-2000:]
    hours, minutes, seconds = (float(g or 0) for g in wall.groups())
    return {
        "peak_rss_mb": round(int(peak[1]) / 1024, 1),
        "seconds": round(3600 * hours + 60 * minutes + seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300_000, 3_000_000])
    parser.add_argument("--max-steps", type=int, default=200)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench-train-memory"))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in args.sizes:
        corpus = args.workdir / f"corpus-{n}.txt"
        if not corpus.is_file():
            write_corpus(corpus, n)
        run = args.workdir / f"run-{n}"
        shutil.rmtree(run, ignore_errors=True)
        row = {"sentences": n, "corpus_mb": round(corpus.stat().st_size / 2**20, 1)}
        row.update(measure(corpus, run, args.max_steps))
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
