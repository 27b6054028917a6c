"""Categorical features at the estimators' input: which they are, pandas ``category`` columns as codes.

Every estimator takes ``categorical_features`` with the meanings of
scikit-learn's ``HistGradientBoosting*``: None (no categorical feature, the
default), ``"from_dtype"`` (the pandas ``category`` columns of a DataFrame),
an array of feature indices, of feature names (X a DataFrame with string
column names), or a bool mask of shape (n_features,). The default is None, not
scikit-learn's ``"from_dtype"``: a ``category`` column of numbers was, and
stays by default, a numeric feature.

At fit (``encode_fit_input`` before scikit-learn's validation,
``record_categories`` after it), a non-numeric column of a categorical
feature (a ``category`` column, strings) is replaced by its codes (those of
``pandas.Categorical``: a ``category`` column's own, else the sorted distinct
values'; missing becomes NaN) and its categories are kept; a numeric
categorical column must already hold codes, integers from 0
(``binning.category_counts`` checks them and the number of categories against
``max_bins``). The estimator gets

- ``is_categorical_``: bool mask of shape (n_features_in_,), or None when no
  feature is categorical (as scikit-learn's);
- ``categories_``: per feature, the categories in code order (a non-numeric
  column's categories, else the codes ``0 .. n - 1``), None for numeric
  features; None when no feature is categorical.

At predict (``encode_predict_input``, ``mask_unknown_codes``), a non-numeric
column of a categorical feature (a ``category`` column, strings) is coded
with the categories seen at fit, and every value of a categorical feature
that is no code of a category seen at fit (an unknown category, a code past
them, a negative or fractional value) becomes NaN: it goes where missing
values go (``missing_go_to_left`` at a categorical split; a multiway node
stops the row and predicts its own value).
"""

import sys

import numpy as np
from sklearn.utils._param_validation import StrOptions

from .binning import category_counts, feature_label, too_many_categories

CATEGORICAL_FEATURES_CONSTRAINT = ["array-like", StrOptions({"from_dtype"}), None]


def categorical_mask(categorical_features, n_features, feature_names=None, category_dtypes=None):
    """The bool mask (n_features,) of the categorical features, or None when there are none.

    Parameters
    ----------
    categorical_features : None, "from_dtype", or array-like of bool, int or str
    n_features : int
    feature_names : ndarray of shape (n_features,) of str, or None
        The column names of a DataFrame X (for names in ``categorical_features``).
    category_dtypes : ndarray of shape (n_features,), dtype bool, or None
        Which columns of a DataFrame X have the ``category`` dtype (for ``"from_dtype"``).
    """
    if categorical_features is None:
        return None
    if isinstance(categorical_features, str):  # "from_dtype": the parameter constraints allow no other string
        return category_dtypes if category_dtypes is not None and category_dtypes.any() else None
    features = np.asarray(categorical_features)
    if features.size == 0:
        return None
    mask = np.zeros(n_features, dtype=bool)
    if features.dtype.kind == "b":
        if features.shape != (n_features,):
            raise ValueError(
                f"categorical_features as a bool mask needs one entry per feature ({n_features}); "
                f"got shape {features.shape}."
            )
        mask[:] = features
    elif features.dtype.kind in "iu":
        if features.ndim != 1 or features.min() < 0 or features.max() >= n_features:
            raise ValueError(
                f"categorical_features as indices must be a 1-D array of integers from 0 to {n_features - 1} "
                f"(X has {n_features} features); got {features.tolist()}."
            )
        mask[features] = True
    elif features.dtype.kind in "UO" and all(isinstance(name, str) for name in features.ravel()):
        if feature_names is None:
            raise ValueError(
                "categorical_features names features, but X has no feature names: fit on a DataFrame with string "
                "column names, or give indices or a bool mask."
            )
        names = list(feature_names)
        unknown = [str(name) for name in features.ravel() if name not in names]
        if unknown:
            raise ValueError(f"categorical_features names {unknown}, which are not features of X: {names}.")
        mask[[names.index(name) for name in features.ravel()]] = True
    else:
        raise ValueError(
            f"categorical_features must be None, 'from_dtype', or an array-like of bool, int or str; got "
            f"{features.dtype} values."
        )
    return mask if mask.any() else None


def declares_categorical_columns(categorical_features):
    """Whether ``categorical_features`` names columns of X itself (indices, names, a mask), which must then hold
    category codes, rather than none (None) or those of a DataFrame's dtypes ("from_dtype")."""
    return not (categorical_features is None or isinstance(categorical_features, str))


def _is_dataframe(X):
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(X, pandas.DataFrame)


