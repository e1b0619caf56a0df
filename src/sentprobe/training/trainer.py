"""``train(config)``: one resumable training run, a checkpoint per epoch.

Speed: examples are turned into id lists once; each epoch shuffles them, sorts chunks of
50 batches by length and cuts batches from the chunks (little padding, random order of
batches), and every recurrent call is packed (``pack_padded_sequence``), so no time goes to
padding and there is no Python loop over tokens (the decoder's teacher forcing is one LSTM
call). The same code runs on CUDA (``device="cuda"``).

Resuming: the run directory's manifest lists the finished epochs; a rerun with the same
settings loads the last one (model, optimiser, random state) and continues with the next
epoch; a rerun with other settings (data, architecture, sizes...) is refused. Each epoch's
batch order comes from ``(seed, epoch)``, so a resumed run sees the batches an
uninterrupted run would.

Each epoch ends with validation (teacher-forced metrics; greedy decoding and BLEU for the
autoencoder, translation and Seq2Tree) and records the best epoch so far (``best_epoch``,
by the objective's selection metric, ``objectives.METRIC``), which ``runs/NAME@best`` probes.

Long because one run's data, model, resuming, epoch loop and validation are read together.
"""

from __future__ import annotations

import dataclasses
import json
import platform
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .. import __version__ as sentprobe_version
from ..encoders.hf import set_torch_threads
from ..encoders.static import BUILTIN_VECTORS, load_word_vectors
from ..errors import SentprobeError, require
from ..io import atomic_write_text, inside
from .architectures import ARCHITECTURES, SentenceEncoder, build_from_spec
from .checkpoint import (
    FORMAT,
    MANIFEST,
    best_epoch,
    completed_epochs,
    load_state,
    load_vocab,
    read_manifest,
    save_epoch,
    write_manifest,
)
from .data import OBJECTIVES, PAIR_OBJECTIVES, Example, load_training_data
from .objectives import BLEU_OBJECTIVES, METRIC, add_stats, bleu, build_head, decoded_text, metrics
from .presets import preset
from .randomness import restore_rng_states, rng_states
from .vocab import BOS, EOS, UNK, Vocabulary, embedding_matrix, pad

MAX_SOURCE = 64  # words per input sentence (longer ones are cut)
MAX_TARGET = 160  # tokens per decoder target (Seq2Tree targets are ~3x the words)
BUCKET = 50  # batches per length-sorted chunk


@dataclass
class TrainConfig:
    """One run. Fields left None come from the preset (``laptop`` by default)."""

    arch: str
    objective: str
    data: list[str]
    out: str
    epochs: int = 5
    preset: str = "laptop"
    dim: int | None = None
    vectors: str | None = "glove-6b-50d"  # a built-in name, a .vec/word2vec file, or None
    freeze_embeddings: bool = True
    batch_size: int | None = None
    lr: float | None = None
    #: "adam" or "sgd" (momentum 0.9); None: the preset's (sgd for the gated ConvNet)
    optimizer: str | None = None
    seed: int = 1234
    device: str = "cpu"
    valid_fraction: float = 0.05
    annotator: str = "spacy"
    max_examples: int | None = None
    threads: int | None = None  # torch CPU threads; None: every core this process may use
    overrides: dict[str, Any] = field(default_factory=dict)
    #: The run's row name in results tables (None: the run folder's name).
    name: str | None = None

    def sizes(self) -> dict[str, Any]:
        sizes = preset(self.preset, self.arch)
        for key in ("dim", "batch_size", "lr", "optimizer"):
            if getattr(self, key) is not None:
                sizes[key] = getattr(self, key)
        sizes.update(self.overrides)
        return sizes


def _check(config: TrainConfig) -> None:
    if config.objective in BLEU_OBJECTIVES:  # scored by BLEU each epoch: fail before training
        require("sacrebleu", "train", f"sentprobe train --objective {config.objective}")
    if config.arch not in ARCHITECTURES:
        raise SentprobeError(
            f"unknown architecture {config.arch!r}; known: {', '.join(ARCHITECTURES)}"
        )
    if config.objective not in OBJECTIVES:
        raise SentprobeError(
            f"unknown objective {config.objective!r}; known: {', '.join(OBJECTIVES)}"
        )
    if config.optimizer not in (None, "adam", "sgd"):
        raise SentprobeError(f"--optimizer must be adam or sgd, not {config.optimizer!r}")
    if config.epochs < 1:
        raise SentprobeError("--epochs must be at least 1")
    if config.device.startswith("cuda") and not torch.cuda.is_available():
        raise SentprobeError("--device cuda: no CUDA device is available to torch")


