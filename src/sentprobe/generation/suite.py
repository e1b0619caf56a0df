"""Building a whole suite from annotated sentences: one call, one design for English and UD.

``build_suite`` filters the corpus (length, duplicates), then runs each requested
generator with the defaults of a *profile*:

========  ==========================================================================
profile   rules
========  ==========================================================================
paper     Conneau et al. 2018 (English): PTB tags, constituency TreeDepth 5-12,
          TopConst, frequency bands 100-5000 (Tense/SubjNum/ObjNum), 40-400 (SOMO)
xprobe    Ravishankar et al. 2019 over UD: UD features, dependency TreeDepth with the
          per-language class range of ``XPROBE_TREE_DEPTHS`` (3-7 in the released data
          for every language), same frequency bands (X-Probe's 100-50,000 was a defect)
========  ==========================================================================

``lang="en"`` picks ``paper``, any other language ``xprobe``. ``LANGUAGE_DEFAULTS`` adds
per-language rules (German nouns keep their capital in CoordInv). ``params`` overrides
anything, per task: ``params={"Tense": {"freq_band": (50, 8000)}}``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal

from sentprobe.annotation.record import AnnotatedSentence

from .altered import SOMO, CoordInv
from .base import GeneratedTask
from .inputs import surface
from .semantic import ObjNum, SubjNum, Tense
from .surface import SentenceLength, WordContent
from .syntactic import BigramShift, TopConst, TreeDepth

__all__ = [
    "ALL_GENERATORS",
    "LANGUAGE_DEFAULTS",
    "PROFILES",
    "XPROBE_LABELS",
    "XPROBE_TREE_DEPTHS",
    "build_suite",
    "generator_for",
    "prepare",
    "relabel",
]

ALL_GENERATORS = {
    g.name: g
    for g in (
        SentenceLength, WordContent, BigramShift, TreeDepth, TopConst,
        Tense, SubjNum, ObjNum, SOMO, CoordInv,
    )
}  # fmt: skip

#: X-Probe's TreeDepth classes per language (its released data: 3-7 everywhere).
XPROBE_TREE_DEPTHS: dict[str, tuple[int, int]] = {
    lang: (3, 7) for lang in ("en", "de", "es", "fr", "ru", "fi", "tr")
}
DEFAULT_XPROBE_DEPTHS = (3, 7)

PROFILES: dict[str, dict[str, dict]] = {
    "paper": {
        "TreeDepth": {"structure": "constituency", "depths": (5, 12)},
        "Tense": {"annotation": "ptb"},
        "SubjNum": {"annotation": "ptb"},
        "ObjNum": {"annotation": "ptb"},
        "SOMO": {"annotation": "ptb"},
    },
    "xprobe": {
        "TreeDepth": {"structure": "dependency"},  # depths from XPROBE_TREE_DEPTHS
        "Tense": {"annotation": "ud"},
        "SubjNum": {"annotation": "ud"},
        "ObjNum": {"annotation": "ud"},
        "SOMO": {"annotation": "ud"},
    },
}

#: Per-language additions to the profile.
LANGUAGE_DEFAULTS: dict[str, dict[str, dict]] = {
    "de": {"CoordInv": {"keep_case_upos": ("PROPN", "NOUN")}},
}

#: X-Probe's label names, from sentprobe's (SentEval's) ones.
XPROBE_LABELS: dict[str, dict[str, str]] = {
    "Tense": {"PAST": "Past", "PRES": "Pres"},
    "SubjNum": {"NN": "Sing", "NNS": "Plur"},
    "ObjNum": {"NN": "Sing", "NNS": "Plur"},
}


def generator_for(task: str, lang: str, profile: str | None = None, **overrides):
    """The generator for ``task`` with the profile's and language's defaults, then overrides."""
    if task not in ALL_GENERATORS:
        raise ValueError(f"unknown task {task!r}; known: {', '.join(ALL_GENERATORS)}")
    profile = profile or ("paper" if lang == "en" else "xprobe")
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    kwargs = dict(PROFILES[profile].get(task, {}))
    if task == "TreeDepth" and profile == "xprobe":
        kwargs["depths"] = XPROBE_TREE_DEPTHS.get(lang, DEFAULT_XPROBE_DEPTHS)
    kwargs |= LANGUAGE_DEFAULTS.get(lang, {}).get(task, {})
    kwargs |= overrides
    return ALL_GENERATORS[task](**kwargs)


def prepare(
    sentences: Sequence[AnnotatedSentence], min_tokens: int, max_tokens: int, stats: Counter
) -> list[AnnotatedSentence]:
    """Keep records of ``min_tokens``-``max_tokens`` surface tokens, each surface string once."""
    seen: set[str] = set()
    out = []
    for sent in sentences:
        units = surface(sent).units
        if not min_tokens <= len(units) <= max_tokens:
            stats[f"rejected: not {min_tokens}-{max_tokens} tokens"] += 1
            continue
        key = " ".join(units)
        if key in seen:
            stats["rejected: duplicate"] += 1
            continue
        seen.add(key)
        out.append(sent)
    stats["kept"] = len(out)
    return out


def relabel(task: GeneratedTask, mapping: Mapping[str, str]) -> GeneratedTask:
    """The same task with its labels renamed (labels missing from ``mapping`` unchanged)."""
    splits = {
        s: [(text, mapping.get(lab, lab)) for text, lab in ex] for s, ex in task.splits.items()
    }
    labels = [mapping.get(lab, lab) for lab in task.labels]
    return dataclasses.replace(task, labels=labels, splits=splits)


def build_suite(
    annotated_sentences: Sequence[AnnotatedSentence],
    tasks: Sequence[str] = tuple(ALL_GENERATORS),
    sizes: Mapping[str, int] | None = None,
    seed: int = 2018,
    lang: str = "en",
    layout: Literal["senteval", "xprobe"] = "senteval",
    profile: str | None = None,
    min_tokens: int = 5,
    max_tokens: int = 28,
    params: Mapping[str, Mapping] | None = None,
) -> list[GeneratedTask]:
    """Generate ``tasks`` from one annotated corpus; labels in the ``layout``'s vocabulary.

    ``sizes`` default to the paper's 100k/10k/10k. Each task's ``stats`` starts with the
    corpus filter's counts (``corpus: ...``). A GenerationError names the task that could
    not be filled and what to relax.
    """
    sizes = dict(sizes or {"train": 100_000, "dev": 10_000, "test": 10_000})
    corpus_stats: Counter = Counter()
    corpus = prepare(annotated_sentences, min_tokens, max_tokens, corpus_stats)
    out = []
    for name in tasks:
        gen = generator_for(name, lang, profile, **dict((params or {}).get(name, {})))
        task = gen.generate(corpus, sizes, seed)
        task.stats.update({f"corpus: {k}": v for k, v in corpus_stats.items()})
        task.params = task.params | {"min_tokens": min_tokens, "max_tokens": max_tokens}
        if layout == "xprobe":
            task = relabel(task, XPROBE_LABELS.get(name, {}))
        elif layout != "senteval":
            raise ValueError(f"layout must be 'senteval' or 'xprobe', not {layout!r}")
        out.append(task)
    return out
