"""``sentprobe map-words`` and ``sentprobe map-encoder``: cross-lingual mapping (X-Probe §5.2).

``map-words`` maps one language's word vectors into another's space (orthogonal Procrustes on
a seed dictionary); ``map-encoder`` trains a target-language student to reproduce a teacher
encoder on parallel text, as a training run that ``sentprobe run -e runs/NAME`` probes.
"""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path
from typing import Annotated, Any

import typer

from sentprobe.cli.console import note, out, warning
from sentprobe.cli.options import CacheDir, Quiet, RunName
from sentprobe.errors import SentprobeError


def map_words(
    src: Annotated[
        str, typer.Option(help="Word vectors to map (.vec / word2vec / GloVe text, or built-in).")
    ],
    tgt: Annotated[str, typer.Option(help="Word vectors of the space to map into.")],
    dictionary: Annotated[
        Path,
        typer.Option("--dict", help="Seed dictionary: 'source_word target_word' a line."),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Write the mapped source vectors here (.vec).")
    ],
    tgt_output: Annotated[
        Path | None,
        typer.Option(help="Also write the normalised target vectors (the space mapped into)."),  # noqa: UP007
    ] = None,
    test_fraction: Annotated[
        float,
        typer.Option("--test", help="Share of the dictionary's source words held out."),
    ] = 0.2,
    csls: Annotated[
        int, typer.Option(help="Retrieve by CSLS with this neighbourhood (0: plain cosine).")
    ] = 0,
    max_words: Annotated[
        int | None,
        typer.Option(help="Keep only the first N words of each vector file."),  # noqa: UP007
    ] = 200000,
    seed: Annotated[int, typer.Option(help="Seed of the held-out split.")] = 0,
) -> None:
    """Map word vectors into another language's space: orthogonal Procrustes with VecMap's
    supervised normalisation (unit, center, unit), and precision@1/@5 of translating the
    dictionary's held-out words."""
    from sentprobe.training.mapping import map_words as run_mapping
    from sentprobe.training.mapping import read_dictionary, read_vec, write_vec

    source, target = read_vec(src, max_words), read_vec(tgt, max_words)
    pairs = read_dictionary(dictionary)
    mapped, normalised, report = run_mapping(
        source, target, pairs, dictionary, test_fraction, seed, csls=csls
    )
    out.print(
        f"dictionary: {report.dictionary_pairs} pairs, {report.out_of_vocabulary} outside the "
        f"vocabularies; {report.train_pairs} pairs fitted, {report.test_words} source words "
        "held out",
        highlight=False,
    )
    scores = ", ".join(f"precision@{k} {v:.1%}" for k, v in report.precision.items())
    out.print(f"held-out translation ({report.retrieval}): {scores}", highlight=False)
    write_vec(output, mapped)
    note(f"wrote {output}")
    if tgt_output is not None:
        write_vec(tgt_output, normalised)
        note(f"wrote {tgt_output}")


def _downstream(spec: str, lang: str):
    """``--valid-task``: one task in the student's language ``lang`` (a task of unknown
    language passes with a warning: ``PATH?language=xx`` names it), scored each epoch as the
    logistic probe's dev accuracy (its L2 strength chosen on that dev split) on the
    student's vectors. A probing task is allowed with a warning: the student is then selected
    on what it will be probed on."""
    from sentprobe.datasets import resolve_tasks
    from sentprobe.probes.linear import LogisticProbe

    tasks = resolve_tasks(spec)
    if len(tasks) != 1 or "dev" not in tasks[0].splits:
        raise SentprobeError(f"--valid-task {spec}: expected one task with train and dev splits")
    meta = tasks[0].metadata
    if meta.language == "und":
        warning(
            f"--valid-task {spec}: the task's language is not known, so a task in another "
            f"language than {lang} would pass; name it: --valid-task 'PATH?language={lang}'"
        )
    elif meta.language != lang:
        raise SentprobeError(
            f"--valid-task {spec}: a {meta.language} task, but the student reads {lang}; "
            f"give a {lang} task"
        )
    if meta.category != "other":
        warning(
            f"--valid-task {spec} is a probing task ({meta.category}): epochs are then "
            "selected on a probe; a downstream task (X-Probe validates on XNLI) avoids that"
        )
    train, dev = tasks[0].splits["train"], tasks[0].splits["dev"]

    def validate(encode) -> float:
        probe = LogisticProbe().fit(
            encode(train.sentences), train.labels, encode(dev.sentences), dev.labels
        )
        return float(probe.best_score_)

    return validate


