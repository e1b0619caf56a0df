"""Peak memory of ``sentprobe train`` against corpus size: the data path streams the corpus.

    python benchmarks/bench_train_memory.py [--sizes 300000 3000000] [--max-steps 200]
        [--workdir /tmp/bench-train-memory] [--out benchmarks/results/train_memory.json]
    python benchmarks/bench_train_memory.py --data-path CORPUS [--batches 200]

For each size N, a corpus of N sentences is written under ``--workdir`` (not shipped: the
19,327 sentences of the demo corpus, repeated, each repeat shuffled with its own seed), and
one real ``sentprobe train`` process runs under ``/usr/bin/time -v`` (its "Maximum resident
set size" is the peak RSS): autoencoder, ``bilstm-max``, ``--preset demo``, ``--vectors
none``, stopped by ``--max-steps`` (the first passes over the corpus, counting and the
vocabulary, read all N sentences; training reads the shuffle buffer's worth and more).
Seconds are wall time of the whole process, on whatever load the machine has.

``--data-path CORPUS``: the data path alone, in this process (no model, no torch step): the
checking pass, the validation set, the vocabulary and the first ``--batches`` batches of an
epoch at the demo preset's sizes; prints its peak RSS (``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import resource
import shutil
import subprocess
import sys
from itertools import islice
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


def data_path(corpus: Path, batches: int) -> dict[str, float]:
    from sentprobe.training.data import TrainingData
    from sentprobe.training.presets import preset
    from sentprobe.training.trainer import _Epochs, _examples, _split, _vocabularies

    sizes = preset("demo", "bilstm-max")
    data = TrainingData("autoencoder", [corpus], batch_size=sizes["batch_size"], progress=False)
    valid, both = _split(len(data), 0.05, sizes["batch_size"], 1234)
    codes = _vocabularies("autoencoder", _examples(data, valid, both, True), sizes)
    epochs = _Epochs(data, valid, both, codes, sizes["batch_size"], "cpu")
    held = list(epochs.examples(False))
    drawn = sum(1 for _ in islice(epochs.batches(1234, 1), batches))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "sentences": len(data),
        "validation": len(held),
        "batches": drawn,
        "peak_rss_mb": round(peak, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300_000, 3_000_000])
    parser.add_argument("--max-steps", type=int, default=200)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench-train-memory"))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--data-path", type=Path, help="measure the data path alone on CORPUS")
    parser.add_argument("--batches", type=int, default=200)
    args = parser.parse_args()
    if args.data_path:
        print(json.dumps(data_path(args.data_path, args.batches)))
        return
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
