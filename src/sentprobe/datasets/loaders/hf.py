"""Hugging Face datasets: ``-t hf:ORG/NAME[:CONFIG]`` from the Hub, and local folders written by
``datasets``' ``save_to_disk`` or holding parquet files (what ``sentprobe export`` writes).

A task is one dataset (one Hub config) with a sentence column and a label column (``sentence``
and ``label`` unless a spec ends in ``?sentence=COL&label=COL``) and splits train / validation
/ test (any spelling of :data:`~sentprobe.datasets.validation.SPLIT_ALIASES`). Rows go through
the same :class:`~sentprobe.datasets.validation.TaskBuilder` as file lines, so the same
problems fail the same way; the "line" of an error is the row number (1-based) in its split.
A ``ClassLabel`` column gives the label names, in its order. A ``sentprobe.json`` beside the
data (written by ``sentprobe export``) restores the task's metadata, so an exported task loads
back under its own name with the same content hash.

Parquet folders are read with pyarrow (a core dependency); ``save_to_disk`` folders and the
Hub need the ``datasets`` package (``pip install 'sentprobe[hf-datasets]'``). Long because
cards, configs, column roles (single, GLUE-style pairs) and sidecars are one format's reading:
split apart, each part would parse the card and the spec again.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from sentprobe.datasets.loaders.common import task_order
from sentprobe.datasets.task import ProbingTask, Split, TaskMetadata
from sentprobe.datasets.validation import (
    ALLOWED_SPLITS,
    Problems,
    TaskBuilder,
    normalize_split,
)
from sentprobe.errors import DataError, SentprobeError, require
from sentprobe.io import inside, read_text

#: Metadata sidecar written by ``sentprobe export`` next to each task's data.
METADATA_FILE = "sentprobe.json"
#: The spec prefix of Hub datasets.
HUB_PREFIX = "hf:"
#: Column options a spec may set after ``?``.
COLUMN_OPTIONS = ("sentence", "sentence2", "label")
#: The columns read when a spec names none.
DEFAULT_COLUMNS = {"sentence": "sentence", "label": "label"}
#: The option any path spec may set after ``?``: the tasks' language (ISO 639 code).
LANGUAGE_OPTION = "language"
_EXTRA = "hf-datasets"


def split_options(spec: str) -> tuple[str, dict[str, str]]:
    """``NAME?sentence=text&label=y&language=fr`` -> (``NAME``, the column names and the
    language if given); unknown keys are an error naming the key."""
    base, sep, query = spec.partition("?")
    columns = dict(DEFAULT_COLUMNS)
    if not sep:
        return base, columns
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key not in (*COLUMN_OPTIONS, LANGUAGE_OPTION):
            known = ", ".join((*COLUMN_OPTIONS, LANGUAGE_OPTION))
            raise SentprobeError(f"{spec}: unknown option {key!r} after '?' (known: {known})")
        if not value:
            raise SentprobeError(f"{spec}: option {key!r} needs a column name")
        columns[key] = value
    return base, columns


def _parquet_files(path: Path) -> list[Path]:
    return sorted(p for p in path.glob("*.parquet") if p.is_file())


def is_hf_dir(path: Path) -> bool:
    """A folder of one task: a ``save_to_disk`` dataset (dict) or parquet files."""
    return path.is_dir() and (
        (path / "dataset_dict.json").is_file()
        or (path / "state.json").is_file()
        or bool(_parquet_files(path))
        or bool(_parquet_files(path / "data"))
    )


def holds_hf_dirs(path: Path) -> bool:
    """A folder whose subfolders are HF task folders (an export of a whole suite)."""
    return path.is_dir() and not is_hf_dir(path) and any(map(is_hf_dir, path.iterdir()))


def _read_metadata(folder: Path) -> TaskMetadata | None:
    file = inside(folder, METADATA_FILE)  # a link out of the task folder is refused
    if not file.is_file():
        return None
    try:
        data = json.loads(read_text(file))
        fields = {f.name for f in dataclasses.fields(TaskMetadata)}
        unknown = sorted(set(data) - fields)
        if unknown:
            raise DataError(file, None, f"unknown metadata key(s) {', '.join(unknown)}")
        for key in ("labels", "baselines"):
            if key in data:
                data[key] = tuple(data[key])
        return TaskMetadata(**data)
    except (json.JSONDecodeError, TypeError, UnicodeDecodeError) as e:
        raise DataError(file, None, f"not valid task metadata: {e}") from None


def metadata_json(meta: TaskMetadata) -> str:
    """The ``sentprobe.json`` sidecar of an exported task. A ``source`` that is a local path
    (where the task was read from on this machine) keeps only its file name: an export is
    made to be shared, and a path names the user's folders."""
    data = dataclasses.asdict(meta)
    data["source"] = shared_source(str(data.get("source") or ""))
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def shared_source(source: str) -> str:
    """A task's ``source`` as an export shows it: a URL or a name as it is, a local path
    (``/home/me/...``, ``~/...``) as its file name only."""
    if "://" not in source and (Path(source).is_absolute() or source.startswith("~")):
        return Path(source).name
    return source


