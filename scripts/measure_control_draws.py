"""How much a control accuracy depends on the draw of the control function.

``sentprobe run --controls --seeds N`` probes control map ``s`` with seed ``s`` of the probe
and the configuration seed ``s`` chose on the task, so its spread over maps mixes the draw
with the probe's seed. This script isolates the draw: it draws the control function with the
given seeds (``control_task(task, seed=S)``), probes every draw with the seed-0 probe and the
seed-0 configuration (read from a results store of a one-seed ``--controls`` run) and prints,
per task, the control accuracy's gain over the task's majority for every draw, and per draw
the number of tasks where the gain is at least 10 points. The vectors come from the embedding
cache.

    sentprobe run -e minilm -t sample-en --probe mlp --controls --baselines none \
        --results mlp.sqlite
    python scripts/measure_control_draws.py --results mlp.sqlite --seeds 0 1 2

``--cap 0.25`` draws the keys with a quarter of a label's share as the first pass's cap
instead (docs/controls.md compares a half, a quarter and an eighth with the default).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import numpy as np

from sentprobe.datasets import resolve_tasks
from sentprobe.datasets.controls import (
    CAPS,
    control_ceiling,
    control_task,
    is_control,
)
from sentprobe.encoders import get_encoder
from sentprobe.encoders.cache import EmbeddingCache
from sentprobe.evaluation.runner import default_cache_dir
from sentprobe.evaluation.store import ResultsStore
from sentprobe.probes.mlp import MLPProbe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, required=True, help="store of an mlp run")
    parser.add_argument("-e", "--encoder", default="minilm")
    parser.add_argument("-t", "--tasks", default="sample-en")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--cap",
        type=float,
        default=None,
        help="the first pass's cap on a key's items (fraction of a label's share) instead of "
        "the default caps, to measure another key choice",
    )
    parser.add_argument("--cache-dir", type=Path, default=None)
    args = parser.parse_args()

    caps = CAPS if args.cap is None else (args.cap,)
    encoder = get_encoder(args.encoder)
    cache = EmbeddingCache(args.cache_dir or default_cache_dir())
    with ResultsStore(args.results, readonly=True) as store:
        chosen = {
            r.task: r.config
            for r in store.records()
            if r.probe == "mlp" and r.seed == 0 and not is_control(r.task)
        }
    rows, hits = [], Counter()
    for task in resolve_tasks(args.tasks):
        short = task.metadata.paper_name or task.name
        if short not in chosen:
            continue
        config = chosen[short]
        test = task.splits["test"].labels
        majority = Counter(test).most_common(1)[0][1] / len(test)
        # a control task keeps its task's sentences: one read of the cache serves every draw
        X = {n: cache.encode(encoder, s.sentences, progress=False) for n, s in task.splits.items()}
        cells = []
        for seed in args.seeds:
            control = control_task(task, seed=seed, caps=caps)
            probe = MLPProbe(**config, random_state=0).fit(
                X["train"], control.splits["train"].labels, X["dev"], control.splits["dev"].labels
            )
            accuracy = float(
                np.mean(probe.predict(X["test"]) == np.array(control.splits["test"].labels))
            )
            gain = 100 * (accuracy - majority)
            hits[seed] += round(gain, 6) >= 10  # k/n accuracies: +10.0 is not 9.99...
            cells.append(f"{gain:+.1f} ({100 * control_ceiling(control):.0f})")
        rows.append(f"| {short} | " + " | ".join(cells) + " |")
        print(rows[-1], flush=True)
    print()
    print("| task | " + " | ".join(f"seed {s}: gain (ceiling)" for s in args.seeds) + " |")
    print("|---|" + "---:|" * len(args.seeds))
    print("\n".join(rows))
    print("| tasks at majority + 10 | " + " | ".join(str(hits[s]) for s in args.seeds) + " |")


if __name__ == "__main__":
    main()
