"""Is a property *used* by the model? ``run --intervene TASK``: TASK's property erased inside
the forward pass at one layer, the later layers recomputing (amnesic probing, Elazar et al.
2021), against random-subspace controls of the same rank.

For a Hugging Face model (:class:`~sentprobe.encoders.hf.HFEncoder`, encoder or decoder-only,
one pooling, ``--layer all`` or one layer) and each layer ℓ it reads, a LEACE edit is fit on
layer ℓ's pooled vectors of TASK's **training** items (the plain vectors, from the embedding
cache) in their z-scored coordinates, and applied to every token's hidden state at layer ℓ
(encoders/intervene.py); each control removes a random subspace of the same rank in the same
coordinates (seeds 0, 1, ...). Each intervention is a row of its own
(:class:`InterventionEncoder`): its views are the hidden states ℓ..last, recomputed. TASK is
probed on each of them and every other task on the last (cross-fitted within the test split,
:func:`held_out`: items no edit was fit on); TASK read again from later layers is the
*recovery* curve. Each result of the last layer also records, per test item of its task,
what tells whether the model's output changed:

- ``cosine``: the cosine of the intervened final sentence vector to the plain one;
- ``reader`` / ``reader_plain``: whether a probe trained on the *plain* final vectors of the
  task's training split (the run's probe, seed 0; "the reader") is right on the intervened /
  plain final vector: the drop is the property's use as the plain output's reader sees it;
- ``seen``: the indices of test items among the sentences the edit was fit on (left out of
  every measure).

When the checkpoint is a causal or masked language model with its head
(encoders/intervene.py, :func:`~sentprobe.encoders.intervene.language_model`), the result of
the intervened task itself also records the language model's own output (``lm``: its kind;
None for a model without a head): per test item ``lm_loss_plain`` / ``lm_loss``, the mean
negative log-likelihood of the tokens scored without / with the edit, and ``lm_top1_agree``,
the share of those tokens whose top-1 prediction the edit left unchanged; the same on
neutral text as ``lm_neutral_*`` (:func:`neutral_sentences`, named in
``lm_neutral_source``).

The identity of a row: the plain fingerprint, then ``|erase:intervene:KIND@layerL[train]:
TASK(LANG,HASH):vVERSION`` (KIND ``leace`` or ``random:seedS``; evaluation/identity.py), so
intervened rows are never merged with plain rows, post-hoc erasure rows or each other.
analysis/intervention.py turns them into effects with paired CIs and tests against the
controls.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sentprobe.datasets import ProbingTask
from sentprobe.encoders.base import Encoder
from sentprobe.encoders.cache import Vectors
from sentprobe.encoders.hf import HFEncoder, sorted_batches
from sentprobe.encoders.intervene import (
    Edit,
    LanguageModel,
    intervening,
    language_model,
    leace_edit,
    lm_measures,
    random_edit,
)
from sentprobe.errors import SentprobeError, require
from sentprobe.evaluation.erasure import erasure_record, heldout_task, named_tasks
from sentprobe.evaluation.identity import ERASE_MARK

#: Bumped whenever a change alters intervened vectors or what their results record (part
#: of each row's identity).
VERSION = "2"
#: Every intervention's erasure spec starts with this (post-hoc erasure reports skip them).
PREFIX = "intervene:"
#: Random controls (seeds 0, 1, ...) per intervention by default.
CONTROL_SEEDS = 3
#: The shipped task whose test sentences, in the intervened task's language, are the
#: neutral text of the language-model measures.
NEUTRAL = "sample-{language}/SentLen"


def intervened_tasks(names: Sequence[str], tasks: Sequence[ProbingTask]) -> list[ProbingTask]:
    """The tasks ``--intervene`` names (a full name or the short name: every task of that
    name), each with a training split of two labels to fit the edit on and a test split the
    measures are read on; an unknown name is an error naming the run's tasks."""
    if names:
        require("concept_erasure", "erasure", "--intervene")
    chosen = named_tasks("--intervene", names, tasks)
    for name, task in chosen:
        train = task.splits.get("train")
        if train is None or len(set(train.labels)) < 2 or "test" not in task.splits:
            raise SentprobeError(
                f"--intervene {name}: {task.name} has no training split with two labels "
                "to fit the edit on, or no test split"
            )
    return [task for _, task in chosen]


