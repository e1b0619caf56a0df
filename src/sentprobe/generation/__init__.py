"""Generating probing tasks from a raw text corpus (Conneau et al. 2018, sec. 2).

Pipeline: ``read_sentences`` (stream raw text) -> ``MosesPreprocessor`` (tokenize, keep
5-28 tokens, drop repeats) -> one generator per task (``SentenceLength``, ``WordContent``,
``BigramShift``; rules as dataclass fields, defaults = the paper) -> ``write_suite``.
"""

from .base import GeneratedTask, GenerationError, make_rng
from .corpus import MosesPreprocessor, SentenceSplitter, open_text, read_sentences
from .surface import SentenceLength, WordContent
from .syntactic import BigramShift
from .writer import build_manifest, write_suite

#: Bump when a change to the generators would change the output for the same corpus + seed.
GENERATOR_VERSION = "1"

#: The generators of the parser-free tasks, by paper name.
GENERATORS = {"SentLen": SentenceLength, "WC": WordContent, "BShift": BigramShift}

__all__ = [
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
    "open_text",
    "read_sentences",
    "write_suite",
]
