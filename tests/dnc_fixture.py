"""Tiny DNC-format sets (``<set>_data.json`` + ``<set>_metadata.json``) written by tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: A few words that make the two acceptability classes learnable by a bag of words.
_GOOD = ["the cat sat on the mat .", "she said that he left .", "we know who came ."]
_BAD = ["the cat sat on a mat the .", "she said what he left .", "we know how came ."]


def acceptability_items(n: int = 40, pair: bool = False, folds: int = 10) -> tuple[list, list]:
    """``n`` balanced items with ``folds`` folds in the release's shape (fold f tests part f,
    develops on part f+1)."""
    data, meta = [], []
    for i in range(n):
        good = i % 2 == 0
        sentence = (_GOOD if good else _BAD)[i % 3] + f" item {i}"
        data.append(
            {
                "context": sentence,
                "hypothesis": f"and then {i} more" if pair else "",
                "label": "acceptable" if good else "unacceptable",
                "binary-label": good,
                "pair-id": 1000 + i,
            }
        )
        part = (i // 2) % folds
        misc = {
            f"fold{f + 1}": "test" if part == f else "dev" if part == (f + 1) % folds else "train"
            for f in range(folds)
        }
        meta.append({"pair-id": 1000 + i, "misc": misc, "corpus-license": "test"})
    return data, meta


def nli_items(n: int = 30) -> tuple[list, list]:
    labels = ["entailment", "neutral", "contradiction"]
    patterns = ["lneg-neg", "unchanged-unchanged", "neg-lexpneg"]
    data, meta = [], []
    for i in range(n):
        data.append(
            {
                "context": f"A man is sleeping in room {i} .",
                "hypothesis": f"A man is {'not ' if i % 3 == 2 else ''}sleeping {i} .",
                "label": labels[i % 3],
                "pair-id": 2000 + i,
            }
        )
        meta.append({"pair-id": 2000 + i, "misc": {"task_desc": patterns[i % 3]}})
    return data, meta


def write_set(directory: Path, stem: str, data: Any, meta: Any) -> Path:
    """Write one set; ``data``/``meta`` are JSON values or raw text (str)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stem}_data.json"
    for target, value in ((path, data), (directory / f"{stem}_metadata.json", meta)):
        target.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


def write_release(directory: Path) -> Path:
    """A miniature release: wh-words, EOS (pairs) and negation (NLI)."""
    write_set(directory / "ACCEPTABILITY", "acceptability-whwords", *acceptability_items())
    write_set(directory / "ACCEPTABILITY", "acceptability-eos", *acceptability_items(pair=True))
    write_set(directory / "NLI", "nli-negation", *nli_items())
    return directory
