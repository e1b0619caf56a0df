"""A probing task is data: metadata (what it probes, where it came from) plus labelled splits."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Literal

Category = Literal["surface", "syntactic", "semantic", "other"]
SPLITS = ("train", "dev", "test")

# The paper's task names, in Table 2 order, with their category.
PAPER_TASKS: dict[str, Category] = {
    "SentLen": "surface",
    "WC": "surface",
    "TreeDepth": "syntactic",
    "TopConst": "syntactic",
    "BShift": "syntactic",
    "Tense": "semantic",
    "SubjNum": "semantic",
    "ObjNum": "semantic",
    "SOMO": "semantic",
    "CoordInv": "semantic",
}

#: Paper tasks whose two classes are the same kind of sentence with or without one alteration:
#: no surface cue may predict the label (``TaskMetadata.no_surface_cue`` defaults to this).
ALTERED_TASKS = frozenset({"BShift", "SOMO", "CoordInv"})


@dataclass(frozen=True)
class TaskMetadata:
    """What a task is, declared as data (cf. MTEB's TaskMetadata)."""

    name: str
    paper_name: str | None = None
    language: str = "en"
    category: Category = "other"
    labels: tuple[str, ...] = ()
    source: str = ""
    license: str = ""
    citation: str = ""
    description: str = ""
    #: no surface cue (first/last token, punctuation, length, words) may predict the label, so
    #: ``sentprobe audit`` treats one as a defect; None: True for the paper's altered-sentence
    #: tasks (BShift, SOMO, CoordInv), False otherwise
    no_surface_cue: bool | None = None
    #: how items are probed: "single" (one sentence, the default), "acceptability-pair" (two
    #: sentences judged together, their vectors concatenated: Kim et al.'s EOS), "nli-pair"
    #: (premise, hypothesis: features [u, v, |u-v|, u*v], scored zero-shot by a head trained
    #: on an NLI training set)
    format: str = "single"
    #: the probe used when the run names none (``run --probe``); None: the run's default
    probe: str | None = None
    #: baselines (``sentprobe.registry.baselines`` names) that ``--baselines default`` adds
    #: for this task: the controls its paper reports
    baselines: tuple[str, ...] = ()
    #: items whose label is a generator's rule, not an annotator's judgment (generated NLI
    #: sets before ``sentprobe annotate``): ``sentprobe run`` scores them only when asked to
    heuristic_labels: int = 0

    @property
    def expects_no_surface_cue(self) -> bool:
        if self.no_surface_cue is not None:
            return self.no_surface_cue
        return (self.paper_name or self.name.rsplit("/", 1)[-1]) in ALTERED_TASKS


@dataclass
class Split:
    """Items of one split. ``sentences2``: the second sentence of each pair (pair formats);
    ``groups``: each item's sub-type (e.g. the wh-word, the preposition, the negation
    pattern), kept with stored predictions so reports can break accuracy down by it;
    ``pairs``: each item's minimal-pair id (the items made from one source sentence or pair,
    Kim et al.'s sets), for pair-level accuracy; ``clusters``: each item's target word form
    where the split is lexical (a task file's ``.forms`` sidecar): items of one form are not
    independent draws, so confidence intervals and paired tests resample forms, not items."""

    sentences: list[str]
    labels: list[str]
    sentences2: list[str] | None = None
    groups: list[str] | None = None
    pairs: list[str] | None = None
    clusters: list[str] | None = None

    def __len__(self) -> int:
        return len(self.sentences)


@dataclass
class ProbingTask:
    """Metadata plus splits. ``dev`` may be absent: probes then select by k-fold CV on train.

    ``folds``: for cross-validated tasks (Kim et al. 2019), one train/dev/test split dict per
    fold, each item in exactly one fold's test split; ``splits`` is then the first fold, so
    code that knows nothing of folds still sees a valid task.
    """

    metadata: TaskMetadata
    splits: dict[str, Split]
    warnings: list[str] = field(default_factory=list)
    folds: list[dict[str, Split]] | None = None

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def labels(self) -> list[str]:
        """Label set in a stable order: the declared one, else sorted train labels."""
        if self.metadata.labels:
            return list(self.metadata.labels)
        return sorted(set(self.splits["train"].labels))

    def sentences(self) -> list[str]:
        """All sentences of all splits (with repeats), for encoding in one pass."""
        out = []
        for split in self.splits.values():
            out += split.sentences + (split.sentences2 or [])
        return out

    def content_hash(self) -> str:
        """Identifies the exact data, so stored results are never reused for changed files.

        Computed once: a loaded task is treated as immutable.
        """
        if "_content_hash" not in self.__dict__:
            h = hashlib.sha1()
            for name in sorted(self.splits):
                split = self.splits[name]
                h.update(name.encode())
                for sent, label in zip(split.sentences, split.labels):
                    h.update(f"{label}\t{sent}\n".encode())
                # pairs, sub-types and folds only enter the hash where they exist, so the
                # hashes of single-sentence tasks stay what they were
                for extra in (split.sentences2, split.groups, split.pairs):
                    if extra is not None:
                        h.update(("\x00" + "\n".join(extra)).encode())
                if split.clusters is not None:  # its own tag: never read as another field
                    h.update(("\x02" + "\n".join(split.clusters)).encode())
            for fold in self.folds or []:
                h.update(b"\x01")
                for name in sorted(fold):
                    h.update(f"{name}:{len(fold[name])}:{'|'.join(fold[name].sentences)}".encode())
            self.__dict__["_content_hash"] = h.hexdigest()[:16]
        return self.__dict__["_content_hash"]
