"""Training speed: sentprobe's training step against plain PyTorch loops of the same model.

    python benchmarks/bench_training.py [-n 1200] [--threads 1] [--arch bilstm-max ...]

For each architecture, the autoencoder objective (encoder + LSTM decoder + softmax) at the
demo preset's sizes on the first ``n`` sentences of the demo corpus, one epoch each of:

* ``sentprobe``: ``training.trainer``'s batches (length-bucketed) and heads (packed decoder,
  output layer on real tokens only);
* ``padded``: the same modules written the obvious way: batches in random order, the
  decoder LSTM over the padded targets, logits for every position, ``ignore_index`` padding;
* ``stepwise``: as ``padded``, with the tutorial-style decoder that calls an ``LSTMCell``
  once per target position in a Python loop (teacher forcing).

All three compute the same loss on the same examples. Throughput is real (non-pad) source +
target tokens per second; variants alternate per architecture so background load hits all
alike, and the best of ``--repeats`` runs is kept.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from sentprobe.encoders.static import load_word_vectors
from sentprobe.training.architectures import ARCHITECTURES, build_from_spec
from sentprobe.training.data import Example, TrainingData
from sentprobe.training.demo import demo_corpus
from sentprobe.training.objectives import Seq2Seq, build_head
from sentprobe.training.presets import preset
from sentprobe.training.trainer import _Encoded, _vocabularies
from sentprobe.training.vocab import BOS, EOS, PAD, embedding_matrix, pad


def make_model(arch: str, examples: list[Example]):
    sizes = preset("demo", arch)
    vocab, target = _vocabularies("autoencoder", examples, sizes)
    vectors = load_word_vectors("glove-6b-50d")
    matrix, _ = embedding_matrix(vocab, vectors)
    spec = {
        "arch": arch,
        "vocab_size": len(vocab),
        "emb_dim": vectors.dim,
        "dim": sizes["dim"],
        "freeze_embeddings": True,
        "options": sizes["arch_options"],
    }
    torch.manual_seed(0)
    encoder = build_from_spec(spec)
    with torch.no_grad():
        encoder.embedding.weight.copy_(torch.from_numpy(matrix))
    encoder.embedding.weight.requires_grad_(False)
    assert target is not None
    model = build_head("autoencoder", encoder, {**sizes, "target_size": len(target)})
    data = _Encoded("autoencoder", examples, vocab, target, [], "cpu")
    return model, data, sizes["batch_size"]


def padded_loss(model: Seq2Seq, batch: dict[str, torch.Tensor], stepwise: bool) -> torch.Tensor:
    """The obvious decoder: over the padded target, logits everywhere, padding ignored."""
    u = model.encoder(batch["src"], batch["src_len"])
    b, width = batch["tgt_in"].shape
    h = torch.tanh(model.init(u)).view(b, model.dec_layers, model.dec_dim).transpose(0, 1)
    h, c = h.contiguous(), torch.zeros_like(h)
    emb = model.embedding(batch["tgt_in"])
    if not stepwise:
        x = torch.cat([emb, u[:, None, :].expand(-1, width, -1)], dim=2)
        out, _ = model.lstm(x, (h, c))
    else:  # one LSTM step per position, as in seq2seq tutorials (1-layer decoder)
        w = model.lstm
        steps = []
        hs, cs = h[0], c[0]
        for t in range(width):
            gates = F.linear(torch.cat([emb[:, t], u], 1), w.weight_ih_l0, w.bias_ih_l0)
            gates = gates + F.linear(hs, w.weight_hh_l0, w.bias_hh_l0)
            i, f, g, o = gates.chunk(4, 1)
            cs = torch.sigmoid(f) * cs + torch.sigmoid(i) * torch.tanh(g)
            hs = torch.sigmoid(o) * torch.tanh(cs)
            steps.append(hs)
        out = torch.stack(steps, 1)
    logits = model.out(out)
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), batch["tgt_out"].reshape(-1), ignore_index=PAD
    )


def epoch(variant: str, model: nn.Module, data: _Encoded, batch_size: int) -> float:
    """Tokens per second over one epoch of ``variant``."""
    idx = np.arange(len(data.src))
    rng = np.random.default_rng(0)
    if variant == "sentprobe":
        batches = data.batches(idx, batch_size, rng)
    else:
        order = idx[rng.permutation(len(idx))]
        batches = [order[k : k + batch_size] for k in range(0, len(order), batch_size)]
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], 1e-3)
    tokens = 0
    start = time.perf_counter()
    for b in batches:
        if variant == "sentprobe":
            loss, _ = model.loss(data.batch(b))  # type: ignore[operator]
        else:
            batch = {}
            batch["src"], batch["src_len"] = pad([data.src[i] for i in b])
            batch["tgt_in"], _ = pad([[BOS, *data.tgt[i]] for i in b])
            batch["tgt_out"], _ = pad([[*data.tgt[i], EOS] for i in b])
            loss = padded_loss(model, batch, variant == "stepwise")  # type: ignore[arg-type]
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        tokens += data.tokens(b)
    return tokens / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=1200)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--arch", nargs="*", default=list(ARCHITECTURES))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    examples = list(TrainingData("autoencoder", [demo_corpus()], batch_size=64))
    examples = examples[: args.n]
    variants = ("sentprobe", "padded", "stepwise")
    print(f"{args.n} sentences, autoencoder, demo sizes, {args.threads} thread(s), "
          f"best of {args.repeats}; tokens/s")  # fmt: skip
    print("| architecture | sentprobe | padded | stepwise | vs padded | vs stepwise |")
    print("|---|---:|---:|---:|---:|---:|")
    for arch in args.arch:
        best = dict.fromkeys(variants, 0.0)
        for _ in range(args.repeats):
            for variant in variants:
                model, data, batch_size = make_model(arch, examples)
                best[variant] = max(best[variant], epoch(variant, model, data, batch_size))
        s, p, w = (best[v] for v in variants)
        print(f"| {arch} | {s:,.0f} | {p:,.0f} | {w:,.0f} | {s / p:.2f}x | {s / w:.2f}x |",
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
