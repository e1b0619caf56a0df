"""The label of one sentence, for the tasks where the label is a property of the sentence alone.

Why this exists: to check a published suite's labels, or to measure how far an annotator can
be trusted, a sentence must be labelled exactly as a generator labels it when it writes a
task. So nothing is re-implemented here: each function builds its task's generator with the
profile's rules (``generator_for``) and calls the very method ``generate`` uses
(``SentenceLength.label``, ``TreeDepth.depth``, ``TopConst.sequence``/``class_name``,
``Tense``/``SubjNum``/``ObjNum``.``target``), then renames labels with the same table the
X-Probe layout uses (``XPROBE_LABELS``). The generator and the labeler agree by construction.

A label is a property of the sentence; what a generator does with the *corpus* is not:
TreeDepth's class range, the frequency bands of Tense/SubjNum/ObjNum and TopConst's most
frequent sequences only select which sentences a task keeps. So a depth outside the task's
range is still returned (it is the sentence's depth), and TopConst returns the raw sequence
(``NP_VP_.``) unless the task's classes are given, in which case other sequences are OTHER.

Not labelable from a sentence: WC, BShift, SOMO, CoordInv (``UNLABELABLE`` says why).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from sentprobe.annotation.constituency import dep_to_constituency
from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.datasets.loaders import SENTEVAL_FILES
from sentprobe.errors import SentprobeError

from .inputs import as_tokens
from .semantic import ObjNum, SubjNum, Tense
from .suite import ALL_GENERATORS, XPROBE_LABELS, generator_for
from .surface import SentenceLength
from .syntactic import TopConst, TreeDepth

__all__ = [
    "LABELERS",
    "SENTENCE_TASKS",
    "UNLABELABLE",
    "UNLABELLED",
    "Comparison",
    "Labelled",
    "compare_labels",
    "labeler",
    "needs_annotation",
    "needs_constituency",
    "obj_num_label",
    "resolve_task",
    "sentlen_label",
    "subj_num_label",
    "tense_label",
    "top_const_label",
    "tree_depth_label",
    "vocabulary_labels",
    "with_constituency",
]

Vocabulary = Literal["senteval", "xprobe"]

#: The tasks whose label can be computed from one sentence (and its annotation).
SENTENCE_TASKS: tuple[str, ...] = ("SentLen", "TreeDepth", "TopConst", "Tense", "SubjNum", "ObjNum")

#: Why the other tasks cannot be labelled from a sentence alone.
UNLABELABLE: dict[str, str] = {
    "WC": "its label is one of the task's target words, chosen from the whole corpus's "
    "frequency ranks (a sentence may contain any number of candidate words)",
    "BShift": "its label says whether two words were swapped when the task was made; an "
    "inverted sentence is a history, not a property one can read off the sentence",
    "SOMO": "its label says whether a word was replaced when the task was made; that is a "
    "history, not a property one can read off the sentence",
    "CoordInv": "its label says whether the clauses were inverted when the task was made; "
    "that is a history, not a property one can read off the sentence",
}

#: What the command line writes for a sentence the rule cannot label.
UNLABELLED = "-"


class UnlabelableTask(SentprobeError):
    """The task's label is not a property of a single sentence."""


@dataclass(frozen=True)
class Labelled:
    """A sentence's label, or None and the generator's reason for rejecting the sentence."""

    label: str | None
    reason: str | None = None


Sentence = AnnotatedSentence | Sequence[str]
Labeler = Callable[[Sentence], Labelled]  # SentLen also takes plain tokens


# --------------------------------------------------------------------------------- tasks


def resolve_task(name: str) -> str:
    """Paper task name from a paper name (any case) or a SentEval file stem (``past_present``);
    an UnlabelableTask for WC/BShift/SOMO/CoordInv, a SentprobeError for unknown names."""
    by_lower = {t.lower(): t for t in ALL_GENERATORS} | SENTEVAL_FILES
    task = by_lower.get(name.strip().lower())
    if task is None:
        raise SentprobeError(
            f"unknown task {name!r}; tasks with sentence-level labels: {', '.join(SENTENCE_TASKS)}"
        )
    if task in UNLABELABLE:
        raise UnlabelableTask(
            f"{task} cannot be labelled from a sentence alone: {UNLABELABLE[task]}. "
            f"Tasks that can: {', '.join(SENTENCE_TASKS)}"
        )
    return task


