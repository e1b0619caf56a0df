"""Annotators chosen by name: ``spacy:<model>``, ``natasha``, ``conllu``, and optional back-ends
(``stanza:<lang>``, ``udpipe:<file>``, ``benepar:<model>``, ``linkgrammar[:<base>]``), one
module each.

``sentprobe.registry.annotators`` maps a back-end name to a factory called with the part after
the colon (``spacy:fr_core_news_md`` -> ``SpacyAnnotator("fr_core_news_md")``); packages can add
back-ends through the ``sentprobe.annotators`` entry-point group. Back-ends import their
parsing library only when built, so importing this package is cheap.
"""

from __future__ import annotations

from sentprobe.registry import annotators

from .base import (
    DEFAULT_ANNOTATORS,
    Annotator,
    AnnotatorError,
    Sentence,
    default_annotator,
    get_annotator,
)
from .benepar import BeneparAnnotator
from .gold import ConlluAnnotator
from .linkgrammar import LinkGrammarAnnotator
from .natasha import NatashaAnnotator
from .spacy import SpacyAnnotator
from .stanza import StanzaAnnotator
from .udpipe import UDPipeAnnotator

annotators.register("spacy", SpacyAnnotator)
annotators.register("natasha", NatashaAnnotator)
annotators.register("conllu", ConlluAnnotator)
annotators.register("stanza", StanzaAnnotator)
annotators.register("udpipe", UDPipeAnnotator)
annotators.register("benepar", BeneparAnnotator)
annotators.register("linkgrammar", LinkGrammarAnnotator)

__all__ = [
    "DEFAULT_ANNOTATORS",
    "Annotator",
    "AnnotatorError",
    "BeneparAnnotator",
    "ConlluAnnotator",
    "LinkGrammarAnnotator",
    "NatashaAnnotator",
    "Sentence",
    "SpacyAnnotator",
    "StanzaAnnotator",
    "UDPipeAnnotator",
    "annotators",
    "default_annotator",
    "get_annotator",
]
