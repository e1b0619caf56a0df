"""Docs that run: every bash/python block of README.md and docs/*.md is executed here or
marked as not runnable with its reason (the markers: tests/docs_harness.py)."""

from __future__ import annotations

import re

import pytest
import yaml

from docs_harness import (
    DOCS,
    ROOT,
    SHARED_DATA,
    STAND_IN_NOTE,
    Block,
    all_blocks,
    blocks,
    problems,
    run_block,
    run_page,
    stated_values,
    unnamed_stand_ins,
)


def test_every_block_is_run_or_marked_with_a_reason():
    unmarked = [b.where for b in all_blocks() if b.mode is None]
    unexplained = [b.where for b in all_blocks() if b.mode == "skip" and len(b.reason) < 10]
    unnamed = [b.where for b in all_blocks() if b.mode == "file" and not b.reason]
    unknown = [f"{b.where}: {b.unknown}" for b in all_blocks() if b.unknown]
    assert unmarked == [], "add <!-- docs-test: run|slow|skip REASON --> before each block"
    assert unexplained == [], "a skipped block says why it cannot run here"
    assert unnamed == [], "a file block names its file: <!-- docs-test: file NAME -->"
    assert unknown == [], "run/slow take only setup=NAME[,NAME] (docs_harness.SETUPS), needs=shared"


def test_every_page_passes_the_harness_own_checks():
    assert [p for page in DOCS for p in problems(page)] == []


def test_the_harness_alone_refuses_a_page_with_bad_markers(tmp_path):
    """Run as a script on one page, it refuses misspelt markers, unknown setups and needs,
    and a stated value in a fence without a language, before running anything."""
    import subprocess
    import sys

    page = tmp_path / "page.md"
    page.write_text(
        "<!-- docs-test: runn -->\n```bash\ntouch ran-1\n```\n\n"
        "<!-- docs-test: run setup=my-taks -->\n```bash\ntouch ran-2\n```\n\n"
        "<!-- docs-test: run needs=sharde -->\n```bash\ntouch ran-3\n```\n\n"
        "```\necho 1  # -> 2\n```\n",
        encoding="utf-8",
    )
    found = problems(page)
    assert len(found) == 5, found  # runn: not a marker, and its block then has none
    assert any("not a docs-test marker" in p for p in found)
    assert any("my-taks" in p for p in found) and any("sharde" in p for p in found)
    assert any("fence without a language" in p for p in found)
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "docs_harness.py"), str(page), "--mode", "run"],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and "nothing run" in done.stderr
    assert not list(tmp_path.rglob("ran-*"))


def test_the_index_lists_every_page():
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"\]\(([\w-]+\.md)\)", index))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    assert pages - listed == set()


def test_the_readme_first_screen_installs_evaluates_and_probes_a_layer():
    """The first 60 lines: the clone address (pyproject's Repository URL) with exactly two
    set-up commands, a run block calling evaluate and one probing a layer, each with a
    stated value the harness checks, and one-line definitions of the table's terms."""
    import tomllib

    readme = ROOT / "README.md"
    first = [b for b in blocks(readme) if b.line <= 60]
    url = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
    setup = next(b for b in first if b.lang == "bash" and b.mode == "skip")
    assert f"git clone {url}" in setup.code and len(setup.code.strip().splitlines()) == 2
    runs = [b for b in first if b.mode == "run" and stated_values(b)[1]]
    assert any("sentprobe.evaluate(" in b.code for b in runs)
    assert any('"layer"' in b.code for b in runs)
    text = "\n".join(readme.read_text(encoding="utf-8").splitlines()[:80])
    for term in ("**∅**", "**Control task**", "**Selectivity**"):
        assert term in text
    # Citing: the README points to CITATION.cff, which names the software and the paper.
    assert "(CITATION.cff)" in readme.read_text(encoding="utf-8")
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["title"].startswith("sentprobe") and citation["url"] == url
    assert any("P18-1198" in ref.get("url", "") for ref in citation["references"])


def test_every_stated_value_follows_a_one_line_statement():
    for block in all_blocks():
        if block.mode in ("run", "slow"):
            stated_values(block)  # raises ValueError naming the line


def test_every_page_names_the_models_minilm_stands_in_for():
    unnamed = {str(p.relative_to(ROOT)): unnamed_stand_ins(p) for p in DOCS}
    assert {k: v for k, v in unnamed.items() if v} == {}, f"say so: '{STAND_IN_NOTE} NAME'"


#: a table marker (legend.md) in a table row: a marker sign, or a star right after a number
TABLE_MARKER = re.compile(r"[†‡°§¶♯∅⚠]|\d\*(?!\*)")


def test_every_table_with_a_marker_links_the_legend():
    unlinked = []
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        rows = [line for line in text.splitlines() if line.lstrip().startswith("|")]
        name = str(page.relative_to(ROOT))
        if any(TABLE_MARKER.search(r) for r in rows) and "legend.md" not in text:
            unlinked.append(name)
    assert sorted(set(unlinked) - {"docs/legend.md"}) == []


