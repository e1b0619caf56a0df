"""How often an annotator's task labels agree with gold Universal Dependencies.

The paper's human upper bounds come from checking 200 parses by hand; here the bound for an
automatically annotated task is estimated on a gold treebank instead: the annotator gets the
gold *words* (pre-tokenized, so sentences align token for token) and each task label is
computed on both trees with the rules of ``annotation.labels`` (close to, not yet identical
with, the generators' rules in ``generation.labeling``; see that module's docstring).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sentprobe.annotation.backends import Annotator, get_annotator
from sentprobe.annotation.conllu import read_conllu
from sentprobe.annotation.constituency import dependency_depth
from sentprobe.annotation.labels import main_tense, object_number, subject_number
from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.errors import DataError

Labeller = Callable[[AnnotatedSentence], object]

LABELS: dict[str, Labeller] = {
    "tense_ud": lambda r: main_tense(r, "ud"),
    "tense_ptb": lambda r: main_tense(r, "ptb"),
    "subj_number": subject_number,
    "obj_number": object_number,
    "tree_depth": dependency_depth,
}


@dataclass
class Agreement:
    """Agreement on one label over the sentences where gold has that label."""

    n: int = 0  # sentences compared (gold label defined)
    agree: int = 0
    pred_missing: int = 0  # gold has a label, the annotator's tree gives none
    pred_extra: int = 0  # gold has none, the annotator's tree gives one

    @property
    def accuracy(self) -> float:
        return self.agree / self.n if self.n else float("nan")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"accuracy": round(self.accuracy, 4)}


def label_agreement(
    pairs: Iterable[tuple[AnnotatedSentence, AnnotatedSentence]],
    labels: dict[str, Labeller] | None = None,
) -> dict[str, Any]:
    """Per-label agreement plus token-level UPOS accuracy, UAS and LAS, from aligned
    (gold, predicted) pairs. Depth also gets within-one agreement and mean |difference|."""
    labels = labels or LABELS
    out = {name: Agreement() for name in labels}
    depth_close = depth_abs = 0
    tokens = upos = uas = las = sentences = 0
    for gold, pred in pairs:
        if len(gold) != len(pred):
            raise DataError(
                None,
                None,
                f"sentence {gold.sent_id}: {len(gold)} gold tokens, "
                f"{len(pred)} predicted: annotate pre-tokenized gold words",
            )
        sentences += 1
        for i in range(len(gold)):
            tokens += 1
            upos += gold.upos[i] == pred.upos[i]
            if gold.heads[i] == pred.heads[i]:
                uas += 1
                las += gold.deprels[i].split(":")[0] == pred.deprels[i].split(":")[0]
        for name, fn in labels.items():
            g, p = fn(gold), fn(pred)
            a = out[name]
            if g is None:
                a.pred_extra += p is not None
                continue
            a.n += 1
            a.agree += g == p
            a.pred_missing += p is None
            if name == "tree_depth":
                depth_close += abs(g - p) <= 1  # type: ignore[operator]
                depth_abs += abs(g - p)  # type: ignore[operator]
    result: dict[str, Any] = {name: a.as_dict() for name, a in out.items()}
    if "tree_depth" in out and out["tree_depth"].n:
        n = out["tree_depth"].n
        result["tree_depth"] |= {
            "within_1": round(depth_close / n, 4),
            "mean_abs_diff": round(depth_abs / n, 3),
        }
    result["tokens"] = {
        "sentences": sentences,
        "tokens": tokens,
        "upos_accuracy": round(upos / tokens, 4) if tokens else None,
        "uas": round(uas / tokens, 4) if tokens else None,
        "las": round(las / tokens, 4) if tokens else None,  # relation without subtype
    }
    return result


def evaluate_annotator(
    gold_path: str | Path,
    annotator: str | Annotator = "spacy",
    *,
    limit: int | None = None,
    min_tokens: int = 1,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """Annotate the gold words of a CoNLL-U file and compare labels (``label_agreement``).

    ``min_tokens``/``max_tokens`` restrict to the task length range (paper: 5-28 tokens).
    """
    ann = get_annotator(annotator)
    gold = []
    for rec in read_conllu(gold_path):
        if len(rec) < min_tokens or (max_tokens is not None and len(rec) > max_tokens):
            continue
        gold.append(rec)
        if limit is not None and len(gold) >= limit:
            break
    preds = ann.annotate([g.tokens for g in gold], pretokenized=True)
    result = label_agreement(zip(gold, preds))
    result["setup"] = {
        "gold": str(gold_path),
        "annotator": ann.version(),
        "limit": limit,
        "min_tokens": min_tokens,
        "max_tokens": max_tokens,
    }
    return result
