"""A ``--layer all`` sweep of a 7B-wide model, end to end, against its bare forward pass.

A Llama-shaped model with random weights (``--hidden`` 4096 and ``--intermediate`` 11008, as
a 7B; ``--layers`` transformer layers; a byte-level BPE tokenizer of ``--vocab`` tokens trained
on sample-en) is built in a temporary directory. Over ``--n`` sentences of one sample-en task
(``--task``, split 70/15/15; the first ``--n`` of its items; ``--task pool``: the built-in
samples' 37k distinct sentences labelled by length sextile), one after the other:

- ``bare``: the model's forward passes (``output_hidden_states=True``) over length-sorted
  batches tokenized before the clock starts: the bound;
- ``cached``: ``sentprobe.run(hf:MODEL, layer="all", probe=--probe)`` into a fresh embedding
  cache (``--cache-dtype``): encode every view, store it, probe every view from the cache;
- ``stream``: the same with ``stream=True`` (ridge from statistics, nothing cached).

Each phase reports its wall time, its peak resident memory (sampled every 20 ms, the model
included) and what it left on disk; ratios to ``bare``; and a projection to ``--project-layers``
hidden states (33: a 7B's 32 layers + embeddings) and ``--project-n`` sentences (100k), in
which the forward pass, encoding and storing scale with layers x sentences and the ridge probe
with views x (sentences x dim² + dim³). Usage (repository root; on a GPU add
``--device cuda --probe-device cuda``)::

    HF_HUB_OFFLINE=1 python benchmarks/bench_scale.py [--n 2000] [--layers 2]
        [--task Tense] [--probe ridge] [--cache-dtype float32|bfloat16|float16]
        [--device cpu|cuda] [--dtype float32|bfloat16] [--probe-device cpu|cuda]
        [--out benchmarks/results/scale.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import psutil  # noqa: E402
import torch  # noqa: E402
from results_io import write_result  # noqa: E402

import sentprobe  # noqa: E402
from sentprobe.datasets import resolve_tasks  # noqa: E402
from sentprobe.datasets.task import ProbingTask, Split  # noqa: E402
from sentprobe.encoders.hf import HFEncoder, sorted_batches  # noqa: E402


class PeakRSS:
    """The peak resident memory of this process while the block runs (sampled)."""

    def __enter__(self) -> PeakRSS:
        self.proc, self.peak, self._stop = psutil.Process(), 0, threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        self.start, self.cpu0 = time.perf_counter(), self.proc.cpu_times()
        return self

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            time.sleep(0.02)

    def __exit__(self, *exc: Any) -> None:
        self.seconds = time.perf_counter() - self.start
        cpu = self.proc.cpu_times()
        # CPU seconds (user + system, all threads): less sensitive than wall time to other
        # processes on a shared machine
        self.cpu = cpu.user + cpu.system - self.cpu0.user - self.cpu0.system
        self._stop.set()
        self.thread.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)


def build_model(path: Path, args: argparse.Namespace, corpus: list[str]) -> Path:
    from transformers import LlamaConfig, LlamaModel

    from decoder_models import _tokenizer

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=args.vocab,
        hidden_size=args.hidden,
        intermediate_size=args.intermediate,
        num_hidden_layers=args.layers,
        num_attention_heads=args.hidden // 128,
        num_key_value_heads=args.hidden // 128,
        max_position_embeddings=256,
        bos_token_id=0,
        eos_token_id=1,
    )
    LlamaModel(config).save_pretrained(path)
    _tokenizer(True, "left", corpus, args.vocab).save_pretrained(path)
    return path


POOL = ("sample-en", "sample-fr", "sample-es", "sample-ru")


def pooled() -> tuple[Any, list[tuple[str, str]]]:
    """Every distinct sentence of the built-in samples (``POOL``), in a fixed shuffled order,
    labelled by its word count's sextile: more sentences than one task has, for a run whose
    subject is memory and disk, not accuracy (a random model reads any language alike)."""
    import numpy as np

    sentences = sorted({s for suite in POOL for t in resolve_tasks(suite) for s in t.sentences()})
    np.random.default_rng(0).shuffle(sentences)
    words = np.array([len(s.split()) for s in sentences])
    edges = np.quantile(words, [1 / 6, 2 / 6, 3 / 6, 4 / 6, 5 / 6])
    labels = np.searchsorted(edges, words, side="right")
    (length,) = resolve_tasks("sample-en/SentLen")
    meta = dataclasses.replace(length.metadata, name="pool/LengthSextile", paper_name=None)
    return meta, [(s, f"L{k}") for s, k in zip(sentences, labels, strict=True)]


def task_of(name: str, n: int) -> ProbingTask:
    """The first ``n`` items of sample-en's task ``name`` (train, dev, test: 70/15/15);
    ``pool``: of the pooled samples' sentences (:func:`pooled`)."""
    if name == "pool":
        meta, items = pooled()
    else:
        (task,) = resolve_tasks(f"sample-en/{name}")
        meta = task.metadata
        items = [
            (s, y)
            for k in ("train", "dev", "test")
            for s, y in zip(task.splits[k].sentences, task.splits[k].labels)
        ]
    if len(items) < n:
        raise SystemExit(f"{name} has {len(items)} items, fewer than --n {n}")
    items = items[:n]
    cut = [0, int(0.7 * n), int(0.85 * n), n]
    splits = {}
    for k, (a, b) in zip(("train", "dev", "test"), zip(cut, cut[1:])):
        splits[k] = Split(sentences=[s for s, _ in items[a:b]], labels=[y for _, y in items[a:b]])
    return ProbingTask(meta, splits)


