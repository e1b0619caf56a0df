"""The extension examples in CONTRIBUTING.md run as written: an encoder, a task, an annotator
and a probe registered there go through a real ``sentprobe.run``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sentprobe import registry

DOC = Path(__file__).resolve().parents[1] / "CONTRIBUTING.md"


@pytest.fixture
def examples(monkeypatch):
    """The namespace after running every python block; registries restored afterwards."""
    # built-ins register on import: import them first, or they would land in the copies below
    # and vanish with them (a later test in this process would not find sample-en)
    import sentprobe.annotation
    import sentprobe.datasets
    import sentprobe.encoders
    import sentprobe.probes  # noqa: F401

    for reg in (registry.encoders, registry.tasks, registry.suites, registry.probes,
                registry.annotators):  # fmt: skip
        monkeypatch.setattr(reg, "_entries", dict(reg._entries))
    namespace: dict = {}
    for block in re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S):
        exec(compile(block, str(DOC), "exec"), namespace)
    return namespace


def test_examples_register_and_run(examples, tmp_path):
    import sentprobe
    from sentprobe.annotation import get_annotator

    assert examples["CharCount"]().encode(["Ab", "z"]).shape == (2, 26)
    record = get_annotator("whitespace:fr")("un deux trois")
    assert record.tokens == ["un", "deux", "trois"] and record.heads == [0, 1, 1]
    frame = sentprobe.run(
        ["charcount"], "toy", probe="centroid", baselines=[], results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "cache", progress=False,
    )  # fmt: skip
    assert list(frame["encoder"]) == ["charcount"] and list(frame["task"]) == ["IsQuestion"]
    assert 0.0 <= float(frame["test_score"].iloc[0]) <= 1.0
