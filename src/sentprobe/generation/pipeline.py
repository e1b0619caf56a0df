"""Corpus in, probing suite out: read, tokenize, annotate (resumable), generate, write, report.

The annotated corpus is kept beside the suite (``<out>.annotations/``), so a second build
with other sizes, tasks or seed parses nothing again. Nothing is written to ``out`` unless
every requested task could be generated (or ``skip_failed`` is set): a suite is never
half-written.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sentprobe.annotation import annotate_corpus, default_annotator, get_annotator, read_annotated
from sentprobe.annotation.constituency import dep_to_constituency
from sentprobe.annotation.record import AnnotatedSentence

from .base import GeneratedTask, GenerationError
from .corpus import MosesPreprocessor, read_sentences
from .suite import ALL_GENERATORS, build_suite
from .writer import atomic_write_text, corpus_sha256, suite_manifest, write_generated_suite

DEFAULT_SIZES = {"train": 100_000, "dev": 10_000, "test": 10_000}


def parse_sizes(text: str) -> dict[str, int]:
    """``"100000,10000,10000"`` -> train/dev/test sizes."""
    from sentprobe.errors import SentprobeError

    try:
        values = [int(v.replace("_", "")) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) != 3 or min(values) < 1:
        raise SentprobeError(
            f"--sizes must be three positive integers train,dev,test; got {text!r}"
        )
    return dict(zip(("train", "dev", "test"), values))


def is_conllu(path: Path) -> bool:
    name = path.name.lower()
    if name.endswith((".conllu", ".conllu.gz", ".conll", ".conll.gz")):
        return True
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
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


def _tokenized(path: Path, lang: str, layout: str, stats: dict[str, int]) -> Iterator[str]:
    pre = MosesPreprocessor(lang=lang)
    for tokens in pre(read_sentences(path, layout=layout, lang=lang)):
        yield " ".join(tokens)
    stats.update(pre.stats)


def annotate(
    corpus: Path,
    work: Path,
    *,
    lang: str,
    annotator: str | None,
    layout: Literal["lines", "running"] = "lines",
    progress: bool = True,
) -> tuple[list[AnnotatedSentence], dict, dict[str, int]]:
    """Annotated sentences of ``corpus`` (from ``work`` when already done) and the manifest."""
    stats: dict[str, int] = {}
    if is_conllu(corpus) and annotator in (None, "conllu"):
        manifest = annotate_corpus(corpus, work, "conllu", progress=progress)
    else:
        ann = get_annotator(annotator) if annotator else default_annotator(lang)
        source = _tokenized(corpus, lang, layout, stats)
        manifest = annotate_corpus(source, work, ann, pretokenized=True, progress=progress)
    records = list(read_annotated(work))
    return records, manifest, stats


def build(
    corpus: str | Path,
    out: str | Path,
    *,
    lang: str = "en",
    tasks: Sequence[str] | None = None,
    sizes: dict[str, int] | None = None,
    seed: int = 2018,
    annotator: str | None = None,
    layout: Literal["senteval", "xprobe"] | None = None,
    profile: str | None = None,
    text_layout: Literal["lines", "running"] = "lines",
    skip_failed: bool = False,
    quality: bool = True,
    progress: bool = True,
) -> BuildResult:
    """Build probing tasks from ``corpus`` (raw text or CoNLL-U) into ``out``."""
    from sentprobe.errors import SentprobeError

    corpus, out = Path(corpus), Path(out)
    if not corpus.is_file():
        raise SentprobeError(f"{corpus}: no such corpus file")
    names = list(tasks or ALL_GENERATORS)
    unknown = [t for t in names if t not in ALL_GENERATORS]
    if unknown:
        raise SentprobeError(
            f"unknown task(s) {', '.join(unknown)}; known: {', '.join(ALL_GENERATORS)}"
        )
    layout = layout or ("senteval" if lang == "en" else "xprobe")
    work = out.with_name(out.name + ".annotations")
    records, ann_manifest, corpus_stats = annotate(
        corpus, work, lang=lang, annotator=annotator, layout=text_layout, progress=progress
    )
    if lang == "en" and (profile or "paper") == "paper":
        for rec in records:  # English constituency tasks need a tree; convert when none
            if rec.constituency is None:
                rec.constituency = dep_to_constituency(rec)

    result = BuildResult(tasks=[], annotations=work, corpus_stats=corpus_stats)
    for name in names:
        try:
            result.tasks += build_suite(
                records,
                tasks=[name],
                sizes=sizes or DEFAULT_SIZES,
                seed=seed,
                lang=lang,
                layout=layout,
                profile=profile,
            )
        except GenerationError as exc:
            result.failures[name] = str(exc)
    if result.failures and not skip_failed:
        return result
    if not result.tasks:
        return result

    annotator_info = {k: v for k, v in ann_manifest.items() if k in ("annotator", "versions")}
    manifest = suite_manifest(
        result.tasks,
        corpus_sha256=corpus_sha256(records),
        annotator=annotator_info,
        seed=seed,
        lang=lang,
        layout=layout,
        source=str(corpus),
        corpus_filter=corpus_stats,
        suite=out.name,
    )
    result.written = write_generated_suite(out, result.tasks, manifest, layout=layout, lang=lang)
    if quality:
        from sentprobe.analysis.quality import quality_report

        report = quality_report(
            result.tasks,
            {"title": f"Quality report: {out.name}", "corpus": str(corpus), "seed": seed},
        )
        atomic_write_text(out / "QUALITY.md", report)
    return result
