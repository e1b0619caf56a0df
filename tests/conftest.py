"""Shared fixtures. Tests never touch the user's cache: everything goes to tmp_path."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
if os.environ.get("PYTEST_XDIST_WORKER_COUNT", "").isdigit():
    # Each xdist worker (and the CLI processes it starts) computes with its share of the cores:
    # two workers each running torch on every core spend their time waiting for each other
    # (a small L-BFGS probe fit took 29 s instead of 1.3 s).
    from sentprobe.parallel import THREADS_VARIABLE, available_cores

    _share = available_cores() // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])
    os.environ.setdefault(THREADS_VARIABLE, str(max(1, _share)))

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` beside the repository; tests that need it skip without it."""
    data = SHARED / "data"
    if not data.is_dir():
        pytest.skip("../shared/data is not available")
    return data


@pytest.fixture
def ewt_subset(shared_data: Path):
    """``make(dest, n)``: the first ``n`` sentences of gold UD English-EWT as CoNLL-U at
    ``dest`` (skips without ``../shared/data``)."""

    def make(dest: Path, n: int = 6000) -> Path:
        src = shared_data / "ud" / "en_ewt" / "en_ewt-ud-all.conllu.gz"
        blocks, block = [], []
        with gzip.open(src, "rt", encoding="utf-8") as fh:
            for line in fh:
                block.append(line)
                if not line.strip():
                    blocks.append("".join(block))
                    block = []
                    if len(blocks) == n:
                        break
        dest.write_text("".join(blocks), encoding="utf-8")
        return dest

    return make


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SENTPROBE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SENTPROBE_KEY_FILE", str(tmp_path / "head-signing.key"))
    from sentprobe.encoders import filehash

    monkeypatch.setattr(filehash, "_cache_root", [])  # no cache opened yet in this test


@pytest.fixture(scope="session")
def make_record():
    """A factory of results-store records with plain defaults, so a test names only what it
    varies: ``make_record("enc", "SentLen", 0.7, language="fr")``."""
    from sentprobe.evaluation.store import ResultRecord

    def make(encoder: str, task: str, score: float, **fields):
        values = {
            "encoder": encoder,
            "encoder_fingerprint": f"fp:{encoder}",
            "task": task,
            "task_source": "synthetic",
            "task_hash": f"hash-{task.split('~')[0]}",
            "category": "other",
            "language": "en",
            "seed": 0,
            "probe": "logreg",
            "selection": "dev",
            "config": {},
            "dev_score": score,
            "test_score": score,
            "n_train": 100,
            "n_dev": 20,
            "n_test": 20,
            "n_classes": 2,
            "dim": 8,
        }
        return ResultRecord(**{**values, **fields})

    return make
