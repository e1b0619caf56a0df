"""User callables, the SentEval prepare/batcher adapter, and loading user code by spec."""

import textwrap

import numpy as np
import pytest
import torch

from sentprobe.encoders.base import Encoder
from sentprobe.encoders.custom import (
    CallableEncoder,
    SentEvalEncoder,
    SentEvalParams,
    load_user_encoder,
)
from sentprobe.errors import DataError, SentprobeError


def lengths(sentences):
    return [[len(s.split()), 1.0] for s in sentences]


def test_callable_accepts_lists_and_tensors():
    enc = CallableEncoder(lengths)
    out = enc.encode(["a b", "c"])
    assert out.dtype == np.float32 and out.tolist() == [[2, 1], [1, 1]]
    assert enc.name == "lengths"
    t = CallableEncoder(lambda s: torch.ones(len(s), 3, requires_grad=True)).encode(["a"])
    assert t.shape == (1, 3)


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (lambda s: np.zeros((len(s) + 1, 2)), "returned 3 rows for 2 sentences"),
        (lambda s: np.zeros(len(s)), "2-d array"),
        (lambda s: np.full((len(s), 2), np.nan), "NaN"),
        (lambda s: [["a", "b"]] * len(s), "not numbers"),
    ],
)
def test_callable_output_is_validated(fn, message):
    with pytest.raises(SentprobeError, match=message):
        CallableEncoder(fn, name="bad").encode(["x", "y"])


def test_callable_fingerprint():
    def other(sentences):
        return np.zeros((len(sentences), 2))

    assert CallableEncoder(lengths).fingerprint == CallableEncoder(lengths).fingerprint
    assert CallableEncoder(lengths).fingerprint != CallableEncoder(other).fingerprint
    assert CallableEncoder(lengths, fingerprint="v2").fingerprint == "v2"


def test_senteval_adapter_passes_token_lists():
    seen = {"prepare": None, "batches": []}

    def prepare(params, samples):
        seen["prepare"] = samples
        params.vocab = {w for s in samples for w in s}

    def batcher(params, batch):
        assert isinstance(params.vocab, set) and params["batch_size"] == 2
        seen["batches"].append(batch)
        return np.array([[len(toks), toks[0] in params.vocab] for toks in batch])

    enc = SentEvalEncoder(prepare, batcher, {"batch_size": 2, "task_path": "/data"})
    sents = ["a b c", "d", "e f", "g h i j"]
    enc.prepare_task(sents)
    assert seen["prepare"] is None  # lazily, before the first batch
    out = enc.encode(sents)
    assert seen["prepare"] == [["a", "b", "c"], ["d"], ["e", "f"], ["g", "h", "i", "j"]]
    assert out[:, 0].tolist() == [3, 1, 2, 4]  # original order restored
    assert seen["batches"] == [[["d"], ["e", "f"]], [["a", "b", "c"], ["g", "h", "i", "j"]]]
    assert enc.batch_size == 2 and enc.params.kfold == 5 and enc.params.usepytorch is True


def test_senteval_adapter_prepares_itself_and_checks_rows():
    calls = []
    enc = SentEvalEncoder(lambda p, s: calls.append(s), lambda p, b: np.ones((len(b) - 1, 2)))
    with pytest.raises(SentprobeError, match="returned 0 rows for 1 sentences"):
        enc.encode(["x"])
    assert calls == [[["x"]]]


def test_senteval_fingerprint_follows_the_prepared_samples():
    """A prepare that builds state from its samples: each sample set is its own fingerprint,
    and the cache's later prepare call with a subset keeps the task's state."""
    calls = []
    enc = SentEvalEncoder(lambda p, s: calls.append(len(s)), lambda p, b: np.ones((len(b), 2)))
    with pytest.raises(SentprobeError, match="call prepare_task"):
        enc.fingerprint  # noqa: B018 - unknown until the samples are
    enc.prepare_task(["a b", "c", "d"])
    first = enc.fingerprint
    enc.prepare(["c"])  # what the cache does with the uncached subset
    enc.encode(["c"])
    assert enc.fingerprint == first and calls == [3]
    enc.prepare_task(["a b", "c"])
    assert enc.fingerprint != first
    enc.encode(["c"])
    assert calls == [3, 2]
    enc.prepare_task(["a b", "c", "d"])
    assert enc.fingerprint == first
    no_prepare = SentEvalEncoder(None, lambda p, b: np.ones((len(b), 2)))
    assert not no_prepare.prepare_per_task and no_prepare.fingerprint.startswith("senteval|")


