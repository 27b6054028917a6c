"""The fit recipe every estimator shares: bin once, then grow trees on the binned rows.

A fit bins its training rows once (``BinnedTraining``: ``BinMapper.transform``
and the backend's own layouts, ``Backend.binned_rows``), then grows trees on
them as often as the estimator needs: a tree, a forest's batches, a boosting
round's trees, an AdaBoost member. Each growth (``BinnedTraining.grow``) is
statistics -> ``RowData`` -> grower, the same steps for every estimator; only
the rows, their draw counts, the statistics and the growth parameters differ.
"""

import functools
from numbers import Integral, Number

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import validate_parameter_constraints

from .binning import BinMapper
from .grower import TreeGrower


def random_seed(random_state):
    """The seed of the counter-based RNG that every estimator draws from its ``random_state``: a draw of
    ``check_random_state(random_state).randint(2**31 - 1)``. An integer's is remembered (``_integer_seed``): its
    draw is the same every time, and seeding a ``RandomState`` costs 0.06-0.09 ms, 5% of a small tree's fit;
    ``None`` and a ``RandomState`` draw afresh."""
    if isinstance(random_state, Integral):
        return _integer_seed(int(random_state))
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


@functools.lru_cache(maxsize=256)
def _integer_seed(random_state):
    return random_seed(np.random.RandomState(random_state))


# Parameter values found valid, per estimator class (``validate_params``); cleared when it holds this many.
VALID_PARAMS_KEPT = 256
_valid_params = set()


def validate_params(estimator):
    """``estimator._validate_params()``: its parameters checked against its ``_parameter_constraints`` (scikit-learn's
    checks and messages). Values that all are None, numbers or strings are remembered once valid, for the
    estimator's class: a fit with the same values skips the checks, which cost 60-110 us with a tree's twenty
    parameters (5 us remembered; a tree's fit on diabetes takes 1.3-1.5 ms). Other values (arrays, dicts,
    ``RandomState``) are checked at every fit."""
    cls = type(estimator)
    params = {name: getattr(estimator, name) for name in _param_names(cls)}
    key = (cls, *((name, type(value), value) for name, value in params.items()))
    remembered = all(value is None or isinstance(value, (Number, str)) for value in params.values())
    if remembered and key in _valid_params:
        return
    validate_parameter_constraints(estimator._parameter_constraints, params, caller_name=cls.__name__)
    if remembered:
        if len(_valid_params) >= VALID_PARAMS_KEPT:
            _valid_params.clear()
        _valid_params.add(key)


@functools.cache
def _param_names(cls):
    return cls._get_param_names()


def fit_bin_mapper(estimator, X, seed):
    """A ``BinMapper`` with the estimator's ``max_bins`` and categorical features (``is_categorical_``),
    fitted on ``X`` (n_samples, n_features) with the fit's ``seed``."""
    return BinMapper(estimator.max_bins, random_state=seed, is_categorical=estimator.is_categorical_).fit(X)


def refit_bin_mapper(estimator, X, seed):
    """``estimator._bin_mapper`` for a warm start, refitted on ``X`` with ``seed`` when the estimator was loaded
    without it (pickles leave it out): the same ``X`` and seed give the same bins, hence the trees of an
    uninterrupted fit."""
    if not hasattr(estimator, "_bin_mapper"):
        estimator._bin_mapper = fit_bin_mapper(estimator, X, seed)
    return estimator._bin_mapper


class BinnedTraining:
    """A fit's training rows binned on one backend, and the growth of trees on them.

    Parameters
    ----------
    backend : Backend
    bin_mapper : binning.BinMapper
        Fitted.
    X : ndarray of shape (n_samples, n_features), dtype float64 or float32
        The training rows (NaN: missing), binned once here.
    """

    def __init__(self, backend, bin_mapper, X):
        self.backend = backend
        self.bin_mapper = bin_mapper
        self.n_samples = X.shape[0]
        self.binned_rows = backend.binned_rows(bin_mapper.transform(X, backend))
        self._unit_counts = {}

    def grow(
        self, sample_indices, stats, n_values, params, *, sample_counts=None, tree_offsets=None,
        grower_class=TreeGrower, first_tree=0, workspace=None,
    ):
        """Grow a batch of trees; returns ``(grower, trees)``.

        Parameters
        ----------
        sample_indices : ndarray of shape (n_entries,), dtype int32
            The rows of every tree, tree after tree (on the host or the device); the
            grower partitions them in place.
        stats : statistics.RowStatistics
        n_values : int
            Values per node (classes, or 1).
        params : grower.GrowthParams
        sample_counts : ndarray of shape (n_trees, n_samples), dtype int32, or None
            How many times each row is drawn for each tree; None: once at most (each
            tree's rows are drawn without replacement).
        tree_offsets : ndarray of shape (n_trees + 1,), dtype int64, or None
            Tree ``t`` owns ``sample_indices[tree_offsets[t]:tree_offsets[t + 1]]``;
            None: one tree of every entry.
        grower_class : type, default=TreeGrower
            ``TreeGrower`` or a subclass (``multiway.MultiwayTreeGrower``).
        first_tree, workspace
            As in ``TreeGrower``.
        """
        if tree_offsets is None:
            tree_offsets = np.array([0, sample_indices.shape[0]], dtype=np.int64)
        unit_counts = sample_counts is None
        if unit_counts:
            sample_counts = self._unit_counts_of(tree_offsets.shape[0] - 1)
        rows = self.backend.row_data(self.binned_rows, sample_indices, sample_counts, stats, unit_counts or None)
        grower = grower_class(
            self.backend, rows, tree_offsets, self.bin_mapper, stats, n_values, params, first_tree=first_tree,
            workspace=workspace,
        )
        return grower, grower.grow()

    def _unit_counts_of(self, n_trees):
        """Counts of 1 for ``n_trees`` trees, on the device: made once per number of trees, not per growth."""
        counts = self._unit_counts.get(n_trees)
        if counts is None:
            counts = self._unit_counts[n_trees] = self.backend.xp.ones((n_trees, self.n_samples), dtype=np.int32)
        return counts
