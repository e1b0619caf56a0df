"""``train(config)``: one resumable training run, a checkpoint per epoch (and, with
``checkpoint_every``, every N steps).

Data: the corpus is never held in memory (``data.TrainingData`` reads it from disk on each
pass). A first pass counts the examples and draws the validation set (held: at most 5000),
a second builds the vocabularies, and each epoch streams the training examples through a
shuffle buffer of ``SHUFFLE_BUFFER`` examples (a corpus that fits is shuffled whole), cuts
the shuffled stream into chunks of 50 batches, sorts each chunk by length and cuts batches
from it (little padding), in a random order within the chunk. Memory is bounded by the
buffer, the validation set, the vocabulary counts and the model, whatever the corpus size
(docs/benchmarks.md). An ordered corpus (by document or date) is best shuffled once on
disk: the buffer mixes only examples within about ``SHUFFLE_BUFFER`` lines of each other.

Speed: every recurrent call is packed (``pack_padded_sequence``), so no time goes to
padding and there is no Python loop over tokens (the decoder's teacher forcing is one LSTM
call). The same code runs on CUDA (``device="cuda"``).

Resuming: the run directory's manifest lists the finished epochs; a rerun with the same
settings loads the last one (model, optimiser, random state) and continues with the next
epoch; a rerun with other settings (data, architecture, sizes...) is refused. Each epoch's
batch order comes from ``(seed, epoch)`` alone, so a resumed run sees the batches an
uninterrupted run would. A mid-epoch checkpoint (``resume.pt``) also holds the number of
steps done in its epoch: a rerun replays that epoch's batch order up to there (reading the
data without training) and continues with the same weights, optimiser state and random
states, so it ends with the weights of a run never stopped. ``max_steps`` stops a run
after that many steps in all, with such a checkpoint.

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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .. import __version__ as sentprobe_version
from ..encoders.hf import set_torch_threads
from ..encoders.static import BUILTIN_VECTORS, load_word_vectors
from ..errors import SentprobeError, require
from ..io import atomic_write_text, inside, make_dirs
from .architectures import ARCHITECTURES, SentenceEncoder, build_from_spec
from .checkpoint import (
    FORMAT,
    MANIFEST,
    best_epoch,
    completed_epochs,
    drop_step,
    load_state,
    load_step,
    load_vocab,
    read_manifest,
    save_epoch,
    save_step,
    write_manifest,
)
from .data import OBJECTIVES, PAIR_OBJECTIVES, Example, TrainingData
from .devices import resolve_device
from .objectives import BLEU_OBJECTIVES, METRIC, add_stats, bleu, build_head, decoded_text, metrics
from .presets import preset
from .randomness import restore_rng_states, rng_states
from .subwords import FILE as BPE_FILE
from .subwords import TARGETS, SubwordTargets
from .vocab import BOS, EOS, UNK, Vocabulary, embedding_matrix, pad

MAX_SOURCE = 64  # words per input sentence (longer ones are cut)
MAX_TARGET = 160  # tokens per decoder target (Seq2Tree targets are ~3x the words)
BUCKET = 50  # batches per length-sorted chunk
#: Objectives whose decoder may read subword targets (``--targets bpe``): natural text.
SUBWORD_OBJECTIVES = ("autoencoder", "translation", "skipthought")
#: Decoder targets: words (``Vocabulary``) or subwords (``SubwordTargets``).
Targets = Vocabulary | SubwordTargets
#: Training examples held at once for shuffling: the data path's memory bound.
SHUFFLE_BUFFER = 100_000


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
    #: Write a mid-epoch checkpoint every N training steps (None: at epoch ends only).
    checkpoint_every: int | None = None
    #: Stop after this many training steps in all (a mid-epoch checkpoint; rerun to go on).
    max_steps: int | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    #: The run's row name in results tables (None: the run folder's name).
    name: str | None = None
    #: Decoder targets: "words" or "bpe" (``subwords``; ``target_vocab_size`` symbols).
    targets: str = "words"

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
    if config.targets not in TARGETS:
        raise SentprobeError(
            f"--targets must be one of {', '.join(TARGETS)}, not {config.targets!r}"
        )
    if config.targets == "bpe" and config.objective not in SUBWORD_OBJECTIVES:
        raise SentprobeError(
            f"--targets bpe: {config.objective} has no text decoder; subword targets are for "
            f"{', '.join(SUBWORD_OBJECTIVES)}"
        )
    if config.optimizer not in (None, "adam", "sgd"):
        raise SentprobeError(f"--optimizer must be adam or sgd, not {config.optimizer!r}")
    if config.epochs < 1:
        raise SentprobeError("--epochs must be at least 1")
    for flag, value in (
        ("--checkpoint-every", config.checkpoint_every),
        ("--max-steps", config.max_steps),
    ):
        if value is not None and value < 1:
            raise SentprobeError(f"{flag} must be at least 1")


def _split(n: int, fraction: float, batch_size: int, seed: int) -> tuple[frozenset[int], bool]:
    """(validation indices, whether they train too): a fixed random ``fraction`` (at most
    5000) held out, or, when that would leave less than one batch, one random batch that
    also trains. Drawn without a permutation of all ``n``."""
    rng = np.random.default_rng(seed)
    n_valid = min(max(1, int(round(n * fraction))), 5000)
    if n - n_valid < batch_size:
        return frozenset(rng.choice(n, batch_size, replace=False).tolist()), True
    return frozenset(rng.choice(n, n_valid, replace=False).tolist()), False


def _shuffled(items: Iterator[Example], size: int, rng: np.random.Generator) -> Iterator[Example]:
    """A shuffle buffer: each new item replaces a random one of ``size`` held, which is
    emitted; at the end the rest come out in random order."""
    buffer = list(islice(items, size))
    draws: Iterator[int] = iter(())
    for item in items:
        j = next(draws, None)
        if j is None:
            draws = iter(rng.integers(size, size=4096).tolist())
            j = next(draws)
        yield buffer[j]
        buffer[j] = item
    for k in rng.permutation(len(buffer)).tolist():
        yield buffer[k]


class _Encoded:
    """Examples as id lists, and padded batches of them."""

    def __init__(
        self,
        objective: str,
        examples: list[Example],
        vocab: Vocabulary,
        target: Targets | None,
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


def _examples(
    data: TrainingData, valid: frozenset[int], valid_trains: bool, train: bool
) -> Iterator[Example]:
    """The training examples (``train``) or the validation ones, in file order."""
    for i, example in enumerate(data):
        if (i in valid) != train or (train and valid_trains):
            yield example


class _Epochs:
    """Each epoch's training batches, streamed from the data files (module docstring)."""

    def __init__(
        self,
        data: TrainingData,
        valid: frozenset[int],
        valid_trains: bool,
        codes: tuple[Vocabulary, Targets | None],
        batch_size: int,
        device: str,
    ) -> None:
        self.data, self.valid, self.valid_trains = data, valid, valid_trains
        self.codes, self.batch_size, self.device = codes, batch_size, device
        n = len(data) - (0 if valid_trains else len(valid))
        chunk = batch_size * BUCKET
        self.steps = n // chunk * BUCKET + -(-(n % chunk) // batch_size)

    def examples(self, train: bool) -> Iterator[Example]:
        return _examples(self.data, self.valid, self.valid_trains, train)

    def encoded(self, examples: list[Example]) -> _Encoded:
        vocab, target = self.codes
        return _Encoded(self.data.objective, examples, vocab, target, self.data.labels, self.device)

    def batches(self, seed: int, epoch: int) -> Iterator[tuple[_Encoded, np.ndarray]]:
        """Epoch ``epoch``'s batches; the same for the same ``(seed, epoch)``."""
        rng = np.random.default_rng([seed, epoch])
        stream = _shuffled(self.examples(True), SHUFFLE_BUFFER, rng)
        while chunk := list(islice(stream, self.batch_size * BUCKET)):
            encoded = self.encoded(chunk)
            for idx in encoded.batches(np.arange(len(chunk)), self.batch_size, rng):
                yield encoded, idx


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
    for key in ("out", "epochs", "device", "data", "threads", "checkpoint_every", "max_steps"):
        keep.pop(key)
    settings = {"config": keep, "sizes": sizes, "data": [[f["path"], f["sha256"]] for f in files]}
    return json.loads(json.dumps(settings))  # as the manifest stores it (lists, not tuples)


