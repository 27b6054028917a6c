"""Boosting losses: targets they accept, optimal constant, gradients, link, leaf re-fit.

Raw scores have shape (n_samples, n_trees_per_iteration) and live on the
backend's device; gradients and hessians are computed there by the backend's
``loss_gradients`` kernel (the formulas are ``kernels.common.row_gradients``).
Losses and their names follow scikit-learn's ``sklearn._loss`` and
``HistGradientBoosting*``; ``huber`` follows scikit-learn's
``GradientBoostingRegressor`` (delta re-estimated each round as the ``alpha``
quantile of the absolute residuals, Friedman 2001, algorithm 4) and
``exponential`` its AdaBoost loss ``exp(-(2y - 1) raw)``.

``absolute_error`` and ``quantile`` have a constant hessian, so the Newton
leaf values only follow the gradients' signs; as scikit-learn and LightGBM do,
their leaves are re-fitted to the (weighted) median / ``alpha`` quantile of the
residuals of the leaf's rows (Friedman 2001, algorithm 3).
"""

import numpy as np

from .kernels import common


def weighted_quantile(values, weights, quantile, groups=None, n_groups=1):
    """``quantile`` of ``values`` (in each group), as scikit-learn's losses compute it.

    Without ``weights``: numpy's linear interpolation between order statistics
    (``np.percentile``). With ``weights``: the smallest value whose cumulative
    weight reaches ``quantile`` of the total (scikit-learn's ``_weighted_percentile``).

    Parameters
    ----------
    values : ndarray of shape (n_samples,), float64
    weights : ndarray of shape (n_samples,), float64, or None
    quantile : float in [0, 1]
    groups : ndarray of shape (n_samples,), int, optional
        Group of each value, in ``[0, n_groups)``.

    Returns
    -------
    float, or ndarray of shape (n_groups,) (NaN for an empty group) with ``groups``.
    """
    group_of = np.zeros(values.shape[0], dtype=np.int64) if groups is None else groups
    order = np.lexsort((values, group_of))
    sorted_values, sorted_groups = values[order], group_of[order]
    first = np.searchsorted(sorted_groups, np.arange(n_groups), side="left")
    stop = np.searchsorted(sorted_groups, np.arange(n_groups), side="right")
    last = np.maximum(stop - 1, first)
    if weights is None:
        position = first + quantile * (stop - 1 - first)
        lower = np.clip(np.floor(position).astype(np.int64), first, last)
        upper = np.minimum(lower + 1, last)
        fraction = position - lower
        result = sorted_values[np.minimum(lower, values.shape[0] - 1)] * (1 - fraction)
        result = result + sorted_values[np.minimum(upper, values.shape[0] - 1)] * fraction
    else:
        cumulative = np.cumsum(weights[order])
        before = np.where(first > 0, cumulative[np.maximum(first - 1, 0)], 0.0)
        total = cumulative[np.minimum(last, values.shape[0] - 1)] - before
        position = np.clip(np.searchsorted(cumulative, before + quantile * total, side="left"), first, last)
        result = sorted_values[np.minimum(position, values.shape[0] - 1)]
    result = np.where(stop > first, result, np.nan)
    return float(result[0]) if groups is None else result


def _uniform_or_none(sample_weight):
    """``None`` for equal weights: scikit-learn's losses then interpolate quantiles."""
    return None if np.all(sample_weight == sample_weight[0]) else sample_weight


def _logit(p):
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return np.log(p / (1 - p))


def _sigmoid(xp, raw):
    return 1.0 / (1.0 + xp.exp(-raw))


