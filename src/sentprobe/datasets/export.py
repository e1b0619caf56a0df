"""``sentprobe export``: write tasks as Hugging Face datasets with a dataset card.

Each task becomes a folder named after it, holding its splits (train / validation / test) with
a ``sentence`` column and a ``label`` column (a ``ClassLabel`` carrying the task's label
names, in order), plus ``sentprobe.json`` with its metadata, so ``-t`` reads it back under the
same name with the same content hash (``-t FOLDER``, ``-t hf:FOLDER`` or, once uploaded with
``sentprobe push``, ``-t hf:ORG/NAME``). ``hf``: ``save_to_disk`` folders (``datasets
.load_from_disk``); ``parquet``: ``<split>.parquet`` files (``load_dataset("parquet", ...)``).
The folder gets a dataset card (``README.md``) whose YAML holds what the Hub reads (license,
language, size, sources, task categories, one config per task), a ``LICENSE.md`` stating each
task's license and source, and the suite's manifest as ``manifest.json``. Everything is
written to a temporary folder first and renamed into place, so a failure leaves nothing
half-written.

Pairs, sub-types and folds (Kim et al.'s sets) get columns of their own: GLUE's
``sentence1``/``sentence2``, ``subtype``, ``pair_id``, and ``folds``, each row's place in every
fold (``"train:17"``); the splits are those of the first fold. A lexical split's target forms
(``Split.clusters``) go to ``form``, empty in a split without them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sentprobe.datasets.loaders.common import MANIFEST
from sentprobe.datasets.loaders.hf import (
    FOLDS,
    FORM,
    METADATA_FILE,
    PAIR,
    PAIR_ID,
    SUBTYPE,
    metadata_json,
    shared_source,
)
from sentprobe.datasets.task import ProbingTask, Split
from sentprobe.errors import SentprobeError, require
from sentprobe.io import (
    WRITE_ERRORS,
    atomic_dir,
    atomic_write_text,
    atomic_writer,
    inside,
    make_dirs,
    path_part,
    write_folder,
    write_problem,
)

FORMATS = ("hf", "parquet")
#: sentprobe's split names -> the Hub's.
HUB_SPLITS = {"train": "train", "dev": "validation", "test": "test"}
_SPDX_LIKE = re.compile(r"[A-Za-z0-9.\-]+")


def folder_names(tasks: Sequence[ProbingTask]) -> list[str]:
    """One folder (and Hub config) name per task: its paper name or last name part, or its
    whole name with ``/`` as ``__`` where short names would clash; always one safe file name
    (``sentprobe.io.path_part``: a manifest's task key ``..`` is not the parent folder)."""
    short = [path_part(t.metadata.paper_name or t.name.rsplit("/", 1)[-1]) for t in tasks]
    if len(set(short)) == len(short):
        return short
    full = [path_part(t.name.replace("/", "__")) for t in tasks]
    if len(set(full)) < len(full):
        clash = next(n for n in full if full.count(n) > 1)
        raise SentprobeError(
            f"two tasks would be exported to one folder {clash!r}; export them separately"
        )
    return full


#: The sentence column of a single-sentence task (pairs: GLUE's, ``PAIR``).
SINGLE = ("sentence",)


def _item(split: Split, i: int) -> tuple[str, str | None, str, str | None, str | None]:
    second, groups, pairs = split.sentences2, split.groups, split.pairs
    return (
        split.sentences[i],
        None if second is None else second[i],
        split.labels[i],
        None if groups is None else groups[i],
        None if pairs is None else pairs[i],
    )


def fold_positions(task: ProbingTask) -> dict[str, list[list[str]]]:
    """Per split of ``task.splits``, each row's place in every fold: ``"<split>:<position>"``
    (so ``-t`` rebuilds each fold's splits in their order, hence the same content hash).
    Identical items are interchangeable, so each takes the next free place of its kind."""
    free: dict[tuple, list[tuple[str, int]]] = {}
    for name, split in task.splits.items():
        for i in range(len(split)):
            free.setdefault(_item(split, i), []).append((name, i))
    out: dict[str, list[list[str]]] = {
        name: [[] for _ in range(len(split))] for name, split in task.splits.items()
    }
    for fold in task.folds or []:
        queues = {key: list(rows) for key, rows in free.items()}
        for name, split in fold.items():
            for position in range(len(split)):
                row_split, row = queues[_item(split, position)].pop(0)
                out[row_split][row].append(f"{HUB_SPLITS[name]}:{position}")
    return out


def _datasets(task: ProbingTask) -> Any:
    """The task as a ``datasets.DatasetDict`` with the Hub's split names: ``sentence`` (or
    GLUE's ``sentence1``/``sentence2`` for pairs) and ``label``, plus ``subtype``, ``pair_id``,
    ``folds`` and ``form`` where the task has them."""
    datasets = require("datasets", "hf-datasets", "sentprobe export")
    names = task.labels
    first = next(iter(task.splits.values()))
    text = PAIR if first.sentences2 is not None else SINGLE
    columns = {c: datasets.Value("string") for c in text}
    columns["label"] = datasets.ClassLabel(names=names)
    if first.groups is not None:
        columns[SUBTYPE] = datasets.Value("string")
    if first.pairs is not None:
        columns[PAIR_ID] = datasets.Value("string")
    if task.folds:
        columns[FOLDS] = datasets.Sequence(datasets.Value("string"))
    if any(split.clusters is not None for split in task.splits.values()):
        columns[FORM] = datasets.Value("string")
    features = datasets.Features(columns)
    index = {label: i for i, label in enumerate(names)}
    places = fold_positions(task) if task.folds else {}

    def data(name: str, split: Split) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {text[0]: split.sentences}
        if len(text) == 2:
            out[text[1]] = list(split.sentences2 or [])
        out["label"] = [index[y] for y in split.labels]
        if SUBTYPE in columns:
            out[SUBTYPE] = list(split.groups or [])
        if PAIR_ID in columns:
            out[PAIR_ID] = list(split.pairs or [])
        if FOLDS in columns:
            out[FOLDS] = places[name]
        if FORM in columns:
            out[FORM] = list(split.clusters or [""] * len(split))
        return out

    return datasets.DatasetDict(
        {
            HUB_SPLITS[name]: datasets.Dataset.from_dict(
                data(name, split),
                features=features,
                info=datasets.DatasetInfo(
                    description=task.metadata.description,
                    citation=task.metadata.citation,
                    license=task.metadata.license,
                    features=features,
                ),
                split=HUB_SPLITS[name],
            )
            for name, split in task.splits.items()
        }
    )


#: The Hub's size categories (upper bounds, exclusive).
SIZE_CATEGORIES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
)
LICENSE_FILE = "LICENSE.md"


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` value for ``n`` items."""
    return next((name for limit, name in SIZE_CATEGORIES if n < limit), "10M<n<100M")


def hub_license(tasks: Sequence[ProbingTask], suite: str) -> dict[str, Any]:
    """The card's license fields: one SPDX-like identifier as is; anything else ``other``
    with a ``license_name`` and a ``license_link`` to the LICENSE.md written beside it."""
    licenses = sorted({t.metadata.license for t in tasks if t.metadata.license})
    if len(licenses) == 1 and _SPDX_LIKE.fullmatch(licenses[0]):
        return {"license": licenses[0].lower()}
    slug = re.sub(r"[^a-z0-9.\-]+", "-", f"{suite}-license".lower()).strip("-")
    return {"license": "other", "license_name": slug, "license_link": LICENSE_FILE}


def license_text(tasks: Sequence[ProbingTask], folders: Sequence[str], suite: str) -> str:
    """LICENSE.md: each task's license and source, as its metadata states them."""
    lines = [f"# Licenses of {suite}", ""]
    for task, folder in zip(tasks, folders, strict=True):
        lines += [
            f"## {folder} ({task.name})",
            "",
            f"License: {task.metadata.license or 'not stated'}",
            "",
            f"Source: {shared_source(task.metadata.source) or 'not stated'}",
            "",
        ]
    return "\n".join(lines)


def dataset_card(
    tasks: Sequence[ProbingTask],
    folders: Sequence[str],
    fmt: str,
    suite: str,
) -> str:
    """README.md for the Hub: YAML metadata, then what the data is and where it came from."""
    from huggingface_hub import DatasetCardData

    from sentprobe.datasets.citations import bibtex

    licenses = sorted({t.metadata.license for t in tasks if t.metadata.license})
    languages = sorted({t.metadata.language for t in tasks if t.metadata.language != "und"})
    citations = list(dict.fromkeys(t.metadata.citation for t in tasks if t.metadata.citation))
    pattern = "{folder}/{split}.parquet" if fmt == "parquet" else "{folder}/{split}/*.arrow"
    configs = [
        {
            "config_name": folder,
            "data_files": [
                {"split": HUB_SPLITS[s], "path": pattern.format(folder=folder, split=HUB_SPLITS[s])}
                for s in task.splits
            ],
        }
        for task, folder in zip(tasks, folders, strict=True)
    ]
    items = sum(len(split) for task in tasks for split in task.splits.values())
    people = any(t.name.startswith("kim2019/") for t in tasks)  # Kim et al.: MTurk labels
    data = DatasetCardData(
        **hub_license(tasks, suite),
        language=languages or None,
        task_categories=["text-classification"],
        size_categories=[size_category(items)],
        annotations_creators=["crowdsourced" if people else "machine-generated"],
        source_datasets=["original"],
        pretty_name=f"sentprobe probing tasks: {suite}",
        tags=["probing", "sentprobe"],
        configs=configs,
        sentprobe={"suite": suite, "format": fmt},
    )
    rows = "\n".join(
        f"| {folder} | {t.name} | {len(t.labels)} | "
        + " / ".join(str(len(t.splits[s])) if s in t.splits else "-" for s in HUB_SPLITS)
        + " |"
        for t, folder in zip(tasks, folders, strict=True)
    )
    description = next((t.metadata.description for t in tasks if t.metadata.description), "")
    sources = list(
        dict.fromkeys(shared_source(t.metadata.source) for t in tasks if t.metadata.source)
    )
    entries = list(dict.fromkeys(bibtex(c) for c in citations))
    body = [
        f"# {suite}",
        "",
        "Probing tasks exported by sentprobe: each config is one classification task, a "
        "`sentence` and its `label`.",
        "",
        description,
        "",
        "| config | task | classes | train / validation / test |",
        "|---|---|---:|---|",
        rows,
        "",
        "## Source and license",
        "",
        *(f"- {s}" for s in sources),
        "",
        f"License: {'; '.join(licenses) or 'not stated'} (each task's: {LICENSE_FILE})",
        "",
        "## Citation",
        "",
        *citations,
        "",
        *(["```bibtex", "\n\n".join(entries), "```", ""] if entries else []),
        "## Use",
        "",
        "```bash",
        "sentprobe run -e minilm -t hf:ORG/NAME            # every config, as one suite",
        f"sentprobe run -e minilm -t hf:ORG/NAME:{folders[0]}",
        "```",
        "",
    ]
    return f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(body)


