"""Reading and checking the training data of each objective, before any training starts.

File formats (UTF-8, gzip/bz2/xz allowed, one item per line, tokens separated by spaces:
Moses-tokenised text, like the probing suites):

* ``autoencoder``, ``lm``, ``seq2tree``, ``dissent``: one sentence per line. ``seq2tree``
  and ``dissent`` parse it with sentprobe's annotator (``annotation/``; spaCy by default,
  stored and reused under ``RUN/annotations/``), or read the gold trees of a ``.conllu``
  file as they are.
* ``skipthought``: running text, one sentence per line; a blank line ends a paragraph (a
  pair never spans one, nor two files).
* ``translation``: ``source<TAB>target``.
* ``nli``: ``premise<TAB>hypothesis<TAB>label``, label in ``NLI_LABELS`` (SNLI/MultiNLI's).

Blank lines are skipped (they only end paragraphs). Problems are ``DataError``s naming the
file and line: an empty file, a line without its tab, an unknown NLI label, fewer examples
than one batch.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import DataError, SentprobeError
from ..io import file_sha256, iter_lines
from . import dissent, trees

NLI_LABELS = ("entailment", "neutral", "contradiction")
#: Objectives whose data are sentence pairs with a label (a classifier on [u, v, |u-v|, u*v]).
PAIR_OBJECTIVES = ("nli", "dissent")
#: Objectives with an LSTM decoder.
SEQ2SEQ_OBJECTIVES = ("autoencoder", "translation", "skipthought", "seq2tree")
OBJECTIVES = (*SEQ2SEQ_OBJECTIVES, *PAIR_OBJECTIVES, "lm")


@dataclass
class Example:
    """``source`` -> ``target`` (a token string) or, for pair objectives, ``source`` +
    ``second`` -> ``label``; language modelling uses ``source`` only."""

    source: str
    target: str = ""
    second: str = ""
    label: str = ""


@dataclass
class TrainingData:
    examples: list[Example]
    files: list[dict[str, object]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    if not path.is_file():
        raise SentprobeError(f"{path}: no such file")
    return iter_lines(path)


def _nonblank_raw(path: Path) -> list[tuple[int, str]]:
    rows = [(n, line) for n, line in _lines(path) if line.strip()]
    if not rows:
        raise DataError(path, None, "empty file (no sentences)")
    return rows


def _nonblank(path: Path) -> list[tuple[int, str]]:
    return [(n, " ".join(line.split())) for n, line in _nonblank_raw(path)]


def _columns(path: Path, n: int, line: str, count: int, what: str) -> list[str]:
    parts = line.split("\t")
    if len(parts) != count:
        found = "no tab" if len(parts) == 1 else f"{len(parts)} columns"
        raise DataError(path, n, f"expected {what} separated by tabs, found {found}")
    cols = [" ".join(p.split()) for p in parts]
    if not all(cols):
        raise DataError(path, n, f"empty column (expected {what})")
    return cols


def read_file(
    objective: str,
    path: Path,
    *,
    annotations: Path | None = None,
    annotator: str = "spacy",
    progress: bool = True,
) -> list[Example]:
    """The examples of one data file for ``objective``."""
    if objective in ("autoencoder", "lm"):
        return [Example(s, s) for _, s in _nonblank(path)]
    if objective == "skipthought":
        out, previous = [], None
        for _, line in _lines(path):
            sentence = " ".join(line.split())
            if sentence and previous:
                out.append(Example(previous, sentence))
            previous = sentence or None
        if not out:
            raise DataError(path, None, "no two consecutive sentences (running text expected)")
        return out
    if objective == "translation":
        return [
            Example(*_columns(path, n, raw, 2, "source and target"))
            for n, raw in _nonblank_raw(path)
        ]
    if objective == "nli":
        out = []
        for n, raw in _nonblank_raw(path):
            premise, hypothesis, label = _columns(path, n, raw, 3, "premise, hypothesis, label")
            if label not in NLI_LABELS:
                raise DataError(path, n, f"label {label!r} is not one of {', '.join(NLI_LABELS)}")
            out.append(Example(premise, second=hypothesis, label=label))
        return out
    if objective in ("seq2tree", "dissent"):
        records = trees.annotated(path, annotations, annotator, progress)
        if objective == "seq2tree":
            return [Example(" ".join(r.tokens), trees.linearise(r)) for r in records]
        pairs = [p for r in records for p in dissent.extract_pairs(r)]
        if not pairs:
            raise DataError(path, None, "no discourse-marker pairs found (see training.dissent)")
        return [Example(p.first, second=p.second, label=p.marker) for p in pairs]
    raise SentprobeError(f"unknown objective {objective!r}; known: {', '.join(OBJECTIVES)}")


def load_training_data(
    objective: str,
    paths: Sequence[str | Path],
    *,
    batch_size: int,
    annotations: Path | None = None,
    annotator: str = "spacy",
    progress: bool = True,
) -> TrainingData:
    """Every file's examples, checked; raises before anything is trained."""
    if not paths:
        raise SentprobeError("no training data: give --data FILE (one or more)")
    examples: list[Example] = []
    files: list[dict[str, object]] = []
    for p in map(Path, paths):
        part = read_file(
            objective, p, annotations=annotations, annotator=annotator, progress=progress
        )
        files.append({"path": str(p), "sha256": file_sha256(p), "examples": len(part)})
        examples.extend(part)
    if len(examples) < batch_size:
        raise DataError(
            paths[-1] if len(paths) == 1 else ", ".join(map(str, paths)),
            None,
            f"only {len(examples)} training examples, fewer than one batch ({batch_size}); "
            "add data or lower --batch-size",
        )
    labels = sorted({e.label for e in examples}) if objective in PAIR_OBJECTIVES else []
    return TrainingData(examples, files, labels)
