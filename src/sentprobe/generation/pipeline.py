"""Corpus in, probing suite out: read, tokenize, annotate (resumable), generate, write.

The quality report (QUALITY.md) is analysis of the written suite, a later stage:
``sentprobe.analysis.quality.write_quality_report(out, result)``.

The annotated corpus is kept beside the suite (``<out>.annotations/``; one subfolder per
corpus file when several are given, e.g. a treebank's dev and test files), so a second build
with other sizes, tasks or seed parses nothing again. Nothing is written to ``out`` unless
every requested task could be generated (or ``skip_failed`` is set): a suite is never
half-written. ``sizes="auto"`` (``AutoSizes``) builds each task at the largest balanced
sizes the corpus supports; frequency bands follow the corpus size (``bands="auto"``).
The suite is written into a new folder renamed over ``out`` once whole, under a lock on the
annotation folder, so two builds of one ``out`` never mix their files.

Long because the build's steps share its keys and stored inputs (the input record, the
corpus hash, the constituency cache are keyed by the same annotation folders): split up, each
step would re-derive them.
"""

from __future__ import annotations

import gzip
import hashlib
import inspect
import json
import logging
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from sentprobe.annotation import annotate_corpus, default_annotator, get_annotator, read_annotated
from sentprobe.annotation.constituency import dep_to_constituency
from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.io import (
    WRITE_ERRORS,
    atomic_write_bytes,
    atomic_write_text,
    check_replaceable_dir,
    file_sha256,
    locked_dir,
    open_text,
    suite_folder,
    write_problem,
)
from sentprobe.progress import tqdm

from .autosize import AutoSizes
from .base import GeneratedTask
from .corpus import MosesPreprocessor, read_sentences
from .suite import ALL_GENERATORS, XPROBE_TASKS, band_params, build_suite, corpus_tokens, prepare
from .writer import corpus_sha256, suite_manifest, write_generated_suite

DEFAULT_SIZES = {"train": 100_000, "dev": 10_000, "test": 10_000}

log = logging.getLogger(__name__)


def parse_sizes(text: str) -> dict[str, int] | AutoSizes:
    """``"100000,10000,10000"`` -> train/dev/test sizes; ``"auto"`` or
    ``"auto:1000,200,200"`` -> AutoSizes (largest balanced sizes, at most those)."""
    from sentprobe.errors import SentprobeError

    auto = AutoSizes.parse(text)
    if auto is not None:
        return auto
    try:
        values = [int(v.replace("_", "")) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) != 3 or min(values) < 1:
        raise SentprobeError(
            f"--sizes must be three positive integers train,dev,test, 'auto' or "
            f"'auto:TRAIN,DEV,TEST'; got {text!r}"
        )
    return dict(zip(("train", "dev", "test"), values))


def is_conllu(path: Path) -> bool:
    name = path.name.lower()
    if name.endswith((".conllu", ".conllu.gz", ".conll", ".conll.gz")):
        return True
    with open_text(path, errors="replace") as fh:
        for line in fh:
            if line.strip() and not line.startswith("#"):
                return line.count("\t") == 9
    return False


@dataclass
class BuildResult:
    tasks: list[GeneratedTask]
    failures: dict[str, str] = field(default_factory=dict)
    written: Path | None = None
    annotations: Path | None = None
    corpus_stats: dict[str, int] = field(default_factory=dict)
    #: what the suite's quality report states about the build (title, corpus, seed, sizes,
    #: bands, relaxations): ``sentprobe.analysis.quality.write_quality_report`` reads it
    report_context: dict = field(default_factory=dict)


def _tokenized(
    path: Path, lang: str, layout: Literal["lines", "running"], stats: dict[str, int]
) -> Iterator[str]:
    pre = MosesPreprocessor(lang=lang)
    for tokens in pre(read_sentences(path, layout=layout, lang=lang)):
        yield " ".join(tokens)
    stats.update(pre.stats)


#: Beside the stored annotation: what input it was made from, so an unchanged corpus file is
#: recognised by one hash of its bytes instead of being re-read and re-tokenized.
INPUT_RECORD = "input.json"


def _input_identity(corpus: Path, lang: str, layout: str, annotator: dict) -> dict[str, Any]:
    """The corpus file's bytes and everything that turns them into the stored inputs (the
    tokenizer's code and version, language, layout, annotator)."""
    tokenizer = inspect.getsource(sys.modules[MosesPreprocessor.__module__])
    return {
        "corpus_sha256": file_sha256(corpus),
        "tokenizer": hashlib.sha256(tokenizer.encode()).hexdigest()[:16],
        "sacremoses": _version("sacremoses"),
        "lang": lang,
        "layout": layout,
        "annotator": annotator,
    }


