"""Issue 46: a task is (resolved source, language, content). Two X-Probe folders ``a/de`` and
``b/de`` with different files are two cells; ``-t x/past_present.txt`` typed in two working
folders on two different files is two tasks; one content under two paths is one task; the
stored source is the resolved path; MTEB's names of path tasks agree between
``to_mteb_tasks`` and the export."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from sentprobe.datasets.builtin import resolve_tasks
from sentprobe.datasets.identity import mteb_name, mteb_name_of
from sentprobe.evaluation.identity import resolve, task_names
from sentprobe.evaluation.runner import run
from sentprobe.evaluation.store import ResultsStore
from sentprobe.reporting.tables import results_table


def encode(sentences):
    rows = []
    for s in sentences:
        seed = int(hashlib.sha1(s.encode()).hexdigest()[:8], 16)
        rows.append(np.random.default_rng(seed).normal(size=8) + [len(s.split())] * 8)
    return np.array(rows, dtype=np.float32)


def _lines(seed: int, n: int, xprobe: bool) -> str:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        label = ["PAST", "PRES"][int(rng.integers(2))]
        words = " ".join(f"w{int(rng.integers(50))}" for _ in range(1 + int(rng.integers(8))))
        sentence = f"{words} {label.lower() if rng.random() < 0.7 else 'x'} {seed} {i}"
        out.append(f"{sentence}\t{label}" if xprobe else sentence)
    return "\n".join(out) + "\n"


def xprobe_task(root: Path, seed: int) -> Path:
    folder = root / "de" / "past_present"
    folder.mkdir(parents=True)
    for name, n in (("tr", 80), ("va", 30), ("te", 40)):
        (folder / f"{name}.txt").write_text(_lines(seed * 10 + len(name) + n, n, True))
    return root


def senteval_task(path: Path, seed: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    lines = []
    for split, n in (("tr", 80), ("va", 30), ("te", 40)):
        for i in range(n):
            label = ["PAST", "PRES"][int(rng.integers(2))]
            lines.append(f"{split}\t{label}\tw{int(rng.integers(40))} {label.lower()} {i} {seed}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _probe(tasks, store: Path) -> None:
    run([encode], tasks, baselines="none", results=store, progress=False)


def _cells(store: Path) -> dict[str, float]:
    with ResultsStore(store, readonly=True) as s:
        frame = resolve(s.to_frame())
    return dict(zip(task_names(frame), frame["test_score"], strict=True))


def test_two_xprobe_folders_of_one_language_are_two_cells(tmp_path):
    a, b = xprobe_task(tmp_path / "a", 1), xprobe_task(tmp_path / "b", 2)
    alone = {}
    for root in (a, b):
        _probe(str(root), tmp_path / f"{root.name}.sqlite")
        (alone[root.name],) = _cells(tmp_path / f"{root.name}.sqlite").values()
        _probe(str(root), tmp_path / "both.sqlite")
    assert alone["a"] != alone["b"]
    both = _cells(tmp_path / "both.sqlite")
    assert both == {
        "Tense [a/de/past_present]": alone["a"],
        "Tense [b/de/past_present]": alone["b"],
    }
    with ResultsStore(tmp_path / "both.sqlite", readonly=True) as s:
        sources = set(s.to_frame()["task_source"])
    assert sources == {str((r / "de" / "past_present").resolve()) for r in (a, b)}
    rows = json.loads(results_table(_frame(tmp_path / "both.sqlite"), fmt="json"))
    (row,) = rows
    assert row["Tense [a/de/past_present]"] == pytest.approx(100 * alone["a"])
    assert row["Tense [b/de/past_present]"] == pytest.approx(100 * alone["b"])


def _frame(store: Path):
    with ResultsStore(store, readonly=True) as s:
        return s.to_frame()


def test_one_relative_path_in_two_working_folders_is_two_tasks(tmp_path, monkeypatch):
    store = tmp_path / "r.sqlite"
    for seed, folder in ((3, "w1"), (4, "w2")):
        senteval_task(tmp_path / folder / "x" / "past_present.txt", seed)
        monkeypatch.chdir(tmp_path / folder)
        _probe("x/past_present.txt", store)
    cells = _cells(store)
    assert sorted(cells) == ["Tense [w1/x/past_present.txt]", "Tense [w2/x/past_present.txt]"]
    assert len(set(cells.values())) == 2


def test_one_content_under_two_paths_is_one_task(tmp_path):
    first = senteval_task(tmp_path / "p" / "past_present.txt", 5)
    second = tmp_path / "q" / "past_present.txt"
    second.parent.mkdir()
    shutil.copy(first, second)
    store = tmp_path / "r.sqlite"
    _probe(str(first), store)
    _probe(str(second), store)
    cells = _cells(store)
    assert list(cells) == ["Tense"]


@pytest.mark.parametrize("relative", [True, False])
def test_mteb_names_of_path_tasks_agree(tmp_path, monkeypatch, relative):
    pytest.importorskip("mteb")
    from sentprobe.datasets.mteb_tasks import to_mteb_tasks
    from sentprobe.reporting.mteb import write_mteb_results

    monkeypatch.chdir(tmp_path)
    path = senteval_task(tmp_path / "tA" / "x" / "past_present.txt", 6)
    spec = "tA/x/past_present.txt" if relative else str(path)
    store = tmp_path / "r.sqlite"
    _probe(spec, store)
    (mteb_task,) = to_mteb_tasks(spec)
    (task,) = resolve_tasks(spec)
    assert mteb_task.metadata.name == mteb_name_of(task)
    files = write_mteb_results(_frame(store), tmp_path / "out")
    (doc,) = [json.loads(f.read_text()) for f in files if f.name != "model_meta.json"]
    assert doc["task_name"] == mteb_task.metadata.name
    assert mteb_task.metadata.name == mteb_name("Tense", "en", str(path.resolve()))
