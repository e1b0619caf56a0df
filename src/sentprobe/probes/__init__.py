"""Probes: scikit-learn style classifiers trained on frozen sentence vectors.

``make_probe(name, task_name)`` builds the probe registered under ``name``:
- ``logreg``: logistic regression, L2 grid chosen on dev;
- ``mlp``: the paper's sigmoid MLP, grid over hidden size x dropout x L2;
- ``paper``: the paper's protocol: MLP everywhere except WC, which uses logistic regression.
"""

from __future__ import annotations

from sentprobe.probes.baselines import LengthEncoder, MajorityProbe, NBTfidfProbe
from sentprobe.probes.linear import LogisticProbe
from sentprobe.probes.mlp import MLPProbe
from sentprobe.registry import probes

probes.register("logreg", lambda task, seed=0: LogisticProbe(random_state=seed))
probes.register("mlp", lambda task, seed=0: MLPProbe(random_state=seed))
probes.register(
    "paper",
    lambda task, seed=0: (
        LogisticProbe(random_state=seed)
        if task.split("/")[-1] == "WC"
        else MLPProbe(random_state=seed)
    ),
)


def make_probe(name: str, task: str, seed: int = 0):
    """The estimator the probe ``name`` uses for task ``task`` (paper name or full name)."""
    return probes.get(name)(task, seed)


__all__ = [
    "LengthEncoder",
    "LogisticProbe",
    "MLPProbe",
    "MajorityProbe",
    "NBTfidfProbe",
    "make_probe",
]