def map_encoder(
    teacher: Annotated[
        str | None,
        typer.Option(help="Encoder whose vectors the student learns (any -e spec) [minilm]."),  # noqa: UP007
    ] = None,
    parallel: Annotated[
        list[str] | None,
        typer.Option(  # noqa: UP007
            help="Parallel data (repeatable): SOURCE<TAB>TARGET file, or SOURCE,TARGET (Moses "
            "aligned files or two CoNLL-U treebanks paired by sent_id)."
        ),
    ] = None,
    lang: Annotated[
        str | None,
        typer.Option(help="The student's (target) language, e.g. fr."),  # noqa: UP007
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Run directory (runs/NAME); rerun to resume."),  # noqa: UP007
    ] = None,
    preset: Annotated[
        str | None,
        typer.Option(help="demo-fr: MiniLM -> French on the shipped LibreOffice pairs."),  # noqa: UP007
    ] = None,
    arch: Annotated[str | None, typer.Option(help="Student architecture [bilstm-max].")] = None,  # noqa: UP007
    dim: Annotated[
        int | None,
        typer.Option(help="Hidden size [so that the output has the teacher's dimension]."),  # noqa: UP007
    ] = None,
    emb_dim: Annotated[int | None, typer.Option(help="Word embedding size [128].")] = None,  # noqa: UP007
    layers: Annotated[
        int | None,
        typer.Option(
            help="Recurrent/convolutional layers [1; X-Probe's BiLSTM: 2]; cnn-* takes none."
        ),  # noqa: UP007
    ] = None,
    dropout: Annotated[
        float | None,
        typer.Option(
            help="Dropout between LSTM layers (--layers 2+) and before the gated ConvNet's "
            "convolutions [0; X-Probe: 0.1]; cnn-* takes none."
        ),  # noqa: UP007
    ] = None,
    vectors: Annotated[
        str | None,
        typer.Option(help="Frozen input word vectors (e.g. map-words output) [trained]."),  # noqa: UP007
    ] = None,
    epochs: Annotated[int | None, typer.Option(help="At most this many epochs [10].")] = None,  # noqa: UP007
    lam: Annotated[
        float | None,
        typer.Option("--lambda", help="Weight of the negative terms [0.25, the paper's]."),  # noqa: UP007
    ] = None,
    lr: Annotated[float | None, typer.Option(help="Adam learning rate [1e-3].")] = None,  # noqa: UP007
    batch_size: Annotated[int | None, typer.Option(help="Pairs per batch [64].")] = None,  # noqa: UP007
    valid_size: Annotated[int | None, typer.Option(help="Held-out pairs [1000].")] = None,  # noqa: UP007
    monitor: Annotated[
        str | None,
        typer.Option(
            help="Early stopping on mse, retrieval or task [mse; task with --valid-task]."
        ),  # noqa: UP007
    ] = None,
    valid_task: Annotated[
        str | None,
        typer.Option(help="A target-language task scored each epoch (dev accuracy)."),  # noqa: UP007
    ] = None,
    patience: Annotated[
        int | None,
        typer.Option(help="Stop after this many epochs without improvement [2]."),  # noqa: UP007
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of split, init and batches [0].")] = None,  # noqa: UP007
    device: Annotated[
        str, typer.Option(help="Where the student trains: cpu, cuda (cuda:N) or auto.")
    ] = "cpu",
    max_steps: Annotated[
        int | None,
        typer.Option(  # noqa: UP007
            help="Stop after this many training steps in all (for timing); an epoch cut "
            "short is not saved, a rerun trains it again."
        ),
    ] = None,
    cache_dir: CacheDir = None,
    name: RunName = None,
    quiet: Quiet = False,
) -> None:
    """Train a target-language student to reproduce a teacher encoder on translations
    (X-Probe §5.2): loss ||x-y|| - λ(||x_c-y|| + ||x-y_c||), validation each epoch, early
    stopping after two epochs without improvement; probe it with `sentprobe run -e RUN`."""
    from sentprobe.datasets.parallel import ParallelFiles
    from sentprobe.encoders import get_encoder
    from sentprobe.encoders.cache import EmbeddingCache
    from sentprobe.evaluation.runner import default_cache_dir
    from sentprobe.training.student import PRESETS, StudentConfig, train_student

    base: dict[str, Any] = {}
    if preset is not None:
        if preset not in PRESETS:
            raise SentprobeError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
        base = dict(PRESETS[preset])
    teacher = teacher or base.pop("teacher", "minilm")
    parallel = parallel or base.pop("parallel", None)
    lang = lang or base.pop("lang", None)
    output = output or base.pop("output", None)
    if not parallel or not lang or output is None:
        raise SentprobeError("give --parallel, --lang and --output (or a --preset)")
    given: dict[str, Any] = {
        "arch": arch, "dim": dim, "emb_dim": emb_dim, "layers": layers, "dropout": dropout,
        "vectors": vectors, "epochs": epochs, "patience": patience, "lam": lam, "lr": lr,
        "batch_size": batch_size, "valid_size": valid_size,
        "monitor": monitor or ("task" if valid_task else None), "seed": seed,
    }  # fmt: skip
    known = {f.name for f in fields(StudentConfig)}
    chosen = {k: v for k, v in base.items() if k in known}
    chosen.update({k: v for k, v in given.items() if v is not None})
    config = replace(StudentConfig(), **chosen)
    corpus = ParallelFiles([str(p) for p in parallel])  # streamed: never held as lists
    note(
        f"{len(corpus)} sentence pairs"
        + "".join(f"; {n} {why}" for why, n in corpus.skipped.items())
    )
    encoder = get_encoder(teacher)
    cache = EmbeddingCache(cache_dir or default_cache_dir())
    manifest = train_student(
        output,
        encoder,
        teacher,
        corpus,
        lang,
        config,
        cache,
        validate=_downstream(valid_task, lang) if valid_task else None,
        progress=not quiet,
        log=note,
        name=name,
        device=device,
        max_steps=max_steps,
    )
    best = manifest["mapping"].get("best_epoch")
    epochs_done = [e["epoch"] for e in manifest["epochs"]]
    if epochs_done:
        last = manifest["epochs"][-1]
        out.print(
            f"{output}: {len(epochs_done)} epochs, best epoch {best}; last: valid MSE "
            f"{last['valid_mse']:.5f}, retrieval {last['valid_retrieval']:.1%} "
            f"({manifest['mapping']['valid_pairs']} held-out pairs)",
            highlight=False,
        )
        note(f"probe it: sentprobe run -e {output}@best -t sample-{lang}")
