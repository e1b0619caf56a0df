"""Russian with Natasha/slovnet (``natasha``): UD POS, features and dependencies."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice

from sentprobe.annotation.record import AnnotatedSentence

from .base import Annotator, Sentence, _dist_version, _require, _text, _words


class NatashaAnnotator(Annotator):
    """Russian with Natasha (slovnet): UD POS, features and dependencies; no PTB tags.

    Lemmas need pymorphy2, which imports ``pkg_resources`` (setuptools < 81); without it,
    records carry no lemmas and ``version()`` says so.
    """

    name = "natasha"
    lang = "ru"

    def __init__(self, arg: str | None = None, *, batch_size: int = 8) -> None:
        natasha = _require("natasha", "pip install 'sentprobe[multilingual]' (or ./install.sh)")
        emb = natasha.NewsEmbedding()
        self.tagger = natasha.NewsMorphTagger(emb)
        self.parser = natasha.NewsSyntaxParser(emb)
        self.tagger.batch_size = self.parser.batch_size = batch_size
        self.segmenter = natasha.Segmenter()
        try:
            self.vocab = natasha.MorphVocab()
        except Exception:  # pymorphy2 without pkg_resources
            self.vocab = None

    def version(self) -> dict[str, str]:
        return {
            "annotator": self.name,
            "natasha": _dist_version("natasha"),
            "slovnet": _dist_version("slovnet"),
            "lemmas": "pymorphy2" if self.vocab else "none",
        }

    def _tokenize(self, item: Sentence, pretokenized: bool) -> list[str]:
        words = _words(item, pretokenized)
        if words is not None:
            return words
        tokenize = _require("razdel", "pip install 'sentprobe[multilingual]'").tokenize
        return [t.text for t in tokenize(item)]

    def annotate(
        self, sentences: Iterable[Sentence], *, pretokenized: bool = False
    ) -> Iterator[AnnotatedSentence]:
        it = iter(sentences)
        while batch := list(islice(it, 512)):
            words = [self._tokenize(s, pretokenized) for s in batch]
            morph = self.tagger.map(words)
            syntax = self.parser.map(words)
            for item, m, s in zip(batch, morph, syntax):
                yield self._record(item, m.tokens, s.tokens)

    def _record(self, item: Sentence, mtoks: list, stoks: list) -> AnnotatedSentence:
        heads = [int(t.head_id) for t in stoks]
        rels = [t.rel for t in stoks]
        if heads.count(0) != 1:  # the parser may return several roots: keep the first
            first = heads.index(0) if 0 in heads else 0
            heads = [h if (i == first or h != 0) else first + 1 for i, h in enumerate(heads)]
            heads[first] = 0
            rels[first] = "root"
        lemmas = []
        if self.vocab is not None:
            lemmas = [self.vocab.lemmatize(t.text, t.pos, t.feats) for t in mtoks]
        return AnnotatedSentence(
            tokens=[t.text for t in mtoks],
            upos=[t.pos for t in mtoks],
            heads=heads,
            deprels=rels,
            lemmas=lemmas,
            feats=[dict(t.feats) for t in mtoks],
            text=_text(item),
            lang="ru",
        )
