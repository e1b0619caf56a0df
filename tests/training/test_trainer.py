"""Training: every architecture x objective trains, losses fall, checkpoints reload exactly,
runs resume after the last finished epoch (also after SIGKILL), bad data fails early."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from itertools import product
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from sentprobe.errors import DataError, SentprobeError
from sentprobe.training.architectures import ARCHITECTURES, build_from_spec
from sentprobe.training.checkpoint import (
    TrainedRunEncoder,
    completed_epochs,
    load_encoder,
    read_manifest,
)
from sentprobe.training.data import OBJECTIVES
from sentprobe.training.objectives import build_head
from sentprobe.training.trainer import TrainConfig, _Encoded, _vocabularies, train

SUBJECTS = ["the cat", "a dog", "my friend", "the old man", "she", "they"]
VERBS = ["sees", "likes", "found", "will call", "helped"]
OBJECTS = ["the ball", "a house", "him", "the small bird", "two books"]
#: Tiny sizes: every run here takes a fraction of a second.
TINY = {
    "dim": 8,
    "dec_dim": 8,
    "dec_emb": 8,
    "mlp_dim": 8,
    "batch_size": 8,
    "conv_layers": 2,
    "layers": 1,
}


def sentences(n: int = 40) -> list[str]:
    combos = list(product(SUBJECTS, VERBS, OBJECTS))
    return [f"{s} {v} {o} ." for s, v, o in combos[:n]]


def conllu_block(i: int, words: list[tuple[str, str, str, int, str]]) -> str:
    lines = [f"# sent_id = s{i}", f"# text = {' '.join(w[0] for w in words)}"]
    for k, (form, upos, xpos, head, rel) in enumerate(words, 1):
        lines.append(f"{k}\t{form}\t{form.lower()}\t{upos}\t{xpos}\t_\t{head}\t{rel}\t_\t_")
    return "\n".join(lines) + "\n\n"


def clause_pairs(n: int) -> str:
    """Parsed 'X left because/and Y rained .' sentences: DisSent finds a pair in each."""
    out = []
    for i in range(n):
        marker, rel, head_rel = [("because", "mark", "advcl"), ("and", "cc", "conj")][i % 2]
        subj1, subj2 = SUBJECTS[i % 6].split()[-1], SUBJECTS[(i + 1) % 6].split()[-1]
        words = [
            (subj1, "PRON", "PRP", 2, "nsubj"),
            ("left", "VERB", "VBD", 0, "root"),
            (marker, "SCONJ" if rel == "mark" else "CCONJ", "IN", 5, rel),
            (subj2, "PRON", "PRP", 5, "nsubj"),
            ("rained", "VERB", "VBD", 2, head_rel),
            ("today", "NOUN", "NN", 5, "obl:tmod"),
            (".", "PUNCT", ".", 2, "punct"),
        ]
        out.append(conllu_block(i, words))
    return "".join(out)


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("train-data")
    sents = sentences()
    files = {
        "text": "\n".join(sents) + "\n",
        "running": "\n".join(sents[:20]) + "\n\n" + "\n".join(sents[20:]) + "\n",
        "parallel": "".join(f"{s}\t{' '.join(reversed(s.split()))}\n" for s in sents),
        "nli": "".join(
            f"{s}\t{t}\t{['entailment', 'neutral', 'contradiction'][i % 3]}\n"
            for i, (s, t) in enumerate(zip(sents, reversed(sents)))
        ),
    }
    paths = {}
    for name, text in files.items():
        paths[name] = root / f"{name}.txt"
        paths[name].write_text(text, encoding="utf-8")
    paths["conllu"] = root / "parsed.conllu"
    paths["conllu"].write_text(clause_pairs(24), encoding="utf-8")
    vec = root / "tiny.vec"
    words = sorted({w for s in sents for w in s.split()})
    rng = np.random.default_rng(0)
    vec.write_text(
        f"{len(words)} 6\n"
        + "".join(f"{w} {' '.join(f'{x:.3f}' for x in rng.normal(size=6))}\n" for w in words),
        encoding="utf-8",
    )
    paths["vec"] = vec
    return paths


DATA_FOR = {
    "autoencoder": "text",
    "lm": "text",
    "skipthought": "running",
    "translation": "parallel",
    "nli": "nli",
    "seq2tree": "conllu",
    "dissent": "conllu",
}


def config(data, arch: str, objective: str, out: Path, **kw) -> TrainConfig:
    kw.setdefault("vectors", str(data["vec"]))
    kw.setdefault("threads", 1)  # tiny models: one thread is faster than two
    return TrainConfig(
        arch,
        objective,
        [str(data[DATA_FOR[objective]])],
        str(out),
        epochs=kw.pop("epochs", 1),
        preset="demo",
        overrides={**TINY, **kw.pop("overrides", {})},
        **kw,
    )


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_every_architecture_trains_one_epoch(data, tmp_path, objective):
    for arch in ARCHITECTURES:
        run = train(config(data, arch, objective, tmp_path / arch), progress=False)
        manifest = read_manifest(run)
        assert completed_epochs(manifest) == [1]
        assert np.isfinite(manifest["epochs"][0]["train_loss"])
        assert manifest["epochs"][0]["tokens_per_second"] > 0
        if objective == "dissent":
            assert manifest["label_counts"] == {"and": 12, "because": 12}
        encoder = TrainedRunEncoder(str(run), num_threads=1)
        vecs = encoder.encode(["the cat sees a dog .", "unseenword"])
        assert vecs.shape == (2, build_from_spec(manifest["encoder"]).out_dim)
        assert np.isfinite(vecs).all()


def _losses(data, arch: str, objective: str, steps: int = 15) -> list[float]:
    """Training losses on one fixed batch: the head and encoder can fit it."""
    return _fit_batch(data, arch, objective, steps)[0]


def _fit_batch(data, arch: str, objective: str, steps: int = 15, lr: float = 1e-2):
    """(losses, model, batch): ``steps`` Adam steps on one fixed batch of 8 examples."""
    from sentprobe.training.data import TrainingData
    from sentprobe.training.presets import preset

    torch.manual_seed(0)
    torch.set_num_threads(1)
    sizes = {**preset("demo", arch), **TINY}
    td = TrainingData(objective, [data[DATA_FOR[objective]]], batch_size=8)
    vocab, target = _vocabularies(objective, td, sizes)
    spec = {
        "arch": arch,
        "vocab_size": len(vocab),
        "emb_dim": 8,
        "dim": 8,
        "freeze_embeddings": False,
        "bidirectional_lm": objective == "lm",
        "options": sizes["arch_options"],
    }
    head = {**sizes, "n_labels": len(td.labels), "target_size": len(target) if target else 0}
    model = build_head(objective, build_from_spec(spec), head)
    encoded = _Encoded(objective, list(td), vocab, target, td.labels, "cpu")
    batch = encoded.batch(np.arange(8))
    opt = torch.optim.Adam(model.parameters(), lr)
    out = []
    for _ in range(steps):
        loss, _ = model.loss(batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(float(loss.detach()))
    return out, model, batch


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_loss_decreases_per_objective(data, objective):
    losses = _losses(data, "bilstm-max", objective)
    assert losses[-1] < 0.9 * losses[0], losses


@pytest.mark.parametrize("arch", list(ARCHITECTURES))
def test_loss_decreases_per_architecture(data, arch):
    losses = _losses(data, arch, "autoencoder")
    assert losses[-1] < 0.9 * losses[0], losses


def test_checkpoint_reloads_bit_identically(data, tmp_path):
    run = train(config(data, "gatedconv", "autoencoder", tmp_path / "r"), progress=False)
    state = torch.load(run / "epoch-1" / "state.pt", weights_only=False)["model"]
    encoder, _, _ = load_encoder(run)
    for name, tensor in encoder.state_dict().items():
        assert torch.equal(tensor, state[f"encoder.{name}"]), name
    a = TrainedRunEncoder(str(run)).encode(sentences(10))
    b = TrainedRunEncoder(f"{run}@epoch-1").encode(sentences(10))
    assert np.array_equal(a, b)


def test_resume_continues_after_last_epoch(data, tmp_path):
    """With dropout, epoch 2 of a resumed run draws the masks of an uninterrupted run only
    when the saved random state is restored."""
    dropout = {"overrides": {"dropout": 0.3}}
    resumed = tmp_path / "resumed"
    train(config(data, "bilstm-last", "skipthought", resumed, epochs=1, **dropout), progress=False)
    first = resumed / "epoch-1" / "encoder.safetensors"
    stamp = first.stat().st_mtime_ns
    train(config(data, "bilstm-last", "skipthought", resumed, epochs=2, **dropout), progress=False)
    assert first.stat().st_mtime_ns == stamp  # epoch 1 not recomputed
    assert completed_epochs(read_manifest(resumed)) == [1, 2]
    straight = tmp_path / "straight"
    train(config(data, "bilstm-last", "skipthought", straight, epochs=2, **dropout), progress=False)
    a = load_file(str(resumed / "epoch-2" / "encoder.safetensors"))
    b = load_file(str(straight / "epoch-2" / "encoder.safetensors"))
    assert all(torch.equal(a[k], b[k]) for k in a)  # same as an uninterrupted run


def test_gated_convnet_trains_with_sgd_as_in_the_paper(data, tmp_path):
    from sentprobe.training.presets import preset

    assert preset("paper", "gatedconv")["optimizer"] == "sgd"
    assert preset("demo", "gatedconv")["optimizer"] == "sgd"
    assert preset("paper", "bilstm-max")["optimizer"] == "adam"
    run = train(config(data, "gatedconv", "nli", tmp_path / "r", optimizer="sgd"), progress=False)
    state = torch.load(run / "epoch-1" / "state.pt", weights_only=False)["optimiser"]
    assert state["param_groups"][0]["momentum"] == 0.9


def test_rerun_with_other_settings_is_refused(data, tmp_path):
    train(config(data, "cnn-max", "autoencoder", tmp_path / "r"), progress=False)
    with pytest.raises(SentprobeError, match="other settings"):
        train(config(data, "cnn-avg", "autoencoder", tmp_path / "r"), progress=False)


@pytest.mark.slow  # a child process importing torch: ~10 s on an idle 2-core machine
def test_sigkill_then_rerun_resumes(data, tmp_path):
    out = tmp_path / "killed"
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[1]);"
        "from test_trainer import config; from sentprobe.training import trainer;"
        "import json; from pathlib import Path;"
        "d = {k: Path(v) for k, v in json.loads(sys.argv[2]).items()};"
        "trainer.train(config(d, 'bilstm-max', 'autoencoder', Path(sys.argv[3]), epochs=500),"
        " progress=False)"
    )
    paths = json.dumps({k: str(v) for k, v in data.items()})
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(Path(__file__).parent), paths, str(out)],
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not (out / "epoch-2").exists():
            time.sleep(0.05)
        assert (out / "epoch-2").exists(), "the child never finished two epochs"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    done = completed_epochs(read_manifest(out))
    assert done and done == list(range(1, len(done) + 1))
    stamp = (out / "epoch-1" / "encoder.safetensors").stat().st_mtime_ns
    train(config(data, "bilstm-max", "autoencoder", out, epochs=done[-1] + 1), progress=False)
    assert completed_epochs(read_manifest(out)) == [*done, done[-1] + 1]
    assert (out / "epoch-1" / "encoder.safetensors").stat().st_mtime_ns == stamp
    assert not list(out.glob(".epoch-*"))  # no partial epoch left behind after the rerun


@pytest.mark.parametrize(
    ("objective", "text", "message"),
    [
        ("autoencoder", "", "line|empty file"),
        ("translation", "a b\tc d\nno tab here\n", "line 2: expected source and target"),
        ("nli", "a b\tc d\tentailment\na\tb\tmaybe\n", "line 2: label 'maybe' is not one of"),
        ("autoencoder", "one sentence .\ntwo .\n", "fewer than one batch"),
    ],
)
def test_bad_data_fails_before_training(data, tmp_path, objective, text, message):
    bad = tmp_path / "bad.txt"
    bad.write_text(text, encoding="utf-8")
    cfg = config(data, "bilstm-max", objective, tmp_path / "run")
    cfg.data = [str(bad)]
    with pytest.raises(DataError, match=message) as info:
        train(cfg, progress=False)
    assert str(bad) in str(info.value)
    assert not (tmp_path / "run" / "run.json").exists()


def test_data_errors_name_the_file_and_line():
    from sentprobe.training.data import TrainingData

    with pytest.raises(SentprobeError, match="no such file"):
        TrainingData("autoencoder", [Path("/nonexistent/file.txt")], batch_size=1)


class _OtherSentence(torch.nn.Module):
    """The encoder, but each sentence gets the vector of the next one in the batch."""

    def __init__(self, encoder: torch.nn.Module) -> None:
        super().__init__()
        self.inner = encoder
        self.out_dim = encoder.out_dim

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self.inner(tokens, lengths).roll(1, dims=0)


@pytest.mark.parametrize("objective", ["autoencoder", "translation", "skipthought", "seq2tree"])
def test_decoder_reads_the_sentence_vector(data, objective):
    """After fitting a batch, giving each target another sentence's vector u makes the loss
    clearly higher: the decoder predicts from u, not from its own previous words alone."""
    _, model, batch = _fit_batch(data, "bilstm-max", objective, steps=150)
    model.eval()
    with torch.no_grad():
        own = float(model.loss(batch)[0])
        encoder = model.encoder
        model.encoder = _OtherSentence(encoder)
        other = float(model.loss(batch)[0])
        model.encoder = encoder
    assert other > 1.5 * own, (own, other)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_gradient_reaches_every_encoder_weight(data, objective):
    _, model, batch = _fit_batch(data, "bilstm-max", objective, steps=1)
    model.zero_grad()
    model.loss(batch)[0].backward()
    for name, param in model.encoder.named_parameters():
        assert param.grad is not None and float(param.grad.abs().sum()) > 0, name


def test_greedy_decoding_agrees_with_teacher_forcing(data):
    """Fed its own greedy output, the teacher-forced decoder predicts that same output at
    every step: decoding runs the model that was trained."""
    from sentprobe.training.vocab import BOS, EOS, pad

    _, model, batch = _fit_batch(data, "bilstm-max", "autoencoder", steps=30)
    model.eval()
    decoded = model.greedy(batch["src"], batch["src_len"], max_len=20)
    assert any(decoded)
    # The decodes as teacher-forced targets, through the training loss itself: </s> is
    # predicted too, unless the decode was cut at max_len.
    tgt_in, _ = pad([[BOS, *ids] for ids in decoded])
    tgt_out, _ = pad([[*ids, EOS] for ids in decoded])
    lengths = torch.tensor([len(ids) + (1 if len(ids) < 20 else 0) for ids in decoded])
    forced = {**batch, "tgt_in": tgt_in, "tgt_out": tgt_out, "tgt_len": lengths}
    with torch.no_grad():
        _, stats = model.loss(forced)
    assert stats["tokens"] == float(lengths.sum())
    assert stats["correct"] == stats["tokens"]


def test_bleu_of_token_strings():
    from sentprobe.training.objectives import bleu

    refs = ["the cat sees the ball .", "a dog likes him ."]
    assert bleu(refs, refs) == pytest.approx(100.0)
    assert bleu(["ball the . sees cat the", "him likes dog a ."], refs) < 60
    assert bleu(["x y z w v", "q r s t u"], refs) == pytest.approx(0.0)


#: The validation metric each objective selects its best epoch on: Conneau et al.'s appendix
#: (BLEU for NMT and the autoencoder, perplexity for SkipThought, accuracy for Seq2Tree and
#: NLI); DisSent is a classifier (accuracy), the language model has perplexity.
SELECTED_ON = {"autoencoder": "bleu", "translation": "bleu", "skipthought": "ppl",
               "seq2tree": "token_acc", "nli": "acc", "dissent": "acc", "lm": "ppl"}  # fmt: skip


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_best_epoch_is_recorded_and_probed_with_at_best(data, tmp_path, objective):
    run = train(config(data, "bilstm-max", objective, tmp_path / "r", epochs=2), progress=False)
    manifest = read_manifest(run)
    metric = manifest["metric"]
    assert metric["name"] == SELECTED_ON[objective]
    sign = -1 if metric["higher_is_better"] else 1
    ranked = sorted(
        (sign * e["valid"][metric["name"]], e["valid"]["loss"], e["epoch"])
        for e in manifest["epochs"]
    )
    best = ranked[0][2]
    assert manifest["best_epoch"] == best
    assert TrainedRunEncoder(f"{run}@best").name == f"r@epoch-{best}"
    has_bleu = objective in ("autoencoder", "translation", "seq2tree")
    assert all(("bleu" in e["valid"]) == has_bleu for e in manifest["epochs"])
    # whichever epoch the metric favours is the one @best probes
    for favoured in (1, 2):
        doctored = json.loads((run / "run.json").read_text())
        for e in doctored["epochs"]:
            good = e["epoch"] == favoured
            e["valid"][metric["name"]] = (
                (90.0 if good else 10.0) if metric["higher_is_better"] else (2.0 if good else 9.0)
            )
        (run / "run.json").write_text(json.dumps(doctored))
        encoder = TrainedRunEncoder(f"{run}@best")
        assert encoder.epochs == [favoured] and encoder.name == f"r@epoch-{favoured}"


def test_name_is_the_runs_row_name(data, tmp_path):
    """``train --name``: two runs in folders of one name get rows of their own."""
    names = []
    for parent in ("runs", "other"):
        out = tmp_path / parent / "nmt"
        cfg = config(data, "bilstm-max", "autoencoder", out, name=f"nmt-{parent}")
        names.append(TrainedRunEncoder(str(train(cfg, progress=False))).name)
    assert names == ["nmt-runs@epoch-1", "nmt-other@epoch-1"]


def test_equal_metrics_go_to_the_lower_validation_loss():
    """A BLEU that stays at 0.00 does not pick epoch 1 whatever the loss does."""
    from sentprobe.training.checkpoint import best_epoch

    def run(*valid: tuple[float, float]) -> dict:
        epochs = [
            {"epoch": k, "valid": {"bleu": b, "loss": loss}} for k, (b, loss) in enumerate(valid, 1)
        ]
        return {"name": "r", "metric": {"name": "bleu", "higher_is_better": True}, "epochs": epochs}

    assert best_epoch(run((0.0, 5.0), (0.0, 4.0), (0.0, 4.5))) == 2
    assert best_epoch(run((0.0, 5.0), (0.0, 5.0))) == 1  # equal on both: the earlier
    assert best_epoch(run((1.0, 9.0), (0.0, 1.0))) == 1  # the metric comes first
    student = {"name": "s", "metric": {"name": "retrieval", "higher_is_better": True},
               "epochs": [{"epoch": 1, "valid_retrieval": 0.5, "valid_mse": 0.3},
                          {"epoch": 2, "valid_retrieval": 0.5, "valid_mse": 0.2}]}  # fmt: skip
    assert best_epoch(student) == 1  # as the student's early stopping recorded it


def test_docs_give_the_presets_attention_size():
    """docs/training.md states the self-attention query/key size each preset builds."""
    import re

    from sentprobe.training.presets import preset

    docs = (Path(__file__).parents[2] / "docs" / "training.md").read_text(encoding="utf-8")
    row = next(line for line in docs.splitlines() if line.startswith("| `selfattn-max`"))
    stated = re.search(
        r"query/key size (\d+) under `--preset paper`, (\d+) under `laptop` and `demo`", row
    )
    assert stated, row
    assert int(stated[1]) == preset("paper", "selfattn-max")["arch_options"]["att_dim"]
    for name in ("laptop", "demo"):
        assert int(stated[2]) == preset(name, "selfattn-max")["arch_options"]["att_dim"]