def _store_key(dirs: Sequence[Path]) -> str:
    """What identifies the records read from ``dirs`` once their trees are converted: the
    stored chunk files' bytes and the code of the dependency-to-constituency converter."""
    key = hashlib.sha256()
    key.update(inspect.getsource(sys.modules[dep_to_constituency.__module__]).encode())
    for where in dirs:
        for chunk in sorted(where.glob("chunk-*.jsonl.gz")):
            key.update(chunk.name.encode())
            key.update(file_sha256(chunk, decompress=False).encode())
    return key.hexdigest()


#: Beside the stored annotation (of the first corpus file): the converted constituency trees.
TREES_RECORD = "constituency-trees.json.gz"


def _add_constituency(
    records: Sequence[AnnotatedSentence], dirs: Sequence[Path], key: str, progress: bool
) -> None:
    """Give every record without a constituency tree the one converted from its dependency
    tree. Converting takes ~25 s per 200k sentences and reading them back ~1 s, so the trees
    are remembered beside the annotation under ``key`` (:func:`_store_key`)."""
    missing = [rec for rec in records if rec.constituency is None]
    if not missing:
        return
    path = dirs[0] / TREES_RECORD
    try:
        known = json.loads(gzip.decompress(path.read_bytes()))
    except (OSError, ValueError, EOFError):  # absent or damaged: convert again
        known = None
    trees = known.get("trees") if isinstance(known, dict) and known.get("key") == key else None
    if isinstance(trees, list) and len(trees) == len(missing):
        for rec, tree in zip(missing, trees):
            rec.constituency = tree
        return
    trees = []
    for rec in tqdm(missing, desc="constituency trees", unit="sent", disable=not progress):
        rec.constituency = dep_to_constituency(rec)
        trees.append(rec.constituency)
    data = json.dumps({"key": key, "trees": trees}).encode()
    atomic_write_bytes(path, gzip.compress(data, compresslevel=1))


def _cached_corpus_sha256(
    records: Sequence[AnnotatedSentence], dirs: Sequence[Path], key: str | None = None
) -> str:
    """``corpus_sha256(records)``, remembered beside the annotation under ``key``
    (:func:`_store_key`): serialising every record takes seconds per 100k sentences."""
    digest = key or _store_key(dirs)
    path = dirs[0] / "corpus-sha256.json"
    known = _read_json(path)
    if known and known.get("key") == digest and isinstance(known.get("sha256"), str):
        return known["sha256"]
    value = corpus_sha256(records)
    atomic_write_text(path, json.dumps({"key": digest, "sha256": value}, indent=1))
    return value


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def annotate(
    corpus: Path,
    work: Path,
    *,
    lang: str,
    annotator: str | None,
    layout: Literal["lines", "running"] = "lines",
    progress: bool = True,
) -> tuple[list[AnnotatedSentence], dict, dict[str, int]]:
    """Annotated sentences of ``corpus`` (from ``work`` when already done) and the manifest.

    A rebuild from an unchanged corpus file (same bytes, tokenizer, language, layout and
    annotator as recorded in ``input.json``) reads the stored annotation directly; anything
    else goes through ``annotate_corpus``, which re-tokenizes and checks every chunk.
    """
    stats: dict[str, int] = {}
    if is_conllu(corpus) and annotator in (None, "conllu"):
        manifest = annotate_corpus(corpus, work, "conllu", progress=progress)
        return _read(work, manifest, progress), manifest, stats
    ann = get_annotator(annotator) if annotator else default_annotator(lang)
    identity = _input_identity(corpus, lang, layout, ann.version())
    known = _read_json(work / INPUT_RECORD)
    stored = _read_json(work / "manifest.json")
    if known and stored and stored.get("complete") and known.get("input") == identity:
        return _read(work, stored, progress), stored, dict(known["corpus_stats"])
    source = _tokenized(corpus, lang, layout, stats)
    manifest = annotate_corpus(source, work, ann, pretokenized=True, progress=progress)
    record = {"input": identity, "corpus_stats": stats}
    # not sort_keys: the corpus filter's counts keep their order into the suite's manifest
    atomic_write_text(work / INPUT_RECORD, json.dumps(record, indent=1))
    return _read(work, manifest, progress), manifest, stats


def _read(work: Path, manifest: dict, progress: bool) -> list[AnnotatedSentence]:
    total = manifest.get("n_sentences")
    bar = tqdm(total=total, desc="reading annotation", unit="sent", disable=not progress)
    records = []
    with bar:
        for rec in read_annotated(work):
            records.append(rec)
            bar.update()  # returns True when it redraws: never part of an expression
    return records