def needs_annotation(task: str) -> bool:
    """SentLen counts tokens; every other task reads POS tags, features or trees."""
    return task != "SentLen"


def needs_constituency(task: str, profile: str) -> bool:
    """TopConst always, TreeDepth under the paper's (constituency) rules."""
    return task == "TopConst" or (task == "TreeDepth" and _profile(profile, "en") == "paper")


def with_constituency(sent: AnnotatedSentence) -> AnnotatedSentence:
    """``sent`` with a PTB tree converted from its dependencies when it has none: what
    ``generation.pipeline.build`` does before generating English paper-profile suites."""
    if sent.constituency is not None:
        return sent
    return dataclasses.replace(sent, constituency=dep_to_constituency(sent))


def _profile(profile: str | None, lang: str) -> str:
    return profile or ("paper" if lang == "en" else "xprobe")


@lru_cache(maxsize=64)
def _generator(task: str, lang: str, profile: str) -> Any:
    """The generator whose rule labels ``task`` (built once: labeling runs per sentence)."""
    try:
        return generator_for(task, lang, profile)
    except ValueError as e:
        raise SentprobeError(str(e)) from None


def _vocabulary(vocabulary: Vocabulary | None, profile: str) -> Vocabulary:
    return vocabulary or ("xprobe" if profile == "xprobe" else "senteval")


def vocabulary_labels(task: str, vocabulary: Vocabulary) -> list[str] | None:
    """The fixed label set a generator writes for ``task`` in ``vocabulary`` (None when the
    labels are open: SentLen bins, depths, constituent sequences)."""
    gen = ALL_GENERATORS[task]
    fixed = getattr(gen, "labels", None)
    if not isinstance(fixed, list):
        return None
    labels: list[str] = fixed
    mapping: dict[str, str] = XPROBE_LABELS.get(task, {}) if vocabulary == "xprobe" else {}
    return [mapping.get(lab, lab) for lab in labels]


def _lexical(
    task: str,
    sent: AnnotatedSentence,
    profile: str | None,
    lang: str,
    vocabulary: Vocabulary | None,
    generator: Tense | SubjNum | None,
) -> Labelled:
    profile = _profile(profile, lang)
    gen = generator or _generator(task, lang, profile)
    found = gen.target(sent)
    if isinstance(found, str):
        return Labelled(None, found)
    label = found[0]
    if _vocabulary(vocabulary, profile) == "xprobe":  # as build_suite's relabel
        label = XPROBE_LABELS.get(task, {}).get(label, label)
    return Labelled(label)


def sentlen_label(
    sent: Sentence,
    profile: str | None = "paper",
    *,
    lang: str = "en",
    generator: SentenceLength | None = None,
) -> Labelled:
    """SentLen bin ("0".."5") of the sentence's surface tokens; tokens alone are enough."""
    gen = generator or _generator("SentLen", lang, _profile(profile, lang))
    tokens = as_tokens(sent) if isinstance(sent, AnnotatedSentence) else tuple(sent)
    label = gen.label(tokens)
    if label is None:
        return Labelled(None, f"length {len(tokens)} outside every bin")
    return Labelled(label)


def tree_depth_label(
    sent: AnnotatedSentence,
    profile: str | None = "paper",
    *,
    lang: str = "en",
    generator: TreeDepth | None = None,
) -> Labelled:
    """Depth of the constituency tree (paper) or the dependency tree (xprobe), as a string."""
    gen = generator or _generator("TreeDepth", lang, _profile(profile, lang))
    depth = gen.depth(sent)
    if depth is None:
        return Labelled(None, "no constituency tree")
    return Labelled(str(depth))


