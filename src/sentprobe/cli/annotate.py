"""``sentprobe annotate``: the human-judgment round trip of a generated function-word suite
(Kim et al. 2019): ``export`` an annotation sheet, ``import`` the votes into a final suite."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from sentprobe.cli.console import err, note

annotate = typer.Typer(
    name="annotate",
    help="Human judgments for a function-word suite (sentprobe build --family kim2019): export "
    "the items for annotators, import their votes.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

Suite = Annotated[
    Path, typer.Argument(help="A suite in the DNC format (sentprobe build --family kim2019).")
]
Seed = Annotated[int, typer.Option(help="Seed of the item order (export) or balancing (import).")]


@annotate.command("export")
def export(
    suite: Suite,
    out: Annotated[Path, typer.Option("--out", "-o", help="The annotation sheet (CSV).")],
    seed: Seed = 0,
) -> None:
    """One CSV row per item, shuffled, with the paper's answer options: natural / unnatural /
    neither (acceptability), 1-5 or "does not make sense" (NLI, 5 = definitely entailment).
    Annotators fill ``answer``; give one row per vote (item_id, answer, any other columns) to
    ``import``."""
    from sentprobe.analysis.votes import export_items

    n = export_items(suite, out, seed=seed)
    note(f"wrote {out}: {n} items")


@annotate.command("import")
def import_(
    suite: Suite,
    votes: Annotated[
        Path,
        typer.Argument(help="CSV with item_id and answer columns, one row per vote."),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder of the final suite.")],
    seed: Seed = 0,
) -> None:
    """Keep the items the votes support (majority; acceptability: only where it agrees with
    the expected label; NLI: 5,4 -> entailment, 3 -> neutral, 2,1 -> contradiction, items with
    a "does not make sense" vote dropped), write the final suite and AGREEMENT.md (the
    paper's Table 3, Krippendorff's alpha, Fleiss' kappa) and QUALITY.md. A bad votes file
    writes nothing."""
    import json

    from sentprobe.analysis.quality import write_function_word_quality
    from sentprobe.analysis.votes import import_votes

    outcomes = import_votes(suite, votes, out, seed=seed)
    write_function_word_quality(out, json.loads((out / "manifest.json").read_text("utf-8")))
    table = Table(title=str(out))
    for col in ("set", "kept", "Agree", "Unan.", "Accuracy", "alpha", "kappa"):
        table.add_column(col)
    for o in outcomes:
        a = o.agreement
        table.add_row(
            o.name,
            str(len(o.kept)),
            *("-" if a[k] is None else str(a[k]) for k in ("agree", "unanimous", "accuracy")),
            *("-" if a[k] is None else str(a[k]) for k in ("krippendorff_alpha", "fleiss_kappa")),
        )
    err.print(table)
    note(f"wrote {out} (DNC format, manifest.json, AGREEMENT.md, QUALITY.md)")
