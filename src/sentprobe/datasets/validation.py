"""Checks run while a task is loaded, so bad data fails before any encoding is paid for.

Errors (the data cannot be probed as it is) are collected per file and raised together as one
:class:`~sentprobe.errors.DataError` naming the file and line of the first problem and listing a
few more. Warnings (the data can be probed but results may mislead) become readable strings in
``ProbingTask.warnings`` so reports can show them next to the scores.
"""

from __future__ import annotations

import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

from sentprobe.datasets.task import SPLITS, ProbingTask, Split, TaskMetadata
from sentprobe.errors import DataError

#: Accepted spellings of split names (SentEval uses tr/va/te).
SPLIT_ALIASES: dict[str, str] = {
    "tr": "train",
    "train": "train",
    "va": "dev",
    "dev": "dev",
    "valid": "dev",
    "validation": "dev",
    "te": "test",
    "test": "test",
}
ALLOWED_SPLITS = "tr, va, te (or train, dev/validation, test)"

#: Ratio between the largest and the smallest class of a split above which we warn.
IMBALANCE_RATIO = 1.5
#: How many problems one error message spells out before summarising the rest.
MAX_REPORTED = 5


def normalize_split(raw: str) -> str | None:
    """Map a split name as written in a file to train/dev/test (None if unknown)."""
    return SPLIT_ALIASES.get(raw.strip().lower())


