"""Measure every NLI labelling rule of ``sentprobe build --family kim2019`` against the DNC
release's annotators, per pattern, and write the table the generator reads.

For each mutated item of the release, the rule is applied to the annotators' label of its
*original* pair (same ``tuple_id``) and compared with the annotators' label of the item:

- Prep: the original is the member whose hypothesis contains the ``task_desc`` preposition
  and the other does not; rule: the swap is neutral;
- Comp, Quant, Spatial: the original is the member with fewer negations ("not", "n't"); rule:
  the negated hypothesis swaps entailment and contradiction;
- Negation: the original is ``unchanged-unchanged``; rule per pattern: one swap per
  negation of either side, lexical + explicit on one side cancel.

"copy" is the agreement of just copying the original's label. Tuples without an
identifiable original are skipped and counted. In Prep, Comp, Quant and Spatial every release
pair changed label, so a rule's agreement there is conditional on a change. ``reaches_bar``:
agreement of at least ``labels.MIN_RULE_AGREEMENT`` here; necessary, not sufficient: a rule
labels generated items only after an annotated sample of generated items confirms it (the
``annotated`` entry of a rule, which this script does not write).

    python scripts/measure_nli_rules.py                    # ../shared/data/dnc_function_words
    python scripts/measure_nli_rules.py --release DIR --markdown   # also print the docs table
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from sentprobe.generation.function_words.labels import (
    MIN_RULE_AGREEMENT,
    RULE_AGREEMENT_FILE,
    rule_label,
    rule_name,
)
from sentprobe.generation.function_words.release import read_release_set, release_sets

REPO = Path(__file__).resolve().parents[1]
DEFAULT_RELEASE = REPO.parent / "shared/data/dnc_function_words"
NLI_SETS = ("nli-prepositions", "nli-comparatives", "nli-quantification", "nli-spatial",
            "nli-negation")  # fmt: skip
_NEG = re.compile(r"\b(not|n't|never|no)\b|n't\b", re.IGNORECASE)


def _words(text: str) -> str:
    return " " + " ".join(re.findall(r"[a-z']+", text.lower())) + " "


def _original(set_name: str, members: list[tuple[dict, dict]]) -> int | None:
    """Index of the original pair among a tuple's members, None if it cannot be told."""
    if set_name == "nli-negation":
        found = [
            i for i, (_, m) in enumerate(members) if m["misc"]["task_desc"] == "unchanged-unchanged"
        ]
        return found[0] if len(found) == 1 else None
    if len(members) != 2:
        return None
    if set_name == "nli-prepositions":
        prep = f" {members[0][1]['misc']['task_desc'].lower()} "
        has = [prep in _words(d["hypothesis"]) for d, _ in members]
        return has.index(True) if sum(has) == 1 else None
    negs = [len(_NEG.findall(d["hypothesis"])) for d, _ in members]
    return None if negs[0] == negs[1] else negs.index(min(negs))


def measure(release: Path) -> dict[str, Any]:
    """Rule name -> {n, agree, share, copy, copy_share}, plus skipped tuples per set."""
    sets = release_sets(release)
    rules: dict[str, dict[str, Any]] = {}
    skipped: dict[str, int] = {}
    for set_name in NLI_SETS:
        tuples: dict[Any, list] = defaultdict(list)
        for data, meta in read_release_set(sets[set_name]):
            tuples[meta["misc"]["tuple_id"]].append((data, meta))
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        skipped[set_name] = 0
        for members in tuples.values():
            k = _original(set_name, members)
            if k is None:
                skipped[set_name] += 1
                continue
            original = members[k][0]["label"]
            for i, (data, meta) in enumerate(members):
                if i == k:
                    continue
                pattern = meta["misc"]["task_desc"] if set_name == "nli-negation" else ""
                entry = counts[rule_name(set_name, pattern)]
                entry[0] += 1
                entry[1] += rule_label(set_name, original, pattern) == data["label"]
                entry[2] += original == data["label"]
        for name, (n, agree, copy) in sorted(counts.items()):
            rules[name] = {
                "n": n, "agree": agree, "share": round(agree / n, 4),
                "copy": copy, "copy_share": round(copy / n, 4),
                "reaches_bar": agree / n >= MIN_RULE_AGREEMENT,
            }  # fmt: skip
    return {
        "release": "DNC function-word release (Kim et al. 2019), NLI sets",
        "min_agreement": MIN_RULE_AGREEMENT,
        "skipped_tuples": skipped,
        "rules": rules,
    }


def markdown(table: dict[str, Any]) -> str:
    lines = [
        "| rule (set: pattern) | mutated items | rule agrees | % | copying the original's "
        "label, % | 80 % here? |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, r in table["rules"].items():
        lines.append(
            f"| `{name}` | {r['n']} | {r['agree']} | {100 * r['share']:.1f} | "
            f"{100 * r['copy_share']:.1f} | {'yes' if r['reaches_bar'] else 'no'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", type=Path, default=DEFAULT_RELEASE)
    ap.add_argument("--out", type=Path, default=RULE_AGREEMENT_FILE)
    ap.add_argument("--markdown", action="store_true", help="print the docs table")
    args = ap.parse_args(argv)
    if not args.release.is_dir():
        print(f"error: {args.release}: no DNC release folder", file=sys.stderr)
        return 1
    table = measure(args.release)
    args.out.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    if args.markdown:
        print(markdown(table))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
