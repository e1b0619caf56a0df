"""The label-noise check of sample-kim-en (scripts/label_noise.py): the judged items are the
drawn ones, and QUALITY.md and docs/function-words.md show what the judgments give."""

from pathlib import Path

import label_noise
import pytest

REPO = Path(__file__).resolve().parents[2]


def test_judged_items_are_the_drawn_ones_and_the_tables_match():
    rows = label_noise.noise_table()
    assert {r["set"]: r["n"] for r in rows}["acceptability-whwords"] == 100
    assert {r["n"] for r in rows} <= {0, 100}  # a set is judged in full or not at all
    table = label_noise.markdown(rows)
    quality = (label_noise.SAMPLE / "QUALITY.md").read_text()
    assert quality.endswith(label_noise.quality_section())
    assert table in (REPO / "docs/function-words.md").read_text()
    wrong = [c for c in label_noise.read_checks() if c["label_right"] == "0"]
    assert all(c["note"] for c in wrong)  # every wrong label says why


def test_a_check_file_for_other_items_is_refused(tmp_path):
    lines = label_noise.CHECK_FILE.read_text().splitlines()
    cells = lines[1].split("\t")
    cells[2] = {"acceptable": "unacceptable", "unacceptable": "acceptable"}[cells[2]]
    lines[1] = "\t".join(cells)  # a label that is not the sample's
    bad = tmp_path / "check.tsv"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(SystemExit, match="not the drawn ones"):
        label_noise.noise_table(path=bad)
