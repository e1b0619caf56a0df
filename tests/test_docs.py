"""Docs that run: every bash/python block of README.md and docs/*.md is executed here or
marked as not runnable with its reason (the markers: tests/docs_harness.py)."""

from __future__ import annotations

import pytest

from docs_harness import DOCS, ROOT, SHARED_DATA, Block, all_blocks, blocks, run_block


def test_every_block_is_run_or_marked_with_a_reason():
    unmarked = [b.where for b in all_blocks() if b.mode is None]
    unexplained = [b.where for b in all_blocks() if b.mode == "skip" and len(b.reason) < 10]
    assert unmarked == [], "add <!-- docs-test: run|slow|skip REASON --> before each block"
    assert unexplained == [], "a skipped block says why it cannot run here"


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
    for block in chosen:  # a slow block may encode all of sample-en several times on a CPU
        run_block(block, tmp_path, sandbox, timeout=600 if mode == "run" else 5400)
