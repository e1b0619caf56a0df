"""Generating the function-word probing sets of Kim et al. (2019) from any corpus.

Acceptability (``acceptability``): wh-word swaps on single sentences, article and
conjunction swaps inside the collocations that select them ("the same", "either ... or"),
and end-of-sentence re-segmentation of adjacent sentence pairs; NLI
(``nli``): preposition swaps, negated hypotheses for comparatives, quantifiers and spatial
expressions, and the 16 explicit/lexical negation patterns (antonyms from WordNet,
``wordnet``). ``pipeline.build_function_words`` reads a corpus and writes a suite in the DNC
release format (``release``) that ``datasets.loaders.dnc`` reads like the release itself.
Every generator is registered in ``sentprobe.registry.generators`` as ``kim2019/<set>``.
"""

from sentprobe.registry import generators

from .acceptability import (
    ACCEPTABILITY_SETS,
    CoordinationCollocations,
    DefinitenessCollocations,
    EndOfSentence,
    FunctionWordSet,
    WhWords,
    collocation_note,
)
from .articles import indefinite_for, takes_an
from .labels import rule_status_markdown
from .nli import (
    NLI_SETS,
    Comparatives,
    Negation,
    Prepositions,
    Quantification,
    Spatial,
)
from .pipeline import (
    ALL_SETS,
    GENERATOR_VERSION,
    KimBuildResult,
    build_function_words,
    read_paragraphs,
    write_function_word_suite,
)
from .release import read_release_set, release_sets

for _name, _generator in {**ACCEPTABILITY_SETS, **NLI_SETS}.items():
    generators.register(f"kim2019/{_name}", _generator)

__all__ = [
    "ACCEPTABILITY_SETS",
    "ALL_SETS",
    "GENERATOR_VERSION",
    "NLI_SETS",
    "Comparatives",
    "CoordinationCollocations",
    "DefinitenessCollocations",
    "EndOfSentence",
    "FunctionWordSet",
    "KimBuildResult",
    "Negation",
    "Prepositions",
    "Quantification",
    "Spatial",
    "WhWords",
    "build_function_words",
    "collocation_note",
    "indefinite_for",
    "read_release_set",
    "release_sets",
    "read_paragraphs",
    "rule_status_markdown",
    "takes_an",
    "write_function_word_suite",
]
