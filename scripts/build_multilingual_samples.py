#!/usr/bin/env python3
"""Regenerate sentprobe's built-in multilingual samples (``sample-fr``, ``sample-es``,
``sample-ru``) deterministically.

The corpus of each language is the prose of the LibreOffice help in that language (Debian
packages under the MPL-2.0), parsed with sentprobe's offline default parser for the language
(spaCy fr_core_news_md, spaCy es_core_news_sm, natasha):

    apt-get install libreoffice-help-fr libreoffice-help-es libreoffice-help-ru

Usage (from the repository root):

    python scripts/build_multilingual_samples.py [--langs fr,es,ru] [--sizes auto:1000,200,200]
        [--out-root src/sentprobe/datasets/data] [--work /tmp/sentprobe-multilingual] [--seed 2018]
        [--gold-ud ../shared/data/ud]

Each language gets ``<out-root>/sample_<lang>/``: X-Probe's layout ``<lang>/<task>/{tr,va,te}.txt``
for the nine X-Probe tasks, each at the largest balanced size the text supports up to the
given sizes, a ``manifest.json`` naming the suite ``sample-<lang>`` (with package versions,
parser versions and the corpus SHA-256), ``QUALITY.md`` and a ``NOTICE`` with the MPL-2.0
attribution. Same packages + same parser versions + same seed -> byte-identical files.
Parsing is stored in ``--work`` and reused by a rerun.

``--gold-ud DIR`` (default ``../shared/data/ud`` beside the repository, when there): the
Tense label accuracy of the language's annotator on the gold UD treebank's dev and test
files (``DIR/<lang>_*/*-ud-{dev,test}.conllu*``;
``sentprobe.analysis.agreement.gold_label_accuracy``) goes into ``QUALITY.md`` and into
``manifest.json`` (``label_accuracy``); ``--gold-ud none`` leaves it out.

``--min-test N`` (default 193, ``min_test_items()``: what two rows 10 points apart need to be
told apart): a task whose largest test split the text can fill is smaller is refused, not
shipped too small to compare rows on (``--min-test 0`` builds it anyway).

``--skip-failed``: a task the text cannot fill (even at one unit, or at ``--min-test``) is
refused instead of failing the build; the refusal and its reason go into ``manifest.json``
(``refused``) and QUALITY.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

try:
    import sentprobe  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from corpora.libreoffice import help_package, help_pages, libreoffice_help_sentences
from corpora.packages import package_version

from sentprobe.analysis.agreement import gold_accuracy_markdown, gold_label_accuracy
from sentprobe.analysis.quality import write_quality_report
from sentprobe.errors import SentprobeError
from sentprobe.generation.autosize import AutoSizes, min_test_items
from sentprobe.generation.pipeline import build
from sentprobe.io import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "src/sentprobe/datasets/data"
DEFAULT_WORK = Path("/tmp/sentprobe-multilingual")
DEFAULT_GOLD = ROOT.parent / "shared/data/ud"
LANGUAGES = {"fr": "French", "es": "Spanish", "ru": "Russian"}
MPL = Path("/usr/share/common-licenses/MPL-2.0")

CITATION = (
    "Ravishankar, Øvrelid, Velldal (2019). Probing Multilingual Sentence Representations "
    "With X-Probe. RepL4NLP 2019; Conneau, Kruszewski, Lample, Barrault, Baroni (2018). What "
    "you can cram into a single $&!#* vector: Probing sentence embeddings for linguistic "
    "properties. ACL 2018. (Task definitions; the sentences come from the LibreOffice help.)"
)
COPYRIGHT = (
    "Copyright 2000, 2010 Oracle and/or its affiliates; Copyright (c) 2000, 2010 "
    "LibreOffice contributors and/or their affiliates"
)


def corpus_file(lang: str, work: Path) -> tuple[Path, dict]:
    """The help's sentences, one a line, in ``work``; and what the extraction counted."""
    package = help_package(lang)
    version = package_version(package)  # a clear error naming the package if missing
    stats: Counter = Counter({"pages": len(help_pages(lang))})
    lines = list(libreoffice_help_sentences(lang, stats))
    path = work / lang / "corpus.txt"
    atomic_write_text(path, "".join(line + "\n" for line in lines))
    return path, {"package": package, "version": version, "extraction": dict(sorted(stats.items()))}