def _split_of(raw: str, origin: str) -> str:
    split = normalize_split(raw)
    if split is None:
        raise DataError(origin, None, f"unknown split {raw!r} (allowed: {ALLOWED_SPLITS})")
    return split


#: The extra columns ``sentprobe export`` writes for pairs, sub-types, folds and the target
#: forms of a lexical split (``form``: empty in a split that has none).
PAIR = ("sentence1", "sentence2")
SUBTYPE, PAIR_ID, FOLDS, FORM = "subtype", "pair_id", "folds", "form"
#: Columns read as a sentence pair when the spec names no sentence column: GLUE's (RTE, MRPC,
#: what ``sentprobe export`` writes), the NLI sets', QQP's and QNLI's spellings.
PAIR_COLUMNS = (
    PAIR,
    ("premise", "hypothesis"),
    ("question1", "question2"),
    ("question", "sentence"),
)
#: How a pair found without ``sentprobe.json`` is probed: a classifier on [u, v, |u-v|, u*v]
#: (InferSent's pair features, SentEval's for its pair tasks), trained on the task's splits.
DEFAULT_PAIR_FORMAT = "nli-pair"


def _text_columns(
    column_names: Sequence[str], columns: Mapping[str, str]
) -> tuple[str, str | None]:
    """The sentence column, and the second sentence's of a pair: the columns the spec names
    (``?sentence=A&sentence2=B``), else the first of :data:`PAIR_COLUMNS` the data has, else
    ``sentence`` (or GLUE's ``sentence1`` alone) as a single sentence."""
    if "sentence2" in columns:
        return columns["sentence"], columns["sentence2"]
    if columns["sentence"] != "sentence":
        return columns["sentence"], None
    for first, second in PAIR_COLUMNS:
        if first in column_names and second in column_names:
            return first, second
    if "sentence" not in column_names and PAIR[0] in column_names:
        return PAIR[0], None
    return "sentence", None


