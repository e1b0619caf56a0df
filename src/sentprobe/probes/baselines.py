"""The paper's baselines that need no encoder: Majority, NB-uni-tfidf, NB-bi-tfidf.

They read raw sentences, so they are text probes with the same ``fit(X, y, X_dev, y_dev)``
signature, X being a list of sentences. The paper's Length baseline is an encoder
(:class:`sentprobe.encoders.length.LengthEncoder`) that goes through the ordinary probe.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import StratifiedKFold
from sklearn.naive_bayes import MultinomialNB
from sklearn.pipeline import Pipeline, make_pipeline


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
    """Multinomial Naive Bayes on tf-idf n-grams; smoothing ``alpha`` chosen on dev (or CV)
    from a grid, or one fixed value.

    Deterministic: the CV without a dev split uses unshuffled stratified folds.
    """

    version: ClassVar[str] = "1"
    uses_seed: ClassVar[bool] = False

    def __init__(
        self,
        ngram_range: tuple[int, int] = (1, 1),
        alpha: float | Sequence[float] = (0.01, 0.1, 1.0),
        cv: int = 5,
    ) -> None:
        self.ngram_range = ngram_range
        self.alpha = alpha
        self.cv = cv

    def _vectorizer(self) -> TfidfVectorizer:
        return _vectorizer(self._ngrams())

    def _ngrams(self) -> tuple[int, int]:
        return (int(self.ngram_range[0]), int(self.ngram_range[1]))

    def _alphas(self) -> list[float]:
        """The smoothing grid (one value: a fixed choice, e.g. a control task's)."""
        if isinstance(self.alpha, (int, float)):
            return [float(self.alpha)]
        return [float(a) for a in self.alpha]

    def _scores(
        self, X: list, y: np.ndarray, X_eval: list, y_eval: np.ndarray
    ) -> tuple[list[float], Pipeline]:
        """Accuracy on ``X_eval`` of NB for every ``alpha``, from one tf-idf fit on ``X``
        (the vectorizer does not depend on ``alpha``; fitting it once per value was most of
        the cost), and the best model."""
        vec, A, B = _tfidf(self._ngrams(), tuple(X), tuple(X_eval))
        models = [MultinomialNB(alpha=a).fit(A, y) for a in self._alphas()]
        scores = [float(np.mean(m.predict(B) == y_eval)) for m in models]
        best = models[int(np.argmax(scores))]
        return scores, Pipeline([("tfidfvectorizer", vec), ("multinomialnb", best)])

    def fit(self, X, y, X_dev=None, y_dev=None) -> NBTfidfProbe:
        X, y = list(X), np.asarray(y)
        alphas = self._alphas()
        if X_dev is not None:  # the best model is already fitted on all of train
            scores, self.model_ = self._scores(X, y, list(X_dev), np.asarray(y_dev))
            self.selection_ = "dev"
        else:  # cross_val_score's folds (stratified, unshuffled), each vectorized once
            per_fold = [
                self._scores([X[i] for i in tr], y[tr], [X[i] for i in te], y[te])[0]
                for tr, te in StratifiedKFold(self.cv).split(np.zeros(len(y)), y)
            ]
            scores = [float(v) for v in np.mean(per_fold, axis=0)]
            self.selection_ = f"cv{self.cv}"
            chosen = alphas[int(np.argmax(scores))]
            self.model_ = make_pipeline(self._vectorizer(), MultinomialNB(alpha=chosen))
            self.model_.fit(X, y)
        best = int(np.argmax(scores))
        self.classes_ = self.model_.classes_
        self.best_params_ = {"alpha": alphas[best]}
        self.best_score_ = float(scores[best])
        return self

    def predict(self, X) -> np.ndarray:
        return self.model_.predict(list(X))

    def predict_proba(self, X) -> np.ndarray:
        return self.model_.predict_proba(list(X))


def _vectorizer(ngram_range: tuple[int, int]) -> TfidfVectorizer:
    return TfidfVectorizer(ngram_range=ngram_range, token_pattern=r"\S+", lowercase=True)


@lru_cache(maxsize=2)
def _tfidf(ngram_range: tuple[int, int], train: tuple[str, ...], other: tuple[str, ...]) -> tuple:
    """A fitted tf-idf vectorizer, the train matrix and ``other`` transformed, remembered
    for the last texts: a control task (``--controls``, probed right after its task) has its
    task's very sentences, only other labels. The vectorizer is only read after fitting, so
    sharing it is safe."""
    vec = _vectorizer(ngram_range)
    return vec, vec.fit_transform(train), vec.transform(other)
