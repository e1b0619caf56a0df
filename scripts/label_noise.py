"""Label noise of ``sample-kim-en``: 100 items per set drawn at random (seeded), each label
judged right or wrong by hand (``scripts/data/kim_label_check.tsv``: set, pair-id, label,
label_right 1/0, a note on each wrong one, the text), and the error rate per set with its
95 % Wilson interval. A set with no judged row is shown as not judged.

    python scripts/label_noise.py --draw        # print the items to read (TSV, no judgments)
    python scripts/label_noise.py               # the table for docs and QUALITY.md

The check file must list exactly the drawn items with the sample's labels and texts: after a
rebuild that changes them, the items must be read again (``tests/scripts`` checks it).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

from sentprobe.generation.function_words.release import read_release_set, release_sets

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "src/sentprobe/datasets/data/sample_kim_en"
CHECK_FILE = REPO / "scripts/data/kim_label_check.tsv"
PER_SET, SEED = 100, 2026


def item_text(data: dict) -> str:
    return data["context"] + (f" || {data['hypothesis']}" if data.get("hypothesis") else "")


def drawn(sample: Path = SAMPLE) -> dict[str, list[dict]]:
    """Set -> the items to read: ``PER_SET`` at random (seed ``SEED``), in file order."""
    out = {}
    for name, path in release_sets(sample).items():
        items = [d for d, _ in read_release_set(path)]
        rng = np.random.default_rng(SEED)
        picked = sorted(rng.choice(len(items), min(PER_SET, len(items)), replace=False))
        out[name] = [items[i] for i in picked]
    return out


def read_checks(path: Path = CHECK_FILE) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def noise_table(sample: Path = SAMPLE, path: Path = CHECK_FILE) -> list[dict]:
    """Per set: items read, wrong labels, the rate and its 95 % Wilson interval; a check file
    that does not list exactly the drawn items (labels, texts) is an error."""
    checks = read_checks(path)
    rows = []
    for name, items in drawn(sample).items():
        mine = [c for c in checks if c["set"] == name]
        if not mine:
            rows.append({"set": name, "n": 0})
            continue
        expected = [(str(d["pair-id"]), d["label"], item_text(d)) for d in items]
        got = [(c["pair-id"], c["label"], c["text"]) for c in mine]
        if got != expected:
            raise SystemExit(f"{path}: {name}: the judged items are not the drawn ones; read again")
        wrong = sum(c["label_right"] == "0" for c in mine)
        ci = binomtest(wrong, len(mine)).proportion_ci(method="wilson")
        rows.append({"set": name, "n": len(mine), "wrong": wrong, "rate": wrong / len(mine),
                     "low": ci.low, "high": ci.high})  # fmt: skip
    return rows


def markdown(rows: list[dict]) -> str:
    lines = ["| set | items read | wrong labels | error rate | 95 % CI (Wilson) |",
             "|---|---:|---:|---:|---|"]  # fmt: skip
    for r in rows:
        if not r["n"]:
            lines.append(f"| {r['set']} | not judged for this build | - | - | - |")
            continue
        lines.append(
            f"| {r['set']} | {r['n']} | {r['wrong']} | {100 * r['rate']:.0f} % | "
            f"{100 * r['low']:.1f}-{100 * r['high']:.1f} % |"
        )
    return "\n".join(lines)


def quality_section(sample: Path = SAMPLE, path: Path = CHECK_FILE) -> str:
    """The "Label noise" section of the sample's QUALITY.md (says so when the items drawn
    from this build have not been read)."""
    head = (
        "## Label noise\n\n"
        f"{PER_SET} items per set drawn at random (seed {SEED}), each label judged right or "
        "wrong by hand (`scripts/data/kim_label_check.tsv`, one note per wrong label; "
        "`python scripts/label_noise.py`; `--draw` lists the items of a set not judged yet):"
        "\n\n"
    )
    try:
        return head + markdown(noise_table(sample, path)) + "\n"
    except (SystemExit, FileNotFoundError) as e:
        return head + f"Not measured for this build: {e}\n"


def append_quality_section(sample: Path = SAMPLE) -> None:
    """Add (or replace) the label-noise section at the end of the sample's QUALITY.md."""
    quality = sample / "QUALITY.md"
    text = quality.read_text(encoding="utf-8").split("\n## Label noise\n")[0].rstrip("\n")
    quality.write_text(text + "\n\n" + quality_section(sample), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--draw", action="store_true", help="print the items to read")
    args = ap.parse_args(argv)
    if args.draw:
        print("set\tpair-id\tlabel\tlabel_right\tnote\ttext")
        judged = {c["set"] for c in read_checks()}
        for name, items in drawn().items():
            for d in items if name not in judged else ():
                print(f"{name}\t{d['pair-id']}\t{d['label']}\t\t\t{item_text(d)}")
        return 0
    print(markdown(noise_table()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
