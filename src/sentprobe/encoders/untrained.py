"""Untrained encoders (Conneau et al. 2018, section 3.3): random projections of word vectors.

They show what an architecture gives "for free" before any training. Sizes follow the
paper: BiLSTM with 2 layers of 512 units per direction (1024-d output); Gated ConvNet with
8 convolutions of 512 units, kernel 3, gated linear units and random positional
embeddings, max-pooled over time (512-d). Weights come from a private generator seeded
with ``seed``, so the same seed always gives the same encoder (for a given torch version).
Tokens missing from the word vectors are dropped (as in InferSent); a sentence without
known tokens encodes to zeros.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..errors import SentprobeError
from .base import Encoder
from .hf import set_torch_threads, sorted_batches
from .static import WordVectors, load_word_vectors

HIDDEN = 512
LSTM_LAYERS = 2
CONV_LAYERS = 8
KERNEL = 3
MAX_POSITIONS = 1024  # longer sentences are truncated by the ConvNet
#: Bump when the architecture or initialisation changes, so cached vectors are not reused.
VERSION = 1


def _init_uniform(module: nn.Module, seed: int, bound: float | None = None) -> None:
    """PyTorch's default scale, U(+-1/sqrt(fan_in)) or U(+-bound), from a private generator.

    Parameters without a ``weight`` sibling (e.g. positional embeddings) are left alone.
    """
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for mod in module.modules():
            weight = getattr(mod, "weight", None)
            for p in mod.parameters(recurse=False):
                if bound is not None:
                    b = bound
                elif isinstance(weight, torch.Tensor):
                    b = 1.0 / math.sqrt(weight[0].numel())
                else:
                    continue
                p.uniform_(-b, b, generator=g)


class _UntrainedEncoder(Encoder):
    """Shared plumbing: token ids -> padded word-vector batches, sorted by length."""

    batch_size = 128
    dim: int
    #: The weights are random: ``--seeds N`` draws N encoders (``with_seed``).
    uses_seed = True
    #: Tokens are whitespace-split words: a student's teacher reads Moses-tokenised text
    #: ("clarity ." rather than "clarity.", whose word is not in the vectors).
    tokenized_input = True

    def __init__(
        self,
        vectors: str | Path | WordVectors = "glove-6b-50d",
        seed: int = 1111,
        batch_size: int = 128,
        num_threads: int | None = None,
    ) -> None:
        self.vectors = load_word_vectors(vectors)
        self.seed = int(seed)
        self.batch_size = batch_size
        self.num_threads = num_threads
        self._emb = torch.from_numpy(self.vectors.matrix)
        self.net = self._build().eval()

    def with_seed(self, seed: int) -> _UntrainedEncoder:
        """Run seed ``seed`` draws other weights: seed 0 is this encoder, k uses ``seed + k``."""
        if seed == 0:
            return self
        clone = copy.copy(self)
        clone.seed = self.seed + int(seed)
        clone.net = clone._build().eval()
        return clone

    def _build(self) -> nn.Module:
        raise NotImplementedError

    def _forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(batch, time, word_dim) inputs and (batch, time) mask -> (batch, self.dim)."""
        raise NotImplementedError

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        set_torch_threads(self.num_threads)
        ids = [self.vectors.ids(s) for s in sentences]
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        nonempty = [i for i, row in enumerate(ids) if row]
        with torch.inference_mode():
            for batch in sorted_batches([len(ids[i]) for i in nonempty], self.batch_size):
                rows = [nonempty[j] for j in batch]
                lengths = torch.tensor([len(ids[i]) for i in rows])
                padded = torch.zeros(len(rows), int(lengths.max()), dtype=torch.long)
                for k, i in enumerate(rows):
                    padded[k, : len(ids[i])] = torch.tensor(ids[i])
                mask = torch.arange(padded.shape[1])[None, :] < lengths[:, None]
                out[rows] = self._forward(self._emb[padded], mask).numpy()
        return out


