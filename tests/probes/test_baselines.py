"""The NB-tfidf baseline chooses its smoothing as a pipeline per value would, only faster."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import cross_val_score
from sklearn.naive_bayes import MultinomialNB
from sklearn.pipeline import make_pipeline

from sentprobe.probes.baselines import NBTfidfProbe


def _pipeline(alpha, ngrams):
    vec = TfidfVectorizer(ngram_range=ngrams, token_pattern=r"\S+", lowercase=True)
    return make_pipeline(vec, MultinomialNB(alpha=alpha))


def _data(n, seed):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(40)]
    X = [" ".join(rng.choices(words, k=rng.randint(3, 9))) for _ in range(n)]
    y = np.array(["a" if ("w1" in x.split()) ^ (rng.random() < 0.2) else "b" for x in X])
    return X, y


@pytest.mark.parametrize("ngrams", [(1, 1), (1, 2)])
def test_scores_and_choice_equal_one_pipeline_per_alpha(ngrams):
    alphas = (0.01, 0.1, 1.0)
    X, y = _data(300, 1)
    Xd, yd = _data(80, 2)
    Xt, _ = _data(50, 3)
    dev = NBTfidfProbe(ngrams, alphas).fit(X, y, Xd, yd)
    expected = [_pipeline(a, ngrams).fit(X, y).score(Xd, yd) for a in alphas]
    assert dev.best_score_ == max(expected)
    assert dev.best_params_["alpha"] == alphas[int(np.argmax(expected))]
    best = _pipeline(dev.best_params_["alpha"], ngrams).fit(X, y)
    assert (dev.predict(Xt) == best.predict(Xt)).all()

    cv = NBTfidfProbe(ngrams, alphas, cv=5).fit(X, y)
    expected = [cross_val_score(_pipeline(a, ngrams), X, y, cv=5).mean() for a in alphas]
    assert cv.best_score_ == pytest.approx(max(expected), abs=1e-12)
    assert cv.best_params_["alpha"] == alphas[int(np.argmax(expected))]
    assert cv.selection_ == "cv5" and dev.selection_ == "dev"


def test_one_fixed_alpha_is_a_grid_of_one():
    X, y = _data(200, 4)
    Xd, yd = _data(60, 5)
    fixed = NBTfidfProbe((1, 1), alpha=0.1).fit(X, y, Xd, yd)
    grid = NBTfidfProbe((1, 1), alpha=(0.1,)).fit(X, y, Xd, yd)
    assert fixed.best_params_ == grid.best_params_ == {"alpha": 0.1}
    assert fixed.best_score_ == grid.best_score_
