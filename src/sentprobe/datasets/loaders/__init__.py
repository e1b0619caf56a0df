"""Read probing tasks from the formats researchers already have.

* SentEval: ``split<TAB>label<TAB>sentence`` per line, split in tr/va/te; a directory of such
  files (optionally with a ``manifest.json`` giving source, license, citation, labels).
* X-Probe: ``<task>/{tr,va,te}.txt`` with ``sentence<TAB>label`` lines, grouped in language folders.
* DNC (Kim et al. 2019): ``<set>_data.json`` + ``<set>_metadata.json`` (:mod:`.dnc`).
* Generic tables: TSV with a header naming ``sentence``, ``label``, ``split`` columns, or JSONL
  objects with those keys.

One module per format (:mod:`.senteval`, :mod:`.xprobe`, :mod:`.tables`, :mod:`.manifest`);
reading lines is shared (:mod:`.common`). Any file may be gzip-compressed. Every loader
validates while reading (see validation.py) and raises a DataError naming file and line; nothing
is returned for data that cannot be probed, except in the lenient mode of the SentEval and
X-Probe loaders (``rejected=``), which ``sentprobe audit`` uses to audit the lines that could be
read.
"""

from __future__ import annotations

from pathlib import Path

from sentprobe.datasets.loaders.common import (
    MANIFEST,
    SENTEVAL_FILES,
    XPROBE_FOLDERS,
    XPROBE_SPLIT_FILES,
    stem,
    task_lines,
)
from sentprobe.datasets.loaders.dnc import (
    DATA_SUFFIX,
    METADATA_SUFFIX,
    is_dnc_dir,
    load_dnc,
    load_dnc_set,
)
from sentprobe.datasets.loaders.hf import holds_hf_dirs, is_hf_dir, load_hf_dir, load_hub
from sentprobe.datasets.loaders.manifest import (
    declares_folders,
    load_manifest_dir,
    load_manifest_entry,
    load_senteval_dir,
    manifest_tasks,
    read_manifest,
)
from sentprobe.datasets.loaders.senteval import (
    is_senteval_candidate,
    load_senteval_file,
    looks_like_senteval,
    senteval_metadata,
    task_files,
)
from sentprobe.datasets.loaders.tables import load_table
from sentprobe.datasets.loaders.xprobe import (
    is_xprobe_task,
    language_of,
    load_xprobe_dir,
    load_xprobe_task,
    split_file,
    xprobe_metadata,
)
from sentprobe.datasets.task import ProbingTask
from sentprobe.errors import DataError, SentprobeError

__all__ = [
    "MANIFEST",
    "SENTEVAL_FILES",
    "XPROBE_FOLDERS",
    "XPROBE_SPLIT_FILES",
    "declares_folders",
    "is_dnc_dir",
    "is_hf_dir",
    "is_senteval_candidate",
    "is_xprobe_task",
    "task_lines",
    "language_of",
    "load_dnc",
    "load_dnc_set",
    "load_hf_dir",
    "load_hub",
    "load_manifest_dir",
    "load_manifest_entry",
    "load_senteval_dir",
    "load_senteval_file",
    "load_table",
    "load_task",
    "load_tasks",
    "load_xprobe_dir",
    "load_xprobe_task",
    "looks_like_senteval",
    "manifest_tasks",
    "read_manifest",
    "senteval_metadata",
    "split_file",
    "stem",
    "task_files",
    "xprobe_metadata",
]


def load_tasks(path: str | Path) -> list[ProbingTask]:
    """Load every task at ``path``, detecting the format.

    A Hugging Face dataset folder (``save_to_disk`` or parquet files), or a folder of them,
    is read by :mod:`.hf`. A directory whose manifest lists X-Probe task folders (a built
    X-Probe suite) is read through the manifest; otherwise a directory is X-Probe if it (or
    its subfolders) hold ``tr.txt``/``te.txt`` task folders, otherwise SentEval. A file is
    one set of a DNC-format suite if it is named ``*_data.json`` (or ``*_metadata.json``),
    JSONL by extension, SentEval if its first line starts with a split name and has three
    columns, otherwise a TSV with a header.
    """
    path = Path(path).expanduser()
    if path.is_dir():
        if is_hf_dir(path) or holds_hf_dirs(path):
            return load_hf_dir(path)
        if is_dnc_dir(path):
            manifest = read_manifest(path)
            return load_dnc(path, suite=(manifest or {}).get("suite"))
        if is_xprobe_task(path):
            return load_xprobe_dir(path)
        if declares_folders(path):
            return load_manifest_dir(path)
        if (path / MANIFEST).is_file() or any(map(is_senteval_candidate, task_files(path))):
            return load_senteval_dir(path)
        if any(p.is_dir() for p in path.iterdir()):
            return load_xprobe_dir(path)
        raise DataError(
            path,
            None,
            "no probing tasks found: expected SentEval files (split<TAB>label<TAB>sentence) "
            "or X-Probe task folders (tr.txt, va.txt, te.txt)",
        )
    if not path.exists():
        raise DataError(path, None, "no such file or directory")
    if path.name.endswith((DATA_SUFFIX, METADATA_SUFFIX)):  # one set of a DNC-format suite
        data = path.with_name(path.name.replace(METADATA_SUFFIX, DATA_SUFFIX))
        manifest = read_manifest(path.parent)
        return [load_dnc_set(data, suite=(manifest or {}).get("suite"))]
    return [load_table(path)]


def load_task(path: str | Path) -> ProbingTask:
    """Load the single task at ``path`` (see :func:`load_tasks` for the formats)."""
    tasks = load_tasks(path)
    if len(tasks) != 1:
        names = ", ".join(t.name for t in tasks)
        raise SentprobeError(f"{path} holds {len(tasks)} tasks ({names}); use load_tasks")
    return tasks[0]