class BiLSTMEncoder(_UntrainedEncoder):
    """Random 2-layer BiLSTM; ``last`` = final forward + backward states, ``max`` = max-pool.

    ``hidden``: units per direction (the paper's 512 by default; smaller ones are cheaper to
    probe, e.g. Kim et al.'s five random restarts in ``kim2019``)."""

    dim = 2 * HIDDEN

    def __init__(
        self,
        pooling: str = "max",
        vectors: str | Path | WordVectors = "glove-6b-50d",
        seed: int = 1111,
        batch_size: int = 128,
        num_threads: int | None = None,
        hidden: int = HIDDEN,
    ) -> None:
        if pooling not in ("last", "max"):
            raise SentprobeError(f"BiLSTM pooling must be 'last' or 'max', not {pooling!r}")
        self.pooling = pooling
        self.hidden = int(hidden)
        self.dim = 2 * self.hidden
        size = "" if self.hidden == HIDDEN else f" {LSTM_LAYERS}x{self.hidden}"
        self.name = f"BiLSTM-{pooling}{size} (untrained)"
        super().__init__(vectors, seed, batch_size, num_threads)

    def _build(self) -> nn.Module:
        lstm = nn.LSTM(
            self.vectors.dim,
            self.hidden,
            num_layers=LSTM_LAYERS,
            bidirectional=True,
            batch_first=True,
        )
        _init_uniform(lstm, self.seed, bound=1.0 / math.sqrt(self.hidden))
        return lstm

    @property
    def fingerprint(self) -> str:
        return (
            f"untrained-bilstm-v{VERSION}|{self.pooling}|{LSTM_LAYERS}x{self.hidden}"
            f"|{self.vectors.id}|seed={self.seed}"
        )

    def _forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        lengths = mask.sum(1)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        output, (h_n, _) = self.net(packed)
        if self.pooling == "last":  # top layer: forward state at the end, backward at start
            return torch.cat([h_n[-2], h_n[-1]], dim=1)
        padded, _ = pad_packed_sequence(output, batch_first=True, padding_value=float("-inf"))
        return padded.amax(1)


class _GatedConvNet(nn.Module):
    """fairseq-style ConvS2S encoder: (words + positions) -> linear -> residual GLU convs."""

    def __init__(self, word_dim: int) -> None:
        super().__init__()
        self.positions = nn.Parameter(torch.empty(MAX_POSITIONS, word_dim))
        self.proj = nn.Linear(word_dim, HIDDEN)
        self.convs = nn.ModuleList(
            nn.Conv1d(HIDDEN, 2 * HIDDEN, KERNEL, padding=KERNEL // 2) for _ in range(CONV_LAYERS)
        )

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x, mask = x[:, :MAX_POSITIONS], mask[:, :MAX_POSITIONS]
        m = mask[:, None, :].to(x.dtype)  # (batch, 1, time)
        h = self.proj(x + self.positions[: x.shape[1]]).transpose(1, 2) * m
        for conv in self.convs:
            # Re-zero padding after every layer so it never leaks into real positions.
            h = (F.glu(conv(h), dim=1) + h) * math.sqrt(0.5) * m
        return h.masked_fill(~mask[:, None, :], float("-inf")).amax(2)


class GatedConvEncoder(_UntrainedEncoder):
    """Random Gated ConvNet (8 x 512, kernel 3, GLU, positional embeddings, max-pool)."""

    dim = HIDDEN
    name = "GatedConvNet (untrained)"

    def _build(self) -> nn.Module:
        net = _GatedConvNet(self.vectors.dim)
        _init_uniform(net, self.seed)
        # Positions on the same scale as the word vectors, so neither drowns the other.
        g = torch.Generator().manual_seed(self.seed + 1)
        with torch.no_grad():
            std = float(self.vectors.matrix.std())
            net.positions.normal_(0.0, std, generator=g)
        return net

    @property
    def fingerprint(self) -> str:
        return (
            f"untrained-gatedconv-v{VERSION}|{CONV_LAYERS}x{HIDDEN}k{KERNEL}"
            f"|{self.vectors.id}|seed={self.seed}"
        )

    def _forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.net(x, mask)
