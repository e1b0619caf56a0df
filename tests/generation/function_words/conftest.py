"""Fixtures of the function-word generator tests: the synthetic corpus of
tests/gen_function_words.py as paragraphs and as a file (nli_pairs.jsonl beside them is a
small hand-written premise/hypothesis file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gen_function_words import synthetic_corpus, write_corpus


@pytest.fixture
def paragraphs() -> list[list[str]]:
    """160 paragraphs of the synthetic corpus."""
    return synthetic_corpus(160)


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "corpus.txt")
