"""Jackknife and bootstrap estimates of a statistic: its value, bias and variance.

- ``jackknife`` (Quenouille 1949; Tukey 1958): the statistic on each of the
  ``n`` samples that leave one row out;
- ``bootstrap`` (Efron 1979): the statistic on ``n_resamples`` samples of ``n``
  rows drawn with replacement.

Formulas from Efron and Tibshirani (1993), *An Introduction to the Bootstrap*:
the bootstrap's standard error (ch. 6) and bias (ch. 10), the jackknife's bias
and standard error (ch. 11). With ``theta`` the statistic on the whole
sample and ``theta_(i)`` / ``theta*_b`` the replicates:

    jackknife:  bias = (n - 1) (mean_i theta_(i) - theta)
                variance = (n - 1) / n  sum_i (theta_(i) - mean_j theta_(j))^2
    bootstrap:  bias = mean_b theta*_b - theta
                variance = sum_b (theta*_b - mean theta*)^2 / (B - 1)

and the bias-corrected estimate ``theta - bias``.

A replicate is a weighting of the rows: the bootstrap's draw counts
(``Backend.bootstrap_counts``: the forests' counter-based RNG, so that
``random_state`` gives the same draws on the CPU and the GPU, and replicate
``b`` draws the rows of a forest's tree ``b`` of the same seed), the
jackknife's ones with a zero. The built-in statistics (``"mean"``,
``"median"``, ``"quantile"``, ``"variance"``, ``"correlation"``) are weighted
statistics of a block of such weight rows at once, in the backend's array
library (numpy or CuPy); a callable statistic gets each replicate's rows.
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from .backend import get_backend
from .fitting import random_seed

BUILTIN_STATISTICS = ("mean", "median", "quantile", "variance", "correlation")
# Replicates weighted at once: a block's (replicates, rows) weights take about this many bytes.
BLOCK_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class ResamplingResult:
    """A resampling estimate of a statistic.

    Attributes
    ----------
    statistic : float
        The statistic of the whole sample, ``theta``.
    estimate : float
        The bias-corrected estimate ``theta - bias``.
    bias : float
    variance : float
    standard_error : float
        ``sqrt(variance)``.
    replicates : ndarray of shape (n_replicates,)
        The statistic of each replicate (jackknife: row ``i`` left out).
    """

    statistic: float
    estimate: float
    bias: float
    variance: float
    standard_error: float
    replicates: np.ndarray


def _check_data(data, statistic, q):
    """``data`` as float64 (n_samples,) or (n_samples, 2 for correlation); the statistic's name or callable."""
    if not (callable(statistic) or statistic in BUILTIN_STATISTICS):
        raise ValueError(f"statistic must be a callable or one of {BUILTIN_STATISTICS}; got {statistic!r}.")
    data = np.asarray(data) if callable(statistic) else np.asarray(data, dtype=np.float64)
    if data.ndim == 0 or data.shape[0] < 2:
        raise ValueError(f"data needs at least 2 rows to resample; got shape {data.shape}.")
    if statistic == "correlation":
        if data.ndim != 2 or data.shape[1] != 2:
            raise ValueError(f"statistic='correlation' needs data of shape (n_samples, 2); got {data.shape}.")
    elif not callable(statistic) and data.ndim != 1:
        raise ValueError(f"statistic={statistic!r} needs data of shape (n_samples,); got {data.shape}.")
    if not callable(statistic) and not np.all(np.isfinite(data)):
        raise ValueError("data must be finite (no NaN or infinity) for the built-in statistics.")
    if statistic == "quantile" and not (isinstance(q, Real) and 0.0 <= q <= 1.0):
        raise ValueError(f"statistic='quantile' needs q in [0, 1]; got {q!r}.")
    return data


def _lerp(xp, low, high, fraction):
    """``low + fraction (high - low)`` as numpy's quantiles interpolate (``numpy.lib._function_base_impl._lerp``)."""
    difference = high - low
    return xp.where(fraction >= 0.5, high - difference * (1.0 - fraction), low + difference * fraction)


