"""Annotation benchmarks (run by hand; figures go to docs/annotation.md).

    python benchmarks/bench_annotation.py throughput [-n 10000] [--n-process 2] [--repeats 2]
    python benchmarks/bench_annotation.py agreement [--limit N] [--store DIR]

``throughput``: spaCy's own batched ``nlp.pipe`` (same loaded pipeline, same batch size and
processes, results only materialised as Docs) against sentprobe's ``annotate_corpus`` (records,
UD conversion, JSON, gzip chunks, manifest) on the same sentences of UD English EWT. Runs
alternate so background load hits both alike; the best run of each is reported. Issue 3's
acceptance: sentprobe >= 80% of spaCy's throughput.

``agreement``: the spaCy annotator on the gold words of EWT against the gold trees (main-verb
tense, subject/object number, dependency depth, plus UPOS/UAS/LAS), via
``sentprobe.analysis.agreement.evaluate_annotator``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from datetime import date
from pathlib import Path

EWT = Path(__file__).resolve().parents[2] / "shared/data/ud/en_ewt/en_ewt-ud-all.conllu.gz"


def _machine() -> str:
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{cpu}, {os.cpu_count()} CPUs, {platform.python_version()}, load {load:.1f}"


def throughput(n: int, n_process: int, repeats: int, batch_size: int) -> dict:
    from sentprobe.annotation.backends import SpacyAnnotator
    from sentprobe.annotation.conllu import read_conllu
    from sentprobe.annotation.store import annotate_corpus

    texts = [r.text for r, _ in zip(read_conllu(EWT), range(n)) if r.text]
    ann = SpacyAnnotator(n_process=n_process, batch_size=batch_size)
    nlp = ann.nlp
    list(nlp.pipe(texts[:200]))  # warm up
    spacy_rates, ours = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        for _doc in nlp.pipe(texts, batch_size=batch_size, n_process=n_process):
            pass
        spacy_rates.append(len(texts) / (time.perf_counter() - t))
        with tempfile.TemporaryDirectory() as out:
            t = time.perf_counter()
            annotate_corpus(iter(texts), out, ann, chunk_size=5000, progress=False)
            ours.append(len(texts) / (time.perf_counter() - t))
        print(f"  spacy {spacy_rates[-1]:.0f}/s  sentprobe {ours[-1]:.0f}/s", flush=True)
    return {
        "date": date.today().isoformat(),
        "machine": _machine(),
        "sentences": len(texts),
        "tokens": sum(len(t.split()) for t in texts),
        "pipeline": ann.version(),
        "n_process": n_process,
        "batch_size": batch_size,
        "spacy_sent_per_s": round(max(spacy_rates), 1),
        "sentprobe_sent_per_s": round(max(ours), 1),
        "ratio": round(max(ours) / max(spacy_rates), 3),
        "runs_spacy": [round(x) for x in spacy_rates],
        "runs_sentprobe": [round(x) for x in ours],
    }


def agreement(
    limit: int | None,
    n_process: int,
    min_tokens: int = 1,
    max_tokens: int | None = None,
    store: str | None = None,
) -> dict:
    from sentprobe.analysis.agreement import evaluate_annotator
    from sentprobe.annotation.backends import SpacyAnnotator

    t = time.perf_counter()
    res = evaluate_annotator(
        EWT,
        SpacyAnnotator(n_process=n_process),
        limit=limit,
        min_tokens=min_tokens,
        max_tokens=max_tokens,
        store=store,
    )
    res["seconds"] = round(time.perf_counter() - t, 1)
    res["date"] = date.today().isoformat()
    res["machine"] = _machine()
    return res


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    tp = sub.add_parser("throughput")
    tp.add_argument("-n", type=int, default=10000)
    tp.add_argument("--n-process", type=int, default=2)
    tp.add_argument("--repeats", type=int, default=2)
    tp.add_argument("--batch-size", type=int, default=256)
    ag = sub.add_parser("agreement")
    ag.add_argument("--limit", type=int, default=None)
    ag.add_argument("--n-process", type=int, default=2)
    ag.add_argument("--min-tokens", type=int, default=1)
    ag.add_argument("--max-tokens", type=int, default=None, help="28 for the tasks' range")
    ag.add_argument(
        "--store", default=None, help="annotate all of EWT once into this directory and reuse it"
    )
    args = p.parse_args()
    if not EWT.exists():
        raise SystemExit(f"needs the gold treebank at {EWT}")
    if args.cmd == "throughput":
        res = throughput(args.n, args.n_process, args.repeats, args.batch_size)
    else:
        res = agreement(args.limit, args.n_process, args.min_tokens, args.max_tokens, args.store)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
