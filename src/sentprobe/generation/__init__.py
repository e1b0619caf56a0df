"""Generating probing tasks (Conneau et al. 2018, sec. 2; X-Probe over UD).

Raw text: ``read_sentences`` -> ``MosesPreprocessor`` (tokenize, keep 5-28 tokens, drop
repeats) -> the parser-free generators (``SentenceLength``, ``WordContent``, ``BigramShift``)
-> ``write_suite``. Annotated text (``AnnotatedSentence``): ``build_suite`` runs any of the
ten generators with a profile's rules (``paper`` for English, ``xprobe`` for UD) ->
``suite_manifest`` + ``write_generated_suite`` (SentEval or X-Probe layout). Every
generator is a dataclass whose fields are its rules.
"""

from .base import GeneratedTask, GenerationError, make_rng
from .coordination import CoordInv
from .corpus import MosesPreprocessor, SentenceSplitter, read_sentences
from .semantic import ObjNum, SubjNum, Tense
from .somo import SOMO
from .suite import ALL_GENERATORS, PROFILES, build_suite, generator_for
from .surface import SentenceLength, WordContent
from .syntactic import BigramShift, TopConst, TreeDepth
from .writer import (
    build_manifest,
    corpus_sha256,
    suite_manifest,
    write_generated_suite,
    write_suite,
)

#: Bump when a change to the generators would change the output for the same corpus + seed.
GENERATOR_VERSION = "7"

#: The generators of the parser-free tasks, by paper name.
GENERATORS = {"SentLen": SentenceLength, "WC": WordContent, "BShift": BigramShift}

__all__ = [
    "ALL_GENERATORS",
    "PROFILES",
    "SOMO",
    "CoordInv",
    "ObjNum",
    "SubjNum",
    "Tense",
    "TopConst",
    "TreeDepth",
    "build_suite",
    "corpus_sha256",
    "generator_for",
    "suite_manifest",
    "write_generated_suite",
    "GENERATORS",
    "GENERATOR_VERSION",
    "BigramShift",
    "GeneratedTask",
    "GenerationError",
    "MosesPreprocessor",
    "SentenceLength",
    "SentenceSplitter",
    "WordContent",
    "build_manifest",
    "make_rng",
    "read_sentences",
    "write_suite",
]
