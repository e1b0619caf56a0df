"""TopConst sequences of the dependency -> constituency conversion on gold UD English EWT.

    python benchmarks/bench_topconst.py [--out benchmarks/results/topconst_ewt.json] [--top 20]

Converts every gold tree of ``en_ewt-ud-all.conllu.gz`` with ``dep_to_constituency`` and
counts (1) the sentences whose converted tree does not have the sentence's words in order,
(2) the top-constituent sequences TopConst keeps (``TopConst.sequence``: ending in ".", no
punctuation or quotes inside) and why the others are rejected, (3) all sequences. Figures
go to docs/annotation.md ("Constituency without a neural parser"). To measure another
version of the converter, run the script with that version's ``src`` first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections import Counter
from pathlib import Path

EWT = Path(__file__).resolve().parents[2] / "shared/data/ud/en_ewt/en_ewt-ud-all.conllu.gz"


def _words(tree) -> list[str]:
    out = []
    for c in tree[1]:
        out.extend([c] if isinstance(c, str) else _words(c))
    return out


def measure(path: Path, top: int) -> dict:
    from sentprobe.annotation.conllu import read_conllu
    from sentprobe.annotation.constituency import (
        _esc,
        dep_to_constituency,
        parse_tree,
        top_constituents,
    )
    from sentprobe.generation.syntactic import TopConst

    task = TopConst()
    kept: Counter = Counter()
    raw: Counter = Counter()
    rejected: Counter = Counter()
    n = out_of_order = 0
    for rec in read_conllu(path):
        n += 1
        tree = dep_to_constituency(rec)
        if _words(parse_tree(tree)) != [_esc(t) for t in rec.tokens]:
            out_of_order += 1
        raw[top_constituents(tree)] += 1
        seq = task.sequence(dataclasses.replace(rec, constituency=tree))
        if isinstance(seq, str):
            rejected[seq] += 1
        else:
            kept[task.class_name(seq)] += 1
    return {
        "treebank": path.name,
        "sentences": n,
        "words not in sentence order": out_of_order,
        "kept by TopConst": sum(kept.values()),
        "rejected": dict(rejected.most_common()),
        "distinct kept sequences": len(kept),
        f"top {top} kept": kept.most_common(top),
        f"top {top} of all sequences": raw.most_common(top),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--treebank", type=Path, default=EWT)
    p.add_argument("--top", type=int, default=20)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    res = measure(args.treebank, args.top)
    text = json.dumps(res, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
