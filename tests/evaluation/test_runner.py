"""The runner: rows x tasks x seeds stored once; reruns skip finished units and encode nothing."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from sentprobe.datasets import make_mock_task
from sentprobe.encoders.base import Encoder
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.runner import expand_baselines, run
from sentprobe.evaluation.store import ResultsStore


class CountingEncoder(Encoder):
    """Bag of hashed tokens; counts every sentence it is asked to encode."""

    name = "Counting"

    def __init__(self, views: list[str] | None = None) -> None:
        self.encoded = 0
        self._views = views

    @property
    def fingerprint(self) -> str:
        return f"counting-v1-{self._views}"

    @property
    def views(self):
        return self._views

    def encode(self, sentences):
        self.encoded += len(sentences)
        out = np.zeros((len(sentences), 32), dtype=np.float32)
        for i, s in enumerate(sentences):
            for tok in s.split():
                out[i, zlib.crc32(tok.encode()) % 32] += 1  # stable across processes
        if self._views:
            out = np.stack([out * (v + 1) for v in range(len(self._views))], axis=1)
        return out


@pytest.fixture
def tasks():
    return [
        make_mock_task("A", seed=1),
        make_mock_task("B", n_classes=4, seed=2),
        make_mock_task("C", n_dev=0, seed=3),
    ]


def test_rerun_skips_finished_units_and_encodes_nothing(tmp_path, tasks):
    enc = CountingEncoder()
    kw = dict(
        results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "cache",
        progress=False,
        baselines="majority,nb-uni",
    )
    first = run([enc], tasks, **kw)
    assert enc.encoded == len({s for t in tasks for s in t.sentences()})
    assert len(first) == 3 * 3  # 3 rows x 3 tasks
    created = sorted(first["created"])

    enc2 = CountingEncoder()
    second = run([enc2], tasks, **kw)
    assert enc2.encoded == 0
    assert sorted(second["created"]) == created  # nothing recomputed
    with ResultsStore(tmp_path / "r.sqlite") as store:
        assert len(store) == 9


def test_results_are_sensible(tmp_path, tasks):
    frame = run(
        [CountingEncoder()],
        tasks,
        results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "c",
        progress=False,
        baselines="majority,length",
    )
    by = {(r.encoder, r.task): r for r in frame.itertuples()}
    assert by[("Majority", "A")].test_score == pytest.approx(0.5)
    train_b, test_b = tasks[1].splits["train"].labels, tasks[1].splits["test"].labels
    majority = max(sorted(set(train_b)), key=train_b.count)
    assert by[("Majority", "B")].test_score == pytest.approx(test_b.count(majority) / len(test_b))
    assert by[("Counting", "A")].test_score > 0.8
    assert by[("Counting", "A")].selection == "dev"
    assert by[("Counting", "C")].selection.startswith("cv")
    assert by[("Counting", "A")].n_train == 200 and by[("Counting", "A")].dim == 32


def test_seeds_and_views_are_separate_units(tmp_path, tasks):
    enc = CountingEncoder(views=["layer0", "layer1"])
    frame = run(
        [enc],
        tasks[:1],
        results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "c",
        progress=False,
        baselines="none",
        seeds=3,
    )
    assert sorted(frame["encoder"].unique()) == ["Counting@layer0", "Counting@layer1"]
    assert sorted(frame["seed"].unique()) == [0, 1, 2]
    assert len(frame) == 6


def test_bad_names_fail_before_any_work(tmp_path, tasks):
    with pytest.raises(SentprobeError, match="unknown baseline"):
        expand_baselines("majority,nope")
    with pytest.raises(SentprobeError):
        run(
            [CountingEncoder()],
            tasks,
            probe="nope",
            results=tmp_path / "r.sqlite",
            cache_dir=tmp_path / "c",
            progress=False,
        )
    with pytest.raises(SentprobeError):
        run(
            [CountingEncoder()],
            "no-such-suite",
            results=tmp_path / "r.sqlite",
            cache_dir=tmp_path / "c",
            progress=False,
        )
    assert not (tmp_path / "r.sqlite").exists()
    assert not (tmp_path / "c").exists()
