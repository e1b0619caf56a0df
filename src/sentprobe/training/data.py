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

The line-based formats are streamed: ``TrainingData`` checks and counts the files in one
pass, and every later pass (vocabulary, each epoch) reads them from disk again, so memory
does not grow with the corpus. Seq2Tree and DisSent data are parsed records, held in memory
(annotation is the costly step at their scale).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
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


@dataclass(slots=True)
class Example:
    """``source`` -> ``target`` (a token string) or, for pair objectives, ``source`` +
    ``second`` -> ``label``; language modelling uses ``source`` only."""

    source: str
    target: str = ""
    second: str = ""
    label: str = ""


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    if not path.is_file():
        raise SentprobeError(f"{path}: no such file")
    return iter_lines(path)


def _columns(path: Path, n: int, line: str, count: int, what: str) -> list[str]:
    parts = line.split("\t")
    if len(parts) != count:
        found = "no tab" if len(parts) == 1 else f"{len(parts)} columns"
        raise DataError(path, n, f"expected {what} separated by tabs, found {found}")
    cols = [" ".join(p.split()) for p in parts]
    if not all(cols):
        raise DataError(path, n, f"empty column (expected {what})")
    return cols


def _stream(objective: str, path: Path) -> Iterator[Example]:
    """The examples of a line-based file, read lazily; format errors name the line."""
    if objective == "skipthought":
        previous = None
        for _, line in _lines(path):
            sentence = " ".join(line.split())
            if sentence and previous:
                yield Example(previous, sentence)
            previous = sentence or None
        return
    for n, raw in _lines(path):
        if not raw.strip():
            continue
        if objective in ("autoencoder", "lm"):
            sentence = " ".join(raw.split())
            yield Example(sentence, sentence)
        elif objective == "translation":
            yield Example(*_columns(path, n, raw, 2, "source and target"))
        else:  # nli
            premise, hypothesis, label = _columns(path, n, raw, 3, "premise, hypothesis, label")
            if label not in NLI_LABELS:
                raise DataError(path, n, f"label {label!r} is not one of {', '.join(NLI_LABELS)}")
            yield Example(premise, second=hypothesis, label=label)


def _parsed(objective: str, path: Path, annotations: Path | None, annotator: str, progress: bool):
    records = trees.annotated(path, annotations, annotator, progress)
    if objective == "seq2tree":
        return [Example(" ".join(r.tokens), trees.linearise(r)) for r in records]
    pairs = [p for r in records for p in dissent.extract_pairs(r)]
    if not pairs:
        raise DataError(path, None, "no discourse-marker pairs found (see training.dissent)")
    return [Example(p.first, second=p.second, label=p.marker) for p in pairs]


class TrainingData:
    """The examples of the data files for ``objective``, in file order, read from disk on
    every iteration (never held as a list: see the module docstring), at most
    ``max_examples``. Creating it reads every file once: format errors, too few examples
    (fewer than one batch) and the files' hashes, counts and labels come before training."""

    def __init__(
        self,
        objective: str,
        paths: Sequence[str | Path],
        *,
        batch_size: int,
        annotations: Path | None = None,
        annotator: str = "spacy",
        progress: bool = True,
        max_examples: int | None = None,
    ) -> None:
        if objective not in OBJECTIVES:
            raise SentprobeError(f"unknown objective {objective!r}; known: {', '.join(OBJECTIVES)}")
        if not paths:
            raise SentprobeError("no training data: give --data FILE (one or more)")
        self.objective, self.paths = objective, list(map(Path, paths))
        self.max_examples = max_examples or None
        self._parsed: dict[Path, list[Example]] = {}
        if objective in ("seq2tree", "dissent"):
            for p in self.paths:
                self._parsed[p] = _parsed(objective, p, annotations, annotator, progress)
        self.files: list[dict[str, object]] = []
        labels: Counter[str] = Counter()
        total = 0
        for p in self.paths:
            count = 0
            for example in self._file(p):
                count += 1
                labels[example.label] += 1
            if not count:
                empty = "no two consecutive sentences (running text expected)"
                raise DataError(
                    p, None, empty if objective == "skipthought" else "empty file (no sentences)"
                )
            self.files.append({"path": str(p), "sha256": file_sha256(p), "examples": count})
            total += count
        self.n = min(total, self.max_examples or total)
        if self.n < batch_size:
            raise DataError(
                paths[-1] if len(paths) == 1 else ", ".join(map(str, paths)),
                None,
                f"only {self.n} training examples, fewer than one batch ({batch_size}); "
                "add data or lower --batch-size",
            )
        labels.pop("", None)
        self.label_counts = dict(sorted(labels.items()))
        self.labels = sorted(labels) if objective in PAIR_OBJECTIVES else []

    def _file(self, path: Path) -> Iterator[Example]:
        return iter(self._parsed[path]) if path in self._parsed else _stream(self.objective, path)

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[Example]:
        seen = 0
        for p in self.paths:
            for example in self._file(p):
                if self.max_examples is not None and seen >= self.max_examples:
                    return
                seen += 1
                yield example
