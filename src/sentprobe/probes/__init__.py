"""Probes: scikit-learn style classifiers trained on frozen sentence vectors.

``make_probe(name, task_name)`` builds the probe registered under ``name``:
- ``logreg``: logistic regression, every L2 of the grid trained to convergence, chosen on dev;
- ``mlp``: a fast sigmoid MLP over the paper's grid (hidden size x dropout x L2); not
  SentEval's classifier (see ``sentprobe.probes.mlp`` for how it differs);
- ``paper``: ``mlp`` everywhere except WC, which uses ``logreg`` (the paper's Table 2 split
  between MLP and logistic regression, with sentprobe's fast probes);
- ``mdl``: ``logreg``'s accuracy plus the online codelength of the training labels (Voita &
  Titov, 2020; see ``sentprobe.probes.mdl``);
- ``senteval``: an exact replica of SentEval's classifier and selection over the paper's grid,
  logistic regression (``nhid=0``) for WC. Slow: minibatches of 64, up to 200 epochs.
"""

from __future__ import annotations

from sentprobe.datasets.controls import controlled_name
from sentprobe.probes.baselines import MajorityProbe, NBTfidfProbe
from sentprobe.probes.linear import LogisticProbe
from sentprobe.probes.mdl import MDLProbe
from sentprobe.probes.mlp import MLPProbe
from sentprobe.probes.senteval import SentEvalProbe
from sentprobe.registry import probes


def _is_wc(task: str) -> bool:
    """WC, or its control task (which is probed with the task's probe)."""
    return controlled_name(task).split("/")[-1] == "WC"


probes.register("logreg", lambda task, seed=0: LogisticProbe(random_state=seed))
probes.register("mlp", lambda task, seed=0: MLPProbe(random_state=seed))
probes.register("mdl", lambda task, seed=0: MDLProbe(random_state=seed))
probes.register(
    "paper",
    lambda task, seed=0: (
        LogisticProbe(random_state=seed) if _is_wc(task) else MLPProbe(random_state=seed)
    ),
)
probes.register(
    "senteval",
    lambda task, seed=0: (
        SentEvalProbe(nhid=0, random_state=seed)
        if _is_wc(task)
        else SentEvalProbe(random_state=seed)
    ),
)


def make_probe(name: str, task: str, seed: int = 0):
    """The estimator the probe ``name`` uses for task ``task`` (paper name or full name)."""
    return probes.get(name)(task, seed)


__all__ = [
    "LogisticProbe",
    "MDLProbe",
    "MLPProbe",
    "MajorityProbe",
    "NBTfidfProbe",
    "SentEvalProbe",
    "make_probe",
]
