"""An edit of one layer's hidden states inside a transformer's forward pass: the mechanics of
``run --intervene`` (evaluation/intervention.py).

An :class:`Edit` is an affine map of hidden vectors, fit on pooled sentence vectors of one
layer and applied to *every token's* hidden state of that layer, in the same coordinates:
``h -> h - sd * (((h - mean) / sd - bias) @ right.T @ left.T)``, the z-scored coordinates
(``mean``, ``sd`` of the pooled vectors it was fit on) in which post-hoc erasure works
(evaluation/erasure.py). Because the map is affine, the mean (or any one token) of edited
token states is the edit of the mean (of that token): the pooled vector of the edited layer is
exactly the post-hoc erased pooled vector (``max`` pooling excepted). :func:`leace_edit` is
LEACE (concept-erasure), :func:`random_edit` the control: the orthogonal projection removing a
random subspace of the same rank in the same z-scored coordinates, the basis drawn as
post-hoc erasure draws it. Rank 0 subtracts exactly zero: the hidden states are unchanged.

:func:`intervening` installs the edit: hidden state ``layer`` (0 = embedding output, as
``output_hidden_states`` counts) is the input of transformer block ``layer``, edited by a
forward pre-hook on that block, so every later block recomputes from the edited states; the
last hidden state (``layer == n_layers``) is edited by a forward hook on the base model's
output, where a language-model head reads it.

:func:`language_model` loads a checkpoint's causal or masked language-model head, and
:func:`lm_measures` reads the model's own output with it, plain or intervened, on the same
inputs: per sentence the mean negative log-likelihood of the tokens scored and the top-1
token at each. torch is imported inside functions.
"""

from __future__ import annotations

import contextlib
import logging
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from ..errors import SentprobeError

log = logging.getLogger(__name__)

#: Share of a sentence's tokens a masked language model is asked for (at least one).
MASKED_SHARE = 0.15


@dataclass
class Edit:
    """``h -> h - sd * (((h - mean) / sd - bias) @ right.T @ left.T)``; ``left`` (d, r),
    ``right`` (r, d), ``bias`` (d,), all in the z-scored coordinates of ``mean`` and ``sd``."""

    mean: np.ndarray
    sd: np.ndarray
    left: np.ndarray
    right: np.ndarray
    bias: np.ndarray
    rank: int

    def apply(self, X: np.ndarray) -> np.ndarray:
        """The edit of pooled vectors ``X`` (n, d), float64 arithmetic, float32 result."""
        X = np.asarray(X, dtype=np.float64)
        z = (X - self.mean) / self.sd - self.bias
        return (X - ((z @ self.right.T) @ self.left.T) * self.sd).astype(np.float32)

    def torch(self, like: Any) -> Any:
        """A function editing token states (..., d) in the dtype and on the device of
        ``like``, computed in float32 at least; rank 0 returns its input unchanged."""
        import torch

        work = torch.float64 if like.dtype == torch.float64 else torch.float32
        put = lambda a: torch.as_tensor(a, dtype=work, device=like.device)  # noqa: E731
        mean, sd, bias = put(self.mean), put(self.sd), put(self.bias)
        left, right = put(self.left), put(self.right)

        def edit(h: Any) -> Any:
            if self.rank == 0:
                return h
            x = h.to(work)
            z = (x - mean) / sd - bias
            return (x - ((z @ right.T) @ left.T) * sd).to(h.dtype)

        return edit


