"""torch's global random states, saved with each epoch so that a resumed run draws the
dropout masks an uninterrupted run would.

Batch orders come from ``(seed, epoch)`` and need no saved state; dropout draws from torch's
global generators: the CPU one and, when CUDA is in use, one per GPU. Both are byte tensors
(a list of them for the GPUs), which ``torch.load(weights_only=True)`` reads back.
"""

from __future__ import annotations

from typing import Any

import torch


def rng_states() -> dict[str, Any]:
    """The CPU generator's state, and every GPU's when CUDA is available."""
    out: dict[str, Any] = {"torch_rng": torch.get_rng_state()}
    if torch.cuda.is_available():
        out["cuda_rng"] = list(torch.cuda.get_rng_state_all())
    return out


def restore_rng_states(state: dict[str, Any]) -> None:
    """Undo :func:`rng_states`; GPU states are restored when both the state and this
    machine have them (a run resumed on CPU after a GPU run has no GPU generator to set)."""
    if "torch_rng" in state:
        torch.set_rng_state(state["torch_rng"])
    if state.get("cuda_rng") and torch.cuda.is_available():
        for device, cuda_state in enumerate(state["cuda_rng"][: torch.cuda.device_count()]):
            torch.cuda.set_rng_state(cuda_state, device)
