"""Model selection shared by every probe: a grid trained as one batch, chosen on dev or by CV.

A probe is a scikit-learn style estimator: ``__init__`` stores parameters (scalars or lists; a
list makes a grid), ``fit`` learns and returns ``self``, learned attributes end in ``_``.
Selection follows Conneau et al. (2018): every configuration is trained on train, the one with
the best dev accuracy is kept, and the test split is never seen by ``fit``. Without a dev split,
stratified k-fold CV on train chooses the configuration, which is then refitted on all of train.
Features are z-scored with the training split's statistics (``Standardizer``).
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin

from sentprobe.probes._common import (
    Standardizer,
    check_fit_size,
    encode_labels,
    holdout_split,
    probe_threads,
    stratified_folds,
)
from sentprobe.probes._validation import Param, ProbeContract, check_params, validate_fit


@dataclass
class GridFit:
    """What training one configuration produced."""

    dev_score: float | None  # accuracy on the selection split (None when there was none)
    params: dict[str, torch.Tensor]
    n_iter: int

    def score(self) -> float:
        """``dev_score`` of a fit trained with a selection split (only those are ranked)."""
        if self.dev_score is None:
            raise ValueError("this fit had no selection split to be scored on")
        return self.dev_score


class GridProbe(ProbeContract, ClassifierMixin, BaseEstimator):
    """Base class: subclasses say how to train a grid at once and how to score inputs."""

    #: changes whenever a code change can change results (part of the results store's key)
    version: ClassVar[str] = "1"
    #: whether training itself draws random numbers (initialisation, shuffling, dropout)
    _seeded_training: ClassVar[bool] = True
    #: early-stopped probes: the CV refit on all of train runs the folds' mean iteration count
    _refit_iterations: ClassVar[bool] = True
    #: what each constructor parameter may be (checked at the top of ``fit``)
    _params: ClassVar[dict[str, Param]]
    #: folds for selection when no dev split is given; None: a held-out part of train instead
    cv: int | None = 5
    #: the part of train held out for selection and early stopping when ``cv`` is None
    validation_fraction: float = 0.1
    random_state: int | None = 0

    @property
    def uses_seed(self) -> bool:
        """Whether ``random_state`` can change this probe's result.

        True when training draws random numbers, or when the configuration is chosen by
        k-fold CV (the folds depend on the seed). After ``fit`` it describes that fit; before,
        the usual case of a task with a dev split.
        """
        return (
            self._seeded_training
            or getattr(self, "selection_", "dev") in ("holdout",)
            or getattr(self, "selection_", "dev").startswith("cv")
        )

    @abstractmethod
    def _configs(self) -> list[dict[str, Any]]: ...

    @abstractmethod
    def _fit_grid(
        self,
        X: torch.Tensor,
        y: torch.Tensor,
        X_dev: torch.Tensor | None,
        y_dev: torch.Tensor | None,
        configs: list[dict[str, Any]],
        seed: int,
        max_iter: int | None = None,
    ) -> list[GridFit]: ...

    @abstractmethod
    def _logits(self, params: dict[str, torch.Tensor], X: torch.Tensor) -> torch.Tensor: ...

    def fit(self, X, y, X_dev=None, y_dev=None) -> GridProbe:
        """Train every configuration and keep the best on ``(X_dev, y_dev)``, or without a
        dev split on a held-out ``validation_fraction`` of train (``cv=None``) or by CV."""
        check_params(self, self._params)
        Xt, y, Xd, y_dev = validate_fit(self, X, y, X_dev, y_dev)
        with probe_threads(len(Xt), Xt.shape[1]):
            return self._fit_selected(Xt, y, Xd, y_dev)

    def _fit_selected(self, Xt, y, Xd, y_dev) -> GridProbe:
        self.classes_ = np.unique(y)
        check_fit_size(type(self).__name__, len(Xt), len(self.classes_), Xt.shape[1])
        self.scaler_ = Standardizer(Xt)
        Xs, yt = self.scaler_(Xt), encode_labels(y, self.classes_)
        configs = self._configs()
        seed = 0 if self.random_state is None else int(self.random_state)
        held = holdout_split(y, self.validation_fraction, seed) if self.cv is None else None

        if Xd is not None:
            fits = self._fit_grid(
                Xs, yt, self.scaler_(Xd), encode_labels(y_dev, self.classes_), configs, seed
            )
            scores = [f.score() for f in fits]
            best = int(np.argmax(scores))
            self.selection_ = "dev"
            chosen = fits[best]
        elif held is not None:
            # as scikit-learn's MLPClassifier(early_stopping=True): the held-out part chooses
            # the configuration and stops its training; the chosen model is the one trained
            # on the rest (no refit), with that rest's feature scaling
            mask = torch.ones(len(yt), dtype=torch.bool)
            mask[torch.from_numpy(held)] = False
            self.scaler_ = Standardizer(Xt[mask])
            fits = self._fit_grid(
                self.scaler_(Xt[mask]), yt[mask], self.scaler_(Xt[~mask]), yt[~mask], configs, seed
            )
            scores = [f.score() for f in fits]
            best = int(np.argmax(scores))
            self.selection_ = "holdout"
            chosen = fits[best]
        elif len(configs) > 1 and self.cv is not None:
            folds = stratified_folds(y, self.cv, seed)
            per_fold = []
            for held in folds:
                mask = torch.ones(len(yt), dtype=torch.bool)
                mask[torch.from_numpy(held)] = False
                sub = Standardizer(Xt[mask])
                per_fold.append(
                    self._fit_grid(
                        sub(Xt[mask]), yt[mask], sub(Xt[~mask]), yt[~mask], configs, seed
                    )
                )
            scores = [float(np.mean([f[i].score() for f in per_fold])) for i in range(len(configs))]
            best = int(np.argmax(scores))
            n_iter = int(np.ceil(np.mean([f[best].n_iter for f in per_fold])))
            cap = n_iter if self._refit_iterations else None
            chosen = self._fit_grid(Xs, yt, None, None, [configs[best]], seed, max_iter=cap)[0]
            self.selection_ = f"cv{len(folds)}"
        else:
            chosen = self._fit_grid(Xs, yt, None, None, configs, seed)[0]
            scores, best = [float("nan")], 0
            self.selection_ = "none"

        self.best_params_ = configs[best]
        self.best_score_ = scores[best]
        self.grid_scores_ = [(c, s) for c, s in zip(configs, scores)]
        self.params_ = chosen.params
        self.n_iter_ = chosen.n_iter
        return self

    def _logits_of(self, X) -> np.ndarray:
        Xt = self._features(X)
        with torch.inference_mode():
            return self._logits(self.params_, self.scaler_(Xt)).numpy()
