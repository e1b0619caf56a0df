"""Hugging Face transformers models, encoders and decoder-only language models alike: one
layer or all layers, one pooling or several (:mod:`.pooling`), from one forward pass.

Also holds helpers the other torch-based encoders share (threads, length-sorted batching,
model fingerprints) and the background-thread prefetch that overlaps tokenizing with the
model's forward passes. Long because the encoder's loading and placement, CUDA batch sizing,
pipelined encoding and position ids belong together and the other torch encoders import
these helpers.
torch/transformers are imported inside functions so that importing this module stays cheap.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import queue
import threading
import time
import warnings
from collections.abc import Generator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..errors import SentprobeError, require
from ..parallel import thread_budget
from .base import Encoder
from .filehash import file_digests
from .pooling import POOLINGS, Prompt, check_poolings, parse_poolings, pool, token_positions

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Weights and activations dtypes (``--dtype``); pooled vectors are always float32.
DTYPES = ("float32", "bfloat16", "float16")
#: Share of the free CUDA memory an automatically sized batch may use.
CUDA_MEMORY_SHARE = 0.5
#: Commit part of a hub fingerprint when the commit could not be found.
UNRESOLVED = "unresolved"
# Held while tokenizing (tokenizers run in prefetch threads; a module lock, since locks do
# not pickle and encoders travel to Ray workers).
_TOKENIZER_LOCK = threading.Lock()
# Files in a model directory that never change the vectors.
_IGNORED_FILES = {"README.md", ".gitattributes", ".gitignore"}


def set_torch_threads(num_threads: int | None = None) -> None:
    """Use every core this process may run on (torch defaults to fewer in some containers)."""
    import torch

    num_threads = num_threads or thread_budget()  # a Ray job's or worker's share, or all
    if torch.get_num_threads() != num_threads:
        torch.set_num_threads(num_threads)


def check_dtype(dtype: str | None, device: str | None = None) -> str:
    """``dtype`` or float32; an unknown name, or float16 without CUDA, is a SentprobeError
    (raised when the encoder is built, before a run writes anything)."""
    if dtype is None:
        return "float32"
    if dtype not in DTYPES:
        raise SentprobeError(f"dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    if dtype == "float16":
        import torch

        torch_dtype(dtype, device or ("cuda" if torch.cuda.is_available() else "cpu"))
    return dtype


def torch_dtype(dtype: str, device: str) -> Any:
    """The torch dtype to run a model in on ``device``. float16 on a CPU is refused: PyTorch's
    CPU kernels for it are slow or missing for many ops, bfloat16 is the CPU's half type."""
    import torch

    if dtype == "float16" and not str(device).startswith("cuda"):
        raise SentprobeError(
            f"--dtype float16 needs a CUDA device (this model runs on {device}); "
            "use --dtype bfloat16 on a CPU"
        )
    return getattr(torch, dtype)


def dtype_suffix(dtype: str) -> str:
    """The fingerprint part of a dtype: none for float32, so existing caches stay valid."""
    return "" if dtype == "float32" else f"|dtype={dtype}"


def cuda_batch_size(
    free_bytes: int, states: int, tokens: int, hidden: int, heads: int, value_bytes: int
) -> int:
    """Sentences per batch that fit in ``CUDA_MEMORY_SHARE`` of ``free_bytes``: per sentence,
    the kept hidden states, four more activations of the running layer and its attention
    matrix, at the batch's longest ``tokens``; a power of two between 8 and 4096."""
    per_sentence = value_bytes * (tokens * hidden * (states + 4) + heads * tokens * tokens)
    fits = int(free_bytes * CUDA_MEMORY_SHARE) // max(per_sentence, 1)
    size = 8
    while size * 2 <= min(fits, 4096):
        size *= 2
    return size


