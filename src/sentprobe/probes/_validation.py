"""scikit-learn's estimator contract for the probes, with scikit-learn's own checks.

``fit`` checks its parameters (:func:`check_params`, each value through
``sklearn.utils.check_scalar``: a ``TypeError`` or ``ValueError`` naming the parameter) and its
inputs (``validate_data``: 2-d, finite, not empty, not sparse, as many labels as rows;
``check_classification_targets``: class labels, not a continuous target), and records
``n_features_in_``. :class:`ProbeContract` gives the fitted probe ``decision_function``,
``predict_proba`` and ``predict`` that refuse an unfitted probe (``NotFittedError``) or a matrix
with another number of features, and declares in the estimator tags that sparse matrices are
not supported. ``sklearn.utils.estimator_checks.check_estimator`` passes for every probe
(tests/probes/test_contract.py).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Literal

import numpy as np
import torch
from sklearn.utils import Tags, check_scalar
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_consistent_length, check_is_fitted, validate_data


@dataclass(frozen=True)
class Param:
    """What one constructor parameter may be: a ``kind`` of number (or ``bool``) within
    ``low``..``high`` (``closed`` as ``check_scalar``'s ``include_boundaries``); ``grid``: a
    value or a non-empty list of values; ``optional``: None is allowed too; ``options``: the
    allowed values of a ``str`` parameter."""

    kind: type
    low: float | None = None
    high: float | None = None
    closed: Literal["left", "right", "both", "neither"] = "both"
    grid: bool = False
    optional: bool = False
    options: tuple[str, ...] = ()


#: Shared specifications.
INT_POS = Param(Integral, low=1)
REAL_NONNEG = Param(Real, low=0)
REAL_POS = Param(Real, low=0, closed="neither")
FOLDS = Param(Integral, low=2)
FOLDS_OR_NONE = Param(Integral, low=2, optional=True)
FRACTION = Param(Real, low=0, high=1, closed="neither")
SEED = Param(Integral, low=0, optional=True)
L2_GRID = Param(Real, low=0, grid=True)
DROPOUT_GRID = Param(Real, low=0, high=1, closed="left", grid=True)


def check_params(estimator: Any, specs: Mapping[str, Param]) -> None:
    """Check ``estimator``'s parameters named in ``specs`` (in ``fit``, as scikit-learn does)."""
    for name, spec in specs.items():
        value = getattr(estimator, name)
        if value is None and spec.optional:
            continue
        values = value if spec.grid and isinstance(value, (list, tuple, np.ndarray)) else [value]
        if len(values) == 0:
            raise ValueError(f"{name} must be a value or a non-empty list of values, got {value!r}")
        for v in values:
            if spec.options:
                if v not in spec.options:
                    raise ValueError(f"{name} must be one of {spec.options}, got {v!r}")
                continue
            if spec.kind is Real and isinstance(v, (bool, np.bool_)):  # a bool is an Integral
                raise TypeError(f"{name} must be an instance of float, not bool.")
            check_scalar(
                v,
                name,
                spec.kind,
                min_val=spec.low,
                max_val=spec.high,
                include_boundaries=spec.closed,
            )


def validate_fit(
    estimator: Any, X: Any, y: Any, X_dev: Any = None, y_dev: Any = None
) -> tuple[torch.Tensor, np.ndarray, torch.Tensor | None, np.ndarray | None]:
    """``fit``'s inputs checked (dev with the training matrix's number of features), the
    features as float32 tensors; sets ``n_features_in_``."""
    X, y = validate_data(estimator, X, y, dtype=np.float32)
    check_classification_targets(y)
    if (X_dev is None) != (y_dev is None):
        raise ValueError("X_dev and y_dev must be given together")
    if X_dev is not None:
        try:
            X_dev = validate_data(estimator, X_dev, reset=False, dtype=np.float32)
        except ValueError as error:
            if "features, but" not in str(error):
                raise
            raise ValueError(
                f"X_dev: {error}; in a Pipeline, the dev split goes through the pipeline's "
                "transformers with Pipeline(steps, transform_input=['X_dev']), "
                "probe.set_fit_request(X_dev=True, y_dev=True) and "
                "sklearn.set_config(enable_metadata_routing=True)"
            ) from None
        y_dev = np.asarray(y_dev)
        check_consistent_length(X_dev, y_dev)
    return _tensor(X), y, None if X_dev is None else _tensor(X_dev), y_dev


def _tensor(X: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(X))


class ProbeContract:
    """Prediction methods of a fitted probe; a subclass gives the logits (``_logits_of``).

    ``decision_function`` is scikit-learn's: for two classes one score per row, positive for
    ``classes_[1]``; else one column per class.
    """

    classes_: np.ndarray

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()  # type: ignore[misc]  # a mixin before BaseEstimator
        tags.input_tags.sparse = False  # dense float32 features only (torch)
        return tags

    def _features(self, X: Any) -> torch.Tensor:
        """``X`` checked against the fitted probe, as a float32 tensor."""
        check_is_fitted(self)
        return _tensor(validate_data(self, X, reset=False, dtype=np.float32))

    @abstractmethod
    def _logits_of(self, X: Any) -> np.ndarray:
        """(n, classes) logits of ``X`` (checked with :meth:`_features`)."""

    def decision_function(self, X: Any) -> np.ndarray:
        z = self._logits_of(X)
        return z[:, 1] - z[:, 0] if z.shape[1] == 2 else z

    def predict_proba(self, X: Any) -> np.ndarray:
        return torch.softmax(torch.from_numpy(self._logits_of(X)), -1).numpy()

    def predict(self, X: Any) -> np.ndarray:
        z = self._logits_of(X)  # checks first: unfitted, there is no classes_
        return self.classes_[z.argmax(1)]
