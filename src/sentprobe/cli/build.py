"""``sentprobe build``: generate probing tasks from a raw-text or CoNLL-U corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from sentprobe.errors import SentprobeError

err = Console(stderr=True)


def build(
    corpus: Annotated[
        Path,
        typer.Option(
            "--corpus",
            "-c",
            help="Raw text (one sentence per line, or running text with "
            "--running; .gz/.bz2/.xz fine) or a CoNLL-U file (its gold annotation is used).",
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
    sizes: Annotated[str, typer.Option(help="train,dev,test sentences per task.")] = (
        "100000,10000,10000"
    ),
    seed: Annotated[int, typer.Option(help="Seed: same corpus + seed = identical files.")] = 2018,
    annotator: Annotated[
        str | None,
        typer.Option(  # noqa: UP007
            help="spacy:<model>, natasha, conllu, stanza:<lang>, benepar:<model>, udpipe:<file>, "
            "linkgrammar [default: gold for CoNLL-U, else the language's default]."
        ),
    ] = None,
    layout: Annotated[
        str | None,
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
    skip_failed: Annotated[
        bool, typer.Option(help="Write the tasks that could be built even if others could not.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Build probing tasks from a corpus, with a manifest and a quality report (QUALITY.md).

    The annotation is stored beside the suite (OUT.annotations) and reused: rebuilding with
    other sizes, tasks or seed parses nothing again, and an interrupted annotation resumes.
    """
    from sentprobe.generation.pipeline import build as run_build
    from sentprobe.generation.pipeline import parse_sizes

    if layout not in (None, "senteval", "xprobe"):
        raise SentprobeError(f"--layout must be senteval or xprobe, got {layout!r}")
    names = [t.strip() for t in tasks.split(",") if t.strip()] if tasks else None
    result = run_build(
        corpus,
        out,
        lang=lang,
        tasks=names,
        sizes=parse_sizes(sizes),
        seed=seed,
        annotator=annotator,
        layout=layout,
        profile=profile,  # type: ignore[arg-type]
        text_layout="running" if running else "lines",
        skip_failed=skip_failed,
        progress=not quiet,
    )
    table = Table(title=f"{out}" if result.written else "nothing written")
    for col in ("task", "train", "dev", "test", "classes", "most frequent rejections"):
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
            ", ".join(f"{k}: {v}" for k, v in top),
        )
    err.print(table)
    for message in result.failures.values():
        err.print(f"[red]error[/] {message}", highlight=False)
    if result.failures and not skip_failed:
        raise SentprobeError(
            f"{len(result.failures)} task(s) could not be built at {sizes}; nothing was written. "
            "Use smaller --sizes, a larger corpus, or --skip-failed."
        )
    if result.written:
        err.print(f"wrote {out} (manifest.json, QUALITY.md); annotations in {result.annotations}")