class Loss:
    """What every loss offers; subclasses set the class attributes and ``baseline``.

    Attributes
    ----------
    loss_id : int
        ``kernels.common.LOSS_*`` constant of the gradient kernel.
    n_trees_per_iteration : int
    refit_quantile : float or None
        Leaves are re-fitted to this quantile of their rows' residuals.
    """

    n_trees_per_iteration = 1
    refit_quantile = None

    def check_target(self, y):
        """Raise ValueError for targets outside the loss's domain."""

    def round_parameter(self, backend, y, raw, sample_weight):
        """The kernel's ``parameter`` for this round."""
        return 0.0

    def gradients(self, backend, y, raw, sample_weight, out=None):
        """Weighted gradients and hessians on the device, shape (n_samples, n_trees_per_iteration);
        ``out``: a previous round's pair to overwrite (fresh memory costs as much as the kernel)."""
        parameter = self.round_parameter(backend, y, raw, sample_weight)
        return backend.loss_gradients(self.loss_id, parameter, y, raw, sample_weight, out)

    def refit_leaves(self, value, leaves, y, raw, sample_weight):
        """Set each leaf of ``value`` (n_nodes,) to ``refit_quantile`` of its rows' residuals ``y - raw`` (host arrays)."""
        refitted = weighted_quantile(
            y - raw, _uniform_or_none(sample_weight), self.refit_quantile, leaves, value.shape[0]
        )
        has_rows = ~np.isnan(refitted)
        value[has_rows] = refitted[has_rows]

    def link(self, xp, raw):
        """Predictions from raw scores (regression: the mean; classification: probabilities)."""
        return raw[:, 0]

    def loss(self, y, raw, sample_weight):
        """Weighted mean loss at raw scores ``raw`` (n_samples, n_scores), host arrays."""
        return np.average(self.pointwise(y, raw), weights=sample_weight)


class SquaredError(Loss):
    """``(y - raw)^2 / 2``."""

    loss_id = common.LOSS_SQUARED_ERROR

    def baseline(self, y, sample_weight):
        return np.array([np.average(y, weights=sample_weight)])

    def pointwise(self, y, raw):
        return 0.5 * (y - raw[:, 0]) ** 2


class AbsoluteError(Loss):
    """``|y - raw|``; leaves re-fitted to the weighted median of the residuals."""

    loss_id = common.LOSS_ABSOLUTE_ERROR
    refit_quantile = 0.5

    def baseline(self, y, sample_weight):
        return np.array([weighted_quantile(y, _uniform_or_none(sample_weight), 0.5)])

    def pointwise(self, y, raw):
        return np.abs(y - raw[:, 0])


class QuantileLoss(Loss):
    """Pinball loss of the ``alpha`` quantile; leaves re-fitted to the residuals' ``alpha`` quantile."""

    loss_id = common.LOSS_QUANTILE

    def __init__(self, alpha):
        self.refit_quantile = alpha

    def round_parameter(self, backend, y, raw, sample_weight):
        return self.refit_quantile

    def baseline(self, y, sample_weight):
        return np.array([weighted_quantile(y, _uniform_or_none(sample_weight), self.refit_quantile)])

    def pointwise(self, y, raw):
        difference = y - raw[:, 0]
        return np.where(difference > 0, self.refit_quantile * difference, (self.refit_quantile - 1) * difference)


class HuberLoss(Loss):
    """Squared error within ``delta``, absolute beyond; ``delta`` is the ``alpha`` quantile of ``|y - raw|``."""

    loss_id = common.LOSS_HUBER

    def __init__(self, alpha):
        self.alpha = alpha

    def round_parameter(self, backend, y, raw, sample_weight):
        residuals = backend.to_host(backend.xp.abs(y - raw[:, 0]))
        return weighted_quantile(residuals, _uniform_or_none(backend.to_host(sample_weight)), self.alpha)

    def baseline(self, y, sample_weight):
        return np.array([weighted_quantile(y, _uniform_or_none(sample_weight), 0.5)])

    def loss(self, y, raw, sample_weight):
        absolute = np.abs(y - raw[:, 0])
        delta = weighted_quantile(absolute, _uniform_or_none(sample_weight), self.alpha)
        pointwise = np.where(absolute <= delta, 0.5 * absolute**2, delta * (absolute - 0.5 * delta))
        return np.average(pointwise, weights=sample_weight)


class PoissonLoss(Loss):
    """Half Poisson deviance with a log link: ``exp(raw) - y raw``."""

    loss_id = common.LOSS_POISSON

    def check_target(self, y):
        if np.any(y < 0) or np.sum(y) <= 0:
            raise ValueError("loss='poisson' needs non-negative targets y with a positive sum.")

    def baseline(self, y, sample_weight):
        return np.array([np.log(np.average(y, weights=sample_weight))])

    def link(self, xp, raw):
        return xp.exp(raw[:, 0])

    def pointwise(self, y, raw):
        return np.exp(raw[:, 0]) - y * raw[:, 0]


class GammaLoss(PoissonLoss):
    """Half gamma deviance with a log link: ``raw + y exp(-raw)``."""

    loss_id = common.LOSS_GAMMA

    def check_target(self, y):
        if np.any(y <= 0):
            raise ValueError("loss='gamma' needs strictly positive targets y.")

    def pointwise(self, y, raw):
        return raw[:, 0] + y * np.exp(-raw[:, 0])


