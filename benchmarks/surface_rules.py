"""Single-position surface rules on a suite's tasks: how far above majority does each get?

    python benchmarks/surface_rules.py SUITE_DIR [--tasks BShift,SOMO,CoordInv] [--max-gain 3]

For every task of the suite (SentEval or X-Probe layout, any directory ``sentprobe`` loads),
each rule maps a sentence to one feature value; it predicts, per value, the most frequent
train label (ties and unseen values: the train majority label) and is scored on test.
Rules: identity and class of the first token, of the last token, the last character, the
number of punctuation tokens, the casing of the first word. Prints a table of accuracies
(points) and each rule's gain over majority; exits 1 if a rule of one of ``--tasks`` gains
more than ``--max-gain`` points (the altered-sentence tasks must carry no such cue).
The rules and their fitting are ``sentprobe audit``'s own (``analysis.checks.surface``); the
audit adds significance tests, this prints the plain accuracies while building suites.
"""

from __future__ import annotations

import argparse
import sys

from sentprobe.analysis.checks.surface import RULES, rule_predictions
from sentprobe.datasets.task import ALTERED_TASKS, ProbingTask, Split


def accuracy(predicted: list[str], test: Split) -> float:
    return 100.0 * sum(p == y for p, y in zip(predicted, test.labels)) / max(len(test), 1)


def measure(task: ProbingTask) -> dict[str, float]:
    """``{"majority": acc, rule name: acc, ...}`` on test, each rule fitted on train (the
    audit's own rules and fitting, without its significance test)."""
    train, test = task.splits["train"], task.splits["test"]
    out = {"majority": accuracy(rule_predictions(lambda s: None, train, test.sentences), test)}
    for rule in RULES:
        out[rule.name] = accuracy(rule_predictions(rule.feature, train, test.sentences), test)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite", help="suite directory (SentEval or X-Probe layout)")
    ap.add_argument(
        "--tasks", default=",".join(sorted(ALTERED_TASKS)), help="tasks held to --max-gain"
    )
    ap.add_argument("--all", action="store_true", help="report every task, not only --tasks")
    ap.add_argument("--max-gain", type=float, default=3.0, help="points above majority allowed")
    args = ap.parse_args(argv)
    from sentprobe.datasets import load_tasks

    strict = {t.strip() for t in args.tasks.split(",") if t.strip()}
    failed = []
    names = [rule.name for rule in RULES]
    print(f"{'task':<24} {'majority':>8} " + " ".join(f"{n[:12]:>12}" for n in names))
    for task in load_tasks(args.suite):
        paper = task.metadata.paper_name or task.name
        if not args.all and paper not in strict:
            continue
        if "train" not in task.splits or "test" not in task.splits:
            continue
        acc = measure(task)
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