def top_const_label(
    sent: AnnotatedSentence,
    profile: str | None = "paper",
    *,
    lang: str = "en",
    classes: Collection[str] | None = None,
    generator: TopConst | None = None,
) -> Labelled:
    """Top-constituent sequence (``NP_VP_.``); with the task's ``classes`` (OTHER may be
    among them), a sequence that is not one of them is OTHER."""
    gen = generator or _generator("TopConst", lang, _profile(profile, lang))
    seq = gen.sequence(sent)
    if isinstance(seq, str):
        return Labelled(None, seq)
    frequent = None if classes is None else {c for c in classes if c != gen.other}
    return Labelled(gen.class_name(seq, frequent))


def tense_label(
    sent: AnnotatedSentence,
    profile: str | None = "paper",
    *,
    lang: str = "en",
    vocabulary: Vocabulary | None = None,
    generator: Tense | None = None,
) -> Labelled:
    """Tense of the main clause: PAST/PRES (SentEval vocabulary) or Past/Pres (X-Probe's)."""
    return _lexical("Tense", sent, profile, lang, vocabulary, generator)


def subj_num_label(
    sent: AnnotatedSentence,
    profile: str | None = "paper",
    *,
    lang: str = "en",
    vocabulary: Vocabulary | None = None,
    generator: SubjNum | None = None,
) -> Labelled:
    """Number of the main clause's subject: NN/NNS (SentEval) or Sing/Plur (X-Probe)."""
    return _lexical("SubjNum", sent, profile, lang, vocabulary, generator)


def obj_num_label(
    sent: AnnotatedSentence,
    profile: str | None = "paper",
    *,
    lang: str = "en",
    vocabulary: Vocabulary | None = None,
    generator: ObjNum | None = None,
) -> Labelled:
    """Number of the main clause's direct object: NN/NNS (SentEval) or Sing/Plur (X-Probe)."""
    return _lexical("ObjNum", sent, profile, lang, vocabulary, generator)


LABELERS: dict[str, Callable[..., Labelled]] = {
    "SentLen": sentlen_label,
    "TreeDepth": tree_depth_label,
    "TopConst": top_const_label,
    "Tense": tense_label,
    "SubjNum": subj_num_label,
    "ObjNum": obj_num_label,
}


def labeler(
    task: str,
    profile: str | None = None,
    *,
    lang: str = "en",
    vocabulary: Vocabulary | None = None,
    classes: Collection[str] | None = None,
) -> Labeler:
    """One-argument labeler for ``task`` (any name ``resolve_task`` accepts) under ``profile``
    (default: paper for English, xprobe otherwise, as ``generator_for``)."""
    task = resolve_task(task)
    profile = _profile(profile, lang)
    _generator(task, lang, profile)  # unknown profile -> error now, not per sentence
    fn = LABELERS[task]
    kwargs: dict[str, Any] = {"lang": lang}
    if task in ("Tense", "SubjNum", "ObjNum"):
        kwargs["vocabulary"] = vocabulary
    if task == "TopConst":
        kwargs["classes"] = classes
    return lambda sent: fn(sent, profile, **kwargs)


# ---------------------------------------------------------------------------- comparison


def _order(labels: Iterable[str]) -> list[str]:
    """Numbers numerically (depths, bins), then the rest alphabetically."""

    def key(label: str) -> tuple[int, float, str]:
        try:
            return (0, float(label), label)
        except ValueError:
            return (1, 0.0, label)

    return sorted(set(labels), key=key)


def _pct(num: int, den: int) -> str:
    return f"{100 * num / den:.1f}" if den else "n/a"


