"""Gradients and hessians of the boosting losses, one row per iteration.

The losses of one raw score per row run in a loop compiled for each loss (the
loss a constant, ``portable_exp`` inlined), which LLVM vectorizes; the
multinomial loss runs ``common.row_gradients`` per row (``portable_exp`` inlined too).
"""

from numba import njit, prange

from ..common import LOSS_MULTINOMIAL, inlined_portable_exp, row_gradients_with, score_gradient_with

_score_gradient = score_gradient_with(inlined_portable_exp)
_row_gradients = row_gradients_with(inlined_portable_exp)


def _single_score_loop(loss):
    """The loop over rows of ``loss``, a constant of the compiled code."""

    @njit(parallel=True, cache=True)
    def single_score_gradients(parameter, y, raw, sample_weight, out_gradients, out_hessians):
        for row in prange(y.shape[0]):
            gradient, hessian = _score_gradient(loss, parameter, y[row], raw[row, 0])
            out_gradients[row, 0] = sample_weight[row] * gradient
            out_hessians[row, 0] = sample_weight[row] * hessian

    return single_score_gradients


_SINGLE_SCORE_LOOPS = [_single_score_loop(loss) for loss in range(LOSS_MULTINOMIAL)]


@njit(parallel=True, cache=True)
def _multinomial_gradients(y, raw, sample_weight, out_gradients, out_hessians):
    for row in prange(y.shape[0]):
        _row_gradients(LOSS_MULTINOMIAL, 0.0, y[row], raw[row], sample_weight[row], out_gradients[row], out_hessians[row])


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
    if loss == LOSS_MULTINOMIAL:
        _multinomial_gradients(y, raw, sample_weight, out_gradients, out_hessians)
    else:
        _SINGLE_SCORE_LOOPS[loss](parameter, y, raw, sample_weight, out_gradients, out_hessians)