def export_tasks(
    tasks: Sequence[ProbingTask],
    out: str | Path,
    fmt: str = "hf",
    *,
    suite: str = "",
    manifest: dict[str, Any] | None = None,
) -> Path:
    """Write ``tasks`` into the new folder ``out`` (see the module docstring); returns it."""
    if fmt not in FORMATS:
        raise SentprobeError(f"unknown export format {fmt!r} (known: {', '.join(FORMATS)})")
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise SentprobeError(f"{out} already exists and is not empty; name a new folder")
    folders = folder_names(tasks)
    require("datasets", "hf-datasets", "sentprobe export").disable_progress_bars()
    try:
        with atomic_dir(out) as tmp:  # the umask's permissions, renamed into place once whole
            for task, folder in zip(tasks, folders, strict=True):
                target = inside(tmp, folder)
                dataset = _datasets(task)
                if fmt == "hf":
                    write_folder(target, dataset.save_to_disk)
                else:
                    make_dirs(target, tmp)
                    for split, data in dataset.items():
                        with atomic_writer(target / f"{split}.parquet", root=tmp) as f:
                            data.to_parquet(f)
                atomic_write_text(target / METADATA_FILE, metadata_json(task.metadata), tmp)
            name = suite or out.name
            atomic_write_text(tmp / "README.md", dataset_card(tasks, folders, fmt, name), tmp)
            atomic_write_text(tmp / LICENSE_FILE, license_text(tasks, folders, name), tmp)
            if manifest is not None:
                atomic_write_text(tmp / MANIFEST, json.dumps(manifest, indent=1) + "\n", tmp)
    except OSError as e:
        if e.errno in WRITE_ERRORS:  # a full disk, say
            problem = write_problem(out, e, "export", "-o")
            raise SentprobeError(f"{problem} (nothing of it was written)") from None
        raise
    return out


