"""Stanford stanza (``stanza:<lang>``), optional: ``pip install stanza`` and a downloaded model."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

from sentprobe.annotation.record import AnnotatedSentence

from .base import Annotator, AnnotatorError, Sentence, _dist_version, _require, _text, _words
from .udpipe import _feats


class StanzaAnnotator(Annotator):
    """Stanford's stanza (UD models for ~70 languages). Models are downloaded once by
    ``stanza.download(lang)``; this wrapper never downloads."""

    def __init__(self, lang: str | None = None, *, batch_size: int = 64) -> None:
        stanza = _require(
            "stanza",
            "pip install stanza, then python -c 'import stanza; stanza.download(\"<lang>\")'",
        )
        self.lang = lang or "en"
        self.name = f"stanza:{self.lang}"
        self._stanza = stanza
        self._pipes: dict[bool, Any] = {}
        self.batch_size = batch_size

    def _pipe(self, pretokenized: bool) -> Any:
        if pretokenized not in self._pipes:
            try:
                self._pipes[pretokenized] = self._stanza.Pipeline(
                    self.lang,
                    processors="tokenize,mwt,pos,lemma,depparse",
                    tokenize_pretokenized=pretokenized,
                    tokenize_no_ssplit=True,
                    download_method=None,
                    verbose=False,
                )
            except Exception as e:
                raise AnnotatorError(
                    f"stanza model for {self.lang!r} is not available ({e}); run "
                    f"python -c 'import stanza; stanza.download(\"{self.lang}\")'"
                ) from None
        return self._pipes[pretokenized]

    def version(self) -> dict[str, str]:
        return {"annotator": self.name, "stanza": _dist_version("stanza")}

    def annotate(
        self, sentences: Iterable[Sentence], *, pretokenized: bool = False
    ) -> Iterator[AnnotatedSentence]:
        it = iter(sentences)
        while batch := list(islice(it, self.batch_size)):
            tok = [_words(s, pretokenized) for s in batch]
            pre = tok[0] is not None
            pipe = self._pipe(pre)
            if pre:  # one document, one sentence per input
                results = [[sent] for sent in pipe(tok).sentences]
            else:
                docs = [self._stanza.Document([], text=_text(s)) for s in batch]
                results = [d.sentences for d in pipe.bulk_process(docs)]
            for item, sents in zip(batch, results):
                yield self._record(item, sents)

    def _record(self, item: Sentence, sents: list) -> AnnotatedSentence:
        words = [w for sent in sents for w in sent.words]
        offset, heads = 0, []
        for sent in sents:  # several sentences (should not happen): chain roots
            for w in sent.words:
                heads.append(w.head + offset if w.head else (0 if offset == 0 else 1))
            offset += len(sent.words)
        mwt, i = [], 0
        for sent in sents:
            for t in sent.tokens:
                if len(t.words) > 1:
                    mwt.append((i, i + len(t.words) - 1, t.text))
                i += len(t.words)
        return AnnotatedSentence(
            tokens=[w.text for w in words],
            upos=[w.upos or "_" for w in words],
            heads=heads,
            deprels=[w.deprel or "_" for w in words],
            lemmas=[w.lemma or "_" for w in words],
            xpos=[w.xpos or "_" for w in words],
            feats=[_feats(w.feats) for w in words],
            text=_text(item),
            lang=self.lang,
            mwt=mwt,
        )