def weighted_statistics(xp, statistic, data, weights, q=0.5):
    """The built-in ``statistic`` of each weighting of the rows of ``data``.

    Row ``i`` counts ``weights[r, i]`` times in replicate ``r`` (integer counts).

    Parameters
    ----------
    xp : module
        numpy or CuPy, the module of ``data`` and ``weights``.
    statistic : {"mean", "median", "quantile", "variance", "correlation"}
        ``"variance"`` divides by the number of rows (``numpy.var``'s default), ``"correlation"`` is
        Pearson's between the two columns, ``"quantile"`` and ``"median"`` interpolate linearly
        (``numpy.quantile``'s default) between the sorted rows of the replicate.
    data : array of shape (n_samples,), or (n_samples, 2) for ``"correlation"``; sorted for the quantiles
    weights : array of shape (n_replicates, n_samples)
    q : float
        The quantile's level.

    Returns
    -------
    values : array of shape (n_replicates,)
    """
    total = weights.sum(axis=1)
    if statistic in ("median", "quantile"):
        level = 0.5 if statistic == "median" else q
        # Sorted rows repeated by their weights: position k is the first row whose cumulative weight exceeds k.
        cumulative = xp.cumsum(weights, axis=1)
        position = (total - 1) * level
        low = xp.floor(position)
        below = (cumulative <= low[:, None]).sum(axis=1)
        above = (cumulative <= xp.minimum(low + 1, total - 1)[:, None]).sum(axis=1)
        return _lerp(xp, data[below], data[above], position - low)
    if statistic == "correlation":
        centred = data[None, :, :] - ((weights @ data) / total[:, None])[:, None, :]
        covariance = xp.einsum("ri,ri,ri->r", weights, centred[:, :, 0], centred[:, :, 1])
        spread = xp.einsum("ri,rik->rk", weights, centred ** 2)
        return covariance / xp.sqrt(spread[:, 0] * spread[:, 1])
    mean = (weights @ data) / total
    if statistic == "mean":
        return mean
    return (weights * (data[None, :] - mean[:, None]) ** 2).sum(axis=1) / total


