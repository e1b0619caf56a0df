"""Cross-lingual students: a target-language encoder trained to reproduce a teacher's vectors of
the translations (X-Probe, Ravishankar et al. 2019, §5.2, after Conneau et al. 2018's XNLI).

For a parallel pair (source sentence ``s``, target sentence ``t``), ``y = teacher(s)`` is
computed once (through the embedding cache, so any encoder sentprobe can use is a teacher;
into a file of the run folder, so a resumed run encodes nothing again: ``training.pairs``
keeps the corpus on disk and memory flat in its size), and the student ``x = student(t)``
is trained with the paper's alignment loss, as written in their §5.2 (L2 norms, not squared)::

    L = ||x - y|| - λ (||x_c - y|| + ||x - y_c||)

averaged over the batch, where ``x_c`` is the student vector and ``y_c`` the teacher vector of
another pair of the same batch (a random derangement, drawn separately for each term).
λ = 0.25 as in the paper's appendix. Up to λ = 0.5 the loss is bounded below: with
``x_c = x[π]`` and ``y_c = y[σ]``, the triangle inequality gives ``||x_π(i) - y_i|| <=
||x_π(i) - y_π(i)|| + ||y_π(i) - y_i||`` and ``||x_i - y_σ(i)|| <= ||x_i - y_i|| + ||y_i -
y_σ(i)||``; averaged over the batch (π is a permutation) that is ``L >= (1 - 2λ)
mean||x - y|| - λ mean(||y_π - y|| + ||y - y_σ||)``, a bound set by the fixed teacher
vectors, which ``x = y`` reaches at λ = 0.5. Above 0.5, scaling the student's vectors up
lowers the loss without limit (the positive term grows like ``|x|``, the negatives like
``2λ|x|``), so λ > 0.5 is refused.

Each epoch ends with a validation on held-out pairs: the MSE between student and teacher
vectors, and translation retrieval accuracy (the share of held-out target sentences whose
nearest teacher vector by cosine, among all held-out ones, is their own translation's), plus
a downstream task's dev accuracy when the caller gives one (the paper validates on XNLI).
Training stops once the monitored value has not improved for ``patience`` (2) consecutive
epochs, as in the paper. Every epoch is a checkpoint in the run format of
``training.checkpoint`` (so ``sentprobe run -e runs/NAME`` probes the student) and a rerun
with the same settings continues after the last finished epoch.

The student reads Moses-tokenised text (as the probing suites are): target sentences are
tokenised here with the tokenizer ``sentprobe build`` uses. The teacher gets the source side
the way it reads text: Moses-tokenised for encoders that split on whitespace (a run trained
by sentprobe, bag-of-vectors, the untrained baselines; an encoder class says so with
``tokenized_input = True``), as written for everything else (Hugging Face and
sentence-transformers models tokenise raw text themselves).

Long because the loss, its negatives, the stopping rule, validation and the resumable epoch
loop of this one objective are read together.
"""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sentprobe.progress import tqdm

from ..datasets.parallel import ParallelCorpus, ParallelFiles, shipped_parallel_path
from ..encoders.base import Encoder
from ..encoders.cache import EmbeddingCache
from ..encoders.hf import set_torch_threads, sorted_batches
from ..encoders.static import BUILTIN_VECTORS, BoVEncoder, load_word_vectors
from ..errors import SentprobeError
from ..generation.corpus import MosesPreprocessor
from ..io import atomic_write_text, fresh_dir, make_dirs
from .architectures import ARCHITECTURES, SentenceEncoder, build_encoder
from .checkpoint import (
    FORMAT,
    TrainedRunEncoder,
    completed_epochs,
    load_encoder,
    load_state,
    load_vocab,
    read_manifest,
    save_epoch,
    write_manifest,
)
from .devices import resolve_device
from .pairs import Pairs, Rows, encode_teacher, spool, teacher_file
from .randomness import restore_rng_states, rng_states
from .vocab import Vocabulary, embedding_matrix, pad

__all__ = [
    "PRESETS",
    "EarlyStopping",
    "StudentConfig",
    "alignment_loss",
    "derangement",
    "retrieval_accuracy",
    "teacher_reads_tokens",
    "train_student",
]

