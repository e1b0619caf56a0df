"""What confidence intervals and control tasks add to a default run (issue 13's acceptance:
at most 50% on top of a default ``sentprobe run`` on sample-en, encoding excluded).

    SENTPROBE_CACHE=/tmp/me/cache HF_HUB_OFFLINE=1 python benchmarks/bench_overhead.py \
        [-e minilm] [--repeats 3]

Encodes sample-en once (into the cache), then, alternating so background load hits all
alike, each time into a fresh results store:

* ``default``: the default run (the encoder with the default baselines, ``logreg``) on the
  cached vectors, wall seconds of ``sentprobe.run`` (encoding excluded: the vectors come
  from the cache; the encoder's model is still built, as a real rerun would);
* ``CIs``: what ``sentprobe run`` then adds to print the table with intervals: reading the
  stored predictions and bootstrapping every cell (the table with intervals minus the
  table without);
* ``controls``: the same run with ``controls=True`` (``run --controls``), wall seconds.

Prints the best of ``--repeats`` of each and the overhead ratios.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from sentprobe import run
from sentprobe.analysis.stats import interval_function
from sentprobe.evaluation.store import ResultsStore
from sentprobe.reporting.tables import results_table


def _timed_run(encoder: str, path: Path, **kw) -> tuple[float, object]:
    start = time.perf_counter()
    frame = run([encoder], "sample-en", results=path, progress=False, **kw)
    return time.perf_counter() - start, frame


def _ci_seconds(path: Path, frame) -> tuple[float, int]:
    """Seconds to read the predictions and render the table with CIs, minus without."""
    start = time.perf_counter()
    results_table(frame)
    plain = time.perf_counter() - start
    start = time.perf_counter()
    with ResultsStore(path, readonly=True) as store:
        found = store.predictions_for(frame["key"])
    results_table(frame, interval=interval_function(found))
    return time.perf_counter() - start - plain, len(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-e", "--encoder", default="minilm")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    _timed_run(args.encoder, tmp / "warm.sqlite")  # encode once into the cache
    best: dict[str, float] = {}
    cells = 0
    for r in range(args.repeats):
        seconds, frame = _timed_run(args.encoder, tmp / f"default{r}.sqlite")
        best["default"] = min(best.get("default", seconds), seconds)
        ci, cells = _ci_seconds(tmp / f"default{r}.sqlite", frame)
        best["CIs"] = min(best.get("CIs", ci), ci)
        seconds, _ = _timed_run(args.encoder, tmp / f"controls{r}.sqlite", controls=True)
        best["controls run"] = min(best.get("controls run", seconds), seconds)
    base = best["default"]
    controls = best["controls run"] - base
    print(f"default run on cached vectors: {base:.2f} s ({cells} cells with predictions)")
    print(f"CIs (read predictions + bootstrap every cell): +{best['CIs']:.3f} s "
          f"(+{100 * best['CIs'] / base:.1f}%)")  # fmt: skip
    print(f"controls (run --controls minus default): +{controls:.2f} s "
          f"(+{100 * controls / base:.1f}%)")  # fmt: skip
    print(f"CIs + controls: +{100 * (best['CIs'] + controls) / base:.1f}% (acceptance: <= 50%)")


if __name__ == "__main__":
    main()
