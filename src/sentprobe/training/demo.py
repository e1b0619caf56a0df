"""The built-in laptop experiment: Conneau et al.'s three architectures trained with the
autoencoder and SkipThought objectives on a small running-text corpus, every epoch kept.

The corpus (``training/demo/corpus.txt.gz``, rebuilt by ``scripts/build_demo_corpus.py``)
is running English text from the redistributable sources behind ``sample-en`` (Python and
Django documentation, LibreOffice help, the World English Bible, Shakespeare and Milton),
Moses-tokenised like the probing suites, one sentence per line, a blank line between
documents, without any sentence of ``sample-en`` (as Conneau et al. exclude the probing
sentences from their SkipThought training data).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..parallel import available_cores
from .trainer import TrainConfig, train

ARCHS = ("bilstm-last", "bilstm-max", "gatedconv")
OBJECTIVES = ("autoencoder", "skipthought")
EPOCHS = 4


def demo_corpus() -> Path:
    return Path(str(resources.files("sentprobe.training") / "demo" / "corpus.txt.gz"))


def demo_configs(
    out: str | Path = "runs", *, epochs: int = EPOCHS, device: str = "cpu", seed: int = 1234
) -> list[TrainConfig]:
    """One run per architecture and objective: ``OUT/demo-<arch>-<objective>``."""
    corpus = str(demo_corpus())
    return [
        TrainConfig(
            arch,
            objective,
            [corpus],
            str(Path(out) / f"demo-{arch}-{objective}"),
            epochs=epochs,
            preset="demo",
            device=device,
            seed=seed,
        )
        for objective in OBJECTIVES
        for arch in ARCHS
    ]


def train_demo(
    out: str | Path = "runs",
    *,
    epochs: int = EPOCHS,
    device: str = "cpu",
    progress: bool = True,
    jobs: int | None = None,
) -> list[Path]:
    """Train (or resume) the six demo runs; returns their directories.

    On CPU the runs go to ``jobs`` worker processes (default: one per core) of one torch
    thread each: these small models keep one core busy each, while two threads on one model
    give only 1.4-1.6x one thread (docs/benchmarks.md, "Training").
    """
    configs = demo_configs(out, epochs=epochs, device=device)
    jobs = jobs or (1 if device != "cpu" else min(len(configs), available_cores()))
    if jobs == 1:
        return [train(c, progress=progress) for c in configs]
    for c in configs:
        c.threads = 1
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")  # no fork of a process holding torch
    with ProcessPoolExecutor(jobs, mp_context=context) as pool:
        slots = [k % jobs for k in range(len(configs))]  # one progress line per worker
        return list(pool.map(_train_at, configs, [progress] * len(configs), slots))


def _train_at(config: TrainConfig, progress: bool, position: int) -> Path:
    return train(config, progress=progress, position=position)
