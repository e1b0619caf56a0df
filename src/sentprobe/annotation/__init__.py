"""The annotation layer: CoNLL-U input, annotators by name, resumable on-disk annotation.

Generators consume ``AnnotatedSentence`` records and never care which annotator made them.
"""

from sentprobe.annotation.backends import (
    DEFAULT_ANNOTATORS,
    Annotator,
    AnnotatorError,
    annotators,
    default_annotator,
    get_annotator,
)
from sentprobe.annotation.conllu import parse_conllu, read_conllu, write_conllu
from sentprobe.annotation.constituency import (
    dep_to_constituency,
    dependency_depth,
    top_constituents,
    tree_depth,
)
from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.annotation.store import annotate_corpus, read_annotated

__all__ = [
    "DEFAULT_ANNOTATORS",
    "AnnotatedSentence",
    "Annotator",
    "AnnotatorError",
    "annotate_corpus",
    "annotators",
    "default_annotator",
    "dep_to_constituency",
    "dependency_depth",
    "get_annotator",
    "parse_conllu",
    "read_annotated",
    "read_conllu",
    "top_constituents",
    "tree_depth",
    "write_conllu",
]
