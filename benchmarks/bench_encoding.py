"""MiniLM encoding throughput: sentprobe's encoders vs a bare SentenceTransformer loop.

On the same ~5k corpus sentences (a fixed random sample of the benchmark corpus built by
``benchmarks/data.py``), same 2 threads, same batch size, no cache hits:

- ``sentprobe EmbeddingCache (fresh dir)``: what ``sentprobe run`` does: dedupe, length-sort,
  batch, encode with ``get_encoder("minilm")``, write shards to a new, empty cache;
- ``sentprobe encoder.encode``: ``get_encoder("minilm").encode`` on consecutive batches of 64
  in corpus order (no global length sort, so more padding: a naive caller's path);
- ``bare SentenceTransformer``: ``SentenceTransformer(model_dir).encode(sentences, ...)``;
- ``sentprobe HFEncoder layer=all``: all 7 hidden states of MiniLM (mean-pooled) in one pass;
  ``layer=last`` too, to separate the cost of returning every layer from the encoder's own;
- ``bare model(**batch)`` (issue 15's bound): the same transformers model called on the same
  length-sorted batches, tokenized *before* the clock starts, all hidden states returned and
  nothing pooled or copied: the forward passes alone. Side by side with the runner's path
  for all layers (``EmbeddingCache`` of a fresh directory + ``HFEncoder layer=all``: tokenize,
  forward, pool, write shards), in float32 and in bfloat16 (``--dtype bfloat16``), each
  run interleaved ``--repeats`` times (best of each); and the same bare loop tokenizing each
  batch inside the timed loop, as a plain user loop does.

Models are loaded and warmed up before timing. Usage (repository root)::

    HF_HUB_OFFLINE=1 python benchmarks/bench_encoding.py [--n 5000] [--batch-size 64]
        [--repeats 1] [--only-bound] [--out benchmarks/results/encoding.json]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from data import DEFAULT_WORKDIR, load_corpus  # noqa: E402
from results_io import write_result  # noqa: E402

from sentprobe.encoders import get_encoder  # noqa: E402
from sentprobe.encoders.cache import EmbeddingCache  # noqa: E402
from sentprobe.encoders.sbert import minilm_path  # noqa: E402

THREADS = 2


def sample_sentences(workdir: Path, n: int, seed: int = 0) -> list[str]:
    """A fixed random sample of ``n`` distinct corpus sentences."""
    sentences, _ = load_corpus(workdir)
    pick = np.random.default_rng(seed).choice(len(sentences), size=n, replace=False)
    return [" ".join(sentences[i]) for i in sorted(pick)]


def timed(fn: Callable[[], np.ndarray], repeats: int) -> tuple[float, np.ndarray]:
    """Best wall time of ``repeats`` runs, and the last output."""
    best, out = float("inf"), np.zeros(0)
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def bare_forward(
    model_dir: str, sentences: list[str], bs: int, dtype: str, tokenize_inside: bool = False
) -> Callable[[], int]:
    """The bound: ``model(**batch)`` over pre-tokenized, length-sorted batches (HFEncoder's);
    ``tokenize_inside``: each batch tokenized in the timed loop (a user's plain loop)."""
    from transformers import AutoModel, AutoTokenizer

    from sentprobe.encoders.hf import sorted_batches

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).to(dtype=getattr(torch, dtype)).eval()
    texts = [[sentences[i] for i in idx] for idx in sorted_batches([len(s) for s in sentences], bs)]

    def tokenize(batch: list[str]) -> Any:
        return tok(batch, padding=True, truncation=True, max_length=512, return_tensors="pt")

    batches = [] if tokenize_inside else [tokenize(t) for t in texts]

    def run() -> int:
        with torch.inference_mode():
            for batch in map(tokenize, texts) if tokenize_inside else batches:
                model(**batch, output_hidden_states=True)
        return len(sentences)

    run()  # warm-up
    return run


def bound_rows(model_dir: str, sentences: list[str], bs: int, repeats: int) -> list[dict]:
    """Bare forward loop vs the runner's all-layers path, float32 and bfloat16, interleaved."""
    rows = []
    for dtype in ("float32", "bfloat16"):
        bare = bare_forward(model_dir, sentences, bs, dtype)
        plain = bare_forward(model_dir, sentences, bs, dtype, tokenize_inside=True)
        enc = get_encoder(f"hf:{model_dir}", layer="all", batch_size=bs, dtype=dtype)
        enc.encode(sentences[:bs])  # load and warm up
        torch.set_num_threads(THREADS)
        best = {"bare": float("inf"), "plain": float("inf"), "sentprobe": float("inf")}
        for _ in range(repeats):
            for who, loop in (("bare", bare), ("plain", plain)):
                t = time.perf_counter()
                loop()
                best[who] = min(best[who], time.perf_counter() - t)
            with tempfile.TemporaryDirectory() as tmp:
                t = time.perf_counter()
                EmbeddingCache(tmp).vectors(enc, sentences, progress=False)
                best["sentprobe"] = min(best["sentprobe"], time.perf_counter() - t)
        for who, seconds in best.items():
            name = {
                "bare": f"bare model(**batch), all hidden states, {dtype}",
                "plain": f"same, each batch tokenized in the loop, {dtype}",
                "sentprobe": f"sentprobe EmbeddingCache + HFEncoder layer=all, {dtype}",
            }[who]
            rows.append(
                {
                    "encoder": name,
                    "seconds": round(seconds, 2),
                    "sentences_per_s": round(len(sentences) / seconds, 1),
                    "load_after": os.getloadavg()[0],
                }
            )
            print(f"{name:<60} {seconds:7.1f}s {len(sentences) / seconds:8.1f} sent/s", flush=True)
        for who in ("bare", "plain"):
            ratio = best[who] / best["sentprobe"]
            print(f"sentprobe / {who} loop throughput, {dtype}: {ratio:.3f}")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument(
        "--only-bound", action="store_true", help="only the bare-loop vs sentprobe comparison"
    )
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "results" / "encoding.json"
    )
    args = ap.parse_args(argv)
    torch.set_num_threads(THREADS)
    sentences = sample_sentences(args.workdir, args.n)
    bs = args.batch_size
    print(
        f"{len(sentences)} sentences, mean {np.mean([len(s.split()) for s in sentences]):.1f} "
        f"tokens (Moses), batch size {bs}, {THREADS} threads, load {os.getloadavg()}",
        flush=True,
    )

    from sentence_transformers import SentenceTransformer

    model_dir = str(minilm_path())
    bound = bound_rows(model_dir, sentences, bs, max(args.repeats, 2))
    if args.only_bound:
        return _write(args, sentences, bs, bound)
    encoder = get_encoder("minilm", batch_size=bs)
    bare = SentenceTransformer(model_dir, device="cpu")
    hf_all = get_encoder(f"hf:{model_dir}", layer="all", batch_size=bs)
    hf_last = get_encoder(f"hf:{model_dir}", layer="last", batch_size=bs)
    warm = sentences[:bs]
    for enc in (encoder, hf_all, hf_last):
        enc.encode(warm)
    bare.encode(warm, batch_size=bs)
    torch.set_num_threads(THREADS)  # the encoders set threads on load; make sure

    def via_cache() -> np.ndarray:
        with tempfile.TemporaryDirectory() as tmp:
            return EmbeddingCache(tmp).encode(encoder, sentences, progress=False)

    def direct() -> np.ndarray:
        return np.concatenate(
            [encoder.encode(sentences[i : i + bs]) for i in range(0, len(sentences), bs)]
        )

    def bare_st() -> np.ndarray:
        return bare.encode(sentences, batch_size=bs, convert_to_numpy=True, show_progress_bar=False)

    def hf_layers() -> np.ndarray:
        return hf_all.encode(sentences)

    def hf_top() -> np.ndarray:
        return hf_last.encode(sentences)

    runs: list[tuple[str, Callable[[], np.ndarray]]] = [
        ("bare SentenceTransformer.encode", bare_st),
        ("sentprobe EmbeddingCache (fresh dir) + minilm", via_cache),
        ("sentprobe minilm .encode in batches", direct),
        ("sentprobe HFEncoder layer=all (7 views)", hf_layers),
        ("sentprobe HFEncoder layer=last", hf_top),
    ]
    rows: list[dict[str, Any]] = []
    outputs = {}
    for name, fn in runs:
        seconds, out = timed(fn, args.repeats)
        outputs[name] = out
        rows.append(
            {
                "encoder": name,
                "seconds": round(seconds, 2),
                "sentences_per_s": round(len(sentences) / seconds, 1),
                "shape": list(out.shape),
                "load_after": os.getloadavg()[0],
            }
        )
        print(
            f"{name:<48} {seconds:7.1f}s {len(sentences) / seconds:8.1f} sent/s  shape {out.shape}",
            flush=True,
        )
    ref = outputs["bare SentenceTransformer.encode"]
    for name in (
        "sentprobe EmbeddingCache (fresh dir) + minilm",
        "sentprobe minilm .encode in batches",
    ):
        print(f"max |diff| vs bare ({name}): {np.abs(outputs[name] - ref).max():.2e}")
    last = outputs["sentprobe HFEncoder layer=all (7 views)"][:, -1]
    cos = np.sum(last * ref, 1) / np.linalg.norm(last, axis=1) / np.linalg.norm(ref, axis=1)
    print(
        f"HFEncoder last layer vs SentenceTransformer: min cosine {cos.min():.4f} "
        "(ST L2-normalises after pooling)"
    )
    return _write(args, sentences, bs, bound + rows)


def _write(args: argparse.Namespace, sentences: list[str], bs: int, rows: list[dict]) -> int:
    result = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "n_sentences": len(sentences),
        "batch_size": bs,
        "threads": THREADS,
        "repeats": args.repeats,
        "torch": torch.__version__,
        "rows": rows,
    }
    return write_result(args.out, result)


if __name__ == "__main__":
    sys.exit(main())
