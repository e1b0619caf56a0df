"""Measure the side cues of function-word sets generated from any text: build the four
acceptability sets (``build_function_words``, all the corpus supports) in a temporary folder
and print, per set, the gain over majority of the segment-length and article-agreement rules
and of the single-position and "contains token X" rules (``sentprobe audit``'s checks).

The acceptance bar of docs/function-words.md: none of these rules more than 3 points over
majority on any set, also on text the tests never use. Fortune cookies (Debian ``fortunes``,
not redistributable: measured, never shipped), one fortune a paragraph:

    python scripts/measure_kim_side_cues.py --fortunes /usr/share/games/fortunes
    python scripts/measure_kim_side_cues.py -c corpus.txt --running
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from sentprobe.analysis.checks import CheckOptions, audit_view, run_checks
from sentprobe.datasets.loaders.dnc import load_dnc
from sentprobe.generation.function_words import build_function_words

CHECKS = ("segment-length", "article-sound", "article-plural", "first-token", "last-token",
          "punct-count", "contains-token")  # fmt: skip


def fortune_paragraphs(folder: Path) -> str:
    """The English fortune files as running text: one fortune a paragraph."""
    out = []
    for path in sorted(folder.iterdir()):
        if path.suffix or not path.is_file() or path.name.startswith("."):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for fortune in text.split("\n%\n"):
            lines = [ln.strip() for ln in fortune.splitlines() if ln.strip()]
            if lines and not any(ln.startswith(("--", "-- ")) for ln in lines[:1]):
                out.append(" ".join(ln for ln in lines if not ln.startswith("--")))
    return "\n\n".join(out) + "\n"


def measure(corpus: list[Path], running: bool, seed: int) -> list[tuple[str, str, float, int]]:
    """(set, check, gain in points, test items) of every side-cue check on every set."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "suite"
        result = build_function_words(
            corpus, out, size=None, seed=seed, layout="running" if running else "lines",
            skip_failed=True,
        )  # fmt: skip
        for name, why in result.failures.items():
            print(f"{name}: not built ({why})", file=sys.stderr)
        rows = []
        for task in load_dnc(out):
            for f in run_checks(task, CheckOptions(baselines=False)):
                if f.check in CHECKS:
                    rows.append((task.metadata.paper_name, f.check, f.data["gain_points"],
                                 f.data["n"]))  # fmt: skip
        _ = audit_view  # the view run_checks uses: folds pooled half/half, pairs joined
        return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-c", "--corpus", type=Path, action="append", default=[])
    ap.add_argument("--running", action="store_true", help="running text (split here)")
    ap.add_argument("--fortunes", type=Path, help="a fortunes folder (one fortune a paragraph)")
    ap.add_argument("--seed", type=int, default=2019)
    args = ap.parse_args(argv)
    corpus, running = list(args.corpus), args.running
    with tempfile.TemporaryDirectory() as tmp:
        if args.fortunes:
            path = Path(tmp) / "fortunes.txt"
            path.write_text(fortune_paragraphs(args.fortunes), encoding="utf-8")
            corpus, running = [*corpus, path], True
        if not corpus:
            ap.error("give -c CORPUS or --fortunes DIR")
        rows = measure(corpus, running, args.seed)
    print("| set | check | points over majority | test items |")
    print("|---|---|---:|---:|")
    for name, check, gain, n in rows:
        print(f"| {name} | {check} | {gain:+.1f} | {n} |")
    worst = max((g for _, c, g, _ in rows if c in CHECKS[:3]), default=0.0)
    print(f"\nlargest gain of the segment-length and article rules: {worst:+.1f} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
