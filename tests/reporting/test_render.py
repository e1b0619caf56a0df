"""The one table renderer shared by results tables and QUALITY.md."""

from sentprobe.analysis import quality
from sentprobe.reporting import render, tables


def test_markdown_table_aligns_escapes_and_has_a_minimum_width():
    text = render.markdown_table(["task", "n"], [["a|b", 7], ["c", 123]])
    assert text == ("| task |   n |\n|------|----:|\n| a\\|b |   7 |\n| c    | 123 |\n")
    two_left = render.markdown_table(["a", "b", "c"], [["x", "y", "1"]], left=2)
    assert two_left.splitlines()[1] == "|-----|-----|----:|"


def test_latex_table_groups_rules_and_notes():
    text = render.latex_table(
        ["Encoder", "A", "B", "C"],
        [["x", "1", "2", "3"]],
        groups=["G", "G", "H"],
        notes=["a note"],
    )
    assert text.splitlines() == [
        r"\begin{tabular}{lrrr}",
        r"\toprule",
        r" & \multicolumn{2}{c}{G} & \multicolumn{1}{c}{H} \\",
        r"\cmidrule(lr){2-3} \cmidrule(lr){4-4}",
        r"Encoder & A & B & C \\",
        r"\midrule",
        r"x & 1 & 2 & 3 \\",
        r"\bottomrule",
        r"\end{tabular}",
        r"\par{\footnotesize a note}",
    ]
    assert render.latex_escape("a_b & 50% {x}") == r"a\_b \& 50\% \{x\}"


def test_quality_report_and_results_tables_use_the_same_renderer():
    assert quality.markdown_table is render.markdown_table
    assert tables.markdown_table is render.markdown_table
    assert tables.latex_table is render.latex_table
