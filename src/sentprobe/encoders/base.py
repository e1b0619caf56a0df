"""The one interface every encoder implements: sentences in, a float32 matrix out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

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

    @property
    @abstractmethod
    def fingerprint(self) -> str: ...

    @property
    def views(self) -> list[str] | None:
        return None

    def prepare(self, sentences: Sequence[str]) -> None:  # noqa: B027 - optional hook
        """Called once with every sentence to be encoded (e.g. to build a vocabulary)."""

    @abstractmethod
    def encode(self, sentences: Sequence[str]) -> np.ndarray: ...