def scaling(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation per feature (a constant feature's sd taken as 1), as
    post-hoc erasure z-scores."""
    X64 = np.asarray(X, dtype=np.float64)
    mean, sd = X64.mean(0), X64.std(0)
    sd[sd == 0] = 1.0
    return mean, sd


def leace_edit(X: np.ndarray, labels: Sequence[str]) -> Edit:
    """LEACE fit on pooled vectors ``X`` (n, d) and their labels, in their z-scored
    coordinates (the fit of evaluation/erasure.py, as matrices)."""
    import torch
    from concept_erasure import LeaceFitter

    classes = sorted(set(labels))
    onehot = torch.zeros(len(labels), len(classes), dtype=torch.float64)
    onehot[torch.arange(len(labels)), torch.tensor([classes.index(y) for y in labels])] = 1.0
    mean, sd = scaling(X)
    scaled = (np.asarray(X, dtype=np.float64) - mean) / sd
    eraser = LeaceFitter.fit(torch.from_numpy(scaled), onehot).eraser
    rank = int(torch.linalg.matrix_rank(eraser.proj_left))
    bias = eraser.bias.numpy() if eraser.bias is not None else np.zeros(len(mean))
    return Edit(mean, sd, eraser.proj_left.numpy(), eraser.proj_right.numpy(), bias, rank)


def random_basis(dim: int, rank: int, seed: int) -> np.ndarray:
    """An orthonormal basis (dim, rank) of a random subspace: a seeded Gaussian matrix,
    orthonormalised (the draw of post-hoc erasure's control)."""
    basis, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((dim, rank)))
    return basis


def random_edit(rank: int, seed: int, mean: np.ndarray, sd: np.ndarray) -> Edit:
    """The control of an edit of ``rank`` in the coordinates of ``mean`` and ``sd``: the
    orthogonal projection removing a random ``rank``-dimensional subspace."""
    basis = random_basis(len(mean), rank, seed)
    return Edit(mean, sd, basis, basis.T.copy(), np.zeros(len(mean)), rank)


def transformer_blocks(model: Any, n_layers: int) -> Any:
    """The model's list of transformer blocks: the first ``ModuleList`` of ``n_layers``
    modules (BERT's ``encoder.layer``, GPT-2's ``h``, Llama's ``layers``)."""
    import torch

    for module in model.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == n_layers:
            return module
    raise SentprobeError(
        f"{type(model).__name__}: no list of {n_layers} transformer blocks found to intervene in"
    )


@contextlib.contextmanager
def intervening(model: Any, layer: int, n_layers: int, edit: Edit) -> Iterator[dict[str, Any]]:
    """Within the block, every forward pass of ``model`` has hidden state ``layer`` edited
    at every token. Yields a dict whose ``"state"`` is, after each pass, the edited hidden
    state (b, tokens, d) that the later blocks read (``output_hidden_states`` records a
    block's output before the next block's pre-hook, so its entry at ``layer`` is not it)."""
    if not 0 <= layer <= n_layers:
        raise SentprobeError(f"--intervene: layer {layer} is not among 0..{n_layers}")
    captured: dict[str, Any] = {}
    handles = []
    if layer < n_layers:
        block = transformer_blocks(model, n_layers)[layer]

        def pre(module: Any, args: tuple, kwargs: dict) -> Any:
            if args:
                h = args[0]
                new = edit.torch(h)(h)
                captured["state"] = new
                return (new, *args[1:]), kwargs
            h = kwargs["hidden_states"]
            new = edit.torch(h)(h)
            captured["state"] = new
            return args, {**kwargs, "hidden_states": new}

        handles.append(block.register_forward_pre_hook(pre, with_kwargs=True))
    else:
        base = getattr(model, "base_model", model)

        def post(module: Any, args: tuple, output: Any) -> Any:
            new = edit.torch(output.last_hidden_state)(output.last_hidden_state)
            captured["state"] = new
            output.last_hidden_state = new
            if getattr(output, "hidden_states", None) is not None:
                output.hidden_states = (*output.hidden_states[:-1], new)
            return output

        handles.append(base.register_forward_hook(post))
    try:
        yield captured
    finally:
        for handle in handles:
            handle.remove()


@dataclass
class LanguageModel:
    """A checkpoint's language model: ``kind`` ``causal`` (next-token) or ``masked``
    (masked-token); ``plain``: per list of sentences, the unintervened pass's
    :func:`lm_measures`."""

    kind: str
    model: Any
    plain: dict[tuple[str, ...], list[tuple[float, np.ndarray]]] = field(default_factory=dict)


def lm_kind(config: Any) -> str | None:
    """``masked`` or ``causal`` when ``config.architectures`` names a masked or causal
    language model of transformers' auto classes, else None (a base model, an encoder)."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    for arch in getattr(config, "architectures", None) or []:
        for kind, names in (
            ("masked", MODEL_FOR_MASKED_LM_MAPPING_NAMES),
            ("causal", MODEL_FOR_CAUSAL_LM_MAPPING_NAMES),
        ):
            if arch in set(names.values()):
                return kind
    return None


def language_model(encoder: Any) -> LanguageModel | None:
    """The language model of an ``HFEncoder``'s checkpoint, loaded once, in the encoder's
    dtype on its device; the encoder then reads its hidden states through that model's base
    (the same weights, one copy in memory). None when the checkpoint is no causal or masked
    language model, when the head's weights are not in it (a head drawn at random says
    nothing about the model) or, for a masked one, when the tokenizer has no mask token."""
    if hasattr(encoder, "_lm"):  # looked up before (None: the checkpoint has no LM head)
        return cast("LanguageModel | None", encoder._lm)
    encoder._load()
    kind = lm_kind(encoder.config)
    lm = None
    if kind == "masked" and encoder._tokenizer.mask_token_id is None:
        kind = None
    if kind is not None:
        from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

        auto = AutoModelForCausalLM if kind == "causal" else AutoModelForMaskedLM
        model, info = auto.from_pretrained(  # type: ignore[misc]
            encoder.model_name,
            revision=encoder.revision,
            trust_remote_code=encoder.trust_remote_code,
            output_loading_info=True,
        )
        if info["missing_keys"]:
            log.warning(
                "%s: no language-model measures: the checkpoint lacks %s",
                encoder.name,
                ", ".join(sorted(info["missing_keys"])[:3]),
            )
        else:
            weight = next(encoder._model.parameters())
            model = model.to(weight.device, dtype=weight.dtype).eval()
            encoder._model = model.base_model
            lm = LanguageModel(kind, model)
    encoder._lm = lm
    return lm


def masked_positions(text: str, n: int) -> np.ndarray:
    """Which of a sentence's ``n`` maskable tokens a masked language model is asked for:
    ``MASKED_SHARE`` of them (at least one), drawn with the CRC-32 of the text as seed, so
    the same for every pass over that text whatever its batch."""
    k = min(n, max(1, round(MASKED_SHARE * n)))
    rng = np.random.default_rng(zlib.crc32(text.encode("utf-8")))
    return np.sort(rng.choice(n, k, replace=False))


def lm_measures(
    encoder: Any,
    lm: LanguageModel,
    sentences: Sequence[str],
    intervention: tuple[int, Edit] | None = None,
) -> list[tuple[float, np.ndarray]]:
    """Per sentence: the mean negative log-likelihood (nats) of the tokens scored and the
    top-1 token predicted at each, with ``intervention`` (layer, edit) installed or plain.
    The input is the sentence as ``encoder`` tokenizes it (in its prompt, if any, cut at its
    token limit). Causal: every token after the first, predicted from the ones before it.
    Masked: the tokens :func:`masked_positions` picks among the non-special ones, all
    replaced by the mask token in one pass. No token scored: NaN and no tokens."""
    import torch

    from .hf import _TOKENIZER_LOCK, sorted_batches

    tok = encoder._tokenizer
    texts = [encoder.prompt.fill(s) for s in sentences] if encoder.prompt else list(sentences)
    out: list[tuple[float, np.ndarray]] = [(np.nan, np.empty(0, np.int64))] * len(texts)
    for idx in sorted_batches([len(t) for t in texts], encoder.batch_size):
        batch = [texts[i] for i in idx]
        with _TOKENIZER_LOCK:
            inputs = tok(
                batch, padding=True, truncation=True, max_length=encoder._max_len,
                return_tensors="pt",
            )  # fmt: skip
        ids, mask = inputs["input_ids"], inputs["attention_mask"].bool()
        if lm.kind == "masked":
            special = torch.isin(ids, torch.tensor(tok.all_special_ids)) | ~mask
            scored = torch.zeros_like(mask)
            for row, text in enumerate(batch):
                free = torch.nonzero(~special[row]).flatten()
                if len(free):
                    scored[row, free[masked_positions(text, len(free))]] = True
            inputs["input_ids"] = ids.masked_fill(scored, tok.mask_token_id)
            targets = ids
        else:
            if encoder._causal:  # as the encoder counts positions (left padding)
                inputs["position_ids"] = (mask.long().cumsum(1) - 1).clamp(min=0)
            scored = torch.zeros_like(mask)
            scored[:, :-1] = mask[:, :-1] & mask[:, 1:]  # position t predicts token t + 1
            targets = torch.roll(ids, -1, dims=1)
        edit = (
            intervening(lm.model, intervention[0], encoder.n_layers, intervention[1])
            if intervention is not None
            else contextlib.nullcontext()
        )
        with torch.inference_mode(), edit:
            logits = lm.model(**inputs.to(encoder.device), return_dict=True).logits
        picked = logits[scored.to(logits.device)].float()  # (tokens scored, vocabulary)
        nll = torch.nn.functional.cross_entropy(
            picked, targets[scored].to(picked.device), reduction="none"
        )
        top = picked.argmax(-1)
        counts = scored.sum(1).tolist()
        for i, row_nll, row_top in zip(
            idx, nll.cpu().split(counts), top.cpu().split(counts), strict=True
        ):
            if len(row_nll):
                out[i] = (float(row_nll.double().mean()), row_top.numpy())
    return out
