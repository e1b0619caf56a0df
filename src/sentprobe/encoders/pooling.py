"""How a transformer's token states become one vector per sentence: the pooling names, the
prompt template a sentence is put into, and the token each position pooling picks.

A pooling is ``mean`` or ``max`` over the real (non-padding) tokens, ``cls`` (the first real
token), ``last`` (the last real token: what a left-to-right model has read the whole input
at), ``pos:K`` (the K-th real token, 0-based; negative counts from the end, ``pos:-1`` is
``last``) or ``marker:TEXT`` (the token that holds the last character of TEXT where it last
occurs in the prompt template, e.g. ``marker:word:`` after ``... in one word:"``). Tokens are
counted as the tokenizer makes them, special tokens (a BOS) and the template included, and
whichever side the batch is padded on. torch is imported inside functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import SentprobeError

#: Poolings that need no position: over all real tokens, or the first or last of them.
POOLINGS = ("mean", "max", "cls", "last")
#: Where a sentence goes in a prompt template.
SLOT = "{}"


def parse_poolings(spec: str | Sequence[str]) -> tuple[str, ...]:
    """``spec`` (comma-separated, or a list) as a tuple of poolings; an unknown name, a bad
    position or a repeat is a SentprobeError."""
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[str] = []
    for raw in items:
        item = raw.strip()
        kind, _, arg = item.partition(":")
        if item in POOLINGS or (kind == "marker" and arg):
            pass
        elif kind == "pos" and re.fullmatch(r"[+-]?\d+", arg):
            item = f"pos:{int(arg)}"  # one spelling per position: pos:+1, pos:01 -> pos:1
        else:
            raise SentprobeError(
                f"pooling must be one of {', '.join(POOLINGS)}, pos:K (an integer K) or "
                f"marker:TEXT, not {item!r}"
            )
        if item in out:
            raise SentprobeError(f"pooling {item!r} is given twice")
        out.append(item)
    if not out:
        raise SentprobeError("no pooling given")
    return tuple(out)


@dataclass(frozen=True)
class Prompt:
    """A prompt template with one ``{}`` where the sentence goes (``{}`` alone: no prompt)."""

    template: str = SLOT

    def __post_init__(self) -> None:
        if self.template.count(SLOT) != 1:
            raise SentprobeError(
                f"the prompt template must hold {SLOT} exactly once (where the sentence goes), "
                f"not {self.template.count(SLOT)} times: {self.template!r}"
            )

    @property
    def parts(self) -> tuple[str, str]:
        prefix, suffix = self.template.split(SLOT)
        return prefix, suffix

    def fill(self, sentence: str) -> str:
        prefix, suffix = self.parts
        return prefix + sentence + suffix

    def check_marker(self, marker: str) -> None:
        prefix, suffix = self.parts
        if marker not in suffix and marker not in prefix:
            raise SentprobeError(
                f"pooling marker:{marker}: {marker!r} is not in the prompt template "
                f"{self.template!r} (a marker names text of the template, outside {SLOT})"
            )

    def marker_char(self, marker: str, sentence: str) -> int:
        """Index, in the filled prompt, of the last character of the marker's last
        occurrence in the template (the suffix first, as it comes later)."""
        prefix, suffix = self.parts
        at = suffix.rfind(marker)
        if at >= 0:
            return len(prefix) + len(sentence) + at + len(marker) - 1
        return prefix.rfind(marker) + len(marker) - 1


def check_poolings(poolings: Sequence[str], prompt: Prompt | None) -> None:
    """A marker needs a prompt template that holds it."""
    for p in poolings:
        if p.startswith("marker:"):
            if prompt is None:
                raise SentprobeError(f"pooling {p} needs a prompt template (--prompt) holding it")
            prompt.check_marker(p.partition(":")[2])


def token_positions(
    poolings: Sequence[str],
    mask: Any,
    sentences: Sequence[str],
    prompt: Prompt | None,
    offsets: Any = None,
) -> dict[str, Any]:
    """For each ``pos:``/``marker:`` pooling, the index (b,) of its token in every row of a
    tokenized batch (``mask`` (b, tokens) True at real tokens; ``offsets`` (b, tokens, 2) the
    characters each token covers, for markers). A sentence too short for a position, or whose
    marker was cut off, is a SentprobeError that names it."""
    import torch

    lengths = mask.sum(1)
    first = mask.int().argmax(1)
    out: dict[str, Any] = {}
    for p in poolings:
        kind, _, arg = p.partition(":")
        if kind == "pos":
            k = int(arg)
            short = (lengths <= k) if k >= 0 else (lengths < -k)
            if short.any():
                i = int(short.nonzero()[0, 0])
                raise SentprobeError(
                    f"pooling {p}: {sentences[i]!r} has {int(lengths[i])} tokens "
                    f"(prompt and special tokens included), too few for position {k}"
                )
            out[p] = first + k if k >= 0 else first + lengths + k
        elif kind == "marker":
            assert prompt is not None and offsets is not None  # check_poolings and _tokenize
            chars = torch.tensor([prompt.marker_char(arg, s) for s in sentences])
            hit = (offsets[..., 0] <= chars[:, None]) & (chars[:, None] < offsets[..., 1]) & mask
            missing = ~hit.any(1)
            if missing.any():
                i = int(missing.nonzero()[0, 0])
                raise SentprobeError(
                    f"pooling {p}: the marker is cut off the input of {sentences[i]!r} "
                    "(longer than max_length tokens)"
                )
            out[p] = hit.int().argmax(1)
    return out


def pool(states: Sequence[Any], mask: Any, pooling: str, positions: Any = None) -> Any:
    """Pool each of ``states`` (b, tokens, dim) over tokens where ``mask`` (b, tokens) is
    True: a float32 tensor (b, len(states), dim). Padding never enters the result, whether
    batches are padded on the right or the left (nor does a NaN a model leaves at padding).
    ``positions`` (b,): the token of a ``pos:``/``marker:`` pooling (:func:`token_positions`).

    Mean and max go layer by layer through one float32 scratch buffer instead of stacking
    all layers and masking a float32 copy of the stack: on a CPU those fresh copies of every
    layer cost more than the arithmetic. Each output is the same operation on the same values
    as in the stacked form, so the vectors are bit-identical to its (tested).
    """
    import torch

    b, tokens, dim = states[0].shape
    device = states[0].device
    out = torch.empty((b, len(states), dim), dtype=torch.float32, device=device)
    if pooling not in ("mean", "max"):
        if pooling == "cls":
            positions = mask.int().argmax(1)
        elif pooling == "last":
            positions = mask.shape[1] - 1 - mask.int().flip(1).argmax(1)
        rows = torch.arange(b, device=device)
        for v, h in enumerate(states):
            out[:, v] = h[rows, positions.to(device)]
        return out
    scratch = torch.empty((b, tokens, dim), dtype=torch.float32, device=device)
    padding = ~mask[:, :, None]
    if pooling == "mean":
        for v, h in enumerate(states):
            out[:, v] = scratch.copy_(h).masked_fill_(padding, 0.0).sum(1)
        return out.div_(mask.sum(1).to(torch.float32).clamp(min=1)[:, None, None])
    for v, h in enumerate(states):
        out[:, v] = scratch.copy_(h).masked_fill_(padding, float("-inf")).amax(1)
    return out
