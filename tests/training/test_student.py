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
    assert manifest["name"] == "Bag->fr/bilstm-max/run"
    assert manifest["encoder"]["dim"] == 4  # 2 x 4 = 8
    first, second = manifest["epochs"]
    assert second["valid_mse"] < first["valid_mse"]
    assert {"train_loss", "valid_mse", "valid_retrieval", "seconds"} <= set(first)
    encoder = TrainedRunEncoder(str(tmp_path / "run"))
    vectors = encoder.encode(["le chat dort", "une maison"])
    assert vectors.shape == (2, 8) and encoder.name == "Bag->fr/bilstm-max/run@epoch-2"


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
    assert manifest["best_epoch"] == 1  # and runs/NAME@best probes it
    assert TrainedRunEncoder(f"{tmp_path / 'run'}@best").name.endswith("/run@epoch-1")
    again, logs = train(tmp_path, config, validate=flat_task)
    assert "already finished" in logs[0] and len(again["epochs"]) == 3
    assert read_manifest(tmp_path / "run")["epochs"][-1]["valid_task"] == 0.5


def test_bad_settings(tmp_path: Path) -> None:
    from dataclasses import replace

    with pytest.raises(SentprobeError, match="no minimum"):
        train(tmp_path, replace(CONFIG, lam=0.51))
    with pytest.raises(SentprobeError, match="too few"):
        train(tmp_path, replace(CONFIG, valid_size=100))
    with pytest.raises(SentprobeError, match="does not output the teacher's 8"):
        train(tmp_path, replace(CONFIG, dim=5))