def sorted_batches(lengths: Sequence[int], batch_size: int) -> Iterator[np.ndarray]:
    """Index batches of similar length (less padding); callers scatter results back by index."""
    order = np.argsort(np.asarray(lengths), kind="stable")
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def model_fingerprint(
    model: str | Path, revision: str | None = None, trust_remote_code: bool = False
) -> str:
    """Identify a model's weights without loading them.

    A local directory is identified by the names and contents of its files (a copied directory
    keeps its identity; two checkpoints with the same config and same-size weights do not share
    one); contents are hashed once per file version (:mod:`.filehash`). A hub name is identified
    by name, revision and the commit it resolves to (read from the config, which the hub cache
    keeps locally); when no commit can be found the fingerprint ends in ``:unresolved`` and
    reports mark the row (see :func:`is_unresolved`).
    """
    path = Path(model).expanduser()
    if path.is_dir():
        h = hashlib.sha1()
        files = []
        for f in sorted(
            Path(d, f) for d, _, names in os.walk(path, followlinks=True) for f in names
        ):
            rel = f.relative_to(path).as_posix()  # HF snapshots are symlinks into a blob store
            if f.name not in _IGNORED_FILES and not rel.startswith((".", "__")):
                files.append((rel, f))
        for (rel, _), digest in zip(files, file_digests([f for _, f in files]), strict=True):
            h.update(f"{rel}\0{digest}\0".encode())
        return f"dir:{h.hexdigest()[:16]}"
    commit = None
    if revision is not None and _is_sha(revision):
        commit = revision  # a full commit hash pins the weights by itself
    else:
        try:
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(
                str(model), revision=revision, trust_remote_code=trust_remote_code
            )
            commit = getattr(config, "_commit_hash", None)
        except Exception:  # offline and not cached: encoding will report the real problem
            pass
    return f"hub:{model}@{revision or 'main'}:{commit or UNRESOLVED}"


def check_model_exists(
    model: str | Path, revision: str | None = None, trust_remote_code: bool = False
) -> None:
    """A Hub name whose config cannot be read (a typo, or offline and not cached) fails here,
    in one line, before a run computes anything; a local directory was checked already."""
    if Path(model).expanduser().is_dir():
        return
    try:
        from transformers import AutoConfig

        AutoConfig.from_pretrained(
            str(model), revision=revision, trust_remote_code=trust_remote_code
        )
    except Exception as e:
        raise _load_error(model, e) from e


def is_unresolved(fingerprint: str) -> bool:
    """True for a hub model whose commit could not be found: its weights are not pinned."""
    return "hub:" in fingerprint and f":{UNRESOLVED}" in fingerprint


def model_label(model: str | Path) -> str:
    """A short row label: the model's base name, skipping generic directory names."""
    parts = Path(str(model).rstrip("/\\")).parts
    for part in reversed(parts):
        if part.startswith("models--"):  # hub cache: models--org--name/snapshots/<sha>
            return part.split("--")[-1]
        if part not in ("model", "models", "snapshots") and not _is_sha(part):
            return part
    return str(model)


def _is_sha(s: str) -> bool:
    return len(s) == 40 and all(c in "0123456789abcdef" for c in s)


def _load_error(model: str | Path, e: Exception) -> SentprobeError:
    problem = " ".join(str(e).split())  # transformers' messages span lines; ours is one
    return SentprobeError(
        f"could not load model {str(model)!r}: {type(e).__name__}: {problem}; give a local "
        "directory with config.json or a Hugging Face hub name (downloads need internet or a "
        "filled HF cache)"
    )


