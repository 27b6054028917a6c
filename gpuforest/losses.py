"""Boosting losses: baseline, gradients and hessians of each row, link to predictions.

Every loss works on raw scores of shape (n_samples, n_trees_per_iteration)
with the array library ``xp`` of the backend (numpy or CuPy), so gradients
and hessians are computed where the rows live. Formulas follow scikit-learn's
``sklearn._loss`` (half squared error, binomial and multinomial log loss).
"""

import numpy as np


class HalfSquaredError:
    """``(y - raw)^2 / 2``: gradient ``raw - y``, hessian 1."""

    n_trees_per_iteration = 1

    def baseline(self, y, sample_weight):
        """Optimal constant raw score, shape (1,)."""
        return np.array([np.average(y, weights=sample_weight)])

    def gradients(self, xp, y, raw, sample_weight):
        """Weighted gradients and hessians, each of shape (n_samples, 1)."""
        return (sample_weight * (raw[:, 0] - y))[:, None], xp.broadcast_to(sample_weight[:, None], raw.shape)


class HalfBinomialLoss:
    """Binary log loss on the logit: gradient ``p - y``, hessian ``p (1 - p)``."""

    n_trees_per_iteration = 1

    def baseline(self, y, sample_weight):
        p = np.clip(np.average(y, weights=sample_weight), 1e-15, 1 - 1e-15)
        return np.array([np.log(p / (1 - p))])

    def gradients(self, xp, y, raw, sample_weight):
        p = 1.0 / (1.0 + xp.exp(-raw[:, 0]))
        return (sample_weight * (p - y))[:, None], (sample_weight * p * (1.0 - p))[:, None]

    def proba(self, xp, raw):
        p = 1.0 / (1.0 + xp.exp(-raw[:, 0]))
        return xp.stack([1.0 - p, p], axis=1)


class HalfMultinomialLoss:
    """Softmax log loss, one raw score per class: gradient ``p_k - y_k``, hessian ``p_k (1 - p_k)``."""

    def __init__(self, n_classes):
        self.n_trees_per_iteration = n_classes

    def baseline(self, y, sample_weight):
        prior = np.bincount(y, weights=sample_weight, minlength=self.n_trees_per_iteration) / sample_weight.sum()
        log_prior = np.log(np.clip(prior, 1e-15, 1.0))
        return log_prior - log_prior.mean()

    def gradients(self, xp, y, raw, sample_weight):
        p = self.proba(xp, raw)
        one_hot = xp.zeros_like(p)
        one_hot[xp.arange(y.shape[0]), y] = 1.0
        return sample_weight[:, None] * (p - one_hot), sample_weight[:, None] * p * (1.0 - p)

    def proba(self, xp, raw):
        shifted = xp.exp(raw - raw.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)
