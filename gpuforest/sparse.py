"""Sparse X (scipy CSR/CSC matrices and arrays): read in bounded blocks, never densified whole.

scikit-learn's trees and HistGradientBoosting take sparse X; so does every gpuforest estimator.
An implicit (unstored) entry is the value 0; an explicitly stored NaN is a missing value, as in a
dense X. Fitting the bin thresholds reads each CSC column's stored values and counts its implicit
zeros (``binning``); binning the rows and routing them at predict densify at most
``DENSE_BLOCK_BYTES`` of rows at a time (``dense_row_blocks``).

The options that read raw training values row by row after growth (surrogate splits, the
``"mdl"`` and ``"pessimistic"`` pruning, C4.5's default pruning) and categorical features
(codes checked and masked per column) take dense X only: sparse X gets a ValueError naming them.
"""

import functools

import numpy as np
from scipy.sparse import issparse

# The most bytes of dense rows made at a time from a sparse X (a block of the binning's or a predict's rows).
DENSE_BLOCK_BYTES = 32 * 1024 * 1024


def rows_per_block(X):
    """Rows of ``X`` (n_samples, n_features) whose dense float values fit ``DENSE_BLOCK_BYTES`` (at least 1)."""
    return max(1, DENSE_BLOCK_BYTES // (X.shape[1] * X.dtype.itemsize))


def dense_row_blocks(X):
    """Consecutive blocks of the rows of sparse ``X``, each as ``(rows, block)``.

    Parameters
    ----------
    X : sparse matrix or array of shape (n_samples, n_features)

    Yields
    ------
    rows : slice
        The block's rows of ``X``.
    block : ndarray of shape (n_block_rows, n_features), C order, dtype of ``X``
        Those rows dense (implicit entries 0), at most ``DENSE_BLOCK_BYTES``.
    """
    X = X.tocsr()
    step = rows_per_block(X)
    for start in range(0, X.shape[0], step):
        rows = slice(start, start + step)
        yield rows, X[rows].toarray()


def in_dense_row_blocks(method):
    """Decorates ``method(self, X, *args)``, which returns an array of one entry per row of ``X`` on its first
    axis: a sparse ``X`` goes through it in dense blocks of rows (``dense_row_blocks``), the results concatenated."""

    @functools.wraps(method)
    def on_blocks(self, X, *args):
        if not issparse(X):
            return method(self, X, *args)
        return np.concatenate([method(self, block, *args) for _, block in dense_row_blocks(X)])

    return on_blocks


def canonical_csc(X):
    """Sparse ``X`` in CSC format without duplicate entries (summed, as ``toarray`` does), for column reads;
    ``X`` itself is not modified."""
    X_csc = X.tocsc()
    if not X_csc.has_canonical_format:
        X_csc = X_csc.copy() if X_csc is X else X_csc
        X_csc.sum_duplicates()
    return X_csc


def column_values(X_csc, feature_idx):
    """``(stored, n_implicit_zeros)`` of column ``feature_idx`` of a canonical CSC ``X_csc``: its stored values
    (a view) and how many of its entries are implicit zeros."""
    start, stop = X_csc.indptr[feature_idx], X_csc.indptr[feature_idx + 1]
    return X_csc.data[start:stop], X_csc.shape[0] - (stop - start)


def column_reader(X):
    """``feature_idx -> (values, n_implicit_zeros)``: a column of ``X`` (n_samples, n_features), dense (no
    implicit zeros) or sparse (``column_values`` of its CSC, converted once)."""
    if issparse(X):
        return functools.partial(column_values, canonical_csc(X))
    return lambda feature_idx: (X[:, feature_idx], 0)


def dense_only_options(estimator):
    """The options ``estimator`` uses that take dense X only (see the module docstring; categorical features
    aside), as ``name=value`` strings."""
    pruning = getattr(estimator, "pruning", None)
    if getattr(estimator, "algorithm", "cart") == "c45" and pruning is None:
        pruning = "pessimistic"  # C4.5's default (pruning.prune_grown_tree)
    return [
        name for name, used in (
            ("use_surrogates=True", getattr(estimator, "use_surrogates", False)),
            (f"pruning={pruning!r}", pruning in ("mdl", "pessimistic")),
        ) if used
    ]


def check_sparse_options(estimator, X):
    """Raise ValueError if ``X`` is sparse and ``estimator`` uses ``dense_only_options``; its categorical
    features are checked by ``binning.category_counts``."""
    dense_only = dense_only_options(estimator) if issparse(X) else []
    if dense_only:
        raise ValueError(
            f"{type(estimator).__name__} with {' and '.join(dense_only)} reads the training values of each row "
            "and takes dense X only; got a sparse X. Pass X.toarray(), or leave these options out."
        )


def refuse_sparse_categorical(X, is_categorical):
    """Raise ValueError if ``X`` is sparse and any feature is categorical (``is_categorical``, bool mask or None)."""
    if issparse(X) and is_categorical is not None and np.any(is_categorical):
        raise ValueError(
            "Categorical features take dense X only (their codes are checked and masked per column); got a sparse "
            f"X with categorical features {np.flatnonzero(is_categorical).tolist()}. Pass X.toarray()."
        )