class HFEncoder(Encoder):
    """Hidden states of a transformers ``AutoModel`` (an encoder, or the base of a causal
    language model such as GPT-2 or Llama), pooled over tokens.

    ``layer``: an int (0 = embedding output, negative counts from the top), ``"last"``, or
    ``"all"`` for every hidden state from one forward pass. ``pooling``: one pooling or
    several, comma-separated (:mod:`.pooling`: ``mean``, ``max``, ``cls``, ``last``,
    ``pos:K``, ``marker:TEXT``). Every (layer, pooling) comes from the same forward pass: with
    ``layer="all"`` or several poolings the encoder has views, ``layer<K>`` (one pooling) or
    ``layer<K>/<pooling>``, each probed and reported as its own row. ``prompt``: a template
    with one ``{}`` that each sentence is put into before tokenizing (part of the
    fingerprint). Sentences are passed as given (Moses-tokenized in SentEval data).

    Placement: ``device`` (cuda or cpu; cuda when there is one), or ``device_map`` (e.g.
    ``"auto"``, needs the ``accelerate`` package): the weights are spread over the GPUs, the
    CPU and, with ``offload_folder``, the disk as ``max_memory`` allows, and a layer whose
    weights are not on the GPU is brought there for its part of each forward pass. The
    vectors do not depend on the placement, so it is not in the fingerprint.
    """

    def __init__(
        self,
        model: str | Path,
        layer: int | str = "last",
        pooling: str | Sequence[str] = "mean",
        batch_size: int | None = None,
        max_length: int | None = None,
        revision: str | None = None,
        device: str | None = None,
        num_threads: int | None = None,
        trust_remote_code: bool = False,
        name: str | None = None,
        dtype: str | None = None,
        prompt: str | None = None,
        device_map: str | dict[str, Any] | None = None,
        max_memory: dict[Any, Any] | None = None,
        offload_folder: str | Path | None = None,
    ) -> None:
        poolings = parse_poolings(pooling)
        self.prompt = Prompt(prompt) if prompt is not None else None
        check_poolings(poolings, self.prompt)
        if isinstance(layer, str) and layer.lstrip("-").isdigit():
            layer = int(layer)
        if not (isinstance(layer, int) or layer in ("last", "all")):
            raise SentprobeError(f"layer must be an int, 'last' or 'all', not {layer!r}")
        local = Path(model).expanduser()
        if local.is_dir() and not (local / "config.json").is_file():
            # transformers would go on to a multi-line tokenizer or hub error
            raise SentprobeError(
                f"{local}: no config.json in {local} (a Hugging Face model directory holds "
                "config.json beside its weights)"
            )
        if device_map is not None:
            if device is not None:
                raise SentprobeError("give device or device_map, not both")
            require("accelerate", "offload", "device_map (layers spread over devices)")
        self.model_name = str(model)
        self.layer = layer
        self.poolings = poolings
        self.pooling = ",".join(poolings)
        #: None: 32 on a CPU, sized from free memory on CUDA (``prepare``)
        self.auto_batch = batch_size is None
        self.batch_size = 32 if batch_size is None else batch_size
        self.max_length = max_length
        self.revision = revision
        self.device = device
        self.device_map, self.max_memory = device_map, max_memory
        self.offload_folder = None if offload_folder is None else str(offload_folder)
        self.num_threads = num_threads
        self.trust_remote_code = trust_remote_code
        self.dtype = check_dtype(dtype, device)
        label = model_label(model) if name is None else name
        if name is None and len(poolings) == 1 and self.pooling != "mean":
            label += f"-{self.pooling}"
        if name is None and isinstance(layer, int) and len(poolings) == 1:
            label += f"@layer{layer}"
        self.name = label
        self._fingerprint: str | None = None
        # transformers objects, loaded on first use (transformers has no type information)
        self._config: Any = None
        self._model: Any = None
        self._tokenizer: Any = None
        self._causal = False

    # -- identity -----------------------------------------------------------------------
    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            weights = model_fingerprint(self.model_name, self.revision, self.trust_remote_code)
            prompt = "" if self.prompt is None else f"|prompt={json.dumps(self.prompt.template)}"
            self._fingerprint = (
                f"hf|{weights}|layer={self.layer}|pool={self.pooling}|max_len={self.max_length}"
                + dtype_suffix(self.dtype)
                + prompt
            )
        return self._fingerprint

    @property
    def config(self) -> Any:
        if self._config is None:
            from transformers import AutoConfig

            try:
                self._config = AutoConfig.from_pretrained(
                    self.model_name,
                    revision=self.revision,
                    trust_remote_code=self.trust_remote_code,
                )
            except Exception as e:
                raise _load_error(self.model_name, e) from e
        return self._config

    @property
    def n_layers(self) -> int:
        """Number of transformer layers (hidden states are this + 1, with the embeddings)."""
        cfg = getattr(self.config, "text_config", None) or self.config
        for attr in ("num_hidden_layers", "n_layer", "num_layers"):
            if isinstance(getattr(cfg, attr, None), int):
                return getattr(cfg, attr)
        raise SentprobeError(f"{self.model_name}: config does not say how many layers it has")

    @property
    def layers(self) -> list[int]:
        """The hidden states read, as indices 0..n_layers."""
        if self.layer == "all":
            return list(range(self.n_layers + 1))
        if self.layer == "last":
            return [self.n_layers]
        layer = int(self.layer)
        if not -self.n_layers - 1 <= layer <= self.n_layers:
            raise SentprobeError(
                f"{self.model_name} has hidden states 0..{self.n_layers}; layer={self.layer}"
            )
        return [layer % (self.n_layers + 1)]

    @property
    def views(self) -> list[str] | None:
        if len(self.poolings) > 1:
            return [f"layer{i}/{p}" for i in self.layers for p in self.poolings]
        if self.layer != "all":
            return None
        return [f"layer{i}" for i in self.layers]

    # -- loading ------------------------------------------------------------------------
    def _load(self):
        if self._model is not None:
            return
        import torch
        from transformers import AutoModel, AutoTokenizer

        set_torch_threads(self.num_threads)
        kwargs = {"revision": self.revision, "trust_remote_code": self.trust_remote_code}
        started = time.perf_counter()
        gpu = "cuda" if torch.cuda.is_available() else "cpu"
        # with a device map the inputs stay on the CPU: accelerate's hooks move them
        self.device = "cpu" if self.device_map is not None else self.device or gpu
        dtype = torch_dtype(self.dtype, gpu if self.device_map is not None else self.device)
        placement = {} if self.device_map is None else {"device_map": self.device_map}
        if placement:
            placement |= {"dtype": dtype, "max_memory": self.max_memory}
            placement["offload_folder"] = self.offload_folder
        try:
            tokenizer = AutoTokenizer.from_pretrained(self.model_name, **kwargs)
            model = AutoModel.from_pretrained(self.model_name, **kwargs, **placement)
        except Exception as e:
            raise _load_error(self.model_name, e) from e
        if getattr(model.config, "is_encoder_decoder", False):
            model = model.get_encoder()  # T5, BART...: probe the encoder stack
        if tokenizer.pad_token is None:  # GPT-2 style tokenizers have none
            tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
        if any(p.startswith("marker:") for p in self.poolings) and not tokenizer.is_fast:
            raise SentprobeError(
                f"{self.model_name}: marker pooling needs a fast (Rust) tokenizer, which "
                "tells the characters of each token; this model has a slow one"
            )
        self._causal = is_causal(model)
        if self.device_map is None:
            model = model.to(self.device, dtype=dtype)
        self._model = model.eval()
        self._tokenizer = tokenizer
        log.info(
            "%s: loaded %s (revision %s) on %s, dtype %s, in %.1f s",
            self.name,
            self.model_name,
            self.revision or "default",
            self.device if self.device_map is None else getattr(model, "hf_device_map", "?"),
            self.dtype,
            time.perf_counter() - started,
        )
        if self.max_length is None:
            limits = [512, getattr(model.config, "max_position_embeddings", None)]
            limits.append(tokenizer.model_max_length)
            self._max_len = min(x for x in limits if isinstance(x, int) and x > 0)
        else:
            self._max_len = self.max_length
        self.layers  # noqa: B018 - a layer out of range fails here, before encoding

    def check_loadable(self) -> None:
        if self._model is None:
            check_model_exists(self.model_name, self.revision, self.trust_remote_code)

    def probe_checks(self, sentences: Sequence[str], language: str) -> dict[str, Any]:
        """Test sentences longer than the model's token limit (:func:`cut_checks`)."""
        self._load()
        texts = [self.prompt.fill(s) for s in sentences] if self.prompt else list(sentences)
        return cut_checks(self, self._tokenizer, texts, self._max_len)

    # -- encoding -----------------------------------------------------------------------
    def prepare(self, sentences: Sequence[str]) -> None:
        """Check that every sentence has the token each ``pos:``/``marker:`` pooling picks
        (before anything is encoded: a run fails whole, not part-way); on CUDA without a
        given batch size: the largest batch the free memory holds for the longest of
        ``sentences`` (the ones about to be encoded)."""
        if not sentences:
            return
        if any(p == "cls" or p.startswith("pos:") for p in self.poolings):
            self._load()
            warn_fixed_prefix(self)
        if any(p not in POOLINGS for p in self.poolings):  # pos:/marker: pick a token
            self._load()
            for start in range(0, len(sentences), 1024):
                self._tokenize(sentences[start : start + 1024])  # raises on a bad sentence
        if not self.auto_batch:
            return
        self._load()
        if str(self.device).startswith("cuda"):
            self.batch_size = self._cuda_batch_size(sentences)

    def _cuda_batch_size(self, sentences: Sequence[str]) -> int:
        import torch

        longest = max(sentences, key=len)
        text = self.prompt.fill(longest) if self.prompt else longest
        tokens = len(self._tokenizer(text, truncation=True, max_length=self._max_len).input_ids)
        cfg = getattr(self.config, "text_config", None) or self.config
        free, _ = torch.cuda.mem_get_info(self.device)
        return cuda_batch_size(
            free,
            states=(self.n_layers + 1) if self.layer != "last" else 1,
            tokens=tokens,
            hidden=int(getattr(cfg, "hidden_size", 1024)),
            heads=int(getattr(cfg, "num_attention_heads", 16)),
            value_bytes=getattr(torch, self.dtype).itemsize,
        )

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        sentences = list(sentences)
        self._load()
        n_out = len(self.views) if self.views else 1
        out: np.ndarray | None = None
        order = list(sorted_batches([len(s) for s in sentences], self.batch_size))
        stream = self.encode_batches([sentences[i] for i in idx] for idx in order)
        with contextlib.closing(stream):
            for idx, pooled in zip(order, stream, strict=True):
                if out is None:
                    out = np.empty((len(sentences), n_out, pooled.shape[-1]), dtype=np.float32)
                out[idx] = pooled.reshape(len(idx), n_out, -1)
        if out is None:  # no sentences
            dim = getattr(self.config, "hidden_size", 0)
            out = np.empty((0, n_out, dim), dtype=np.float32)
        return out if self.views else out[:, 0]

    def encode_batches(self, batches: Iterable[Sequence[str]]) -> Generator[np.ndarray, None, None]:
        """``encode`` of each of ``batches`` in turn, each batch tokenized in a background
        thread while the one before it runs through the model (:func:`prefetched`): the
        Rust tokenizer releases the GIL, so tokenizing overlaps the forward pass. The
        embedding cache feeds its batches through this."""
        import torch

        self._load()
        tokenized = prefetched(self._tokenize(batch) for batch in batches)
        try:
            for inputs in tokenized:
                with torch.inference_mode():  # not across the yield: it is thread state
                    pooled = self._encode_tokens(inputs.to(self.device))
                yield pooled if self.views else pooled[:, 0]
        finally:
            tokenized.close()  # stops the tokenizer thread (an error or interrupt here)

    def _tokenize(self, batch: Sequence[str]) -> Any:
        """The batch tokenized (in its prompt), with the token of each position pooling
        under ``positions:<pooling>`` (taken out again before the forward pass)."""
        texts = [self.prompt.fill(s) for s in batch] if self.prompt else list(batch)
        markers = any(p.startswith("marker:") for p in self.poolings)
        with _TOKENIZER_LOCK:  # a fast tokenizer's padding settings are shared state
            cut = warn_cut(self, self._tokenizer, texts, self._max_len)
            if cut:
                warn_last_moved(self, cut)
            inputs = self._tokenizer(
                texts,
                padding=True,
                truncation=True,
                max_length=self._max_len,
                return_tensors="pt",
                return_offsets_mapping=markers,
            )
        offsets = inputs.pop("offset_mapping", None)
        mask = inputs["attention_mask"].bool()
        positions = token_positions(self.poolings, mask, batch, self.prompt, offsets)
        for p, index in positions.items():
            inputs[f"positions:{p}"] = index
        return inputs

    def _encode_tokens(self, inputs: Any) -> np.ndarray:
        """Pooled hidden states (b, views, dim) of one tokenized batch, layer by layer and
        each layer's poolings in ``self.poolings``' order."""
        positions = {
            p: inputs.pop(f"positions:{p}") for p in self.poolings if f"positions:{p}" in inputs
        }
        mask = inputs["attention_mask"]
        if self._causal:  # left padding: count positions from each row's first real token
            inputs["position_ids"] = (mask.long().cumsum(1) - 1).clamp(min=0)
        hidden_states = self.layer != "last"
        result = self._model(**inputs, output_hidden_states=hidden_states, return_dict=True)
        if self.layer == "last":
            states = [result.last_hidden_state]
        else:
            if len(result.hidden_states) != self.n_layers + 1:
                raise SentprobeError(
                    f"{self.model_name}: got {len(result.hidden_states)} hidden states, "
                    f"expected {self.n_layers + 1}"
                )
            states = [result.hidden_states[i] for i in self.layers]
        del result  # the pooling scratch may reuse the memory of states not kept
        if self.device_map is not None:  # layers on several devices: pool on the last one's
            states = [h.to(states[-1].device) for h in states]
        mask = mask.bool().to(states[0].device)
        pooled = [pool(states, mask, p, positions.get(p)) for p in self.poolings]
        out = pooled[0] if len(pooled) == 1 else stack_poolings(pooled)
        return out.cpu().numpy()


