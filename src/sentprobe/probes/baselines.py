"""The paper's baselines that need no encoder: Majority, NB-uni-tfidf, NB-bi-tfidf.

They read raw sentences, so they are text probes with the same ``fit(X, y, X_dev, y_dev)``
signature, X being a list of sentences. The paper's Length baseline is an encoder
(:class:`sentprobe.encoders.length.LengthEncoder`) that goes through the ordinary probe.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import cross_val_score
from sklearn.naive_bayes import MultinomialNB
from sklearn.pipeline import make_pipeline


class MajorityProbe(ClassifierMixin, BaseEstimator):
    """Always predicts the most frequent training label (ties: the first in sorted order)."""

    version: ClassVar[str] = "1"
    #: nothing random: every seed gives the same result
    uses_seed: ClassVar[bool] = False

    def fit(self, X, y, X_dev=None, y_dev=None) -> MajorityProbe:
        self.classes_, counts = np.unique(np.asarray(y), return_counts=True)
        self.majority_ = self.classes_[int(np.argmax(counts))]
        self.best_params_: dict[str, Any] = {}
        self.selection_ = "none"
        self.best_score_ = (
            None if y_dev is None else float(np.mean(np.asarray(y_dev) == self.majority_))
        )
        return self

    def predict(self, X) -> np.ndarray:
        return np.full(len(X), self.majority_, dtype=self.classes_.dtype)


class NBTfidfProbe(ClassifierMixin, BaseEstimator):
    """Multinomial Naive Bayes on tf-idf n-grams; smoothing ``alpha`` chosen on dev (or CV).

    Deterministic: the CV without a dev split uses unshuffled stratified folds.
    """

    version: ClassVar[str] = "1"
    uses_seed: ClassVar[bool] = False

    def __init__(
        self,
        ngram_range: tuple[int, int] = (1, 1),
        alpha: Sequence[float] = (0.01, 0.1, 1.0),
        cv: int = 5,
    ) -> None:
        self.ngram_range = ngram_range
        self.alpha = alpha
        self.cv = cv

    def _pipeline(self, alpha: float):
        vec = TfidfVectorizer(ngram_range=self.ngram_range, token_pattern=r"\S+", lowercase=True)
        return make_pipeline(vec, MultinomialNB(alpha=alpha))

    def fit(self, X, y, X_dev=None, y_dev=None) -> NBTfidfProbe:
        X, y = list(X), np.asarray(y)
        if X_dev is not None:
            fits = [self._pipeline(a).fit(X, y) for a in self.alpha]
            scores = [m.score(list(X_dev), y_dev) for m in fits]
            self.selection_ = "dev"
        else:
            scores = [
                cross_val_score(self._pipeline(a), X, y, cv=self.cv).mean() for a in self.alpha
            ]
            fits = None
            self.selection_ = f"cv{self.cv}"
        best = int(np.argmax(scores))
        self.model_ = fits[best] if fits else self._pipeline(self.alpha[best]).fit(X, y)
        self.classes_ = self.model_.classes_
        self.best_params_ = {"alpha": self.alpha[best]}
        self.best_score_ = float(scores[best])
        return self

    def predict(self, X) -> np.ndarray:
        return self.model_.predict(list(X))

    def predict_proba(self, X) -> np.ndarray:
        return self.model_.predict_proba(list(X))
