"""``sentprobe train``: train a sentence encoder on an objective, a checkpoint per epoch."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from sentprobe.cli.console import note
from sentprobe.cli.options import Quiet, RunName
from sentprobe.errors import SentprobeError

PRESET_HELP = (
    "Sizes: laptop (default), paper (the papers' sizes), demo (small); "
    "'--preset demo' without --arch/--objective/--data trains the built-in experiment "
    "(3 Conneau architectures x autoencoder, SkipThought) into OUTPUT/demo-*."
)


def train(
    arch: Annotated[
        str | None,  # noqa: UP007
        typer.Option(
            help="bilstm-last, bilstm-max, gatedconv, selfattn-max, selfattn-last, "
            "cnn-max, cnn-avg, bilstm-skip."
        ),
    ] = None,
    objective: Annotated[
        str | None,  # noqa: UP007
        typer.Option(help="autoencoder, translation, skipthought, seq2tree, nli, lm, dissent."),
    ] = None,
    data: Annotated[
        list[Path] | None,  # noqa: UP007
        typer.Option("--data", "-d", help="Training file (repeatable); format per objective."),
    ] = None,
    output: Annotated[
        Path | None,  # noqa: UP007
        typer.Option("--output", "-o", help="Run directory (runs/NAME); the demo's parent."),
    ] = None,
    epochs: Annotated[int | None, typer.Option(help="Epochs (default 5; demo 4).")] = None,  # noqa: UP007
    dim: Annotated[int | None, typer.Option(help="Encoder size (overrides the preset).")] = None,  # noqa: UP007
    preset: Annotated[str, typer.Option(help=PRESET_HELP)] = "laptop",
    vectors: Annotated[
        str,
        typer.Option(
            help="Input word vectors: glove-6b-50d, a .vec/word2vec text file, or "
            "'none' (trained from scratch)."
        ),
    ] = "glove-6b-50d",
    batch_size: Annotated[int | None, typer.Option(help="Examples per batch.")] = None,  # noqa: UP007
    lr: Annotated[float | None, typer.Option(help="Learning rate.")] = None,  # noqa: UP007
    optimizer: Annotated[
        str | None,  # noqa: UP007
        typer.Option(help="adam or sgd (momentum 0.9) [default: sgd for gatedconv, else adam]."),
    ] = None,
    device: Annotated[str, typer.Option(help="cpu, cuda (cuda:N) or auto.")] = "cpu",
    seed: Annotated[int, typer.Option(help="Random seed.")] = 1234,
    targets: Annotated[
        str,
        typer.Option(
            help="Decoder targets: words, or bpe (subwords learned on the training split; "
            "BLEU on detokenised text)."
        ),
    ] = "words",
    target_vocab: Annotated[
        int | None,  # noqa: UP007
        typer.Option(help="Target vocabulary (or BPE) size (overrides the preset)."),
    ] = None,
    checkpoint_every: Annotated[
        int | None,  # noqa: UP007
        typer.Option(
            help="Also checkpoint every N training steps (a rerun resumes mid-epoch, exactly)."
        ),
    ] = None,
    max_steps: Annotated[
        int | None,  # noqa: UP007
        typer.Option(help="Stop after N training steps in all (checkpointed; rerun to go on)."),
    ] = None,
    annotator: Annotated[
        str, typer.Option(help="Parser for seq2tree/dissent data (a .conllu file is read as is).")
    ] = "spacy",
    name: RunName = None,
    quiet: Quiet = False,
) -> None:
    """Train an encoder; rerun the same command to resume after the last finished epoch.

    Probe the result with `sentprobe run -e runs/NAME` (last epoch), `-e runs/NAME@epoch-3`,
    `-e runs/NAME@best` (the epoch chosen on the objective's validation metric) or
    `-e 'runs/NAME@all'` (one row per epoch).
    """
    from sentprobe.training.checkpoint import best_epoch, read_manifest
    from sentprobe.training.demo import EPOCHS, train_demo
    from sentprobe.training.trainer import TrainConfig
    from sentprobe.training.trainer import train as run_training

    start = time.perf_counter()
    if preset == "demo" and arch is None and objective is None and not data:
        runs = train_demo(
            output or Path("runs"), epochs=epochs or EPOCHS, device=device, progress=not quiet
        )
        note(
            f"demo: {len(runs)} runs in {time.perf_counter() - start:.0f} s; probe every "
            f"epoch with: sentprobe run -e '{output or 'runs'}/demo-*@all' -t sample-en"
        )
        return
    missing = [
        n
        for n, v in (
            ("--arch", arch),
            ("--objective", objective),
            ("--data", data),
            ("--output", output),
        )
        if not v
    ]
    if missing:
        raise SentprobeError(f"sentprobe train needs {', '.join(missing)}")
    assert arch and objective and data and output
    config = TrainConfig(
        arch,
        objective,
        [str(p) for p in data],
        str(output),
        epochs=epochs or 5,
        preset=preset,
        dim=dim,
        vectors=None if vectors == "none" else vectors,
        batch_size=batch_size,
        optimizer=optimizer,
        lr=lr,
        seed=seed,
        device=device,
        annotator=annotator,
        name=name,
        checkpoint_every=checkpoint_every,
        max_steps=max_steps,
        targets=targets,
        overrides={} if target_vocab is None else {"target_vocab_size": target_vocab},
    )
    run_dir = run_training(config, progress=not quiet)
    manifest = read_manifest(run_dir)
    if not manifest["epochs"]:
        note(f"{run_dir}: stopped after {max_steps} steps, before epoch 1 ended; rerun to go on")
        return
    last = manifest["epochs"][-1]
    metric = manifest["metric"]["name"]
    note(
        f"{run_dir}: epoch {last['epoch']}, validation {metric} {last['valid'][metric]:.2f} "
        f"(best: epoch {best_epoch(manifest)}; {time.perf_counter() - start:.0f} s); probe "
        f"it: sentprobe run -e '{run_dir}@all' (every epoch) or -e {run_dir}@best"
    )