def stack_poolings(pooled: Sequence[Any]) -> Any:
    """Per-pooling (b, layers, dim) tensors as one (b, layers * poolings, dim), layer-major."""
    import torch

    stacked = torch.stack(list(pooled), dim=2)
    return stacked.reshape(stacked.shape[0], -1, stacked.shape[-1])


def is_causal(model: Any) -> bool:
    """True for a left-to-right language model's base (GPT-2, Llama...): its positions are
    counted from the first real token, so a left-padded batch needs ``position_ids``. Models
    that also have a masked-LM head (BERT, RoBERTa) count positions their own way."""
    import inspect

    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    kind = getattr(model.config, "model_type", None)
    return (
        kind in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
        and kind not in MODEL_FOR_MASKED_LM_MAPPING_NAMES
        and not getattr(model.config, "is_encoder_decoder", False)
        and "position_ids" in inspect.signature(model.forward).parameters
    )


def cut_sentences(tokenizer: Any, sentences: Sequence[str], limit: int) -> list[str]:
    """The ``sentences`` longer than ``limit`` tokens. Only sentences of over ``limit - 8``
    UTF-8 bytes can be that long (no tokenizer makes more tokens than bytes, plus a few
    special ones), so most are not tokenized at all."""
    long = [s for s in sentences if len(s.encode("utf-8")) + 8 > limit]
    if not long:
        return []
    ids = tokenizer(long, truncation=False, verbose=False)["input_ids"]
    return [s for s, tokens in zip(long, ids, strict=True) if len(tokens) > limit]


