"""``--device`` of ``sentprobe train`` and ``map-encoder``: ``cpu``, ``cuda`` (``cuda:N``),
or ``auto`` (CUDA when torch sees a GPU, else the CPU). The device never changes a run's
settings: a run started on one may resume on another."""

from __future__ import annotations

import re

import torch

from ..errors import SentprobeError


def resolve_device(name: str) -> str:
    """The torch device ``name`` stands for; refused when unknown or absent here."""
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name != "cpu" and not re.fullmatch(r"cuda(:\d+)?", name):
        raise SentprobeError(f"--device {name!r}: use cpu, cuda, cuda:N or auto")
    if name != "cpu" and not torch.cuda.is_available():
        raise SentprobeError(f"--device {name}: no CUDA device is available to torch")
    return name
