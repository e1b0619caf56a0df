"""Generation benchmark: the ten probing tasks from the 200k-sentence package corpus.

    python benchmarks/bench_generation.py [--workdir benchmarks/.work]
        [--sizes auto:20000,2000,2000] [--bands profile] [--repeats 2] [--breakdown]
        [--profile FILE] [--out benchmarks/results/generation.json]
    python benchmarks/bench_generation.py --breakdown-only   # -> generation_breakdown.json

No single fixed ``--sizes`` fills all ten tasks from this corpus under the paper's rules
(WC's 1000 targets need at least 1000 sentences per split, TreeDepth's length-matched
sample holds at most 280 per depth class, 2240 in all), so the default is ``auto:``: each
task at the largest balanced sizes it supports, at most 20000/2000/2000, with the paper's
frequency bands (``--bands profile``; nothing relaxed, the manifest says so per task).

1. The corpus (benchmarks/corpus200k.py) is built if missing.
2. Annotation: ``sentprobe build`` annotates into ``<workdir>/suite200k.annotations`` the first
   time (spaCy, 2 processes); its rate is what the annotation store's manifest recorded for
   that run (``last_run``), and the elapsed time of the run that did it.
3. Generation: ``sentprobe build`` (the CLI, in a subprocess) with the annotations present,
   ``--repeats`` times into ``suite200k`` and ``rebuild/suite200k`` (whose annotation
   directory is a copy of the first), timed by wall clock; the best run is the figure. This
   is everything a rebuild does: re-reading and hashing the corpus against the stored
   chunks, reading the records, dependency-to-constituency conversion, the ten generators,
   writing the files, and QUALITY.md with its baselines.
4. Checks: all ten task files, manifest.json and QUALITY.md written; every file of the two
   builds byte-identical (SHA-256); TreeDepth's Length baseline within 5 points of Majority
   (read from QUALITY.md).
5. ``--breakdown`` times each phase in-process (same functions the pipeline calls), each
   task generated once at the sizes the first build chose (read from its manifest), i.e.
   the build without the ``auto`` search (its task files are written to ``suite200k-fixed``
   and compared with the CLI build's); ``--breakdown-only`` does just that, from the last
   build, into ``<out stem>_breakdown.json``; ``--profile FILE`` writes cProfile statistics of
   one in-process build to FILE.

A task the corpus cannot fill at ``--sizes`` makes ``sentprobe build`` write nothing; the
script then reports each task's error (which rule ran short and how much would fit).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import hashlib
import json
import os
import platform
import pstats
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from corpus200k import DEFAULT_WORKDIR, build_corpus

TASK_FILES = {
    "SentLen": "sentence_length.txt", "WC": "word_content.txt", "BShift": "bigram_shift.txt",
    "TreeDepth": "tree_depth.txt", "TopConst": "top_constituents.txt",
    "Tense": "past_present.txt", "SubjNum": "subj_number.txt", "ObjNum": "obj_number.txt",
    "SOMO": "odd_man_out.txt", "CoordInv": "coordination_inversion.txt",
}  # fmt: skip
RESULTS = Path(__file__).resolve().parent / "results" / "generation.json"


def load() -> float:
    return os.getloadavg()[0]


def sentprobe_build(
    corpus: Path, out: Path, sizes: str, seed: int, bands: str | None, log: Path
) -> dict:
    """Run ``sentprobe build`` in a subprocess; wall time, exit code, log."""
    cmd = ["sentprobe", "build", "--corpus", str(corpus), "--out", str(out), "--sizes", sizes,
           "--seed", str(seed), "--quiet"]  # fmt: skip
    if bands:
        cmd += ["--bands", bands]
    before = load()
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    log.write_text(f"$ {' '.join(cmd)}\n{done.stdout}\n{done.stderr}")
    return {
        "out": str(out),
        "seconds": round(seconds, 1),
        "returncode": done.returncode,
        "load_before": round(before, 2),
        "load_after": round(load(), 2),
        "stderr_tail": done.stderr[-4000:] if done.returncode else "",
    }


def digests(directory: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.iterdir())
        if p.is_file()
    }


def quality_row(quality_md: str, task: str) -> dict[str, float] | None:
    """Majority / Length / NB-uni-tfidf test accuracies of ``task`` in QUALITY.md's overview."""
    lines = quality_md.splitlines()
    header = next((ln for ln in lines if ln.startswith("|") and "Majority" in ln), None)
    if header is None:
        return None
    cols = [c.strip() for c in header.strip("|").split("|")]
    for line in lines:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells and cells[0] == task and len(cells) == len(cols):
            out = {}
            for name in ("Majority", "Length", "NB-uni-tfidf"):
                if name in cols:
                    value = cells[cols.index(name)]
                    out[name] = float(value) if re.fullmatch(r"[\d.]+", value) else None
            return out
    return None