def _quote(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


#: One problem of a load: (file, line or None for the whole file, what is wrong).
Problem = tuple[str | None, int | None, str]


class Problems:
    """Collects errors of one load so the user sees several at once instead of one per run.

    With a ``sink`` the load is lenient: problems are appended to it and never raised, so the
    caller (``sentprobe audit``) gets the task built from the lines that could be read.
    """

    def __init__(self, path: str | Path | None, sink: list[Problem] | None = None) -> None:
        self.path = None if path is None else str(path)
        self.lenient = sink is not None
        self._items: list[Problem] = sink if sink is not None else []

    def add(self, line: int | None, problem: str, path: str | Path | None = None) -> None:
        self._items.append((self.path if path is None else str(path), line, problem))

    def __len__(self) -> int:
        return len(self._items)

    def raise_if_any(self) -> None:
        """Raise one DataError located at the first problem, mentioning up to a few others
        (never when lenient)."""
        if not self._items or self.lenient:
            return
        path, line, problem = self._items[0]
        extra = []
        for other_path, other_line, other_problem in self._items[1:MAX_REPORTED]:
            where = "" if other_path == path else f"{other_path}, "
            where += f"line {other_line}" if other_line is not None else "file"
            extra.append(f"\n  also {where}: {other_problem}")
        rest = len(self._items) - MAX_REPORTED
        if rest > 0:
            extra.append(f"\n  ... and {rest} more problem{'s' if rest > 1 else ''}")
        raise DataError(path, line, problem + "".join(extra))


class TaskBuilder:
    """Accumulates (split, label, sentence) rows with their line numbers, then builds the task.

    Row-level problems (empty sentence or label, undeclared label) are recorded by ``add``;
    task-level ones (missing split, dev/test label never seen in train) by ``build``.
    """

    def __init__(self, problems: Problems, declared_labels: tuple[str, ...] = ()) -> None:
        self.problems = problems
        self.declared = set(declared_labels)
        self._rows: dict[str, tuple[list[str], list[str], list[int]]] = {}
        self._paths: dict[str, str | None] = {}
        self._clusters: dict[str, list[str]] = {}  # each kept row's target form, where given

    def add(
        self,
        split: str,
        label: str,
        sentence: str,
        line: int,
        path: str | Path | None = None,
        cluster: str | None = None,
    ) -> None:
        label, sentence = label.strip(), sentence.strip()
        if not sentence:
            self.problems.add(line, "empty sentence", path)
            return
        if not label:
            self.problems.add(line, "empty label", path)
            return
        if self.declared and label not in self.declared:
            known = ", ".join(sorted(self.declared)[:10]) + (
                ", ..." if len(self.declared) > 10 else ""
            )
            self.problems.add(
                line, f"label {_quote(label)} is not among the declared labels ({known})", path
            )
            return
        if split not in self._rows:
            self._rows[split] = ([], [], [])
            self._paths[split] = self.problems.path if path is None else str(path)
        sents, labels, lines = self._rows[split]
        sents.append(sentence)
        labels.append(label)
        lines.append(line)
        if cluster is not None:
            self._clusters.setdefault(split, []).append(cluster)

    def build(self, metadata: TaskMetadata) -> ProbingTask:
        """Run task-level checks, raise all collected problems, else return the task."""
        if not self._rows and not self.problems:
            self.problems.add(None, "no data lines (the file is empty)")
        elif self._rows:
            for required, name in (("train", "tr/train"), ("test", "te/test")):
                if required not in self._rows:
                    self.problems.add(
                        None,
                        f"no {required} split (no lines with split {name}); train and test are "
                        "required, dev is optional",
                    )
        if "train" in self._rows:
            seen = set(self._rows["train"][1])
            for split in ("dev", "test"):
                if split not in self._rows:
                    continue
                _, labels, lines = self._rows[split]
                reported: set[str] = set()
                for label, line in zip(labels, lines, strict=True):
                    if label not in seen and label not in reported:
                        reported.add(label)
                        self.problems.add(
                            line,
                            f"label {_quote(label)} occurs in the {split} split (first here) but "
                            "never in train, so no probe can predict it",
                            self._paths[split],
                        )
        if "train" in self._rows and len(set(self._rows["train"][1])) == 1:
            only = self._rows["train"][1][0]
            self.problems.add(
                None,
                f"the train split has one label only ({_quote(only)}): every probe and the "
                "majority baseline would score 100% on it, which measures nothing",
                self._paths["train"],
            )
        self.problems.raise_if_any()
        splits = {
            name: Split(
                sentences=self._rows[name][0],
                labels=self._rows[name][1],
                clusters=self._split_clusters(name),
            )
            for name in SPLITS
            if name in self._rows
        }
        task = ProbingTask(metadata=metadata, splits=splits)
        task.warnings.extend(task_warnings(task))
        return task

    def _split_clusters(self, split: str) -> list[str] | None:
        """The split's forms when every one of its rows was given one, else None."""
        found = self._clusters.get(split)
        return found if found is not None and len(found) == len(self._rows[split][0]) else None


def validate_task(task: ProbingTask) -> ProbingTask:
    """Check a task built in memory (e.g. by a generator) like a loaded one; add its warnings.

    Raises DataError (without line numbers, lines being positions within a split) on the same
    problems the loaders reject.
    """
    problems = Problems(f"<task {task.name}>")
    builder = TaskBuilder(problems, task.metadata.labels)
    for name, split in task.splits.items():
        if name not in SPLITS:
            problems.add(None, f"unknown split {name!r} (allowed: {', '.join(SPLITS)})")
            continue
        if len(split.sentences) != len(split.labels):
            problems.add(
                None,
                f"{name} split has {len(split.sentences)} sentences but {len(split.labels)} labels",
            )
            continue
        for i, (sentence, label) in enumerate(
            zip(split.sentences, split.labels, strict=True), start=1
        ):
            builder.add(name, str(label), sentence, i, f"<task {task.name}, {name} split>")
    checked = builder.build(task.metadata)
    task.warnings = [w for w in task.warnings if w not in checked.warnings] + checked.warnings
    return task


def _label_value(label: str) -> str:
    """What a label means, whatever its spelling: a number's value, else its text without
    surrounding spaces."""
    text = label.strip()
    try:
        return repr(float(text))
    except ValueError:
        return text


def task_warnings(task: ProbingTask) -> list[str]:
    """Problems that do not stop probing but can make scores misleading."""
    warnings: list[str] = []
    splits = task.splits

    # Same sentence in several splits: the probe may have seen test items (X-Probe's
    # tree_depth dev and test files are byte-identical, for instance). Compared in Unicode's
    # NFC form with spaces collapsed: an NFD copy of a train sentence is the same sentence to
    # a reader and to most tokenizers.
    where: dict[str, set[str]] = defaultdict(set)
    labels_of: dict[str, set[str]] = defaultdict(set)
    for name, split in splits.items():
        for sentence, label in zip(split.sentences, split.labels, strict=True):
            same = " ".join(unicodedata.normalize("NFC", sentence).split())
            where[same].add(name)
            labels_of[same].add(label)
    shared = [s for s, names in where.items() if len(names) > 1]
    if shared:
        examples = "; ".join(
            f"{_quote(s, 50)} in {'+'.join(n for n in SPLITS if n in where[s])}" for s in shared[:3]
        )
        warnings.append(
            f"{len(shared)} sentence{'s' if len(shared) > 1 else ''} occur in more than one "
            f"split, so test scores may be inflated (e.g. {examples})"
        )

    # Same sentence with several labels: the task is partly unlearnable (X-Probe odd_man_out).
    ambiguous = [s for s, labels in labels_of.items() if len(labels) > 1]
    if ambiguous:
        examples = "; ".join(
            f"{_quote(s, 50)}: {', '.join(sorted(labels_of[s]))}" for s in ambiguous[:3]
        )
        warnings.append(
            f"{len(ambiguous)} sentence{'s' if len(ambiguous) > 1 else ''} carry more than one "
            f"label, which caps the reachable accuracy (e.g. {examples})"
        )

    # One label written several ways ("1", "1.0", " 1"): counted as several classes.
    spellings: dict[str, set[str]] = defaultdict(set)
    for split in splits.values():
        for label in set(split.labels):
            spellings[_label_value(label)].add(label)
    alike = [sorted(v) for v in spellings.values() if len(v) > 1]
    if alike:
        shown = "; ".join(", ".join(repr(x) for x in group) for group in alike[:3])
        warnings.append(
            f"{len(alike)} label{'s are' if len(alike) > 1 else ' is'} written in several ways "
            f"({shown}), and each spelling is a class of its own: write each label one way"
        )

    train_labels = set(splits["train"].labels) if "train" in splits else set()
    for name, split in splits.items():
        counts = Counter(split.labels)
        if not counts:
            continue
        missing = sorted(train_labels - counts.keys())
        if name != "train" and missing:
            shown = ", ".join(repr(m) for m in missing[:5]) + (", ..." if len(missing) > 5 else "")
            warnings.append(
                f"{name} split has no examples of {len(missing)} train label"
                f"{'s' if len(missing) > 1 else ''} ({shown})"
            )
        (big, n_big), (small, n_small) = counts.most_common()[0], counts.most_common()[-1]
        if n_small and n_big / n_small > IMBALANCE_RATIO:
            warnings.append(
                f"{name} split is imbalanced: largest class {big!r} has {n_big} examples, "
                f"smallest {small!r} has {n_small} ({n_big / n_small:.1f}x); compare accuracy "
                "with the majority baseline"
            )
    return warnings
