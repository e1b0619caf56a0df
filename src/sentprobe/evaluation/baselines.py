"""The ``--baselines`` rows, registered in ``sentprobe.registry.baselines``.

One place names them: the runner builds rows from here, the tables order their first rows by
it, ``sentprobe encoders`` lists it. Factories import lazily, so reading the names (tables,
``--help``) loads no model code. A package can add a baseline through the entry-point group
``sentprobe.baselines`` (a :class:`~sentprobe.registry.Baseline`).
"""

from __future__ import annotations

from typing import Any

from sentprobe.registry import Baseline, baselines


def _majority() -> Any:
    from sentprobe.probes import MajorityProbe

    return MajorityProbe()


def _nb(n: int):
    def make() -> Any:
        from sentprobe.probes import NBTfidfProbe

        return NBTfidfProbe(ngram_range=(1, n))

    return make


def _length() -> Any:
    from sentprobe.encoders.length import LengthEncoder

    return LengthEncoder()


def _encoder(spec: str):
    def make() -> Any:
        from sentprobe.encoders import get_encoder

        return get_encoder(spec)

    return make


def _random_bilstm() -> Any:
    from sentprobe.encoders.untrained import BiLSTMEncoder

    return BiLSTMEncoder(pooling="max", hidden=128)


_BUILTINS = {
    "majority": Baseline("Majority", _majority, "text", 0, default=True, paper=True),
    "length": Baseline("Length", _length, "encoder", 1, probe="logreg", default=True, paper=True),
    "nb-uni": Baseline("NB-uni-tfidf", _nb(1), "text", 2, default=True, paper=True),
    "nb-bi": Baseline("NB-bi-tfidf", _nb(2), "text", 3, default=True, paper=True),
    "bov": Baseline("BoV-GloVe", _encoder("bov-glove"), "encoder", 4, default=True, paper=True),
    # Slow on a CPU (minutes): only with ``all`` or by name.
    "bilstm-last": Baseline(
        "BiLSTM-last (untrained)", _encoder("bilstm-last-untrained"), "encoder", 5
    ),
    "bilstm-max": Baseline(
        "BiLSTM-max (untrained)", _encoder("bilstm-max-untrained"), "encoder", 6
    ),
    "gatedconv": Baseline(
        "GatedConvNet (untrained)", _encoder("gatedconv-untrained"), "encoder", 7
    ),
    # Kim et al. (2019)'s control: a randomly initialised encoder, five restarts (mean ± sd);
    # a default row of the function-word suite (TaskMetadata.baselines). 2 x 128 units per
    # direction (256-d), not 2 x 512: its 4 x 1024-d NLI pair features made the suite's ~450
    # restart probes take longer than everything else together.
    "random-bilstm": Baseline(
        "BiLSTM-max 2x128 (untrained)", _random_bilstm, "encoder", 8, restarts=5
    ),
}
for _name, _baseline in _BUILTINS.items():
    baselines.register(_name, _baseline)


def baseline_names() -> list[str]:
    """Registered baseline names in row order (``--baselines all``)."""
    return [name for name, b in sorted(baselines.items(), key=lambda kv: kv[1].order)]


def default_baselines() -> list[str]:
    """The fast ones that ``--baselines default`` (and no ``--baselines``) runs."""
    return [name for name in baseline_names() if baselines.get(name).default]


def paper_labels() -> list[str]:
    """Row labels of the paper's baselines, in its order: the first rows of a results table."""
    return [b.label for _, b in sorted(baselines.items(), key=lambda kv: kv[1].order) if b.paper]
