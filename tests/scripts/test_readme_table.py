"""The README's results table is the block scripts/readme_table.py writes (.ci/run checks it
against a fresh run with ``--check``)."""

from __future__ import annotations

import pytest
import readme_table


def test_the_readme_has_one_generated_block_with_the_main_jobs_rows():
    text = readme_table.README.read_text(encoding="utf-8")
    assert text.count(readme_table.START) == 1 and text.count(readme_table.END) == 1
    block = text.split(readme_table.START, 1)[1].split(readme_table.END, 1)[0]
    rows = [line.split("|")[1].strip() for line in block.splitlines() if line.startswith("| ")]
    assert rows[-6:] == [
        "Majority",
        "Length",
        "NB-uni-tfidf",
        "NB-bi-tfidf",
        "BoV-GloVe",
        "MiniLM-L6",
    ]


def test_the_readme_table_is_rendered_markdown_with_a_one_line_legend():
    text = readme_table.README.read_text(encoding="utf-8")
    block = text.split(readme_table.START, 1)[1].split(readme_table.END, 1)[0]
    assert "```" not in block
    legend = block.strip().splitlines()[-1]
    start, end = readme_table.LEGEND.split("{marks}")
    assert legend.startswith(start) and legend.endswith(end)


def test_replace_block_swaps_only_the_block():
    readme = f"intro\n{readme_table.START}\nold\n{readme_table.END}\noutro\n"
    new = readme_table.replace_block(readme, "| new |")
    assert new == f"intro\n{readme_table.START}\n| new |\n{readme_table.END}\noutro\n"
    assert readme_table.replace_block(new, "| new |") == new


def test_the_block_keeps_the_table_and_replaces_the_ci_note_by_the_legend():
    from sentprobe.reporting.tables import CI_NOTE, NOTES

    block = readme_table.readme_block(f"| a |\n|---|\n| 1 |\n\n{CI_NOTE}")
    assert block == f"| a |\n|---|\n| 1 |\n\n{readme_table.LEGEND.format(marks='')}"
    with pytest.raises(SystemExit, match="does not cover: ° nothing here"):
        readme_table.readme_block("| a |\n\n° nothing here depends on the seed")
    # a marker the table uses gets its short words in the legend, its long note is dropped
    block = readme_table.readme_block(f"| a ∅ |\n\n{CI_NOTE}\n∅ {NOTES['∅']}")
    assert block.endswith(readme_table.LEGEND.format(marks=f"; {readme_table.SHORT['∅']}"))


def test_replace_block_refuses_a_readme_without_markers():
    with pytest.raises(ValueError, match="needs exactly one"):
        readme_table.replace_block("no markers here", "x")


def test_the_legend_covers_dev_unlike_test():
    """A README row marked ≠ (dev at majority, test above it) gets its own short words, which
    name the split's problem, not ∅'s."""
    from sentprobe.reporting.tables import CI_NOTE, NOTES

    block = readme_table.readme_block(f"| a ≠ |\n\n{CI_NOTE}\n≠ {NOTES['≠']}")
    assert block.endswith(readme_table.LEGEND.format(marks=f"; {readme_table.SHORT['≠']}"))
    assert "dev split does not represent test" in readme_table.SHORT["≠"]
