"""Rebuild the training text of ``sentprobe train --preset demo``
(``src/sentprobe/training/demo/corpus.txt.gz``).

Source: the package corpus behind ``sample-en`` (``build_sample_suite.package_corpus``: the
redistributable English text of Debian/PyPI packages, each sentence once, in document
order), reused from ``build/sample_en/corpus.txt`` when present. The script keeps
``--blocks`` runs of ``--block`` consecutive sentences, evenly spaced over the whole corpus
(so every source contributes, and SkipThought sees real next sentences), Moses-tokenises
them as the probing suites are, drops every sentence that has the words of a ``sample-en``
sentence (lower-cased, in any order: BShift's and CoordInv's reordered items are dropped with
their original order) or differs from one in a single word (SOMO's items with their
original), and writes one sentence per line with a blank line between blocks (gzip,
reproducible bytes).

    python scripts/build_demo_corpus.py
"""

from __future__ import annotations

import argparse
import gzip
import io
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "src/sentprobe/training/demo/corpus.txt.gz"
WORK = REPO / "build/sample_en"


def _keys(sentence: str) -> list[tuple[str, ...]]:
    """The sentence's lower-cased words in any order, and in order with each word masked
    in turn: two sentences share a key if one reorders or changes one word of the other."""
    words = sentence.lower().split()
    return [("", *sorted(words))] + [
        (str(i), *words[:i], *words[i + 1 :]) for i in range(len(words))
    ]


def sample_keys() -> set[tuple[str, ...]]:
    from sentprobe.datasets.builtin import resolve_tasks

    return {k for task in resolve_tasks("sample-en") for s in task.sentences() for k in _keys(s)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=1500)
    parser.add_argument("--block", type=int, default=20)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)

    corpus = WORK / "corpus.txt"
    if not corpus.is_file():
        from build_sample_suite import package_corpus

        corpus, _, _ = package_corpus(WORK)
    lines = corpus.read_text(encoding="utf-8").splitlines()
    from sentprobe.generation.corpus import MosesPreprocessor

    moses = MosesPreprocessor(lang="en")
    probing = sample_keys()
    step = max(len(lines) // args.blocks, args.block)
    out, kept = [], 0
    for start in range(0, len(lines) - args.block + 1, step):
        block = [" ".join(moses.tokenize(s)) for s in lines[start : start + args.block]]
        block = [s for s in block if probing.isdisjoint(_keys(s))]
        if len(block) > 1:
            out.append("\n".join(block))
            kept += len(block)
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=9) as f:
        f.write(("\n\n".join(out) + "\n").encode("utf-8"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(buffer.getvalue())
    print(
        f"{args.out}: {kept} sentences in {len(out)} blocks, {len(buffer.getvalue())} bytes",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
