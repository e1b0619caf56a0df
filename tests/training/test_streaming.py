"""Training at scale: the data path streams the corpus (never a list of it), and a run
stopped mid-epoch resumes to the weights of a run never stopped."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from test_trainer import config, data, sentences  # noqa: F401 - data is a fixture

from sentprobe.errors import SentprobeError
from sentprobe.training import data as data_module
from sentprobe.training import trainer
from sentprobe.training.checkpoint import completed_epochs, load_state, read_manifest
from sentprobe.training.trainer import train


class _Killed(Exception):
    """Stands in for a kill: raised from inside the optimiser step."""


def _kill_at_step(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    real = torch.optim.Adam.step
    calls = [0]

    def step(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls[0] += 1
        if calls[0] == n:
            raise _Killed
        return real(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.Adam, "step", step)


def _weights(run: Path) -> dict[str, torch.Tensor]:
    state = load_state(run, completed_epochs(read_manifest(run))[-1])
    return {**state["model"], **{f"opt.{k}": v for k, v in _flat(state["optimiser"]).items()}}


def _flat(optimiser: dict) -> dict[str, torch.Tensor]:
    return {
        f"{p}.{name}": t
        for p, slots in optimiser["state"].items()
        for name, t in slots.items()
        if isinstance(t, torch.Tensor)
    }


@pytest.mark.parametrize(("stop", "buffer"), [("killed", 8), ("max_steps", 100_000)])
def test_stopped_mid_epoch_resumes_to_the_uninterrupted_weights(
    data,  # noqa: F811
    tmp_path,
    monkeypatch,
    stop,
    buffer,
):
    """5 batches an epoch, 2 epochs, dropout 0.3: killed at step 7 after a checkpoint at
    step 6 (epoch 2, one batch in), or stopped by max_steps at step 3 (mid-epoch 1), then
    rerun: every weight and optimiser slot equals the uninterrupted run's, with a shuffle
    buffer smaller than the corpus (8 of 38 examples) or holding all of it. Without the
    restored random state (dropout) or the replayed data position this fails."""
    monkeypatch.setattr(trainer, "SHUFFLE_BUFFER", buffer)
    kw = {"epochs": 2, "overrides": {"dropout": 0.3}}
    straight = train(
        config(data, "bilstm-last", "skipthought", tmp_path / "a", **kw), progress=False
    )
    assert read_manifest(straight)["epochs"][-1]["steps"] == 10
    run = tmp_path / "b"
    if stop == "killed":
        with pytest.MonkeyPatch.context() as killing, pytest.raises(_Killed):
            _kill_at_step(killing, 7)
            train(
                config(data, "bilstm-last", "skipthought", run, checkpoint_every=3, **kw),
                progress=False,
            )
        assert completed_epochs(read_manifest(run)) == [1]
    else:
        train(config(data, "bilstm-last", "skipthought", run, max_steps=3, **kw), progress=False)
        assert completed_epochs(read_manifest(run)) == []
    assert (run / "resume.pt").is_file()
    train(config(data, "bilstm-last", "skipthought", run, **kw), progress=False)
    assert not (run / "resume.pt").exists()  # the epoch ended: its step checkpoint is gone
    a, b = _weights(straight), _weights(run)
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_step_options_must_be_positive(data, tmp_path):  # noqa: F811
    with pytest.raises(SentprobeError, match="--checkpoint-every must be at least 1"):
        train(
            config(data, "cnn-max", "autoencoder", tmp_path / "r", checkpoint_every=0),
            progress=False,
        )


class _Counted(data_module.Example):
    """An ``Example`` that counts how many are alive at once."""

    alive = 0
    peak = 0

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        _Counted.alive += 1
        _Counted.peak = max(_Counted.peak, _Counted.alive)

    def __del__(self) -> None:
        _Counted.alive -= 1


def test_training_never_holds_the_corpus(tmp_path, monkeypatch):
    """2000 sentences, a shuffle buffer of 64 and chunks of 2 batches of 32: at most the
    buffer, two chunks (the next one is read while the last is still referenced) and the 100
    validation sentences are alive at once, plus a few in flight. Reading the corpus into
    a list anywhere (data, vocabulary, epochs) fails."""
    corpus = tmp_path / "corpus.txt"
    base = sentences(150)
    corpus.write_text("".join(f"{base[i % 150]} {i} .\n" for i in range(2000)), encoding="utf-8")
    monkeypatch.setattr(data_module, "Example", _Counted)
    monkeypatch.setattr(trainer, "SHUFFLE_BUFFER", 64)
    monkeypatch.setattr(trainer, "BUCKET", 2)
    _Counted.alive = _Counted.peak = 0
    cfg = trainer.TrainConfig(
        "cnn-max",
        "autoencoder",
        [str(corpus)],
        str(tmp_path / "run"),
        epochs=1,
        preset="demo",
        vectors=None,
        threads=1,
        overrides={"dim": 8, "dec_dim": 8, "dec_emb": 8, "batch_size": 32, "conv_layers": 1},
    )
    run = train(cfg, progress=False)
    assert read_manifest(run)["examples"] == 2000
    assert 100 < _Counted.peak <= 64 + 2 * 64 + 100 + 8, _Counted.peak


def test_train_command_passes_the_scale_options(tmp_path):
    """``sentprobe train --checkpoint-every --targets bpe --target-vocab --device auto``
    reach the run: a mid-epoch checkpoint while it runs, subword targets of that size."""
    from typer.testing import CliRunner

    from sentprobe.cli.main import app

    text = tmp_path / "text.txt"
    text.write_text("\n".join(sentences(40)) + "\n", encoding="utf-8")
    run = tmp_path / "run"
    args = ["train", "--arch", "cnn-max", "--objective", "autoencoder", "--data", str(text),
            "-o", str(run), "--vectors", "none", "--preset", "demo", "--dim", "8",
            "--batch-size", "8", "-q", "--epochs", "1", "--targets", "bpe",
            "--target-vocab", "60", "--device", "auto", "--checkpoint-every", "2"]  # fmt: skip
    res = CliRunner().invoke(app, [*args, "--max-steps", "3"])
    assert res.exit_code == 0, res.output
    assert torch.load(run / "resume.pt", weights_only=True)["step"] == 3
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    manifest = read_manifest(run)
    assert manifest["target_vocab"] == {
        "file": "target-bpe.json", "size": 60, "kind": "bpe", "bleu": "detokenised, 13a"
    }  # fmt: skip
    assert manifest["epochs"][0]["steps"] == 5 and not (run / "resume.pt").exists()
