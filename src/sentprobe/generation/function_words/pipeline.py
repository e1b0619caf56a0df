"""Corpus in, function-word suite out (``sentprobe build --family kim2019``).

A text corpus (one sentence per line, or ``running`` text; blank lines end a paragraph) gives
the acceptability sets: its Moses-tokenized 5-28-token sentences the single-sentence sets,
its paragraphs the EOS pairs. A premise/hypothesis file (``.jsonl``/``.json``/``.tsv``)
gives the NLI sets, annotated with the language's default annotator (spaCy for English) so
negation can find the main verb. Nothing is written unless every requested set could be made
(or ``skip_failed``); the sets go out in the DNC release format (``release``), then
``manifest.json`` (corpus hashes, seed, parameters, counts, rule statistics).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sentprobe.errors import SentprobeError
from sentprobe.io import (
    atomic_write_text,
    check_replaceable_dir,
    file_sha256,
    iter_lines,
    suite_folder,
)

from ..base import GenerationError
from ..corpus import MosesPreprocessor, SentenceSplitter
from .acceptability import ACCEPTABILITY_SETS, FunctionWordSet
from .nli import NLI_SETS, annotate_pairs, read_nli_pairs
from .release import release_records, write_release_set

CITATION = (
    "Kim et al. (2019), Probing What Different NLP Tasks Teach Machines about Function Word "
    "Comprehension, *SEM 2019 (task definitions)"
)
#: Bump when a change would change the output for the same input + seed.
GENERATOR_VERSION = "1"
ALL_SETS = [*ACCEPTABILITY_SETS, *NLI_SETS]


def is_nli_file(path: Path) -> bool:
    name = path.name.lower().removesuffix(".gz")
    return name.endswith((".jsonl", ".json", ".ndjson", ".tsv"))


def read_paragraphs(
    path: Path, layout: Literal["lines", "running"] = "lines", lang: str = "en"
) -> Iterator[list[str]]:
    """Raw sentences per paragraph (blank lines separate paragraphs): each line a sentence
    (``lines``), or each paragraph split into sentences (``running``)."""
    splitter = SentenceSplitter(lang) if layout == "running" else None
    para: list[str] = []
    for _, line in [*iter_lines(path), (0, "")]:
        if line.strip():
            para.append(line.strip())
        elif para:
            yield splitter.split(" ".join(para)) if splitter else para
            para = []


@dataclass
class KimBuildResult:
    sets: list[FunctionWordSet]
    failures: dict[str, str] = field(default_factory=dict)
    written: Path | None = None
    manifest: dict[str, Any] = field(default_factory=dict)


class _Pretokenized(MosesPreprocessor):
    """MosesPreprocessor's filters (5-28 tokens, each sentence once) on sentences tokenized
    already: space-joined Moses tokens are split, not tokenized again."""

    def tokenize(self, sentence: str) -> tuple[str, ...]:
        return tuple(sentence.split(" "))


def _text_sets(
    corpora: Sequence[Path], names: Sequence[str], params: dict, seed: int, layout, lang: str,
    result: KimBuildResult, stats: Counter,
) -> None:  # fmt: skip
    pre = MosesPreprocessor(lang=lang)
    paragraphs, documents, undivided = [], [], []
    for path in corpora:
        mine = [[pre.tokenize(s) for s in para] for para in read_paragraphs(path, layout, lang)]
        paragraphs += mine
        if layout == "lines" and len(mine) == 1 and len(mine[0]) > 2:
            undivided.append(str(path))  # independent lines: no sentence follows another
        else:
            documents += mine
    kept = _Pretokenized(lang=lang)
    sentences = list(kept(" ".join(t) for para in paragraphs for t in para))
    stats.update(kept.stats)
    for name in names:
        generator = ACCEPTABILITY_SETS[name](**params.get(name, {}))
        if name == "acceptability-eos" and not documents:
            result.failures[name] = (
                f"{name}: EOS pairs a sentence with the one that follows it in a document, and "
                f"{', '.join(undivided)} has no blank line: its lines are taken as independent "
                "sentences, never paired (separate documents or paragraphs by a blank line, or "
                "give running text with --running)"
            )
            continue
        try:
            source = documents if name == "acceptability-eos" else sentences
            result.sets.append(generator.generate(source, seed))
        except (GenerationError, ValueError) as e:
            result.failures[name] = str(e)


def _nli_sets(
    files: Sequence[Path], names: Sequence[str], params: dict, seed: int, lang: str,
    annotator: str | None, result: KimBuildResult,
) -> None:  # fmt: skip
    from sentprobe.annotation import default_annotator, get_annotator

    raw = [pair for path in files for pair in read_nli_pairs(path)]
    if not raw:
        raise SentprobeError(f"{', '.join(map(str, files))}: no labelled premise/hypothesis pairs")
    ann = get_annotator(annotator) if annotator else default_annotator(lang)
    pairs = annotate_pairs(raw, ann, MosesPreprocessor(lang=lang).tokenize)
    for name in names:
        try:
            result.sets.append(NLI_SETS[name](**params.get(name, {})).generate(pairs, seed))
        except SentprobeError as e:  # e.g. no WordNet: only Negation fails, the others build
            result.failures[name] = str(e)


def build_function_words(
    corpus: Sequence[str | Path],
    out: str | Path,
    *,
    sets: Sequence[str] | None = None,
    size: int | None = 500,
    seed: int = 2019,
    sigma: float = 3.0,
    layout: Literal["lines", "running"] = "lines",
    lang: str = "en",
    annotator: str | None = None,
    params: dict[str, dict] | None = None,
    skip_failed: bool = False,
    suite: str | None = None,
    corpus_name: str = "",
    corpus_license: str = "",
    description: str = "",
    finish: Callable[[Path, KimBuildResult], object] | None = None,
) -> KimBuildResult:
    """Build the function-word sets the inputs support (text: acceptability; premise/
    hypothesis files: NLI; ``sets`` restricts them) into ``out``. ``size``: items per set
    (None: as many as the input supports); ``params``: generator fields per set name.
    ``out`` is written whole or not at all: the sets, the manifest and whatever ``finish``
    adds (called with the new folder before it becomes ``out``, e.g. to write QUALITY.md)."""
    paths = [Path(c) for c in corpus]
    for path in paths:
        if not path.is_file():
            raise SentprobeError(f"{path}: no such corpus file")
    texts = [p for p in paths if not is_nli_file(p)]
    nli_files = [p for p in paths if is_nli_file(p)]
    wanted = list(sets) if sets else [
        *(ACCEPTABILITY_SETS if texts else ()), *(NLI_SETS if nli_files else ())
    ]  # fmt: skip
    check_replaceable_dir(out)
    unknown = [s for s in wanted if s not in ALL_SETS]
    if unknown:
        raise SentprobeError(f"unknown set(s) {', '.join(unknown)}; known: {', '.join(ALL_SETS)}")
    per_set: dict[str, dict] = {s: {"size": size} for s in wanted}
    if "acceptability-eos" in per_set:
        per_set["acceptability-eos"]["sigma"] = sigma
    for name, values in (params or {}).items():
        per_set.setdefault(name, {}).update(values)
    result = KimBuildResult(sets=[])
    stats: Counter = Counter()
    text_names = [s for s in wanted if s in ACCEPTABILITY_SETS]
    nli_names = [s for s in wanted if s in NLI_SETS]
    if text_names and not texts:
        raise SentprobeError(f"{', '.join(text_names)} need a text corpus (-c corpus.txt)")
    if nli_names and not nli_files:
        raise SentprobeError(f"{', '.join(nli_names)} need a premise/hypothesis file (-c x.jsonl)")
    if text_names:
        _text_sets(texts, text_names, per_set, seed, layout, lang, result, stats)
    if nli_names:
        _nli_sets(nli_files, nli_names, per_set, seed, lang, annotator, result)
    if (result.failures and not skip_failed) or not result.sets:
        return result
    manifest = {
        "suite": suite or Path(out).name,
        "format": "dnc-function-words",
        "description": description,
        "language": lang,
        "citation": CITATION,
        "generator": {"version": GENERATOR_VERSION, "seed": seed},
        "corpus": [{"path": str(p), "sha256": file_sha256(p)} for p in paths],
        "layout": layout,
        "corpus_filter": dict(sorted(stats.items())),
    }
    result.manifest = manifest
    with suite_folder(Path(out)) as folder:  # all files or none, never mixed with another's
        write_function_word_suite(
            folder, result.sets, manifest,
            corpus=corpus_name or ", ".join(p.name for p in paths),
            corpus_license=corpus_license or "see the corpus",
        )  # fmt: skip
        if finish is not None:
            finish(folder, result)
    result.written = Path(out)
    return result


def write_function_word_suite(
    out: str | Path,
    sets: Sequence[FunctionWordSet],
    manifest: dict[str, Any],
    *,
    corpus: str | Mapping[str, str],
    corpus_license: str | Mapping[str, str],
) -> Path:
    """Write the sets in the DNC format (pair-ids numbered across the suite, from 1), then
    ``manifest.json`` (``manifest`` plus each set's counts, parameters and rule counts).
    ``corpus``/``corpus_license``: the metadata's source of every item, or one per set."""
    out = Path(out)
    manifest["sets"] = {}
    pair_id = 1
    for fw in sets:
        data, meta = release_records(
            fw.name,
            fw.items,
            first_pair_id=pair_id,
            corpus=corpus if isinstance(corpus, str) else corpus[fw.name],
            corpus_license=(
                corpus_license if isinstance(corpus_license, str) else corpus_license[fw.name]
            ),
        )
        pair_id += len(data)
        write_release_set(out, fw.name, data, meta)
        manifest["sets"][fw.name] = {
            "counts": fw.counts(),
            "params": fw.params,
            "stats": dict(sorted(fw.stats.items())),
        }
    text = json.dumps(manifest, indent=1, ensure_ascii=False) + "\n"
    return atomic_write_text(out / "manifest.json", text)