def cut_checks(encoder: Encoder, tokenizer: Any, sentences: Sequence[str], limit: int) -> dict:
    """``probe_checks`` of a model with a token limit: a warning, stored with every result of
    the task (so it shows in ``report`` whether the vectors were encoded or read from the
    cache), when test sentences are longer than the limit."""
    cut = cut_sentences(tokenizer, sentences, limit)
    if not cut:
        return {}
    return {
        "warnings": [
            f"{len(cut)} of {len(sentences)} test sentences are longer than the model's limit "
            f"of {limit} tokens and cut to it, so words past it are not in their vectors "
            f"(e.g. {cut[0][:60]!r}...)"
        ]
    }


def fixed_prefix(tokenizer: Any, prompt: Prompt | None) -> list[str]:
    """The tokens every input starts with whatever its sentence: special tokens (a BOS) and
    the prompt template's text before the sentence, found as the tokens that inputs of a few
    very different sentences share (a prefix token that merges with the sentence's first
    characters is not counted)."""
    fill = prompt.fill if prompt is not None else (lambda s: s)
    ids = [tokenizer(fill(s))["input_ids"] for s in ("Hello", "zebra 7", "(", "Öl ok", "1")]
    n = 0
    while all(len(i) > n for i in ids) and len({i[n] for i in ids}) == 1:
        n += 1
    return [str(t) for t in tokenizer.convert_ids_to_tokens(ids[0][:n])]


