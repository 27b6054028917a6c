"""The variance of a forest's predictions from its trees' bootstrap counts, without refitting.

Wager, Hastie and Efron (2014), "Confidence intervals for random forests: the
jackknife and the infinitesimal jackknife", JMLR 15, section 2, eqs. (5)-(7).
With ``B`` trees, ``N_bi`` the draws of training row ``i`` by tree ``b``,
``t_b(x)`` tree ``b``'s prediction and ``t(x)`` their mean over the trees:

- the infinitesimal jackknife (Efron 2014):
  ``V_IJ = sum_i Cov_b(N_bi, t_b)^2``, ``Cov_b(N_bi, t_b) = mean_b (N_bi - mean_b N_bi) (t_b - t)``;
- the jackknife after the bootstrap (Efron 1992):
  ``V_J = (n - 1) / n  sum_i (t_(-i) - t)^2``, ``t_(-i)`` the mean of the trees that did not draw row ``i``
  (rows that every tree drew are left out of the sum);
- their Monte-Carlo bias corrections, for a finite number of trees:
  ``V_IJ-U = V_IJ - n v / B`` and ``V_J-U = V_J - (e - 1) n v / B``, ``v = mean_b (t_b - t)^2``.

``n`` is the number of draws per tree (``n_samples_bootstrap_``: the training rows for the default
``max_samples``). Both are sums over the training rows of products of the (trees x rows) count
matrix with the (trees x predictions) matrix of the trees' values: ``N^T T`` and ``[N = 0]^T T``,
accumulated over batches of trees in the backend's array library (numpy or CuPy). The counts are
regenerated from the forest's seed as its out-of-bag pass does.
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .backend import get_backend

METHODS = ("infinitesimal_jackknife", "jackknife_after_bootstrap")
# The (training rows, predictions) sums of a block of rows take about this many bytes.
BLOCK_BYTES = 64 * 1024 * 1024


def prediction_variance(forest, X, *, method="infinitesimal_jackknife", bias_correction=True):
    """Variance of each of a bootstrap forest's predictions at ``X`` (module docstring).

    Parameters
    ----------
    forest : fitted RandomForest* or ExtraTrees* with ``bootstrap=True``
    X : array-like of shape (n_samples, n_features)
    method : {"infinitesimal_jackknife", "jackknife_after_bootstrap"}, default="infinitesimal_jackknife"
    bias_correction : bool, default=True
        Subtract the Monte-Carlo bias of a finite number of trees (Wager et al. 2014, eq. (7)).
        The corrected variance can be negative where it is small.

    Returns
    -------
    variance : ndarray of shape (n_samples, n_values)
        Per prediction: one column for a regressor, one per class (of the mean class
        proportions, ``voting="soft"``'s ``predict_proba``) for a classifier.
    """
    check_is_fitted(forest, "trees_")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}.")
    if not forest.bootstrap:
        raise ValueError("Prediction variances need the trees' bootstrap counts: fit the forest with bootstrap=True.")
    X = forest._validate_X_predict(X)
    backend = get_backend(forest.device_)
    n_rows, n_values = X.shape[0], forest._n_values()
    n_training = forest._n_training_rows
    variance = np.empty((n_rows, n_values))
    per_block = max(1, BLOCK_BYTES // (16 * n_training * n_values))
    for start in range(0, n_rows, per_block):
        block = slice(start, min(start + per_block, n_rows))
        variance[block] = _block_variance(forest, backend, X[block], method, bias_correction)
    return variance


def prediction_std(forest, X):
    """``sqrt`` of the bias-corrected infinitesimal jackknife variance (negative as 0): (n_samples, n_values)."""
    return np.sqrt(np.maximum(prediction_variance(forest, X), 0.0))


def _block_variance(forest, backend, X, method, bias_correction):
    """``prediction_variance`` of the rows of ``X``: shape (n_rows, n_values)."""
    n_training, n_trees = forest._n_training_rows, len(forest.trees_)
    shift = None
    sum_values = sum_squares = count_products = counts_total = None
    for first, count in forest._batches(backend, 0, n_trees, n_training, X.shape[1]):
        values = forest._tree_values(backend, X, first, count)
        shape = values.shape[1:]
        # Sums of the values less the first batch's mean: the variances without cancellation.
        if shift is None:
            shift = values.mean(axis=0)
        values = backend.to_device((values - shift).reshape(count, -1))
        counts = forest._sample_counts(backend, first, count, n_training)
        weights = counts.astype(np.float64) if method == "infinitesimal_jackknife" else (counts == 0).astype(np.float64)
        batch = (values.sum(axis=0), (values ** 2).sum(axis=0), weights.T @ values, weights.sum(axis=0))
        if sum_values is None:
            sum_values, sum_squares, count_products, counts_total = batch
        else:
            sum_values, sum_squares, count_products, counts_total = (
                total + part for total, part in zip((sum_values, sum_squares, count_products, counts_total), batch)
            )
    mean = sum_values / n_trees
    spread = sum_squares / n_trees - mean ** 2  # v = mean_b (t_b - t)^2
    n_draws = forest.n_samples_bootstrap_
    if method == "infinitesimal_jackknife":
        covariance = count_products / n_trees - (counts_total / n_trees)[:, None] * mean[None, :]
        variance = (covariance ** 2).sum(axis=0)
        correction = n_draws * spread / n_trees
    else:
        out_of_bag = counts_total > 0
        deviation = count_products[out_of_bag] / counts_total[out_of_bag][:, None] - mean[None, :]
        variance = (n_training - 1) / n_training * (deviation ** 2).sum(axis=0)
        correction = (np.e - 1.0) * n_draws * spread / n_trees
    if bias_correction:
        variance = variance - correction
    return backend.to_host(variance).reshape(shape)