def _unnamed(settings: Any) -> Any:
    """Settings without the run's name (a label, which ``--name`` may change later)."""
    if not isinstance(settings, dict) or not isinstance(settings.get("config"), dict):
        return settings
    config = {k: v for k, v in settings["config"].items() if k != "name"}
    return {**settings, "config": config}


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
    target: Targets,
) -> float:
    """BLEU of the greedy decoding of every validation example against its target (cut to
    the length trained on); words outside a word vocabulary count as missed. Subword
    decodes are scored on detokenised text (``subwords``)."""
    model.eval()
    hypotheses, references = [], []
    for idx in batches:
        batch = data.batch(idx)
        longest = max(len(data.tgt[i]) for i in idx)
        decoded = model.greedy(  # type: ignore[operator]
            batch["src"], batch["src_len"], min(MAX_TARGET, 2 * longest + 10)
        )
        if isinstance(target, SubwordTargets):
            hypotheses += [target.text(ids) for ids in decoded]
            references += [target.text(data.tgt[i]) for i in idx]
        else:
            hypotheses += [decoded_text(ids, target) for ids in decoded]
            references += [" ".join(examples[i].target.split()[: MAX_TARGET - 1]) for i in idx]
    model.train()
    return bleu(hypotheses, references, detokenize=isinstance(target, SubwordTargets))


