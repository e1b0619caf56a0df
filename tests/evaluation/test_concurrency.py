"""Two real ``sentprobe run`` processes on one results store and one embedding cache.

They overlap on an encoder and a task (and run at the same time: each encoder sleeps per
batch and the cache flushes every few batches, so their shard writes and result commits
interleave). Both must finish, the store must hold every unit of both runs exactly once with
the same result a lone run gives, and every cached vector must be intact and right.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np

from sentprobe.encoders import get_encoder
from sentprobe.encoders.cache import EmbeddingCache
from sentprobe.encoders.shards import _read_header, _read_vectors
from sentprobe.evaluation.runner import run

ENCODERS = """
import os, time
import numpy as np


def _bag(sentences, salt):
    time.sleep(float(os.environ.get("ENCODE_SLEEP", "0")))
    out = np.zeros((len(sentences), 12), dtype=np.float32)
    for i, s in enumerate(sentences):
        for tok in s.split():
            out[i, (sum(map(ord, tok)) + salt) % 12] += 1
    return out


def one(sentences):
    return _bag(sentences, 0)


def two(sentences):
    return _bag(sentences, 5)


def three(sentences):
    return _bag(sentences, 7)
"""


# Both start with encoder "two" on t2: they encode the same sentences at the same time.
A_ENCODERS, A_TASKS = ["two", "one"], ["t2.txt", "t1.txt"]
B_ENCODERS, B_TASKS = ["two", "three"], ["t2.txt", "t3.txt"]


def _task(name: str, n: int) -> str:
    """A SentEval-format task whose label is whether the sentence holds the word 'red'."""
    lines = []
    for split, count in (("tr", n), ("va", n // 4), ("te", n // 4)):
        for i in range(count):
            colour = "red" if i % 2 else "blue"
            lines.append(
                f"{split}\t{colour}\t{name} {split} item {i} is {colour} {'z' * (1 + i % 7)}"
            )
    return "\n".join(lines) + "\n"


def _args(encoders: list[str], tasks: list[str]) -> list[str]:
    args = [sys.executable, "-m", "sentprobe", "run", "-t", ",".join(tasks), "-q",
            "--baselines", "majority", "--batch-size", "16", "--results", "r.sqlite",
            "--cache-dir", "cache"]  # fmt: skip
    for enc in encoders:
        args += ["-e", f"enc.py:{enc}"]
    return args


def _units(path: Path) -> dict[str, tuple[str, str, float]]:
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    rows = con.execute("SELECT key, encoder, task, test_score FROM results").fetchall()
    con.close()
    assert len(rows) == len({r[0] for r in rows})
    return {key: (enc, task, score) for key, enc, task, score in rows}


def test_two_runs_share_a_store_and_a_cache(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "enc.py").write_text(ENCODERS)
    for name in ("t1", "t2", "t3"):
        (tmp_path / f"{name}.txt").write_text(_task(name, 120))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "ENCODE_SLEEP": "0.03",
           "SENTPROBE_CACHE_FLUSH_SECONDS": "0.05", "PYTHONPATH": str(tmp_path)}  # fmt: skip
    a = _args(A_ENCODERS, A_TASKS)
    b = _args(B_ENCODERS, B_TASKS)
    procs = [
        subprocess.Popen(
            args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )  # fmt: skip
        for args in (a, b)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert "Traceback" not in err

    shared = _units(tmp_path / "r.sqlite")
    # The same two grids run alone, in this process, into fresh stores and caches.
    monkeypatch.setenv("ENCODE_SLEEP", "0")
    alone: dict[str, tuple[str, str, float]] = {}
    for i, (encoders, tasks) in enumerate(((A_ENCODERS, A_TASKS), (B_ENCODERS, B_TASKS))):
        run(
            [str(tmp_path / f"enc.py:{e}") for e in encoders],
            [str(tmp_path / t) for t in tasks],
            baselines="majority",
            results=tmp_path / f"alone{i}.sqlite",
            cache_dir=tmp_path / f"cache{i}",
            encoder_options={"batch_size": 16},
            progress=False,
        )
        alone |= _units(tmp_path / f"alone{i}.sqlite")
    # 3 encoders + majority on their tasks: (2+1) x 2 for a, (2+1) x 2 for b, minus the shared
    # (two, t2) and (majority, t2) units.
    assert len(alone) == 3 * 2 + 3 * 2 - 2
    assert shared == alone  # nothing lost, nothing extra, the same scores

    # Every shard is complete and its checksums hold; the cached vectors are the encoder's.
    shards = list((tmp_path / "cache").glob("*/*.shard"))
    assert len(shards) > 6  # many small flushes, from both processes
    assert not list((tmp_path / "cache").rglob("*.damaged"))
    for path in shards:
        shard, _ = _read_header(path)
        _read_vectors(shard)
    sys.path.insert(0, str(tmp_path))
    try:
        from enc import one, three, two  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    cache = EmbeddingCache(tmp_path / "cache")
    for name, fn, tasks in (("one", one, "12"), ("two", two, "123"), ("three", three, "23")):
        sentences = [
            line.split("\t")[2]
            for t in tasks
            for line in (tmp_path / f"t{t}.txt").read_text().splitlines()
        ]
        encoder = get_encoder(str(tmp_path / f"enc.py:{name}"), batch_size=16)
        got = cache.encode(encoder, sentences, progress=False)
        assert cache.last_encoded == 0  # all of it was cached by the two runs
        np.testing.assert_array_equal(got, fn(sentences))