def _blocks(n_replicates, n_samples):
    """``(first, count)`` of the blocks of replicates weighted at once (about ``BLOCK_BYTES`` each)."""
    per_block = max(1, BLOCK_BYTES // (8 * n_samples))
    for first in range(0, n_replicates, per_block):
        yield first, min(per_block, n_replicates - first)


def _replicates(statistic, data, q, weight_blocks, backend):
    """The statistic of every replicate: ``weight_blocks`` yields (count, n_samples) weights on the device."""
    if callable(statistic):
        rows = np.arange(data.shape[0])
        values = []
        for weights in weight_blocks:
            for replicate_weights in backend.to_host(weights):
                values.append(float(statistic(data[np.repeat(rows, replicate_weights)])))
        return np.asarray(values)
    xp = backend.xp
    if statistic in ("median", "quantile"):
        order = np.argsort(data, kind="stable")
        data = backend.to_device(data[order])
        sorted_blocks = (weights[:, backend.to_device(order)] for weights in weight_blocks)
        values = [weighted_statistics(xp, statistic, data, weights.astype(np.float64), q) for weights in sorted_blocks]
    else:
        data = backend.to_device(data)
        values = [weighted_statistics(xp, statistic, data, weights.astype(np.float64), q) for weights in weight_blocks]
    return np.concatenate([backend.to_host(block) for block in values])


def _whole_sample(statistic, data, q):
    if callable(statistic):
        return float(statistic(data))
    weights = np.ones((1, data.shape[0]))
    if statistic in ("median", "quantile"):
        data = np.sort(data)
    return float(weighted_statistics(np, statistic, data, weights, q)[0])


def _result(theta, replicates, bias, variance):
    return ResamplingResult(
        statistic=theta, estimate=theta - bias, bias=float(bias), variance=float(variance),
        standard_error=float(np.sqrt(variance)), replicates=replicates,
    )


def jackknife(data, statistic="mean", *, q=0.5, device="cpu"):
    """Jackknife estimate, bias and variance of ``statistic`` (Efron and Tibshirani 1993, ch. 11).

    Parameters
    ----------
    data : array-like of shape (n_samples,) or (n_samples, ...)
        The rows to leave out one at a time. ``"correlation"`` takes (n_samples, 2).
    statistic : {"mean", "median", "quantile", "variance", "correlation"} or callable, default="mean"
        A callable gets the rows of a replicate (an array of ``n_samples - 1`` rows) and returns a number.
    q : float, default=0.5
        The level of ``statistic="quantile"``.
    device : {"cpu", "cuda", "auto"}, default="cpu"
        Where the built-in statistics are computed.

    Returns
    -------
    result : ResamplingResult
        ``replicates[i]`` is the statistic without row ``i``. For the mean, ``estimate`` is the
        sample mean and ``variance`` ``s^2 / n`` (``s^2`` with ``n - 1`` in the denominator).
    """
    data = _check_data(data, statistic, q)
    backend = get_backend(device)
    n_samples = data.shape[0]

    def weight_blocks():
        for first, count in _blocks(n_samples, n_samples):
            weights = backend.xp.ones((count, n_samples), dtype=np.int32)
            weights[backend.xp.arange(count), backend.xp.arange(first, first + count)] = 0
            yield weights

    replicates = _replicates(statistic, data, q, weight_blocks(), backend)
    theta = _whole_sample(statistic, data, q)
    centre = replicates.mean()
    bias = (n_samples - 1) * (centre - theta)
    variance = (n_samples - 1) / n_samples * np.sum((replicates - centre) ** 2)
    return _result(theta, replicates, bias, variance)


def bootstrap_counts(n_samples, n_resamples, random_state=None, device="cpu"):
    """How many times each row is drawn in each bootstrap resample: shape (n_resamples, n_samples), int32.

    Resample ``b`` draws ``n_samples`` rows with replacement by the counter-based RNG
    (``kernels.common.bootstrap_row``), keyed by ``random_state`` as a forest's tree ``b``.
    """
    backend = get_backend(device)
    seed = random_seed(random_state)
    return backend.to_host(backend.bootstrap_counts(seed, 0, n_resamples, n_samples, n_samples))




def bootstrap(data, statistic="mean", *, n_resamples=1000, q=0.5, random_state=None, device="cpu"):
    """Bootstrap estimate, bias and variance of ``statistic`` (Efron and Tibshirani 1993, ch. 6 and 10).

    Parameters
    ----------
    data : array-like of shape (n_samples,) or (n_samples, ...)
        The rows to resample. ``"correlation"`` takes (n_samples, 2).
    statistic : {"mean", "median", "quantile", "variance", "correlation"} or callable, default="mean"
        A callable gets the rows of a resample (``n_samples`` rows, each as often as it was drawn,
        in row order) and returns a number.
    n_resamples : int, default=1000
        ``B``, at least 2.
    q : float, default=0.5
        The level of ``statistic="quantile"``.
    random_state : int, RandomState instance or None, default=None
        Seeds the counter-based RNG: the same draws on every device (``bootstrap_counts``).
    device : {"cpu", "cuda", "auto"}, default="cpu"
        Where the draws and the built-in statistics are computed.

    Returns
    -------
    result : ResamplingResult
        ``replicates[b]`` is the statistic of resample ``b``.
    """
    data = _check_data(data, statistic, q)
    if not isinstance(n_resamples, Integral) or isinstance(n_resamples, bool) or n_resamples < 2:
        raise ValueError(f"n_resamples must be an integer of at least 2; got {n_resamples!r}.")
    backend = get_backend(device)
    seed = random_seed(random_state)
    n_samples = data.shape[0]
    weight_blocks = (
        backend.bootstrap_counts(seed, first, count, n_samples, n_samples)
        for first, count in _blocks(n_resamples, n_samples)
    )
    replicates = _replicates(statistic, data, q, weight_blocks, backend)
    theta = _whole_sample(statistic, data, q)
    return _result(theta, replicates, replicates.mean() - theta, replicates.var(ddof=1))