def breakdown(
    corpus: Path, out: Path, sizes: dict[str, dict[str, int]], seed: int
) -> dict[str, float | bool]:
    """Seconds per phase of a build with existing annotations, in-process; ``sizes`` per
    task (paper frequency bands)."""
    from sentprobe.analysis.quality import quality_report
    from sentprobe.annotation import read_annotated
    from sentprobe.annotation.constituency import dep_to_constituency
    from sentprobe.generation.pipeline import _tokenized
    from sentprobe.generation.suite import build_suite
    from sentprobe.generation.writer import corpus_sha256, suite_manifest, write_generated_suite

    times: dict[str, float] = {}
    t = time.perf_counter()
    n = sum(1 for _ in _tokenized(corpus, "en", "lines", {}))
    times[f"re-tokenize corpus ({n} sentences) to check the chunks"] = time.perf_counter() - t
    t = time.perf_counter()
    records = list(read_annotated(out.with_name(out.name + ".annotations")))
    times["read annotated records"] = time.perf_counter() - t
    t = time.perf_counter()
    for rec in records:
        if rec.constituency is None:
            rec.constituency = dep_to_constituency(rec)
    times["dependency-to-constituency"] = time.perf_counter() - t
    tasks = []
    for name in TASK_FILES:
        t = time.perf_counter()
        tasks += build_suite(records, [name], sizes[name], seed)
        times[f"generate {name}"] = time.perf_counter() - t
    t = time.perf_counter()
    fixed = out.with_name(out.name + "-fixed")
    manifest = suite_manifest(
        tasks, corpus_sha256=corpus_sha256(records), annotator={}, seed=seed, lang="en"
    )
    write_generated_suite(fixed, tasks, manifest)
    times["corpus hash, manifest, task files"] = time.perf_counter() - t
    t = time.perf_counter()
    quality_report(tasks, {"title": "breakdown", "corpus": str(corpus), "seed": seed})
    times["QUALITY.md (audit + baselines)"] = time.perf_counter() - t
    times["total"] = sum(times.values())
    out_times = {k: round(v, 1) for k, v in times.items()}
    # the same generation as the CLI build: every task file byte-identical
    same = all(
        (fixed / t.file).read_bytes() == (out / t.file).read_bytes()
        for t in tasks
        if (out / t.file).is_file()
    )
    return out_times | {"task files identical to the CLI build": same}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    ap.add_argument("--sizes", default="auto:20000,2000,2000")
    ap.add_argument("--bands", default="profile", help="passed to sentprobe build ('' = omit)")
    ap.add_argument("--seed", type=int, default=2018)
    ap.add_argument("--repeats", type=int, default=2, help="timed builds (alternating dirs)")
    ap.add_argument("--breakdown", action="store_true", help="also time each phase in-process")
    ap.add_argument(
        "--breakdown-only", action="store_true", help="only the breakdown, of the last build"
    )
    ap.add_argument("--profile", type=Path, help="write cProfile stats of one build here")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    from sentprobe.generation.pipeline import build, parse_sizes

    sizes = parse_sizes(args.sizes)
    bands = args.bands or None
    corpus = build_corpus(args.workdir)
    n_corpus = len(corpus.read_text(encoding="utf-8").splitlines())
    logs = args.workdir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    # same directory name, other parent: the suite's name (manifest "suite", QUALITY.md title)
    # is the directory's, so only then can every file be byte-identical
    first, second = args.workdir / "suite200k", args.workdir / "rebuild" / "suite200k"
    ann = first.with_name(first.name + ".annotations")
    result: dict = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        "corpus": {"path": str(corpus), "sentences": n_corpus},
        "sizes": args.sizes,
        "bands": bands,
        "seed": args.seed,
    }
    sources_json = corpus.parent / "sources.json"
    if sources_json.is_file():
        result["corpus"]["sources"] = {
            s["source"]: s["corpus filter"].get("kept", 0)
            for s in json.loads(sources_json.read_text())["sources"]
        }

    if args.breakdown_only:
        chosen = {
            name: {s: sum(c.values()) for s, c in entry["counts"].items()}
            for name, entry in json.loads((first / "manifest.json").read_text())["tasks"].items()
        }
        result["load_before"] = round(load(), 2)
        result["breakdown_seconds"] = breakdown(corpus, first, chosen, args.seed)
        result["load_after"] = round(load(), 2)
        out = args.out.with_name(args.out.stem + "_breakdown.json")
        out.write_text(json.dumps(result, indent=1) + "\n")
        print(json.dumps(result, indent=1))
        return 0

    # 1. annotation (only when not done yet; sentprobe build resumes a stopped run)
    manifest_path = ann / "manifest.json"
    complete = manifest_path.is_file() and json.loads(manifest_path.read_text()).get("complete")
    if not complete:
        print(f"annotating {n_corpus} sentences (sentprobe build) ...", file=sys.stderr)
        run = sentprobe_build(corpus, first, args.sizes, args.seed, bands, logs / "annotate.log")
        result["annotation_build"] = run
    ann_manifest = json.loads(manifest_path.read_text())
    last = ann_manifest.get("last_run", {})
    result["annotation"] = {
        "annotator": ann_manifest.get("annotator"),
        "sentences": ann_manifest.get("n_sentences"),
        "last_run": last,
        "note": "last_run is the run that parsed the most recent chunks; a resumed run "
        "covers only what was left",
    }

    # 2. generation from the annotated corpus, timed end to end, twice into two directories
    if not (second.with_name(second.name + ".annotations") / "manifest.json").is_file():
        shutil.rmtree(second.with_name(second.name + ".annotations"), ignore_errors=True)
        shutil.copytree(ann, second.with_name(second.name + ".annotations"))
    runs = []
    for k in range(max(args.repeats, 2)):
        out = first if k % 2 == 0 else second
        print(f"build {k + 1}: {out} ...", file=sys.stderr, flush=True)
        log = logs / f"gen{k}.log"
        runs.append(sentprobe_build(corpus, out, args.sizes, args.seed, bands, log))
        print(f"  {runs[-1]['seconds']} s, exit {runs[-1]['returncode']}", file=sys.stderr)
    result["generation_runs"] = runs
    ok = [r for r in runs if r["returncode"] == 0]
    result["generation_best_seconds"] = min((r["seconds"] for r in ok), default=None)

    # 3. checks
    if ok:
        a, b = digests(first), digests(second)
        expected = {*TASK_FILES.values(), "manifest.json", "QUALITY.md"}
        result["files"] = sorted(a)
        result["all_files_written"] = expected <= set(a)
        result["byte_identical"] = a == b
        result["sha256"] = a
        quality = (first / "QUALITY.md").read_text(encoding="utf-8")
        row = quality_row(quality, "TreeDepth")
        result["tree_depth_baselines"] = row
        if row and row.get("Length") is not None and row.get("Majority") is not None:
            result["tree_depth_length_minus_majority"] = round(row["Length"] - row["Majority"], 1)
        manifest = json.loads((first / "manifest.json").read_text())
        result["tasks"] = {
            name: {
                "labels": len(entry["labels"]),
                "sizes": {s: sum(c.values()) for s, c in entry["counts"].items()},
            }
            for name, entry in manifest["tasks"].items()
        }
    else:
        result["failures"] = runs[-1]["stderr_tail"]

    if args.breakdown and ok:
        chosen = {
            name: {s: sum(c.values()) for s, c in entry["counts"].items()}
            for name, entry in json.loads((first / "manifest.json").read_text())["tasks"].items()
        }
        result["breakdown_seconds"] = breakdown(corpus, first, chosen, args.seed)
    if args.profile:
        profile_out = args.workdir / "suite200k-profile"
        shutil.rmtree(profile_out.with_name(profile_out.name + ".annotations"), True)
        shutil.copytree(ann, profile_out.with_name(profile_out.name + ".annotations"))
        prof = cProfile.Profile()
        kwargs = {"bands": bands} if bands else {}
        prof.runcall(
            build, corpus, profile_out, sizes=sizes, seed=args.seed, progress=False, **kwargs
        )
        with open(args.profile, "w") as fh:
            pstats.Stats(prof, stream=fh).sort_stats("cumulative").print_stats(60)
        result["profile"] = str(args.profile)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "sha256"}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
