"""``sentprobe run``: probe encoders on tasks and print the results table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sentprobe.cli.console import error, show_warnings, write_output
from sentprobe.cli.options import (
    DEFAULT_RESULTS,
    BatchSize,
    CacheDir,
    DeviceMapOption,
    DeviceOption,
    DTypeOption,
    Executor,
    Format,
    Layer,
    PoolingOption,
    PromptOption,
    Quiet,
    RunResults,
    TableFormat,
    TableOutput,
)


def task_items(given: list[str]) -> list[str]:
    """``-t``'s values: every repetition, each split at commas, in order, each once
    (``-t a -t b,c`` is a, b and c; a repeated option never replaces an earlier one)."""
    items = [item.strip() for value in given for item in value.split(",")]
    return list(dict.fromkeys(item for item in items if item))


def _shard_option(value: str | None) -> str | None:
    """A malformed ``--shard`` is a usage error (exit 2), found before anything is loaded."""
    from sentprobe.errors import SentprobeError
    from sentprobe.evaluation.shards import parse_shard

    if value is not None:
        try:
            parse_shard(value)
        except SentprobeError as e:
            raise typer.BadParameter(str(e).removeprefix("--shard ")) from None
    return value


def run(
    encoder: Annotated[
        list[str],
        typer.Option(
            "--encoder",
            "-e",
            help="Encoder to probe (repeatable): a registered name (see `sentprobe encoders`), "
            "hf:<model>, st:<model>, mteb:<MTEB model>, a local model directory, "
            "precomputed:<matrix>:<sentences>, or your code as file.py[:object] / "
            "package.module:object.",
        ),
    ] = ["minilm"],  # noqa: B006
    tasks: Annotated[
        list[str],
        typer.Option(
            "--tasks",
            "-t",
            help="Suite or task names (see `sentprobe tasks`), paths to SentEval / X-Probe "
            "directories or files or to Hugging Face dataset folders, or hf:ORG/NAME[:CONFIG] "
            "(Hub datasets); repeatable, and comma-separated lists.",
        ),
    ] = ["sample-en"],  # noqa: B006
    layer: Layer = None,
    pooling: PoolingOption = None,
    prompt: PromptOption = None,
    batch_size: BatchSize = None,
    dtype: DTypeOption = None,
    device: DeviceOption = None,
    device_map: DeviceMapOption = None,
    probe: Annotated[
        str | None,
        typer.Option(  # noqa: UP007
            help="logreg (every L2 strength trained to convergence, chosen on dev), mlp (a fast "
            "sigmoid MLP over the paper's grid; not SentEval's classifier), senteval (SentEval's "
            "classifier and selection, replicated), paper (mlp, logreg for WC: the split of the "
            "paper's Table 2), ridge (a closed-form ridge classifier, every L2 strength from one "
            "eigendecomposition), kim-mlp (Kim et al. 2019's 512-unit MLP), or any registered "
            "probe. Default: the task's own (kim-mlp for kim2019), else logreg.",
            show_default=False,
        ),
    ] = None,
    probe_device: Annotated[
        str | None,
        typer.Option(  # noqa: UP007
            help="Where logreg, mlp and ridge train: cpu, cuda or auto (CUDA when available). "
            "The same results up to float rounding; the others train on the CPU.",
            show_default=False,
        ),
    ] = None,
    cache_dtype: Annotated[
        str | None,
        typer.Option(  # noqa: UP007
            help="What the embedding cache stores: float32 (default), or float16 / bfloat16 "
            "in half the bytes (probes get float32; a separate cache from float32's).",
            show_default=False,
        ),
    ] = None,
    stream: Annotated[
        bool,
        typer.Option(
            help="With --probe ridge: probe every view as it is encoded, from the ridge "
            "probe's statistics; no vector is cached (tasks need a dev split).",
        ),
    ] = False,
    seeds: Annotated[int, typer.Option(min=1, help="Repeat each probe with this many seeds.")] = 1,
    nli_train: Annotated[
        Path | None,
        typer.Option(  # noqa: UP007
            help="NLI training pairs (MNLI/SNLI jsonl, or tsv with premise/hypothesis/label "
            "columns): an NLI head trained on them scores the NLI sets of kim2019 zero-shot, as "
            "in the paper (cached per encoder and file). Without it those sets are probed by "
            "10-fold CV within each set, marked ¶ in the table.",
        ),
    ] = None,
    keep_nli_overlap: Annotated[
        bool,
        typer.Option(
            "--keep-nli-overlap",
            help="Also train the --nli-train head on pairs that the probed NLI sets hold "
            "(by default they are left out, and the count is printed, so zero-shot is "
            "zero-shot).",
        ),
    ] = False,
    allow_heuristic_labels: Annotated[
        bool,
        typer.Option(
            "--allow-heuristic-labels",
            help="Score items whose labels are a generator's rule, not annotators' (generated "
            "NLI sets before `sentprobe annotate`); refused without it, marked ♯ in the table.",
        ),
    ] = False,
    controls: Annotated[
        bool,
        typer.Option(
            "--controls",
            help="Also probe each task's control task (each label a seeded random function of "
            "one word of the sentence, chosen so that nearly every test sentence's word also "
            "keys training sentences; Hewitt & Liang 2019) and show control accuracy, its "
            "ceiling and selectivity (docs/controls.md).",
        ),
    ] = False,
    erase: Annotated[
        list[str] | None,
        typer.Option(  # noqa: UP007
            "--erase",
            metavar="TASK",
            help="Also probe every task again with TASK's property erased from each encoder's "
            "vectors (LEACE) and, as the controls, with random subspaces of the same rank "
            "removed, and TASK by a held-out check on items the eraser never saw; "
            "repeatable. `report --erasure` shows the effects (docs/erasure.md).",
        ),
    ] = None,
    erase_fit: Annotated[
        str,
        typer.Option(
            "--erase-fit",
            metavar="train|train+dev",
            help="What the --erase eraser is fit on: TASK's training split (the held-out check "
            "trains a probe on erased dev and scores it on erased test), or its training and "
            "dev splits (the check cross-fits within erased test).",
        ),
    ] = "train",
    erase_controls: Annotated[
        int,
        typer.Option(
            "--erase-controls",
            min=1,
            help="How many random controls (seeds 0, 1, ...) each --erase erasure gets; the "
            "report gives their mean and spread.",
        ),
    ] = 3,
    intervene: Annotated[
        list[str] | None,
        typer.Option(  # noqa: UP007
            "--intervene",
            metavar="TASK",
            help="Also edit TASK's property out inside each Hugging Face encoder's forward "
            "pass (LEACE fit on TASK's training items at each layer read, applied to every "
            "token there, later layers recomputing) and, as controls, random subspaces of the "
            "same rank; every task is probed on the intervened layers, and a language model's "
            "own loss and top-1 predictions are compared. `report --intervention` "
            "shows decodable vs used per layer (docs/erasure.md). Repeatable.",
        ),
    ] = None,
    intervene_controls: Annotated[
        int,
        typer.Option(
            "--intervene-controls",
            min=1,
            help="How many random controls (seeds 0, 1, ...) each --intervene layer gets.",
        ),
    ] = 3,
    baselines: Annotated[
        str,
        typer.Option(
            help="default (majority,length,nb-uni,nb-bi,bov), all (adds untrained BiLSTM-last, "
            "BiLSTM-max, GatedConvNet), none, or a comma-separated list."
        ),
    ] = "default",
    results: RunResults = DEFAULT_RESULTS,
    cache_dir: CacheDir = None,
    executor: Executor = "local",
    shard: Annotated[
        str | None,
        typer.Option(  # noqa: UP007
            metavar="I/N",
            callback=_shard_option,
            help="Compute only the I-th of N deterministic shares of the (row, task) pairs, "
            "into this run's own --results; join the N stores with `sentprobe merge` "
            "(docs/scaling.md).",
        ),
    ] = None,
    keep_going: Annotated[
        bool,
        typer.Option(
            "--keep-going",
            help="A failed (row, task) pair does not stop the run: the others finish, the "
            "failures are listed at the end (one line each; SENTPROBE_DEBUG=1 prints their "
            "tracebacks), and the exit status is 1.",
        ),
    ] = False,
    keep_other_versions: Annotated[
        bool,
        typer.Option(
            "--keep-other-versions",
            help="Reuse stored results made by another sentprobe version or code, or another "
            "major.minor of numpy, scikit-learn, torch, transformers or sentence-transformers "
            "(computed again by default; `report` flags them).",
        ),
    ] = False,
    fmt: TableFormat = Format.markdown,
    output: TableOutput = None,
    quiet: Quiet = False,
) -> None:
    """Probe encoders on tasks and print the results table (tasks as columns, encoders as rows).

    Finished (encoder, task, seed) units are skipped when the same run is started again, and
    cached embeddings are never recomputed.
    """
    from sentprobe.cli.report import intervals
    from sentprobe.errors import SentprobeError
    from sentprobe.evaluation.runner import run as run_probes
    from sentprobe.evaluation.shards import parse_shard
    from sentprobe.reporting.compose import report_text

    options = {
        "layer": layer,
        "pooling": pooling,
        "prompt": prompt,
        "batch_size": batch_size,
        "dtype": dtype.value if dtype else None,
        "device": device,
        "device_map": device_map,
    }
    frame = run_probes(
        encoder,
        task_items(tasks),
        baselines=baselines,
        probe=probe,
        seeds=seeds,
        results=results,
        cache_dir=cache_dir,
        encoder_options=options,
        progress=not quiet,
        nli_train=nli_train,
        allow_heuristic_labels=allow_heuristic_labels,
        keep_nli_overlap=keep_nli_overlap,
        executor=executor,
        controls=controls,
        shard=parse_shard(shard) if shard is not None else None,
        keep_going=keep_going,
        erase=erase or (),
        erase_fit=erase_fit,
        erase_controls=erase_controls,
        keep_foreign=keep_other_versions,
        intervene=intervene or (),
        intervene_controls=intervene_controls,
        probe_device=probe_device,
        cache_dtype=cache_dtype,
        stream=stream,
    )
    show_warnings(frame)
    failures = frame.attrs.get("failures", [])
    interval = intervals(results, frame) if not frame.empty else None
    write_output(report_text(frame, fmt.value, interval=interval), output)
    for line in failures:
        error(line)
    if failures:
        raise SentprobeError(f"{len(failures)} job(s) failed (listed above); the rest is stored")
