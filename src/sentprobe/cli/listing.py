"""``sentprobe tasks`` and ``sentprobe encoders``: what can be named on the command line."""

from __future__ import annotations

from rich.table import Table

from sentprobe.cli.console import out


def tasks() -> None:
    """List the registered suites and tasks."""
    from sentprobe.datasets import list_suites, list_tasks

    table = Table(title="Suites")
    table.add_column("suite")
    table.add_column("tasks")
    for suite in list_suites():
        table.add_row(suite.name, ", ".join(suite.tasks))
    out.print(table)
    table = Table(title="Tasks")
    for col in ("name", "paper name", "category", "language", "classes"):
        table.add_column(col, no_wrap=True)
    table.add_column("source", no_wrap=True, overflow="ellipsis", max_width=30)
    for t in list_tasks():
        table.add_row(t.name, t.paper_name or "", t.category, t.language, str(t.n_labels), t.source)
    out.print(table)
    out.print("Any SentEval file/directory or X-Probe folder can also be given by path to --tasks.")


def encoders() -> None:
    """List the registered encoders and the other ways to name one."""
    from sentprobe.encoders import accepted_options
    from sentprobe.evaluation.baselines import baseline_names
    from sentprobe.registry import encoders as registry

    table = Table(title="Encoders")
    table.add_column("name")
    table.add_column("options")
    for name, factory in registry.items():
        opts = accepted_options(factory)
        table.add_row(name, ", ".join(opts) if opts else "")
    out.print(table)
    out.print(
        "Also: hf:<model or dir>, st:<model or dir>, mteb:<MTEB model>[@dir], a local model "
        "directory, "
        "precomputed:<matrix .npy/.npz/.safetensors>:<sentences .txt>, file.py[:object], "
        "package.module:object (an Encoder, a callable on a list of sentences, or a "
        "SentEval prepare/batcher file)."
    )
    out.print(f"Baselines (--baselines): {', '.join(baseline_names())}")