def _read_json(path: Path) -> dict | None:
    """A small JSON record of the annotation directory, or None when absent or unreadable
    (it is only a shortcut: without it the slow, checked path runs)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def default_tasks(lang: str, profile: str | None) -> list[str]:
    """The tasks a build makes when none are named: X-Probe's nine under the ``xprobe``
    profile (no TopConst: UD has no constituency trees), all ten under ``paper``."""
    profile = profile or ("paper" if lang == "en" else "xprobe")
    return list(XPROBE_TASKS if profile == "xprobe" else ALL_GENERATORS)


def annotation_dirs(corpora: Sequence[Path], work: Path) -> list[Path]:
    """Where each corpus file's annotation is stored: ``work`` itself for one file, else one
    numbered subfolder per file (``01-fr_gsd-ud-dev``), so each resumes on its own."""
    if len(corpora) == 1:
        return [work]
    names = [p.name.split(".")[0] or "corpus" for p in corpora]
    return [work / f"{i:02d}-{name}" for i, name in enumerate(names, start=1)]


def build(
    corpus: str | Path | Sequence[str | Path],
    out: str | Path,
    *,
    lang: str = "en",
    tasks: Sequence[str] | None = None,
    sizes: dict[str, int] | AutoSizes | None = None,
    seed: int = 2018,
    annotator: str | None = None,
    layout: Literal["senteval", "xprobe"] | None = None,
    profile: str | None = None,
    text_layout: Literal["lines", "running"] = "lines",
    skip_failed: bool = False,
    progress: bool = True,
    bands: Literal["profile", "auto"] = "auto",
    params: Mapping[str, Mapping] | None = None,
    finish: Callable[[Path, BuildResult], object] | None = None,
) -> BuildResult:
    """Build probing tasks from ``corpus`` (raw text or CoNLL-U; one file or several, read
    in order as one corpus) into ``out``.

    ``sizes``: fixed train/dev/test sizes per task (default the paper's 100k/10k/10k) or
    ``AutoSizes()`` for the largest each task supports. ``bands="auto"`` (default) takes the
    frequency bands of the corpus's size tier; ``"profile"`` the paper's. ``params``:
    generator parameters per task (``{"Tense": {"freq_band": (1, 5000)}}``), which win.

    The suite is written into a new folder that then replaces ``out`` whole (a rebuild's
    folder holds only what that build wrote); ``finish(folder, result)`` adds files to it
    first (the CLI's QUALITY.md). One build at a time per ``out``: the build holds a lock on
    its annotation folder throughout, and a second build of the same ``out`` waits for it,
    so two builds can never mix their files.
    """
    from sentprobe.errors import SentprobeError

    corpora = [Path(c) for c in ([corpus] if isinstance(corpus, (str, Path)) else corpus)]
    out = Path(out)
    if not corpora:
        raise SentprobeError("no corpus file given")
    for path in corpora:
        if not path.is_file():
            raise SentprobeError(f"{path}: no such corpus file")
    names = list(tasks or default_tasks(lang, profile))
    unknown = [t for t in names if t not in ALL_GENERATORS]
    if unknown:
        raise SentprobeError(
            f"unknown task(s) {', '.join(unknown)}; known: {', '.join(ALL_GENERATORS)}"
        )
    bad = [t for t in (params or {}) if t not in ALL_GENERATORS]
    if bad:
        raise SentprobeError(f"parameters for unknown task(s) {', '.join(bad)}")
    layout = layout or ("senteval" if lang == "en" else "xprobe")
    check_replaceable_dir(out)
    work = out.with_name(out.name + ".annotations")
    created = not work.exists()
    try:
        with locked_dir(work, on_wait=lambda: _waiting(work)):
            try:
                return _build_locked(
                    _Build(
                        corpora=corpora, out=out, work=work, lang=lang, names=names,
                        sizes=sizes, seed=seed, annotator=annotator, layout=layout,
                        profile=profile, text_layout=text_layout, skip_failed=skip_failed,
                        progress=progress, bands=bands, params=params, finish=finish,
                    )
                )  # fmt: skip
            except BaseException:
                if created and not any(work.rglob("chunk-*")):  # nothing worth keeping
                    shutil.rmtree(work, ignore_errors=True)
                raise
    except OSError as e:  # the annotation folder cannot even be made
        if e.errno not in WRITE_ERRORS:
            raise
        raise SentprobeError(write_problem(work, e, "annotation store", "--out")) from None


@dataclass(frozen=True)
class _Build:
    """A checked build request: ``build``'s arguments, plus ``names`` (the tasks to make) and
    ``work`` (the annotation folder, locked while it runs)."""

    corpora: list[Path]
    out: Path
    work: Path
    lang: str
    names: list[str]
    sizes: dict[str, int] | AutoSizes | None
    seed: int
    annotator: str | None
    layout: Literal["senteval", "xprobe"]
    profile: str | None
    text_layout: Literal["lines", "running"]
    skip_failed: bool
    progress: bool
    bands: Literal["profile", "auto"]
    params: Mapping[str, Mapping] | None
    finish: Callable[[Path, BuildResult], object] | None


def _waiting(work: Path) -> None:
    """Logged as a warning: without a handler (the command line without -v) Python prints
    it on stderr as it is; an application's own logging configuration gets it otherwise."""
    log.warning(
        "waiting: another sentprobe build holds %s (same --out); this one starts when it ends",
        work,
    )


def _build_locked(b: _Build) -> BuildResult:
    """``build`` once its checks passed, holding the lock on ``b.work``."""
    records: list[AnnotatedSentence] = []
    ann_manifest: dict = {}
    corpus_stats: dict[str, int] = {}
    dirs = annotation_dirs(b.corpora, b.work)
    for path, where in zip(b.corpora, dirs):
        recs, ann_manifest, stats = annotate(
            path,
            where,
            lang=b.lang,
            annotator=b.annotator,
            layout=b.text_layout,
            progress=b.progress,
        )
        records += recs
        for k, v in stats.items():
            corpus_stats[k] = corpus_stats.get(k, 0) + v
    key = _store_key(dirs)
    if b.lang == "en" and (b.profile or "paper") == "paper":  # English constituency tasks need one
        _add_constituency(records, dirs, key, b.progress)

    result = BuildResult(tasks=[], annotations=b.work, corpus_stats=corpus_stats)
    result.tasks = build_suite(
        records,
        tasks=b.names,
        sizes=b.sizes or DEFAULT_SIZES,
        seed=b.seed,
        lang=b.lang,
        layout=b.layout,
        profile=b.profile,
        params=b.params,
        bands=b.bands,
        failures=result.failures,
        progress=b.progress,
    )
    if result.failures and not b.skip_failed:
        return result
    if not result.tasks:
        return result

    annotator_info = {k: v for k, v in ann_manifest.items() if k in ("annotator", "versions")}
    source = str(b.corpora[0]) if len(b.corpora) == 1 else [str(p) for p in b.corpora]
    settings: dict[str, Any] = {
        "sizes": b.sizes.describe()
        if isinstance(b.sizes, AutoSizes)
        else dict(b.sizes or DEFAULT_SIZES),
        "bands": _bands_record(records, b.names, b.bands),
    }
    manifest = suite_manifest(
        result.tasks,
        corpus_sha256=_cached_corpus_sha256(records, dirs, key),
        annotator=annotator_info,
        seed=b.seed,
        lang=b.lang,
        layout=b.layout,
        source=source,
        corpus_filter=corpus_stats,
        suite=b.out.name,
        **settings,
    )
    result.report_context = {
        "title": f"Quality report: {b.out.name}",
        "corpus": ", ".join(map(str, b.corpora)),
        "seed": b.seed,
        **settings,
        **_relaxations(result.tasks),
    }
    kept = "the annotation is kept, so a rerun only generates and writes"
    with suite_folder(b.out, kept) as folder:  # all files or none, never mixed with another's
        write_generated_suite(folder, result.tasks, manifest, layout=b.layout, lang=b.lang)
        if b.finish is not None:
            b.finish(folder, result)
    result.written = b.out / "manifest.json"
    return result


def _bands_record(records: Sequence[AnnotatedSentence], tasks: Sequence[str], bands: str) -> dict:
    """How the frequency bands were chosen, for the manifest (per-task values are in each
    task's params)."""
    if bands != "auto":
        return {"rule": "profile"}
    corpus = prepare(records, 5, 28, Counter())
    return band_params(corpus_tokens(corpus), tasks)[1]


def _relaxations(tasks: Sequence[GeneratedTask]) -> dict[str, str]:
    """One line per task whose rules ``--sizes auto`` relaxed (WC targets, TreeDepth range)."""
    out = {}
    for task in tasks:
        relaxed = (task.params.get("sizes") or {}).get("relaxed")
        if relaxed:
            out[f"{task.name} relaxed"] = "; ".join(
                f"{k} {old} -> {new}" for k, (old, new) in relaxed.items()
            )
    return out
