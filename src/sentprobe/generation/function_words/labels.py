"""The labelling rules of the generated NLI sets (Kim et al. 2019, sec. 2.3), and when they
may label: a mutated pair's label would be its rule's (negating one side swaps entailment
and contradiction, two negations of one side cancel, a preposition swap is neutral), but a
rule labels items only after a fresh annotated sample of generated items confirmed it.

``RULE_AGREEMENT_FILE`` holds, per rule, its agreement with the release's annotators
(``scripts/measure_nli_rules.py``; for Prep, Comp, Quant and Spatial conditional on a change
of label, as every release pair of those sets changed label) and, under ``annotated``, the
size and agreement of an annotated sample of generated items where one was recorded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

#: The measured agreement of every labelling rule with the release's annotators
#: (``scripts/measure_nli_rules.py`` writes it; docs/function-words.md shows it).
RULE_AGREEMENT_FILE = (
    Path(__file__).resolve().parents[2] / "datasets/data/kim2019_nli_rule_agreement.json"
)
#: A rule labels items only when an annotated sample agrees with it this often...
MIN_RULE_AGREEMENT = 0.8
#: ... on at least this many annotated items.
MIN_ANNOTATED = 50
#: Sets whose mutation must change the label: the release keeps a pair of these only when its
#: two members' labels differ (not Negation, whose 16 patterns include label-keeping ones).
LABEL_MUST_CHANGE = frozenset(
    {"nli-prepositions", "nli-comparatives", "nli-quantification", "nli-spatial"}
)
FLIP = {"entailment": "contradiction", "contradiction": "entailment", "neutral": "neutral"}


#: The four mutations of one sentence, in the release's names, and how many times each
#: negates it (lexical + explicit cancel out).
PATTERNS = {"unchanged": 0, "neg": 1, "lneg": 1, "lexpneg": 2}


def rule_name(set_name: str, pattern: str = "") -> str:
    """The labelling rule of a mutated item: one per set, one per pattern for negation."""
    if set_name == "nli-negation":
        return f"{set_name}:{pattern}"
    return f"{set_name}:{'swap' if set_name == 'nli-prepositions' else 'negated-hypothesis'}"


def rule_label(set_name: str, original: str, pattern: str = "") -> str:
    """The rule's label for a mutated item of a pair labelled ``original``: a preposition swap
    -> neutral; a negated hypothesis -> entailment and contradiction swapped; a negation
    pattern -> swapped once per negation of either side (lexical + explicit cancel)."""
    if set_name == "nli-prepositions":
        return "neutral"
    if set_name == "nli-negation":
        premise, hypothesis = pattern.split("-")
        flips = PATTERNS[premise] + PATTERNS[hypothesis]
        return original if flips % 2 == 0 else FLIP[original]
    return FLIP[original]


@lru_cache(maxsize=4)
def rule_agreement(path: Path = RULE_AGREEMENT_FILE) -> dict[str, dict[str, Any]]:
    """Rule name -> {n, agree, share, ...} as measured on the release, plus ``annotated``
    ({n, agree, share} on an annotated sample of generated items) where one was recorded."""
    if not path.is_file():
        return {}
    return json.loads(path.read_text("utf-8"))["rules"]


def rule_verified(name: str, table: dict[str, dict[str, Any]] | None = None) -> bool:
    """Whether rule ``name`` may label items: an annotated sample of at least
    ``MIN_ANNOTATED`` generated items agreed with it on ``MIN_RULE_AGREEMENT`` of them."""
    entry = (rule_agreement() if table is None else table).get(name) or {}
    sample: dict[str, Any] = entry.get("annotated") or {}
    return sample.get("n", 0) >= MIN_ANNOTATED and sample.get("share", 0) >= MIN_RULE_AGREEMENT


def rule_status_markdown(
    set_names: Sequence[str], annotated: dict[str, dict[str, Any]] | None = None
) -> str:
    """QUALITY.md's table of the labelling rules of ``set_names``: agreement with the
    release's annotators (conditional on a change of label where the set requires one), the
    annotated sample of generated items (size, agreement) and whether the rule labels.
    ``annotated``: the suite's own samples (``manifest.json`` -> ``annotation.rules``, written
    by ``sentprobe annotate import``: n, agree, share, ci95, confirmed), which take the place of
    the package's record."""
    table = rule_agreement()
    annotated = annotated or {}
    names = sorted(n for n in {*table, *annotated} if n.split(":")[0] in set_names)
    rows = []
    for name in names:
        entry = table.get(name)
        release = f"{100 * entry['share']:.1f} % of {entry['n']}" if entry else "-"
        if name in annotated:
            own = annotated[name]
            lo, hi = own["ci95"]
            checked = f"{100 * own['share']:.1f} % of {own['n']} (95 % CI {lo}-{hi})"
            labels = bool(own["confirmed"])
        else:
            sample = (entry or {}).get("annotated")
            checked = "none" if not sample else f"{100 * sample['share']:.1f} % of {sample['n']}"
            labels = rule_verified(name)
        rows.append(f"| {name} | {release} | {checked} | {'yes' if labels else 'no'} |")
    return "\n".join(
        [
            "Labelling rules of the NLI sets. Release: agreement with the release's annotators "
            "(Prep, Comp, Quant, Spatial: given that the label changed, as every release pair "
            "of those sets did). Annotated sample: agreement with annotators' votes on "
            f"generated items of this suite (the rule labels only with >= {MIN_ANNOTATED} items "
            f"and >= {100 * MIN_RULE_AGREEMENT:.0f} %); otherwise mutated items have no label "
            "and await annotation.",
            "",
            "| rule | release | annotated sample | labels |",
            "|---|---:|---:|---|",
            *rows,
        ]
    )


def keeps_label(set_name: str, original: str) -> bool:
    """Whether the set's mutation would leave a pair labelled ``original`` as it is (a
    neutral pair's negated hypothesis or swapped preposition) in a set whose mutation must
    change the label: such a pair is not used."""
    return set_name in LABEL_MUST_CHANGE and rule_label(set_name, original) == original
