"""Probes: scikit-learn style classifiers trained on frozen sentence vectors.

``make_probe(name, task_name)`` builds the probe registered under ``name``:
- ``logreg``: logistic regression, every L2 of the grid trained to convergence, chosen on dev;
- ``mlp``: a fast sigmoid MLP over the paper's grid (hidden size x dropout x L2); not
  SentEval's classifier (see ``sentprobe.probes.mlp`` for how it differs);
- ``paper``: ``mlp`` everywhere except WC, which uses ``logreg`` (the paper's Table 2 split
  between MLP and logistic regression, with sentprobe's fast probes);
- ``ridge``: a ridge classifier in closed form, every L2 strength from one eigendecomposition
  of the training split's Gram matrix, chosen on dev (``sentprobe.probes.closed_form``; its
  statistics can be summed batch by batch, so views need not be stored);
- ``mdl``: ``logreg``'s accuracy plus the online codelength of the training labels (Voita &
  Titov, 2020; see ``sentprobe.probes.mdl``);
- ``senteval``: an exact replica of SentEval's classifier and selection over the paper's grid,
  logistic regression (``nhid=0``) for WC, with SentEval's summed loss as its code reads.
  Slow: minibatches of 64, up to 200 epochs;
- ``senteval-torch``: the same, with the batch-mean loss SentEval computes on PyTorch 0.4.1
  and later (which ignore its ``size_average = False``): the protocol behind every SentEval
  probing number published since 2018;
- ``senteval-default``: SentEval's default classifier (its README's ``nhid: 0, optim: adam,
  batch_size: 64, tenacity: 5, epoch_size: 4``; L2 chosen among 1e-5..1e-2 on dev) with the
  batch-mean loss: logistic regression as published results that run SentEval's defaults get
  it (e.g. DeCLUTR, Giorgi et al. 2021, ``scripts/run_senteval.py``).
"""

from __future__ import annotations

from sentprobe.datasets.controls import controlled_name
from sentprobe.probes.baselines import MajorityProbe, NBTfidfProbe
from sentprobe.probes.closed_form import RidgeProbe, RidgeStats
from sentprobe.probes.linear import LogisticProbe
from sentprobe.probes.mdl import MDLProbe
from sentprobe.probes.mlp import MLPProbe
from sentprobe.probes.senteval import SentEvalProbe
from sentprobe.registry import probes


def _is_wc(task: str) -> bool:
    """WC, or its control task (which is probed with the task's probe)."""
    return controlled_name(task).split("/")[-1] == "WC"


probes.register("logreg", lambda task, seed=0: LogisticProbe(random_state=seed))
probes.register("mlp", lambda task, seed=0: MLPProbe(cv=5, random_state=seed))
probes.register("ridge", lambda task, seed=0: RidgeProbe(random_state=seed))
probes.register("mdl", lambda task, seed=0: MDLProbe(random_state=seed))
probes.register(
    "paper",
    lambda task, seed=0: (
        LogisticProbe(random_state=seed) if _is_wc(task) else MLPProbe(cv=5, random_state=seed)
    ),
)
for _name, _loss in (("senteval", "sum"), ("senteval-torch", "mean")):
    probes.register(
        _name,
        lambda task, seed=0, loss=_loss: (
            SentEvalProbe(nhid=0, loss=loss, kfold=5, random_state=seed)
            if _is_wc(task)
            else SentEvalProbe(loss=loss, kfold=5, random_state=seed)
        ),
    )
probes.register(
    "senteval-default",
    lambda task, seed=0: SentEvalProbe(nhid=0, loss="mean", kfold=5, random_state=seed),
)


def make_probe(name: str, task: str, seed: int = 0, device: str | None = None):
    """The estimator the probe ``name`` uses for task ``task`` (paper name or full name);
    ``device`` (``--probe-device``: cpu, cuda, auto) is given to a probe that takes one
    (logreg, mlp, ridge), and ignored by the others (SentEval's replica, MDL: CPU only)."""
    est = probes.get(name)(task, seed)
    if device is not None and "device" in est.get_params():
        est.set_params(device=device)
    return est


__all__ = [
    "LogisticProbe",
    "MDLProbe",
    "MLPProbe",
    "MajorityProbe",
    "NBTfidfProbe",
    "RidgeProbe",
    "RidgeStats",
    "SentEvalProbe",
    "make_probe",
]
