"""Writing a benchmark's raw JSON (``benchmarks/results/``), shared by the benchmark scripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_result(path: Path, result: dict[str, Any]) -> int:
    """Write ``result`` as indented JSON to ``path`` (creating its directory); exit code 0."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2))
    print(f"wrote {path}")
    return 0
