"""Boosting losses: the gradient kernels against numpy formulas, the portable exp, weighted quantiles."""

import numpy as np
import pytest
from sklearn.utils.stats import _weighted_percentile

from gpuforest.backend import get_backend
from gpuforest.kernels import common
from gpuforest.losses import weighted_quantile

LOSSES = {
    "squared_error": common.LOSS_SQUARED_ERROR, "absolute_error": common.LOSS_ABSOLUTE_ERROR,
    "huber": common.LOSS_HUBER, "quantile": common.LOSS_QUANTILE, "poisson": common.LOSS_POISSON,
    "gamma": common.LOSS_GAMMA, "binomial": common.LOSS_BINOMIAL, "exponential": common.LOSS_EXPONENTIAL,
    "multinomial": common.LOSS_MULTINOMIAL,
}
PARAMETER = {"huber": 0.7, "quantile": 0.3}


def reference_gradients(name, parameter, y, raw):
    """Unweighted gradient and hessian from the textbook formulas (scikit-learn's ``_loss``)."""
    score = raw[:, 0]
    if name == "multinomial":
        p = np.exp(raw - raw.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        one_hot = np.eye(raw.shape[1])[y.astype(int)]
        return p - one_hot, p * (1 - p)
    ones = np.ones_like(score)
    gradient, hessian = {
        "squared_error": lambda: (score - y, ones),
        "absolute_error": lambda: (np.where(score > y, 1.0, -1.0), ones),
        "huber": lambda: (np.clip(score - y, -parameter, parameter), ones),
        "quantile": lambda: (np.where(y > score, -parameter, 1 - parameter), ones),
        "poisson": lambda: (np.exp(score) - y, np.exp(score)),
        "gamma": lambda: (1 - y * np.exp(-score), y * np.exp(-score)),
        "binomial": lambda: (1 / (1 + np.exp(-score)) - y, np.exp(-score) / (1 + np.exp(-score)) ** 2),
        "exponential": lambda: (-(2 * y - 1) * np.exp(-(2 * y - 1) * score), np.exp(-(2 * y - 1) * score)),
    }[name]()
    return gradient[:, None], hessian[:, None]


def loss_data(name, n_samples=200, seed=0):
    rng = np.random.default_rng(seed)
    n_scores = 4 if name == "multinomial" else 1
    raw = rng.normal(scale=2.0, size=(n_samples, n_scores))
    if name == "multinomial":
        y = rng.integers(0, n_scores, n_samples).astype(np.float64)
    elif name in ("binomial", "exponential"):
        y = rng.integers(0, 2, n_samples).astype(np.float64)
    elif name in ("poisson",):
        y = rng.poisson(2.0, n_samples).astype(np.float64)
    elif name == "gamma":
        y = rng.gamma(2.0, 1.5, n_samples)
    else:
        y = rng.normal(scale=2.0, size=n_samples)
    return y, raw, rng.uniform(0.5, 2.0, n_samples)


@pytest.mark.parametrize("name", LOSSES)
def test_cpu_gradients_match_the_formulas(name):
    y, raw, weight = loss_data(name)
    gradients, hessians = get_backend("cpu").loss_gradients(LOSSES[name], PARAMETER.get(name, 0.0), y, raw, weight)
    expected_gradients, expected_hessians = reference_gradients(name, PARAMETER.get(name, 0.0), y, raw)
    np.testing.assert_allclose(gradients, weight[:, None] * expected_gradients, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(hessians, weight[:, None] * expected_hessians, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", LOSSES)
def test_cuda_gradients_equal_cpu_gradients(name):
    y, raw, weight = loss_data(name, n_samples=40, seed=1)
    cpu = get_backend("cpu").loss_gradients(LOSSES[name], PARAMETER.get(name, 0.0), y, raw, weight)
    cuda = get_backend("cuda").loss_gradients(LOSSES[name], PARAMETER.get(name, 0.0), y, raw, weight)
    for cpu_array, cuda_array in zip(cpu, cuda):
        np.testing.assert_array_equal(cpu_array, cuda_array)


def test_portable_exp_is_within_one_ulp_of_libm():
    from numba import njit

    def exp_loop(exp):
        @njit
        def exp_all(values):
            out = np.empty_like(values)
            for i in range(values.shape[0]):
                out[i] = exp(values[i])
            return out

        return exp_all

    exp_all = exp_loop(common.portable_exp)
    # The CPU gradients' form: inlined in a loop that LLVM vectorizes.
    inlined_exp_all = exp_loop(common.inlined_portable_exp)

    rng = np.random.default_rng(0)
    values = np.concatenate([rng.uniform(-1, 1, 20_000), rng.uniform(-708, 709.7, 20_000)])
    ulps = np.abs(exp_all(values) - np.exp(values)) / np.spacing(np.exp(values))
    assert ulps.max() <= 1.0
    # Subnormal results (2**k below 2**-1022, rounded once): within one unit of the smallest subnormal.
    tiny = rng.uniform(-745.1, -708.4, 20_000)
    assert np.abs(exp_all(tiny) - np.exp(tiny)).max() <= np.spacing(0.0)
    specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 709.78, 709.79, 710.0, -745.1, -745.14, -746.0])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(exp_all(specials), np.exp(specials))
    # Both compilations give the same bits, the ends and NaN included.
    for inputs in (values, tiny, specials, rng.normal(0.0, 400.0, 20_000)):
        np.testing.assert_array_equal(inlined_exp_all(inputs), exp_all(inputs))


@pytest.mark.parametrize("quantile", [0.1, 0.5, 0.9])
def test_weighted_quantile_matches_scikit_learn(quantile):
    rng = np.random.default_rng(2)
    values, weights = rng.normal(size=101), rng.uniform(0.1, 3.0, 101)
    assert weighted_quantile(values, weights, quantile) == _weighted_percentile(values, weights, 100 * quantile)
    groups = rng.integers(0, 4, 101)
    per_group = weighted_quantile(values, weights, quantile, groups, 5)
    for group in range(4):
        mine = groups == group
        assert per_group[group] == _weighted_percentile(values[mine], weights[mine], 100 * quantile)
    assert np.isnan(per_group[4])  # empty group
    # Without weights: numpy's linear interpolation, as scikit-learn's losses use then.
    assert weighted_quantile(values, None, quantile) == pytest.approx(np.percentile(values, 100 * quantile), rel=1e-15)
    per_group = weighted_quantile(values, None, quantile, groups, 5)
    for group in range(4):
        assert per_group[group] == pytest.approx(np.percentile(values[groups == group], 100 * quantile), rel=1e-15)