def test_the_legend_defines_every_marker_tables_print():
    from sentprobe.reporting.tables import NOTES

    legend = (ROOT / "docs/legend.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip() for line in legend.splitlines() if line.startswith("| ")}
    assert set(NOTES) | {"*", "±x"} <= rows


def _anchors(page) -> set[str]:
    """GitHub's heading anchors of ``page`` (lower case, punctuation dropped, spaces to
    hyphens) and its explicit ``<a id>`` ones."""
    text = page.read_text(encoding="utf-8")
    headings = [line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")]
    slugs = {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}
    return slugs | set(re.findall(r'<a id="([^"]+)"', text))


def test_every_relative_link_of_the_docs_resolves():
    broken = []
    for page in DOCS:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if target.startswith(("http:", "https:", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path) if path else page
            if not linked.exists() or (
                anchor and linked.suffix == ".md" and anchor not in _anchors(linked)
            ):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []


def _page(tmp_path, text):
    page = tmp_path / "page.md"
    page.write_text(text)
    return page


def test_unknown_marker_words_are_errors(tmp_path):
    page = _page(
        tmp_path,
        "<!-- docs-test: slow need=shared -->\n```bash\nx\n```\n\n"
        "<!-- docs-test: run setup=my-task,no-such-setup -->\n```bash\nx\n```\n",
    )
    assert [b.unknown for b in blocks(page)] == [["need=shared"], ["setup=my-task,no-such-setup"]]


def test_a_wrong_stated_value_fails_and_a_right_one_passes(tmp_path):
    page = _page(
        tmp_path,
        "<!-- docs-test: run -->\n```python\nx = 3\nx * 2  # -> 6\nprint('a  b')  # -> a b\n"
        "for i in range(2):\n    print(i < 5)  # -> True\n```\n\n"
        "<!-- docs-test: run -->\n```bash\necho 7  # -> 7\n```\n\n"
        "<!-- docs-test: run -->\n```python\nprint(len('abc'))  # -> 4\n```\n\n"
        "<!-- docs-test: run -->\n```bash\necho 5  # -> 6\n```\n",
    )
    right_py, right_sh, wrong_py, wrong_sh = blocks(page)
    for block in (right_py, right_sh):
        run_block(block, tmp_path, tmp_path / "sandbox")
    with pytest.raises(AssertionError, match=r"page.md:\d+: stated '4', printed \['3'\]"):
        run_block(wrong_py, tmp_path, tmp_path / "sandbox")
    with pytest.raises(AssertionError, match="stated '6', printed"):
        run_block(wrong_sh, tmp_path, tmp_path / "sandbox")


def test_a_stated_value_after_a_multi_line_statement_is_refused(tmp_path):
    page = _page(tmp_path, "<!-- docs-test: run -->\n```python\nf(1,  # -> 2\n  3)\n```\n")
    with pytest.raises(ValueError, match="page.md:3: a stated value"):
        stated_values(blocks(page)[0])


def test_a_page_runs_from_a_given_block_with_the_files_it_shows(tmp_path):
    page = _page(
        tmp_path,
        "<!-- docs-test: slow -->\n```bash\nexit 1\n```\n\n"
        "<!-- docs-test: file a.tsv -->\n```tsv\nx\ty\n```\n\n"
        "<!-- docs-test: slow -->\n```bash\ncp a.tsv b.tsv\n```\n",
    )
    done = run_page(page, "slow", tmp_path, tmp_path / "sandbox", start=8)
    assert [(b.line, b.mode) for b in done] == [(7, "file"), (12, "slow")]
    assert (tmp_path / "b.tsv").read_text() == "x\ty\n"


def test_stand_ins_must_be_named_on_their_page(tmp_path):
    block = "<!-- docs-test: slow -->\n```bash\nsentprobe run -e hf:roberta-base\n```\n"
    assert unnamed_stand_ins(_page(tmp_path, block)) == ["roberta-base"]
    note = f"In this page's tests {STAND_IN_NOTE} roberta-base.\n\n"
    assert unnamed_stand_ins(_page(tmp_path, note + block)) == []


def test_the_parser_sees_markers_and_fences(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text(
        "text\n\n<!-- docs-test: skip needs a GPU here -->\n```bash\nsentprobe run\n```\n\n"
        "```python\nprint(1)\n```\n\n<!-- docs-test: run setup=my-task needs=shared -->\n\n"
        "```bash\nsentprobe tasks\n```\n\n```\nplain output\n```\n"
    )
    found = blocks(page)
    assert [(b.line, b.lang, b.mode) for b in found] == [
        (4, "bash", "skip"),
        (8, "python", None),
        (14, "bash", "run"),
    ]
    assert found[0].reason == "needs a GPU here"
    assert found[2].setups == ["my-task"] and found[2].needs == ["shared"]


def _pages(mode: str) -> list[object]:
    marks = [pytest.mark.slow] if mode == "slow" else []
    return [
        pytest.param(page, mode, id=f"{page.relative_to(ROOT)}-{mode}", marks=marks)
        for page in DOCS
        if any(b.mode == mode for b in blocks(page))
    ]


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory):
    return tmp_path_factory.mktemp("docs-sandbox")


@pytest.mark.parametrize(("page", "mode"), _pages("run") + _pages("slow"))
def test_page_blocks_run(page, mode, sandbox, tmp_path):
    """A page's blocks of this mode, in order, in one working directory."""
    chosen: list[Block] = [b for b in blocks(page) if b.mode == mode]
    for block in chosen:
        if "shared" in block.needs and not SHARED_DATA.is_dir():
            pytest.skip(f"{block.where} needs ../shared/data")
    run_page(page, mode, tmp_path, sandbox)
