"""Where a probe trains: ``cpu``, ``cuda`` or ``auto`` (CUDA when available, else the CPU).

Every probe that takes ``device`` moves its training data there once, trains and scores
there, and keeps the fitted weights on the CPU, so a fitted probe predicts (and pickles) the
same way whichever device trained it.
"""

from __future__ import annotations

import torch

from sentprobe.errors import SentprobeError
from sentprobe.probes._validation import Param

#: The values of a probe's ``device`` parameter (``--probe-device``).
DEVICES: tuple[str, ...] = ("cpu", "cuda", "auto")
DEVICE = Param(str, options=DEVICES)


def resolve_device(device: str | torch.device | None) -> str:
    """``cpu`` or ``cuda`` for ``device`` (``auto``: CUDA when available). Asking for CUDA
    where there is none is a SentprobeError, before any work."""
    name = "cpu" if device is None else str(device)
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise SentprobeError(
                f"probe device {name!r}: PyTorch sees no CUDA device here; use cpu or auto"
            )
        return name
    if name != "cpu":
        raise SentprobeError(f"probe device must be one of {', '.join(DEVICES)}, not {name!r}")
    return name