def _tiny_vec(path: Path) -> Path:
    rng = np.random.default_rng(3)
    lines = [f"{len(WORDS)} 6"]
    lines += [w + " " + " ".join(f"{v:.4f}" for v in rng.normal(size=6)) for w in WORDS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("with_vectors", [False, True])
def test_interrupted_run_ends_with_the_weights_of_an_uninterrupted_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_vectors: bool
) -> None:
    """2 epochs, stopped after 1 and rerun, equals 2 epochs straight: frozen vectors stay
    frozen (same trainable parameters, so the optimiser state loads) and dropout draws the
    same masks (the torch RNG state is restored)."""
    from dataclasses import replace

    from safetensors.torch import load_file

    monkeypatch.chdir(tmp_path)
    _tiny_vec(tmp_path / "fr.vec")
    config = replace(CONFIG, layers=2, dropout=0.3, vectors="fr.vec" if with_vectors else None)
    straight = tmp_path / "straight"
    straight.mkdir()
    train(straight, config)
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    train(resumed, replace(config, epochs=1))
    _, logs = train(resumed, config)
    assert logs[0].endswith("resuming after epoch 1")
    a = load_file(str(straight / "run" / "epoch-2" / "encoder.safetensors"))
    b = load_file(str(resumed / "run" / "epoch-2" / "encoder.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    if with_vectors:  # the input table is the word vectors, untouched by training
        first = load_file(str(straight / "run" / "epoch-1" / "encoder.safetensors"))
        assert torch.equal(a["embedding.weight"], first["embedding.weight"])


def test_vectors_path_is_stored_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    monkeypatch.chdir(tmp_path)
    _tiny_vec(tmp_path / "fr.vec")
    manifest, _ = train(tmp_path, replace(CONFIG, epochs=1, vectors="fr.vec"))
    assert manifest["vectors"]["spec"] == str(tmp_path / "fr.vec")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # probing from another directory finds the vectors
    vectors = TrainedRunEncoder(str(tmp_path / "run")).encode(["le chat dort", "zzz"])
    assert vectors.shape == (2, 8)
    # and resuming from there with the file named another way is the same run
    _, logs = train(tmp_path, replace(CONFIG, epochs=2, vectors="../fr.vec"))
    assert logs[0].endswith("resuming after epoch 1")


def test_students_of_one_teacher_and_language_get_distinct_rows(tmp_path: Path) -> None:
    from dataclasses import replace

    from sentprobe.reporting.crosslang import reference_encoder

    names = []
    for arch in ("bilstm-max", "cnn-max"):
        out = tmp_path / arch
        out.mkdir()
        config = replace(CONFIG, epochs=1, arch=arch, dim=8 if arch == "cnn-max" else None)
        names.append(train(out, config)[0]["name"])
        names[-1] = TrainedRunEncoder(str(out / "run")).name
    # same teacher, language and run-directory name, other architectures: still two rows
    assert len(set(names)) == 2, names
    assert {reference_encoder(n, "fr") for n in names} == {"Bag"}  # both compared with Bag


def test_report_curves_draws_a_student_run(tmp_path: Path) -> None:
    import pandas as pd

    from sentprobe.reporting.curves import curves_from_runs

    manifest, _ = train(tmp_path)
    rows = [
        {"encoder": f"{manifest['name']}@epoch-{e}", "task": "t", "test_score": 0.5 + e / 10}
        for e in (1, 2)
    ]
    out = curves_from_runs(pd.DataFrame(rows), tmp_path / "run", tmp_path / "curves.png")
    assert out.stat().st_size > 0


def test_lambda_one_half_is_bounded_by_the_triangle_inequality() -> None:
    """At λ = 0.5 no student beats the bound set by the teacher vectors, and x = y reaches
    it; above 0.5 scaling the student up lowers the loss without limit."""
    gen = torch.Generator().manual_seed(0)
    y = torch.randn(16, 5, generator=gen)
    pi, sigma = derangement(16, gen), derangement(16, gen)
    spread = (torch.linalg.vector_norm(y[pi] - y, dim=1).mean()
              + torch.linalg.vector_norm(y - y[sigma], dim=1).mean())  # fmt: skip
    bound = -0.5 * spread.item()
    at_y = alignment_loss(y, y, y[pi], y[sigma], 0.5).item()
    assert at_y == pytest.approx(bound)
    for scale in (1.0, 10.0, 1000.0):
        x = scale * torch.randn(16, 5, generator=gen)
        assert alignment_loss(x, y, x[pi], y[sigma], 0.5).item() >= bound - 1e-4
    x = torch.randn(16, 5, generator=gen)
    losses = [alignment_loss(s * x, y, s * x[pi], y[sigma], 0.6).item() for s in (1, 10, 100)]
    assert losses[0] > losses[1] > losses[2] and losses[2] < 10 * bound
    StudentConfig(lam=0.5).check()  # accepted
    with pytest.raises(SentprobeError, match="above 0.5"):
        StudentConfig(lam=0.500001).check()


def test_cuda_random_states_are_saved_and_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    """The code path a GPU run takes, on CPU: each GPU's generator state goes into the saved
    state (as tensors, which weights_only loading accepts) and comes back on resume."""
    import io

    from sentprobe.training import randomness

    saved = [torch.tensor([1, 2, 3], dtype=torch.uint8), torch.tensor([4], dtype=torch.uint8)]
    restored: list[tuple[list[int], int]] = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", lambda: saved)
    monkeypatch.setattr(
        torch.cuda, "set_rng_state", lambda s, device: restored.append((s.tolist(), device))
    )
    state = randomness.rng_states()
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    state = torch.load(buffer, weights_only=True)
    randomness.restore_rng_states(state)
    assert restored == [([1, 2, 3], 0), ([4], 1)]
    assert torch.equal(state["torch_rng"], torch.get_rng_state())


def test_teacher_reads_the_source_side_the_way_it_tokenises(tmp_path: Path) -> None:
    """A whitespace teacher (a sentprobe-trained run) gets Moses tokens, so "clarity." does
    not become an unknown word; a model with its own tokenizer gets the text as written."""
    seen: dict[str, list[str]] = {"raw": [], "tokens": []}

    def recorder(kind: str):
        def encode(sentences: list[str]) -> np.ndarray:
            seen[kind].extend(sentences)
            return bag_teacher(sentences)

        return encode

    pairs = ParallelCorpus()
    for i in range(30):
        pairs.add(f"The cat's {WORDS[i % 15]}, for clarity.", f"Le chat {i}, pour la clarté.", "")
    config = replace_config(epochs=1)
    for kind, tokenised in (("raw", False), ("tokens", True)):
        teacher = CallableEncoder(recorder(kind), name=kind, fingerprint=f"{kind}-v1")
        teacher.tokenized_input = tokenised  # type: ignore[attr-defined]
        train_student(
            tmp_path / kind, teacher, kind, pairs, "fr", config,
            EmbeddingCache(tmp_path / f"cache-{kind}"), progress=False, log=lambda _: None,
            threads=1,
        )  # fmt: skip
    assert "The cat's chat, for clarity." in seen["raw"]
    assert "The cat 's chat , for clarity ." in seen["tokens"]
    from sentprobe.training.student import teacher_reads_tokens

    (tmp_path / "trained").mkdir()
    train(tmp_path / "trained", config)
    assert teacher_reads_tokens(TrainedRunEncoder(str(tmp_path / "trained" / "run")))
    assert not teacher_reads_tokens(CallableEncoder(bag_teacher, name="b", fingerprint="b"))


def replace_config(**kw) -> StudentConfig:
    from dataclasses import replace

    return replace(CONFIG, **kw)


def test_name_gives_seed_replicates_rows_of_their_own(tmp_path: Path) -> None:
    """Students ``s0/run`` and ``s1/run`` share teacher, language, architecture and folder
    name; ``name`` (``map-encoder --name``) keeps them apart in a results table."""
    from dataclasses import replace

    names = []
    for seed in (0, 1):
        out = tmp_path / f"s{seed}"
        out.mkdir()
        train(out, replace(CONFIG, epochs=1, seed=seed), name=f"map-fr-s{seed}")
        names.append(TrainedRunEncoder(str(out / "run")).name)
    assert names == ["map-fr-s0@epoch-1", "map-fr-s1@epoch-1"]


def test_cnn_student_refuses_layers_and_dropout(tmp_path: Path) -> None:
    """The CNN has neither: a value it would drop is refused, not written into the manifest."""
    from dataclasses import replace

    for option in ({"layers": 2}, {"dropout": 0.1}):
        with pytest.raises(SentprobeError, match=f"--{next(iter(option))} .*cnn-max"):
            replace(CONFIG, arch="cnn-max", **option).check()
    replace(CONFIG, arch="bilstm-max", layers=2, dropout=0.1).check()
    out = tmp_path / "cnn"
    out.mkdir()
    train(out, replace(CONFIG, epochs=1, arch="cnn-max", dim=8))
    assert read_manifest(out / "run")["encoder"]["options"] == {}


def test_untrained_baselines_as_teachers_read_tokens(tmp_path: Path) -> None:
    """The random BiLSTM/ConvNet split on whitespace: as teachers they are given
    Moses-tokenised sources, so "It is for clarity." and "It is for clarity ." give the same
    teacher vectors."""
    from dataclasses import replace

    from sentprobe.encoders.untrained import BiLSTMEncoder, GatedConvEncoder
    from sentprobe.training.pairs import teacher_file
    from sentprobe.training.student import _prepare, teacher_reads_tokens

    vec = tmp_path / "tiny.vec"
    words = ["It", "is", "for", "clarity", ".", "The", "cat"]
    rng = np.random.default_rng(0)
    vec.write_text(
        f"{len(words)} 4\n"
        + "".join(f"{w} {' '.join(map(str, rng.normal(size=4)))}\n" for w in words),
        encoding="utf-8",
    )
    pairs = ParallelCorpus()
    sources = ["It is for clarity.", "It is for clarity .", "The cat.", "The cat is ."]
    for i, source in enumerate(sources):
        pairs.add(source, f"cible {i}", "")
    config = replace(CONFIG, valid_size=1, batch_size=2)
    for cls in (BiLSTMEncoder, GatedConvEncoder):
        teacher = cls(vectors=vec)
        assert teacher_reads_tokens(teacher)
        cache, folder = EmbeddingCache(tmp_path / cls.__name__), tmp_path / f"{cls.__name__}-run"
        folder.mkdir()
        data = _prepare(pairs, "fr", teacher, cache, config, folder)
        rows = teacher_file(data.pairs, folder, teacher, cache, data.valid_y.shape[1], False)
        y = {f"cible {i}": row for i, row in enumerate(rows.take(range(4)))}
        assert np.array_equal(y[data.pairs.valid_target[0]], data.valid_y[0])
        assert np.array_equal(y["cible 0"], y["cible 1"]), cls.__name__
        assert not np.array_equal(y["cible 0"], y["cible 2"])


def _task(name: str, language: str, words: list[str]):
    from sentprobe.datasets.task import ProbingTask, Split, TaskMetadata

    rng = np.random.default_rng(len(name))
    splits = {}
    for split, n in (("train", 40), ("dev", 10), ("test", 20)):
        sents = [f"{' '.join(rng.choice(words, size=4))} {split} {i}" for i in range(n)]
        splits[split] = Split(sentences=sents, labels=[str(i % 2) for i in range(n)])
    return ProbingTask(TaskMetadata(name=name, language=language, labels=("0", "1")), splits)


def test_probing_a_student_stores_unknown_words_and_language_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each result of a student records the share of test tokens it reads as <unk> and its
    language; a high share or another language is a warning stored with the result."""
    from sentprobe.evaluation.runner import run as run_probes

    train(tmp_path)
    english = ["the", "cat", "sees", "a", "dog", "house", "runs"]
    frame = run_probes(
        [str(tmp_path / "run")],
        [_task("French", "fr", WORDS), _task("English", "en", english), _task("Und", "und", WORDS)],
        baselines="none", results=tmp_path / "r.sqlite", cache_dir=tmp_path / "c", progress=False,
    )  # fmt: skip
    checks = {row.task: row.extra["probe_checks"] for row in frame.itertuples()}
    # the words are the student's own; "test" and the numbers are not: 2 of 6 tokens unknown
    assert checks["French"]["unknown_token_share"] == pytest.approx(2 / 6, abs=0.02)
    assert checks["French"]["student_language"] == "fr"
    assert checks["English"]["unknown_token_share"] == 1.0
    assert checks["English"]["warnings"] == [
        f"100.0% of the test tokens are unknown to {frame.encoder.iloc[0]} (more than 25%): "
        "its vectors there say little about the sentences",
        "a fr student probed on a task in en",
    ]
    assert checks["Und"]["warnings"][-1] == (  # its language could be anything: said so
        "a fr student probed on a task of unknown language (name it: -t 'PATH?language=xx')"
    )
    from sentprobe.cli.console import show_warnings as _show_warnings

    _show_warnings(frame)  # what `sentprobe run` prints under the table: each warning once
    shown = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    student = frame.encoder.iloc[0]
    assert (
        shown.count(f"warning: {student} on English (en): a fr student probed on a task in en") == 1
    )
    assert sum("100.0% of the test tokens are unknown" in line for line in shown) == 1
    from sentprobe.reporting.tables import WARNED, results_table

    md = results_table(frame, fmt="markdown")  # `report` marks the cells and says why
    row = next(line for line in md.splitlines() if line.startswith(f"| {student}"))
    assert row.count(WARNED) == 3  # every task warns: 100% or 33% of its tokens unknown
    assert f"{WARNED} the encoder's own checks warn" in md
    assert "English: a fr student probed on a task in en" in results_table(frame, fmt="csv")
    assert r"\textsuperscript{$!$}" in results_table(frame, fmt="latex")
