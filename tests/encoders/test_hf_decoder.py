"""Decoder-only models through HFEncoder: tiny random GPT-2 and Llama models built here, every
(layer, pooling) from one forward pass, padding on either side, prompt templates, position
and marker poolings, layers streamed from the disk, and the command line's bad input."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import sqlite3
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from decoder_models import save_gpt2, save_llama
from sentprobe.encoders.cache import EmbeddingCache
from sentprobe.encoders.hf import HFEncoder
from sentprobe.errors import SentprobeError

SENTS = [
    "the cat sat on the mat .",
    "hello world",
    "a dog ran in the park and the cat slept , how are you today ?",
    "a dog",
]
PROMPT = 'this sentence : "{}" means in one word : "'
POOLINGS = "mean,max,cls,last,pos:1,pos:-2,marker:means"


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("decoders")
    return {"gpt2": save_gpt2(root / "gpt2"), "llama": save_llama(root / "llama")}


def _loaded_like(enc: HFEncoder, **options) -> HFEncoder:
    """An encoder of ``options`` on ``enc``'s model, sharing its loaded weights (loading is
    most of the time of a tiny model's encoding)."""
    other = HFEncoder(enc.model_name, **options)
    for attr in ("_model", "_tokenizer", "_causal", "_max_len", "device"):
        setattr(other, attr, getattr(enc, attr))
    return other


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_every_layer_and_pooling_from_one_forward_pass_equals_each_alone(models, kind):
    enc = HFEncoder(models[kind], layer="all", pooling=POOLINGS, prompt=PROMPT, batch_size=8)
    enc._load()
    assert enc._causal
    calls = []
    enc._model.register_forward_hook(lambda *a: calls.append(1))
    out = enc.encode(SENTS)
    poolings = POOLINGS.split(",")
    layers = range(enc.n_layers + 1)
    assert enc.views == [f"layer{i}/{p}" for i in layers for p in poolings]
    assert out.shape == (len(SENTS), len(enc.views), 32)
    assert len(calls) == 1  # one batch, one forward pass for every (layer, pooling)
    for v, view in enumerate(enc.views):
        layer, pooling = view.removeprefix("layer").split("/")
        alone = _loaded_like(enc, layer=int(layer), pooling=pooling, prompt=PROMPT)
        np.testing.assert_allclose(out[:, v], alone.encode(SENTS), atol=1e-5, err_msg=view)


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_left_and_right_padding_give_the_vectors_of_each_sentence_alone(models, kind):
    """GPT-2's positions are learned: a left-padded batch needs position ids counted from each
    row's first real token, else every vector changes (planted: ``_causal = False``)."""
    outs = {}
    for side in ("left", "right"):
        enc = HFEncoder(models[kind], layer="all", pooling="mean,last,cls,pos:2")
        enc._load()
        enc._tokenizer.padding_side = side
        outs[side] = enc.encode(SENTS)
    alone = np.stack([enc.encode([s])[0] for s in SENTS])  # no padding at all
    np.testing.assert_allclose(outs["left"], outs["right"], atol=1e-5)
    np.testing.assert_allclose(outs["left"], alone, atol=1e-5)
    if kind == "gpt2":
        enc._tokenizer.padding_side = "left"
        enc._causal = False  # the model counts positions from the first (padding) token
        assert not np.allclose(enc.encode(SENTS), alone, atol=1e-3)


@pytest.mark.parametrize("pooling", ["mean", "max", "cls", "last"])
def test_what_a_model_leaves_at_padding_never_enters_a_vector(pooling):
    """A left-padded row's padding may hold NaN (attention over no token): multiplying by the
    mask (NaN * 0) would carry it into the mean."""
    from sentprobe.encoders.pooling import pool

    gen = torch.Generator().manual_seed(0)
    states = [torch.randn(2, 5, 3, generator=gen) for _ in range(2)]
    mask = torch.tensor([[False, False, True, True, True], [True, True, True, True, True]])
    clean = pool(states, mask, pooling)
    for h in states:
        h[0, :2] = float("nan")
    assert torch.equal(pool(states, mask, pooling), clean)


