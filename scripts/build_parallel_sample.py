#!/usr/bin/env python3
"""Regenerate sentprobe's shipped parallel sample (English-French LibreOffice help sentence
pairs, the data of ``sentprobe map-encoder --preset demo-fr``) deterministically.

    apt-get install libreoffice-help-en-us libreoffice-help-fr
    python scripts/build_parallel_sample.py [--lang fr] [--out-root src/sentprobe/datasets/data]

Pairs come from ``corpora.parallel_help`` (same page, same paragraph id, same number of
sentences, prose on both sides). Then: each distinct pair once (pages embed each other's
paragraphs), pairs whose target sentence is already paired with another English sentence
dropped (one translation serving two sources would teach the student two targets), and every
pair whose target sentence is in the shipped probing sample ``sample-<lang>`` removed (as
its Moses tokens, in any order, so BShift/CoordInv variants count too): the student is probed
on sentences it never saw while mapping. The output is ``<out-root>/parallel_en_<lang>/``:
``libreoffice-help.en-<lang>.tsv.gz`` (``english<TAB>translation``, sorted by page and
paragraph, gzip without a timestamp), ``manifest.json`` (package versions, counts) and a
``NOTICE`` with the MPL-2.0 attribution. Same packages -> byte-identical files.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import sys
from collections import Counter
from pathlib import Path

try:
    import sentprobe  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from build_multilingual_samples import COPYRIGHT, LANGUAGES, MPL
from corpora.libreoffice import help_package
from corpora.packages import package_version
from corpora.parallel_help import help_sentence_pairs

from sentprobe.datasets.parallel import shipped_parallel_path
from sentprobe.errors import SentprobeError
from sentprobe.generation.corpus import MosesPreprocessor
from sentprobe.io import atomic_write_bytes, atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "src/sentprobe/datasets/data"


def probing_sentence_keys(lang: str, data_root: Path) -> set[tuple[str, ...]]:
    """Sorted Moses tokens of every sentence of the shipped ``sample-<lang>`` suite."""
    keys = set()
    for path in sorted((data_root / f"sample_{lang}").rglob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            keys.add(tuple(sorted(line.split("\t")[0].split())))
    if not keys:
        raise SentprobeError(f"{data_root}/sample_{lang}: no probing sentences to exclude")
    return keys


def select_pairs(
    pairs: list[tuple[str, str, str]], exclude: set[tuple[str, ...]], lang: str, stats: Counter
) -> list[tuple[str, str]]:
    """Distinct pairs, one English source per translation, none in the probing sample."""
    tokenizer = MosesPreprocessor(lang=lang, min_tokens=1, max_tokens=10**6)
    seen: set[tuple[str, str]] = set()
    sources: dict[str, str] = {}
    kept = []
    for en, tr, _ in pairs:
        if (en, tr) in seen:
            stats["repeated pair"] += 1
            continue
        seen.add((en, tr))
        if sources.setdefault(tr, en) != en:
            stats["translation already paired with another English sentence"] += 1
            continue
        if tuple(sorted(tokenizer.tokenize(tr))) in exclude:
            stats[f"in the probing sample sample-{lang}"] += 1
            continue
        kept.append((en, tr))
    stats["kept"] = len(kept)
    return kept


#: The probing suites shipped with sentprobe (``sentprobe list``): the ones a demo student or
#: translation model trained on these pairs is probed on.
SHIPPED_SUITES = ("sample-en", "sample-es", "sample-fr", "sample-kim-en", "sample-ru")


def _key(tokens: list[str]) -> tuple[str, ...]:
    return tuple(sorted(t.lower() for t in tokens))


def suite_overlap(
    pairs: list[tuple[str, str]], lang: str, suites: tuple[str, ...] = SHIPPED_SUITES
) -> list[dict]:
    """Per task of ``suites``: how many test items have the tokens of a sentence on the
    English or the ``lang`` side of ``pairs`` (Moses-tokenised; lower-cased and in any order
    on both sides, so BShift-style reorderings and their original order both count)."""
    from sentprobe.datasets import resolve_tasks

    sides = {}
    for side, column in (("en", 0), (lang, 1)):
        tokenizer = MosesPreprocessor(lang=side, min_tokens=1, max_tokens=10**6)
        sides[side] = {_key(tokenizer.tokenize(pair[column])) for pair in pairs}
    rows = []
    for suite in suites:
        for task in resolve_tasks(suite):
            keys = [_key(s.split()) for s in task.splits["test"].sentences]
            rows.append(
                {"task": task.metadata.name, "test": len(keys)}
                | {side: sum(k in found for k in keys) for side, found in sides.items()}
            )
    return rows


def notice(lang: str, versions: dict[str, str]) -> str:
    name = LANGUAGES.get(lang, lang)
    text = f"""sentprobe parallel sample (English-{name}): attribution and license
