"""Gradients and hessians of the boosting losses, one row per iteration."""

from numba import njit, prange

from ..common import row_gradients


@njit(parallel=True, cache=True)
def loss_gradients(loss, parameter, y, raw, sample_weight, out_gradients, out_hessians):
    """Weighted gradient and hessian of every row at its raw scores.

    Parameters
    ----------
    loss : int
        A ``common.LOSS_*`` constant.
    parameter : float
        Huber's delta, the quantile's alpha; unused by the other losses.
    y : ndarray of shape (n_samples,), dtype float64
        Targets (class indices for the multinomial loss).
    raw : ndarray of shape (n_samples, n_scores), dtype float64
    sample_weight : ndarray of shape (n_samples,), dtype float64
    out_gradients, out_hessians : ndarray of shape (n_samples, n_scores), dtype float64
    """
    for row in prange(y.shape[0]):
        row_gradients(loss, parameter, y[row], raw[row], sample_weight[row], out_gradients[row], out_hessians[row])
