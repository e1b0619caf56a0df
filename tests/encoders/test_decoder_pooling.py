"""Decoder poolings that say what they read: ``cls``/``pos:K`` on the fixed start of every
input (a BOS, a prompt's prefix) of a left-to-right model, and ``last`` when the cut at the
token limit removes the prompt template's end."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import warnings

import pytest

from decoder_models import save_gpt2, save_llama
from sentprobe.encoders.hf import HFEncoder, fixed_prefix

SENTS = ["the cat sat on the mat .", "hello world"]
PROMPT = 'this sentence : "{}" means in one word : "'


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("decoders")
    return {"gpt2": save_gpt2(root / "gpt2"), "llama": save_llama(root / "llama")}


def _warnings(enc: HFEncoder, sentences=SENTS) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        enc.prepare(sentences)
        enc.encode(sentences)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize(
    ("kind", "pooling", "prompt", "warned"),
    [
        ("llama", "cls", None, True),  # the BOS
        ("llama", "pos:1", None, False),  # the sentence's first token
        ("gpt2", "cls", None, False),  # no BOS: the sentence's first token
        ("gpt2", "pos:0", PROMPT, True),  # the prompt's first token
        ("gpt2", "pos:3", PROMPT, True),  # still the prompt's prefix
        ("llama", "last", PROMPT, False),
    ],
)
def test_a_token_every_input_starts_with_is_warned_about(models, kind, pooling, prompt, warned):
    enc = HFEncoder(models[kind], pooling=pooling, prompt=prompt)
    found = [w for w in _warnings(enc) if "every sentence gets the same vector" in w]
    assert bool(found) == warned
    if warned:
        token = fixed_prefix(enc._tokenizer, enc.prompt)[int(pooling.partition(":")[2] or 0)]
        assert repr(token) in found[0]
        vectors = enc.encode(SENTS)
        assert (vectors[0] == vectors[1]).all()  # indeed one vector for every sentence


def test_the_fixed_prefix_is_the_bos_and_the_prompts_start(models):
    llama = HFEncoder(models["llama"])
    llama._load()
    assert fixed_prefix(llama._tokenizer, None) == ["<s>"]
    gpt2 = HFEncoder(models["gpt2"], prompt=PROMPT)
    gpt2._load()
    prefix = fixed_prefix(gpt2._tokenizer, gpt2.prompt)
    assert len(prefix) >= 4 and "".join(prefix).replace("Ġ", " ").startswith("this")


def test_last_says_which_token_it_reads_when_the_cut_removes_the_templates_end(models):
    long = "the cat sat on the mat and the dog ran in the park and slept " * 3
    enc = HFEncoder(models["gpt2"], pooling="last", prompt=PROMPT, max_length=16)
    found = [w for w in _warnings(enc, [long, "a dog"]) if "template's end" in w]
    assert len(found) == 1 and "a token of the sentence" in found[0]
    plain = HFEncoder(models["gpt2"], pooling="last", max_length=16)  # no template to cut
    assert not [w for w in _warnings(plain, [long, "a dog"]) if "template's end" in w]
    kept = HFEncoder(models["gpt2"], pooling="last", prompt=PROMPT, max_length=120)
    short = "the cat sat on the mat ."
    assert not [w for w in _warnings(kept, [short, "a dog"]) if "template's end" in w]
