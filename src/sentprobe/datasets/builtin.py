"""Built-in tasks and suites, and turning a user's ``--tasks`` spec into loaded tasks.

Registration is lazy: each registered task is a :class:`TaskEntry` that knows its metadata
(from the small manifest) but reads its data file only when called, so importing sentprobe
stays fast however large the shipped data grows.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import os
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from sentprobe import registry
from sentprobe.datasets.loaders import (
    load_manifest_entry,
    load_tasks,
    manifest_tasks,
    read_manifest,
)
from sentprobe.datasets.loaders.dnc import (
    ACCEPTABILITY_LABELS,
    DATA_SUFFIX,
    DNC_SETS,
    NLI_LABELS,
    RELEASE_SETS,
    load_dnc_set,
)
from sentprobe.datasets.loaders.dnc import CITATION as DNC_CITATION
from sentprobe.datasets.loaders.dnc import data_files as dnc_data_files
from sentprobe.datasets.loaders.hf import (
    DEFAULT_COLUMNS,
    HUB_PREFIX,
    LANGUAGE_OPTION,
    holds_hf_dirs,
    is_hf_dir,
    load_hf_dir,
    load_hub,
    split_options,
)
from sentprobe.datasets.loaders.xprobe import LANGUAGE_CODE
from sentprobe.datasets.mock import MOCK_TASKS, make_mock_task, mock_metadata
from sentprobe.datasets.task import PAPER_TASKS, ProbingTask, TaskMetadata
from sentprobe.errors import SentprobeError

log = logging.getLogger(__name__)

DATA_DIR = Path(__file__).parent / "data"
SAMPLE_EN_DIR = DATA_DIR / "sample_en"
#: The shipped sample suites: English (SentEval layout) and the X-Probe-layout samples
#: (``sample_fr`` ...), each a folder with a manifest naming its suite.
SAMPLE_DIRS = (SAMPLE_EN_DIR, *(DATA_DIR / f"sample_{lang}" for lang in ("fr", "es", "ru")))
#: Shipped function-word suites in the DNC format (Kim et al. 2019), each with a manifest
#: naming its suite: ``sample-kim-en`` (scripts/build_kim_sample.py).
DNC_SAMPLE_DIRS = (DATA_DIR / "sample_kim_en",)


#: Where the suite ``kim2019`` reads Kim et al. (2019)'s DNC release: ``$SENTPROBE_DNC``, else
#: ``../shared/data/dnc_function_words`` next to the project (the data is not shipped).
DNC_ENV = "SENTPROBE_DNC"
DNC_DEFAULT = Path(__file__).resolve().parents[3].parent / "shared/data/dnc_function_words"


def dnc_dir() -> Path:
    """The DNC function-word release folder, or a clear error saying how to get it."""
    env = os.environ.get(DNC_ENV)
    directory = Path(env).expanduser() if env else DNC_DEFAULT
    if not directory.is_dir():
        raise SentprobeError(
            f"the DNC function-word sets of Kim et al. (2019) are not at {directory}: download "
            "the release (folders ACCEPTABILITY/ and NLI/ with *_data.json and *_metadata.json) "
            f"and set ${DNC_ENV} to its folder (see docs/function-words.md)"
        )
    return directory


def register_dnc() -> None:
    """Register the nine sets as ``kim2019/<paper name>`` and the suite ``kim2019``; the
    data is read (and its absence reported) only when a task is loaded."""
    for stem in RELEASE_SETS:
        info = DNC_SETS[stem]
        meta = TaskMetadata(
            name=f"kim2019/{info.paper_name}",
            paper_name=info.paper_name,
            labels=NLI_LABELS if info.format == "nli-pair" else ACCEPTABILITY_LABELS,
            source="DNC release (Kim et al. 2019)",
            citation=DNC_CITATION,
            description=info.description,
            format=info.format,
        )
        folder = "NLI" if info.format == "nli-pair" else "ACCEPTABILITY"

        def load(stem: str = stem, folder: str = folder) -> ProbingTask:
            directory = dnc_dir()
            file = directory / folder / f"{stem}{DATA_SUFFIX}"
            if not file.is_file():  # a flat copy of the release
                file = directory / f"{stem}{DATA_SUFFIX}"
            return load_dnc_set(file, suite="kim2019")

        registry.tasks.register(meta.name, TaskEntry(meta, load))
    names = [f"kim2019/{DNC_SETS[stem].paper_name}" for stem in RELEASE_SETS]
    registry.suites.register("kim2019", names)


def register_dnc_suite(directory: str | Path, *, overwrite: bool = False) -> list[str]:
    """Register a function-word suite in the DNC format whose ``manifest.json`` names its
    ``suite`` (a shipped sample): each set as ``<suite>/<paper name>``, read when loaded."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    if manifest is None or not manifest.get("suite"):
        raise SentprobeError(f"{directory}: needs a manifest.json with a 'suite' name")
    suite = str(manifest["suite"])
    names = []
    for file in dnc_data_files(directory):
        info = DNC_SETS.get(file.name.removesuffix(DATA_SUFFIX))
        if info is None:
            continue
        meta = TaskMetadata(
            name=f"{suite}/{info.paper_name}",
            paper_name=info.paper_name,
            labels=NLI_LABELS if info.format == "nli-pair" else ACCEPTABILITY_LABELS,
            source=str(manifest.get("description") or directory),
            citation=DNC_CITATION,
            description=info.description,
            format=info.format,
        )

        def load(file: Path = file) -> ProbingTask:
            return load_dnc_set(file, suite=suite)

        registry.tasks.register(meta.name, TaskEntry(meta, load), overwrite=overwrite)
        names.append(meta.name)
    registry.suites.register(suite, names, overwrite=overwrite)
    return names


