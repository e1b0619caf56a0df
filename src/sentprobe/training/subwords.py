"""Subword decoder targets (``sentprobe train --targets bpe``): byte-pair encoding learned by
Hugging Face ``tokenizers`` on the training targets only (never the validation split).

Word targets give every word outside the target vocabulary one ``<unk>``, which a BLEU
score counts as a miss; with subwords every word is spelled out, so the decoder's BLEU can
be compared with published figures of subword systems. The learned tokenizer is saved in
the run folder (``target-bpe.json``, also part of the run's fingerprint) and the vocabulary
size is a run setting (``target_vocab_size``). The four specials come first, with the ids
of word vocabularies (``vocab.SPECIALS``).

Word boundaries are kept SentencePiece-style (``Metaspace``: a word-initial piece carries
``▁``), so decoding gives the Moses-tokenised target text back. BLEU on subword runs is
sacrebleu's standard score: the decoded hypothesis and the reference are both
Moses-detokenised (sacremoses) and then tokenised by sacrebleu itself (``13a``), not scored
on subword or Moses tokens.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from ..io import atomic_write_text
from .vocab import SPECIALS, UNK

FILE = "target-bpe.json"
#: ``--targets``: the kinds of decoder target.
TARGETS = ("words", "bpe")


class SubwordTargets:
    """A trained BPE tokenizer with ``Vocabulary``'s interface for decoder targets."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer

    @classmethod
    def train(cls, texts: Iterable[str], size: int) -> SubwordTargets:
        """BPE with ``size`` symbols (specials included) learned from ``texts``."""
        tokenizer = Tokenizer(models.BPE(unk_token=SPECIALS[UNK]))
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
        tokenizer.decoder = decoders.Metaspace()
        trainer = trainers.BpeTrainer(
            vocab_size=size, special_tokens=list(SPECIALS), show_progress=False
        )
        tokenizer.train_from_iterator(texts, trainer)
        return cls(tokenizer)

    @classmethod
    def load(cls, path: Path) -> SubwordTargets:
        return cls(Tokenizer.from_file(str(path)))

    def save(self, path: Path) -> None:
        atomic_write_text(path, self.tokenizer.to_str() + "\n")

    def __len__(self) -> int:
        return self.tokenizer.get_vocab_size()

    def ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text).ids

    def text(self, ids: Sequence[int]) -> str:
        """The (Moses-tokenised) text of subword ids."""
        return self.tokenizer.decode(list(ids))