def bare(enc: HFEncoder, sentences: list[str]) -> float:
    enc._load()
    model, tok = enc._model, enc._tokenizer
    order = sorted_batches([len(s) for s in sentences], enc.batch_size)
    batches = [tok([sentences[i] for i in idx], padding=True, return_tensors="pt") for idx in order]
    batches = [b.to(enc.device) for b in batches]
    t = time.perf_counter()
    with torch.inference_mode():
        for batch in batches:
            model(**batch, output_hidden_states=True)
    if str(enc.device).startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - t


def disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--intermediate", type=int, default=11008)
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--task", default="Tense")
    ap.add_argument("--probe", default="ridge")
    ap.add_argument("--cache-dtype", default="float32")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--probe-device", default="cpu")
    ap.add_argument("--project-layers", type=int, default=33)
    ap.add_argument("--project-n", type=int, default=100_000)
    ap.add_argument("--skip-stream", action="store_true")
    ap.add_argument("--skip-bare", action="store_true", help="no bare pass (no ratios)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "scale.json")
    args = ap.parse_args(argv)
    task = task_of(args.task, args.n)
    sentences = list(dict.fromkeys(task.sentences()))
    result: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}}
    result["device_name"] = (
        torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu"
    )
    with tempfile.TemporaryDirectory() as tmp:
        model = build_model(Path(tmp) / "model", args, sentences)
        options = {"batch_size": args.batch_size, "device": args.device, "dtype": args.dtype}
        enc = HFEncoder(model, layer="all", pooling="mean", **options)
        views = len(enc.views or [])
        phases: dict[str, dict[str, Any]] = {}
        if not args.skip_bare:
            with PeakRSS() as m:
                seconds = bare(enc, sentences)
            phases["bare"] = {"seconds": seconds, "cpu": m.cpu, "peak_rss": m.peak, "disk": 0}
        runs = [("cached", False)] + ([] if args.skip_stream else [("stream", True)])
        for name, stream in runs:
            cache = Path(tmp) / f"cache-{name}"
            with PeakRSS() as m:
                frame = sentprobe.run(
                    {f"hf:{model}": {"layer": "all", "pooling": "mean", **options}},
                    [task],
                    baselines="none",
                    probe=args.probe,
                    results=Path(tmp) / f"{name}.sqlite",
                    cache_dir=cache,
                    progress=False,
                    probe_device=args.probe_device,
                    cache_dtype=None if stream else args.cache_dtype,
                    stream=stream,
                )
            phases[name] = {
                "seconds": m.seconds,
                "cpu": m.cpu,
                "peak_rss": m.peak,
                "disk": disk(cache),
                "encode_seconds": float(frame["encode_seconds"].sum()),
                "probe_seconds": float(frame["probe_seconds"].sum()),
                "test_scores": [round(float(x), 4) for x in frame["test_score"]],
            }
        del enc
    base = phases["bare"]["seconds"] if "bare" in phases else float("nan")
    for p in phases.values():
        if "bare" in phases:
            p["ratio_to_bare"] = round(p["seconds"] / base, 3)
            p["cpu_ratio_to_bare"] = round(p["cpu"] / phases["bare"]["cpu"], 3)
    scale_fwd = (args.project_layers * args.project_n) / ((args.layers + 1) * len(sentences))
    cached = phases["cached"]
    d = args.hidden
    itemsize = 4 if args.cache_dtype == "float32" else 2
    projection = {
        "views": args.project_layers,
        "sentences": args.project_n,
        "bare_seconds": base * scale_fwd,
        "cached_encode_and_store_seconds": cached["encode_seconds"] * scale_fwd,
        "cache_bytes": args.project_layers * args.project_n * d * itemsize,
        "ridge_stats_bytes_streaming": 8 * args.project_layers * (d * d + 3 * d),
        # probe time: views x (n d^2 Gram + d^3 eigh); per view, scaled by n from this run
        "probe_seconds": cached["probe_seconds"]
        * (args.project_layers / views)
        * (args.project_n / len(sentences)),
    }
    result.update(sentences=len(sentences), views=views, phases=phases, projection=projection)
    for name, p in phases.items():
        print(
            f"{name:7s} {p['seconds']:8.1f} s  x{p.get('ratio_to_bare', float('nan')):.2f}  "
            f"cpu {p['cpu']:8.1f} s  x{p.get('cpu_ratio_to_bare', float('nan')):.2f}  "
            f"peak {p['peak_rss'] / 1e9:.2f} GB  disk {p['disk'] / 1e6:,.1f} MB"
        )
    shown = {k: (round(v, 1) if isinstance(v, float) else v) for k, v in projection.items()}
    print("projection:", shown)
    return write_result(args.out, result)


if __name__ == "__main__":
    raise SystemExit(main())
