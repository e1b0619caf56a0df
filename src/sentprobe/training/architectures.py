"""The trainable sentence encoders of the three papers, as ``nn.Module``s.

API (stable; the cross-lingual student of ``training/mapping.py`` builds on it)::

    build_encoder(arch, *, vocab_size, emb_dim, dim, embeddings=None,
                  freeze_embeddings=True, causal=False, **kw) -> SentenceEncoder
    encoder(tokens: LongTensor[B, T], lengths: LongTensor[B]) -> Tensor[B, encoder.out_dim]
    encoder.states(tokens, lengths) -> (Tensor[B, T, encoder.state_dim], mask BoolTensor[B, T])

``ARCHITECTURES`` names them (the ``--arch`` values):

* ``bilstm-last``, ``bilstm-max`` (Conneau et al. 2018, section 3.1; also Ravishankar et al.
  2019's two LSTM encoders, InferSent-style): a bidirectional LSTM (``layers``, 2 in the
  paper) of ``dim`` units per direction; *last* concatenates the forward state at the last
  word and the backward state at the first, *max* max-pools each dimension over time.
  Output ``2 * dim``.
* ``gatedconv`` (Conneau 3.1, after Gehring et al. 2017): word embeddings plus learned
  positional embeddings, a linear map to ``dim``, ``layers`` (8 in the paper) residual
  convolutions of kernel ``kernel`` (3) filtered by gated linear units, max-pooled over time.
  Output ``dim``.
* ``selfattn-max``, ``selfattn-last`` (Ravishankar 5, after Lin et al. 2017): the BiLSTM's
  states, then one self-attention layer (each word attends to every word through query/key
  projections of size ``att_dim``: 150, their appendix's MLP size, under the paper preset, 64
  under laptop and demo; residual), pooled by max or by last state as the BiLSTM. It is not
  the layer Ravishankar name: Lin et al.'s structured self-attention (150 tanh units, 60
  heads) gives a 60-row matrix, and they do not say how its max-pool and last-state variants
  are taken, so sentprobe implements this single-head layer instead (docs/training.md).
  Output ``2 * dim``.
* ``cnn-max``, ``cnn-avg`` (Ravishankar 5, after Gan et al. 2016): parallel convolutions of
  widths ``kernels`` (3, 4, 5) with ``channels`` filters each (800), ReLU, max- or
  mean-pooled over time, concatenated and projected to ``dim`` (1024). Output ``dim``.
* ``bilstm-skip`` (Kim et al. 2019, 3.1): a 2-layer BiLSTM whose top-layer states are
  concatenated with each word's input vector (the skip connection), max-pooled (their
  decoders are initialised with the max-pooled output). Output ``2 * dim + emb_dim``. Kim
  et al. use ELMo's character CNN as input layer; here the input is word vectors.

``causal=True`` builds the left-to-right version used by the language-modelling objective
(``states`` at position t then depends only on words 1..t): LSTMs become unidirectional
(``dim`` units, output ``dim``; the LM trains a forward and a backward copy and concatenates
them, as Kim et al. do after Peters et al. 2018), convolutions are padded on the left only,
attention is masked to earlier words.

Embeddings: ``embeddings`` (a ``[vocab_size, emb_dim]`` array, e.g. GloVe rows from
``vocab.embedding_matrix``) initialises the table, frozen by default as in Conneau et al.
("without fine-tuning, to isolate the impact of encoder architectures"); without it the
table is trained from scratch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..errors import SentprobeError
from .vocab import PAD

MAX_POSITIONS = 512  # the gated ConvNet's positional table; longer inputs are truncated
#: Options a preset may give every architecture; one that does not use it ignores it.
SHARED_OPTIONS = {"layers", "dropout"}


def length_mask(lengths: torch.Tensor, width: int) -> torch.Tensor:
    """``[B, width]`` True where a position holds a word."""
    return torch.arange(width, device=lengths.device)[None, :] < lengths[:, None]


def max_pool(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return h.masked_fill(~mask[:, :, None], float("-inf")).amax(1)


def mean_pool(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask[:, :, None].to(h.dtype)
    return (h * m).sum(1) / m.sum(1).clamp_min(1.0)


def last_pool(h: torch.Tensor, lengths: torch.Tensor, bidirectional: bool) -> torch.Tensor:
    """Forward half at the last word (and backward half at the first, if bidirectional)."""
    idx = (lengths - 1).clamp_min(0)
    rows = torch.arange(h.shape[0], device=h.device)
    if not bidirectional:
        return h[rows, idx]
    half = h.shape[2] // 2
    return torch.cat([h[rows, idx, :half], h[:, 0, half:]], dim=1)


class SentenceEncoder(nn.Module):
    """Token ids -> one vector per sentence; subclasses define ``states`` and ``pool``."""

    out_dim: int
    state_dim: int
    #: Which of ``SHARED_OPTIONS`` the class takes.
    OPTIONS: frozenset[str] = frozenset({"layers", "dropout"})

    def __init__(
        self,
        vocab_size: int,
        emb_dim: int,
        embeddings: np.ndarray | None = None,
        freeze_embeddings: bool = True,
        causal: bool = False,
    ) -> None:
        super().__init__()
        self.causal = causal
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=PAD)
        if embeddings is not None:
            if embeddings.shape != (vocab_size, emb_dim):
                raise SentprobeError(
                    f"embeddings of shape {embeddings.shape}, expected {(vocab_size, emb_dim)}"
                )
            with torch.no_grad():
                self.embedding.weight.copy_(torch.from_numpy(np.asarray(embeddings)))
            self.embedding.weight.requires_grad_(not freeze_embeddings)

    def states(
        self, tokens: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def pool(self, h: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        h, mask = self.states(tokens, lengths)
        return self.pool(h, mask, lengths)


def _run_lstm(lstm: nn.LSTM, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Packed LSTM over padded inputs; padded positions of the output are 0."""
    packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
    out, _ = lstm(packed)
    h, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    return h


