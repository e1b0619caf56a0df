"""A training run on disk, and a trained run as a sentprobe ``Encoder``.

Layout (stable; other code reads it)::

    runs/NAME/run.json                  the manifest: arch, objective, the encoder spec,
                                        data files and their SHA-256, word vectors, vocabulary
                                        files, hyper-parameters, library versions, and one
                                        entry per finished epoch (train loss, validation
                                        metrics, seconds, tokens/s)
    runs/NAME/vocab.json                input vocabulary (``Vocabulary.to_json``)
    runs/NAME/target-vocab.json         decoder vocabulary, when the objective has one
    runs/NAME/target-bpe.json           or the decoder's subword tokenizer (``--targets bpe``)
    runs/NAME/epoch-K/encoder.safetensors   the sentence encoder's weights after epoch K
    runs/NAME/epoch-K/state.pt              everything else needed to resume (heads,
                                            optimiser, random states): tensors and plain
                                            values only, read with ``weights_only=True``
    runs/NAME/resume.pt                 a mid-epoch checkpoint (``train --checkpoint-every``):
                                        the same, plus the epoch, the steps done in it and
                                        its running totals; removed when the epoch ends

An epoch directory is written under a temporary name and renamed when complete, then the
manifest (written atomically) lists it: a killed run leaves only whole epochs, and a rerun
continues after the last one listed.

API: ``save_epoch``, ``read_manifest``, ``completed_epochs``, ``load_encoder(run_dir,
epoch=None) -> (SentenceEncoder, Vocabulary, manifest)``, ``parse_run_spec("runs/X@epoch-3")``
and ``TrainedRunEncoder(spec)``, the ``Encoder`` behind ``sentprobe run -e runs/NAME``
(last epoch), ``-e runs/NAME@epoch-K``, ``-e runs/NAME@best`` (the epoch with the best
validation metric, ``best_epoch``) and ``-e runs/NAME@all`` (one view per epoch, each
epoch's checkpoint encoded once; the fingerprint holds a hash of every checkpoint file read).
"""

from __future__ import annotations

import json
import math
import pickle
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file
from safetensors.torch import save as save_tensors

from ..encoders.base import Encoder
from ..encoders.filehash import file_digests
from ..encoders.hf import set_torch_threads, sorted_batches
from ..encoders.static import load_word_vectors
from ..errors import SentprobeError
from ..io import (
    atomic_dir,
    atomic_write_bytes,
    atomic_write_text,
    atomic_writer,
    inside,
    read_text,
)
from .architectures import SentenceEncoder, build_from_spec
from .subwords import FILE as BPE_FILE
from .vocab import SPECIALS, UNK, Vocabulary, pad

MANIFEST = "run.json"
FORMAT = "sentprobe-training-run/1"
ENCODER_FILE = "encoder.safetensors"
STATE_FILE = "state.pt"
STEP_FILE = "resume.pt"


def epoch_dir(run_dir: Path, epoch: int) -> Path:
    return run_dir / f"epoch-{epoch}"


def read_manifest(run_dir: str | Path) -> dict[str, Any]:
    path = Path(run_dir) / MANIFEST
    try:
        manifest = json.loads(read_text(inside(run_dir, MANIFEST)))
    except FileNotFoundError:
        raise SentprobeError(f"{run_dir}: not a training run (no {MANIFEST})") from None
    except ValueError as e:
        raise SentprobeError(f"{path}: damaged manifest ({e})") from None
    if manifest.get("format") != FORMAT:
        raise SentprobeError(f"{path}: unknown format {manifest.get('format')!r}")
    return manifest


