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


def test_replace_block_swaps_only_the_fenced_output():
    readme = f"intro\n{readme_table.START}\n```\nold\n```\n{readme_table.END}\noutro\n"
    new = readme_table.replace_block(readme, "| new |")
    assert new == f"intro\n{readme_table.START}\n```\n| new |\n```\n{readme_table.END}\noutro\n"
    assert readme_table.replace_block(new, "| new |") == new


def test_replace_block_refuses_a_readme_without_markers():
    with pytest.raises(ValueError, match="needs exactly one"):
        readme_table.replace_block("no markers here", "x")
