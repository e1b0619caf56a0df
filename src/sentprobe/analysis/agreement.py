"""How often an annotator's task labels agree with gold Universal Dependencies.

The paper bounds its parser-dependent tasks by checking parses by hand ("Hum. Eval." in its
Table 2). Here the bound is measured on a gold treebank: the annotator gets the gold *words*
(pre-tokenized, so the two trees align token for token) and every label is computed on both
trees by ``generation.labeling``, i.e. by the very methods the generators call when they
write a task. The figures are therefore the label accuracy of generated suites, not of a
look-alike rule.

Constituency labels (the paper's TreeDepth and TopConst) need a PTB tree; a UD treebank has
none, so both sides are converted with ``dep_to_constituency`` as ``sentprobe build`` does:
what is measured is how much the annotator's dependency errors change the converted label.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from sentprobe.annotation.backends import Annotator, get_annotator
from sentprobe.annotation.backends.base import AnnotatorError, default_annotator
from sentprobe.annotation.conllu import read_conllu
from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.annotation.store import annotate_corpus, read_annotated
from sentprobe.errors import DataError
from sentprobe.generation.labeling import (
    Labelled,
    obj_num_label,
    subj_num_label,
    tense_label,
    top_const_label,
    tree_depth_label,
    with_constituency,
)
from sentprobe.generation.semantic import main_clause

Labeller = Callable[[AnnotatedSentence], str | None]


def _rule(fn: Callable[..., Any], profile: str, lang: str = "en") -> Labeller:
    return lambda sent: fn(sent, profile, lang=lang).label


#: Label name -> (what it is, the generators' rule for one sentence). "paper" = Conneau et
#: al.'s English rules on PTB tags and constituency; "xprobe" = the UD rules of X-Probe.
LABELS: dict[str, tuple[str, Labeller]] = {
    "Tense (paper)": (
        "finite main-clause verb VBD vs VBP/VBZ (first finite aux/cop of the main clause head, "
        "else the head)",
        _rule(tense_label, "paper"),
    ),
    "Tense (xprobe)": (
        "UD `Tense` Past/Pres of the same finite word",
        _rule(tense_label, "xprobe"),
    ),
    "SubjNum (paper)": (
        "NN vs NNS of the single nsubj/nsubj:pass of the main clause",
        _rule(subj_num_label, "paper"),
    ),
    "SubjNum (xprobe)": (
        "UD `Number` of that subject, NOUN only",
        _rule(subj_num_label, "xprobe"),
    ),
    "ObjNum (paper)": (
        "NN vs NNS of the single obj of the main clause",
        _rule(obj_num_label, "paper"),
    ),
    "ObjNum (xprobe)": ("UD `Number` of that object, NOUN only", _rule(obj_num_label, "xprobe")),
    "TreeDepth (xprobe)": (
        "dependency depth (longest root-to-leaf path)",
        _rule(tree_depth_label, "xprobe"),
    ),
    "TreeDepth (paper)": (
        "depth of the constituency tree converted from the dependencies",
        _rule(tree_depth_label, "paper"),
    ),
    "TopConst (paper)": (
        "sequence of top constituents under S, on the converted tree",
        _rule(top_const_label, "paper"),
    ),
}

DEPTH_LABELS = ("TreeDepth (xprobe)", "TreeDepth (paper)")
#: Chunk size of an ``evaluate_annotator`` store (a store refuses another chunk size).
STORE_CHUNK = 1000

#: The labels whose rule reads the main clause (its verb, subject, object): for these a
#: sentence gold labels but the annotator does not is put down to a cause (``miss_cause``).
MAIN_CLAUSE_LABELS: dict[str, Callable[[AnnotatedSentence], Labelled]] = {
    f"{task} ({profile})": partial(fn, profile=profile, lang="en")
    for task, fn in (("Tense", tense_label), ("SubjNum", subj_num_label), ("ObjNum", obj_num_label))
    for profile in ("paper", "xprobe")
}


def miss_cause(name: str, gold: AnnotatedSentence, pred: AnnotatedSentence) -> str:
    """Why the annotator's tree gives no ``name`` label where gold gives one: "root choice"
    when the two trees disagree on the main clause, else the rule's reason on the
    annotator's tree (target tagged otherwise, attached elsewhere, several candidates...)."""
    if main_clause(gold) != main_clause(pred):
        return "root choice: another word heads the main clause"
    return MAIN_CLAUSE_LABELS[name](pred).reason or "no label"