def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    atomic_write_text(run_dir / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def completed_epochs(manifest: dict[str, Any]) -> list[int]:
    return [int(e["epoch"]) for e in manifest.get("epochs", [])]


def save_epoch(
    run_dir: Path,
    manifest: dict[str, Any],
    epoch: int,
    encoder: SentenceEncoder,
    state: dict[str, Any],
    metrics: dict[str, Any],
) -> None:
    """Write epoch ``epoch`` (whole or not at all), then record it in the manifest; an epoch
    folder in a run folder from elsewhere that links outside it is refused, not replaced."""
    final = inside(run_dir, epoch_dir(run_dir, epoch).name)
    weights = {k: v.detach().cpu().contiguous() for k, v in encoder.state_dict().items()}
    with atomic_dir(final) as tmp:  # a stale epoch from a run restarted afresh is replaced
        atomic_write_bytes(tmp / ENCODER_FILE, save_tensors(weights), root=tmp)
        with atomic_writer(tmp / STATE_FILE, root=tmp) as f:
            torch.save(state, f)
    epochs = [e for e in manifest.get("epochs", []) if int(e["epoch"]) < epoch]
    manifest["epochs"] = [*epochs, {"epoch": epoch, **metrics}]
    write_manifest(run_dir, manifest)


def save_step(run_dir: Path, state: dict[str, Any]) -> None:
    """Write the mid-epoch checkpoint atomically (a kill while writing keeps the last one)."""
    with atomic_writer(inside(run_dir, STEP_FILE), root=run_dir) as f:
        torch.save(state, f)


def load_step(run_dir: Path) -> dict[str, Any] | None:
    """The mid-epoch checkpoint, if any, read as safely as ``load_state``."""
    path = inside(run_dir, STEP_FILE)
    return _read_state(path) if path.is_file() else None


def drop_step(run_dir: Path) -> None:
    inside(run_dir, STEP_FILE).unlink(missing_ok=True)


def load_state(run_dir: Path, epoch: int) -> dict[str, Any]:
    """The resume state of ``epoch``, read without running code (``_read_state``)."""
    return _read_state(inside(run_dir, f"{epoch_dir(run_dir, epoch).name}/{STATE_FILE}"))


def _read_state(path: Path) -> dict[str, Any]:
    """A resume state, read without running code.

    A run folder may come from someone else, and unpickling can call any function, so the
    file is read with ``torch.load(weights_only=True)``: tensors, dicts, lists, tuples,
    strings, numbers and None only, which is all ``save_epoch`` writes (optimiser state
    dicts, the torch RNG state as a byte tensor, early-stopping numbers). A file that needs
    anything else is refused, its payload never called.
    """
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        found = re.search(r"GLOBAL ([\w.]+)", str(e))
        needs = f"the Python object {found[1]}" if found else "more than tensors and plain values"
        raise SentprobeError(
            f"{path}: refused, loading it would need {needs}; a sentprobe state file holds "
            "only tensors and plain values, and run folders are never unpickled with code"
        ) from None
    except FileNotFoundError:
        raise SentprobeError(f"{path}: missing; the run's last epoch is incomplete") from None
    except (RuntimeError, EOFError, ValueError) as e:
        raise SentprobeError(f"{path}: damaged state file ({str(e).splitlines()[0]})") from None
    if not isinstance(state, dict):
        raise SentprobeError(f"{path}: not a sentprobe state file (a {type(state).__name__})")
    return state


def load_vocab(run_dir: Path, name: str = "vocab.json") -> Vocabulary:
    """The vocabulary file ``name`` of a run folder (inside it, a regular file: a FIFO there
    is refused in one line, never waited on)."""
    path = inside(run_dir, name)
    try:
        return Vocabulary.from_json(json.loads(read_text(path)))
    except FileNotFoundError:
        raise SentprobeError(f"{path}: missing; not a complete training run") from None
    except (ValueError, KeyError, TypeError) as e:
        raise SentprobeError(f"{path}: damaged vocabulary ({e})") from None


def load_encoder(
    run_dir: str | Path, epoch: int | None = None, device: str = "cpu"
) -> tuple[SentenceEncoder, Vocabulary, dict[str, Any]]:
    """The encoder after ``epoch`` (default: the last finished one), in eval mode."""
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    done = completed_epochs(manifest)
    if not done:
        raise SentprobeError(f"{run_dir}: no finished epoch yet")
    epoch = done[-1] if epoch is None else epoch
    if epoch not in done:
        raise SentprobeError(f"{run_dir}: no epoch {epoch} (finished: {_ranges(done)})")
    encoder = build_from_spec(manifest["encoder"])
    weights = inside(run_dir, f"{epoch_dir(run_dir, epoch).name}/{ENCODER_FILE}")
    encoder.load_state_dict(load_file(str(weights)))
    return encoder.to(device).eval(), load_vocab(run_dir), manifest


def epoch_metrics(manifest: dict[str, Any]) -> tuple[str, bool, dict[int, float]]:
    """The run's validation metric (its name, whether higher is better) and its value per
    finished epoch: ``valid[name]`` for ``sentprobe train`` runs, ``valid_<name>`` for
    cross-lingual students."""
    metric = manifest.get("metric") or {}
    name = metric.get("name") or manifest.get("mapping", {}).get("settings", {}).get("monitor")
    if not name:
        raise SentprobeError(f"{manifest.get('name')}: the manifest names no validation metric")
    higher = metric.get("higher_is_better", name in ("bleu", "acc", "token_acc", "retrieval"))
    values = {}
    for e in manifest.get("epochs", []):
        value = e.get("valid", {}).get(name, e.get(f"valid_{name}"))
        if value is not None:
            values[int(e["epoch"])] = float(value)
    return name, bool(higher), values


def best_epoch(manifest: dict[str, Any]) -> int:
    """The finished epoch with the best validation metric, as Conneau et al. select models
    on validation. Equal metrics (a BLEU that stays at 0.00) go to the lower validation loss
    (``valid.loss`` of a ``sentprobe train`` run), then to the earlier epoch (a student's
    early stopping keeps the earliest of equals, and so does this)."""
    name, higher, values = epoch_metrics(manifest)
    if not values:
        raise SentprobeError(f"{manifest.get('name')}: no epoch has a validation {name}")
    losses = {
        int(e["epoch"]): float(e.get("valid", {}).get("loss", math.inf))
        for e in manifest.get("epochs", [])
    }
    return min(values, key=lambda k: (-values[k] if higher else values[k], losses[k], k))


def _ranges(epochs: Sequence[int]) -> str:
    return f"{epochs[0]}-{epochs[-1]}" if len(epochs) > 1 else str(epochs[0])


#: Above this share of unknown test tokens a trained run's result carries a warning: then
#: more than one word in four reaches the encoder as ``<unk>``.
UNKNOWN_WARN = 0.25


#: The start of a trained run's fingerprint, then its resolved folder (evaluation/identity.py
#: reads the folder back: :func:`sentprobe.evaluation.identity.run_folder`).
RUN_FINGERPRINT = "trained-run-v2"


def parse_run_spec(spec: str) -> tuple[Path, str]:
    """``runs/NAME[@epoch-K|@best|@all|@last]`` -> (run directory, selector)."""
    path, sep, selector = str(spec).rpartition("@")
    if not sep or not (Path(path) / MANIFEST).is_file():
        path, selector = str(spec), "last"
    return Path(path).expanduser(), selector or "last"


class TrainedRunEncoder(Encoder):
    """A training run's encoder after one epoch, or after each epoch (``views``).

    Words outside the training vocabulary: when the run used frozen pre-trained vectors,
    their vectors are looked up in the same word vectors (as Conneau et al.'s frozen
    fastText inputs "handle words outside the training sets"); otherwise they are ``<unk>``.
    """

    batch_size = 256

    def __init__(
        self,
        spec: str,
        batch_size: int = 256,
        device: str | None = None,
        num_threads: int | None = None,
    ) -> None:
        self.run_dir, selector = parse_run_spec(spec)
        manifest = read_manifest(self.run_dir)
        done = completed_epochs(manifest)
        if not done:
            raise SentprobeError(f"{self.run_dir}: no finished epoch yet")
        if selector == "all":
            self.epochs = done
        elif selector == "last":
            self.epochs = [done[-1]]
        elif selector == "best":  # the row is named after the epoch it selects
            self.epochs = [best_epoch(manifest)]
        elif selector.startswith("epoch-") and selector[6:].isdigit():
            if int(selector[6:]) not in done:
                raise SentprobeError(
                    f"{self.run_dir}: no {selector} (finished epochs: {_ranges(done)})"
                )
            self.epochs = [int(selector[6:])]
        else:
            raise SentprobeError(
                f"{spec}: expected RUN, RUN@epoch-K, RUN@best, RUN@all or RUN@last after the "
                "run directory"
            )
        self.manifest = manifest
        self.batch_size, self.num_threads = batch_size, num_threads
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        run = manifest.get("name") or self.run_dir.name
        self.all_epochs = selector == "all"
        self.name = run if self.all_epochs else f"{run}@epoch-{self.epochs[0]}"
        self._files = [  # an epoch folder that links out of the run is refused, unread
            inside(self.run_dir, f"{epoch_dir(self.run_dir, k).name}/{ENCODER_FILE}")
            for k in self.epochs
        ]
        self._extend = bool(manifest.get("vectors")) and manifest["encoder"].get(
            "freeze_embeddings", True
        )

    @property
    def views(self) -> list[str] | None:
        return [f"epoch-{k}" for k in self.epochs] if self.all_epochs else None

    @property
    def fingerprint(self) -> str:
        bpe = [self.run_dir / BPE_FILE] if (self.run_dir / BPE_FILE).is_file() else []
        parts = file_digests([self.run_dir / "vocab.json", *bpe, *self._files])
        vectors = self.manifest.get("vectors", {}).get("id") if self._extend else None
        # the run is its folder and its checkpoints' content: continuing training adds an
        # epoch without changing an earlier epoch's fingerprint (RUN@all is probed epoch by
        # epoch: encoders.expand_encoder_spec), and two folders are two runs
        return f"{RUN_FINGERPRINT}|{self.run_dir.resolve()}|{'|'.join(parts)}|vectors={vectors}"

    def _ids(self, sentences: Sequence[str], vocab: Vocabulary) -> tuple[list[list[int]], Any]:
        """Token ids, with rows appended for words only the word vectors know."""
        if not self._extend:
            return [vocab.ids(s) or [UNK] for s in sentences], None
        vectors = load_word_vectors(self.manifest["vectors"]["spec"])
        extra: dict[str, int] = {}
        rows: list[np.ndarray] = []
        out = []
        for s in sentences:
            ids = []
            for tok in s.split():
                i = vocab.index.get(tok)
                if i is None:
                    i = extra.get(tok)
                if i is None:
                    j = vectors.index.get(tok, vectors.index.get(tok.lower()))
                    i = UNK
                    if j is not None:
                        i = extra[tok] = len(vocab) + len(rows)
                        rows.append(vectors.matrix[j])
                ids.append(i)
            out.append(ids or [UNK])
        return out, (np.stack(rows) if rows else None)

    def probe_checks(self, sentences: Sequence[str], language: str) -> dict[str, Any]:
        """The share of the tokens this run reads as ``<unk>`` (outside its vocabulary and,
        with frozen vectors, outside those too), and a student's language (X-Probe trains
        one per language); warnings when the share exceeds ``UNKNOWN_WARN`` or the languages
        differ (``und``, an unknown task language, is not compared)."""
        ids, _ = self._ids([s for s in sentences if s.split()], load_vocab(self.run_dir))
        tokens = sum(len(row) for row in ids)
        share = sum(row.count(UNK) for row in ids) / max(tokens, 1)
        out: dict[str, Any] = {"unknown_token_share": round(share, 4), "tokens": tokens}
        warnings = []
        if share > UNKNOWN_WARN:
            warnings.append(
                f"{share:.1%} of the test tokens are unknown to {self.name} (more than "
                f"{UNKNOWN_WARN:.0%}): its vectors there say little about the sentences"
            )
        trained_on = self.manifest.get("mapping", {}).get("language")
        if trained_on:
            out["student_language"] = trained_on
            if language == "und":
                warnings.append(
                    f"a {trained_on} student probed on a task of unknown language (name it: "
                    "-t 'PATH?language=xx')"
                )
            elif language != trained_on:
                warnings.append(f"a {trained_on} student probed on a task in {language}")
        if warnings:
            out["warnings"] = warnings
        return out

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        set_torch_threads(self.num_threads)
        outs = []
        for k in self.epochs:
            encoder, vocab, _ = load_encoder(self.run_dir, k, self.device)
            ids, extra = self._ids(sentences, vocab)
            if extra is not None:
                _extend_embedding(encoder, extra)
            vecs = np.zeros((len(ids), encoder.out_dim), dtype=np.float32)
            with torch.inference_mode():
                for batch in sorted_batches([len(r) for r in ids], self.batch_size):
                    tokens, lengths = pad([ids[i] for i in batch], device=self.device)
                    vecs[batch] = encoder(tokens, lengths).float().cpu().numpy()
            outs.append(vecs)
        return np.stack(outs, axis=1) if self.all_epochs else outs[0]


def _extend_embedding(encoder: torch.nn.Module, extra: np.ndarray) -> None:
    """Append rows to every input embedding table of ``encoder`` (two for a bidirectional
    LM); positional tables are not word tables and are left alone."""
    for module in encoder.modules():
        if isinstance(module, SentenceEncoder) and hasattr(module, "embedding"):
            emb = module.embedding
            rows = torch.from_numpy(extra).to(emb.weight.device, emb.weight.dtype)
            module.embedding = torch.nn.Embedding.from_pretrained(
                torch.cat([emb.weight.detach(), rows]), freeze=True, padding_idx=0
            )


__all__ = [
    "MANIFEST",
    "SPECIALS",
    "TrainedRunEncoder",
    "best_epoch",
    "completed_epochs",
    "epoch_metrics",
    "load_encoder",
    "parse_run_spec",
    "read_manifest",
    "save_epoch",
]
