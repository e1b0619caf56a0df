"""Gold annotation (``conllu``): a CoNLL-U file is its own annotation."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from sentprobe.annotation.record import AnnotatedSentence

from .base import Annotator, AnnotatorError, Sentence


class ConlluAnnotator(Annotator):
    """Gold annotation: the records are the CoNLL-U file itself (``annotate_corpus`` on a
    ``.conllu`` path). It cannot annotate new text."""

    name = "conllu"

    def __init__(self, arg: str | None = None) -> None:
        self.path = arg

    def read(self, path: str | Path) -> Iterator[AnnotatedSentence]:
        from sentprobe.annotation.conllu import read_conllu

        return read_conllu(path)

    def annotate(
        self, sentences: Iterable[Sentence], *, pretokenized: bool = False
    ) -> Iterator[AnnotatedSentence]:
        if self.path is None:
            raise AnnotatorError(
                "the 'conllu' annotator reads gold annotations from a CoNLL-U file: pass the "
                "file to annotate_corpus (or name it, conllu:<path>) instead of sentences"
            )
        return self.read(self.path)