#: What the monitored validation value is, and whether higher is better.
MONITORS = {"mse": False, "retrieval": True, "task": True}
#: ``map-encoder --preset``: teacher, data, language, run directory and StudentConfig fields.
#: demo-fr is sized to train in well under 20 minutes on two CPU cores (docs/crosslingual.md).
PRESETS: dict[str, dict[str, Any]] = {
    "demo-fr": {
        "teacher": "minilm",
        "parallel": [str(shipped_parallel_path("fr"))],
        "lang": "fr",
        "output": Path("runs/map-fr"),
        "arch": "bilstm-max",
        "emb_dim": 128,
        "lr": 2e-3,
        "epochs": 6,
    },
}
#: Encodes target-language (tokenised) sentences with the student being trained.
EncodeFn = Callable[[Sequence[str]], np.ndarray]


def alignment_loss(
    x: torch.Tensor, y: torch.Tensor, x_c: torch.Tensor, y_c: torch.Tensor, lam: float
) -> torch.Tensor:
    """``mean(||x - y|| - λ (||x_c - y|| + ||x - y_c||))`` over the batch (rows)."""
    pos = torch.linalg.vector_norm(x - y, dim=1)
    neg = torch.linalg.vector_norm(x_c - y, dim=1) + torch.linalg.vector_norm(x - y_c, dim=1)
    return (pos - lam * neg).mean()


def derangement(n: int, generator: torch.Generator) -> torch.Tensor:
    """A random permutation of ``range(n)`` without fixed points (one random cycle), so
    every row's negative comes from another pair."""
    if n < 2:
        raise SentprobeError("in-batch negatives need batches of at least 2 pairs")
    order = torch.randperm(n, generator=generator)
    out = torch.empty(n, dtype=torch.long)
    out[order] = order.roll(-1)
    return out


class EarlyStopping:
    """Stop after ``patience`` consecutive epochs without a strict improvement."""

    def __init__(self, patience: int = 2, higher_is_better: bool = False) -> None:
        self.patience = patience
        self.higher_is_better = higher_is_better
        self.best_: float | None = None
        self.best_epoch_: int | None = None
        self.stale_ = 0

    def update(self, epoch: int, value: float) -> bool:
        """Record one epoch's value; True if it is the best so far."""
        better = self.best_ is None or (
            value > self.best_ if self.higher_is_better else value < self.best_
        )
        if better:
            self.best_, self.best_epoch_, self.stale_ = value, epoch, 0
        else:
            self.stale_ += 1
        return better

    @property
    def should_stop(self) -> bool:
        return self.stale_ >= self.patience

    def state(self) -> dict[str, Any]:
        return {"best": self.best_, "best_epoch": self.best_epoch_, "stale": self.stale_}

    def restore(self, state: dict[str, Any]) -> EarlyStopping:
        self.best_, self.best_epoch_, self.stale_ = (
            state["best"],
            state["best_epoch"],
            state["stale"],
        )
        return self


def retrieval_accuracy(student: np.ndarray, teacher: np.ndarray) -> float:
    """Share of rows ``i`` whose most cosine-similar teacher row is row ``i``."""
    s = student / np.maximum(np.linalg.norm(student, axis=1, keepdims=True), 1e-12)
    t = teacher / np.maximum(np.linalg.norm(teacher, axis=1, keepdims=True), 1e-12)
    return float(np.mean(np.argmax(s @ t.T, axis=1) == np.arange(len(s))))


def _takes(arch: str) -> frozenset[str]:
    """Which of ``--layers``/``--dropout`` the architecture ``arch`` uses."""
    return ARCHITECTURES[arch][0].OPTIONS if arch in ARCHITECTURES else frozenset()