def _md_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Pipe table: first column left-aligned, the others right-aligned."""
    cells = [[str(c).replace("|", "\\|") for c in row] for row in [header, *rows]]
    widths = [max(3, *(len(r[i]) for r in cells)) for i in range(len(header))]

    def line(row: list[str]) -> str:
        padded = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(
        "-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)
    )
    return "\n".join([line(cells[0]), rule + "|", *(line(r) for r in cells[1:])])


_PER_CLASS_HEADER = ("gold class", "n", "unlabelled", "agree", "agreement %", "predicted",
                     "precision %")  # fmt: skip


@dataclass
class Comparison:
    """Gold labels of a task file against the labels the generator's rule gives."""

    gold: list[str]
    predicted: list[str | None]
    reasons: Counter = field(default_factory=Counter)  # why sentences were not labelled

    @property
    def n(self) -> int:
        return len(self.gold)

    @property
    def labelled(self) -> int:
        return sum(p is not None for p in self.predicted)

    @property
    def unlabelled(self) -> int:
        return self.n - self.labelled

    @property
    def agree(self) -> int:
        return sum(g == p for g, p in zip(self.gold, self.predicted))

    @property
    def agreement(self) -> float:
        """Agreement over the sentences the rule could label."""
        return self.agree / self.labelled if self.labelled else float("nan")

    @property
    def classes(self) -> list[str]:
        return _order(self.gold)

    @property
    def predicted_classes(self) -> list[str]:
        """Gold classes, then labels the rule gave that gold never uses."""
        extra = _order(p for p in self.predicted if p is not None and p not in set(self.gold))
        return self.classes + extra

    def confusion(self) -> dict[str, Counter]:
        """Gold label -> Counter of predicted labels (None for unlabelled)."""
        out: dict[str, Counter] = {c: Counter() for c in self.classes}
        for g, p in zip(self.gold, self.predicted):
            out[g][p] += 1
        return out

    def per_class(self) -> list[dict[str, Any]]:
        """Per gold class: counts, agreement (recall over labelled) and precision."""
        conf = self.confusion()
        pred = Counter(p for p in self.predicted if p is not None)
        rows = []
        for c in self.classes:
            n, missing, agree = sum(conf[c].values()), conf[c][None], conf[c][c]
            rows.append(
                {
                    "class": c,
                    "gold": n,
                    "unlabelled": missing,
                    "agree": agree,
                    "agreement": agree / (n - missing) if n - missing else float("nan"),
                    "predicted": pred[c],
                    "precision": agree / pred[c] if pred[c] else float("nan"),
                }
            )
        return rows

    def to_markdown(self, title: str) -> str:
        """Summary, per-class table and confusion table (gold rows x predicted columns)."""
        lines = [f"## {title}", ""]
        lines.append(
            f"- sentences: {self.n}; labelled by the rule: {self.labelled}; "
            f"could not be labelled: {self.unlabelled}"
        )
        for reason, k in self.reasons.most_common():
            lines.append(f"  - {reason}: {k}")
        lines.append(
            f"- agreement: {self.agree} of {self.labelled} labelled sentences = "
            f"{_pct(self.agree, self.labelled)}% ({_pct(self.agree, self.n)}% of all {self.n})"
        )
        lines += ["", "### Per gold class", ""]
        rows = [
            [
                r["class"],
                r["gold"],
                r["unlabelled"],
                r["agree"],
                _pct(r["agree"], r["gold"] - r["unlabelled"]),
                r["predicted"],
                _pct(r["agree"], r["predicted"]),
            ]
            for r in self.per_class()
        ]
        lines += [
            _md_table(_PER_CLASS_HEADER, rows),
            "",
            "### Confusion (rows: gold, columns: predicted)",
            "",
        ]
        cols = self.predicted_classes
        conf = self.confusion()
        rows = [[g, *(conf[g][p] for p in cols), conf[g][None]] for g in self.classes]
        lines.append(_md_table(["gold \\ predicted", *cols, UNLABELLED], rows))
        return "\n".join(lines) + "\n"


def compare_labels(gold: Sequence[str], predicted: Sequence[Labelled]) -> Comparison:
    """Compare a file's gold labels with the rule's, sentence by sentence."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
    reasons = Counter(p.reason or "no label" for p in predicted if p.label is None)
    return Comparison(list(gold), [p.label for p in predicted], reasons)
