"""``sentprobe build``: generate probing tasks from a raw-text or CoNLL-U corpus."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from sentprobe.cli.console import err, note, report_failures
from sentprobe.cli.options import Bands, Layout, Quiet
from sentprobe.errors import SentprobeError


def parse_band(text: str | None, option: str) -> tuple[int, int] | None:
    """``"1,5000"`` -> (1, 5000); None stays None."""
    if text is None:
        return None
    try:
        lo, hi = (int(v) for v in text.split(","))
    except ValueError:
        raise SentprobeError(f"{option} must be LOW,HIGH (two integers), got {text!r}") from None
    if not 0 <= lo <= hi:
        raise SentprobeError(f"{option} must have 0 <= LOW <= HIGH, got {text!r}")
    return lo, hi


def _value(text: str):
    """A --set value: integers, floats, true/false, comma lists (tuples), else the string."""
    if "," in text:
        return tuple(_value(v.strip()) for v in text.split(","))
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_settings(items: list[str] | None) -> dict[str, dict]:
    """``["TreeDepth.depths=4,7", "WC.n_targets=50"]`` -> per-task generator parameters."""
    from sentprobe.generation.suite import ALL_GENERATORS

    out: dict[str, dict] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        task, dot, name = key.strip().partition(".")
        if not sep or not dot or not name:
            raise SentprobeError(
                f"--set expects TASK.PARAM=VALUE (e.g. WC.n_targets=50), got {item!r}"
            )
        if task not in ALL_GENERATORS:
            raise SentprobeError(
                f"--set {item!r}: unknown task {task!r}; known: {', '.join(ALL_GENERATORS)}"
            )
        name = name.strip()
        known = {f.name: f for f in dataclasses.fields(ALL_GENERATORS[task])}
        if name not in known:
            raise SentprobeError(
                f"--set {item!r}: {task} has no parameter {name!r}; known: {', '.join(known)}"
            )
        out.setdefault(task, {})[name] = _typed(_value(value.strip()), known[name].default, item)
    return out


def _typed(value, default, item: str):
    """``value`` in the kind of the parameter's default (a tuple stays a tuple, 3 -> 3.0 for
    a float), or a clear error; parameters without a default take the value as parsed."""
    if default is dataclasses.MISSING:
        return value
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(default, tuple):
        value, ok = (value if isinstance(value, tuple) else (value,)), True
    elif isinstance(default, str):
        value, ok = str(value), True
    else:
        ok = True
    if not ok:
        raise SentprobeError(f"--set {item!r}: expected a value like {default!r}, got {value!r}")
    return value


def build(
    corpus: Annotated[
        list[Path],
        typer.Option(
            "--corpus",
            "-c",
            help="Raw text (one sentence per line, or running text with "
            "--running; .gz/.bz2/.xz fine) or a CoNLL-U file (its gold annotation is used). "
            "Repeat to read several files as one corpus (e.g. a treebank's dev and test).",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory of the new suite.")],
    lang: Annotated[str, typer.Option(help="Language code of the corpus.")] = "en",
    tasks: Annotated[
        str | None,
        typer.Option(  # noqa: UP007
            help="Comma-separated paper names (SentLen, WC, TreeDepth, TopConst, BShift, Tense, "
            "SubjNum, ObjNum, SOMO, CoordInv) [default: all]."
        ),
    ] = None,
    sizes: Annotated[
        str,
        typer.Option(
            help="train,dev,test sentences per task; or 'auto': per task the largest balanced "
            "sizes the corpus supports, in the ratio 10:1:1 (at most 100000,10000,10000); or "
            "'auto:TRAIN,DEV,TEST': the same, in that ratio and at most that."
        ),
    ] = "100000,10000,10000",
    seed: Annotated[int, typer.Option(help="Seed: same corpus + seed = identical files.")] = 2018,
    annotator: Annotated[
        str | None,
        typer.Option(  # noqa: UP007
            help="spacy:<model>, natasha, conllu, stanza:<lang>, benepar:<model>, udpipe:<file>, "
            "linkgrammar [default: gold for CoNLL-U, else the language's default]."
        ),
    ] = None,
    layout: Annotated[
        Layout | None,
        typer.Option(  # noqa: UP007
            help="senteval or xprobe [default: senteval for en, else xprobe]."
        ),
    ] = None,
    profile: Annotated[
        str | None,
        typer.Option(  # noqa: UP007
            help="paper (PTB tags, constituency; English) or xprobe (UD) [default by language]."
        ),
    ] = None,
    running: Annotated[
        bool, typer.Option("--running", help="The corpus is running text to split into sentences.")
    ] = False,
    bands: Annotated[
        Bands,
        typer.Option(
            help="Frequency bands (Tense/SubjNum/ObjNum target forms, SOMO words): auto = by "
            "corpus size (the paper's 100-5000 and 40-400 from 10M tokens on, lower bounds 1 "
            "below; see docs/multilingual.md), or profile = always the paper's."
        ),
    ] = Bands.auto,
    freq_band: Annotated[
        str | None,
        typer.Option(  # noqa: UP007
            help="LOW,HIGH corpus frequency of Tense/SubjNum/ObjNum target forms (overrides "
            "--bands)."
        ),
    ] = None,
    somo_band: Annotated[
        str | None,
        typer.Option(  # noqa: UP007
            help="LOW,HIGH corpus frequency of SOMO's original and replacement words."
        ),
    ] = None,
    settings: Annotated[
        list[str] | None,
        typer.Option(  # noqa: UP007
            "--set",
            help="Any generator parameter, TASK.PARAM=VALUE (repeatable), e.g. "
            "TreeDepth.depths=3,7 or WC.first_rank=501; wins over every default.",
        ),
    ] = None,
    skip_failed: Annotated[
        bool, typer.Option(help="Write the tasks that could be built even if others could not.")
    ] = False,
    quiet: Quiet = False,
    family: Annotated[
        str | None,
        typer.Option(  # noqa: UP007
            help="kim2019: Kim et al. (2019)'s function-word sets in the DNC release format "
            "(text corpus: wh-words, Def, Coord, EOS; a premise/hypothesis .jsonl/.tsv: the NLI "
            "sets; --sizes N items per set or auto, default 500; --tasks set names; --set "
            "SET.PARAM=VALUE, e.g. acceptability-eos.sigma=2) [default: the SentEval/X-Probe "
            "tasks].",
        ),
    ] = None,
) -> None:
    """Build probing tasks from a corpus, with a manifest and a quality report (QUALITY.md).

    The annotation is stored beside the suite (OUT.annotations) and reused: rebuilding with
    other sizes, tasks or seed parses nothing again, and an interrupted annotation resumes.
    """
    if family not in (None, "kim2019"):
        raise SentprobeError(f"--family must be kim2019 (or omitted), got {family!r}")
    if family == "kim2019":
        from sentprobe.cli.build_function_words import build_kim2019

        seed = 2019 if seed == 2018 else seed  # each family's default seed is its year
        return build_kim2019(
            corpus, out, tasks=tasks, sizes=sizes, seed=seed, running=running, lang=lang,
            annotator=annotator, settings=settings, skip_failed=skip_failed,
        )  # fmt: skip
    from sentprobe.analysis.quality import write_quality_report
    from sentprobe.generation.pipeline import build as run_build
    from sentprobe.generation.pipeline import parse_sizes

    names = [t.strip() for t in tasks.split(",") if t.strip()] if tasks else None
    params = parse_settings(settings)
    for option, value, targets in (
        ("--freq-band", freq_band, ("Tense", "SubjNum", "ObjNum")),
        ("--somo-band", somo_band, ("SOMO",)),
    ):
        band = parse_band(value, option)
        if band is not None:
            for target in targets:
                params.setdefault(target, {}).setdefault("freq_band", band)
    result = run_build(
        corpus,
        out,
        lang=lang,
        tasks=names,
        sizes=parse_sizes(sizes),
        seed=seed,
        annotator=annotator,
        layout=layout.value if layout else None,
        profile=profile,
        text_layout="running" if running else "lines",
        skip_failed=skip_failed,
        progress=not quiet,
        bands=bands.value,
        params=params,
        # QUALITY.md goes into the new suite before it replaces OUT: all files, or none
        finish=lambda folder, made: write_quality_report(folder, made, progress=not quiet),
    )
    table = Table(title=f"{out}" if result.written else "nothing written")
    for col in ("task", "train", "dev", "test", "classes", "relaxed", "most frequent rejections"):
        table.add_column(col)
    for task in result.tasks:
        counts = task.counts()
        top = sorted(
            ((k, v) for k, v in task.stats.items() if "reject" in k or "skip" in k),
            key=lambda kv: -kv[1],
        )[:3]
        table.add_row(
            task.name,
            *(str(sum(counts[s].values())) for s in ("train", "dev", "test")),
            str(len(task.labels)),
            "; ".join(
                f"{k} {a}->{b}"
                for k, (a, b) in ((task.params.get("sizes") or {}).get("relaxed") or {}).items()
            ),
            ", ".join(f"{k}: {v}" for k, v in top),
        )
    err.print(table)
    report_failures(
        list(result.failures.values()),
        skip_failed,
        f"{len(result.failures)} task(s) could not be built at {sizes}; nothing was written. "
        "Use smaller --sizes (or --sizes auto), a larger corpus, or --skip-failed.",
    )
    if result.written:
        note(f"wrote {out} (manifest.json, QUALITY.md); annotations in {result.annotations}")