@dataclass(frozen=True)
class StudentConfig:
    """Everything that shapes a student; all but ``epochs`` must match to resume a run."""

    arch: str = "bilstm-max"
    dim: int | None = None  # None: chosen so that the output has the teacher's dimension
    emb_dim: int = 128
    layers: int = 1
    dropout: float = 0.0
    lam: float = 0.25
    lr: float = 1e-3
    batch_size: int = 64
    vocab_size: int = 20000
    min_count: int = 1
    valid_size: int = 1000
    seed: int = 0
    monitor: str = "mse"
    patience: int = 2
    #: Word vectors for the student's input table (e.g. ``map-words`` output), frozen.
    vectors: str | None = None
    epochs: int = 10

    def check(self) -> None:
        if not 0 <= self.lam <= 0.5:
            raise SentprobeError(
                f"--lambda {self.lam}: must be in [0, 0.5]; above 0.5 the loss has no "
                "minimum (scaling the student's vectors up lowers it without limit)"
            )
        if self.monitor not in MONITORS:
            raise SentprobeError(f"unknown monitor {self.monitor!r}; use {', '.join(MONITORS)}")
        if self.batch_size < 2 or self.epochs < 1 or self.valid_size < 1 or self.patience < 1:
            raise SentprobeError("batch size >= 2, epochs >= 1, valid size >= 1, patience >= 1")
        for name in ("layers", "dropout"):  # the CNN has neither: refused, not dropped
            value = getattr(self, name)
            if name not in _takes(self.arch) and value != getattr(StudentConfig, name):
                raise SentprobeError(f"--{name} {value}: {self.arch} takes no --{name}")

    def settings(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "epochs"}


@dataclass
class _Data:
    """The pairs on disk (``training.pairs``), the held-out teacher vectors in memory, and,
    once the run is open, the files training batches read their rows from."""

    pairs: Pairs
    valid_y: np.ndarray
    teacher: Rows | None = None
    targets: Rows | None = None


def teacher_reads_tokens(teacher: Encoder) -> bool:
    """Whether ``teacher`` splits its input on whitespace and so needs Moses-tokenised text
    (a sentprobe-trained run, bag-of-vectors, or a class that sets ``tokenized_input``)."""
    declared = getattr(teacher, "tokenized_input", None)
    if declared is not None:
        return bool(declared)
    return isinstance(teacher, TrainedRunEncoder | BoVEncoder)


def _prepare(
    corpus: ParallelCorpus | ParallelFiles,
    lang: str,
    teacher: Encoder,
    cache: EmbeddingCache,
    config: StudentConfig,
    folder: Path,
    source_language: str = "en",
) -> _Data:
    """Tokenise the targets (and the sources for a teacher that reads tokens) into
    ``folder``, hold out ``valid_size`` pairs, encode their sources with the teacher."""
    tokenizer = MosesPreprocessor(lang=lang)
    source_tokenizer = (
        MosesPreprocessor(lang=source_language) if teacher_reads_tokens(teacher) else None
    )
    pairs = spool(
        corpus.pairs(),
        folder,
        (lambda s: " ".join(source_tokenizer.tokenize(s))) if source_tokenizer else str,
        lambda t: " ".join(tokenizer.tokenize(t)),
        valid_size=config.valid_size,
        batch_size=config.batch_size,
        seed=config.seed,
    )
    if teacher.prepare_per_task:  # SentEval-style: prepared on every source, in one go
        teacher.prepare_task(list(pairs.sources()))
    return _Data(pairs, encode_teacher(teacher, cache, pairs.valid_source))