def notice(lang: str, source: dict) -> str:
    """The NOTICE file: where the sentences come from, what was changed, the MPL-2.0 text."""
    name = LANGUAGES.get(lang, lang)
    text = f"""sentprobe sample suite "sample-{lang}": attribution and license
{"=" * (57 + len(lang))}

The sentences in this directory are taken from the {name} LibreOffice help,
Debian package {source["package"]} {source["version"]}.
{COPYRIGHT}.
Licensed under the Mozilla Public License, v. 2.0 (reproduced below). The Source Code
Form of the help is available from The Document Foundation
(https://git.libreoffice.org/help) and in Debian's source package libreoffice.

Summary of changes: paragraph text was extracted from the HTML pages, split into
sentences, filtered (prose only, no code, menu paths or untranslated English),
tokenized, parsed, and sampled into probing tasks; in BShift two adjacent tokens are
swapped, in SOMO one word is replaced by another, in CoordInv two clauses swap places.
These files are a Larger Work containing Covered Software: the sentences remain under
the MPL-2.0.

How the suite was built: scripts/build_multilingual_samples.py and docs/multilingual.md
in the sentprobe repository; details and counts are in manifest.json and QUALITY.md.


"""
    if MPL.is_file():
        text += MPL.read_text(encoding="utf-8")
    else:
        text += "Mozilla Public License Version 2.0: https://mozilla.org/MPL/2.0/\n"
    return text


def gold_files(lang: str, gold_ud: Path) -> list[Path]:
    """The dev and test files of the language's gold UD treebanks under ``gold_ud``."""
    found = [
        p
        for split in ("dev", "test")
        for p in sorted(gold_ud.glob(f"{lang}_*/{lang}_*-ud-{split}.conllu*"))
    ]
    if not found:
        raise SentprobeError(f"{gold_ud}: no {lang}_*/*-ud-dev/test.conllu treebank for {lang}")
    return found


def label_accuracy(lang: str, args: argparse.Namespace) -> dict | None:
    """Tense label accuracy on gold UD (None without ``--gold-ud``), parses kept in work."""
    if args.gold_ud is None:
        return None
    files = gold_files(lang, args.gold_ud)
    result = gold_label_accuracy(files, lang, store=args.work / "gold-ud" / lang)
    result["gold"] = [f"{p.parent.name}/{p.name}" for p in files]  # no machine paths
    return result


def with_accuracy(quality: str, accuracy: dict | None) -> str:
    """QUALITY.md with the label-accuracy section before the generation settings."""
    if accuracy is None:
        section = (
            "## Label accuracy against gold UD\n\nNot measured in this build (no gold UD "
            "treebank given: --gold-ud).\n"
        )
    else:
        section = gold_accuracy_markdown(accuracy)
    marker = "## Generation settings"
    if marker not in quality:
        return quality.rstrip("\n") + "\n\n" + section
    head, tail = quality.split(marker, 1)
    return head + section + "\n" + marker + tail


def with_refused(quality: str, failures: dict[str, str]) -> str:
    """QUALITY.md with the tasks the text could not fill, and why, after the title."""
    if not failures:
        return quality
    lines = ["## Tasks refused", ""]
    lines += [f"- {task}: {why}" for task, why in sorted(failures.items())]
    title, _, rest = quality.partition("\n\n")
    return title + "\n\n" + "\n".join(lines) + "\n\n" + rest


