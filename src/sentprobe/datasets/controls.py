"""Control tasks (Hewitt & Liang, 2019): what a probe scores by memorising word identity alone.

A control task keeps the task's sentences and splits but replaces each label by a fixed random
function of one word type of the sentence: its *control word*, the first content word (the
first alphabetic token not in a small function-word list; the first token if there is none),
lower-cased. For a sentence pair (``Split.sentences2`` holds the second sentence) the control
word comes from the first sentence; pairs, sub-types and folds are kept. A probe can only
score on the control task by recognising the control word, so ``selectivity = task accuracy -
control accuracy`` tells how much of a task's accuracy needs more than lexical memory.

The map word type -> label is drawn once per ``seed`` and is the same in every split. It is
drawn so the control task has the task's label counts *in every split*, exactly: word types
are visited from the most to the least frequent (ties in a seeded random order); a type seen
more than once gets a label drawn with probability proportional to the room every label still
has, among the labels with room for all of its sentences in every split; the types seen once
(the long tail) then fill the remaining room of their split in a seeded random order. Only a
type too frequent to fit any label's remaining room breaks exactness; the task then carries a
warning that says by how many items the distribution differs.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

import numpy as np

from sentprobe.datasets.task import ProbingTask, Split

#: What a control task's name adds to its task's name (``SentLen`` -> ``SentLen~control``).
CONTROL_SUFFIX = "~control"
#: English function words skipped when looking for the control word. Small on purpose: it only
#: has to keep the control word off determiners and the like; other languages fall back to the
#: first alphabetic token, which is a function word more often (said in docs/controls.md).
_FUNCTION_WORDS = """
    a an the this that these those my your his her its our their some any no every each
    all both either neither much many more most few less other such what which who whom whose
    when where why how whether if then than because as so and or but nor yet for of in on at
    by to from with without into onto upon about above below over under after before between
    through during against among within along across behind beyond near off out up down i me
    you he him she it we us they them myself yourself himself herself itself ourselves
    themselves is are was were be been being am do does did have has had will would shall
    should can could may might must not there here very too also just only even now then
    therefore however moreover thus hence still yes oh o thou thee thy ye one"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())
_WORD = re.compile(r"^[^\W\d_]+$")  # letters only, any script


def control_word(sentence: str) -> str:
    """The word type a control label depends on: the first content word, lower-cased."""
    tokens = sentence.split()
    for token in tokens:
        lowered = token.lower()
        if _WORD.match(token) and lowered not in FUNCTION_WORDS:
            return lowered
    return tokens[0].lower() if tokens else ""


def is_control(name: str) -> bool:
    """Whether ``name`` (a task's full or short name) is a control task's."""
    return name.endswith(CONTROL_SUFFIX)


def controlled_name(name: str) -> str:
    """The task a control task controls (``SentLen~control`` -> ``SentLen``)."""
    return name[: -len(CONTROL_SUFFIX)] if is_control(name) else name