def _build_student(
    config: StudentConfig, vocab: Vocabulary, out_dim: int
) -> tuple[SentenceEncoder, dict[str, Any], dict[str, Any] | None]:
    """The untrained student, its manifest spec, and its word vectors' manifest entry."""
    embeddings, vectors_entry, emb_dim = None, None, config.emb_dim
    if config.vectors:
        wv = load_word_vectors(config.vectors)
        embeddings, _ = embedding_matrix(vocab, wv, seed=config.seed)
        emb_dim = wv.dim
        vectors_entry = {"spec": _vectors_spec(config.vectors), "id": wv.id}
    options: dict[str, Any] = {
        name: getattr(config, name) for name in ("layers", "dropout") if name in _takes(config.arch)
    }
    dims = [config.dim] if config.dim else [d for d in (out_dim // 2, out_dim) if d > 0]
    torch.manual_seed(config.seed)
    for dim in dims:
        encoder = build_encoder(
            config.arch,
            vocab_size=len(vocab),
            emb_dim=emb_dim,
            dim=dim,
            embeddings=embeddings,
            freeze_embeddings=embeddings is not None,
            **options,
        )
        if encoder.out_dim == out_dim:
            spec = {
                "arch": config.arch,
                "vocab_size": len(vocab),
                "emb_dim": emb_dim,
                "dim": dim,
                "freeze_embeddings": embeddings is not None,
                "options": options,
            }
            return encoder, spec, vectors_entry
    raise SentprobeError(
        f"{config.arch} with --dim {', '.join(map(str, dims))} does not output the teacher's "
        f"{out_dim} dimensions; choose --dim so that it does"
    )


def _vectors_spec(vectors: str) -> str:
    """A built-in name as is, a file by its absolute path: the run is probed and resumed
    from other directories too."""
    if vectors in BUILTIN_VECTORS:
        return vectors
    return str(Path(vectors).expanduser().resolve())


def _encode_with(
    student: SentenceEncoder, vocab: Vocabulary, device: str, batch_size: int = 256
) -> EncodeFn:
    def encode(sentences: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(sentences), student.out_dim), dtype=np.float32)
        was_training = student.training
        student.eval()
        with torch.inference_mode():
            for idx in sorted_batches([len(s.split()) for s in sentences], batch_size):
                tokens, lengths = vocab.batch([sentences[i] for i in idx], device=device)
                out[idx] = student(tokens, lengths).float().cpu().numpy()
        student.train(was_training)
        return out

    return encode


def _batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Random batches of similar lengths: shuffle, sort within chunks of 50 batches, shuffle
    the batches (less padding, still random); a last batch of one pair joins the previous."""
    order = rng.permutation(len(lengths))
    out = []
    chunk = batch_size * 50
    for start in range(0, len(order), chunk):
        part = order[start : start + chunk]
        part = part[np.argsort(lengths[part], kind="stable")]
        out += [part[i : i + batch_size] for i in range(0, len(part), batch_size)]
    if len(out) > 1 and len(out[-1]) < 2:
        out[-2] = np.concatenate([out[-2], out.pop()])
    return [out[i] for i in rng.permutation(len(out))]


def _check_resumable(manifest: dict[str, Any], expected: dict[str, Any], run_dir: Path) -> None:
    stored = manifest.get("mapping", {}).get("settings")
    if stored is None:
        raise SentprobeError(f"{run_dir}: a training run, but not a cross-lingual student")
    changed = sorted(k for k in set(stored) | set(expected) if stored.get(k) != expected.get(k))
    if changed:
        raise SentprobeError(
            f"{run_dir}: exists with other settings ({', '.join(changed)}); continue it with "
            "the same ones, or write to another -o"
        )


@dataclass
class _Run:
    """A student being trained: model, vocabulary, manifest, and where training resumes."""

    student: SentenceEncoder
    vocab: Vocabulary
    manifest: dict[str, Any]
    start: int
    state: dict[str, Any] | None


def _open_run(
    run_dir: Path, config: StudentConfig, data: _Data, meta: dict[str, Any], name: str | None
) -> _Run:
    """Continue the run in ``run_dir`` (same settings required) or start a new one there."""
    out_dim = int(data.valid_y.shape[1])
    if (run_dir / "run.json").is_file():
        manifest = read_manifest(run_dir)
        _check_resumable(manifest, meta["settings"], run_dir)
        done = completed_epochs(manifest)
        if not done:
            vocab = load_vocab(run_dir)
            return _Run(_build_student(config, vocab, out_dim)[0], vocab, manifest, 0, None)
        student, vocab, _ = load_encoder(run_dir, done[-1])
        return _Run(student.train(), vocab, manifest, done[-1], load_state(run_dir, done[-1]))
    vocab = Vocabulary.from_counts(
        data.pairs.train_counts(), max_size=config.vocab_size, min_count=config.min_count
    )
    student, spec, vectors_entry = _build_student(config, vocab, out_dim)
    manifest = {
        "format": FORMAT,
        # <teacher>-><lang>/<arch>/<run>: students of one teacher and language (other
        # architectures, other settings) must not share a row name, or tables merge them
        "name": name or f"{meta['teacher_label']}->{meta['language']}/{config.arch}/{run_dir.name}",
        "objective": "cross-lingual mapping (X-Probe 5.2)",
        "arch": config.arch,
        "metric": {"name": config.monitor, "higher_is_better": MONITORS[config.monitor]},
        "encoder": spec,
        "mapping": {
            **meta,
            "loss": "||x-y|| - lambda (||x_c-y|| + ||x-y_c||), L2 norms, in-batch negatives",
            "train_pairs": len(data.pairs.train),
            "valid_pairs": len(data.pairs.valid),
        },
        "versions": {"torch": torch.__version__, "numpy": np.__version__},
        "epochs": [],
    }
    if vectors_entry:
        manifest["vectors"] = vectors_entry
    make_dirs(run_dir)
    atomic_write_text(run_dir / "vocab.json", json.dumps(vocab.to_json(), ensure_ascii=False))
    write_manifest(run_dir, manifest)
    return _Run(student, vocab, manifest, 0, None)


def _train_epoch(
    run: _Run, data: _Data, config: StudentConfig, optimizer: torch.optim.Optimizer, epoch: int,
    progress: bool, device: str, max_batches: int | None = None,
) -> float:  # fmt: skip
    """One pass over the training pairs in random batches (its first ``max_batches`` only,
    when given); returns the mean loss. Batches read their rows from disk."""
    assert data.teacher is not None and data.targets is not None
    rng = np.random.default_rng([config.seed, epoch])  # resumable without saved RNG states
    gen = torch.Generator().manual_seed(config.seed * 100003 + epoch)
    params = [p for p in run.student.parameters() if p.requires_grad]
    train = data.pairs.train
    run.student.train()
    total, seen = 0.0, 0
    batches = _batches(data.pairs.lengths[train], config.batch_size, rng)[:max_batches]
    bar = tqdm(batches, desc=f"epoch {epoch}", unit="batch", disable=not progress, leave=False)
    for idx in bar:
        tokens, lens = pad(data.targets.take(train[idx].tolist()), device=device)
        y = torch.from_numpy(data.teacher.matrix(train[idx])).to(device)
        x = run.student(tokens, lens)
        x_c, y_c = (
            x[derangement(len(idx), gen).to(device)],
            y[derangement(len(idx), gen).to(device)],
        )
        loss = alignment_loss(x, y, x_c, y_c, config.lam)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 5.0)
        optimizer.step()
        total += loss.item() * len(idx)
        seen += len(idx)
        bar.set_postfix(loss=f"{total / seen:.4f}", refresh=False)
    return total / seen


def train_student(
    run_dir: str | Path,
    teacher: Encoder,
    teacher_spec: str,
    corpus: ParallelCorpus | ParallelFiles,
    lang: str,
    config: StudentConfig,
    cache: EmbeddingCache,
    validate: Callable[[EncodeFn], float] | None = None,
    source_language: str = "en",
    progress: bool = True,
    log: Callable[[str], None] = print,
    threads: int | None = None,
    name: str | None = None,
    device: str = "cpu",
    max_steps: int | None = None,
) -> dict[str, Any]:
    """Train (or continue) the student in ``run_dir``; returns the run manifest.

    ``validate`` scores a downstream task with the student's encode function (higher is
    better); it is what ``monitor="task"`` stops on. ``threads``: torch threads (default:
    every core this process may use). ``name``: the run's row name in results tables
    (default ``<teacher>-><lang>/<arch>/<folder>``). ``device``: where the student trains
    (``training.devices``; the teacher's vectors come from the cache, encoded where the
    teacher encodes). ``max_steps``: stop after that many training steps in all (for
    timing); an epoch cut short is not saved, so a rerun trains it again.

    The corpus is tokenised into a temporary folder of ``run_dir`` and the teacher's vectors
    are kept in a file there (``training.pairs``): memory does not grow with the corpus.
    """
    config.check()
    device = resolve_device(device)
    if config.vectors:
        config = replace(config, vectors=_vectors_spec(config.vectors))
    if config.monitor == "task" and validate is None:
        raise SentprobeError("monitor 'task' needs a downstream validation task")
    if max_steps is not None and max_steps < 1:
        raise SentprobeError(f"--max-steps {max_steps}: must be at least 1")
    run_dir = Path(run_dir)
    set_torch_threads(threads)
    created = not run_dir.exists()
    # the tokenised corpus; one left by a killed run is replaced, a link there refused
    folder = fresh_dir(run_dir / ".pairs", run_dir)
    try:
        data = _prepare(corpus, lang, teacher, cache, config, folder, source_language)
        return _fit(run_dir, teacher, teacher_spec, lang, config, cache, data, validate,
                    source_language, progress, log, name, device, max_steps)  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if created and not any(run_dir.iterdir()):  # refused before the run began
            run_dir.rmdir()


def _fit(
    run_dir: Path, teacher: Encoder, teacher_spec: str, lang: str, config: StudentConfig,
    cache: EmbeddingCache, data: _Data, validate: Callable[[EncodeFn], float] | None,
    source_language: str, progress: bool, log: Callable[[str], None], name: str | None,
    device: str, max_steps: int | None,
) -> dict[str, Any]:  # fmt: skip
    """``train_student`` once the pairs are on disk: open the run, train, validate, save."""
    meta = {
        "teacher": teacher_spec,
        "teacher_label": teacher.name,
        "source_language": source_language,
        "language": lang,
        "settings": {
            **config.settings(),
            "data_sha256": data.pairs.sha256,
            "teacher_fingerprint": teacher.fingerprint,
            "language": lang,
        },
    }
    run = _open_run(run_dir, config, data, meta, name)
    run.student.to(device)
    mapping = run.manifest["mapping"]
    if mapping.get("stopped"):
        log(f"{run_dir}: already finished ({mapping['stopped']['reason']})")
        return run.manifest
    if run.start:
        log(f"{run_dir}: resuming after epoch {run.start}")
    stopper = EarlyStopping(config.patience, MONITORS[config.monitor])
    params = [p for p in run.student.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=config.lr)
    if run.state is not None:
        optimizer.load_state_dict(run.state["optimizer"])
        stopper.restore(run.state["early_stopping"])
        restore_rng_states(run.state)  # dropout masks as an uninterrupted run draws them
    encode = _encode_with(run.student, run.vocab, device)
    data.targets = data.pairs.write_ids(run.vocab)
    data.teacher = teacher_file(data.pairs, run_dir, teacher, cache, run.student.out_dim, progress)
    train = data.pairs.train
    per_epoch = len(
        _batches(data.pairs.lengths[train], config.batch_size, np.random.default_rng(0))
    )
    for epoch in range(run.start + 1, config.epochs + 1):
        cut = None
        if max_steps is not None and max_steps - (epoch - 1) * per_epoch < per_epoch:
            cut = max(0, max_steps - (epoch - 1) * per_epoch)
        began = time.perf_counter()
        loss = (
            _train_epoch(run, data, config, optimizer, epoch, progress, device, cut)
            if cut != 0
            else 0.0
        )
        if cut is not None:
            log(f"--max-steps {max_steps}: stopped {cut} steps into epoch {epoch}; the epoch "
                f"is not saved (rerun to train it), mean loss {loss:.4f}")  # fmt: skip
            break
        metrics: dict[str, Any] = {"train_loss": loss}
        valid_x = encode(data.pairs.valid_target)
        metrics["valid_mse"] = float(np.mean((valid_x - data.valid_y) ** 2))
        metrics["valid_retrieval"] = retrieval_accuracy(valid_x, data.valid_y)
        if validate is not None:
            metrics["valid_task"] = float(validate(encode))
        value = metrics[f"valid_{config.monitor}"]
        if not math.isfinite(value):
            raise SentprobeError(f"epoch {epoch}: validation {config.monitor} is {value}")
        metrics["improved"] = stopper.update(epoch, value)
        metrics["seconds"] = round(time.perf_counter() - began, 1)
        mapping["best_epoch"] = run.manifest["best_epoch"] = stopper.best_epoch_
        if stopper.should_stop:
            mapping["stopped"] = {
                "epoch": epoch,
                "reason": f"no better validation {config.monitor} for {config.patience} "
                f"epochs; best epoch {stopper.best_epoch_}",
            }
        state = {
            "optimizer": optimizer.state_dict(),
            "early_stopping": stopper.state(),
            **rng_states(),
        }
        save_epoch(run_dir, run.manifest, epoch, run.student, state, metrics)
        log(
            f"epoch {epoch}: loss {metrics['train_loss']:.4f}, valid MSE "
            f"{metrics['valid_mse']:.5f}, retrieval {metrics['valid_retrieval']:.1%}"
            + (f", task {metrics['valid_task']:.1%}" if "valid_task" in metrics else "")
            + f" ({metrics['seconds']:.0f} s){' *' if metrics['improved'] else ''}"
        )
        if stopper.should_stop:
            log(f"early stop: {mapping['stopped']['reason']}")
            break
    return run.manifest
