"""The most an online code's last block could save on a task: a best-in-hindsight model.

MDL's online code sends the second half of train with a model trained on the first half. This
script trains, for several shuffles, scikit-learn's logistic regression on a random half of
train (C from 1e-4 to 10, on z-scored and on raw vectors) and LDA with shrinkage, and scores
the other half in bits per label, choosing the model and a temperature on its logits *on that
half itself*. A value near log2 K (1 bit for a binary task) means no model of this size saves
bits there, whatever the code (docs/controls.md, "MDL probing"). Binary tasks only.

    python scripts/measure_mdl_headroom.py -t sample-en/BShift,sample-en/SOMO --shuffles 3
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from scipy.special import log_expit
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from sentprobe.datasets import resolve_tasks
from sentprobe.encoders import get_encoder
from sentprobe.encoders.cache import EmbeddingCache
from sentprobe.evaluation.runner import default_cache_dir

C_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)
TEMPERATURES = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)


def bits_per_label(scores: np.ndarray, sign: np.ndarray) -> float:
    """Bits per label of a binary model's logits at the best temperature (in hindsight)."""
    return min(-log_expit(t * sign * scores).mean() / np.log(2) for t in TEMPERATURES)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-e", "--encoder", default="minilm")
    parser.add_argument("-t", "--tasks", default="sample-en/BShift,sample-en/SOMO")
    parser.add_argument("--shuffles", type=int, default=3)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")  # convergence warnings of the weakest penalties
    encoder = get_encoder(args.encoder)
    cache = EmbeddingCache(default_cache_dir())
    print("| task | shuffle | best logistic (bits/label) | best LDA (bits/label) |")
    print("|---|---:|---:|---:|")
    for task in resolve_tasks(args.tasks.split(",")):
        X = cache.encode(encoder, task.splits["train"].sentences, progress=False)
        y = np.array(task.splits["train"].labels)
        if len(set(y)) != 2:
            raise SystemExit(f"{task.name}: not a binary task")
        half = len(y) // 2
        for shuffle in range(args.shuffles):
            order = np.random.default_rng(shuffle).permutation(len(y))
            Xs, ys = X[order], y[order]
            logistic = []
            for scale in (True, False):
                Z = StandardScaler().fit_transform(Xs) if scale else Xs
                for C in C_GRID:
                    model = LogisticRegression(C=C, max_iter=3000).fit(Z[:half], ys[:half])
                    sign = np.where(ys[half:] == model.classes_[1], 1.0, -1.0)
                    logistic.append(bits_per_label(model.decision_function(Z[half:]), sign))
            lda = []
            for shrinkage in (0.1, 0.5, 0.9, "auto"):
                model = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=shrinkage)
                model.fit(Xs[:half], ys[:half])
                sign = np.where(ys[half:] == model.classes_[1], 1.0, -1.0)
                lda.append(bits_per_label(model.decision_function(Xs[half:]), sign))
            print(f"| {task.name} | {shuffle} | {min(logistic):.4f} | {min(lda):.4f} |", flush=True)


if __name__ == "__main__":
    main()
