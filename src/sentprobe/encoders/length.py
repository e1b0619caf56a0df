"""The paper's Length baseline as an encoder: one feature, the sentence length in tokens.

It goes through the ordinary probe (logistic regression) like any encoder's vectors; the
baseline row is registered in :mod:`sentprobe.evaluation.baselines`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from sentprobe.encoders.base import Encoder


class LengthEncoder(Encoder):
    """Sentence length in tokens as the only feature (the paper's Length baseline)."""

    name = "Length"
    batch_size = 100_000
    version: ClassVar[str] = "1"

    @property
    def fingerprint(self) -> str:
        return f"length-tokens-v{self.version}"

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        return np.array([[len(s.split())] for s in sentences], dtype=np.float32)