def _check_uploadable(folder: Path) -> None:
    """Refuse, in one line and before anything is sent, a folder to upload that holds a
    symbolic link (``../secret/id_rsa`` would be uploaded as its target) or anything but
    regular files and folders: only what ``export`` writes goes to the Hub."""
    for parent, dirs, files in os.walk(folder):  # links to folders are not followed
        for name in [*dirs, *files]:
            path = Path(parent) / name
            if path.is_symlink():
                raise SentprobeError(
                    f"{path}: a symbolic link (to {os.readlink(path)}) in the folder to upload; "
                    "refused, nothing uploaded: push uploads only the files export wrote"
                )
            if not (path.is_dir() or path.is_file()):
                raise SentprobeError(
                    f"{path}: not a regular file; refused, nothing uploaded: push uploads "
                    "only the files export wrote"
                )


def push_export(folder: str | Path, repo: str, *, private: bool = False) -> str:
    """Upload an export folder to the Hub dataset repository ``repo`` (created if missing,
    ``private`` then); returns the commit's URL. Credentials are huggingface_hub's own
    (``HF_TOKEN`` or ``hf auth login``)."""
    hub = require("huggingface_hub", "hf-datasets", "sentprobe push")
    folder = Path(folder)
    if not (folder / "README.md").is_file():
        raise SentprobeError(
            f"{folder}: no dataset card (README.md); write it with sentprobe export"
        )
    _check_uploadable(folder)
    api = hub.HfApi()
    try:
        api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
        commit = api.upload_folder(
            folder_path=str(folder),
            repo_id=repo,
            repo_type="dataset",
            commit_message=f"sentprobe export of {folder.name}",
        )
    except Exception as e:  # network, authentication, a name the Hub refuses: one line
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise SentprobeError(f"cannot upload {folder} to {repo}: {first}") from None
    return str(getattr(commit, "commit_url", "") or f"https://huggingface.co/datasets/{repo}")
