"""Model sizes: the papers' (``paper``), a laptop's (``laptop``, the default) and the demo's.

``paper`` follows the papers as far as the text says: Conneau et al. (2018, 3.3 and
appendix): BiLSTMs of 2 x 512 units per direction, gated ConvNet 8 x 512 with kernel 3,
2-layer 512-unit LSTM decoders, a 100-unit NLI MLP; Ravishankar et al. (2019, appendix
A.1): CNN widths 3/4/5 with 800 channels projected to 1024, attention size 150, BiLSTMs
2 x 512; Kim et al. (2019, 3.1): 2 x 1024 BiLSTM, a 1024-unit one-layer decoder. The
papers' inputs are 300-d fastText vectors (pass ``--vectors crawl-300d-2M.vec``); the
default here is GloVe 6B-50d from the installed package. Targets are words (the 40k most
frequent), not BPE codes as in Conneau et al.

``laptop`` keeps every architecture's shape with 1-layer LSTMs (Kim's stays 2-layer: the
skip connection is defined over a 2-layer stack), a 4-layer ConvNet and 256 units.
``demo`` is smaller again, sized so that ``sentprobe train --preset demo`` (six runs) fits
in 20 minutes on two CPU cores.
"""

from __future__ import annotations

from typing import Any

from ..errors import SentprobeError

#: Hyper-parameters common to all architectures, per preset.
PRESETS: dict[str, dict[str, Any]] = {
    "laptop": {
        "dim": 256,
        "dec_dim": 256,
        "dec_layers": 1,
        "dec_emb": 64,
        "mlp_dim": 256,
        "batch_size": 64,
        "lr": 1e-3,
        "vocab_size": 20000,
        "target_vocab_size": 8000,
        "layers": 1,
        "conv_layers": 4,
        "dropout": 0.0,
        "emb_dim": 100,
    },
    "paper": {
        "dim": 512,
        "dec_dim": 512,
        "dec_layers": 2,
        "dec_emb": 300,
        "mlp_dim": 100,
        "batch_size": 64,
        "lr": 1e-3,
        "vocab_size": 100000,
        "target_vocab_size": 40000,
        "layers": 2,
        "conv_layers": 8,
        "dropout": 0.1,
        "emb_dim": 300,
    },
    "demo": {
        "dim": 128,
        "dec_dim": 128,
        "dec_layers": 1,
        "dec_emb": 32,
        "mlp_dim": 128,
        "batch_size": 64,
        "lr": 2e-3,
        "vocab_size": 20000,
        "target_vocab_size": 2000,
        "layers": 1,
        "conv_layers": 3,
        "dropout": 0.0,
        "emb_dim": 64,
    },
}

#: Per-architecture sizes of the ``paper`` preset that differ from the common ones.
PAPER_ARCH = {
    "cnn-max": {"dim": 1024, "channels": 800},
    "cnn-avg": {"dim": 1024, "channels": 800},
    "bilstm-skip": {"dim": 1024, "dec_dim": 1024, "dec_layers": 1},
}


def preset(name: str, arch: str) -> dict[str, Any]:
    """The hyper-parameters of preset ``name`` for ``arch`` (``arch_options`` included)."""
    if name not in PRESETS:
        raise SentprobeError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}, demo")
    sizes = dict(PRESETS[name])
    if name == "paper":
        sizes.update(PAPER_ARCH.get(arch, {}))
    sizes["optimizer"] = "adam"
    if arch == "gatedconv":
        # Conneau et al.: "SGD with momentum for Gated ConvNets (after Adam gave very poor
        # results)"; the learning rate is not in the paper (0.05 is ours). With Adam the
        # demo's ConvNet did not learn (docs/training.md).
        sizes.update(optimizer="sgd", lr=0.05)
    options: dict[str, Any] = {"dropout": sizes["dropout"]}
    if arch == "gatedconv":
        options.update(layers=sizes["conv_layers"], kernel=3)
    elif arch.startswith("cnn"):
        options.update(kernels=[3, 4, 5], channels=sizes.get("channels", sizes["dim"]))
    elif arch == "bilstm-skip":
        options.update(layers=2)
    else:
        options.update(layers=sizes["layers"])
    if arch.startswith("selfattn"):
        options.update(att_dim=150 if name == "paper" else 64)
    sizes["arch_options"] = options
    return sizes
