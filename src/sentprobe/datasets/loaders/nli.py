"""NLI training sets (``run --nli-train``): the pairs an NLI head learns from before it scores
Kim et al. (2019)'s NLI probing sets zero-shot.

Accepted: JSONL (MNLI/SNLI's own ``sentence1``/``sentence2``/``gold_label`` or
``premise``/``hypothesis``/``label`` keys) and TSV with a header naming the same columns
(MNLI's ``.tsv`` has ``sentence1``, ``sentence2``, ``gold_label``). Labels are
entailment/neutral/contradiction; SNLI/MNLI's ``-`` (no annotator majority) rows are skipped,
as their own training code does. Anything else is an error naming file, line and problem.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from sentprobe.datasets.loaders.common import json_objects, read_task_bytes, task_lines
from sentprobe.datasets.loaders.dnc import NLI_LABELS
from sentprobe.datasets.validation import Problems
from sentprobe.errors import DataError

_KEYS = {
    "premise": ("premise", "sentence1"),
    "hypothesis": ("hypothesis", "sentence2"),
    "label": ("label", "gold_label"),
}
#: SNLI/MNLI's marker of a pair without a majority label.
NO_LABEL = "-"


@dataclass(frozen=True)
class NLIPairs:
    """Premises, hypotheses and labels of an NLI training file; ``sha`` identifies its bytes
    (the trained head is cached under it)."""

    path: Path
    premises: list[str]
    hypotheses: list[str]
    labels: list[str]
    sha: str
    #: pairs of the file left out because the probed NLI sets hold them (``drop_pairs``)
    dropped: int = 0

    def __len__(self) -> int:
        return len(self.labels)


def _pick(row: dict[str, object], field: str) -> object | None:
    for key in _KEYS[field]:
        if key in row:
            return row[key]
    return None


def load_nli_pairs(path: str | Path) -> NLIPairs:
    """Read and validate an NLI training file (JSONL, else TSV with a header)."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise DataError(path, None, "no such NLI training file")
    problems = Problems(path)
    lines = list(task_lines(path, problems))
    rows: list[tuple[int, dict[str, object]]] = []
    if lines and lines[0][1].lstrip().startswith("{"):
        rows = list(json_objects(lines, problems))
    elif lines:
        header = lines[0][1].split("\t")
        for i, line in lines[1:]:
            cells = line.split("\t")
            if len(cells) < len(header):
                problems.add(i, f"expected {len(header)} tab-separated columns, found {len(cells)}")
                continue
            rows.append((i, dict(zip(header, cells))))
        missing = [f for f, keys in _KEYS.items() if not any(k in header for k in keys)]
        if missing:
            problems.add(
                lines[0][0],
                f"header lacks column(s) {', '.join(missing)} (premise/sentence1, "
                "hypothesis/sentence2, label/gold_label)",
            )
            problems.raise_if_any()
    premises, hypotheses, labels = [], [], []
    for i, row in rows:
        values = {f: _pick(row, f) for f in _KEYS}
        missing = [f for f, v in values.items() if v is None]
        if missing:
            problems.add(i, f"missing key(s) {', '.join(missing)}")
            continue
        label = str(values["label"]).strip()
        if label == NO_LABEL:
            continue
        if label not in NLI_LABELS:
            problems.add(i, f"unknown label {label!r} (expected {', '.join(NLI_LABELS)} or -)")
            continue
        premise, hypothesis = str(values["premise"]).strip(), str(values["hypothesis"]).strip()
        if not premise or not hypothesis:
            problems.add(i, "empty premise or hypothesis")
            continue
        premises.append(premise)
        hypotheses.append(hypothesis)
        labels.append(label)
    if not labels and not len(problems):
        problems.add(None, "no labelled pairs (an empty file?)")
    elif len(set(labels)) < 2 and not len(problems):
        problems.add(None, f"only one label ({labels[0]}): an NLI head needs several")
    problems.raise_if_any()
    sha = hashlib.sha256(read_task_bytes(path)).hexdigest()[:16]
    return NLIPairs(path, premises, hypotheses, labels, sha)


def pair_key(premise: str, hypothesis: str) -> tuple[str, str]:
    """A pair as its lower-cased words: the release's re-tokenized copy of an MNLI pair
    ("him . ") and MNLI's own text ("him.") get the same key."""
    words = lambda text: " ".join(re.findall(r"\w+", text.lower()))  # noqa: E731
    return words(premise), words(hypothesis)


def drop_pairs(pairs: NLIPairs, evaluated: Iterable[tuple[str, str]]) -> NLIPairs:
    """``pairs`` without the training pairs whose premise and hypothesis are a pair of
    ``evaluated`` (the probed NLI items), so a zero-shot score is zero-shot: 1,426 of the
    release's 1,518 NLI items come from MNLI's training set. ``sha`` changes with what is
    dropped, so a head cached from the whole file is not reused."""
    seen = {pair_key(p, h) for p, h in evaluated}
    keep = [
        i for i, (p, h) in enumerate(zip(pairs.premises, pairs.hypotheses))
        if pair_key(p, h) not in seen
    ]  # fmt: skip
    dropped = len(pairs) - len(keep)
    if not dropped:
        return pairs
    digest = hashlib.sha256(f"{pairs.sha}:{keep}".encode()).hexdigest()[:16]
    return replace(
        pairs,
        premises=[pairs.premises[i] for i in keep],
        hypotheses=[pairs.hypotheses[i] for i in keep],
        labels=[pairs.labels[i] for i in keep],
        sha=digest,
        dropped=pairs.dropped + dropped,
    )