def task_from_columns(
    origin: str,
    splits: Mapping[str, tuple[Sequence[str], Sequence[Any], Sequence[str] | None]],
    columns: Mapping[str, str],
    metadata: TaskMetadata,
) -> ProbingTask:
    """Build a validated task from ``{split: (column names, rows as dicts, label names)}``.

    Label names (a ``ClassLabel``'s) turn integer labels into their names; without them a
    label is its ``str``. The columns ``sentprobe export`` adds for pairs, sub-types, folds and
    target forms (``sentence1``/``sentence2``, ``subtype``, ``pair_id``, ``folds``, ``form``)
    are read back. Every problem is collected first and raised as one DataError.
    """
    problems = Problems(origin)
    builder = TaskBuilder(problems, metadata.labels)
    names: Sequence[str] | None = None
    extras: dict[str, dict[str, list[Any]]] = {}
    for raw_split, (column_names, rows, label_names) in splits.items():
        split = _split_of(raw_split, origin)
        where = f"{origin} [{raw_split} split]"
        text, second = _text_columns(column_names, columns)
        missing = [c for c in (text, second, columns["label"]) if c and c not in column_names]
        if missing:
            raise DataError(
                where,
                None,
                f"no column {', '.join(map(repr, missing))} (columns: {', '.join(column_names)}); "
                "name the columns with ?sentence=COL&label=COL",
            )
        kept: dict[str, list[Any]] = {
            c: [] for c in (second, SUBTYPE, PAIR_ID, FOLDS, FORM) if c and c in column_names
        }
        extras[split] = kept
        names = names or label_names
        for i, row in enumerate(rows, start=1):
            sentence, label = row[text], row[columns["label"]]
            if not isinstance(sentence, str):
                problems.add(
                    i, f"sentence must be a string, found {type(sentence).__name__}", where
                )
                continue
            if label is None:
                problems.add(i, "empty label", where)
                continue
            if label_names is not None and isinstance(label, int):
                if not 0 <= label < len(label_names):
                    problems.add(i, f"label {label} is not a class of the label column", where)
                    continue
                label = label_names[label]
            builder.add(split, str(label), sentence, i, where)
            for column, values in kept.items():
                values.append(row[column])
    task = builder.build(metadata)
    if names and not metadata.labels:
        task.metadata = dataclasses.replace(metadata, labels=tuple(names))
    for split_name, kept in extras.items():
        part = task.splits[split_name]
        for column, values in kept.items():
            if column == SUBTYPE:
                part.groups = [str(v) for v in values]
            elif column == PAIR_ID:
                part.pairs = [str(v) for v in values]
            elif column == FORM:
                part.clusters = _forms(values, f"{origin} [{split_name} split]")
            elif column != FOLDS:
                part.sentences2 = [str(v).strip() for v in values]
    pairs = any(part.sentences2 is not None for part in task.splits.values())
    if pairs and metadata.format == "single":  # no sentprobe.json to say how: probe both
        task.metadata = dataclasses.replace(task.metadata, format=DEFAULT_PAIR_FORMAT)
    if any(FOLDS in kept for kept in extras.values()):
        task.folds = _folds(task, {name: kept.get(FOLDS, []) for name, kept in extras.items()})
        task.splits = task.folds[0]
    return task


def _forms(values: list[Any], where: str) -> list[str] | None:
    """A split's ``form`` column: None when empty throughout (the split has no forms), else
    every row's form; a form on some rows only would group the others as one form."""
    forms = ["" if v is None else str(v).strip() for v in values]
    if not any(forms):
        return None
    if not all(forms):
        row = forms.index("") + 1
        raise DataError(where, row, "empty form: a split with forms needs one on every row")
    return forms


def _folds(task: ProbingTask, places: Mapping[str, list[Any]]) -> list[dict[str, Split]]:
    """Each fold's splits rebuilt from every row's ``"<split>:<position>"`` in it."""
    n = max((len(p) for rows in places.values() for p in rows), default=0)
    slots: list[dict[str, dict[int, tuple[str, int]]]] = [{} for _ in range(n)]
    for name, rows in places.items():
        for row, where in enumerate(rows):
            for f, place in enumerate(where):
                hub_split, _, position = str(place).partition(":")
                slots[f].setdefault(_split_of(hub_split, "folds"), {})[int(position)] = (name, row)

    def item_split(chosen: dict[int, tuple[str, int]]) -> Split:
        order = [chosen[i] for i in sorted(chosen)]
        pick = [(task.splits[name], row) for name, row in order]
        out = Split([s.sentences[r] for s, r in pick], [s.labels[r] for s, r in pick])
        first = next(iter(task.splits.values()))
        if first.sentences2 is not None:
            out.sentences2 = [(s.sentences2 or [])[r] for s, r in pick]
        if first.groups is not None:
            out.groups = [(s.groups or [])[r] for s, r in pick]
        if first.pairs is not None:
            out.pairs = [(s.pairs or [])[r] for s, r in pick]
        if first.clusters is not None:
            out.clusters = [(s.clusters or [])[r] for s, r in pick]
        return out

    return [{name: item_split(chosen) for name, chosen in fold.items()} for fold in slots]


def _class_names(feature: Any) -> list[str] | None:
    names = getattr(feature, "names", None)
    if names is None and isinstance(feature, Mapping) and feature.get("_type") == "ClassLabel":
        names = feature.get("names")
    return list(names) if names else None


