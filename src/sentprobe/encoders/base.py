"""The one interface every encoder implements: sentences in, a float32 matrix out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np


class Encoder(ABC):
    """Maps a batch of sentences to a float32 array.

    ``encode`` returns shape ``(n, dim)``, or ``(n, len(views), dim)`` for an encoder with
    several outputs from one pass (e.g. all hidden layers of a transformer); ``views`` then
    names them, and each view is probed and reported as its own row.

    ``fingerprint`` identifies everything that changes the vectors (model, revision, layer,
    pooling, seed...): the embedding cache is keyed by it.
    """

    #: Row label in reports.
    name: str = "encoder"
    #: Sentences per call to ``encode``; the runner batches with this size.
    batch_size: int = 64
    #: True when the vectors depend on a random seed (untrained networks): ``with_seed``
    #: then gives a differently seeded encoder, and ``--seeds N`` varies the encoder too.
    uses_seed: bool = False
    #: True when ``prepare`` builds state from the sentences it sees (SentEval's ``prepare``,
    #: e.g. a vocabulary): the runner then calls ``prepare_task`` once per task with all of
    #: that task's sentences (train + dev + test, as SentEval does) before encoding it, and
    #: ``fingerprint`` must identify what was prepared, so two states never share cached vectors.
    prepare_per_task: bool = False

    @property
    @abstractmethod
    def fingerprint(self) -> str: ...

    @property
    def views(self) -> list[str] | None:
        return None

    def prepare(self, sentences: Sequence[str]) -> None:  # noqa: B027 - optional hook
        """Called by the embedding cache with the sentences it is about to encode."""

    def prepare_task(self, sentences: Sequence[str]) -> None:
        """Called by the runner before each task when ``prepare_per_task`` is set."""
        self.prepare(sentences)

    def probe_checks(self, sentences: Sequence[str], language: str) -> dict[str, Any]:
        """What this encoder can tell about how it reads a task's test ``sentences`` in
        ``language`` (e.g. a trained run's unknown-token share); the runner stores it with
        each result (``extra["probe_checks"]``), a ``warnings`` list naming what would make
        the number mislead. Empty for encoders with nothing to say."""
        return {}

    def check_loadable(self) -> None:
        """Raise SentprobeError, before any work starts, when the model cannot be found (a
        mistyped Hub name); encoders with nothing to look up do nothing."""
        return None

    def with_seed(self, seed: int) -> Encoder:
        """This encoder for run seed ``seed`` (0 gives this one). Only encoders with
        ``uses_seed`` differ per seed; deterministic encoders return themselves."""
        return self

    @abstractmethod
    def encode(self, sentences: Sequence[str]) -> np.ndarray: ...

    def encode_batches(self, batches: Iterable[Sequence[str]]) -> Iterator[np.ndarray]:
        """``encode`` of each batch in turn. The embedding cache hands over all its batches at
        once, so an encoder may override this to prepare batch i+1 while batch i is encoded
        (HFEncoder tokenizes ahead in a thread); closing the iterator must stop that work."""
        for batch in batches:
            yield self.encode(batch)


class WrappedEncoder(Encoder):
    """Another encoder seen through a wrapper: every call goes to it. A subclass overrides
    the one call it changes (the runner's ``prepare`` that was already done, a Ray probe job
    that must not encode)."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self.name, self.batch_size = encoder.name, encoder.batch_size

    @property
    def fingerprint(self) -> str:
        return self.encoder.fingerprint

    @property
    def views(self) -> list[str] | None:
        return self.encoder.views

    def prepare(self, sentences: Sequence[str]) -> None:
        self.encoder.prepare(sentences)

    def probe_checks(self, sentences: Sequence[str], language: str) -> dict[str, Any]:
        return self.encoder.probe_checks(sentences, language)

    def check_loadable(self) -> None:
        self.encoder.check_loadable()

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        return self.encoder.encode(sentences)

    def encode_batches(self, batches: Iterable[Sequence[str]]) -> Iterator[np.ndarray]:
        return self.encoder.encode_batches(batches)