class TaskEntry:
    """A registered task: metadata known up front, data loaded on call."""

    def __init__(self, metadata: TaskMetadata, load: Callable[[], ProbingTask]) -> None:
        self.metadata = metadata
        self._load = load

    def __call__(self) -> ProbingTask:
        return self._load()

    def __repr__(self) -> str:
        return f"TaskEntry({self.metadata.name!r})"


class TaskInfo(NamedTuple):
    """One row of ``sentprobe tasks``."""

    name: str
    paper_name: str | None
    category: str
    language: str
    n_labels: int | None
    source: str


class SuiteInfo(NamedTuple):
    name: str
    tasks: list[str]


def register_manifest_dir(directory: str | Path, *, overwrite: bool = False) -> list[str]:
    """Register each task of a directory with a ``manifest.json`` naming a ``suite``, and the
    suite itself (tasks in the paper's order). Tasks are SentEval files or X-Probe task
    folders; each is named ``<suite>/<task>``, so suites in several languages never clash.
    Returns the task names."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    if manifest is None or not manifest.get("suite"):
        raise SentprobeError(f"{directory}: needs a manifest.json with a 'suite' name")
    entries = manifest_tasks(directory)
    order = list(PAPER_TASKS)
    entries.sort(key=lambda e: order.index(e[0].paper_name) if e[0].paper_name in order else 99)
    for meta, file in entries:

        def load(file: Path = file, meta: TaskMetadata = meta) -> ProbingTask:
            return load_manifest_entry(meta, file)

        registry.tasks.register(meta.name, TaskEntry(meta, load), overwrite=overwrite)
    names = [meta.name for meta, _ in entries]
    registry.suites.register(str(manifest["suite"]), names, overwrite=overwrite)
    return names


_registered = False


def register_builtin() -> None:
    """Register the mock tasks and the shipped sample suites (once; reads manifests only)."""
    global _registered
    if _registered:
        return
    _registered = True
    for name, kwargs in MOCK_TASKS.items():

        def load(name: str = name, kwargs: dict = kwargs) -> ProbingTask:
            return make_mock_task(name=name, **kwargs)

        meta = mock_metadata(name, kwargs.get("n_classes", 2))
        registry.tasks.register(name, TaskEntry(meta, load))
    registry.suites.register("mock", list(MOCK_TASKS))
    register_dnc()
    for directory in (*SAMPLE_DIRS, *DNC_SAMPLE_DIRS):
        if not (directory / "manifest.json").is_file():
            continue
        try:
            if directory in DNC_SAMPLE_DIRS:
                register_dnc_suite(directory)
            else:
                register_manifest_dir(directory)
        except SentprobeError as e:  # a broken shipped manifest must not break `import`
            warnings.warn(
                f"built-in sample suite {directory.name} not registered: {e}", stacklevel=2
            )


def resolve_tasks(spec: str | Sequence[str]) -> list[ProbingTask]:
    """Load the tasks a user asked for.

    Each item (comma-separated in a string) is a registered suite, a registered task, a Hub
    dataset (``hf:ORG/NAME[:CONFIG]``), or a path to a task file or directory (a dataset
    folder may end in ``?sentence=COL&label=COL``); registered names win over same-named
    paths. Tasks are returned in the order asked, each once.
    """
    register_builtin()
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    items = [item.strip() for item in items if item.strip()]
    if not items:
        raise SentprobeError("no tasks given")
    out: dict[str, tuple[str, ProbingTask]] = {}

    def add(origin: str, task: ProbingTask) -> None:
        log.info(
            "loaded task %s from %s: %s (%s classes, hash %s)",
            task.name,
            origin,
            " / ".join(f"{n} {len(s)}" for n, s in task.splits.items()),
            len(task.labels),
            task.content_hash(),
        )
        log.debug("%s: %s", task.name, task.metadata)
        if task.name in out:
            if out[task.name][0] != origin:
                raise SentprobeError(
                    f"two different tasks are both named {task.name!r} "
                    f"(from {out[task.name][0]} and {origin}); load them separately"
                )
            return
        out[task.name] = (origin, task)

    started = time.perf_counter()
    for item in items:
        if item in registry.suites:
            for name in registry.suites.get(item):
                if name not in out:
                    add(f"task {name}", registry.tasks.get(name)())
        elif item in registry.tasks:
            if item not in out:
                add(f"task {item}", registry.tasks.get(item)())
        elif item.startswith(HUB_PREFIX):  # a Hugging Face Hub dataset
            for task in load_hub(item):
                add(item, task)
        elif "?" in item and Path(item.partition("?")[0]).expanduser().exists():
            for task in _load_with_options(item):
                add(str(Path(item.partition("?")[0]).expanduser().resolve()), task)
        elif Path(item).expanduser().exists():
            for task in load_tasks(item):
                add(str(Path(item).expanduser().resolve()), task)
        else:
            names = [*registry.suites.names(), *registry.tasks.names()]
            close = difflib.get_close_matches(item, names, n=3, cutoff=0.6)
            hint = f"; closest: {', '.join(close)}" if close else ""
            raise SentprobeError(
                f"unknown task or suite {item!r}, and no such file or directory{hint} "
                "(all: sentprobe tasks)"
            )
    log.info("loaded %d task(s) in %.1f s", len(out), time.perf_counter() - started)
    return [task for _, task in out.values()]


def _load_with_options(item: str) -> list[ProbingTask]:
    """``PATH?...``: a dataset folder with its column names, and any task path with the
    language of its tasks (``?language=fr``: a TSV is otherwise "und", a SentEval file "en")."""
    base, options = split_options(item)
    language = options.pop(LANGUAGE_OPTION, None)
    path = Path(base).expanduser()
    if language is not None and not LANGUAGE_CODE.fullmatch(language):
        raise SentprobeError(f"{item}: language {language!r} is not an ISO 639 code (en, fr, ...)")
    if is_hf_dir(path) or holds_hf_dirs(path):
        tasks = load_hf_dir(path, options)
    elif options != DEFAULT_COLUMNS:
        raise SentprobeError(f"{item}: ?sentence= and ?label= name a dataset folder's columns")
    else:
        tasks = load_tasks(path)
    if language is not None:
        for task in tasks:
            task.metadata = dataclasses.replace(task.metadata, language=language.lower())
    return tasks


def list_tasks() -> list[TaskInfo]:
    """Registered tasks for ``sentprobe tasks``; data is not read for built-in entries."""
    register_builtin()
    rows = []
    for name, factory in registry.tasks.items():
        meta = getattr(factory, "metadata", None)
        if not isinstance(meta, TaskMetadata):  # a third-party loader: load to find out
            meta = factory().metadata
        n_labels = len(meta.labels) if meta.labels else None
        rows.append(
            TaskInfo(name, meta.paper_name, meta.category, meta.language, n_labels, meta.source)
        )
    return rows


def list_suites() -> list[SuiteInfo]:
    register_builtin()
    return [SuiteInfo(name, list(names)) for name, names in registry.suites.items()]


def suite_manifest(spec: str) -> dict | None:
    """The ``manifest.json`` of a suite named on the command line: a folder's own, or the
    shipped folder whose manifest names that suite; None when there is none."""
    path = Path(spec).expanduser()
    if path.is_dir():
        return read_manifest(path)
    for directory in (*SAMPLE_DIRS, *DNC_SAMPLE_DIRS):
        manifest = read_manifest(directory) if directory.is_dir() else None
        if manifest and manifest.get("suite") == spec:
            return manifest
    return None
