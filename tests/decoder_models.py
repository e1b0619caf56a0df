"""Tiny randomly initialised GPT-2 and Llama models with a byte-level BPE tokenizer, saved as
model directories (built in a second, offline): stand-ins for decoder-only language models."""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "the cat sat on the mat .",
    "a dog ran in the park and the cat slept .",
    'this sentence : " means in one word : "',
    "hello world , how are you today ?",
]


def _tokenizer(bos: bool, padding_side: str, corpus: list[str] = CORPUS, vocab: int = 300):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=["<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(corpus, trainer)
    if bos:  # Llama-style: every input starts with <s>
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))]
        )
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=True)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", padding_side=padding_side
    )


def save_gpt2(
    path: Path,
    n_layer: int = 3,
    n_embd: int = 32,
    n_head: int = 2,
    corpus: list[str] = CORPUS,
    vocab: int = 300,
) -> Path:
    """GPT-2 (learned absolute positions), right padding and no pad token, as GPT-2's own;
    tiny by default (``benchmarks/bench_decoder.py`` builds GPT-2 small's shape, its
    tokenizer trained on the benchmark's sentences)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=vocab,
        n_positions=128,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        bos_token_id=0,
        eos_token_id=1,
    )
    GPT2LMHeadModel(config).save_pretrained(path)  # the base of a causal LM: AutoModel
    _tokenizer(False, "right", corpus, vocab).save_pretrained(path)
    return path


def save_llama(path: Path) -> Path:
    """Llama (rotary positions), a BOS token and left padding, as Llama tokenizers have."""
    import torch
    from transformers import LlamaConfig, LlamaModel

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=300,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        bos_token_id=0,
        eos_token_id=1,
    )
    LlamaModel(config).save_pretrained(path)
    _tokenizer(bos=True, padding_side="left").save_pretrained(path)
    return path