def _with_columns(frame, columns):
    """A shallow copy of ``frame`` with the columns at the positions of ``columns`` (a dict) replaced."""
    frame = frame.copy(deep=False)
    for position, values in columns.items():
        frame.isetitem(position, values)
    return frame


def _codes_as_float(codes):
    """Category codes as float32, NaN where missing (pandas' code -1)."""
    codes = np.asarray(codes, dtype=np.float32)
    codes[codes < 0] = np.nan
    return codes


def encode_fit_input(estimator, X):
    """``(X, frame_categories)`` at fit, before scikit-learn's validation.

    For a DataFrame: X with the non-numeric columns of its categorical
    features replaced by their codes (float32, NaN where missing), and
    ``frame_categories = (mask, categories)`` (``categorical_mask``, and per
    feature the categories of such a column, else None). For any other X:
    ``(X, None)``; its mask is resolved after validation.
    """
    if not _is_dataframe(X):
        return X, None
    import pandas

    category_dtypes = np.array([isinstance(dtype, pandas.CategoricalDtype) for dtype in X.dtypes])
    string_names = all(isinstance(name, str) for name in X.columns)
    mask = categorical_mask(
        getattr(estimator, "categorical_features", None), X.shape[1],
        np.asarray(X.columns, dtype=object) if string_names else None, category_dtypes,
    )
    categories = [None] * X.shape[1]
    if mask is None:
        return X, (None, categories)
    codes = {}
    for feature_idx in np.flatnonzero(mask):
        if pandas.api.types.is_numeric_dtype(X.dtypes.iloc[feature_idx]):
            continue  # holds codes
        column = pandas.Categorical(X.iloc[:, feature_idx])
        categories[feature_idx] = np.asarray(column.categories)
        codes[feature_idx] = _codes_as_float(column.codes)
    return _with_columns(X, codes), (mask, categories)


def record_categories(estimator, X, frame_categories, max_bins):
    """Set ``is_categorical_`` and ``categories_`` of ``estimator`` from validated ``X`` (float, NaN allowed).

    ``frame_categories`` is ``encode_fit_input``'s. Raises ValueError for a
    categorical feature with more categories than ``max_bins`` allows or
    values that are no codes (``binning.category_counts``).
    """
    n_features = X.shape[1]
    if frame_categories is None:
        mask = categorical_mask(getattr(estimator, "categorical_features", None), n_features)
        categories = [None] * n_features
    else:
        mask, categories = frame_categories
    estimator.is_categorical_ = mask
    estimator.categories_ = None
    if mask is None:
        return
    names = getattr(estimator, "feature_names_in_", None)
    for feature_idx, known in enumerate(categories):
        if known is not None and known.shape[0] > max_bins - 1:
            raise too_many_categories(feature_label(feature_idx, names), known.shape[0], max_bins)
    n_categories = category_counts(X, mask, max_bins, names)
    estimator.categories_ = [
        np.arange(n_categories[feature_idx]) if is_categorical and known is None else known
        for feature_idx, (is_categorical, known) in enumerate(zip(mask, categories))
    ]


def encode_predict_input(estimator, X):
    """X at predict, before scikit-learn's validation: in a DataFrame, the non-numeric columns (``category``,
    strings) of the categorical features coded with the categories seen at fit (unknown ones: NaN)."""
    mask = getattr(estimator, "is_categorical_", None)
    if mask is None or not _is_dataframe(X) or X.shape[1] != mask.shape[0]:
        return X  # a width mismatch is left to scikit-learn's validation to report
    import pandas

    codes = {
        feature_idx: _codes_as_float(pandas.Index(categories).get_indexer(X.iloc[:, feature_idx]))
        for feature_idx, categories in enumerate(estimator.categories_)
        if mask[feature_idx] and not pandas.api.types.is_numeric_dtype(X.dtypes.iloc[feature_idx])
    }
    return _with_columns(X, codes) if codes else X


def mask_unknown_codes(estimator, X):
    """Validated X at predict with every value of a categorical feature that is no code of a category seen at
    fit replaced by NaN (in a copy; X itself when there is none)."""
    mask = getattr(estimator, "is_categorical_", None)
    if mask is None:
        return X
    copied = False
    for feature_idx in np.flatnonzero(mask):
        values = X[:, feature_idx]
        n_categories = estimator.categories_[feature_idx].shape[0]
        with np.errstate(invalid="ignore"):
            known = (values >= 0) & (values < n_categories) & (values == np.floor(values))
        unknown = ~known & ~np.isnan(values)
        if unknown.any():
            if not copied:
                X, copied = X.copy(), True
            X[unknown, feature_idx] = np.nan
    return X
