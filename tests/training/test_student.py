"""The cross-lingual student: the paper's loss on a hand-computed example, in-batch negatives,
early stopping, checkpoints per epoch, resuming, and the trained run as a sentprobe encoder."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from sentprobe.datasets.parallel import ParallelCorpus
from sentprobe.encoders.cache import EmbeddingCache
from sentprobe.encoders.custom import CallableEncoder
from sentprobe.errors import SentprobeError
from sentprobe.training.checkpoint import TrainedRunEncoder, read_manifest
from sentprobe.training.student import (
    EarlyStopping,
    StudentConfig,
    alignment_loss,
    derangement,
    retrieval_accuracy,
    train_student,
)


def test_loss_matches_the_formula_by_hand() -> None:
    x = torch.tensor([[1.0, 0.0], [0.0, 0.0]])
    y = torch.tensor([[1.0, 0.0], [0.0, 3.0]])
    swap = torch.tensor([1, 0])  # the only derangement of two rows
    # row 0: ||x0-y0|| = 0, ||x1-y0|| = 1, ||x0-y1|| = sqrt(10)
    # row 1: ||x1-y1|| = 3, ||x0-y1|| = sqrt(10), ||x1-y0|| = 1
    expected = ((0 - 0.25 * (1 + math.sqrt(10))) + (3 - 0.25 * (math.sqrt(10) + 1))) / 2
    got = alignment_loss(x, y, x[swap], y[swap], 0.25)
    assert got.item() == pytest.approx(expected) == pytest.approx(1.25 - 0.25 * math.sqrt(10))
    assert alignment_loss(x, y, x[swap], y[swap], 0.0).item() == pytest.approx(1.5)


def test_negatives_come_from_other_pairs() -> None:
    gen = torch.Generator().manual_seed(0)
    for n in (2, 3, 17):
        perm = derangement(n, gen)
        assert sorted(perm.tolist()) == list(range(n))
        assert not (perm == torch.arange(n)).any()
    with pytest.raises(SentprobeError, match="at least 2"):
        derangement(1, gen)


def test_early_stopping_after_two_stale_epochs() -> None:
    stop = EarlyStopping(patience=2)  # lower is better (MSE)
    history = []
    for epoch, value in enumerate([0.9, 0.5, 0.6, 0.5, 0.4], start=1):
        history.append((stop.update(epoch, value), stop.should_stop))
        if stop.should_stop:
            break
    assert history == [(True, False), (True, False), (False, False), (False, True)]
    assert stop.best_epoch_ == 2 and stop.best_ == 0.5  # equal is not better
    higher = EarlyStopping(patience=2, higher_is_better=True)
    assert higher.update(1, 0.5) and higher.update(2, 0.6) and not higher.update(3, 0.6)
    restored = EarlyStopping(2).restore(stop.state())
    assert (restored.best_, restored.best_epoch_, restored.stale_) == (0.5, 2, 2)


def test_retrieval_accuracy() -> None:
    teacher = np.eye(3)
    assert retrieval_accuracy(teacher * 2, teacher) == 1.0
    assert retrieval_accuracy(teacher[[1, 0, 2]], teacher) == pytest.approx(1 / 3)


WORDS = [
    "chat",
    "chien",
    "maison",
    "rouge",
    "bleu",
    "grand",
    "petit",
    "voit",
    "mange",
    "dort",
    "le",
    "la",
    "un",
    "une",
    "et",
]


def bag_teacher(sentences: list[str]) -> np.ndarray:
    """A deterministic 'English' encoder: each word adds a fixed random vector."""
    out = np.zeros((len(sentences), 8), dtype=np.float32)
    for i, s in enumerate(sentences):
        for w in s.lower().split():
            seed = int.from_bytes(hashlib.md5(w.encode()).digest()[:4], "little")
            out[i] += np.random.default_rng(seed).normal(size=8)
    return out


def corpus(n: int = 60) -> ParallelCorpus:
    rng = np.random.default_rng(0)
    c = ParallelCorpus()
    for i in range(n):
        words = list(rng.choice(WORDS, size=int(rng.integers(3, 7))))
        c.add(" ".join(words), " ".join(words), str(i))  # target = source: a learnable map
    return c


CONFIG = StudentConfig(emb_dim=8, valid_size=12, batch_size=8, epochs=2, lr=1e-2)


def train(tmp_path: Path, config: StudentConfig = CONFIG, **kw):
    teacher = CallableEncoder(bag_teacher, name="Bag", fingerprint="bag-v1")
    logs: list[str] = []
    manifest = train_student(
        tmp_path / "run", teacher, "bag.py", corpus(), "fr", config,
        EmbeddingCache(tmp_path / "cache"), progress=False, log=logs.append, threads=1, **kw,
    )  # fmt: skip
    return manifest, logs


def test_student_trains_checkpoints_and_probes_as_an_encoder(tmp_path: Path) -> None:
    manifest, logs = train(tmp_path)
    assert [e["epoch"] for e in manifest["epochs"]] == [1, 2]
    assert (tmp_path / "run" / "epoch-2" / "encoder.safetensors").is_file()
    assert manifest["name"] == "Bag->fr" and manifest["encoder"]["dim"] == 4  # 2 x 4 = 8
    first, second = manifest["epochs"]
    assert second["valid_mse"] < first["valid_mse"]
    assert {"train_loss", "valid_mse", "valid_retrieval", "seconds"} <= set(first)
    encoder = TrainedRunEncoder(str(tmp_path / "run"))
    vectors = encoder.encode(["le chat dort", "une maison"])
    assert vectors.shape == (2, 8) and encoder.name == "Bag->fr@epoch-2"


def test_resume_continues_after_the_last_epoch(tmp_path: Path) -> None:
    train(tmp_path)
    weights = tmp_path / "run" / "epoch-1" / "encoder.safetensors"
    before = weights.stat().st_mtime_ns
    from dataclasses import replace

    manifest, logs = train(tmp_path, replace(CONFIG, epochs=3))
    assert logs[0].endswith("resuming after epoch 2")
    assert [e["epoch"] for e in manifest["epochs"]] == [1, 2, 3]
    assert weights.stat().st_mtime_ns == before  # finished epochs are not redone
    assert sum(line.startswith("epoch ") for line in logs) == 1
    with pytest.raises(SentprobeError, match=r"other settings \(lr\)"):
        train(tmp_path, replace(CONFIG, epochs=4, lr=0.5))


def test_training_stops_after_two_epochs_without_improvement(tmp_path: Path) -> None:
    from dataclasses import replace

    calls = []

    def flat_task(encode) -> float:  # a downstream score that never improves
        calls.append(encode(["le chat"]).shape)
        return 0.5

    config = replace(CONFIG, epochs=10, monitor="task")
    manifest, logs = train(tmp_path, config, validate=flat_task)
    assert [e["epoch"] for e in manifest["epochs"]] == [1, 2, 3]
    assert manifest["mapping"]["stopped"]["epoch"] == 3
    assert manifest["mapping"]["best_epoch"] == 1 and calls == [(1, 8)] * 3
    again, logs = train(tmp_path, config, validate=flat_task)
    assert "already finished" in logs[0] and len(again["epochs"]) == 3
    assert read_manifest(tmp_path / "run")["epochs"][-1]["valid_task"] == 0.5


def test_bad_settings(tmp_path: Path) -> None:
    from dataclasses import replace

    with pytest.raises(SentprobeError, match="no minimum"):
        train(tmp_path, replace(CONFIG, lam=0.5))
    with pytest.raises(SentprobeError, match="too few"):
        train(tmp_path, replace(CONFIG, valid_size=100))
    with pytest.raises(SentprobeError, match="does not output the teacher's 8"):
        train(tmp_path, replace(CONFIG, dim=5))
