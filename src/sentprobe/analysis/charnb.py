"""NB-tfidf on character n-grams, the audit's extra text baseline (not one of the paper's)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import cross_val_score
from sklearn.naive_bayes import MultinomialNB


class CharNBTfidfProbe(ClassifierMixin, BaseEstimator):
    """Multinomial NB on tf-idf of case-sensitive character n-grams within words
    (``char_wb``): it sees cues inside tokens (casing, affixes, attached punctuation) that the
    lower-cased word baselines miss and, like NB-uni-tfidf, nothing about word order.

    The smoothing ``alpha`` is chosen on dev, else by ``cv``-fold cross-validation, as in
    :class:`sentprobe.probes.NBTfidfProbe`; unlike it, the sentences are vectorised once for
    all ``alpha`` values (character n-grams of 100k sentences take seconds to count; the idf
    then also sees the held-out folds, which does not change what is being measured here).
    """

    def __init__(
        self,
        ngram_range: tuple[int, int] = (1, 4),
        alpha: Sequence[float] = (0.01, 0.1, 1.0),
        cv: int = 5,
    ) -> None:
        self.ngram_range = ngram_range
        self.alpha = alpha
        self.cv = cv

    def fit(self, X, y, X_dev=None, y_dev=None) -> CharNBTfidfProbe:
        self.vectorizer_ = TfidfVectorizer(
            analyzer="char_wb", ngram_range=self.ngram_range, lowercase=False, dtype=np.float32
        )
        features, y = self.vectorizer_.fit_transform(list(X)), np.asarray(y)
        if X_dev is not None:
            dev = self.vectorizer_.transform(list(X_dev))
            fits = [MultinomialNB(alpha=a).fit(features, y) for a in self.alpha]
            scores = [m.score(dev, np.asarray(y_dev)) for m in fits]
            self.selection_ = "dev"
        else:
            scores = [
                cross_val_score(MultinomialNB(alpha=a), features, y, cv=self.cv).mean()
                for a in self.alpha
            ]
            fits = None
            self.selection_ = f"cv{self.cv}"
        best = int(np.argmax(scores))
        self.model_ = fits[best] if fits else MultinomialNB(alpha=self.alpha[best]).fit(features, y)
        self.classes_ = self.model_.classes_
        self.best_params_ = {"alpha": self.alpha[best]}
        self.best_score_ = float(scores[best])
        return self

    def predict(self, X) -> np.ndarray:
        return self.model_.predict(self.vectorizer_.transform(list(X)))
