"""gpuforest/losses.py: weighted quantiles against scikit-learn's ``_weighted_percentile`` and numpy's percentiles."""

import numpy as np
import pytest
from sklearn.utils.stats import _weighted_percentile

from gpuforest.losses import weighted_quantile


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
