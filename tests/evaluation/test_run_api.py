"""``sentprobe.run`` from Python: each encoder can be given its own options."""

from __future__ import annotations

import numpy as np
import pytest

import sentprobe
from sentprobe.datasets import make_mock_task
from sentprobe.encoders.base import Encoder
from sentprobe.errors import SentprobeError
from sentprobe.registry import encoders


class _Counts(Encoder):
    """Letter counts, times ``scale``: a toy encoder with one option."""

    def __init__(self, name: str, scale: float = 1.0) -> None:
        self.name, self.scale = name, scale

    @property
    def fingerprint(self) -> str:
        return f"{self.name}-{self.scale}"

    def encode(self, sentences):
        out = np.zeros((len(sentences), 26), dtype=np.float32)
        for i, s in enumerate(sentences):
            for ch in s:
                if "a" <= ch <= "z":
                    out[i, ord(ch) - 97] += self.scale
        return out


@pytest.fixture
def toys(monkeypatch):
    monkeypatch.setattr(encoders, "_entries", dict(encoders._entries))  # registered for this test
    encoders.register("toy-scaled", lambda scale=1.0: _Counts("toy-scaled", scale))
    encoders.register("toy-plain", lambda: _Counts("toy-plain"))


def _run(tmp_path, specs, **kw):
    task = make_mock_task("A", n_train=40, n_dev=10, n_test=10, seed=1)
    return sentprobe.run(
        specs, [task], baselines="none", results=tmp_path / "r.sqlite", progress=False, **kw
    )


def test_a_mapping_gives_each_encoder_its_own_options(tmp_path, toys):
    frame = _run(tmp_path, {"toy-plain": {}, "toy-scaled": {"scale": 2.0}})
    assert sorted(frame["encoder"]) == ["toy-plain", "toy-scaled"]
    assert "toy-scaled-2.0" in set(frame["encoder_fingerprint"])


def test_one_options_dict_still_goes_to_every_encoder(tmp_path, toys):
    # toy-plain takes no scale: the common dict reaches it and is refused, naming it
    with pytest.raises(SentprobeError, match="'toy-plain' does not take option"):
        _run(tmp_path, ["toy-scaled", "toy-plain"], encoder_options={"scale": 2.0})
