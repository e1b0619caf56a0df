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
    out: str | Path = "runs", *, epochs: int = EPOCHS, device: str = "cpu", progress: bool = True
) -> list[Path]:
    """Train (or resume) the six demo runs; returns their directories."""
    return [train(c, progress=progress) for c in demo_configs(out, epochs=epochs, device=device)]