def test_params_behave_like_senteval_dotdict():
    p = SentEvalParams(batch_size=4)
    p.task_path = "/x"
    assert p["task_path"] == "/x" and p.batch_size == 4 and p.missing is None


# -- load_user_encoder ----------------------------------------------------------------------

USER_CODE = textwrap.dedent(
    """
    import numpy as np
    from sentprobe.encoders.base import Encoder

    class Mine(Encoder):
        name = "mine"
        fingerprint = "mine-v1"
        def encode(self, sentences):
            return np.ones((len(sentences), 4), dtype=np.float32)

    instance = Mine()

    def factory():
        return Mine()

    def embed(sentences):
        return np.zeros((len(sentences), 3))

    NOT_CALLABLE = 3
    """
)


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / "my_encoders.py"
    path.write_text(USER_CODE)
    return path


@pytest.mark.parametrize(
    ("obj", "dim"), [("instance", 4), ("Mine", 4), ("factory", 4), ("embed", 3)]
)
def test_load_file_objects(user_file, obj, dim):
    enc = load_user_encoder(f"{user_file}:{obj}")
    assert isinstance(enc, Encoder)
    assert enc.encode(["a", "b"]).shape == (2, dim)


def test_load_module_object(user_file, monkeypatch):
    monkeypatch.syspath_prepend(str(user_file.parent))
    enc = load_user_encoder("my_encoders:embed", batch_size=5)
    assert isinstance(enc, CallableEncoder) and enc.batch_size == 5


def test_load_senteval_script(tmp_path):
    path = tmp_path / "bow_senteval.py"
    path.write_text(
        textwrap.dedent(
            """
            import numpy as np
            params_senteval = {"task_path": "data", "usepytorch": False, "batch_size": 3}

            def prepare(params, samples):
                params.n_samples = len(samples)

            def batcher(params, batch):
                return np.array([[len(s), params.n_samples] for s in batch], dtype=float)

            if __name__ == "__main__":
                raise SystemExit("only run under SentEval")
            """
        )
    )
    enc = load_user_encoder(str(path))
    assert isinstance(enc, SentEvalEncoder) and enc.batch_size == 3 and enc.name == "bow_senteval"
    enc.prepare(["a b", "c", "d e f"])
    assert enc.encode(["a b", "c"]).tolist() == [[2, 3], [1, 3]]


def test_load_errors_name_file_and_problem(user_file, tmp_path):
    with pytest.raises(SentprobeError, match="defines no batcher"):
        load_user_encoder(str(user_file))
    with pytest.raises(SentprobeError, match="has no 'nope'.*embed"):
        load_user_encoder(f"{user_file}:nope")
    with pytest.raises(SentprobeError, match="NOT_CALLABLE is a int"):
        load_user_encoder(f"{user_file}:NOT_CALLABLE")
    with pytest.raises(SentprobeError, match="no such file"):
        load_user_encoder(str(tmp_path / "missing.py"))
    with pytest.raises(SentprobeError, match="cannot import module"):
        load_user_encoder("no_such_module_xyz:thing")
    broken = tmp_path / "broken.py"
    broken.write_text("x = 1\ndef f(:\n")
    with pytest.raises(DataError, match="syntax error") as err:
        load_user_encoder(str(broken))
    assert err.value.line == 2
    crashing = tmp_path / "crashing.py"
    crashing.write_text("import senteval_not_installed\n")
    with pytest.raises(SentprobeError, match="crashing.py: running the file failed"):
        load_user_encoder(str(crashing))


def test_load_errors_for_a_non_python_file_and_an_empty_spec(tmp_path):
    """Both used to crash with AttributeError/TypeError instead of saying what is wrong."""
    text = tmp_path / "encoder.txt"
    text.write_text("x = 1\n")
    with pytest.raises(SentprobeError, match="encoder.txt: not a Python source file"):
        load_user_encoder(str(text))
    with pytest.raises(SentprobeError, match="encoder.txt: not a Python source file"):
        load_user_encoder(f"{text}:x")
    with pytest.raises(SentprobeError, match="empty encoder spec"):
        load_user_encoder("")
