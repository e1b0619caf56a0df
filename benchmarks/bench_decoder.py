"""A decoder-only model's layer x pooling sweep against its bare forward pass.

On sample-en's first ``--n`` distinct sentences, each put into the PromptEOL template, in
length-sorted batches of ``--batch-size``, interleaved ``--repeats`` times (best of each):

- ``bare``: ``model(**batch, output_hidden_states=True)`` over batches tokenized before the
  clock starts, nothing pooled or copied: the forward passes alone (the bound);
- ``sweep``: what ``sentprobe run --layer all --pooling mean,max,cls,last,pos:-2,marker:word:
  --prompt ...`` does: an ``EmbeddingCache`` of a fresh directory encoding with
  ``HFEncoder``: tokenize (with the checks of the position poolings), forward, pool every
  (layer, pooling), write the shards;
- ``one``: the same path for one (layer, pooling), ``layer=last, pooling=last``: a sweep done
  one (layer, pooling) per run would cost this times the number of views.

``--model``: a local causal model directory (e.g. a downloaded GPT-2 or Llama); without it, a
GPT-2 small-shaped model (12 layers, 768 wide, random weights: the same arithmetic) with an
8k-token BPE tokenizer trained on sample-en is built in a temporary directory
(tests/decoder_models.py). On a GPU, ``--device cuda [--dtype bfloat16]``. Usage (repository root)::

    HF_HUB_OFFLINE=1 python benchmarks/bench_decoder.py [--n 512] [--batch-size 32]
        [--repeats 3] [--model DIR] [--device cpu|cuda] [--dtype float32|bfloat16]
        [--out benchmarks/results/decoder.json]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import torch  # noqa: E402
from results_io import write_result  # noqa: E402

from sentprobe.encoders.cache import EmbeddingCache  # noqa: E402
from sentprobe.encoders.hf import HFEncoder, sorted_batches  # noqa: E402

PROMPT = 'This sentence: "{}" means in one word:"'
POOLINGS = "mean,max,cls,last,pos:-2,marker:word:"


def sample_sentences(n: int) -> list[str]:
    from sentprobe.datasets.builtin import resolve_tasks

    seen: dict[str, None] = {}
    for task in resolve_tasks("sample-en"):
        seen.update(dict.fromkeys(task.sentences()))
    return list(seen)[:n]


def bare_loop(enc: HFEncoder, sentences: list[str]) -> Any:
    """The bound: the model's forward passes over pre-tokenized, length-sorted batches."""
    enc._load()
    model, tok = enc._model, enc._tokenizer
    order = sorted_batches([len(s) for s in sentences], enc.batch_size)
    texts = [[PROMPT.replace("{}", sentences[i]) for i in idx] for idx in order]
    batches = [tok(t, padding=True, return_tensors="pt").to(enc.device) for t in texts]

    def run() -> None:
        with torch.inference_mode():
            for batch in batches:
                model(**batch, output_hidden_states=True)
        if str(enc.device).startswith("cuda"):
            torch.cuda.synchronize()

    run()  # warm-up
    return run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "decoder.json")
    args = ap.parse_args(argv)
    sentences = sample_sentences(args.n)
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if model is None:
            from decoder_models import save_gpt2

            corpus = [PROMPT, *sample_sentences(20_000)]  # a vocabulary of real words
            shape = {"n_layer": 12, "n_embd": 768, "n_head": 12, "vocab": 8000}
            model = save_gpt2(Path(tmp) / "gpt2-small-shape", corpus=corpus, **shape)
        options = {"batch_size": args.batch_size, "device": args.device, "dtype": args.dtype}
        options["prompt"] = PROMPT
        sweep = HFEncoder(model, layer="all", pooling=POOLINGS, **options)
        one = HFEncoder(model, layer="last", pooling="last", **options)
        bare = bare_loop(sweep, sentences)
        for enc in (sweep, one):
            enc.encode(sentences[: args.batch_size])  # load and warm up
        best = {"bare": float("inf"), "sweep": float("inf"), "one": float("inf")}
        for _ in range(args.repeats):
            t = time.perf_counter()
            bare()
            best["bare"] = min(best["bare"], time.perf_counter() - t)
            for who, enc in (("sweep", sweep), ("one", one)):
                with tempfile.TemporaryDirectory() as cache:
                    t = time.perf_counter()
                    EmbeddingCache(cache).vectors(enc, sentences, progress=False)
                    best[who] = min(best[who], time.perf_counter() - t)
        views = len(sweep.views or [])
        filled = [PROMPT.replace("{}", s) for s in sentences]
        tokens = sum(len(ids) for ids in sweep._tokenizer(filled).input_ids) / len(filled)
        result = {
            "model": str(args.model or "GPT-2 small shape, random weights"),
            "sentences": len(sentences),
            "mean_tokens": round(tokens, 1),
            "batch_size": args.batch_size,
            "device": str(sweep.device),
            "dtype": args.dtype,
            "threads": torch.get_num_threads(),
            "views": views,
            "seconds": {k: round(v, 3) for k, v in best.items()},
            "sweep_over_bare": round(best["sweep"] / best["bare"], 3),
            "one_over_bare": round(best["one"] / best["bare"], 3),
            "separate_runs_over_sweep": round(views * best["one"] / best["sweep"], 1),
            "load": os.getloadavg(),
        }
    for key, value in result.items():
        print(f"{key}: {value}")
    return write_result(args.out, result)


if __name__ == "__main__":
    raise SystemExit(main())
