"""``--sizes auto`` on fiction-like text: the World English Bible and Shakespeare + Milton.

    python benchmarks/bench_fiction.py [--workdir benchmarks/.work] [--tasks WC,SOMO]

Issue "Speed to the limit": on 42k sentences of English fiction a user saw WC's target
search run for more than 17 minutes (every round recounted every occurrence of every target,
so frequent words made it quadratic). This benchmark builds every task at the largest sizes
the fiction part of the 200k benchmark corpus supports (`--sizes auto`, bands by corpus
size) and times each task, WC's target search separately. It reuses the 200k corpus's
stored annotation (run ``benchmarks/corpus200k.py`` and build ``suite200k`` first, see
docs/benchmarks.md), taking the sentences of the two fiction sources from it, so nothing is
parsed here. Prints one JSON object (also written to ``--out``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from sentprobe.annotation import read_annotated
from sentprobe.annotation.constituency import dep_to_constituency
from sentprobe.generation.autosize import AutoSizes, choose_wc
from sentprobe.generation.suite import ALL_GENERATORS, build_suite, generator_for, prepare

DEFAULT_WORKDIR = Path(__file__).resolve().parent / ".work"
FICTION = ("web-bible", "shakespeare")


def fiction_records(workdir: Path) -> list:
    """The annotated sentences of the fiction sources, in corpus order."""
    sources = json.loads((workdir / "corpus200k" / "sources.json").read_text())["sources"]
    ranges, start = [], 0
    for src in sources:
        n = src["corpus filter"]["kept"]
        if src["source"] in FICTION:
            ranges.append((start, start + n))
        start += n
    records = list(read_annotated(workdir / "suite200k.annotations"))
    if len(records) != start:
        sys.exit(f"error: the stored annotation has {len(records)} sentences, sources.json {start}")
    return [r for a, b in ranges for r in records[a:b]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    ap.add_argument("--tasks", default=",".join(ALL_GENERATORS))
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/fiction.json"))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    records = fiction_records(args.workdir)
    for rec in records:
        if rec.constituency is None:
            rec.constituency = dep_to_constituency(rec)
    result: dict = {"sentences": len(records), "read_seconds": round(time.perf_counter() - t0, 1)}
    corpus = prepare(records, 5, 28, Counter())
    t = time.perf_counter()
    rank, n, units, _ = choose_wc(corpus, AutoSizes(), generator_for("WC", "en", None, None))
    result["wc_target_search"] = {
        "seconds": round(time.perf_counter() - t, 2),
        "first_rank": rank,
        "targets": n,
        "units": units,
    }
    result["tasks"] = {}
    for name in args.tasks.split(","):
        t = time.perf_counter()
        (task,) = build_suite(records, [name], AutoSizes(), bands="auto")
        result["tasks"][name] = {
            "seconds": round(time.perf_counter() - t, 1),
            "sizes": [len(task.splits[s]) for s in ("train", "dev", "test")],
        }
        print(name, result["tasks"][name], file=sys.stderr, flush=True)
    result["generation_seconds"] = round(sum(v["seconds"] for v in result["tasks"].values()), 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
