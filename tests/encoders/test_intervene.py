"""The mechanics of ``--intervene`` (encoders/intervene.py) on tiny random-weight models: the
hook edits exactly one hidden state, later layers recompute, rank 0 changes nothing, and the
control has LEACE's rank and coordinates."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sentprobe.encoders.intervene import (
    intervening,
    leace_edit,
    random_edit,
    transformer_blocks,
)
from sentprobe.evaluation.erasure import _leace, random_projection

pytest.importorskip("concept_erasure")
N_LAYERS = 3


def _models():
    from transformers import (
        BertConfig,
        BertModel,
        GPT2Config,
        GPT2LMHeadModel,
        LlamaConfig,
        LlamaModel,
    )

    torch.manual_seed(0)
    small = {"vocab_size": 100, "hidden_size": 16, "num_attention_heads": 2}
    return {
        "bert": BertModel(BertConfig(**small, num_hidden_layers=N_LAYERS, intermediate_size=32)),
        "gpt2": GPT2LMHeadModel(
            GPT2Config(
                vocab_size=100,
                n_embd=16,
                n_layer=N_LAYERS,
                n_head=2,
                bos_token_id=0,
                eos_token_id=1,
            )
        ),  # fmt: skip
        "llama": LlamaModel(
            LlamaConfig(
                **small,
                intermediate_size=32,
                num_hidden_layers=N_LAYERS,
                num_key_value_heads=2,
                bos_token_id=0,
                eos_token_id=1,
            )
        ),  # fmt: skip
    }


MODELS = _models()
IDS = torch.randint(2, 100, (6, 7), generator=torch.Generator().manual_seed(1))


def _states(model, **kw):
    with torch.inference_mode():
        out = model(input_ids=IDS, output_hidden_states=True, **kw)
    return out


def _edit(model, layer, rank_zero=False):
    """A LEACE edit fit on the mean-pooled hidden state ``layer`` of random labels."""
    h = _states(model).hidden_states[layer].mean(1).numpy()
    labels = ["a", "b", "a", "b", "b", "a"] if not rank_zero else ["a"] * 3 + ["b"] * 3
    edit = leace_edit(np.vstack([h, h]), labels + (labels if not rank_zero else labels[::-1]))
    return edit


@pytest.mark.parametrize("kind", sorted(MODELS))
@pytest.mark.parametrize("layer", range(N_LAYERS + 1))
def test_the_hook_edits_exactly_hidden_state_layer_and_later_layers_recompute(kind, layer):
    model = MODELS[kind].eval()
    plain = _states(model)
    edit = _edit(model, layer)
    assert edit.rank == 1
    with intervening(model, layer, N_LAYERS, edit) as got:
        edited = _states(model)
    for j in range(layer):  # before the edit: untouched
        assert torch.equal(edited.hidden_states[j], plain.hidden_states[j])
    expected = edit.torch(plain.hidden_states[layer])(plain.hidden_states[layer])
    assert torch.allclose(got["state"], expected, atol=1e-5)
    assert not torch.allclose(got["state"], plain.hidden_states[layer], atol=1e-4)
    for j in range(layer + 1, N_LAYERS + 1):  # after it: recomputed from the edited state
        assert not torch.allclose(edited.hidden_states[j], plain.hidden_states[j], atol=1e-4)
    if layer == N_LAYERS:
        assert torch.allclose(edited.hidden_states[-1], expected, atol=1e-5)
    if kind == "gpt2":  # the language-model head reads the edited states
        assert not torch.allclose(edited.logits, plain.logits, atol=1e-4)
    # the hook is gone after the block
    assert torch.equal(_states(model).hidden_states[-1], plain.hidden_states[-1])


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_an_edit_of_rank_zero_changes_nothing(kind):
    model = MODELS[kind].eval()
    plain = _states(model)
    edit = _edit(model, 1, rank_zero=True)  # every vector twice, once per label
    assert edit.rank == 0
    for layer in (0, 1, N_LAYERS):
        with intervening(model, layer, N_LAYERS, edit):
            edited = _states(model)
        for a, b in zip(edited.hidden_states, plain.hidden_states, strict=True):
            assert torch.equal(a, b)


def test_the_edit_of_every_token_is_the_edit_of_their_mean():
    """An affine edit commutes with the mean: the pooled edited layer is the post-hoc
    erased pooled vector, in the same z-scored coordinates as ``run --erase``."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 8)) * rng.uniform(0.01, 100, 8) + 3
    labels = ["a" if x[0] + x[3] / 50 > 3 else "b" for x in X]
    edit = leace_edit(X, labels)
    assert np.allclose(edit.apply(X), _leace(X, labels).erase(X), atol=1e-4)
    tokens = torch.tensor(rng.standard_normal((5, 9, 8)) * 10, dtype=torch.float32)
    pooled_then = edit.apply(tokens.mean(1).numpy())
    edited_then = edit.torch(tokens)(tokens).mean(1).numpy()
    assert np.allclose(pooled_then, edited_then, atol=1e-4)


def test_the_control_has_leaces_rank_and_coordinates():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 10)) * rng.uniform(0.1, 10, 10)
    labels = [str(int(x[0] > 0) + int(x[1] > 0)) for x in X]  # three labels: rank 2
    leace = leace_edit(X, labels)
    assert leace.rank == 2
    for seed in range(3):
        control = random_edit(leace.rank, seed, leace.mean, leace.sd)
        assert control.rank == leace.rank == np.linalg.matrix_rank(control.left)
        assert control.mean is leace.mean and control.sd is leace.sd
        post_hoc = random_projection(10, leace.rank, seed, leace.mean, leace.sd)
        assert np.allclose(control.apply(X), post_hoc(X), atol=1e-4)
        z = (control.apply(X) - leace.mean) / leace.sd
        assert np.allclose(z @ control.left, 0, atol=1e-4)  # the subspace is removed in z


def test_the_blocks_are_found_or_the_model_is_refused():
    from sentprobe.errors import SentprobeError

    assert len(transformer_blocks(MODELS["bert"], N_LAYERS)) == N_LAYERS
    with pytest.raises(SentprobeError, match="no list of 5 transformer blocks"):
        transformer_blocks(MODELS["bert"], 5)
    edit = _edit(MODELS["bert"], 0)
    with (
        pytest.raises(SentprobeError, match="not among 0..3"),
        intervening(MODELS["bert"], 4, 3, edit),
    ):
        pass