class BiLSTM(SentenceEncoder):
    """Conneau's BiLSTM-last / BiLSTM-max (and Kim's skip-connected variant)."""

    def __init__(
        self,
        vocab_size: int,
        emb_dim: int,
        dim: int,
        *,
        pooling: str = "max",
        layers: int = 2,
        skip: bool = False,
        dropout: float = 0.0,
        **common: Any,
    ) -> None:
        super().__init__(vocab_size, emb_dim, **common)
        self.pooling, self.skip = pooling, skip
        self.bidirectional = not self.causal
        self.lstm = nn.LSTM(
            emb_dim,
            dim,
            num_layers=layers,
            batch_first=True,
            bidirectional=self.bidirectional,
            dropout=dropout if layers > 1 else 0.0,
        )
        directions = 2 if self.bidirectional else 1
        self.state_dim = self.out_dim = directions * dim + (emb_dim if skip else 0)

    def states(
        self, tokens: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.embedding(tokens)
        h = _run_lstm(self.lstm, x, lengths)
        if self.skip:
            h = torch.cat([h, x], dim=2)
        return h, length_mask(lengths, tokens.shape[1])

    def pool(self, h: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        if self.pooling == "last":
            return last_pool(h, lengths, self.bidirectional)
        return max_pool(h, mask)


class SelfAttentive(BiLSTM):
    """BiLSTM states + one residual self-attention layer, max- or last-pooled."""

    def __init__(
        self, vocab_size: int, emb_dim: int, dim: int, *, att_dim: int = 150, **kw: Any
    ) -> None:
        super().__init__(vocab_size, emb_dim, dim, **kw)
        self.query = nn.Linear(self.state_dim, att_dim)
        self.key = nn.Linear(self.state_dim, att_dim)
        self.scale = 1.0 / math.sqrt(att_dim)

    def states(
        self, tokens: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        h, mask = super().states(tokens, lengths)
        scores = torch.bmm(self.query(h), self.key(h).transpose(1, 2)) * self.scale
        allowed = mask[:, None, :].expand(-1, h.shape[1], -1)
        if self.causal:
            allowed = allowed & torch.ones_like(allowed[0]).tril()[None]
        weights = scores.masked_fill(~allowed, float("-inf")).softmax(2)
        h = h + torch.bmm(weights, h)
        return h * mask[:, :, None].to(h.dtype), mask


class GatedConvNet(SentenceEncoder):
    """Conneau's gated ConvNet: positions + words -> linear -> residual GLU convs -> max."""

    def __init__(
        self,
        vocab_size: int,
        emb_dim: int,
        dim: int,
        *,
        layers: int = 8,
        kernel: int = 3,
        dropout: float = 0.0,
        **common: Any,
    ) -> None:
        super().__init__(vocab_size, emb_dim, **common)
        self.kernel = kernel
        self.positions = nn.Embedding(MAX_POSITIONS, emb_dim)
        nn.init.normal_(self.positions.weight, 0.0, 0.1)
        self.proj = nn.Linear(emb_dim, dim)
        pad = 0 if self.causal else kernel // 2
        self.convs = nn.ModuleList(
            nn.Conv1d(dim, 2 * dim, kernel, padding=pad) for _ in range(layers)
        )
        self.dropout = nn.Dropout(dropout)
        self.state_dim = self.out_dim = dim

    def states(
        self, tokens: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        tokens = tokens[:, :MAX_POSITIONS]
        lengths = lengths.clamp_max(MAX_POSITIONS)
        mask = length_mask(lengths, tokens.shape[1])
        m = mask[:, None, :].to(self.proj.weight.dtype)
        pos = torch.arange(tokens.shape[1], device=tokens.device)
        h = self.proj(self.embedding(tokens) + self.positions(pos)[None]).transpose(1, 2) * m
        for conv in self.convs:
            inp = F.pad(h, (self.kernel - 1, 0)) if self.causal else h
            # Re-zero padding after every layer so it never leaks into real positions.
            h = (F.glu(conv(self.dropout(inp)), dim=1) + h) * math.sqrt(0.5) * m
        return h.transpose(1, 2), mask

    def pool(self, h: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return max_pool(h, mask)


class MultiWidthCNN(SentenceEncoder):
    """Ravishankar's CNN: widths 3/4/5, ReLU, max or mean over time, projected to ``dim``."""

    OPTIONS = frozenset()

    def __init__(
        self,
        vocab_size: int,
        emb_dim: int,
        dim: int,
        *,
        pooling: str = "max",
        kernels: Sequence[int] = (3, 4, 5),
        channels: int | None = None,
        **common: Any,
    ) -> None:
        super().__init__(vocab_size, emb_dim, **common)
        channels = channels or dim
        self.pooling, self.kernels = pooling, tuple(kernels)
        self.convs = nn.ModuleList(nn.Conv1d(emb_dim, channels, k) for k in self.kernels)
        self.state_dim = channels * len(self.kernels)
        self.proj = nn.Linear(self.state_dim, dim)
        self.out_dim = dim

    def states(
        self, tokens: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        mask = length_mask(lengths, tokens.shape[1])
        x = self.embedding(tokens).transpose(1, 2)
        outs = []
        for k, conv in zip(self.kernels, self.convs):
            # Left-pad k-1 when causal; else pad so that output t is centred on word t.
            left = k - 1 if self.causal else (k - 1) // 2
            outs.append(F.relu(conv(F.pad(x, (left, k - 1 - left)))))
        h = torch.cat(outs, dim=1).transpose(1, 2)
        return h * mask[:, :, None].to(h.dtype), mask

    def pool(self, h: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        pooled = max_pool(h, mask) if self.pooling == "max" else mean_pool(h, mask)
        return self.proj(pooled)


#: ``--arch`` name -> (factory, fixed options, one-line description).
ARCHITECTURES: dict[str, tuple[type[SentenceEncoder], dict[str, Any], str]] = {
    "bilstm-last": (BiLSTM, {"pooling": "last"}, "BiLSTM, last states (Conneau 3.1)"),
    "bilstm-max": (BiLSTM, {"pooling": "max"}, "BiLSTM, max-pooled (Conneau 3.1)"),
    "gatedconv": (GatedConvNet, {}, "gated ConvNet, max-pooled (Conneau 3.1)"),
    "selfattn-max": (SelfAttentive, {"pooling": "max"}, "self-attentive, max (Ravishankar 5)"),
    "selfattn-last": (SelfAttentive, {"pooling": "last"}, "self-attentive, last (Ravishankar 5)"),
    "cnn-max": (MultiWidthCNN, {"pooling": "max"}, "CNN 3/4/5, max-pooled (Ravishankar 5)"),
    "cnn-avg": (MultiWidthCNN, {"pooling": "avg"}, "CNN 3/4/5, mean-pooled (Ravishankar 5)"),
    "bilstm-skip": (
        BiLSTM,
        {"pooling": "max", "skip": True},
        "2-layer BiLSTM + skip connection, max (Kim 3.1)",
    ),
}


def build_encoder(
    arch: str,
    *,
    vocab_size: int,
    emb_dim: int,
    dim: int,
    embeddings: np.ndarray | None = None,
    freeze_embeddings: bool = True,
    causal: bool = False,
    **kw: Any,
) -> SentenceEncoder:
    """The encoder ``arch`` (see ``ARCHITECTURES``); ``kw`` are its own options (``layers``,
    ``kernel``, ``kernels``, ``channels``, ``att_dim``, ``dropout``)."""
    if arch not in ARCHITECTURES:
        raise SentprobeError(f"unknown architecture {arch!r}; known: {', '.join(ARCHITECTURES)}")
    cls, fixed, _ = ARCHITECTURES[arch]
    factory: Callable[..., SentenceEncoder] = cls
    # A preset may give every architecture ``layers``/``dropout``; the CNN has no layers.
    kw = {k: v for k, v in kw.items() if k not in SHARED_OPTIONS or k in cls.OPTIONS}
    try:
        return factory(
            vocab_size,
            emb_dim,
            dim,
            embeddings=embeddings,
            freeze_embeddings=freeze_embeddings,
            causal=causal,
            **fixed,
            **kw,
        )
    except TypeError as e:
        raise SentprobeError(f"architecture {arch!r}: {e}") from None


class BidirectionalLM(SentenceEncoder):
    """Two causal encoders, one reading left to right and one right to left (the language
    modelling objective's encoder, after Peters et al. 2018 / Kim et al. 2019): the sentence
    vector concatenates their pooled outputs; ``states`` gives each direction's states."""

    def __init__(self, forward_encoder: SentenceEncoder, backward_encoder: SentenceEncoder):
        nn.Module.__init__(self)
        self.fwd, self.bwd = forward_encoder, backward_encoder
        self.out_dim = forward_encoder.out_dim + backward_encoder.out_dim
        self.state_dim = forward_encoder.state_dim

    def both_states(
        self, tokens: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(forward states, backward states in the *original* word order, mask)."""
        hf, mask = self.fwd.states(tokens, lengths)
        hb, _ = self.bwd.states(reverse_padded(tokens, lengths), lengths)
        return hf, reverse_padded(hb, lengths), mask

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return torch.cat(
            [self.fwd(tokens, lengths), self.bwd(reverse_padded(tokens, lengths), lengths)], dim=1
        )


def reverse_padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each row's first ``length`` positions (dim 1); padding stays at the end."""
    width = x.shape[1]
    pos = torch.arange(width, device=x.device)[None, :]
    idx = torch.where(pos < lengths[:, None], lengths[:, None] - 1 - pos, pos)
    if x.dim() == 3:
        idx = idx[:, :, None].expand(-1, -1, x.shape[2])
    return x.gather(1, idx)


def build_from_spec(spec: dict[str, Any]) -> SentenceEncoder:
    """The (untrained) encoder a run manifest's ``encoder`` entry describes: ``arch``,
    ``vocab_size``, ``emb_dim``, ``dim``, ``freeze_embeddings``, ``bidirectional_lm``,
    ``options``. Weights are then loaded from a checkpoint."""
    common = dict(
        vocab_size=spec["vocab_size"],
        emb_dim=spec["emb_dim"],
        dim=spec["dim"],
        freeze_embeddings=spec.get("freeze_embeddings", True),
        **spec.get("options", {}),
    )
    encoder: SentenceEncoder
    if spec.get("bidirectional_lm"):
        encoder = BidirectionalLM(
            build_encoder(spec["arch"], causal=True, **common),
            build_encoder(spec["arch"], causal=True, **common),
        )
    else:
        encoder = build_encoder(spec["arch"], **common)
    # The spec says whether the word tables were frozen; without ``embeddings`` the
    # constructor leaves them trainable, so a resumed run would train its frozen vectors.
    for module in encoder.modules():
        if isinstance(module, SentenceEncoder) and hasattr(module, "embedding"):
            module.embedding.weight.requires_grad_(not common["freeze_embeddings"])
    return encoder