def neutral_sentences(task: ProbingTask) -> tuple[str, list[str]]:
    """The neutral text the language-model measures are also read on: the test sentences of
    the shipped ``sample-LANG/SentLen`` in ``task``'s language (drawn by length alone, not
    for any property), without ``task``'s own sentences, and its name with its content
    hash; ("", []) where none is shipped."""
    from sentprobe.datasets.builtin import resolve_tasks

    name = NEUTRAL.format(language=task.metadata.language)
    try:
        (neutral,) = resolve_tasks(name)
    except SentprobeError:
        return "", []
    own = set(task.sentences())
    kept = [s for s in neutral.splits["test"].sentences if s not in own]
    return f"{name} ({neutral.content_hash()[:8]}, test)", kept


def check_intervenable(encoder: Encoder) -> HFEncoder:
    """The encoder a run intervenes in: a Hugging Face model on one device with one pooling
    that is a token's state or the mean of them (an affine edit of every token is then the
    same edit of the pooled vector; of a maximum it is not)."""
    if not isinstance(encoder, HFEncoder):
        raise SentprobeError(
            f"--intervene: {encoder.name} is not a Hugging Face model (hf:MODEL, a model "
            "directory, or minilm with --layer/--pooling); its forward pass cannot be edited"
        )
    if len(encoder.poolings) > 1 or encoder.poolings[0] == "max":
        raise SentprobeError(
            f"--intervene: {encoder.name} pools with {encoder.pooling}; give one pooling "
            "other than max (the edit of every token is then the edit of the pooled vector)"
        )
    if encoder.device_map is not None:
        raise SentprobeError("--intervene runs the model on one device, without --device-map")
    return encoder


def all_layers(encoder: HFEncoder) -> HFEncoder:
    """``encoder`` reading every hidden state (itself when it does): the plain vectors an
    edit is fit on (layer ℓ) and the intervened final vectors are compared with."""
    if encoder.layer == "all":
        return encoder
    twin = copy.copy(encoder)
    twin.layer, twin._fingerprint = "all", None
    return twin


def held_out(task: ProbingTask) -> ProbingTask:
    """``task`` as an intervened row is probed on it: cross-fitted within its test split
    (stratified folds, evaluation/erasure.py's held-out check), items no edit was fit on;
    its own name and content hash, and the task itself as ``original``."""
    made = heldout_task(task, "train+dev")
    made.original = task  # type: ignore[attr-defined]
    return made


class Reader:
    """Per task, a probe trained on the plain final vectors of its training split (dev for
    its selection), the run's probe with seed 0: what reads the model's output."""

    def __init__(self, make: Callable[[ProbingTask], Any], final: Callable[[list[str]], Any]):
        self.make, self.final = make, final
        self._fitted: dict[int, Any] = {}

    def probe(self, task: ProbingTask) -> Any:
        if id(task) not in self._fitted:
            est = self.make(task)
            train, dev = task.splits["train"], task.splits.get("dev")
            more = (self.final(dev.sentences), dev.labels) if dev is not None else ()
            est.fit(self.final(train.sentences), train.labels, *more)
            self._fitted[id(task)] = est
        return self._fitted[id(task)]

    def correct(self, task: ProbingTask, X: np.ndarray) -> list[int]:
        gold = np.asarray(task.splits["test"].labels)
        return (np.asarray(self.probe(task).predict(X)) == gold).astype(int).tolist()