def warn_fixed_prefix(encoder: HFEncoder) -> None:
    """In a left-to-right model the state at a token has seen only the tokens up to it:
    ``cls`` or ``pos:K`` on a token of the fixed prefix (a BOS, the prompt's start) is the
    same vector for every sentence. Warned once per encoder, naming the token read."""
    if not encoder._causal or getattr(encoder, "_warned_prefix", False):
        return
    prefix = fixed_prefix(encoder._tokenizer, encoder.prompt)
    for p in encoder.poolings:
        k = 0 if p == "cls" else int(p.partition(":")[2]) if p.startswith("pos:") else -1
        if 0 <= k < len(prefix):
            encoder._warned_prefix = True  # type: ignore[attr-defined]
            warnings.warn(
                f"{encoder.name}: pooling {p} reads token {k} of every input, {prefix[k]!r}, "
                f"which is part of what every input starts with ({prefix!r}: special tokens "
                "and the prompt's start); in a left-to-right model it has seen nothing of the "
                "sentence, so every sentence gets the same vector. Use last, mean, "
                f"pos:{len(prefix)} or later, or marker:TEXT",
                stacklevel=2,
            )
            return


def warn_last_moved(encoder: HFEncoder, cut: Sequence[str]) -> None:
    """With a prompt whose template goes on after the sentence, an input cut at the token
    limit loses the template's end: ``last`` (and ``pos:-K``) then read a token of the
    sentence, not the template's last one. Warned once per encoder, naming the token read."""
    prompt, tokenizer = encoder.prompt, encoder._tokenizer
    ends = [p for p in encoder.poolings if p == "last" or p.startswith("pos:-")]
    if (
        prompt is None
        or not prompt.parts[1]
        or not ends
        or getattr(tokenizer, "truncation_side", "right") != "right"
        or getattr(encoder, "_warned_last", False)
    ):
        return
    encoder._warned_last = True  # type: ignore[attr-defined]
    ids = tokenizer(cut[0], truncation=True, max_length=encoder._max_len)["input_ids"]
    read = tokenizer.convert_ids_to_tokens(ids[-1:])[0]
    warnings.warn(
        f"{encoder.name}: pooling {ends[0]} reads the last token kept of an input longer than "
        f"{encoder._max_len} tokens, and the cut removes the prompt template's end: for "
        f"...{cut[0][-60:]!r} it reads {read!r}, a token of the sentence, not the template's "
        f"last token ({len(cut)} such inputs in one batch); shorten the sentences or give a "
        "larger max_length",
        stacklevel=2,
    )


