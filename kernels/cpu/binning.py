"""Map raw feature values to uint8 bins.

A value ``x`` of feature ``f`` goes to bin ``b`` = the number of thresholds of
``f`` that are ``< x``, so that ``x <= thresholds[f, b]`` exactly when its bin
is ``<= b``: a split on bins is the same split on raw values. NaN goes to the
reserved ``missing_bin``.
"""


from numba import njit, prange

from ..common import bin_of_value


@njit(parallel=True, cache=True)
def map_to_bins(X, bin_thresholds, n_thresholds, missing_bin, X_binned):
    """Fill ``X_binned`` with the bin of every value of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype float32
    bin_thresholds : ndarray of shape (n_features, max_bins - 1), dtype float64
        Per feature, increasing thresholds padded with +inf.
    n_thresholds : ndarray of shape (n_features,), dtype int32
    missing_bin : int
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8, Fortran order
        Output.
    """
    n_samples, n_features = X.shape
    for feature_idx in prange(n_features):
        thresholds = bin_thresholds[feature_idx]
        count = n_thresholds[feature_idx]
        for row in range(n_samples):
            X_binned[row, feature_idx] = bin_of_value(thresholds, count, X[row, feature_idx], missing_bin)
