"""The figures behind docs/sample-suite.md's lexical splits: per task with a ``.forms``
sidecar, each class of each split's distinct target forms and its most frequent form's share,
then the Length and NB-uni-tfidf baselines' dev and test accuracy on every task (trained as
``sentprobe run`` and the audit train them: on train, selected on dev).

    python scripts/measure_lexical_splits.py src/sentprobe/datasets/data/sample_en
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

from sentprobe.analysis.checks.baselines import baseline_predictions
from sentprobe.analysis.checks.forms import form_spread
from sentprobe.datasets.loaders import load_senteval_file, task_files

BASELINES = ("Length", "NB-uni-tfidf")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite", type=Path, help="a SentEval-layout suite folder")
    args = ap.parse_args(argv)
    print("| task | split | class | items | forms | top form | top share |")
    print("|---|---|---|---:|---:|---|---:|")
    tasks = [load_senteval_file(f) for f in task_files(args.suite)]
    for task in tasks:
        targets = {n: s.clusters for n, s in task.splits.items() if s.clusters is not None}
        for r in form_spread(task, targets):
            print(
                f"| {task.name} | {r['split']} | {r['label']} | {r['items']} | {r['forms']} "
                f"| {r['top']} | {100 * r['top_share']:.1f}% |"
            )
    print()
    print("| task | " + " | ".join(f"{b} dev | {b} test" for b in BASELINES) + " | max gap |")
    print("|---|" + "---:|" * (2 * len(BASELINES) + 1))
    for task in tasks:
        scores = {}
        for split in ("dev", "test"):
            # dev scored as the audit scores test: the task with dev in test's place
            shown = dataclasses.replace(task, splits={**task.splits, "test": task.splits[split]})
            gold = np.asarray(task.splits[split].labels)
            predicted = baseline_predictions(shown)
            for b in BASELINES:
                scores[b, split] = 100 * float(np.mean(predicted[b] == gold))
        gap = max(abs(scores[b, "dev"] - scores[b, "test"]) for b in BASELINES)
        cells = " | ".join(f"{scores[b, 'dev']:.1f} | {scores[b, 'test']:.1f}" for b in BASELINES)
        print(f"| {task.name} | {cells} | {gap:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