class BinomialLoss(Loss):
    """Binary log loss on the logit: gradient ``p - y``, hessian ``p (1 - p)``."""

    loss_id = common.LOSS_BINOMIAL

    def baseline(self, y, sample_weight):
        return np.array([_logit(np.average(y, weights=sample_weight))])

    def link(self, xp, raw):
        p = _sigmoid(xp, raw[:, 0])
        return xp.stack([1.0 - p, p], axis=1)

    def pointwise(self, y, raw):
        return np.logaddexp(0.0, raw[:, 0]) - y * raw[:, 0]


class ExponentialLoss(Loss):
    """AdaBoost's loss ``exp(-(2y - 1) raw)``; ``P(y = 1) = sigmoid(2 raw)`` (Friedman, Hastie & Tibshirani 2000)."""

    loss_id = common.LOSS_EXPONENTIAL

    def baseline(self, y, sample_weight):
        return np.array([0.5 * _logit(np.average(y, weights=sample_weight))])

    def link(self, xp, raw):
        p = _sigmoid(xp, 2.0 * raw[:, 0])
        return xp.stack([1.0 - p, p], axis=1)

    def pointwise(self, y, raw):
        return np.exp(-(2.0 * y - 1.0) * raw[:, 0])


class MultinomialLoss(Loss):
    """Softmax log loss, one raw score per class: gradient ``p_k - y_k``, hessian ``p_k (1 - p_k)``."""

    loss_id = common.LOSS_MULTINOMIAL

    def __init__(self, n_classes):
        self.n_trees_per_iteration = n_classes

    def baseline(self, y, sample_weight):
        prior = np.bincount(y.astype(np.int64), weights=sample_weight, minlength=self.n_trees_per_iteration)
        log_prior = np.log(np.clip(prior / sample_weight.sum(), 1e-15, 1.0))
        return log_prior - log_prior.mean()

    def link(self, xp, raw):
        shifted = xp.exp(raw - raw.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)

    def pointwise(self, y, raw):
        largest = raw.max(axis=1)
        log_total = largest + np.log(np.exp(raw - largest[:, None]).sum(axis=1))
        return log_total - raw[np.arange(y.shape[0]), y.astype(np.int64)]


class CustomObjective(Loss):
    """A user's objective ``function(y_true, raw) -> (gradient, hessian)``, evaluated on the host.

    ``raw`` is (n_samples,) with one score per row, else (n_samples, n_scores);
    gradient and hessian have its shape and are multiplied by the sample
    weights here (as LightGBM's scikit-learn API does). Raw scores start at 0.
    ``link`` is ``"identity"`` (regression), ``"sigmoid"`` or ``"softmax"``.
    """

    def __init__(self, function, n_scores, link):
        self.function = function
        self.n_trees_per_iteration = n_scores
        self.link_name = link

    def baseline(self, y, sample_weight):
        return np.zeros(self.n_trees_per_iteration)

    def gradients(self, backend, y, raw, sample_weight, out=None):
        raw_host = backend.to_host(raw)
        shape = raw_host.shape
        outputs = self.function(backend.to_host(y), raw_host[:, 0] if shape[1] == 1 else raw_host)
        if not (isinstance(outputs, tuple) and len(outputs) == 2):
            raise TypeError("A custom loss must return a tuple (gradient, hessian).")
        weight = backend.to_host(sample_weight)[:, None]
        arrays = []
        for name, array in zip(("gradient", "hessian"), outputs):
            array = np.asarray(array, dtype=np.float64)
            if array.size != raw_host.size:
                raise ValueError(f"The custom loss returned a {name} of shape {array.shape}; expected {shape}.")
            if not np.all(np.isfinite(array)):
                raise ValueError(f"The custom loss returned a non-finite {name}.")
            if name == "hessian" and (np.any(array < 0) or not np.any(array > 0)):
                # Newton leaf values divide by the hessian sum.
                raise ValueError("The custom loss must return non-negative hessians, not all zero.")
            arrays.append(backend.to_device(weight * array.reshape(shape)))
        return tuple(arrays)

    def link(self, xp, raw):
        if self.link_name == "sigmoid":
            return BinomialLoss.link(self, xp, raw)
        if self.link_name == "softmax":
            return MultinomialLoss.link(self, xp, raw)
        return raw[:, 0]
