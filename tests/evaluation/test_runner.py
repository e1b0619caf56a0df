"""The runner: rows x tasks x seeds stored once; reruns skip finished units and encode nothing."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from sentprobe.datasets import make_mock_task
from sentprobe.encoders.base import Encoder
from sentprobe.encoders.custom import SentEvalEncoder
from sentprobe.errors import SentprobeError
from sentprobe.evaluation import runner as runner_module
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


def test_tasks_with_the_same_data_but_other_names_are_separate_units(tmp_path):
    same = [make_mock_task("A", seed=1), make_mock_task("B", seed=1)]
    assert same[0].content_hash() == same[1].content_hash()
    frame = run(
        [CountingEncoder()],
        same,
        results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "cache",
        progress=False,
        baselines="majority",
    )
    assert sorted(zip(frame["encoder"], frame["task"])) == [
        ("Counting", "A"),
        ("Counting", "B"),
        ("Majority", "A"),
        ("Majority", "B"),
    ]
    assert frame["key"].nunique() == 4


def _counting_run(tmp_path, tasks, baselines: str):
    return run(
        [CountingEncoder()],
        tasks,
        results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "c",
        progress=False,
        baselines=baselines,
    )


def test_results_are_sensible(tmp_path, tasks):
    frame = _counting_run(tmp_path, tasks, "majority,length")
    by = {(r.encoder, r.task): r for r in frame.itertuples()}
    assert by[("Majority", "A")].test_score == pytest.approx(0.5)
    train_b, test_b = tasks[1].splits["train"].labels, tasks[1].splits["test"].labels
    majority = max(sorted(set(train_b)), key=train_b.count)
    assert by[("Majority", "B")].test_score == pytest.approx(test_b.count(majority) / len(test_b))
    assert by[("Counting", "A")].test_score > 0.8
    assert by[("Counting", "A")].selection == "dev"
    assert by[("Counting", "C")].selection.startswith("cv")
    assert by[("Counting", "A")].n_train == 200 and by[("Counting", "A")].dim == 32


def test_every_unit_stores_its_test_predictions(tmp_path, tasks):
    """Encoders and text baselines alike: gold labels in test order, the score their mean."""
    frame = _counting_run(tmp_path, tasks, "majority,nb-uni")
    with ResultsStore(tmp_path / "r.sqlite", readonly=True) as store:
        for row in frame.itertuples():
            predictions = store.predictions(row.key)
            test = next(t for t in tasks if t.name == row.task).splits["test"]
            assert predictions.gold_labels().tolist() == test.labels
            assert predictions.accuracy == pytest.approx(row.test_score)
            assert predictions.groups is None


def test_seeds_and_views_are_separate_units(tmp_path, tasks):
    enc = CountingEncoder(views=["layer0", "layer1"])
    frame = run(
        [enc],
        tasks[2:],  # no dev split: the CV folds depend on the seed
        results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "c",
        progress=False,
        baselines="none",
        seeds=3,
    )
    assert sorted(frame["encoder"].unique()) == ["Counting@layer0", "Counting@layer1"]
    assert sorted(frame["seed"].unique()) == [0, 1, 2]
    assert len(frame) == 6
    assert all(extra["seeded"] for extra in frame["extra"])


def test_seeds_reach_the_probe_and_deterministic_units_run_once(tmp_path, tasks, monkeypatch):
    """A deterministic unit (Majority, NB, logreg on a dev split) is computed for seed 0 only
    and marked unseeded; a seeded one (logreg chosen by CV folds) gets every seed."""
    seen = []
    real = runner_module.make_probe

    def spy(name, task, seed=0):
        seen.append((task, seed))
        return real(name, task, seed)

    monkeypatch.setattr(runner_module, "make_probe", spy)
    kw = dict(
        results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "c",
        progress=False,
        baselines="majority,nb-uni",
        seeds=3,
    )
    frame = run([CountingEncoder()], [tasks[0], tasks[2]], **kw)
    assert {(t, s) for t, s in seen if t != "check"} == {(t, s) for t in "AC" for s in range(3)}
    units = {(r.encoder, r.task, r.seed): r.extra["seeded"] for r in frame.itertuples()}
    assert units == {
        ("Majority", "A", 0): False,
        ("Majority", "C", 0): False,
        ("NB-uni-tfidf", "A", 0): False,
        ("NB-uni-tfidf", "C", 0): False,
        ("Counting", "A", 0): False,  # dev split: L-BFGS from zero, nothing random
        ("Counting", "C", 0): True,  # CV folds are drawn with the seed
        ("Counting", "C", 1): True,
        ("Counting", "C", 2): True,
    }
    again = run([CountingEncoder()], [tasks[0], tasks[2]], **kw)  # rerun: nothing new, all shown
    assert sorted(again["key"]) == sorted(frame["key"])
    assert sorted(again["created"]) == sorted(frame["created"])


class SeededEncoder(CountingEncoder):
    """Random projection of the counts: the seed changes the vectors, as for untrained nets."""

    uses_seed = True

    def __init__(self, seed: int = 7) -> None:
        super().__init__()
        self.seed = seed

    @property
    def fingerprint(self) -> str:
        return f"seeded-v1|seed={self.seed}"

    def with_seed(self, seed: int) -> SeededEncoder:
        return self if seed == 0 else SeededEncoder(self.seed + seed)

    def encode(self, sentences):
        rng = np.random.default_rng(self.seed)
        return super().encode(sentences) @ rng.normal(size=(32, 16)).astype(np.float32)


def test_seeded_encoders_are_drawn_anew_for_each_seed(tmp_path, tasks):
    frame = run(
        [SeededEncoder()],
        tasks[:1],
        results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "c",
        progress=False,
        baselines="none",
        seeds=3,
    )
    assert sorted(frame["seed"]) == [0, 1, 2]  # logreg on dev is deterministic, the encoder not
    assert set(frame["encoder"]) == {"Counting"}  # one row of the table, mean ± std
    assert sorted(frame["encoder_fingerprint"]) == [f"seeded-v1|seed={s}" for s in (7, 8, 9)]
    assert all(extra["seeded"] for extra in frame["extra"])


def test_untrained_encoders_vary_with_the_seed(tmp_path):
    from sentprobe.encoders.untrained import BiLSTMEncoder, GatedConvEncoder

    words = ["the", "cat", "sat", "on", "mat", "."]
    rng = np.random.default_rng(0)
    path = tmp_path / "tiny.txt"
    path.write_text("".join(w + " " + " ".join(map(str, rng.normal(size=8))) + "\n" for w in words))
    for cls in (BiLSTMEncoder, GatedConvEncoder):
        enc = cls(vectors=path, seed=5)
        assert enc.uses_seed and enc.with_seed(0) is enc
        other = enc.with_seed(2)
        assert other.seed == 7 and other.fingerprint != enc.fingerprint
        assert enc.seed == 5  # the original is untouched
        a, b = enc.encode(["the cat sat ."]), other.encode(["the cat sat ."])
        assert not np.allclose(a, b)
        assert np.allclose(cls(vectors=path, seed=7).encode(["the cat sat ."]), b)


def test_a_new_probe_version_recomputes_its_units(tmp_path, tasks, monkeypatch):
    from sentprobe.probes import LogisticProbe, MajorityProbe

    kw = dict(
        results=tmp_path / "r.sqlite",
        cache_dir=tmp_path / "c",
        progress=False,
        baselines="majority,nb-uni",
    )
    first = run([CountingEncoder()], tasks[:1], **kw)
    monkeypatch.setattr(LogisticProbe, "version", LogisticProbe.version + "-changed")
    monkeypatch.setattr(MajorityProbe, "version", MajorityProbe.version + "-changed")
    enc = CountingEncoder()
    second = run([enc], tasks[:1], **kw)
    assert enc.encoded == 0  # the vectors are still good
    old, new = (dict(zip(f["encoder"], f["key"], strict=True)) for f in (first, second))
    assert old["NB-uni-tfidf"] == new["NB-uni-tfidf"]  # unchanged probe: reused
    assert old["Counting"] != new["Counting"] and old["Majority"] != new["Majority"]
    assert new["Counting"] not in set(first["key"])
    by = {r.encoder: r for r in second.itertuples()}
    assert by["Counting"].extra["probe_version"] == LogisticProbe.version
    with ResultsStore(tmp_path / "r.sqlite") as store:
        assert len(store) == 5


def _write_senteval(path, rows):
    path.write_text("".join(f"{split}\t{label}\t{sent}\n" for split, label, sent in rows))


def test_a_changed_task_file_is_recomputed(tmp_path):
    """Editing a task file gives new units (and new results); an untouched file is reused."""
    rows = [
        (split, label, f"{word} sentence number {i} {split}")
        for split, n in (("tr", 40), ("va", 10), ("te", 10))
        for i in range(n)
        for label, word in [("x", "alpha") if i % 2 else ("y", "beta")]
    ]
    data = tmp_path / "data"
    data.mkdir()
    _write_senteval(data / "one.txt", rows)
    _write_senteval(data / "two.txt", [(sp, lab, f"{t} again") for sp, lab, t in rows])
    kw = dict(
        results=tmp_path / "r.sqlite", cache_dir=tmp_path / "c", progress=False, baselines="none"
    )
    paths = f"{data / 'one.txt'},{data / 'two.txt'}"
    first = run([CountingEncoder()], paths, **kw)
    assert len(first) == 2
    changed = [(s, "x" if (lab == "y" and s == "te") else lab, t) for s, lab, t in rows]
    _write_senteval(data / "one.txt", changed)
    enc = CountingEncoder()
    second = run([enc], paths, **kw)
    old, new = (dict(zip(f["task"], f["key"], strict=True)) for f in (first, second))
    assert old["two"] == new["two"]
    assert old["one"] != new["one"]
    by = {r.task: r for r in second.itertuples()}
    assert by["one"].test_score < 0.9 < by["two"].test_score  # scored on the new labels
    assert by["one"].task_hash != first.set_index("task").loc["one", "task_hash"]
    assert enc.encoded == 0  # same sentences: the cache still serves them


def test_senteval_prepare_sees_each_task_and_keeps_states_apart(tmp_path, tasks):
    """SentEval calls prepare per task with train + dev + test; a vocabulary built on one task
    must not label vectors encoded for another."""
    prepared = []

    def prepare(params, samples):
        prepared.append([" ".join(s) for s in samples])
        params.vocab = {w: i for i, w in enumerate(sorted({w for s in samples for w in s}))}

    def batcher(params, batch):
        out = np.zeros((len(batch), 8), dtype=np.float32)
        for row, words in enumerate(batch):
            for w in words:
                out[row, params.vocab[w] % 8] += 1  # KeyError if the vocabulary is another's
        return out

    kw = dict(
        results=tmp_path / "r.sqlite", cache_dir=tmp_path / "c", progress=False, baselines="none"
    )
    frame = run([SentEvalEncoder(prepare, batcher, name="senteval")], tasks[:2], **kw)
    assert prepared == [tasks[0].sentences(), tasks[1].sentences()]
    fingerprints = dict(zip(frame["task"], frame["encoder_fingerprint"], strict=True))
    assert fingerprints["A"] != fingerprints["B"]
    prepared.clear()
    again = run([SentEvalEncoder(prepare, batcher, name="senteval")], tasks[:2], **kw)
    assert prepared == []  # all cached: prepare is not even called
    assert sorted(again["key"]) == sorted(frame["key"])


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