@dataclass
class Agreement:
    """Agreement on one label over the sentences where gold has that label."""

    n: int = 0  # sentences compared (gold label defined)
    agree: int = 0
    pred_missing: int = 0  # gold has a label, the annotator's tree gives none
    pred_extra: int = 0  # gold has none, the annotator's tree gives one
    within_1: int = 0  # depth labels only: |gold - predicted| <= 1
    abs_diff: int = 0  # depth labels only: sum of |gold - predicted|
    missing_by_cause: Counter = field(default_factory=Counter)  # main-clause labels only

    @property
    def accuracy(self) -> float:
        return self.agree / self.n if self.n else float("nan")

    @property
    def coverage(self) -> float:
        """Share of the sentences gold labels that the annotator's tree labels too (a
        sentence it leaves unlabelled is lost to a generated task, not mislabelled)."""
        return (self.n - self.pred_missing) / self.n if self.n else float("nan")

    @property
    def accuracy_labelled(self) -> float:
        """Agreement where both sides give a label: the noise of the sentences a generator
        keeps (it rejects those the annotator cannot label)."""
        both = self.n - self.pred_missing
        return self.agree / both if both else float("nan")

    def as_dict(self, depth: bool = False) -> dict[str, Any]:
        out = asdict(self) | {
            "accuracy": round(self.accuracy, 4),
            "accuracy_labelled": round(self.accuracy_labelled, 4),
            "coverage": round(self.coverage, 4),
        }
        if out["missing_by_cause"]:
            out["missing_by_cause"] = dict(self.missing_by_cause.most_common())
        else:
            del out["missing_by_cause"]
        if not depth:
            del out["within_1"], out["abs_diff"]
        else:
            both = max(1, self.n - self.pred_missing)
            out["within_1"] = round(self.within_1 / both, 4)
            out["mean_abs_diff"] = round(out.pop("abs_diff") / both, 3)
        return out


def label_agreement(
    pairs: Iterable[tuple[AnnotatedSentence, AnnotatedSentence]],
    labels: dict[str, tuple[str, Labeller]] | None = None,
) -> dict[str, Any]:
    """Per-label agreement plus token-level UPOS accuracy, UAS and LAS, from aligned
    (gold, predicted) pairs."""
    labels = labels or LABELS
    out = {name: Agreement() for name in labels}
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
        gold, pred = with_constituency(gold), with_constituency(pred)
        for name, (_, fn) in labels.items():
            g, p = fn(gold), fn(pred)
            a = out[name]
            if g is None:
                a.pred_extra += p is not None
                continue
            a.n += 1
            a.agree += g == p
            a.pred_missing += p is None
            if p is None and name in MAIN_CLAUSE_LABELS:
                a.missing_by_cause[miss_cause(name, gold, pred)] += 1
            if name in DEPTH_LABELS and p is not None:
                a.within_1 += abs(int(g) - int(p)) <= 1
                a.abs_diff += abs(int(g) - int(p))
    result: dict[str, Any] = {
        name: a.as_dict(depth=name in DEPTH_LABELS) for name, a in out.items()
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
    store: str | Path | None = None,
) -> dict[str, Any]:
    """Annotate the gold words of a CoNLL-U file and compare labels (``label_agreement``).

    ``min_tokens``/``max_tokens`` restrict to the task length range (paper: 5-28 tokens).
    ``store``: a directory where the gold words of the *whole* file are annotated once
    (``annotate_corpus``, resumable) and read back, so reruns after a rule change, and other
    length ranges, do not parse again.
    """
    ann = get_annotator(annotator) if isinstance(annotator, str) else annotator

    def wanted(rec: AnnotatedSentence) -> bool:
        return len(rec) >= min_tokens and (max_tokens is None or len(rec) <= max_tokens)

    preds: Iterable[AnnotatedSentence]
    if store is not None:
        every = list(read_conllu(gold_path))
        annotate_corpus(
            [g.tokens for g in every], store, ann, chunk_size=STORE_CHUNK, progress=False
        )
        pairs = [(g, p) for g, p in zip(every, read_annotated(store)) if wanted(g)][:limit]
        gold, preds = [g for g, _ in pairs], [p for _, p in pairs]
    else:
        gold = []
        for rec in read_conllu(gold_path):
            if wanted(rec):
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
        "store": None if store is None else str(store),
    }
    return result


def tense_rule(lang: str) -> dict[str, tuple[str, Labeller]]:
    """The Tense label of a generated suite in ``lang`` (the X-Probe profile's UD rule, as
    ``generator_for`` builds it for a language other than English), for ``label_agreement``."""
    return {
        f"Tense ({lang})": (
            "UD `Tense` Past/Pres of the finite indicative verb of the main clause",
            _rule(tense_label, "xprobe", lang),
        )
    }


