"""Single-position surface rules on a suite's tasks: how far above majority does each get?

    python benchmarks/surface_rules.py SUITE_DIR [--tasks BShift,SOMO,CoordInv] [--max-gain 3]

For every task of the suite (SentEval or X-Probe layout, any directory ``sentprobe`` loads),
each rule maps a sentence to one feature value; it predicts, per value, the most frequent
train label (ties and unseen values: the train majority label) and is scored on test.
Rules: identity and class of the first token, of the last token, the last character, the
number of punctuation tokens, the casing of the first word. Prints a table of accuracies
(points) and each rule's gain over majority; exits 1 if a rule of one of ``--tasks`` gains
more than ``--max-gain`` points (the altered-sentence tasks must carry no such cue).
``sentprobe audit`` implements the same rules with significance tests; this is the quick
measure used while building suites.
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

ALTERED_TASKS = ("BShift", "SOMO", "CoordInv")


def is_punct(token: str) -> bool:
    return bool(token) and all(unicodedata.category(ch)[0] in "PS" for ch in token)


def token_class(token: str) -> str:
    if is_punct(token):
        return "punct"
    if any(ch.isdigit() for ch in token):
        return "number"
    letters = [ch for ch in token if ch.isalpha()]
    if not letters:
        return "other"
    if len(letters) > 1 and all(ch.isupper() for ch in letters):
        return "all-caps"
    return "capitalised" if letters[0].isupper() else "lower"


def casing(token: str) -> str:
    letters = [ch for ch in token if ch.isalpha()]
    if not letters:
        return "no letters"
    if all(ch.isupper() for ch in letters):
        return "upper"
    if letters[0].isupper():
        return "title"
    return "lower"


def _tokens(sentence: str) -> list[str]:
    return sentence.split() or [""]


RULES: dict[str, Callable[[str], object]] = {
    "first token": lambda s: _tokens(s)[0],
    "first token class": lambda s: token_class(_tokens(s)[0]),
    "last token": lambda s: _tokens(s)[-1],
    "last token class": lambda s: token_class(_tokens(s)[-1]),
    "last character": lambda s: s.rstrip()[-1:],
    "punctuation tokens": lambda s: sum(map(is_punct, s.split())),
    "first-word casing": lambda s: casing(_tokens(s)[0]),
}


def accuracy(train: tuple[Sequence[str], Sequence[str]], test, feature=None) -> float:
    """Accuracy on test of "the most frequent train label of this feature value" (majority
    when ``feature`` is None)."""
    majority = min(Counter(train[1]).items(), key=lambda kv: (-kv[1], kv[0]))[0]
    table: dict[object, Counter] = defaultdict(Counter)
    if feature is not None:
        for s, y in zip(*train):
            table[feature(s)][y] += 1
    hits = 0
    for s, y in zip(*test):
        counts = table.get(feature(s)) if feature is not None else None
        guess = majority
        if counts:
            top = max(counts.values())
            best = sorted(lab for lab, c in counts.items() if c == top)
            guess = majority if majority in best else best[0]
        hits += guess == y
    return 100.0 * hits / max(len(test[0]), 1)


def measure(sentences_labels: dict[str, tuple[list[str], list[str]]]) -> dict[str, float]:
    """``{"majority": acc, rule: acc, ...}`` from ``{"train": (sents, labels), "test": ...}``."""
    train, test = sentences_labels["train"], sentences_labels["test"]
    out = {"majority": accuracy(train, test)}
    for name, rule in RULES.items():
        out[name] = accuracy(train, test, rule)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite", help="suite directory (SentEval or X-Probe layout)")
    ap.add_argument("--tasks", default=",".join(ALTERED_TASKS), help="tasks held to --max-gain")
    ap.add_argument("--all", action="store_true", help="report every task, not only --tasks")
    ap.add_argument("--max-gain", type=float, default=3.0, help="points above majority allowed")
    args = ap.parse_args(argv)
    from sentprobe.datasets import load_tasks

    strict = {t.strip() for t in args.tasks.split(",") if t.strip()}
    failed = []
    names = list(RULES)
    print(f"{'task':<24} {'majority':>8} " + " ".join(f"{n[:12]:>12}" for n in names))
    for task in load_tasks(args.suite):
        paper = task.metadata.paper_name or task.name
        if not args.all and paper not in strict:
            continue
        if "train" not in task.splits or "test" not in task.splits:
            continue
        data = {s: (sp.sentences, sp.labels) for s, sp in task.splits.items()}
        acc = measure(data)
        label = task.name if task.name == paper else f"{task.name} ({paper})"
        cells = []
        for n in names:
            gain = acc[n] - acc["majority"]
            flag = "!" if paper in strict and gain > args.max_gain else " "
            if flag == "!":
                failed.append(f"{label}: {n} {acc[n]:.1f} (majority {acc['majority']:.1f})")
            cells.append(f"{acc[n]:5.1f}({gain:+5.1f}){flag}")
        print(f"{label[:24]:<24} {acc['majority']:8.1f} " + " ".join(f"{c:>12}" for c in cells))
    for line in failed:
        print(f"more than {args.max_gain:g} points above majority: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