def _from_datasets(
    origin: str, dataset: Mapping[str, Any], columns: Mapping[str, str], meta: TaskMetadata
) -> ProbingTask:
    """A ``datasets.DatasetDict`` (or a mapping of split -> ``Dataset``) as a task."""
    splits = {}
    for name, ds in dataset.items():
        label_feature = ds.features.get(columns["label"])
        splits[name] = (list(ds.column_names), ds, _class_names(label_feature))
    return task_from_columns(origin, splits, columns, meta)


def _read_parquet(folder: Path, columns: Mapping[str, str], meta: TaskMetadata) -> ProbingTask:
    """Parquet files named after their split (``train.parquet``, ``validation-00000-of-00001
    .parquet``...), in the folder or its ``data/`` subfolder (the Hub's layout)."""
    import pyarrow.parquet as pq

    files = _parquet_files(folder) or _parquet_files(folder / "data")
    by_split: dict[str, list[Path]] = {}
    for file in files:
        raw = file.stem.split("-")[0]
        if normalize_split(raw) is None:
            raise DataError(
                file, None, f"unknown split {raw!r} in the file name (allowed: {ALLOWED_SPLITS})"
            )
        by_split.setdefault(raw, []).append(file)
    splits: dict[str, tuple[Sequence[str], Sequence[Any], Sequence[str] | None]] = {}
    for raw, parts in by_split.items():
        rows: list[dict[str, Any]] = []
        names: list[str] | None = None
        column_names: list[str] = []
        for file in parts:
            try:
                table = pq.read_table(file)
            except Exception as e:  # pyarrow raises several types for a damaged file
                raise DataError(file, None, f"not a readable parquet file: {e}") from None
            column_names = table.column_names
            hf = (table.schema.metadata or {}).get(b"huggingface")
            if hf:
                features = json.loads(hf).get("info", {}).get("features", {})
                names = names or _class_names(features.get(columns["label"]))
            rows += table.to_pylist()
        splits[raw] = (column_names, rows, names)
    return task_from_columns(str(folder), splits, columns, meta)


def _default_metadata(name: str, source: str) -> TaskMetadata:
    return TaskMetadata(name=name, language="und", source=source)


def load_hf_dir(path: str | Path, columns: Mapping[str, str] | None = None) -> list[ProbingTask]:
    """The task(s) in a local folder: one HF task folder, or a folder of them (an export)."""
    path = Path(path)
    columns = dict(columns or DEFAULT_COLUMNS)
    if not is_hf_dir(path):
        if holds_hf_dirs(path):
            folders = {p.name: p for p in path.iterdir() if is_hf_dir(p)}
            order = [c for c in _config_names(_card(str(path), None)) if c in folders]
            if order:  # an export: the suite's order, as its card lists the configs
                return [load_hf_dir(folders[c], columns)[0] for c in order]
            tasks = [load_hf_dir(p, columns)[0] for p in folders.values()]
            return sorted(tasks, key=task_order)  # the paper's order
        raise DataError(path, None, "not a Hugging Face dataset folder (save_to_disk or parquet)")
    meta = _read_metadata(path) or _default_metadata(path.name, str(path))
    if _parquet_files(path) or _parquet_files(path / "data"):
        return [_read_parquet(path, columns, meta)]
    datasets = require("datasets", _EXTRA, f"{path} (a save_to_disk folder)")
    try:
        loaded = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError, OSError) as e:
        raise DataError(path, None, f"cannot load the dataset: {e}") from None
    if not isinstance(loaded, Mapping):  # one Dataset: its split is in its info, else train
        loaded = {str(loaded.split or "train"): loaded}
    return [_from_datasets(str(path), loaded, columns, meta)]


def parse_hub_spec(spec: str) -> tuple[str, str | None, str, dict[str, str]]:
    """``hf:ORG/NAME[@REVISION][:CONFIG][?...]`` -> (name, revision, config, columns)."""
    base, columns = split_options(spec)
    target, _, config = base[len(HUB_PREFIX) :].partition(":")
    name, _, revision = target.partition("@")
    if not name:
        raise SentprobeError(f"{spec}: expected hf:ORG/NAME[@REVISION][:CONFIG]")
    return name, revision or None, config, columns