def build_language(lang: str, args: argparse.Namespace) -> dict:
    """Build one sample suite into ``<out-root>/sample_<lang>``; returns a summary."""
    start = time.perf_counter()
    corpus, source = corpus_file(lang, args.work)
    suite_dir = args.work / lang / f"sample_{lang}"
    result = build(
        corpus,
        suite_dir,
        lang=lang,
        sizes=args.sizes,
        seed=args.seed,
        layout="xprobe",
        progress=not args.quiet,
        skip_failed=args.skip_failed,
    )
    if result.failures and not args.skip_failed:
        raise SentprobeError(
            f"{lang}: could not build {', '.join(result.failures)}: "
            + " | ".join(result.failures.values())
        )
    write_quality_report(suite_dir, result)
    refused = {t: why.removeprefix(f"{t}: ") for t, why in sorted(result.failures.items())}
    accuracy = label_accuracy(lang, args)
    manifest = json.loads((suite_dir / "manifest.json").read_text(encoding="utf-8"))
    name = LANGUAGES.get(lang, lang)
    manifest.update(
        {
            "suite": f"sample-{lang}",
            "description": f"A small {name} sample of {len(manifest['tasks'])} of the nine "
            "X-Probe probing tasks (Ravishankar et al. 2019), built with sentprobe's rules "
            "(balanced, disjoint splits, lexical splits by word form, no casing cue) from the "
            "LibreOffice help, each task at the largest balanced size the text supports up to "
            f"{'/'.join(map(str, args.sizes.largest))} and with at least {args.sizes.min_test} "
            "test items (the others are refused: QUALITY.md). Technical prose: not comparable "
            "in number to X-Probe's Wikipedia sets.",
            "source": f"the {name} LibreOffice help ({source['package']} {source['version']})",
            "license": "MPL-2.0",
            "citation": CITATION,
            "extraction": source["extraction"],
            "label_accuracy": None if accuracy is None else {"Tense": accuracy},
            "refused": refused,
        }
    )
    out = args.out_root / f"sample_{lang}"
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(suite_dir / lang, out / lang)
    quality = (suite_dir / "QUALITY.md").read_text(encoding="utf-8")
    quality = quality.replace(f"Quality report: sample_{lang}", f"Quality report: sample-{lang}")
    quality = quality.replace(f"- corpus: {corpus}", f"- corpus: {manifest['source']}")
    quality = with_accuracy(quality, accuracy)
    quality = with_refused(quality, refused)
    atomic_write_text(out / "QUALITY.md", quality)
    atomic_write_text(
        out / "manifest.json", json.dumps(manifest, indent=1, ensure_ascii=False) + "\n"
    )
    atomic_write_text(out / "NOTICE", notice(lang, source))
    for path in out.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    sizes = {
        t: [sum(c[s].values()) for s in ("train", "dev", "test")]
        for t, c in ((k, v["counts"]) for k, v in manifest["tasks"].items())
    }
    summary = {"lang": lang, "seconds": round(time.perf_counter() - start, 1), "sizes": sizes}
    if result.failures:
        summary["refused"] = sorted(result.failures)
    if accuracy is not None:
        summary["tense_label_accuracy"] = accuracy["accuracy"]
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--langs", default="fr,es,ru", help="comma-separated language codes")
    ap.add_argument("--sizes", default="auto:1000,200,200", help="auto or auto:TRAIN,DEV,TEST")
    ap.add_argument("--out-root", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK, help="corpus and annotations")
    ap.add_argument("--seed", type=int, default=2018)
    ap.add_argument(
        "--gold-ud",
        default=str(DEFAULT_GOLD) if DEFAULT_GOLD.is_dir() else "none",
        help="folder of gold UD treebanks for the Tense label accuracy, or none",
    )
    ap.add_argument(
        "--min-test",
        type=int,
        default=min_test_items(),
        help="refuse a task whose largest test split is smaller (default: %(default)s, what "
        "two rows 10 points apart need); 0 builds every task",
    )
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument(
        "--skip-failed",
        action="store_true",
        help="refuse (leave out, with the reason in manifest and QUALITY.md) a task the text "
        "cannot fill, instead of failing",
    )
    args = ap.parse_args(argv)
    try:
        args.gold_ud = None if args.gold_ud == "none" else Path(args.gold_ud)
        args.sizes = AutoSizes.parse(args.sizes)
        if args.sizes is None:
            raise SentprobeError("--sizes must be auto or auto:TRAIN,DEV,TEST")
        args.sizes = dataclasses.replace(args.sizes, min_test=args.min_test)
        langs = [lang.strip() for lang in args.langs.split(",") if lang.strip()]
        for lang in langs:  # check every package first: fail before hours of parsing
            package_version(help_package(lang))
        for lang in langs:
            summary = build_language(lang, args)
            print(json.dumps(summary, ensure_ascii=False), flush=True)
    except SentprobeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
