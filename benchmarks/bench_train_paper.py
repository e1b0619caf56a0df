"""Speed of ``sentprobe train --preset paper`` on this machine, and the papers' data projected.

    python benchmarks/bench_train_paper.py [--steps 20] [--arch bilstm-max gatedconv cnn-max]
        [--workdir /tmp/bench-train-paper] [--device cpu|cuda]

A short timed slice, not whole epochs: for each architecture, ``sentprobe train --preset paper
--vectors none`` (300-d input table, as the papers' 300-d fastText/GloVe inputs) on the demo
corpus (autoencoder: the LSTM decoder and 40k-word softmax of translation and SkipThought) and
on sentence pairs built from it (``nli``: labels arbitrary, for timing only), stopped by
``--max-steps``, with torch's default threads (every core). Tokens/s and seconds are the
trainer's own tally of the slice (read from its mid-epoch checkpoint, ``resume.pt``; the slice
includes reading the data and filling the shuffle buffer, under a second for the demo corpus).
Examples/s = steps x batch size / seconds; the projection is examples / (examples/s) for
Conneau et al.'s data sizes (2M Europarl pairs per language, 30M Toronto Book Corpus sentences,
1M NLI pairs), so it holds for sentences as long as the demo corpus's (printed) and scales with
length otherwise.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import torch

from sentprobe.training.demo import demo_corpus

#: objective -> (the papers' data it stands for, examples per epoch there)
PAPER_DATA = {
    "autoencoder": [("2M Europarl pairs (translation)", 2_000_000),
                    ("30M Toronto sentences (SkipThought)", 30_000_000)],
    "nli": [("1M NLI pairs (SNLI + MultiNLI)", 1_000_000)],
}  # fmt: skip


def inputs(workdir: Path) -> dict[str, Path]:
    with gzip.open(demo_corpus(), "rt", encoding="utf-8") as f:
        lines = [" ".join(line.split()) for line in f if line.strip()]
    text, pairs = workdir / "text.txt", workdir / "pairs.tsv"
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    labels = ("entailment", "neutral", "contradiction")
    pairs.write_text(
        "".join(f"{a}\t{b}\t{labels[i % 3]}\n" for i, (a, b) in enumerate(zip(lines, lines[1:]))),
        encoding="utf-8",
    )
    return {"autoencoder": text, "nli": pairs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--arch", nargs="+", default=["bilstm-max", "gatedconv", "cnn-max"])
    parser.add_argument("--objective", nargs="+", default=list(PAPER_DATA))
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench-train-paper"))
    parser.add_argument("--device", default="cpu", help="cpu, or cuda on a GPU machine")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    data = inputs(args.workdir)
    lines = data["autoencoder"].read_text(encoding="utf-8").splitlines()
    mean = sum(len(s.split()) for s in lines) / len(lines)
    print(f"demo corpus: {len(lines)} sentences, {mean:.1f} tokens each on average; "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    for objective in args.objective:
        for arch in args.arch:
            run = args.workdir / f"{arch}-{objective}"
            shutil.rmtree(run, ignore_errors=True)
            command = [
                sys.executable, "-m", "sentprobe", "train", "--quiet", "--arch", arch,
                "--objective", objective, "--preset", "paper", "--vectors", "none",
                "--data", str(data[objective]), "-o", str(run), "--max-steps", str(args.steps),
                "--device", args.device,
            ]  # fmt: skip
            subprocess.run(command, check=True)
            state = torch.load(run / "resume.pt", weights_only=True)
            tally, steps = state["tally"], state["step"]
            batch = json.loads((run / "run.json").read_text())["settings"]["sizes"]["batch_size"]
            per_second = steps * batch / tally["seconds"]
            row = {
                "arch": arch,
                "objective": objective,
                "steps": steps,
                "tokens_per_second": round(tally["tokens"] / tally["seconds"]),
                "seconds_per_step": round(tally["seconds"] / steps, 2),
                "demo_epoch_seconds": round(len(lines) / per_second),
                "projected_hours_per_epoch": {
                    name: round(n / per_second / 3600, 1) for name, n in PAPER_DATA[objective]
                },
            }
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
