"""The training objectives: a head on the sentence encoder, its loss and its metrics.

* ``Seq2Seq`` (autoencoder, translation, SkipThought, Seq2Tree): an LSTM decoder
  (``dec_layers`` x ``dec_dim``; Conneau et al. use 2 x 512) whose initial hidden state is
  ``tanh(W u)`` of the sentence vector ``u``, and which also reads ``u`` at every step
  (Conneau et al.'s appendix: "the encoder representation is fed to the decoder at every
  time step"). Teacher forcing is one packed LSTM call over the whole target; the output
  layer runs on the packed (non-pad) positions only. Metrics: perplexity and token accuracy
  under teacher forcing and, for the autoencoder, translation and Seq2Tree, the BLEU of greedy
  decoding (``greedy``: the decoder fed its own previous word, from the same initial state)
  against the validation targets (``bleu``). Conneau et al. select on BLEU for NMT and the
  autoencoder, on perplexity for SkipThought and on accuracy for Seq2Tree and NLI
  (``METRIC``).
* ``PairClassifier`` (NLI, DisSent): both sentences through the same encoder, then an MLP
  (``mlp_dim`` tanh units; Conneau et al. 100) on ``[u, v, |u - v|, u * v]`` (InferSent's
  features, as Ravishankar et al. 5.1). Metric: accuracy.
* ``BiLanguageModel`` (language modelling): the encoder is a ``BidirectionalLM`` (a
  left-to-right and a right-to-left causal copy of the architecture); each position's
  forward state predicts the next word and its backward state the previous one, through one
  shared softmax (Peters et al. 2018). Metric: perplexity. The probed sentence vector is the
  concatenation of both directions' pooled outputs.

Every head's ``loss(batch)`` returns ``(mean loss, statistics)``; statistics add up over
batches and ``metrics(stats)`` turns them into the validation numbers.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.rnn import pack_padded_sequence

from ..errors import require
from .architectures import BidirectionalLM, SentenceEncoder
from .vocab import BOS, EOS, PAD, Vocabulary

#: objective -> (the validation metric that selects its best epoch, True if higher is
#: better), as Conneau et al.'s appendix selects models. Seq2Tree's "accuracy" is read as
#: the teacher-forced token accuracy of the linearised tree (its greedy BLEU is recorded,
#: not selected on); equal values go to the lower validation loss (``checkpoint.best_epoch``).
METRIC = {
    "autoencoder": ("bleu", True),
    "translation": ("bleu", True),
    "skipthought": ("ppl", False),
    "seq2tree": ("token_acc", True),
    "nli": ("acc", True),
    "dissent": ("acc", True),
    "lm": ("ppl", False),
}
#: Objectives whose decoder output is measured by greedy decoding and BLEU each epoch.
BLEU_OBJECTIVES = ("autoencoder", "translation", "seq2tree")

Batch = dict[str, torch.Tensor]
Stats = dict[str, float]


class Seq2Seq(nn.Module):
    def __init__(
        self,
        encoder: SentenceEncoder,
        target_size: int,
        *,
        dec_dim: int = 512,
        dec_layers: int = 1,
        dec_emb: int = 128,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.encoder = encoder
        self.dec_layers, self.dec_dim = dec_layers, dec_dim
        self.embedding = nn.Embedding(target_size, dec_emb, padding_idx=PAD)
        self.init = nn.Linear(encoder.out_dim, dec_layers * dec_dim)
        self.lstm = nn.LSTM(
            dec_emb + encoder.out_dim,
            dec_dim,
            num_layers=dec_layers,
            batch_first=True,
            dropout=dropout if dec_layers > 1 else 0.0,
        )
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(dec_dim, target_size)

    def loss(self, batch: Batch) -> tuple[torch.Tensor, Stats]:
        u = self.encoder(batch["src"], batch["src_len"])
        # Decoder input: <s> y1 .. yn; output: y1 .. yn </s>. Both have length n + 1.
        tgt_in, tgt_out, lengths = batch["tgt_in"], batch["tgt_out"], batch["tgt_len"]
        b = u.shape[0]
        h0 = torch.tanh(self.init(u)).view(b, self.dec_layers, self.dec_dim).transpose(0, 1)
        x = torch.cat(
            [self.embedding(tgt_in), u[:, None, :].expand(-1, tgt_in.shape[1], -1)], dim=2
        )
        packed = pack_padded_sequence(
            self.dropout(x), lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        output, _ = self.lstm(packed, (h0.contiguous(), torch.zeros_like(h0)))
        gold = pack_padded_sequence(
            tgt_out, lengths.cpu(), batch_first=True, enforce_sorted=False
        ).data
        return _token_loss(self.out(self.dropout(output.data)), gold)

    @torch.no_grad()
    def greedy(self, src: torch.Tensor, src_len: torch.Tensor, max_len: int) -> list[list[int]]:
        """Greedy decoding: from ``tanh(W u)``, each step reads the previous output word and
        ``u`` (as under teacher forcing) and emits its most probable word; a sentence ends
        at ``</s>`` or after ``max_len`` words. Returns the word ids without ``</s>``."""
        u = self.encoder(src, src_len)
        b = u.shape[0]
        h = torch.tanh(self.init(u)).view(b, self.dec_layers, self.dec_dim).transpose(0, 1)
        state = (h.contiguous(), torch.zeros_like(h).contiguous())
        word = torch.full((b, 1), BOS, dtype=torch.long, device=u.device)
        steps = []
        finished = torch.zeros(b, dtype=torch.bool, device=u.device)
        for _ in range(max_len):
            x = torch.cat([self.embedding(word), u[:, None, :]], dim=2)
            output, state = self.lstm(x, state)
            word = self.out(output[:, -1]).argmax(1, keepdim=True)
            steps.append(word[:, 0])
            finished |= word[:, 0] == EOS
            if bool(finished.all()):
                break
        out = []
        for row in torch.stack(steps, 1).tolist():
            out.append(row[: row.index(EOS)] if EOS in row else row)
        return out


def bleu(hypotheses: list[str], references: list[str], *, detokenize: bool = False) -> float:
    """Corpus BLEU (sacrebleu, one reference each) of token strings that are already
    tokenised (``tokenize="none"``, as Moses' multi-bleu.perl, which Conneau et al. use);
    with ``detokenize`` (subword targets), of Moses-detokenised text under sacrebleu's own
    ``13a`` tokenisation, the standard score of published subword systems."""
    sacrebleu = require("sacrebleu", "train", "BLEU in sentprobe train")
    if not detokenize:
        return float(
            sacrebleu.corpus_bleu(hypotheses, [references], tokenize="none", force=True).score
        )
    from sacremoses import MosesDetokenizer

    detok = MosesDetokenizer()
    hyps, refs = (
        [detok.detokenize(t.split()) for t in texts] for texts in (hypotheses, references)
    )
    return float(sacrebleu.corpus_bleu(hyps, [refs], tokenize="13a").score)


def decoded_text(ids: list[int], target: Vocabulary) -> str:
    return " ".join(target.words[i] for i in ids)


def _token_loss(logits: torch.Tensor, gold: torch.Tensor) -> tuple[torch.Tensor, Stats]:
    loss = F.cross_entropy(logits, gold, reduction="sum")
    n = gold.numel()
    correct = (logits.argmax(1) == gold).sum()
    return loss / max(n, 1), {
        "nll": float(loss.detach()),
        "tokens": float(n),
        "correct": float(correct),
    }


class PairClassifier(nn.Module):
    def __init__(
        self, encoder: SentenceEncoder, n_labels: int, *, mlp_dim: int = 512, dropout: float = 0.0
    ) -> None:
        super().__init__()
        self.encoder = encoder
        self.mlp = nn.Sequential(
            nn.Dropout(dropout),
            nn.Linear(4 * encoder.out_dim, mlp_dim),
            nn.Tanh(),
            nn.Linear(mlp_dim, n_labels),
        )

    def loss(self, batch: Batch) -> tuple[torch.Tensor, Stats]:
        u = self.encoder(batch["src"], batch["src_len"])
        v = self.encoder(batch["second"], batch["second_len"])
        logits = self.mlp(torch.cat([u, v, (u - v).abs(), u * v], dim=1))
        y = batch["label"]
        loss = F.cross_entropy(logits, y)
        return loss, {
            "nll": float(loss.detach()) * len(y),
            "n": float(len(y)),
            "correct": float((logits.argmax(1) == y).sum()),
        }


class BiLanguageModel(nn.Module):
    def __init__(self, encoder: BidirectionalLM, target_size: int, *, dropout: float = 0.0):
        super().__init__()
        self.encoder = encoder
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(encoder.state_dim, target_size)

    def loss(self, batch: Batch) -> tuple[torch.Tensor, Stats]:
        tokens, lengths = batch["src"], batch["src_len"]
        hf, hb, mask = self.encoder.both_states(tokens, lengths)
        gold = batch["lm_target"]  # the same words in the output vocabulary
        # forward: state t predicts word t+1; backward: state t predicts word t-1.
        keep = mask[:, 1:]
        h = torch.cat([hf[:, :-1][keep], hb[:, 1:][keep]])
        y = torch.cat([gold[:, 1:][keep], gold[:, :-1][keep]])
        return _token_loss(self.out(self.dropout(h)), y)


def metrics(objective: str, stats: Stats) -> dict[str, float]:
    """Validation numbers from summed statistics."""
    if objective in ("nli", "dissent"):
        n = max(stats.get("n", 0.0), 1.0)
        return {"loss": stats["nll"] / n, "acc": 100.0 * stats["correct"] / n}
    n = max(stats.get("tokens", 0.0), 1.0)
    mean = stats["nll"] / n
    return {
        "loss": mean,
        "ppl": math.exp(min(mean, 50.0)),
        "token_acc": 100.0 * stats["correct"] / n,
    }


def add_stats(total: Stats, stats: Stats) -> Stats:
    for k, v in stats.items():
        total[k] = total.get(k, 0.0) + v
    return total


def build_head(objective: str, encoder: SentenceEncoder, sizes: dict[str, Any]) -> nn.Module:
    """The model trained for ``objective`` around ``encoder``."""
    if objective in ("nli", "dissent"):
        return PairClassifier(
            encoder, sizes["n_labels"], mlp_dim=sizes["mlp_dim"], dropout=sizes["dropout"]
        )
    if objective == "lm":
        assert isinstance(encoder, BidirectionalLM)
        return BiLanguageModel(encoder, sizes["target_size"], dropout=sizes["dropout"])
    return Seq2Seq(
        encoder,
        sizes["target_size"],
        dec_dim=sizes["dec_dim"],
        dec_layers=sizes["dec_layers"],
        dec_emb=sizes["dec_emb"],
        dropout=sizes["dropout"],
    )