def train(config: TrainConfig, *, progress: bool = True, position: int | None = None) -> Path:
    """Train (or resume) ``config``; returns the run directory. See the module docstring."""
    _check(config)
    config = dataclasses.replace(config, device=resolve_device(config.device))
    set_torch_threads(config.threads)
    run_dir = Path(config.out)
    sizes = config.sizes()
    previous = read_manifest(run_dir) if (run_dir / MANIFEST).is_file() else None
    data = TrainingData(
        config.objective,
        config.data,
        batch_size=sizes["batch_size"],
        annotations=inside(run_dir, "annotations"),  # a link out is refused, not written through
        annotator=config.annotator,
        progress=progress,
        max_examples=config.max_examples,
    )
    settings = _settings(config, sizes, data.files)
    if previous is not None and _unnamed(previous.get("settings")) != _unnamed(settings):
        raise SentprobeError(
            f"{run_dir} holds a run with other settings (data, architecture, objective or "
            "sizes); train into another directory (-o) or delete it"
        )
    valid, valid_trains = _split(len(data), config.valid_fraction, sizes["batch_size"], config.seed)
    torch.manual_seed(config.seed)
    if previous is not None:
        vocab = load_vocab(run_dir)
        target = _load_targets(run_dir, previous["target_vocab"])
    else:
        training = _examples(data, valid, valid_trains, True)
        vocab, target = _vocabularies(config.objective, training, sizes)
        if config.targets == "bpe":  # learned on the training split only, as the words are
            texts = (e.target for e in _examples(data, valid, valid_trains, True))
            target = SubwordTargets.train(texts, sizes["target_vocab_size"])
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
    start, state, partial = 1, None, None
    if previous is not None and completed_epochs(previous):
        start = completed_epochs(previous)[-1] + 1
        state = load_state(run_dir, start - 1)
    if previous is not None:
        partial = load_step(run_dir)
        if partial is not None and int(partial["epoch"]) == start:
            state = partial
        else:
            partial = None
    if state is not None:
        model.load_state_dict(state["model"])
        optimiser.load_state_dict(state["optimiser"])
        restore_rng_states(state)
    step = int(state.get("step", 0)) if state is not None else 0
    manifest = previous or _new_manifest(
        config, run_dir, spec, settings, data, vocab, target, vectors_info
    )
    if previous is not None and config.name and previous.get("name") != config.name:
        # a name is a label, not a setting: a run (finished or not) can be given one later;
        # its rows keep their identity (folder and checkpoints), only their label changes
        manifest["name"] = config.name
        manifest["settings"] = settings
        write_manifest(run_dir, manifest)
    if previous is None:
        make_dirs(run_dir)
        _write_vocab(run_dir / "vocab.json", vocab)
        if isinstance(target, SubwordTargets):
            target.save(inside(run_dir, BPE_FILE))
        elif target is not None:
            _write_vocab(run_dir / "target-vocab.json", target)
        write_manifest(run_dir, manifest)
    if start > config.epochs or (config.max_steps and step >= config.max_steps):
        return run_dir
    epochs = _Epochs(data, valid, valid_trains, (vocab, target), sizes["batch_size"], config.device)
    valid_examples = list(epochs.examples(False))
    valid_data = epochs.encoded(valid_examples)
    valid_batches = valid_data.batches(np.arange(len(valid_examples)), sizes["batch_size"], None)
    metric_name = manifest["metric"]["name"]  # a run keeps the metric it was started with
    last_metric = manifest["epochs"][-1]["valid"].get(metric_name) if manifest["epochs"] else None
    for epoch in range(start, config.epochs + 1):
        done = int(partial["epoch_step"]) if partial else 0
        tally = {"loss": 0.0, "tokens": 0, "seconds": 0.0, **(partial or {}).get("tally", {})}
        partial = None
        t0 = time.perf_counter() - tally["seconds"]
        batches = islice(epochs.batches(config.seed, epoch), done, None)
        desc = f"{run_dir.name} {epoch}/{config.epochs}"
        bar = (progress, position, done, epochs.steps)
        for k, (data_k, idx, loss) in enumerate(
            _steps(model, optimiser, batches, bar, desc, metric_name, last_metric), done + 1
        ):
            step += 1
            tally["tokens"] += data_k.tokens(idx)
            tally["loss"] += loss
            stop = config.max_steps is not None and step >= config.max_steps
            if stop or (config.checkpoint_every and step % config.checkpoint_every == 0):
                tally["seconds"] = time.perf_counter() - t0
                save_step(
                    run_dir, _state(model, optimiser, step, epoch=epoch, epoch_step=k, tally=tally)
                )
            if stop:
                return run_dir
        seconds = time.perf_counter() - t0
        valid = _evaluate(model, valid_data, valid_batches, config.objective)
        if config.objective in BLEU_OBJECTIVES and target is not None:
            valid["bleu"] = _decode_bleu(model, valid_data, valid_batches, valid_examples, target)
        last_metric = valid[metric_name]
        so_far = [e for e in manifest["epochs"] if int(e["epoch"]) < epoch]
        manifest["best_epoch"] = best_epoch(
            {**manifest, "epochs": [*so_far, {"epoch": epoch, "valid": valid}]}
        )
        save_epoch(
            run_dir,
            manifest,
            epoch,
            model.encoder,  # type: ignore[arg-type]
            _state(model, optimiser, step),
            {
                "train_loss": tally["loss"] / max(epochs.steps, 1),
                "valid": valid,
                "steps": step,
                "seconds": round(seconds, 2),
                "tokens_per_second": round(tally["tokens"] / max(seconds, 1e-9), 1),
            },
        )
        drop_step(run_dir)
    return run_dir