def warn_cut(encoder: Encoder, tokenizer: Any, sentences: Sequence[str], limit: int) -> list[str]:
    """Warn (once per encoder) that sentences longer than the model's ``limit`` tokens are cut
    there: what follows is not in their vectors, so a task decided late in a long sentence
    scores chance and two sentences that differ only past the limit get one vector. Returns
    the inputs cut (none once the encoder has warned)."""
    if getattr(encoder, "_warned_cut", False):
        return []
    cut = cut_sentences(tokenizer, sentences, limit)
    if cut:
        encoder._warned_cut = True  # type: ignore[attr-defined]
        warnings.warn(
            f"{encoder.name}: sentences longer than the model's limit of {limit} tokens are cut "
            f"to it, so words past it are not in their vectors (e.g. {cut[0][:60]!r}...; "
            f"{len(cut)} of {len(sentences)} in one batch); shorten them, or give max_length "
            "where the model takes longer input",
            stacklevel=2,
        )
    return cut


def prefetched(items: Iterable[T], depth: int = 2) -> Generator[T, None, None]:
    """``items``, produced up to ``depth`` ahead by a background thread (bounded: at most
    ``depth`` items wait). An exception in the thread is raised here, at the item where it
    happened; closing the generator (the caller failed or was interrupted) stops the thread
    and waits for it, so nothing runs on after the caller's ``finally``."""
    box: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(entry: tuple[bool, Any]) -> bool:
        while not stop.is_set():
            try:
                box.put(entry, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
        except BaseException as e:  # handed to the consumer, which raises it
            put((False, e))
            return
        put((False, None))

    thread = threading.Thread(target=produce, name="sentprobe-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            ok, value = box.get()
            if ok:
                yield value
            elif value is None:
                return
            else:
                raise value
    finally:
        stop.set()
        thread.join()