def _split(n: int, fraction: float, batch_size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, validation) indices; validation is a fixed random ``fraction`` (at most
    5000), or, when that would leave less than one batch, the first training batch."""
    order = np.random.default_rng(seed).permutation(n)
    n_valid = min(max(1, int(round(n * fraction))), 5000)
    if n - n_valid < batch_size:
        return order, order[:batch_size]
    return order[n_valid:], order[:n_valid]


class _Encoded:
    """Examples as id lists, and padded batches of them."""

    def __init__(
        self,
        objective: str,
        examples: list[Example],
        vocab: Vocabulary,
        target: Vocabulary | None,
        labels: list[str],
        device: str,
    ) -> None:
        self.objective, self.device = objective, device
        self.src = [vocab.ids(e.source)[:MAX_SOURCE] or [UNK] for e in examples]
        self.second = [vocab.ids(e.second)[:MAX_SOURCE] or [UNK] for e in examples]
        label_id = {label: i for i, label in enumerate(labels)}
        self.label = np.array([label_id.get(e.label, 0) for e in examples], dtype=np.int64)
        self.tgt: list[list[int]] = []
        if target is not None and objective != "lm":
            self.tgt = [target.ids(e.target)[: MAX_TARGET - 1] for e in examples]
        elif target is not None:  # lm: the input words, in the output vocabulary
            self.tgt = [target.ids(e.source)[:MAX_SOURCE] or [UNK] for e in examples]

    def tokens(self, idx: np.ndarray) -> int:
        n = sum(len(self.src[i]) for i in idx)
        if self.objective in PAIR_OBJECTIVES:
            return n + sum(len(self.second[i]) for i in idx)
        if self.objective != "lm":
            return n + sum(len(self.tgt[i]) + 1 for i in idx)
        return n

    def batch(self, idx: np.ndarray) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {}
        out["src"], out["src_len"] = pad([self.src[i] for i in idx], self.device)
        if self.objective in PAIR_OBJECTIVES:
            out["second"], out["second_len"] = pad([self.second[i] for i in idx], self.device)
            out["label"] = torch.from_numpy(self.label[idx]).to(self.device)
        elif self.objective == "lm":
            out["lm_target"], _ = pad([self.tgt[i] for i in idx], self.device)
        else:
            out["tgt_in"], out["tgt_len"] = pad([[BOS, *self.tgt[i]] for i in idx], self.device)
            out["tgt_out"], _ = pad([[*self.tgt[i], EOS] for i in idx], self.device)
        return out

    def batches(
        self, idx: np.ndarray, batch_size: int, rng: np.random.Generator | None
    ) -> list[np.ndarray]:
        """Length-bucketed batches; shuffled when ``rng`` is given."""
        if rng is not None:
            idx = idx[rng.permutation(len(idx))]
        lengths = np.array([len(self.src[i]) for i in idx])
        out: list[np.ndarray] = []
        chunk = batch_size * BUCKET
        for start in range(0, len(idx), chunk):
            part = idx[start : start + chunk]
            part = part[np.argsort(lengths[start : start + chunk], kind="stable")]
            out.extend(part[k : k + batch_size] for k in range(0, len(part), batch_size))
        if rng is not None:
            out = [out[k] for k in rng.permutation(len(out))]
        return out


def _set_embeddings(encoder: nn.Module, matrix: np.ndarray, freeze: bool) -> None:
    for module in encoder.modules():
        if isinstance(module, SentenceEncoder) and hasattr(module, "embedding"):
            with torch.no_grad():
                module.embedding.weight.copy_(torch.from_numpy(matrix))
            module.embedding.weight.requires_grad_(not freeze)


def _versions() -> dict[str, str]:
    return {
        "sentprobe": sentprobe_version,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
    }


def _settings(config: TrainConfig, sizes: dict[str, Any], files: list[dict[str, Any]]) -> dict:
    """What a resumed run must share with the run it continues."""
    keep = dataclasses.asdict(config)
    for key in ("out", "epochs", "device", "data", "threads"):
        keep.pop(key)
    settings = {"config": keep, "sizes": sizes, "data": [[f["path"], f["sha256"]] for f in files]}
    return json.loads(json.dumps(settings))  # as the manifest stores it (lists, not tuples)


def _evaluate(model: nn.Module, data: _Encoded, batches: list[np.ndarray], objective: str):
    model.eval()
    total: dict[str, float] = {}
    with torch.no_grad():
        for idx in batches:
            _, stats = model.loss(data.batch(idx))  # type: ignore[operator]
            add_stats(total, stats)
    model.train()
    return metrics(objective, total)


def _decode_bleu(
    model: nn.Module,
    data: _Encoded,
    batches: list[np.ndarray],
    examples: list[Example],
    target: Vocabulary,
) -> float:
    """BLEU of the greedy decoding of every validation example against its target (cut to
    the length trained on); words outside the target vocabulary count as missed."""
    model.eval()
    hypotheses, references = [], []
    for idx in batches:
        batch = data.batch(idx)
        longest = max(len(data.tgt[i]) for i in idx)
        decoded = model.greedy(  # type: ignore[operator]
            batch["src"], batch["src_len"], min(MAX_TARGET, 2 * longest + 10)
        )
        hypotheses += [decoded_text(ids, target) for ids in decoded]
        references += [" ".join(examples[i].target.split()[: MAX_TARGET - 1]) for i in idx]
    model.train()
    return bleu(hypotheses, references)


def train(config: TrainConfig, *, progress: bool = True, position: int | None = None) -> Path:
    """Train (or resume) ``config``; returns the run directory. See the module docstring."""
    _check(config)
    set_torch_threads(config.threads)
    run_dir = Path(config.out)
    sizes = config.sizes()
    previous = read_manifest(run_dir) if (run_dir / MANIFEST).is_file() else None
    data = load_training_data(
        config.objective,
        config.data,
        batch_size=sizes["batch_size"],
        annotations=inside(run_dir, "annotations"),  # a link out is refused, not written through
        annotator=config.annotator,
        progress=progress,
    )
    examples = data.examples[: config.max_examples] if config.max_examples else data.examples
    settings = _settings(config, sizes, data.files)
    if previous is not None and previous.get("settings") != settings:
        raise SentprobeError(
            f"{run_dir} holds a run with other settings (data, architecture, objective or "
            "sizes); train into another directory (-o) or delete it"
        )
    train_idx, valid_idx = _split(
        len(examples), config.valid_fraction, sizes["batch_size"], config.seed
    )
    torch.manual_seed(config.seed)
    if previous is not None:
        vocab = load_vocab(run_dir)
        target = load_vocab(run_dir, "target-vocab.json") if previous["target_vocab"] else None
    else:
        vocab, target = _vocabularies(config.objective, [examples[i] for i in train_idx], sizes)
    vectors_info, matrix = None, None
    emb_dim = sizes["emb_dim"]
    if config.vectors:
        vectors = load_word_vectors(config.vectors)
        matrix, found = embedding_matrix(vocab, vectors, seed=config.seed)
        emb_dim = vectors.dim
        # a file by its absolute path: the run is probed from other directories too
        where = config.vectors if config.vectors in BUILTIN_VECTORS else Path(config.vectors)
        spec_text = where if isinstance(where, str) else str(where.expanduser().resolve())
        vectors_info = {"spec": spec_text, "id": vectors.id, "found": found}
    spec = {
        "arch": config.arch,
        "vocab_size": len(vocab),
        "emb_dim": emb_dim,
        "dim": sizes["dim"],
        "freeze_embeddings": bool(config.vectors) and config.freeze_embeddings,
        "bidirectional_lm": config.objective == "lm",
        "options": sizes["arch_options"],
    }
    encoder = build_from_spec(spec)
    if matrix is not None:
        _set_embeddings(encoder, matrix, spec["freeze_embeddings"])
    head_sizes = {
        **sizes,
        "n_labels": len(data.labels),
        "target_size": len(target) if target is not None else 0,
    }
    model = build_head(config.objective, encoder, head_sizes).to(config.device)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimiser: torch.optim.Optimizer
    if sizes["optimizer"] == "sgd":
        optimiser = torch.optim.SGD(trainable, sizes["lr"], momentum=0.9)
    else:
        optimiser = torch.optim.Adam(trainable, sizes["lr"])
    start = 1
    if previous is not None and completed_epochs(previous):
        last = completed_epochs(previous)[-1]
        state = load_state(run_dir, last)
        model.load_state_dict(state["model"])
        optimiser.load_state_dict(state["optimiser"])
        restore_rng_states(state)
        start = last + 1
    manifest = previous or _new_manifest(
        config, run_dir, spec, settings, data, vocab, target, vectors_info, len(examples)
    )
    if previous is None:
        run_dir.mkdir(parents=True, exist_ok=True)
        _write_vocab(run_dir / "vocab.json", vocab)
        if target is not None:
            _write_vocab(run_dir / "target-vocab.json", target)
        write_manifest(run_dir, manifest)
    if start > config.epochs:
        return run_dir
    encoded = _Encoded(config.objective, examples, vocab, target, data.labels, config.device)
    valid_batches = encoded.batches(valid_idx, sizes["batch_size"], None)
    metric_name = manifest["metric"]["name"]  # a run keeps the metric it was started with
    last_metric = manifest["epochs"][-1]["valid"].get(metric_name) if manifest["epochs"] else None
    for epoch in range(start, config.epochs + 1):
        rng = np.random.default_rng([config.seed, epoch])
        batches = encoded.batches(train_idx, sizes["batch_size"], rng)
        t0, tokens, loss_sum = time.perf_counter(), 0, 0.0
        desc = f"{run_dir.name} {epoch}/{config.epochs}"
        steps = _steps(
            model, optimiser, encoded, batches, (progress, position), desc, metric_name, last_metric
        )
        for idx, loss in steps:
            tokens += encoded.tokens(idx)
            loss_sum += loss
        seconds = time.perf_counter() - t0
        valid = _evaluate(model, encoded, valid_batches, config.objective)
        if config.objective in BLEU_OBJECTIVES and target is not None:
            valid["bleu"] = _decode_bleu(model, encoded, valid_batches, examples, target)
        last_metric = valid[metric_name]
        so_far = [e for e in manifest["epochs"] if int(e["epoch"]) < epoch]
        manifest["best_epoch"] = best_epoch(
            {**manifest, "epochs": [*so_far, {"epoch": epoch, "valid": valid}]}
        )
        state = {
            "model": model.state_dict(),
            "optimiser": optimiser.state_dict(),
            **rng_states(),
        }
        save_epoch(
            run_dir,
            manifest,
            epoch,
            model.encoder,  # type: ignore[arg-type]
            state,
            {
                "train_loss": loss_sum / max(len(batches), 1),
                "valid": valid,
                "seconds": round(seconds, 2),
                "tokens_per_second": round(tokens / max(seconds, 1e-9), 1),
            },
        )
    return run_dir


def _steps(
    model: nn.Module,
    optimiser: torch.optim.Optimizer,
    data: _Encoded,
    batches: list[np.ndarray],
    bar_at: tuple[bool, int | None],
    desc: str,
    metric_name: str,
    last_metric: float | None,
) -> Iterator[tuple[np.ndarray, float]]:
    from sentprobe.progress import tqdm

    model.train()
    progress, position = bar_at
    bar = tqdm(
        batches, desc=desc, unit="batch", disable=not progress, leave=False, position=position
    )
    smooth = None
    for k, idx in enumerate(bar):
        loss, _ = model.loss(data.batch(idx))  # type: ignore[operator]
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimiser.step()
        value = float(loss.detach())
        smooth = value if smooth is None else 0.95 * smooth + 0.05 * value
        if progress and k % 10 == 0:
            shown = {"loss": f"{smooth:.3f}"}
            if last_metric is not None:
                shown[f"valid {metric_name}"] = f"{last_metric:.2f}"
            bar.set_postfix(shown, refresh=False)
        yield idx, value
    bar.close()


def _vocabularies(
    objective: str, examples: list[Example], sizes: dict[str, Any]
) -> tuple[Vocabulary, Vocabulary | None]:
    sources = [e.source for e in examples] + [e.second for e in examples if e.second]
    vocab = Vocabulary.build(sources, max_size=sizes["vocab_size"])
    if objective in PAIR_OBJECTIVES:
        return vocab, None
    texts = sources if objective == "lm" else [e.target for e in examples]
    return vocab, Vocabulary.build(texts, max_size=sizes["target_vocab_size"])


def _write_vocab(path: Path, vocab: Vocabulary) -> None:
    atomic_write_text(path, json.dumps(vocab.to_json(), ensure_ascii=False) + "\n")


def _new_manifest(
    config: TrainConfig,
    run_dir: Path,
    spec: dict[str, Any],
    settings: dict[str, Any],
    data: Any,
    vocab: Vocabulary,
    target: Vocabulary | None,
    vectors: dict[str, Any] | None,
    n_examples: int,
) -> dict[str, Any]:
    metric, higher = METRIC[config.objective]
    return {
        "format": FORMAT,
        "name": config.name or run_dir.name,
        "arch": config.arch,
        "objective": config.objective,
        "metric": {"name": metric, "higher_is_better": higher},
        "encoder": spec,
        "settings": settings,
        "data": data.files,
        "examples": n_examples,
        "labels": data.labels,
        "label_counts": dict(sorted(Counter(e.label for e in data.examples if e.label).items())),
        "vocab": {"file": "vocab.json", "size": len(vocab)},
        "target_vocab": {"file": "target-vocab.json", "size": len(target)} if target else None,
        "vectors": vectors,
        "versions": _versions(),
        "epochs": [],
    }
