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

``lang="en"`` picks ``paper``, any other language ``xprobe``. ``bands="auto"`` replaces the
profile's frequency bands by those of the corpus's size tier (``autosize.BAND_TIERS``: the
paper's bands from 10M tokens on, lower bounds relaxed to 1 below). ``LANGUAGE_DEFAULTS`` adds
per-language rules (German nouns keep their capital in CoordInv; a per-language band would go
here and win over the tier). ``params`` overrides anything, per task:
``params={"Tense": {"freq_band": (50, 8000)}}``. ``sizes=AutoSizes()`` gives each task the
largest balanced sizes the corpus supports (``autosize``).

Precedence, lowest first: profile, band tier, ``LANGUAGE_DEFAULTS``, ``params``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal

from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.datasets.task import PAPER_TASKS
from sentprobe.progress import tqdm
from sentprobe.registry import generators

from .autosize import (
    LEXICAL_TASKS,
    POWER_POINTS,
    WC_FIRST_RANKS,
    AutoSizes,
    band_tier,
    choose_depths,
    choose_wc,
    corpus_tokens,
    largest_task,
)
from .base import GeneratedTask, GenerationError
from .coordination import CoordInv
from .inputs import surface
from .semantic import ObjNum, SubjNum, Tense
from .somo import SOMO
from .surface import SentenceLength, WordContent
from .syntactic import BigramShift, TopConst, TreeDepth

__all__ = [
    "ALL_GENERATORS",
    "XPROBE_TASKS",
    "AutoSizes",
    "band_params",
    "LANGUAGE_DEFAULTS",
    "PROFILES",
    "XPROBE_LABELS",
    "XPROBE_TREE_DEPTHS",
    "build_suite",
    "generator_for",
    "is_tree",
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
for _name, _generator in ALL_GENERATORS.items():
    generators.register(_name, _generator)

#: The nine tasks of X-Probe (the paper's ten without TopConst), in the paper's order.
XPROBE_TASKS = tuple(t for t in PAPER_TASKS if t != "TopConst")

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


def generator_for(
    task: str,
    lang: str,
    profile: str | None = None,
    defaults: Mapping | None = None,
    **overrides,
):
    """The generator for ``task`` with the profile's rules, then ``defaults`` (e.g. a band
    tier's), the language's rules, then ``overrides``."""
    if task not in generators:  # built-ins first, in the paper's order, then plug-ins
        known = dict.fromkeys([*ALL_GENERATORS, *generators.names()])
        raise ValueError(f"unknown task {task!r}; known: {', '.join(known)}")
    profile = profile or ("paper" if lang == "en" else "xprobe")
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    kwargs = dict(PROFILES[profile].get(task, {}))
    if task == "TreeDepth" and profile == "xprobe":
        kwargs["depths"] = XPROBE_TREE_DEPTHS.get(lang, DEFAULT_XPROBE_DEPTHS)
    kwargs |= dict(defaults or {})
    kwargs |= LANGUAGE_DEFAULTS.get(lang, {}).get(task, {})
    kwargs |= overrides
    return generators.get(task)(**kwargs)


def is_tree(heads: Sequence[int]) -> bool:
    """Whether 1-based ``heads`` (0 = root) form one tree: one root, every word reaches it,
    no cycle. Parsers occasionally emit a cycle (natasha: ``[2, 1, ...]``), which would
    break every tree-walking rule; an empty list (no parse) passes for the surface tasks."""
    n = len(heads)
    if n and sum(1 for h in heads if h == 0) != 1:
        return False
    state = [0] * n  # 0 unseen, 1 on the current path, 2 reaches the root
    for start in range(n):
        path = []
        i = start
        while 0 <= i < n and state[i] == 0:
            state[i] = 1
            path.append(i)
            h = heads[i]
            if not 0 <= h <= n:
                return False
            i = h - 1
        if 0 <= i < n and state[i] == 1:
            return False  # came back to the current path: a cycle
        for j in path:
            state[j] = 2
    return True


def prepare(
    sentences: Sequence[AnnotatedSentence], min_tokens: int, max_tokens: int, stats: Counter
) -> list[AnnotatedSentence]:
    """Keep records of ``min_tokens``-``max_tokens`` surface tokens, each surface string once.

    Records whose heads are not one tree (a parser error) are rejected. A token with a
    space inside (UD French and Finnish write "25 000" as one token) is rejected too:
    written out space-separated it would become two tokens, so the sentence in the task
    file would not have the length (SentLen) or token positions its label is from.
    """
    seen: set[str] = set()
    out = []
    for sent in sentences:
        units = surface(sent).units
        if any(not u or any(ch.isspace() for ch in u) for u in units):
            stats["rejected: token with a space inside"] += 1
            continue
        if not is_tree(sent.heads):
            stats["rejected: heads do not form one tree (parser error)"] += 1
            continue
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


def band_params(n_tokens: int, tasks: Sequence[str]) -> tuple[dict[str, dict], dict]:
    """The band tier's ``freq_band`` per task (lexical tasks and SOMO) for a corpus of
    ``n_tokens`` tokens, and a record of the tier for the manifest."""
    tier = band_tier(n_tokens)
    out = {t: {"freq_band": tier.lexical} for t in tasks if t in LEXICAL_TASKS}
    if "SOMO" in tasks:
        out["SOMO"] = {"freq_band": tier.somo}
    info = {
        "rule": "auto",
        "tier": tier.name,
        "corpus_tokens": n_tokens,
        "lexical": list(tier.lexical),
        "somo": list(tier.somo),
        "why": tier.why,
    }
    return out, info


def _n_classes(gen) -> int:
    """Classes a generator will produce (before it has seen the corpus)."""
    if isinstance(gen, WordContent):
        return gen.n_targets
    if isinstance(gen, TopConst):
        return gen.n_frequent + 1
    return len(gen.labels)


def _auto_generate(
    name: str,
    gen,
    corpus: Sequence[AnnotatedSentence],
    auto: AutoSizes,
    seed: int,
    explicit: Mapping,
) -> GeneratedTask:
    """``gen``'s task at the largest sizes the corpus supports, with WC's targets and
    TreeDepth's range chosen for the corpus unless given explicitly (``autosize``)."""
    info: dict = {"mode": auto.describe()}
    upper = None
    if isinstance(gen, WordContent) and not {"n_targets", "first_rank"} & set(explicit):
        rank, n, upper, tried = choose_wc(corpus, auto, gen)
        info["wc_ranks_tried"] = tried
        if n == 0:
            need = sum(auto.per_class(1).values())
            raise GenerationError(
                f"WC: no target window starting at a rank in {list(WC_FIRST_RANKS)} has a "
                f"word with {need} sentences containing it exactly once and no other target; "
                f"the corpus ({len(corpus)} sentences) is too small for WC"
            )
        changed = {"first_rank": [gen.first_rank, rank], "n_targets": [gen.n_targets, n]}
        changed = {k: v for k, v in changed.items() if v[0] != v[1]}
        if changed:
            info["relaxed"] = changed
        gen = dataclasses.replace(gen, first_rank=rank, n_targets=n)
    if isinstance(gen, TreeDepth) and "depths" not in explicit:
        depths, depth_info = choose_depths(gen, corpus, auto)
        info["tree_depth"] = depth_info
        if depths != tuple(gen.depths):
            info["relaxed"] = {"depths": [list(gen.depths), list(depths)]}
        gen = dataclasses.replace(gen, depths=depths)
    n_classes = _n_classes(gen)
    if hasattr(gen, "scan"):  # scan the corpus once, draw every size the search tries
        scanned = gen.scan(corpus)
        make = lambda sizes: gen.draw(scanned, sizes, seed)  # noqa: E731
    else:
        make = lambda sizes: gen.generate(corpus, sizes, seed)  # noqa: E731
    task, k = largest_task(make, auto, n_classes, len(corpus), name, upper)
    n_test = auto.sizes(k, n_classes)["test"]
    if n_test < auto.min_test:
        raise GenerationError(
            f"{name}: the corpus fills only {n_test} test items ({auto.per_class(k)['test']} "
            f"per class); two rows {POWER_POINTS:.0f} points apart need {auto.min_test} to be "
            "told apart (a larger corpus, or fixed --sizes to build it anyway)"
        )
    info["units"] = k
    info["per_class"] = auto.per_class(k)
    info["bound"] = "largest sizes" if k >= auto.max_units(n_classes) else "corpus"
    task.params = task.params | {"sizes": info}
    return task


def build_suite(
    annotated_sentences: Sequence[AnnotatedSentence],
    tasks: Sequence[str] = tuple(ALL_GENERATORS),
    sizes: Mapping[str, int] | AutoSizes | None = None,
    seed: int = 2018,
    lang: str = "en",
    layout: Literal["senteval", "xprobe"] = "senteval",
    profile: str | None = None,
    min_tokens: int = 5,
    max_tokens: int = 28,
    params: Mapping[str, Mapping] | None = None,
    bands: Literal["profile", "auto"] = "profile",
    failures: dict[str, str] | None = None,
    progress: bool = False,
) -> list[GeneratedTask]:
    """Generate ``tasks`` from one annotated corpus; labels in the ``layout``'s vocabulary.

    ``sizes`` default to the paper's 100k/10k/10k; ``AutoSizes()`` picks the largest the
    corpus supports, per task. ``bands="auto"``: frequency bands by corpus size (recorded
    in each lexical task's and SOMO's ``params["bands"]``). Each task's ``stats`` starts with
    the corpus filter's counts (``corpus: ...``). A GenerationError names the task that
    could not be filled and what to relax; with ``failures`` given, it is recorded there
    (task -> message) and the other tasks are still made (the corpus is filtered once).
    """
    if bands not in ("profile", "auto"):
        raise ValueError(f"bands must be 'profile' or 'auto', not {bands!r}")
    auto = sizes if isinstance(sizes, AutoSizes) else None
    fixed: dict[str, int] = (
        {}
        if isinstance(sizes, AutoSizes)
        else dict(sizes or {"train": 100_000, "dev": 10_000, "test": 10_000})
    )
    corpus_stats: Counter = Counter()
    corpus = prepare(annotated_sentences, min_tokens, max_tokens, corpus_stats)
    tier, tier_info = band_params(corpus_tokens(corpus), tasks) if bands == "auto" else ({}, {})
    out = []
    bar = tqdm(tasks, desc="generating", unit="task", disable=not progress)
    for name in bar:
        bar.set_postfix_str(name)
        explicit = dict((params or {}).get(name, {}))
        gen = generator_for(name, lang, profile, tier.get(name), **explicit)
        try:
            if auto is not None:
                task = _auto_generate(name, gen, corpus, auto, seed, explicit)
            else:
                task = gen.generate(corpus, fixed, seed)
        except GenerationError as exc:
            if failures is None:
                raise
            failures[name] = str(exc)
            continue
        if name in tier and tuple(getattr(gen, "freq_band", ())) == tier[name]["freq_band"]:
            task.params = task.params | {"bands": tier_info}
        task.stats.update({f"corpus: {k}": v for k, v in corpus_stats.items()})
        task.params = task.params | {"min_tokens": min_tokens, "max_tokens": max_tokens}
        if layout == "xprobe":
            task = relabel(task, XPROBE_LABELS.get(name, {}))
        elif layout != "senteval":
            raise ValueError(f"layout must be 'senteval' or 'xprobe', not {layout!r}")
        out.append(task)
    return out
