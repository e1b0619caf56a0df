"""The package type-checks: mypy on src/sentprobe with the project's configuration is clean.

Part of the default test run, so a type error fails ``python -m pytest`` like any other bug.
mypy's incremental cache (``.mypy_cache``, git-ignored) makes reruns take seconds.
"""

from __future__ import annotations

from pathlib import Path

import mypy.api
import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_mypy(*paths: str) -> tuple[str, int]:
    """mypy's report and exit status on ``paths`` (default: the configured ``files``)."""
    stdout, stderr, status = mypy.api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            *paths,
        ]
    )
    return stdout + stderr, status


def test_package_type_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the configuration's ``files`` are relative to the checkout
    report, status = run_mypy()
    assert status == 0, f"mypy found type errors:\n{report}"
    assert "Success: no issues found" in report, report
