"""Make the README's results table from a fresh run of the README's main job.

The README shows what ``sentprobe run`` prints on a fresh machine. This script runs exactly
that command (``sentprobe run``: MiniLM and the default baselines on ``sample-en``) with an
empty embedding cache and an empty results store in a temporary folder, and writes its
Markdown table between the README's ``readme-table`` markers, unfenced so that it renders,
with a one-line legend in place of the run's long note (a note the legend does not cover is
an error). With ``--check`` it writes nothing and exits 1, showing the difference, when the
README and the fresh run differ (``.ci/run``).

    python scripts/readme_table.py [--check]
"""

from __future__ import annotations

import argparse
import difflib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
START = "<!-- readme-table:start (scripts/readme_table.py writes this block) -->"
END = "<!-- readme-table:end -->"
LEGEND = (
    "Test accuracy (%); ±x: half the width of its 95% bootstrap confidence interval over the"
    " test items (over their word forms where the split is lexical){marks}. Every marker:"
    " [docs/legend.md](docs/legend.md)."
)
#: The legend's short words for a marker the run's table uses (its long note is replaced).
SHORT = {
    "∅": "∅: the probe says nothing there (a single class predicted, or dev at majority and"
    " test not above it)",
    "≠": "≠: dev at majority but test significantly above it: the dev split does not"
    " represent test",
    "°": "°: computed once, nothing depends on the seed",
    "‡": "‡: an older version of the task's data",
    "†": "†: the model's commit is unknown",
}


def fresh_run() -> tuple[str, float]:
    """What ``sentprobe run`` prints with an empty cache and store, and how long it took."""
    with tempfile.TemporaryDirectory(prefix="sentprobe-readme-") as tmp:
        env = dict(os.environ, SENTPROBE_CACHE=str(Path(tmp) / "cache"), HF_HUB_OFFLINE="1")
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "sentprobe", "run", "--quiet"],
            cwd=tmp,  # the default results store goes to tmp/sentprobe-results
            env=env,
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - began
    if done.returncode:
        sys.exit(f"error: sentprobe run failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout.rstrip("\n"), elapsed


def readme_block(output: str) -> str:
    """The run's table followed by the README's one-line legend."""
    from sentprobe.reporting.tables import CI_NOTE, NOTES

    lines = output.splitlines()
    table = [line for line in lines if line.startswith("|")]
    other = [line for line in lines if line.strip() and not line.startswith("|")]
    notes = {f"{mark} {text}": mark for mark, text in NOTES.items() if mark in SHORT}
    uncovered = [line for line in other if line != CI_NOTE and line not in notes]
    if not table or uncovered:
        sys.exit(
            "error: sentprobe run printed lines the README's legend does not cover: "
            + " / ".join(uncovered)
        )
    marks = "".join(f"; {SHORT[notes[line]]}" for line in other if line in notes)
    return "\n".join(table) + "\n\n" + LEGEND.format(marks=marks)


def replace_block(readme: str, block: str) -> str:
    """``readme`` with the text between the markers replaced by ``block``."""
    if readme.count(START) != 1 or readme.count(END) != 1:
        raise ValueError(f"{README.name}: needs exactly one {START!r} and one {END!r}")
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{block}\n{END}{tail}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the README differs")
    args = parser.parse_args()
    output, elapsed = fresh_run()
    old = README.read_text(encoding="utf-8")
    new = replace_block(old, readme_block(output))
    print(f"sentprobe run: {elapsed:.0f} s with an empty cache", file=sys.stderr)
    if new == old:
        print("README.md: the results table matches a fresh run", file=sys.stderr)
        return 0
    if args.check:
        diff = difflib.unified_diff(
            old.splitlines(), new.splitlines(), "README.md", "fresh run", lineterm=""
        )
        print("\n".join(diff))
        print(
            "error: README.md: the results table differs from a fresh run of `sentprobe run`;"
            " run python scripts/readme_table.py to update it",
            file=sys.stderr,
        )
        return 1
    README.write_text(new, encoding="utf-8")
    print("README.md: results table updated", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
