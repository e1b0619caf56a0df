"""Writing (and re-reading) function-word sets in the format of the DNC release of Kim et al.
(2019): per set a ``<set>_data.json`` and a ``<set>_metadata.json``, JSON lists joined on
``pair-id``, under ``ACCEPTABILITY/`` and ``NLI/``.

Data items carry the release's keys (``context``, ``hypothesis``, ``label``, ``label-set``,
``binary-label``, ``pair-id``, ``split``, ``type-of-inference``); metadata items carry
``corpus``, ``corpus-license``, ``corpus-sent-id``, ``creation-approach``, ``pair-id`` and
``misc``: for acceptability sets ``fold1`` .. ``fold10`` -> train/dev/test as in the release,
plus what the release does not have: the mutation (rule, positions, words replaced and their
replacements, the original text). So a generated suite reads like the release, and every
change is on record next to its item. An item no annotator or confirmed rule has labelled
(``misc.expected_label: unverified``) has an empty ``label`` and ``binary-label`` null; the
generator's guess is ``misc.candidate_label``, a field no DNC reader takes for gold.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sentprobe.errors import DataError
from sentprobe.io import atomic_write_text

ACCEPTABILITY_LABELS = ("acceptable", "unacceptable")
NLI_LABELS = ("contradiction", "neutral", "entailment")
N_FOLDS = 10
FOLDS = tuple(f"fold{k}" for k in range(1, N_FOLDS + 1))


@dataclass
class Item:
    """One generated example before it gets a pair-id."""

    context: str
    hypothesis: str
    label: str
    #: 0..9: the fold whose test set holds it (acceptability), None for NLI items
    chunk: int | None = None
    corpus_sent_id: int | str = 0
    misc: dict[str, Any] = field(default_factory=dict)


def is_nli(set_name: str) -> bool:
    return set_name.startswith("nli-")


def set_folder(set_name: str) -> str:
    return "NLI" if is_nli(set_name) else "ACCEPTABILITY"


def data_path(root: Path, set_name: str) -> Path:
    return Path(root) / set_folder(set_name) / f"{set_name}_data.json"


def metadata_path(root: Path, set_name: str) -> Path:
    return Path(root) / set_folder(set_name) / f"{set_name}_metadata.json"


def fold_splits(chunk: int) -> dict[str, str]:
    """fold1..fold10 -> split of an item in test chunk ``chunk``: fold k tests chunk k-1,
    tunes on chunk k (mod 10) and trains on the other eight, as the release's 80/10/10."""
    out = {}
    for k in range(N_FOLDS):
        split = "test" if chunk == k else "dev" if chunk == (k + 1) % N_FOLDS else "train"
        out[f"fold{k + 1}"] = split
    return out


def chunk_of(misc: dict[str, Any]) -> int | None:
    """The fold whose test set holds an item (0-based), from its fold1..fold10 entries."""
    tests = [k for k, name in enumerate(FOLDS) if misc.get(name) == "test"]
    return tests[0] if len(tests) == 1 else None


def _type_of_inference(set_name: str) -> str:
    return set_name if is_nli(set_name) else f"{set_name}.tsv"


def release_records(
    set_name: str,
    items: Sequence[Item],
    *,
    first_pair_id: int,
    corpus: str,
    corpus_license: str,
    creation_approach: str = "automatic",
) -> tuple[list[dict], list[dict]]:
    """The data and metadata lists of one set (pair-ids from ``first_pair_id`` on)."""
    labels = NLI_LABELS if is_nli(set_name) else ACCEPTABILITY_LABELS
    positive = "entailment" if is_nli(set_name) else "acceptable"
    data, meta = [], []
    for offset, item in enumerate(items):
        unverified = item.misc.get("expected_label") == "unverified"
        if item.label not in labels and not (unverified and item.label == ""):
            raise ValueError(f"{set_name}: label {item.label!r} not in {labels}")
        if unverified and item.label:
            raise ValueError(f"{set_name}: an unverified item carries the label {item.label!r}")
        pair_id = first_pair_id + offset
        data.append(
            {
                "binary-label": None if unverified else item.label == positive,
                "context": item.context,
                "hypothesis": item.hypothesis,
                "label": item.label,
                "label-set": list(labels),
                "pair-id": pair_id,
                "split": "dev",  # as in the release: every set is one evaluation set
                "type-of-inference": _type_of_inference(set_name),
            }
        )
        misc = dict(item.misc)
        if item.chunk is not None:
            misc = {**fold_splits(item.chunk), **misc}
        meta.append(
            {
                "corpus": corpus,
                "corpus-license": corpus_license,
                "corpus-sent-id": item.corpus_sent_id,
                "creation-approach": creation_approach,
                "misc": dict(sorted(misc.items())),
                "pair-id": pair_id,
            }
        )
    return data, meta


def _dump(records: list[dict]) -> str:
    """A JSON list, one item per line (compact, yet diffable line by line)."""
    lines = [json.dumps(r, ensure_ascii=False, sort_keys=True) for r in records]
    return "[\n" + ",\n".join(lines) + "\n]\n"


def write_release_set(root: Path, set_name: str, data: list[dict], meta: list[dict]) -> None:
    """Write one set's two files atomically (metadata first, so data never lacks it)."""
    atomic_write_text(metadata_path(root, set_name), _dump(meta))
    atomic_write_text(data_path(root, set_name), _dump(data))


def _load_list(path: Path) -> list[dict]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise DataError(path, None, f"cannot read file: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise DataError(path, None, f"not valid UTF-8 ({e.reason})") from None
    try:
        records = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(path, e.lineno, f"malformed JSON: {e.msg}") from None
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise DataError(path, None, "expected a JSON list of objects")
    return records


def read_release_set(data_file: Path) -> list[tuple[dict, dict]]:
    """(data, metadata) of every item of ``<set>_data.json``, joined on ``pair-id`` with the
    ``<set>_metadata.json`` beside it, in data order. What the annotation round trip needs;
    probing reads sets through the task loaders."""
    data_file = Path(data_file)
    meta_file = data_file.with_name(data_file.name.replace("_data.json", "_metadata.json"))
    data = _load_list(data_file)
    meta = _load_list(meta_file) if meta_file.is_file() else []
    by_id = {m.get("pair-id"): m for m in meta}
    out = []
    for record in data:
        pair_id = record.get("pair-id")
        if pair_id is None or "context" not in record or "label" not in record:
            raise DataError(data_file, None, f"item {pair_id!r}: needs pair-id, context, label")
        if meta_file.is_file() and pair_id not in by_id:
            raise DataError(meta_file, None, f"pair-id {pair_id}: no metadata entry")
        out.append((record, by_id.get(pair_id, {})))
    return out


def release_sets(root: Path) -> dict[str, Path]:
    """Set name -> data file of every set under ``root`` (ACCEPTABILITY/, NLI/ or flat)."""
    root = Path(root)
    found = sorted(root.glob("*_data.json")) + sorted(root.glob("*/*_data.json"))
    return {p.name.removesuffix("_data.json"): p for p in found}