def control_labels(
    words: dict[str, list[str]], targets: dict[str, Counter[str]], labels: list[str], seed: int
) -> dict[str, str]:
    """Draw the map word type -> label: ``words[split]`` holds each item's word type,
    ``targets[split]`` the label counts the control task must have in that split."""
    rng = np.random.default_rng(seed)
    splits = list(words)
    per_split = [Counter(words[name]) for name in splits]
    types = list(dict.fromkeys(w for c in per_split for w in c))
    counts = np.array([[c[w] for c in per_split] for w in types], dtype=np.int64)
    counts = counts.reshape(len(types), len(splits))
    room = np.array([[targets[s][label] for s in splits] for label in labels], dtype=np.int64)
    total = counts.sum(1)
    order = rng.permutation(len(types))
    order = order[np.argsort(-total[order], kind="stable")]  # frequent first, ties shuffled
    mapping: dict[str, str] = {}
    tail: list[int] = []
    for t in order:
        if total[t] == 1:
            tail.append(int(t))
            continue
        fits = (room >= counts[t]).all(1)  # room in every split: exact per split
        if not fits.any():  # room in total: exact over all splits
            fits = room.sum(1) >= total[t]
        if fits.any():
            weight = np.where(fits, room.sum(1), 0).astype(float)
            choice = int(rng.choice(len(labels), p=weight / weight.sum()))
        else:  # too frequent for any label's room: the one it overfills least
            choice = int(np.argmax(np.minimum(room, counts[t]).sum(1)))
        room[choice] -= counts[t]
        mapping[types[t]] = labels[choice]
    # The tail fills each split's room, as far as the label's total room allows; what is left
    # (only after a type was placed by its total) fills the remaining total room.
    left: list[int] = []
    for s in range(len(splits)):
        singles = [t for t in tail if counts[t, s] == 1]
        allowed = np.minimum(np.clip(room[:, s], 0, None), np.clip(room.sum(1), 0, None))
        pool = rng.permutation(np.repeat(np.arange(len(labels)), allowed))
        for t, j in zip(singles, pool):
            mapping[types[t]] = labels[int(j)]
            room[j, s] -= 1
        left += singles[len(pool) :]
    pool = rng.permutation(np.repeat(np.arange(len(labels)), np.clip(room.sum(1), 0, None)))
    for i, t in enumerate(left):
        # more items than room only after an overfilled type: those draw at random
        mapping[types[t]] = labels[
            int(pool[i]) if i < len(pool) else int(rng.integers(len(labels)))
        ]
    return mapping


def control_task(task: ProbingTask, seed: int = 0) -> ProbingTask:
    """The control task of ``task``: same sentences and label set, each label a seeded random
    function of the sentence's control word, with the task's label counts in every split."""
    labels = task.labels
    words = {
        name: [control_word(s) for s in split.sentences] for name, split in task.splits.items()
    }
    targets = {name: Counter(split.labels) for name, split in task.splits.items()}
    # A label seen in dev/test only still belongs to the label set.
    labels = list(dict.fromkeys([*labels, *sorted({lb for c in targets.values() for lb in c})]))
    mapping = control_labels(words, targets, labels, seed)
    splits = {name: _relabel(split, mapping) for name, split in task.splits.items()}
    # Cross-validated tasks: ``splits`` is the first fold and holds every item once, so the
    # map drawn on it labels every fold's splits (counts exact over all items and in fold 1).
    folds = None
    if task.folds is not None:
        folds = [{n: _relabel(sp, mapping) for n, sp in fold.items()} for fold in task.folds]
    moved = {name: sum((Counter(splits[name].labels) - targets[name]).values()) for name in splits}
    overall = sum(
        (
            Counter(w for sp in splits.values() for w in sp.labels)
            - sum(targets.values(), Counter())
        ).values()
    )
    warnings = []
    if any(moved.values()):
        per_split = ", ".join(f"{n} in {name}" for name, n in moved.items() if n)
        warnings.append(
            f"control labels differ from the task's label counts by {per_split} and {overall} "
            "over all splits: some control words are too frequent to fit the per-split counts"
        )
    meta = task.metadata
    metadata = replace(
        meta,
        name=meta.name + CONTROL_SUFFIX,
        paper_name=None if meta.paper_name is None else meta.paper_name + CONTROL_SUFFIX,
        no_surface_cue=False,
        description=f"Control task (Hewitt & Liang, 2019) of {meta.name}: each label a seeded "
        f"random function (seed {seed}) of the sentence's first content word, with the task's "
        "label counts in every split.",
    )
    return ProbingTask(metadata, splits, warnings, folds=folds)


def _relabel(split: Split, mapping: dict[str, str]) -> Split:
    """``split`` with each label replaced by its control word's (pairs and sub-types kept)."""
    labels = [mapping[control_word(s)] for s in split.sentences]
    return replace(split, sentences=list(split.sentences), labels=labels)