def _state(
    model: nn.Module, optimiser: torch.optim.Optimizer, step: int, **position: Any
) -> dict[str, Any]:
    """What resuming needs: weights, optimiser, random states, steps done (and, mid-epoch,
    the position in the epoch and its running totals)."""
    return {
        "model": model.state_dict(),
        "optimiser": optimiser.state_dict(),
        **rng_states(),
        "step": step,
        **position,
    }


def _steps(
    model: nn.Module,
    optimiser: torch.optim.Optimizer,
    batches: Iterable[tuple[_Encoded, np.ndarray]],
    bar_at: tuple[bool, int | None, int, int],
    desc: str,
    metric_name: str,
    last_metric: float | None,
) -> Iterator[tuple[_Encoded, np.ndarray, float]]:
    from sentprobe.progress import tqdm

    model.train()
    progress, position, done, total = bar_at
    bar = tqdm(
        batches,
        desc=desc,
        unit="batch",
        disable=not progress,
        leave=False,
        position=position,
        initial=done,
        total=total,
    )
    smooth = None
    for k, (data, idx) in enumerate(bar):
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
        yield data, idx, value
    bar.close()


def _vocabularies(
    objective: str, examples: Iterable[Example], sizes: dict[str, Any]
) -> tuple[Vocabulary, Vocabulary | None]:
    """The input and target vocabularies, counted in one pass over ``examples``."""
    sources: Counter[str] = Counter()
    targets: Counter[str] = Counter()
    for e in examples:
        sources.update(e.source.split())
        sources.update(e.second.split())
        if objective not in PAIR_OBJECTIVES and objective != "lm":
            targets.update(e.target.split())
    vocab = Vocabulary.from_counts(sources, max_size=sizes["vocab_size"])
    if objective in PAIR_OBJECTIVES:
        return vocab, None
    texts = sources if objective == "lm" else targets
    return vocab, Vocabulary.from_counts(texts, max_size=sizes["target_vocab_size"])


def _target_entry(target: Targets | None) -> dict[str, Any] | None:
    if target is None:
        return None
    if isinstance(target, SubwordTargets):
        return {"file": BPE_FILE, "size": len(target), "kind": "bpe", "bleu": "detokenised, 13a"}
    return {"file": "target-vocab.json", "size": len(target), "kind": "words"}


def _load_targets(run_dir: Path, entry: dict[str, Any] | None) -> Targets | None:
    if not entry:
        return None
    if entry.get("kind") == "bpe":
        return SubwordTargets.load(inside(run_dir, BPE_FILE))
    return load_vocab(run_dir, "target-vocab.json")


def _write_vocab(path: Path, vocab: Vocabulary) -> None:
    atomic_write_text(path, json.dumps(vocab.to_json(), ensure_ascii=False) + "\n")


def _new_manifest(
    config: TrainConfig,
    run_dir: Path,
    spec: dict[str, Any],
    settings: dict[str, Any],
    data: TrainingData,
    vocab: Vocabulary,
    target: Targets | None,
    vectors: dict[str, Any] | None,
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
        "examples": len(data),
        "labels": data.labels,
        "label_counts": data.label_counts,
        "vocab": {"file": "vocab.json", "size": len(vocab)},
        "target_vocab": _target_entry(target),
        "vectors": vectors,
        "versions": _versions(),
        "epochs": [],
    }