class InterventionEncoder(Encoder):
    """``plain`` (an :class:`HFEncoder` reading every layer) with ``task``'s property edited
    out of hidden state ``layer`` inside the forward pass (``method`` ``leace``; or
    ``random``: a random subspace of LEACE's rank in LEACE's coordinates, drawn with
    ``seed``; ``leace``: that LEACE intervention, whose edit it reuses). ``base``: the plain
    vectors of the run's sentences (``index``: sentence -> row), which the edit is fit on
    and the final vectors are compared with; ``reader``: the plain final vectors' probes.
    Views: hidden states ``layer``..last."""

    uses_seed = False
    prepare_per_task = False

    def __init__(
        self,
        plain: HFEncoder,
        task: ProbingTask,
        layer: int,
        method: str,
        base: Vectors,
        index: dict[str, int],
        reader: Reader | None = None,
        seed: int = 0,
        leace: InterventionEncoder | None = None,
    ) -> None:
        self.plain, self.task, self.layer, self.method, self.seed = plain, task, layer, method, seed
        self.base, self.index, self.reader = base, index, reader
        self.leace = self if method == "leace" else leace
        if self.leace is None:
            raise SentprobeError("a random intervention needs its LEACE intervention")
        meta = task.metadata
        what = f"{task.name}({meta.language},{task.content_hash()[:8]})"
        kind = "leace" if method == "leace" else f"random:seed{seed}"
        self.spec = f"{PREFIX}{kind}@layer{layer}[train]:{what}:v{VERSION}"
        short = meta.paper_name or task.name
        self.name = (
            f"{plain.name} ⊘{short}@L{layer}"
            if method == "leace"
            else f"{plain.name} ⊘random{seed}({short})@L{layer}"
        )
        self.n_layers = plain.n_layers
        self._edit: Edit | None = None
        self._final: dict[str, np.ndarray] = {}
        self._lm: dict[str, Any] | None = None

    @property
    def fingerprint(self) -> str:
        return f"{self.plain.fingerprint}{ERASE_MARK}{self.spec}"

    @property
    def views(self) -> list[str]:
        return [f"layer{j}" for j in range(self.layer, self.n_layers + 1)]

    @property
    def edit(self) -> Edit:
        """The edit, fit on first use (LEACE on the plain layer's training vectors)."""
        if self._edit is None:
            if self.method == "leace":
                train = self.task.splits["train"]
                rows = np.fromiter((self.index[s] for s in train.sentences), np.int64)
                self._edit = leace_edit(self.base.take(rows, self.layer), train.labels)
            else:
                fit = self.leace.edit  # type: ignore[union-attr]
                self._edit = random_edit(fit.rank, self.seed, fit.mean, fit.sd)
        return self._edit

    def plain_vectors(self, sentences: Sequence[str], layer: int) -> np.ndarray:
        rows = np.fromiter((self.index[s] for s in sentences), np.int64, len(sentences))
        return self.base.take(rows, layer)

    # -- encoding -----------------------------------------------------------------------
    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        import torch

        from sentprobe.encoders.pooling import pool

        enc = self.plain
        enc._load()
        sentences = list(sentences)
        out = np.empty((len(sentences), len(self.views), 0), dtype=np.float32)
        for idx in sorted_batches([len(s) for s in sentences], enc.batch_size):
            inputs = enc._tokenize([sentences[i] for i in idx]).to(enc.device)
            p = enc.poolings[0]
            positions = inputs.pop(f"positions:{p}", None)
            mask = inputs["attention_mask"]
            if enc._causal:
                inputs["position_ids"] = (mask.long().cumsum(1) - 1).clamp(min=0)
            with (
                torch.inference_mode(),
                intervening(enc._model, self.layer, self.n_layers, self.edit) as got,
            ):
                result = enc._model(**inputs, output_hidden_states=True, return_dict=True)
            states = list(result.hidden_states[self.layer :])
            states[0] = got["state"]  # what the later blocks read: the edited state
            pooled = pool(states, mask.bool(), p, positions).cpu().numpy()
            if out.shape[2] == 0:
                out = np.empty((len(sentences), len(self.views), pooled.shape[-1]), np.float32)
            out[idx] = pooled
        for s, v in zip(sentences, out[:, -1], strict=True):
            self._final[s] = v
        return out

    def final(self, sentences: Sequence[str]) -> np.ndarray:
        """The intervened last-layer vectors of ``sentences`` (kept from encoding)."""
        missing = [s for s in dict.fromkeys(sentences) if s not in self._final]
        if missing:
            self.encode(missing)
        return np.stack([self._final[s] for s in sentences])

    def lm_output(self, lm: LanguageModel, sentences: Sequence[str], prefix: str) -> dict:
        """The language-model measures of ``sentences`` (module docstring), under
        ``prefix``. The plain pass is kept on ``lm`` for every intervention, per list of
        sentences: plain and intervened passes run the same batches."""
        unique = tuple(dict.fromkeys(sentences))
        if unique not in lm.plain:
            lm.plain[unique] = lm_measures(self.plain, lm, unique)
        edited = lm_measures(self.plain, lm, unique, (self.layer, self.edit))
        after = dict(zip(unique, edited, strict=True))
        before = dict(zip(unique, lm.plain[unique], strict=True))
        number = lambda x: None if np.isnan(x) else round(float(x), 6)  # noqa: E731
        agree = {
            s: float(np.mean(after[s][1] == before[s][1])) if len(before[s][1]) else np.nan
            for s in unique
        }
        return {
            f"{prefix}_loss_plain": [number(before[s][0]) for s in sentences],
            f"{prefix}_loss": [number(after[s][0]) for s in sentences],
            f"{prefix}_top1_agree": [number(agree[s]) for s in sentences],
        }

    def lm_extra(self) -> dict[str, Any]:
        """The language-model measures of the intervened task's test sentences and of the
        neutral text (computed once per intervention); ``{"lm": None}`` without a head."""
        if self._lm is None:
            lm = language_model(self.plain)
            self._lm = {"lm": None if lm is None else lm.kind}
            if lm is not None:
                self._lm |= self.lm_output(lm, self.task.splits["test"].sentences, "lm")
                source, neutral = neutral_sentences(self.task)
                if neutral:
                    self._lm["lm_neutral_source"] = source
                    self._lm |= self.lm_output(lm, neutral, "lm_neutral")
        return self._lm

    # -- what each result records -------------------------------------------------------
    def erasure(self, view: int | None) -> dict[str, Any]:
        record = erasure_record(
            self.spec, self.method, self.task, self.edit.rank, self.seed, "train"
        )
        return record | {"intervention": True}

    def unit_extra(self, view: int, task: ProbingTask) -> dict[str, Any]:
        """``extra`` of a result of ``task`` on ``view``: the erasure (identity), the layer
        edited and read; on the last layer the per-item measures (module docstring)."""
        read = self.layer + view
        info: dict[str, Any] = {"layer": self.layer, "read_layer": read, "final": False}
        task = getattr(task, "original", task)  # a held-out fold: the measures use all test
        test = task.splits.get("test")
        if read == self.n_layers and test is not None and len(test):
            sentences = list(test.sentences)
            after = self.final(sentences)
            before = self.plain_vectors(sentences, self.n_layers)
            norms = np.linalg.norm(after, axis=1) * np.linalg.norm(before, axis=1)
            cosine = (after * before).sum(1) / np.maximum(norms, 1e-30)
            fit = set(self.task.splits["train"].sentences)
            info |= {
                "final": True,
                "cosine": [round(float(c), 7) for c in cosine],
                "seen": [i for i, s in enumerate(sentences) if s in fit],
            }
            if self.reader is not None and "train" in task.splits and task.folds is None:
                info["reader"] = self.reader.correct(task, after)
                info["reader_plain"] = self.reader.correct(task, before)
            if task is self.task:
                info |= self.lm_extra()
        return {"erasure": self.erasure(view), "intervention": info}


def interventions(
    plain: HFEncoder,
    task: ProbingTask,
    base: Vectors,
    index: dict[str, int],
    layers: Sequence[int],
    controls: int,
    reader: Reader | None,
) -> list[InterventionEncoder]:
    """Per layer: the LEACE intervention, then its ``controls`` random ones."""
    out = []
    for layer in layers:
        leace = InterventionEncoder(plain, task, layer, "leace", base, index, reader)
        out.append(leace)
        for seed in range(controls):
            out.append(
                InterventionEncoder(plain, task, layer, "random", base, index, reader, seed, leace)
            )
    return out
