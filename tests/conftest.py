"""Shared fixtures. Tests never touch the user's cache: everything goes to tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` beside the repository; tests that need it skip without it."""
    data = SHARED / "data"
    if not data.is_dir():
        pytest.skip("../shared/data is not available")
    return data


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SENTPROBE_CACHE", str(tmp_path / "cache"))