def _hub_file(name: str, filename: str, revision: str | None) -> Path | None:
    """A file of a Hub dataset repository (a local folder given as NAME: its own file), or
    None when there is none or it cannot be fetched."""
    local = Path(name).expanduser()
    if local.is_dir():  # a name from its card (a config) stays inside it
        path = inside(local, filename, local / "README.md")
        return path if path.is_file() else None
    try:
        from huggingface_hub import hf_hub_download

        found = hf_hub_download(name, filename, repo_type="dataset", revision=revision)
    except Exception:  # absent, offline, no access: the metadata falls back to the data's own
        return None
    return Path(found)


def _card(name: str, revision: str | None) -> dict[str, Any]:
    """The YAML metadata of the dataset card (README.md), or {} without one."""
    readme = _hub_file(name, "README.md", revision)
    if readme is None:
        return {}
    from huggingface_hub.repocard import metadata_load

    try:
        return metadata_load(readme) or {}
    except Exception as e:  # malformed YAML
        raise DataError(readme, None, f"cannot read the dataset card's metadata: {e}") from None


def _card_metadata(name: str, config: str, card: Mapping[str, Any], info: Any) -> TaskMetadata:
    """A task's metadata from the card (language, license) and the data's info, for a
    dataset without a ``sentprobe.json``."""
    languages = card.get("language") or []
    languages = [languages] if isinstance(languages, str) else list(languages)
    license = card.get("license_name") or card.get("license") or getattr(info, "license", "")
    return TaskMetadata(
        name=f"{name}:{config}" if config else name,
        language=languages[0] if len(languages) == 1 else "und",
        source=f"https://huggingface.co/datasets/{name}",
        license=str(license or ""),
        citation=str(getattr(info, "citation", "") or ""),
        description=str(getattr(info, "description", "") or ""),
    )


def _config_names(card: Mapping[str, Any]) -> list[str]:
    return [str(c["config_name"]) for c in card.get("configs") or [] if "config_name" in c]


def load_hub(spec: str) -> list[ProbingTask]:
    """``hf:ORG/NAME[@REVISION][:CONFIG][?sentence=COL&label=COL]``: tasks from the Hub
    (through ``datasets.load_dataset``, which caches them; NAME may be a local folder).

    A suite written by ``sentprobe export`` (its card has a ``sentprobe`` section) loads
    whole when no CONFIG is named, each config with its ``sentprobe.json``: the same names,
    metadata and content hashes as the suite exported. Another dataset's metadata comes from
    its card (language, license) and its info (citation, description).
    """
    name, revision, config, columns = parse_hub_spec(spec)
    datasets = require("datasets", _EXTRA, f"-t {spec}")
    card = _card(name, revision)
    if not config and "sentprobe" in card and len(_config_names(card)) > 1:
        at = f"@{revision}" if revision else ""
        query = spec.partition("?")[2]
        return [
            task
            for c in _config_names(card)
            for task in load_hub(f"{HUB_PREFIX}{name}{at}:{c}" + (f"?{query}" if query else ""))
        ]
    try:
        # datasets caches local files by path and mtime: a folder rewritten in place is re-read
        fresh = {"download_mode": "force_redownload"} if Path(name).is_dir() else {}
        loaded = datasets.load_dataset(name, config or None, revision=revision, **fresh)
    except Exception as e:  # network, missing dataset or config: all one line for the user
        lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
        text = " ".join(lines[:2]) if lines else type(e).__name__  # the configs, if listed
        raise SentprobeError(f"{spec}: cannot load the dataset: {text}") from None
    any_split = next(iter(loaded.values()), None)
    sidecar = _hub_file(name, f"{config}/{METADATA_FILE}", revision) if config else None
    meta = _read_metadata(sidecar.parent) if sidecar is not None else None
    if meta is None:
        meta = _card_metadata(name, config, card, getattr(any_split, "info", None))
    return [_from_datasets(spec, loaded, columns, meta)]
