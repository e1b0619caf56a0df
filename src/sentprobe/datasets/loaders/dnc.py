"""The DNC release of Kim et al. (2019)'s function-word probing sets, and suites in its format.

Public API (also used by ``sentprobe build --family kim2019`` to read back what it wrote):

* :func:`load_dnc` ``(directory, suite=None) -> list[ProbingTask]``: every set of a release
  directory (``ACCEPTABILITY/`` and ``NLI/`` subfolders, or the files directly in it);
* :func:`load_dnc_set` ``(data_file, ...) -> ProbingTask``: one ``<set>_data.json``.

Format: ``<set>_data.json`` is a JSON array of items with ``context``, ``hypothesis``,
``label``, ``pair-id``; ``<set>_metadata.json`` holds one entry per ``pair-id`` whose ``misc``
gives, for acceptability sets, ``fold1..foldN`` -> train/dev/test, and for NLI sets the MNLI
provenance (``task_desc``: the preposition, the negation pattern, ...). A ``misc["subtype"]``,
when present, is the item's sub-type (generated suites write it); otherwise it is derived as
the paper's breakdowns need (wh-words: the wh-word; prepositions: the preposition; negation:
the pattern on premise and hypothesis, Appendix F).

Acceptability sets are probed by 10-fold cross-validation on the released folds; NLI sets are
evaluation sets. The NLI sets get ten folds of the same shape (8 train, 1 dev,
1 test; seeded, so always the same) only for the fallback protocol used when no NLI training
set is given (items sharing a premise or an MNLI ``tuple_id`` kept in one part, see
:func:`nli_folds`); zero-shot evaluation scores every item.

Any problem (malformed JSON, an item without metadata, an unknown label, a fold lacking a
split) raises one DataError naming the file and the item's ``pair-id``; nothing is returned.
Items of a generated NLI set marked ``expected_label: unverified`` (no annotated sample
confirms their labelling rule; their ``label`` is empty and the rule's guess is
``misc.candidate_label``) are for annotators only and are not loaded; a set left with its
unmutated originals only is refused (:class:`UnverifiedSetError`), never scored under the
phenomenon's name. Items marked ``heuristic`` are counted in ``TaskMetadata.heuristic_labels``.
Pair accuracy groups the items of one ``tuple_id`` (one MNLI pair and its mutations); a
generated acceptability set's ``couple`` (two different sentences dealt to one fold) is not a
pair.

Long because the release's set table, the item checks and the fold rules are one format.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sentprobe.datasets.loaders.common import read_task_bytes
from sentprobe.datasets.task import ProbingTask, Split, TaskMetadata
from sentprobe.datasets.validation import Problems, task_warnings
from sentprobe.errors import DataError
from sentprobe.io import inside

CITATION = (
    "Kim, Patel, Poliak, Xia, Wang, McCoy, Tenney, Ross, Linzen, Van Durme, Bowman and "
    "Pavlick (2019). Probing What Different NLP Tasks Teach Machines about Function Word "
    "Comprehension. *SEM 2019, pages 235-249. https://www.aclweb.org/anthology/S19-1026"
)
ACCEPTABILITY_LABELS = ("acceptable", "unacceptable")
NLI_LABELS = ("entailment", "neutral", "contradiction")
#: The probe of the paper's acceptability classifier (a 512-unit MLP), registered in
#: ``sentprobe.probes``; NLI heads use the same architecture.
PROBE = "kim-mlp"
#: The paper's control rows, added to ``--baselines default`` for these tasks.
BASELINES = ("majority", "random-bilstm")
#: Folds the NLI fallback protocol makes (the released acceptability sets have ten).
NLI_FOLDS = 10

_WH_WORDS = ("who", "what", "where", "when", "why", "how")
#: Negation mutation codes of the release's ``task_desc`` -> the paper's names (Appendix F).
NEGATION_PATTERNS = {
    "unchanged": "none",
    "neg": "explicit",
    "lneg": "lexical",
    "lexpneg": "both",
}


def wh_group(sentence: str, _misc: dict[str, Any]) -> str:
    """The sentence's wh-word ("who"), "several" (which one was swapped is not recorded),
    or "none"."""
    tokens = set(re.findall(r"[a-z]+", sentence.lower()))
    found = [w for w in _WH_WORDS if w in tokens]
    return found[0] if len(found) == 1 else "several" if found else "none"


def negation_group(_sentence: str, misc: dict[str, Any]) -> str:
    """``lneg-neg`` -> "P:lexical H:explicit" (premise and hypothesis mutation, Appendix F)."""
    desc = str(misc.get("task_desc", ""))
    parts = desc.split("-")
    if len(parts) != 2 or not all(p in NEGATION_PATTERNS for p in parts):
        return desc or "unknown"
    return f"P:{NEGATION_PATTERNS[parts[0]]} H:{NEGATION_PATTERNS[parts[1]]}"


def _desc_group(_sentence: str, misc: dict[str, Any]) -> str | None:
    desc = misc.get("task_desc")
    return None if desc is None else str(desc)


@dataclass(frozen=True)
class DncSet:
    """What the release's file stem means: the paper's task name, format, sub-type rule."""

    paper_name: str
    format: str
    group: Callable[[str, dict[str, Any]], str | None] | None = None
    description: str = ""
    #: whether the label is meant to depend on the function word itself (the paper's sets);
    #: False for sets that test something narrower and say so in their name (collocations)
    function_word_property: bool = True


#: Release file stems (without ``_data.json``) -> the paper's names (its Table 3) and formats.
DNC_SETS: dict[str, DncSet] = {
    "acceptability-whwords": DncSet(
        "wh-words", "acceptability-single", wh_group, "a wh-word swapped for another one"
    ),
    "acceptability-definiteness": DncSet(
        "Def", "acceptability-single", None, "definite/indefinite articles swapped"
    ),
    "acceptability-coordinating-conjunctions": DncSet(
        "Coord", "acceptability-single", None, "and/but/or swapped"
    ),
    "acceptability-definiteness-collocations": DncSet(
        "Def-collocations",
        "acceptability-single",
        None,
        "an article swapped inside a collocation that selects it (the same, such a, a lot "
        "of): tests these collocations, not definiteness",
        function_word_property=False,
    ),
    "acceptability-coordination-collocations": DncSet(
        "Coord-collocations",
        "acceptability-single",
        None,
        "and/but/or swapped inside a frame that selects it (either ... or, between ... and, "
        "and so on): tests these collocations, not coordination",
        function_word_property=False,
    ),
    "acceptability-eos": DncSet(
        "EOS", "acceptability-pair", None, "two sentences of running text, segmented right or not"
    ),
    "nli-prepositions": DncSet("Prep", "nli-pair", _desc_group, "a preposition swapped"),
    "nli-comparatives": DncSet("Comp", "nli-pair", _desc_group, "comparatives"),
    "nli-quantification": DncSet("Quant", "nli-pair", _desc_group, "quantifiers"),
    "nli-spatial": DncSet("Spatial", "nli-pair", _desc_group, "spatial expressions"),
    "nli-negation": DncSet(
        "Negation", "nli-pair", negation_group, "explicit (not) and lexical (antonym) negation"
    ),
}
#: The nine sets of Kim et al.'s release (the collocation sets are generated only).
RELEASE_SETS = [stem for stem, info in DNC_SETS.items() if info.function_word_property]
#: Paper task order (its figures): acceptability first, then NLI.
TASK_ORDER = [s.paper_name for s in DNC_SETS.values()]
DATA_SUFFIX, METADATA_SUFFIX = "_data.json", "_metadata.json"


def _read_json(path: Path) -> Any:
    data = read_task_bytes(path)
    try:
        return json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        problem = f"not valid UTF-8 (byte {e.start + 1}); re-save the file as UTF-8"
        raise DataError(path, None, problem) from None
    except json.JSONDecodeError as e:
        raise DataError(path, e.lineno, f"malformed JSON: {e.msg} (column {e.colno})") from None


def _items(path: Path) -> list[dict[str, Any]]:
    items = _read_json(path)
    if not isinstance(items, list):
        raise DataError(path, None, "expected a JSON array of items")
    for i, item in enumerate(items):
        if not isinstance(item, dict) or "pair-id" not in item:
            raise DataError(path, None, f"item {i + 1}: not an object with a 'pair-id'")
    return items


def set_stem(data_file: Path) -> str:
    """``acceptability-eos_data.json`` -> ``acceptability-eos``."""
    name = data_file.name
    return name[: -len(DATA_SUFFIX)] if name.endswith(DATA_SUFFIX) else data_file.stem


def declared_set(items: list[dict[str, Any]]) -> str | None:
    """The set the items say they belong to: their ``type-of-inference`` (the release writes
    ``acceptability-definiteness.tsv``, ``nli-negation``; so does ``build --family
    kim2019``) when all items agree on one known set, else None. A set is described by this,
    not by its file name: the release's Def saved as ``definiteness_data.json`` is still Def,
    and gets Def's checks."""
    declared = {str(item.get("type-of-inference") or "").removesuffix(".tsv") for item in items}
    if len(declared) != 1:
        return None
    (name,) = declared
    return name if name in DNC_SETS else None