def gold_label_accuracy(
    gold_paths: Sequence[str | Path],
    lang: str,
    annotator: str | Annotator | None = None,
    *,
    min_tokens: int = 5,
    max_tokens: int | None = 28,
    store: str | Path | None = None,
) -> dict[str, Any]:
    """Label accuracy of a generated suite's Tense in ``lang``, measured on gold UD.

    The language's annotator (its default unless named) annotates the gold words of each file
    (pre-tokenized, so the trees align; sentences of ``min_tokens``-``max_tokens`` words, the
    range a built suite keeps), and the Tense rule labels both trees. Returned: the sentences
    each side keeps (``gold_kept``, ``pred_kept``), the agreement over the sentences both keep
    (``accuracy``) and per gold class. ``store``: a folder where each file's annotation is
    kept (one subfolder per file) so a rerun does not parse again. Without an annotator for
    the language only the gold side is counted (``annotator`` None, no accuracy).
    """
    ann: Annotator | None
    try:
        ann = get_annotator(annotator) if isinstance(annotator, str) else annotator
        ann = ann or default_annotator(lang)
    except AnnotatorError:
        if annotator is not None:
            raise
        ann = None
    ((name, (_, rule)),) = tense_rule(lang).items()
    gold_kept = pred_kept = both = agree = sentences = 0
    per_class: dict[str, Counter] = {}
    for k, path in enumerate(gold_paths):
        every = [
            g
            for g in read_conllu(path)
            if len(g) >= min_tokens and (max_tokens is None or len(g) <= max_tokens)
        ]
        sentences += len(every)
        preds: list[AnnotatedSentence | None] = [None] * len(every)
        if ann is not None and store is not None:
            where = Path(store) / f"{k:02d}-{Path(path).name.split('.')[0]}"
            words = [g.tokens for g in every]
            annotate_corpus(words, where, ann, chunk_size=STORE_CHUNK, progress=False)
            preds = list(read_annotated(where))
        elif ann is not None:
            preds = list(ann.annotate([g.tokens for g in every], pretokenized=True))
        for g, p in zip(every, preds):
            g_label = rule(g)
            p_label = rule(p) if p is not None else None
            gold_kept += g_label is not None
            pred_kept += p_label is not None
            if g_label is not None and p_label is not None:
                both += 1
                agree += g_label == p_label
                per_class.setdefault(g_label, Counter())[p_label] += 1
    return {
        "label": name,
        "lang": lang,
        "gold": [str(p) for p in gold_paths],
        "annotator": None if ann is None else ann.version(),
        "sentences": sentences,
        "gold_kept": gold_kept,
        "pred_kept": pred_kept if ann is not None else None,
        "both_kept": both if ann is not None else None,
        "agree": agree if ann is not None else None,
        "accuracy": round(agree / both, 4) if ann is not None and both else None,
        "confusion": {g: dict(sorted(c.items())) for g, c in sorted(per_class.items())},
    }


def gold_accuracy_markdown(result: dict[str, Any]) -> str:
    """QUALITY.md's section on a suite's Tense label accuracy against gold UD."""
    ann = result["annotator"]
    files = ", ".join(Path(p).name for p in result["gold"])
    lines = [
        "## Label accuracy against gold UD",
        "",
        f"Tense labels by the generator's rule on {result['sentences']:,} gold sentences of "
        f"5-28 words ({files}): once on the gold annotation, once on the annotation of the "
        "annotator that built this suite (given the gold words).",
        "",
    ]
    if ann is None:
        lines.append(
            f"- no annotator ships for {result['lang']!r}: the rule keeps "
            f"{result['gold_kept']:,} gold sentences; no accuracy can be measured"
        )
        return "\n".join(lines) + "\n"
    acc = result["accuracy"]
    lines += [
        f"- annotator: {ann.get('annotator')} "
        + " ".join(f"{k} {v}" for k, v in ann.items() if k != "annotator"),
        f"- sentences the rule labels: {result['gold_kept']:,} on gold, "
        f"{result['pred_kept']:,} on the annotator's trees, {result['both_kept']:,} on both",
        f"- label accuracy where both label: {result['agree']:,} / {result['both_kept']:,} = "
        + ("n/a" if acc is None else f"{100 * acc:.1f}%"),
    ]
    for g, by in result["confusion"].items():
        lines.append(f"  - gold {g}: " + ", ".join(f"{p} {n}" for p, n in by.items()))
    return "\n".join(lines) + "\n"


def agreement_markdown(result: dict[str, Any]) -> str:
    """The agreement table as docs/annotation.md shows it."""
    rows = [
        "| label | rule (the generators') | n | coverage | agreement where both label "
        "| agreement | annotator gives none | extra |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, (what, _) in LABELS.items():
        r = result.get(name)
        if not r:
            continue
        rows.append(
            f"| {name} | {what} | {r['n']:,} | {100 * r['coverage']:.1f}% | "
            f"{100 * r['accuracy_labelled']:.1f}% | {100 * r['accuracy']:.1f}% | "
            f"{r['pred_missing']:,} | {r['pred_extra']:,} |"
        )
        if name in DEPTH_LABELS:
            rows.append(
                f"| | within ±1 / mean absolute difference (both labelled) | | | "
                f"{100 * r['within_1']:.1f}% / {r['mean_abs_diff']:.2f} | | | |"
            )
    causes = [(n, result[n]["missing_by_cause"]) for n in MAIN_CLAUSE_LABELS
              if result.get(n, {}).get("missing_by_cause")]  # fmt: skip
    if causes:
        rows += ["", "| label | why the annotator gives none | sentences |", "|---|---|---:|"]
        rows += [f"| {n} | {why} | {k:,} |" for n, by in causes for why, k in by.items()]
    t = result["tokens"]
    rows.append("")
    rows.append(
        f"Token level ({t['sentences']:,} sentences, {t['tokens']:,} words): UPOS "
        f"{100 * t['upos_accuracy']:.1f}%, UAS {100 * t['uas']:.1f}%, LAS {100 * t['las']:.1f}%."
    )
    return "\n".join(rows) + "\n"
