"""Jackknife and bootstrap estimates against textbook identities and direct numpy computations."""

import numpy as np
import pytest
import scipy.stats

from gpuforest.backend import get_backend
from gpuforest.resampling import bootstrap, bootstrap_counts, jackknife

RNG = np.random.default_rng(0)
SAMPLE = RNG.normal(size=40) ** 2
PAIRS = np.column_stack([SAMPLE, SAMPLE + RNG.normal(size=40)])


def numpy_statistic(name, q=0.3):
    return {
        "mean": np.mean, "median": np.median, "variance": np.var,
        "quantile": lambda x: np.quantile(x, q), "correlation": lambda x: np.corrcoef(x[:, 0], x[:, 1])[0, 1],
    }[name]


def test_jackknife_of_the_mean_is_the_mean_and_its_variance_s2_over_n():
    result = jackknife(SAMPLE, "mean")
    n = SAMPLE.shape[0]
    np.testing.assert_allclose(result.estimate, SAMPLE.mean(), rtol=1e-12)
    np.testing.assert_allclose(result.variance, SAMPLE.var(ddof=1) / n, rtol=1e-12)
    assert abs(result.bias) < 1e-12


def test_jackknife_bias_of_the_plug_in_variance():
    """Efron and Tibshirani 1993, ch. 11: the jackknife corrects the plug-in variance to the unbiased one."""
    result = jackknife(SAMPLE, "variance")
    np.testing.assert_allclose(result.estimate, SAMPLE.var(ddof=1), rtol=1e-10)


@pytest.mark.parametrize("statistic", ["mean", "median", "quantile", "variance", "correlation", "callable"])
def test_jackknife_replicates_equal_leave_one_out_numpy(statistic):
    data = PAIRS if statistic == "correlation" else SAMPLE
    reference = numpy_statistic("variance" if statistic == "callable" else statistic)
    result = jackknife(data, np.var if statistic == "callable" else statistic, q=0.3)
    expected = [reference(np.delete(data, i, axis=0)) for i in range(data.shape[0])]
    np.testing.assert_allclose(result.replicates, expected, rtol=1e-12)
    n = data.shape[0]
    np.testing.assert_allclose(result.bias, (n - 1) * (np.mean(expected) - reference(data)), rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(result.variance, (n - 1) * np.var(expected), rtol=1e-9)


@pytest.mark.parametrize("statistic", ["mean", "median", "quantile", "variance", "correlation", "callable"])
def test_bootstrap_equals_numpy_over_the_same_draws(statistic):
    data = PAIRS if statistic == "correlation" else SAMPLE
    reference = numpy_statistic("median" if statistic == "callable" else statistic)
    result = bootstrap(
        data, np.median if statistic == "callable" else statistic, n_resamples=50, q=0.3, random_state=7
    )
    counts = bootstrap_counts(data.shape[0], 50, random_state=7)
    assert (counts.sum(axis=1) == data.shape[0]).all()
    expected = np.array([reference(data[np.repeat(np.arange(data.shape[0]), row)]) for row in counts])
    np.testing.assert_allclose(result.replicates, expected, rtol=1e-12)
    assert result.statistic == pytest.approx(reference(data), rel=1e-12)
    np.testing.assert_allclose(result.bias, expected.mean() - reference(data), rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(result.variance, expected.var(ddof=1), rtol=1e-9)
    assert result.estimate == pytest.approx(result.statistic - result.bias)


def test_bootstrap_draws_are_a_forests_bootstrap_and_uniform():
    """Resample b draws the rows of a forest's tree b (the same kernel and seed); draws look uniform."""
    counts = bootstrap_counts(30, 400, random_state=3)
    backend = get_backend("cpu")
    seed = int(np.random.RandomState(3).randint(np.iinfo(np.int32).max))
    np.testing.assert_array_equal(counts[100:110], backend.bootstrap_counts(seed, 100, 10, 30, 30))
    # Each row is drawn Binomial(n, 1/n) times: chi-square of the row totals against n draws each.
    assert scipy.stats.chisquare(counts.sum(axis=0)).pvalue > 1e-3


def test_bootstrap_standard_error_of_the_mean_is_near_the_textbook_value():
    result = bootstrap(SAMPLE, "mean", n_resamples=2000, random_state=0)
    plug_in = SAMPLE.std() / np.sqrt(SAMPLE.shape[0])
    assert result.standard_error == pytest.approx(plug_in, rel=0.1)


@pytest.mark.parametrize("method", ["jackknife", "bootstrap"])
@pytest.mark.parametrize("statistic", ["mean", "quantile", "correlation"])
def test_simulated_gpu_equals_cpu(method, statistic):
    data = PAIRS[:12] if statistic == "correlation" else SAMPLE[:12]
    kwargs = {"n_resamples": 20, "random_state": 1} if method == "bootstrap" else {}
    resample = bootstrap if method == "bootstrap" else jackknife
    cpu, cuda = (resample(data, statistic, q=0.8, device=device, **kwargs) for device in ("cpu", "cuda"))
    np.testing.assert_array_equal(cuda.replicates, cpu.replicates)
    assert (cuda.estimate, cuda.variance) == (cpu.estimate, cpu.variance)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: bootstrap(SAMPLE, "mode"), "statistic must be"),
        (lambda: bootstrap(SAMPLE, n_resamples=1), "n_resamples"),
        (lambda: jackknife(SAMPLE[:1]), "at least 2 rows"),
        (lambda: jackknife(SAMPLE, "correlation"), r"shape \(n_samples, 2\)"),
        (lambda: jackknife(PAIRS, "mean"), r"shape \(n_samples,\)"),
        (lambda: jackknife(SAMPLE, "quantile", q=2), "q in"),
        (lambda: jackknife(np.array([1.0, np.nan, 2.0])), "finite"),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