=================================================================

The sentence pairs in this directory are taken from the English and {name} LibreOffice
help, Debian packages {", ".join(f"{p} {v}" for p, v in versions.items())}.
{COPYRIGHT}.
Licensed under the Mozilla Public License, v. 2.0 (reproduced below). The Source Code
Form of the help is available from The Document Foundation
(https://git.libreoffice.org/help) and in Debian's source package libreoffice.

Summary of changes: paragraph text was extracted from the HTML pages, paired by page and
paragraph id, split into sentences, filtered (prose only on both sides), deduplicated.
These files are a Larger Work containing Covered Software: the sentences remain under
the MPL-2.0.

How it was built: scripts/build_parallel_sample.py and docs/crosslingual.md in the
sentprobe repository; counts are in manifest.json.


"""
    mpl = MPL.read_text(encoding="utf-8") if MPL.is_file() else None
    return text + (mpl or "Mozilla Public License Version 2.0: https://mozilla.org/MPL/2.0/\n")


def gzip_bytes(text: str) -> bytes:
    """gzip with mtime 0 and no file name, so the same text gives the same bytes."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as f:
        f.write(text.encode("utf-8"))
    return buf.getvalue()


def build(lang: str, out_root: Path) -> dict:
    versions = {help_package(x): package_version(help_package(x)) for x in ("en", lang)}
    extraction: Counter = Counter()
    pairs = list(help_sentence_pairs(lang, extraction))
    selection: Counter = Counter()
    kept = select_pairs(pairs, probing_sentence_keys(lang, out_root), lang, selection)
    text = "".join(f"{en}\t{tr}\n" for en, tr in kept)
    path = shipped_parallel_path(lang, out_root)
    atomic_write_bytes(path, gzip_bytes(text))
    manifest = {
        "what": f"English-{LANGUAGES.get(lang, lang)} sentence pairs of the LibreOffice help",
        "file": path.name,
        "source_language": "en",
        "target_language": lang,
        "pairs": len(kept),
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "packages": versions,
        "license": "MPL-2.0",
        "extraction": dict(sorted(extraction.items())),
        "selection": dict(sorted(selection.items())),
        "builder": "scripts/build_parallel_sample.py",
    }
    atomic_write_text(
        path.parent / "manifest.json", json.dumps(manifest, indent=1, ensure_ascii=False) + "\n"
    )
    atomic_write_text(path.parent / "NOTICE", notice(lang, versions))
    return {"lang": lang, "pairs": len(kept), "bytes": path.stat().st_size}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lang", default="fr", help="target language of the pairs")
    ap.add_argument("--out-root", type=Path, default=DEFAULT_OUT)
    ap.add_argument(
        "--overlap",
        action="store_true",
        help="build nothing; print, per shipped probing task, the test items found on either "
        "side of the shipped pairs (one JSON line per task)",
    )
    args = ap.parse_args(argv)
    if args.overlap:
        from sentprobe.datasets.parallel import read_tsv_pairs

        corpus = read_tsv_pairs(shipped_parallel_path(args.lang, args.out_root))
        for row in suite_overlap(list(corpus.pairs()), args.lang):
            print(json.dumps(row, ensure_ascii=False), flush=True)
        return 0
    try:
        print(json.dumps(build(args.lang, args.out_root), ensure_ascii=False), flush=True)
    except SentprobeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
