"""Parallel corpora for cross-lingual mapping: sentence pairs (source language, target language).

``sentprobe map-encoder`` trains a target-language student to reproduce a source-language
teacher on translations, so what it needs is a list of aligned pairs. Three layouts are read:

- a ``source<TAB>target`` file, one pair a line;
- Moses-style aligned files (``corpus.en`` + ``corpus.fr``): line *i* of one translates line *i*
  of the other;
- two CoNLL-U treebanks of a parallel treebank (the UD PUD treebanks), aligned by
  ``# sent_id``, each sentence's text taken from ``# text``.

A misalignment is an error naming the file and line (different line counts, a line empty on
one side only, a line without its tab): a corpus shifted by one line trains a student on
wrong translations without any visible symptom, so nothing is guessed. Lines empty on both
sides of a Moses pair are skipped (the usual way to keep document breaks aligned).

``ParallelFiles`` reads ``--parallel`` files from disk on every pass (a corpus of millions
of pairs is never held as lists); ``ParallelCorpus`` holds the pairs of one reading.

CoNLL-U is read here for its two comments only (``sent_id``, ``text``), not through
``annotation.conllu``: datasets come before annotation in the package's stages, and pairing
needs none of the syntax.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path

from sentprobe.errors import DataError, SentprobeError
from sentprobe.io import iter_lines

__all__ = [
    "ParallelCorpus",
    "ParallelFiles",
    "read_conllu_pair",
    "read_moses_pair",
    "read_parallel",
    "read_parallel_spec",
    "read_tsv_pairs",
    "shipped_parallel_path",
]

#: Where shipped parallel samples live (``parallel_en_<lang>/``, see
#: scripts/build_parallel_sample.py).
DATA_DIR = Path(__file__).parent / "data"
_CONLLU_NAME = re.compile(r"\.conllu(\.(gz|bz2|xz))?$")
#: A pair and where it came from: ``(source, target, origin)``.
Pair = tuple[str, str, str]


@dataclass
class ParallelCorpus:
    """Aligned sentence pairs and where each came from (``file:line`` or a ``sent_id``)."""

    source: list[str] = field(default_factory=list)
    target: list[str] = field(default_factory=list)
    origin: list[str] = field(default_factory=list)
    #: What reading skipped, by reason (e.g. sentences of one treebank missing in the other).
    skipped: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.source)

    def add(self, source: str, target: str, origin: str) -> None:
        self.source.append(source)
        self.target.append(target)
        self.origin.append(origin)

    def extend(self, other: ParallelCorpus) -> None:
        self.source += other.source
        self.target += other.target
        self.origin += other.origin
        for reason, n in other.skipped.items():
            self.skipped[reason] = self.skipped.get(reason, 0) + n

    def pairs(self) -> Iterator[tuple[str, str]]:
        return zip(self.source, self.target)


def _collect(pairs: Iterable[Pair], skipped: dict[str, int] | None = None) -> ParallelCorpus:
    corpus = ParallelCorpus(skipped=skipped if skipped is not None else {})
    for source, target, origin in pairs:
        corpus.add(source, target, origin)
    return corpus


def _tsv_pairs(path: str | Path) -> Iterator[Pair]:
    found = False
    for lineno, line in iter_lines(path):
        if not line.strip():
            raise DataError(path, lineno, "empty line (expected source<TAB>target)")
        if "\t" not in line:
            raise DataError(path, lineno, "no tab (expected source<TAB>target)")
        parts = line.split("\t")
        if len(parts) != 2:
            raise DataError(path, lineno, f"{len(parts) - 1} tabs (expected source<TAB>target)")
        src, tgt = (p.strip() for p in parts)
        if not src or not tgt:
            side = "source" if not src else "target"
            raise DataError(path, lineno, f"empty {side} side")
        found = True
        yield src, tgt, f"{path}:{lineno}"
    if not found:
        raise DataError(path, None, "no sentence pairs")


def read_tsv_pairs(path: str | Path) -> ParallelCorpus:
    """``source<TAB>target`` lines (plain or compressed); every line must hold one pair."""
    return _collect(_tsv_pairs(path))


def _moses_pairs(
    source_path: str | Path, target_path: str | Path, skipped: dict[str, int]
) -> Iterator[Pair]:
    src_lines, tgt_lines = iter_lines(source_path), iter_lines(target_path)
    found = False
    for lineno, (src, tgt) in enumerate(zip_longest(src_lines, tgt_lines), start=1):
        if src is None or tgt is None:
            short, long_ = (source_path, target_path) if src is None else (target_path, source_path)
            problem = f"has more lines than {short} ({lineno - 1}): the files are not aligned"
            raise DataError(long_, lineno, problem)
        s, t = src[1].strip(), tgt[1].strip()
        if not s and not t:
            skipped["empty on both sides"] = skipped.get("empty on both sides", 0) + 1
            continue
        if not s or not t:
            empty, other = (source_path, target_path) if not s else (target_path, source_path)
            raise DataError(empty, lineno, f"empty line, but line {lineno} of {other} is not")
        found = True
        yield s, t, f"{source_path}:{lineno}"
    if not found:
        raise DataError(source_path, None, "no sentence pairs")


def read_moses_pair(source_path: str | Path, target_path: str | Path) -> ParallelCorpus:
    """Two aligned files, line *i* of one the translation of line *i* of the other."""
    skipped: dict[str, int] = {}
    return _collect(_moses_pairs(source_path, target_path, skipped), skipped)


def _conllu_texts(path: str | Path) -> dict[str, tuple[str, int]]:
    """``sent_id -> (text, line of the sent_id)`` of every sentence of a CoNLL-U file."""
    out: dict[str, tuple[str, int]] = {}
    sent_id: tuple[str, int] | None = None
    text: str | None = None
    start = 0

    def finish() -> None:
        if sent_id is None:
            raise DataError(path, start, "sentence without a '# sent_id = ...' comment")
        if not text:
            raise DataError(path, sent_id[1], f"sentence {sent_id[0]!r} has no '# text = ...'")
        if sent_id[0] in out:
            raise DataError(
                path,
                sent_id[1],
                f"sent_id {sent_id[0]!r} repeated (first at line {out[sent_id[0]][1]})",
            )
        out[sent_id[0]] = (text, sent_id[1])

    in_sentence = False
    for lineno, line in iter_lines(path):
        if not line.strip():
            if in_sentence:
                finish()
            in_sentence, sent_id, text = False, None, None
            continue
        if not in_sentence:
            in_sentence, start = True, lineno
        if line.startswith("#"):
            key, sep, value = line[1:].partition("=")
            if sep and key.strip() == "sent_id":
                sent_id = (value.strip(), lineno)
            elif sep and key.strip() == "text":
                text = value.strip()
    if in_sentence:
        finish()
    if not out:
        raise DataError(path, None, "no CoNLL-U sentences")
    return out


def read_conllu_pair(source_path: str | Path, target_path: str | Path) -> ParallelCorpus:
    """A parallel treebank's two languages, paired by ``sent_id`` in the source's order.

    Sentences present on one side only are counted in ``skipped``; no shared ``sent_id`` at
    all is an error (the two files are not translations of each other)."""
    src, tgt = _conllu_texts(source_path), _conllu_texts(target_path)
    corpus = ParallelCorpus()
    for sid, (text, _) in src.items():
        if sid in tgt:
            corpus.add(text, tgt[sid][0], sid)
    if not corpus.source:
        raise SentprobeError(
            f"{source_path} and {target_path} share no sent_id: not a parallel treebank pair"
        )
    only_src, only_tgt = len(src) - len(corpus), len(tgt) - len(corpus)
    if only_src:
        corpus.skipped[f"only in {source_path}"] = only_src
    if only_tgt:
        corpus.skipped[f"only in {target_path}"] = only_tgt
    return corpus


def shipped_parallel_path(lang: str, root: str | Path = DATA_DIR) -> Path:
    """The shipped English-``lang`` pairs of the LibreOffice help (``english<TAB>target``,
    gzip): the data of ``sentprobe map-encoder --preset demo-fr``."""
    return Path(root) / f"parallel_en_{lang}" / f"libreoffice-help.en-{lang}.tsv.gz"


def _pairs(paths: Sequence[str | Path], skipped: dict[str, int]) -> Iterator[Pair]:
    """One file: ``source<TAB>target``. Two files: a parallel treebank pair if both are
    CoNLL-U (``.conllu``, optionally compressed; held in memory, treebank-sized), else
    Moses-style aligned files. Read lazily; what is skipped is counted into ``skipped``."""
    for p in paths:
        if not Path(p).is_file():
            raise DataError(p, None, "file not found")
    if len(paths) == 1:
        return _tsv_pairs(paths[0])
    if len(paths) == 2:
        a, b = paths
        conllu = [bool(_CONLLU_NAME.search(str(p))) for p in paths]
        if all(conllu):
            corpus = read_conllu_pair(a, b)
            for reason, n in corpus.skipped.items():
                skipped[reason] = skipped.get(reason, 0) + n
            return zip(corpus.source, corpus.target, corpus.origin)
        if any(conllu):
            raise SentprobeError(f"{a}, {b}: pair a CoNLL-U file with another CoNLL-U file")
        return _moses_pairs(a, b, skipped)
    raise SentprobeError(
        f"expected one source<TAB>target file or two aligned files, got {len(paths)} files"
    )


def read_parallel(paths: Sequence[str | Path]) -> ParallelCorpus:
    """The pairs of one ``--parallel`` entry (see ``_pairs``), held in memory."""
    skipped: dict[str, int] = {}
    return _collect(_pairs(paths, skipped), skipped)


def _split_specs(specs: Sequence[str]) -> list[list[str]]:
    if not specs:
        raise SentprobeError("no parallel data given")
    return [[p for p in spec.split(",") if p] for spec in specs]


def read_parallel_spec(specs: Sequence[str]) -> ParallelCorpus:
    """What ``--parallel`` takes, repeatable: ``PAIRS.tsv`` or ``SOURCE,TARGET`` (Moses files
    or two CoNLL-U treebanks); all of them concatenated in order, held in memory."""
    corpus = ParallelCorpus()
    for paths in _split_specs(specs):
        corpus.extend(read_parallel(paths))
    return corpus


class ParallelFiles:
    """``--parallel`` entries (as ``read_parallel_spec`` takes them) read from disk on every
    ``pairs()`` pass, never held as lists. Creating it reads them once, so format errors,
    the number of pairs and what was skipped are known before training starts."""

    def __init__(self, specs: Sequence[str]) -> None:
        self.specs = _split_specs(specs)
        self.skipped: dict[str, int] = {}
        self.n = sum(1 for _ in self._read(self.skipped))

    def _read(self, skipped: dict[str, int]) -> Iterator[Pair]:
        for paths in self.specs:
            yield from _pairs(paths, skipped)

    def __len__(self) -> int:
        return self.n

    def pairs(self) -> Iterator[tuple[str, str]]:
        return ((source, target) for source, target, _ in self._read({}))