def test_the_prompt_template_is_part_of_the_fingerprint_and_keys_the_cache(models, tmp_path):
    plain = HFEncoder(models["gpt2"], pooling="last")
    a = HFEncoder(models["gpt2"], pooling="last", prompt=PROMPT)
    b = HFEncoder(models["gpt2"], pooling="last", prompt="in one word , {} means :")
    assert len({plain.fingerprint, a.fingerprint, b.fingerprint}) == 3
    assert HFEncoder(models["gpt2"], pooling="last", prompt=PROMPT).fingerprint == a.fingerprint
    assert plain.fingerprint == HFEncoder(models["gpt2"], pooling="last").fingerprint
    cache = EmbeddingCache(tmp_path)
    first = cache.vectors(a, SENTS, progress=False).take(np.arange(len(SENTS)))
    assert cache.last_encoded == len(SENTS)
    again = HFEncoder(models["gpt2"], pooling="last", prompt=PROMPT)
    reused = cache.vectors(again, SENTS, progress=False).take(np.arange(len(SENTS)))
    assert cache.last_encoded == 0 and np.array_equal(first, reused)
    cache.vectors(b, SENTS, progress=False)
    assert cache.last_encoded == len(SENTS)  # another template: encoded anew
    assert not np.allclose(first, b.encode(SENTS), atol=1e-3)


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_position_and_marker_poolings_pick_their_token(models, kind):
    enc = HFEncoder(
        models[kind],
        layer="all",
        pooling="pos:0,pos:1,pos:-1,marker:means,marker:word :",
        prompt=PROMPT,
    )
    out = enc.encode(SENTS)
    n = len(enc.poolings)
    for i, sentence in enumerate(SENTS):
        text = PROMPT.replace("{}", sentence)
        ids = enc._tokenizer(text, return_tensors="pt")
        with torch.inference_mode():
            states = enc._model(**ids, output_hidden_states=True).hidden_states
        # a marker ending a word is the last token of the text up to its end
        means = text.rindex("means") + len("means")
        word = text.rindex("word :") + len("word :")
        expected = [0, 1, ids.input_ids.shape[1] - 1]
        expected += [len(enc._tokenizer(text[:end]).input_ids) - 1 for end in (means, word)]
        for layer, h in enumerate(states):
            got = out[i, layer * n : (layer + 1) * n]
            np.testing.assert_allclose(got, h[0, expected].numpy(), atol=1e-5)
    # pos:0 is the first token (Llama's <s>), pos:-1 the last: cls and last
    first_last = HFEncoder(models[kind], layer="all", pooling="cls,last", prompt=PROMPT)
    both = first_last.encode(SENTS).reshape(len(SENTS), -1, 2, 32)
    np.testing.assert_allclose(both[:, :, 0], out.reshape(len(SENTS), -1, n, 32)[:, :, 0])
    np.testing.assert_allclose(both[:, :, 1], out.reshape(len(SENTS), -1, n, 32)[:, :, 2])


def test_one_layer_with_several_poolings_names_its_views_by_layer(models):
    enc = HFEncoder(models["gpt2"], layer=-1, pooling="mean, pos:+1,last")
    assert enc.poolings == ("mean", "pos:1", "last")  # one spelling per pooling
    assert enc.views == ["layer3/mean", "layer3/pos:1", "layer3/last"]
    assert enc.name == "gpt2" and "pool=mean,pos:1,last" in enc.fingerprint
    out = enc.encode(SENTS)
    alone = HFEncoder(models["gpt2"], layer=3, pooling="pos:1").encode(SENTS)
    np.testing.assert_allclose(out[:, 1], alone, atol=1e-5)


def test_bad_poolings_and_templates_are_refused_when_the_encoder_is_built(models):
    model = models["gpt2"]
    for pooling, message in [
        ("median", "pooling must be one of"),
        ("pos:x", "pooling must be one of"),
        ("mean,mean", "given twice"),
        ("marker:word", "needs a prompt template"),
    ]:
        with pytest.raises(SentprobeError, match=message):
            HFEncoder(model, pooling=pooling)
    with pytest.raises(SentprobeError, match="'nowhere' is not in the prompt template"):
        HFEncoder(model, pooling="marker:nowhere", prompt=PROMPT)
    with pytest.raises(SentprobeError, match="exactly once"):
        HFEncoder(model, prompt="no slot here")


