"""Bias-variance decomposition of an estimator's test loss over bootstrap replicates of its training set.

The estimator is fitted on ``n_rounds`` bootstrap samples of the training rows
(``resampling.bootstrap_counts``: the counter-based RNG, resample ``r`` the
draws of a forest's tree ``r`` of the same ``random_state``) and predicts the
test rows each time: ``y_r(x)``. Averaged over the test rows:

- squared loss (Geman, Bienenstock and Doursat 1992):
  ``E_r (y_r(x) - y)^2 = (ybar(x) - y)^2 + E_r (y_r(x) - ybar(x))^2``, loss = bias + variance,
  ``ybar`` the mean prediction;
- 0-1 loss (Domingos 2000, "A unified bias-variance decomposition", Theorem 2 without noise):
  the main prediction ``y_m(x)`` is the most frequent one (ties: the first in ``np.unique`` order),
  bias ``B(x) = [y_m(x) != y]``, variance ``V(x) = P_r(y_r(x) != y_m(x))``, and
  ``P_r(y_r(x) != y) = B(x) + c(x) V(x)`` with ``c = 1`` where ``B = 0`` and
  ``c = -P_r(y_r(x) = y | y_r(x) != y_m(x))`` where ``B = 1``: variance adds to the loss of unbiased rows
  and takes from that of biased ones; ``net_variance`` is the mean of ``c V``.

A test row has one label, so the noise term cannot be told apart: it is in the bias (as in Domingos's
experiments and mlxtend's ``bias_variance_decomp``).
"""

from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn.base import clone

from .resampling import bootstrap_counts

LOSSES = ("squared_error", "0-1")


@dataclass(frozen=True)
class BiasVariance:
    """A decomposition of the expected test loss, each term averaged over the test rows.

    Attributes
    ----------
    loss : float
        The expected loss, ``bias + net_variance``.
    bias : float
        Squared bias (squared loss) or the share of rows whose main prediction is wrong (0-1 loss).
    variance : float
    net_variance : float
        What the variance adds to the loss: ``variance`` for squared loss, the mean of ``c V`` for 0-1 loss.
    predictions : ndarray of shape (n_rounds, n_test_samples)
        Each round's predictions.
    """

    loss: float
    bias: float
    variance: float
    net_variance: float
    predictions: np.ndarray


def bias_variance_decomposition(
    estimator, X_train, y_train, X_test, y_test, *, loss="squared_error", n_rounds=200, random_state=None,
    device="cpu",
):
    """Bias and variance of ``estimator``'s test loss over bootstrap replicates of the training set.

    Parameters
    ----------
    estimator : estimator with ``fit`` and ``predict``
        Cloned and fitted once per round (any scikit-learn compatible estimator).
    X_train : array-like of shape (n_train, n_features)
    y_train : array-like of shape (n_train,)
    X_test : array-like of shape (n_test, n_features)
    y_test : array-like of shape (n_test,)
    loss : {"squared_error", "0-1"}, default="squared_error"
    n_rounds : int, default=200
        Bootstrap replicates of the training set, at least 2.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws (``resampling.bootstrap_counts``); the clones keep the estimator's own ``random_state``.
    device : {"cpu", "cuda", "auto"}, default="cpu"
        Where the draws are made.

    Returns
    -------
    decomposition : BiasVariance
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}; got {loss!r}.")
    if not isinstance(n_rounds, Integral) or isinstance(n_rounds, bool) or n_rounds < 2:
        raise ValueError(f"n_rounds must be an integer of at least 2; got {n_rounds!r}.")
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    n_train = y_train.shape[0]
    if n_train < 2 or len(X_train) != n_train or len(X_test) != y_test.shape[0]:
        raise ValueError(
            f"X_train and y_train need the same number of rows (at least 2), X_test and y_test too; got "
            f"{len(X_train)}, {n_train}, {len(X_test)}, {y_test.shape[0]}."
        )
    counts = bootstrap_counts(n_train, n_rounds, random_state=random_state, device=device)
    rows = np.arange(n_train)
    predictions = []
    for round_counts in counts:
        drawn = np.repeat(rows, round_counts)
        fitted = clone(estimator).fit(_rows(X_train, drawn), y_train[drawn])
        predictions.append(np.asarray(fitted.predict(X_test)))
    predictions = np.array(predictions)
    if loss == "squared_error":
        return _squared_error(predictions, y_test.astype(np.float64))
    return _zero_one(predictions, y_test)


def _rows(X, indices):
    """Rows ``indices`` of an array or a pandas DataFrame."""
    return X.iloc[indices] if hasattr(X, "iloc") else np.asarray(X)[indices]


def _squared_error(predictions, y):
    main = predictions.mean(axis=0)
    bias = float(np.mean((main - y) ** 2))
    variance = float(np.mean((predictions - main) ** 2))
    return BiasVariance(
        loss=float(np.mean((predictions - y) ** 2)), bias=bias, variance=variance, net_variance=variance,
        predictions=predictions,
    )


def _zero_one(predictions, y):
    labels, codes = np.unique(np.concatenate([predictions.ravel(), y]), return_inverse=True)
    codes = codes.reshape(-1)
    predicted, truth = codes[:predictions.size].reshape(predictions.shape), codes[predictions.size:]
    n_rounds, n_test = predicted.shape
    votes = np.zeros((n_test, labels.shape[0]), dtype=np.int64)
    np.add.at(votes, (np.tile(np.arange(n_test), n_rounds), predicted.ravel()), 1)
    main = votes.argmax(axis=1)  # the first of the most frequent
    biased = main != truth
    off_main = predicted != main
    variance = off_main.mean(axis=0)
    # Where biased, the share of the rounds off the main prediction that are right.
    right_off_main = (off_main & (predicted == truth)).sum(axis=0) / np.maximum(off_main.sum(axis=0), 1)
    factor = np.where(biased, -right_off_main, 1.0)
    return BiasVariance(
        loss=float(np.mean(predicted != truth)), bias=float(biased.mean()), variance=float(variance.mean()),
        net_variance=float(np.mean(factor * variance)), predictions=predictions,
    )
