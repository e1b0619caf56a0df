"""``sentprobe export``: write tasks as Hugging Face datasets, ready for ``push_to_hub``.

Each task becomes a folder named after it, holding its splits (train / validation / test) with
a ``sentence`` column and a ``label`` column (a ``ClassLabel`` carrying the task's label
names, in order), plus ``sentprobe.json`` with its metadata, so ``-t`` reads it back under the
same name with the same content hash. ``hf``: ``save_to_disk`` folders (``datasets
.load_from_disk``); ``parquet``: ``<split>.parquet`` files (``load_dataset("parquet", ...)``).
The folder gets a dataset card (``README.md``) whose YAML holds what the Hub reads (license,
language, task categories, one config per task) and, under ``sentprobe``, the citation and the
suite's manifest. Everything is written to a temporary folder first and renamed into place,
so a failure leaves nothing half-written.

Only single-sentence tasks without sub-types or folds are exported: pairs, sub-types and
folds (Kim et al.'s sets) have no column here yet, and dropping them would change the task.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sentprobe.datasets.loaders.hf import METADATA_FILE, metadata_json
from sentprobe.datasets.task import ProbingTask
from sentprobe.errors import SentprobeError, require
from sentprobe.io import WRITE_ERRORS, inside, path_part, write_problem

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


def _check_exportable(task: ProbingTask) -> None:
    splits = task.splits.values()
    if task.folds or any(s.sentences2 is not None or s.groups is not None for s in splits):
        raise SentprobeError(
            f"task {task.name}: only single-sentence tasks without sub-types or folds can be "
            "exported (its pairs, sub-types or folds have no column in the export)"
        )


def _datasets(task: ProbingTask) -> Any:
    """The task as a ``datasets.DatasetDict`` with the Hub's split names."""
    datasets = require("datasets", "hf-datasets", "sentprobe export")
    names = task.labels
    features = datasets.Features(
        {"sentence": datasets.Value("string"), "label": datasets.ClassLabel(names=names)}
    )
    index = {label: i for i, label in enumerate(names)}
    return datasets.DatasetDict(
        {
            HUB_SPLITS[name]: datasets.Dataset.from_dict(
                {"sentence": split.sentences, "label": [index[y] for y in split.labels]},
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


def dataset_card(
    tasks: Sequence[ProbingTask],
    folders: Sequence[str],
    fmt: str,
    suite: str,
    manifest: dict[str, Any] | None,
) -> str:
    """README.md for the Hub: YAML metadata, then what the data is and where it came from."""
    from huggingface_hub import DatasetCardData

    licenses = sorted({t.metadata.license for t in tasks if t.metadata.license})
    hub_license = (
        licenses[0].lower() if len(licenses) == 1 and _SPDX_LIKE.fullmatch(licenses[0]) else None
    )
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
    data = DatasetCardData(
        license=hub_license or "other",
        language=languages or None,
        task_categories=["text-classification"],
        pretty_name=f"sentprobe probing tasks: {suite}",
        tags=["probing", "sentprobe"],
        configs=configs,
        sentprobe={
            "suite": suite,
            "format": fmt,
            "license": "; ".join(licenses),
            "citation": "\n\n".join(citations),
            "manifest": manifest,
        },
    )
    rows = "\n".join(
        f"| {folder} | {t.name} | {len(t.labels)} | "
        + " / ".join(str(len(t.splits[s])) if s in t.splits else "-" for s in HUB_SPLITS)
        + " |"
        for t, folder in zip(tasks, folders, strict=True)
    )
    description = next((t.metadata.description for t in tasks if t.metadata.description), "")
    sources = list(dict.fromkeys(t.metadata.source for t in tasks if t.metadata.source))
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
        f"License: {'; '.join(licenses) or 'not stated'}",
        "",
        "## Citation",
        "",
        *citations,
        "",
        "## Use",
        "",
        "```bash",
        f"sentprobe run -e minilm -t PATH/TO/THIS/FOLDER      # or -t hf:ORG/NAME:{folders[0]}",
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
    for task in tasks:
        _check_exportable(task)
    folders = folder_names(tasks)
    require("datasets", "hf-datasets", "sentprobe export").disable_progress_bars()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for task, folder in zip(tasks, folders, strict=True):
            target = inside(tmp, folder)
            dataset = _datasets(task)
            if fmt == "hf":
                dataset.save_to_disk(str(target))
            else:
                target.mkdir()
                for split, data in dataset.items():
                    data.to_parquet(str(target / f"{split}.parquet"))
            (target / METADATA_FILE).write_text(metadata_json(task.metadata), encoding="utf-8")
        card = dataset_card(tasks, folders, fmt, suite or out.name, manifest)
        (tmp / "README.md").write_text(card, encoding="utf-8")
        if out.exists():
            out.rmdir()  # empty (checked above)
        os.replace(tmp, out)
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, OSError) and e.errno in WRITE_ERRORS:  # a full disk, say
            problem = write_problem(out, e, "export", "-o")
            raise SentprobeError(f"{problem} (nothing of it was written)") from None
        raise
    return out