def test_a_position_past_a_sentence_fails_before_anything_is_cached(models, tmp_path):
    enc = HFEncoder(models["llama"], layer="all", pooling="mean,pos:-9")
    cache = EmbeddingCache(tmp_path)
    with pytest.raises(SentprobeError, match=r"pooling pos:-9: '[^']+' has \d tokens"):
        cache.vectors(enc, SENTS, progress=False)
    assert not any(tmp_path.rglob("*.npy"))


def test_layers_streamed_from_the_disk_give_the_same_vectors(models, tmp_path):
    """device_map: weights that do not fit ``max_memory`` stay on the disk and are read layer
    by layer during the forward pass (accelerate's offloading; on a GPU the same hooks bring
    CPU-held layers to it)."""
    pytest.importorskip("accelerate")
    model = models["gpt2"]
    reference = HFEncoder(model, layer="all", pooling="mean,last").encode(SENTS)
    budget = (model / "model.safetensors").stat().st_size * 3 // 4
    enc = HFEncoder(
        model,
        layer="all",
        pooling="mean,last",
        device_map="auto",
        max_memory={"cpu": budget},
        offload_folder=tmp_path / "offload",
    )
    out = enc.encode(SENTS)
    assert "disk" in enc._model.hf_device_map.values()
    np.testing.assert_allclose(out, reference, atol=1e-6)
    assert enc.fingerprint == HFEncoder(model, layer="all", pooling="mean,last").fingerprint
    with pytest.raises(SentprobeError, match="device or device_map, not both"):
        HFEncoder(model, device="cpu", device_map="auto")


def _cli_run(models, tmp_path, monkeypatch) -> list[str]:
    """``sentprobe run`` of the tiny GPT-2 on a small task file, writing under out/."""
    monkeypatch.chdir(tmp_path)
    lines = [f"tr\t{'a' if i % 2 else 'b'}\tthe cat number {i}" for i in range(12)]
    lines += ["va\ta\tthe dog", "va\tb\ta dog", "te\ta\tthe mat", "te\tb\ta mat"]
    Path("t.txt").write_text("\n".join(lines) + "\n")
    base = ["run", "-e", str(models["gpt2"]), "-t", "t.txt", "--baselines", "none", "-q"]
    return base + ["--results", "out/r.sqlite", "--cache-dir", "out/cache", "-o", "out/t.md"]


def test_the_command_line_refuses_bad_poolings_in_one_line_and_writes_nothing(
    models, tmp_path, monkeypatch
):
    from sentprobe.cli.main import app

    base = _cli_run(models, tmp_path, monkeypatch)
    for args, code, expect in [
        (["--pooling", "median"], 2, "pooling must be one of"),
        (["--pooling", "marker:nowhere", "--prompt", PROMPT], 1, "is not in the prompt template"),
        (["--pooling", "last", "--prompt", "no slot"], 1, "exactly once"),
        (["--pooling", "mean,pos:-40", "--layer", "all"], 1, "too few for position -40"),
    ]:
        res = CliRunner().invoke(app, base + args, prog_name="sentprobe")
        assert res.exit_code == code, res.output
        assert "Traceback" not in res.stderr
        hits = [line for line in res.stderr.splitlines() if expect in line]
        assert len(hits) == 1, res.stderr
        assert not Path("out/t.md").exists()
        if Path("out/r.sqlite").exists():
            con = sqlite3.connect("out/r.sqlite")
            assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 0
            con.close()


@pytest.mark.slow  # a whole run: 8 probes (the encoder's views are tested above)
def test_the_command_line_stores_a_row_per_layer_and_pooling(models, tmp_path, monkeypatch):
    from sentprobe.cli.main import app

    base = _cli_run(models, tmp_path, monkeypatch)
    res = CliRunner().invoke(app, base + ["--pooling", "mean,last", "--layer", "all"])
    assert res.exit_code == 0, res.output
    con = sqlite3.connect("out/r.sqlite")
    rows = con.execute("SELECT encoder, encoder_fingerprint FROM results").fetchall()
    con.close()
    name = models["gpt2"].name
    assert sorted(e for e, _ in rows) == sorted(
        f"{name}@layer{k}/{p}" for k in range(4) for p in ("mean", "last")
    )
    assert len({f for _, f in rows}) == 8
    assert Path("out/t.md").read_text().count("@layer") == 8
