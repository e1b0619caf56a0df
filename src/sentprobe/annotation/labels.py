"""The labels the semantic/syntactic tasks read off one annotated sentence.

Used by the agreement evaluation (``annotation.agreement``). The generators apply their own
per-sentence rules (``generation.labeling``), which differ in details: Tense there looks at
the finite auxiliary before the root, SubjNum also takes ``nsubj:pass`` and only NN/NNS.
Until the evaluation calls ``generation.labeling``, its figures approximate the generated
labels' accuracy rather than measure it.

* Tense, ``scheme="ud"`` (X-Probe): the ``Tense`` feature of the root, ``Past``/``Pres``.
* Tense, ``scheme="ptb"`` (paper: "VBD -> past, VBP/VBZ -> present" of the main-clause verb):
  the finite verb of the main clause, i.e. the root if its PTB tag is VBD/VBP/VBZ, else its
  first finite ``aux``/``aux:pass``/``cop`` dependent ("has eaten" -> VBZ -> Pres).
* Subject/object number: the ``Number`` (Sing/Plur) of the single ``nsubj`` / ``obj`` child of
  the root (X-Probe: sentences with several such children get no label). With PTB tags the
  paper's NN/NNS (and NNP/NNPS) decide, which also labels nouns without a Number feature.
"""

from __future__ import annotations

from typing import Literal

from sentprobe.annotation.record import AnnotatedSentence

_PTB_TENSE = {"VBD": "Past", "VBP": "Pres", "VBZ": "Pres"}
_PTB_NUMBER = {"NN": "Sing", "NNP": "Sing", "NNS": "Plur", "NNPS": "Plur"}


def _feat(rec: AnnotatedSentence, i: int, name: str) -> str | None:
    return rec.feats[i].get(name) if i < len(rec.feats) else None


def _tag(rec: AnnotatedSentence, i: int) -> str:
    return rec.xpos[i] if i < len(rec.xpos) else ""


def main_tense(rec: AnnotatedSentence, scheme: Literal["ud", "ptb"] = "ud") -> str | None:
    """``"Past"``, ``"Pres"`` or None (no finite main verb / other tense)."""
    root = rec.root
    if scheme == "ud":
        tense = _feat(rec, root, "Tense")
        return tense if tense in ("Past", "Pres") else None
    if _tag(rec, root) in _PTB_TENSE:
        return _PTB_TENSE[_tag(rec, root)]
    for k in rec.children(root):
        if rec.deprels[k] in ("aux", "aux:pass", "cop") and _tag(rec, k) in _PTB_TENSE:
            return _PTB_TENSE[_tag(rec, k)]
    return None


def argument_number(
    rec: AnnotatedSentence, relation: str, scheme: Literal["ud", "ptb"] = "ud"
) -> str | None:
    """Number of the single ``relation`` child of the root (subtypes excluded:
    ``nsubj:pass`` is not ``nsubj``)."""
    args = [k for k in rec.children(rec.root) if rec.deprels[k] == relation]
    if len(args) != 1:
        return None
    k = args[0]
    if scheme == "ptb":
        return _PTB_NUMBER.get(_tag(rec, k))
    number = _feat(rec, k, "Number")
    return number if number in ("Sing", "Plur") else None


def subject_number(rec: AnnotatedSentence, scheme: Literal["ud", "ptb"] = "ud") -> str | None:
    return argument_number(rec, "nsubj", scheme)


def object_number(rec: AnnotatedSentence, scheme: Literal["ud", "ptb"] = "ud") -> str | None:
    return argument_number(rec, "obj", scheme)
