#!/usr/bin/env python3
"""Regenerate sentprobe's built-in English sample suite (``sample-en``) deterministically.

The corpus is the prose of two Debian documentation packages, both under permissive
licenses (see docs/sample-suite.md):

    apt-get install python3.11-doc python-django-doc

Usage (from the repository root):

    PYTHONPATH=src python scripts/build_sample_suite.py \\
        [--out src/sentprobe/datasets/data/sample_en] [--seed 2018] [--sizes 2000,500,500]

Same packages (same versions) + same seed + same sizes -> byte-identical files. The
manifest records the package versions and the corpus SHA-256 so a drift is visible.
``--corpus FILE`` builds from any plain-text corpus instead (one sentence per line, or
``--layout running`` for running text; gzip/bz2/xz are fine).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import Counter
from pathlib import Path

try:
    import sentprobe  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from sentprobe.errors import SentprobeError
from sentprobe.generation import (
    GENERATOR_VERSION,
    BigramShift,
    GenerationError,
    MosesPreprocessor,
    SentenceLength,
    WordContent,
    build_manifest,
    read_sentences,
    write_suite,
)
from sentprobe.generation.sources import sphinx_sentences
from sentprobe.generation.writer import sha256_lines

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src/sentprobe/datasets/data/sample_en"

#: The corpus: Debian packages of Sphinx HTML documentation, read in this order.
SOURCES = [
    {
        "package": "python3.11-doc",
        "path": "/usr/share/doc/python3.11/html",
        "license": "PSF-2.0 (Python Software Foundation License Version 2)",
        "copyright": "Copyright (c) 2001-2023 Python Software Foundation; All Rights Reserved",
        "what": "the Python 3.11 documentation (tutorial, library and language reference, "
        "HOWTOs, FAQs, What's New)",
    },
    {
        "package": "python-django-doc",
        "path": "/usr/share/doc/python-django-doc/html",
        "license": "BSD-3-Clause",
        "copyright": "Copyright (c) Django Software Foundation and individual contributors",
        "what": "the Django 3.2 documentation (tutorials, topic guides, reference, release notes)",
    },
]

CITATION = (
    "Conneau, Kruszewski, Lample, Barrault, Baroni (2018). What you can cram into a single "
    "$&!#* vector: Probing sentence embeddings for linguistic properties. ACL 2018. "
    "(Task definitions; this sample suite's sentences come from the sources listed.)"
)


def package_version(package: str) -> str:
    """Installed Debian package version, or a clear error saying how to install it."""
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status} ${Version}", package],
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:
        out = None
    if out is None or out.returncode != 0 or "install ok installed" not in out.stdout:
        raise SentprobeError(
            f"the Debian package {package!r} is needed to rebuild the sample suite; "
            f"install it with: apt-get install {' '.join(s['package'] for s in SOURCES)} "
            "(or pass --corpus FILE to build from your own text)"
        )
    return out.stdout.rsplit(" ", 1)[-1]


def parse_triple(text: str, what: str) -> dict[str, int]:
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        values = []
    if len(values) != 3 or min(values, default=-1) < 1:
        raise SentprobeError(f"{what} must be three positive integers train,dev,test: {text!r}")
    return dict(zip(("train", "dev", "test"), values, strict=True))


def load_corpus(args: argparse.Namespace) -> tuple[list[str], list[dict], str]:
    """Raw sentences in a stable order, the provenance of each source, and a summary."""
    if args.corpus:
        raw = list(read_sentences(args.corpus, args.layout))
        info = [{"path": str(args.corpus), "layout": args.layout, "sentences": len(raw)}]
        return raw, info, f"user corpus {Path(args.corpus).name}"
    raw, info = [], []
    for src in SOURCES:
        version = package_version(src["package"])
        if not Path(src["path"]).is_dir():
            raise SentprobeError(f"{src['path']} is missing; reinstall {src['package']}")
        stats: Counter = Counter()
        sents = list(sphinx_sentences(src["path"], stats))
        raw += sents
        info.append(
            {
                **src,
                "version": version,
                "extracted": "text of <p> elements in the page body of every HTML page "
                "(code blocks, tables and navigation skipped), split into sentences; a "
                "sentence is kept if it starts with a capital letter, ends with . ? or !, "
                "has no inline code (except single plain words), identifiers, URLs or "
                "prompts, and is not release-note boilerplate",
                "filter_counts": dict(sorted(stats.items())),
            }
        )
        print(f"{src['package']} {version}: {len(sents)} prose sentences", file=sys.stderr)
    summary = "; ".join(f"{s['what']} (Debian {s['package']} {s['version']})" for s in info)
    return raw, info, summary


def build_wc(sentences, per_target: dict[str, int], seed: int, n_targets: int, first_rank: int):
    """WC with ``per_target`` sentences per target; fewer targets if the corpus is short."""
    total = {s: n * n_targets for s, n in per_target.items()}
    try:
        return WordContent(n_targets, first_rank).generate(sentences, total, seed)
    except GenerationError:
        pass
    need = sum(per_target.values())
    n = len(WordContent(n_targets, first_rank).select_targets(sentences, need))
    while n > 0:
        try:
            task = WordContent(n, first_rank).generate(
                sentences, {s: k * n for s, k in per_target.items()}, seed
            )
        except GenerationError:
            n -= 1
            continue
        print(
            f"WC: the corpus has only {n} (not {n_targets}) target words with "
            f"{need} qualifying sentences each; using n_targets={n}",
            file=sys.stderr,
        )
        return task
    raise GenerationError(f"WC: no target word has {need} qualifying sentences")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    ap.add_argument("--seed", type=int, default=2018)
    ap.add_argument("--sizes", default="2000,500,500", help="SentLen/BShift train,dev,test")
    ap.add_argument("--wc-per-target", default="6,2,2", help="WC sentences per target")
    ap.add_argument("--wc-targets", type=int, default=1000, help="WC targets wanted")
    ap.add_argument("--wc-first-rank", type=int, default=2001, help="first WC vocabulary rank")
    ap.add_argument("--corpus", type=Path, help="build from this text file instead")
    ap.add_argument("--layout", choices=["lines", "running"], default="lines")
    ap.add_argument("--save-corpus", type=Path, help="also write the raw sentences here")
    args = ap.parse_args(argv)
    try:
        sizes = parse_triple(args.sizes, "--sizes")
        per_target = parse_triple(args.wc_per_target, "--wc-per-target")
        raw, sources, summary = load_corpus(args)
        if args.save_corpus:
            args.save_corpus.write_text("".join(s + "\n" for s in raw), encoding="utf-8")
        prep = MosesPreprocessor()
        sentences = list(prep(raw))
        print(f"corpus: {dict(prep.stats)}", file=sys.stderr)
        tasks = [
            SentenceLength().generate(sentences, sizes, args.seed),
            build_wc(sentences, per_target, args.seed, args.wc_targets, args.wc_first_rank),
            BigramShift().generate(sentences, sizes, args.seed),
        ]
    except SentprobeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    wc = tasks[1]
    manifest = build_manifest(
        tasks,
        suite="sample-en",
        language="en",
        description=(
            "A small English sample of the parser-free probing tasks of Conneau et al. "
            "(2018) (SentLen, WC, BShift), built with the paper's rules from modern "
            "technical prose, sized to run on a laptop CPU in minutes. Not comparable "
            "in number to the paper's 100k/10k/10k sets built from the Toronto Book Corpus."
        ),
        source=summary,
        license=" AND ".join(s.get("license", "see source") for s in sources),
        citation=CITATION,
        corpus_sha256=sha256_lines(raw),
        generator={
            "version": GENERATOR_VERSION,
            "seed": args.seed,
            "params": {
                "preprocess": {
                    "tokenizer": "sacremoses MosesTokenizer(en), escape=False, after "
                    "MosesPunctNormalizer(en)",
                    "min_tokens": prep.min_tokens,
                    "max_tokens": prep.max_tokens,
                    "deduplicate": prep.deduplicate,
                },
                "sizes": sizes,
                "wc_per_target": per_target,
                **{t.name: t.params for t in tasks},
            },
        },
        sources=sources,
        stats={
            "corpus": dict(sorted(prep.stats.items())),
            **{t.name: dict(sorted(t.stats.items())) for t in tasks},
        },
    )
    if wc.params["n_targets"] < args.wc_targets:
        manifest["generator"]["params"]["WC"]["note"] = (
            f"{args.wc_targets} targets requested; the corpus supports "
            f"{wc.params['n_targets']} with {sum(per_target.values())} sentences each"
        )
    path = write_suite(args.out, tasks, manifest)
    for t in tasks:
        print(f"{t.name}: {t.counts_summary()}  rejections: {dict(t.stats)}", file=sys.stderr)
    print(f"wrote {path.parent}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