def describe_set(stem: str, pairs: bool) -> DncSet:
    """The release's own description of ``stem``, or one inferred from its name: a stem
    starting with ``nli-`` is an NLI set, anything else acceptability (a pair if the items
    have hypotheses)."""
    if stem in DNC_SETS:
        return DNC_SETS[stem]
    if stem.startswith("nli-"):
        return DncSet(stem, "nli-pair", _desc_group)
    return DncSet(stem, "acceptability-pair" if pairs else "acceptability-single")


def _fold_names(misc: dict[str, Any]) -> list[str]:
    names = [k for k in misc if re.fullmatch(r"fold\d+", k)]
    return sorted(names, key=lambda k: int(k[4:]))


def item_groups(keys: list[list[str]]) -> list[int]:
    """Connected items: two items are in one group when they share any key (union-find)."""
    parent = list(range(len(keys)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for i, item_keys in enumerate(keys):
        for key in item_keys:
            j = first.setdefault(key, i)
            parent[root(i)] = root(j)
    return [root(i) for i in range(len(keys))]


def nli_folds(
    labels: list[str], groups: list[int] | None = None, k: int = NLI_FOLDS, seed: int = 0
) -> list[list[str]]:
    """Fold assignments in the release's shape: ``out[f][i]`` is item i's split in fold f
    (fold f tests part f, develops on part f+1, trains on the rest). Items of one group stay in
    one part: the NLI sets are minimal pairs (one MNLI pair mutated up to 16 ways, premises
    repeated), and a test item whose twin with the opposite label is in train is scored below
    chance by any probe that memorises. Groups go, largest first in a seeded order, to the part
    with the fewest items; labels are balanced only as far as the groups allow."""
    groups = list(range(len(labels))) if groups is None else groups
    rng = np.random.default_rng(seed)
    members: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    order = list(members.values())
    rng.shuffle(order)
    order.sort(key=len, reverse=True)  # stable: equal sizes keep the seeded order
    part = np.empty(len(labels), dtype=np.int64)
    sizes = [0] * k
    for items in order:
        target = sizes.index(min(sizes))
        part[items] = target
        sizes[target] += len(items)
    return [
        ["test" if p == f else "dev" if p == (f + 1) % k else "train" for p in part]
        for f in range(k)
    ]


def load_dnc_set(
    data_file: str | Path,
    *,
    suite: str | None = None,
    language: str = "en",
    root: str | Path | None = None,
) -> ProbingTask:
    """Load one ``<set>_data.json`` with its ``<set>_metadata.json`` (same folder).

    The task is named ``<suite>/<paper name>`` (just the paper name without ``suite``).
    ``root``: the suite folder both files must stay inside (``sentprobe.io.inside``: a link
    out of it is refused in one line, nothing read through it).
    """
    data_file = Path(data_file)
    stem = set_stem(data_file)
    meta_file = data_file.with_name(stem + METADATA_SUFFIX)
    if root is not None:
        root = Path(root)
        data_file = inside(root, data_file.relative_to(root))
        meta_file = inside(root, meta_file.relative_to(root))
    items = _items(data_file)
    if not meta_file.is_file():
        raise DataError(meta_file, None, f"no metadata file for {data_file.name}")
    by_id: dict[str, dict[str, Any]] = {}
    for entry in _items(meta_file):
        misc = entry.get("misc", {})
        by_id[str(entry["pair-id"])] = entry | {"misc": misc if isinstance(misc, dict) else {}}
    pairs = any(str(item.get("hypothesis") or "").strip() for item in items)
    info = describe_set(declared_set(items) or stem, pairs)
    nli = info.format == "nli-pair"
    labels = NLI_LABELS if nli else ACCEPTABILITY_LABELS
    problems = Problems(data_file)
    seen: set[str] = set()
    sents, sents2, golds, groups, miscs, ids = [], [], [], [], [], []
    unverified = heuristic = 0
    awaiting: set[str] = set()  # tuples with a mutated item that awaits annotation
    for item in items:
        pid = str(item["pair-id"])
        where = f"pair-id {pid}"
        if pid in seen:
            problems.add(None, f"{where}: pair-id occurs twice")
            continue
        seen.add(pid)
        found = by_id.get(pid)
        if found is None:
            problems.add(None, f"{where}: no entry in {meta_file.name}")
            continue
        expected = found["misc"].get("expected_label")
        if expected == "unverified":  # written for annotators only: no gold label yet
            unverified += 1
            awaiting.add(str(found["misc"].get("tuple_id")))
            continue
        heuristic += expected == "heuristic"
        label = item.get("label")
        if label not in labels:
            problems.add(
                None, f"{where}: unknown label {label!r} (expected one of {', '.join(labels)})"
            )
            continue
        context = str(item.get("context") or "").strip()
        hypothesis = str(item.get("hypothesis") or "").strip()
        if not context:
            problems.add(None, f"{where}: empty 'context'")
            continue
        if info.format != "acceptability-single" and not hypothesis:
            problems.add(None, f"{where}: empty 'hypothesis' in a sentence-pair set")
            continue
        misc = found["misc"]
        subtype = misc.get("subtype")
        if subtype is None and info.group is not None:
            subtype = info.group(context, misc)
        sents.append(context)
        sents2.append(hypothesis)
        golds.append(str(label))
        groups.append(None if subtype is None else str(subtype))
        miscs.append(misc)
        ids.append(pid)
    if not items:
        problems.add(None, "no items (an empty array)")
    problems.raise_if_any()
    if unverified and not any(m.get("original") is False for m in miscs):
        raise UnverifiedSetError(data_file, stem, unverified)
    incomplete = 0
    if unverified:  # an original whose mutations await annotation tests nothing alone
        keep = _complete_tuples(miscs, awaiting)
        incomplete = len(miscs) - sum(keep)
        sents, sents2, golds, groups, miscs, ids = (
            [x for x, k in zip(col, keep, strict=True) if k]
            for col in (sents, sents2, golds, groups, miscs, ids)
        )

    assignments = _fold_assignments(miscs, ids, golds, sents, nli, meta_file, problems)
    problems.raise_if_any()
    _check_folds(assignments, golds, data_file, stem)
    # minimal pairs: the items an NLI set made from one MNLI pair (its tuple_id); a generated
    # acceptability set's couples come from two sentences and are no pairs
    pair_ids = [m.get("tuple_id") for m in miscs]
    pair_list = None if any(p is None for p in pair_ids) else [str(p) for p in pair_ids]
    has_groups = any(g is not None for g in groups)
    group_list = [g if g is not None else "none" for g in groups] if has_groups else None
    second = sents2 if info.format != "acceptability-single" else None

    def split_of(rows: list[int]) -> Split:
        return Split(
            sentences=[sents[i] for i in rows],
            labels=[golds[i] for i in rows],
            sentences2=None if second is None else [second[i] for i in rows],
            groups=None if group_list is None else [group_list[i] for i in rows],
            pairs=None if pair_list is None else [pair_list[i] for i in rows],
        )

    folds = [
        {name: split_of([i for i, s in enumerate(fold) if s == name]) for name in SPLIT_NAMES}
        for fold in assignments
    ]
    first = next((m.get("corpus-license") for m in by_id.values() if m.get("corpus-license")), "")
    metadata = TaskMetadata(
        name=f"{suite}/{info.paper_name}" if suite else info.paper_name,
        paper_name=info.paper_name,
        language=language,
        labels=labels,
        source=str(data_file),
        license=str(first),
        citation=CITATION,
        description=info.description,
        no_surface_cue=not nli,
        format=info.format,
        probe=PROBE,
        baselines=BASELINES,
        heuristic_labels=heuristic,
    )
    task = ProbingTask(metadata=metadata, splits=folds[0], folds=folds)
    if unverified:
        also = (
            f", nor the {incomplete} unmutated originals of their pairs (an original without its "
            "mutation tests nothing)"
            if incomplete
            else ""
        )
        task.warnings.append(
            f"{unverified} items not loaded: no annotated sample confirms their labelling "
            f"rule, so they await annotation (sentprobe annotate){also}"
        )
    if heuristic:
        task.warnings.append(
            f"{heuristic} of {len(ids)} items have a generator's heuristic label, not an "
            "annotator's (sentprobe run scores them only with --allow-heuristic-labels)"
        )
    task.warnings.extend(task_warnings(_joined(task) if second is not None else task))
    return task


class UnverifiedSetError(DataError):
    """A generated NLI set none of whose mutated items has a gold label: loading only its
    unmutated originals would score a set without its phenomenon under the phenomenon's name.
    """

    def __init__(self, data_file: Path, stem: str, unverified: int) -> None:
        suite = data_file.parent.parent if data_file.parent.name == "NLI" else data_file.parent
        self.stem, self.unverified = stem, unverified
        super().__init__(
            data_file,
            None,
            f"{stem}: all {unverified} mutated items await annotation (no annotated sample "
            f"confirms their labelling rule), so the set is not scored; annotate it: sentprobe "
            f"annotate export {suite} -o sheet.csv, collect votes, then sentprobe annotate "
            f"import {suite} votes.csv -o FINAL and run on FINAL",
        )


class SmallSetError(DataError):
    """A set too small for its ten folds: some fold lacks a train, dev or test item, or its
    train part holds one label only (cross-validation would fit nothing)."""

    def __init__(self, data_file: Path, stem: str, n: int, reason: str) -> None:
        self.stem = stem
        super().__init__(
            data_file,
            None,
            f"{stem}: {n} items, too few for ten folds ({reason}); not scored",
        )


def _complete_tuples(miscs: list[dict[str, Any]], awaiting: set[str]) -> list[bool]:
    """Which loaded items to keep: not those of a ``tuple_id`` one of whose mutated items
    awaits annotation (its unmutated original would be scored without its mutation)."""
    return [str(m.get("tuple_id")) not in awaiting for m in miscs]


def _check_folds(
    assignments: list[list[str]], golds: list[str], data_file: Path, stem: str
) -> None:
    """Raise :class:`SmallSetError` unless every fold has train, dev and test items and at
    least two labels in train."""
    n = len(golds)
    if n == 0:
        raise SmallSetError(data_file, stem, 0, "no labelled item")
    for f, fold in enumerate(assignments, 1):
        for split in SPLIT_NAMES:
            if split not in fold:
                raise SmallSetError(data_file, stem, n, f"fold {f} has no {split} item")
        if len({g for g, s in zip(golds, fold, strict=True) if s == "train"}) < 2:
            raise SmallSetError(data_file, stem, n, f"fold {f} trains on one label only")


def _joined(task: ProbingTask) -> ProbingTask:
    """The task with each pair as one text, so data warnings (an item in two splits, one
    item with two labels) are about pairs: NLI premises recur with other hypotheses."""
    splits = {
        name: Split([f"{a} ||| {b}" for a, b in zip(s.sentences, s.sentences2 or [])], s.labels)
        for name, s in task.splits.items()
    }
    return ProbingTask(task.metadata, splits)


SPLIT_NAMES = ("train", "dev", "test")


def _fold_assignments(
    miscs: list[dict[str, Any]],
    ids: list[str],
    labels: list[str],
    contexts: list[str],
    nli: bool,
    meta_file: Path,
    problems: Problems,
) -> list[list[str]]:
    """Per fold, each item's split: from ``fold1..foldN`` in the metadata (every acceptability
    set must have them; an NLI set may), else the NLI fallback's stratified folds."""
    names = _fold_names(miscs[0]) if miscs else []
    if not names:
        if nli:
            keys = [[f"t:{m['tuple_id']}"] if "tuple_id" in m else [] for m in miscs]
            return nli_folds(labels, item_groups([[*k, f"p:{c}"] for k, c in zip(keys, contexts)]))
        problems.add(None, f"pair-id {ids[0]}: no fold1..fold10 in 'misc'", meta_file)
        return []
    out = [[""] * len(ids) for _ in names]
    test_count = [0] * len(ids)
    for i, (misc, pid) in enumerate(zip(miscs, ids, strict=True)):
        for f, name in enumerate(names):
            value = str(misc.get(name, "")).strip().lower()
            if value not in SPLIT_NAMES:
                shown = repr(misc[name]) if name in misc else "missing"
                problems.add(
                    None,
                    f"pair-id {pid}: {name} is {shown} (expected train, dev or test)",
                    meta_file,
                )
                continue
            out[f][i] = value
            test_count[i] += value == "test"
    if len(problems):
        return out
    for f, name in enumerate(names):
        for split in SPLIT_NAMES:
            if split not in out[f]:
                problems.add(
                    None, f"{name} has no {split} items (every fold needs all three)", meta_file
                )
    for pid, count in zip(ids, test_count, strict=True):
        if count != 1:
            problems.add(
                None,
                f"pair-id {pid}: in the test split of {count} folds (cross-validation tests "
                "each item exactly once)",
                meta_file,
            )
            break
    return out


def data_files(directory: Path) -> list[Path]:
    """The ``*_data.json`` files of a release directory (top level and one level down)."""
    found = sorted(directory.glob(f"*{DATA_SUFFIX}")) + sorted(directory.glob(f"*/*{DATA_SUFFIX}"))
    order = {stem: i for i, stem in enumerate(DNC_SETS)}
    return sorted(found, key=lambda p: (order.get(set_stem(p), len(order)), set_stem(p)))


def is_dnc_dir(directory: Path) -> bool:
    return directory.is_dir() and bool(data_files(directory))


def load_dnc(
    directory: str | Path, *, suite: str | None = None, language: str = "en"
) -> list[ProbingTask]:
    """Every ``<set>_data.json`` (+ metadata) under ``directory``: the DNC release's
    ``ACCEPTABILITY``/``NLI`` folders, or a generated suite in the same format. Tasks come
    in the paper's order (acceptability, then NLI), named ``<suite>/<paper name>``."""
    directory = Path(directory).expanduser()
    if not directory.is_dir():
        raise DataError(directory, None, "not a directory (expected the DNC release folder)")
    files = data_files(directory)
    if not files:
        raise DataError(directory, None, f"no *{DATA_SUFFIX} files (not a DNC release folder)")
    tasks, refused = [], []
    for f in files:
        try:
            tasks.append(load_dnc_set(f, suite=suite, language=language, root=directory))
        except (UnverifiedSetError, SmallSetError) as e:
            refused.append(e)
    if not tasks:
        raise refused[0]
    for skipped in refused:  # the other sets are probed; each refused set is one line
        warnings.warn(f"skipped {skipped.problem}", SkippedSetWarning, stacklevel=2)
    return tasks


class SkippedSetWarning(UserWarning):
    """A set of a suite that is not probed (awaits annotation, or too small for its folds),
    while the other sets are."""
