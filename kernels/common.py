"""Scalar math shared by every backend: criteria, split gain and the hash RNG.

Everything here is a plain ``@njit`` function of scalars and 1-D arrays so that
the CPU kernels and the CUDA kernels call the very same formulas, which is what
makes both backends choose the same splits bit for bit.

Histogram slots
---------------
A node's statistics are int64 fixed-point sums in ``n_slots`` slots; the last
slot is always the number of (distinct) rows. The statistic slots before it:

=====================  =====================================================
criterion              statistic slots
=====================  =====================================================
gini, entropy,         one per class: weighted class count ``w``
misclassification
squared_error          ``w``, ``w*y``, ``w*y**2``
poisson                ``w``, ``w*y``, ``w*y*log(y)``
newton                 ``g``, ``h`` (gradient, hessian; for boosting)
=====================  =====================================================

Split gain
----------
Every criterion is written as a node *cost* ``W * impurity``. The gain of a
split is ``cost(parent) - cost(left) - cost(right)``, which is scikit-learn's
weighted impurity decrease times the root weight (Breiman et al. 1984, ch. 4).
Terms of the cost that are linear in the statistics cancel exactly in the
gain, so the kernels evaluate only the non-linear *proxy* part
(``proxy_cost``), as scikit-learn's ``proxy_impurity_improvement`` does.
"""

import math

import numpy as np
from numba import njit

GINI = 0
ENTROPY = 1
MISCLASSIFICATION = 2
SQUARED_ERROR = 3
POISSON = 4
NEWTON = 5

# Which statistic a node's total comes from for each side of a split.
PARENT = 0
LEFT = 1
RIGHT = 2

INV_LOG2 = 1.0 / math.log(2.0)


@njit(cache=True, inline="always")
def slot_value(parent, left, side, slot, inv_scales):
    """Float value of ``slot`` of the parent, the left child or the right child.

    The right child is ``parent - left`` in int64 before the conversion, so it
    is exact.
    """
    if side == PARENT:
        fixed = parent[slot]
    elif side == LEFT:
        fixed = left[slot]
    else:
        fixed = parent[slot] - left[slot]
    return fixed * inv_scales[slot]


@njit(cache=True)
def node_weight(criterion, parent, left, side, n_stat_slots, inv_scales):
    """Total sample weight (hessian for ``newton``) of one node."""
    if criterion <= MISCLASSIFICATION:
        total = 0.0
        for slot in range(n_stat_slots):
            total += slot_value(parent, left, side, slot, inv_scales)
        return total
    if criterion == NEWTON:
        return slot_value(parent, left, side, 1, inv_scales)
    return slot_value(parent, left, side, 0, inv_scales)


@njit(cache=True)
def proxy_cost(criterion, parent, left, side, weight, n_stat_slots, inv_scales, l2_regularization):
    """Non-linear part of ``W * impurity`` of one node (see the module docstring).

    ``weight`` is the node's ``node_weight``, passed in because the callers
    already have it. Returns ``inf`` where the node cannot be a child
    (Poisson with a zero sum of y).
    """
    if criterion == GINI:
        # W * (1 - sum p_k^2) = W - sum c_k^2 / W
        squares = 0.0
        for slot in range(n_stat_slots):
            count = slot_value(parent, left, side, slot, inv_scales)
            squares += count * count
        return -squares / weight
    if criterion == ENTROPY:
        # W * H = W log2 W - sum c_k log2 c_k
        cost = weight * math.log(weight)
        for slot in range(n_stat_slots):
            count = slot_value(parent, left, side, slot, inv_scales)
            if count > 0.0:
                cost -= count * math.log(count)
        return cost * INV_LOG2
    if criterion == MISCLASSIFICATION:
        # W * (1 - max p_k) = W - max c_k
        largest = 0.0
        for slot in range(n_stat_slots):
            largest = max(largest, slot_value(parent, left, side, slot, inv_scales))
        return -largest
    if criterion == SQUARED_ERROR:
        # sum w y^2 - (sum w y)^2 / W
        sum_wy = slot_value(parent, left, side, 1, inv_scales)
        return -sum_wy * sum_wy / weight
    if criterion == POISSON:
        # half Poisson deviance: sum w y log y - (sum w y) log(mean y)
        sum_wy = slot_value(parent, left, side, 1, inv_scales)
        if sum_wy <= 0.0:
            return math.inf
        return -sum_wy * math.log(sum_wy / weight)
    # NEWTON: -G^2 / (H + lambda) (Chen & Guestrin 2016, eq. 6, without the 1/2)
    sum_gradients = slot_value(parent, left, side, 0, inv_scales)
    return -sum_gradients * sum_gradients / (weight + l2_regularization)


@njit(cache=True)
def split_gain(
    criterion, parent, left, parent_cost, left_weight, right_weight, n_stat_slots, inv_scales, l2_regularization
):
    """``cost(parent) - cost(left) - cost(right)`` for fixed-point sums.

    Parameters
    ----------
    criterion : int
        One of the criterion constants of this module.
    parent, left : ndarray of shape (n_slots,), dtype int64
        Fixed-point sums of the node and of its left child.
    parent_cost : float
        ``proxy_cost`` of the parent (the same for every candidate of a node).
    left_weight, right_weight : float
        ``node_weight`` of both children.
    n_stat_slots : int
        Number of statistic slots (``n_slots - 1``).
    inv_scales : ndarray of shape (n_slots,), dtype float64
        ``1 / scale`` per slot, turning fixed-point sums back into floats.
    """
    return (
        parent_cost
        - proxy_cost(criterion, parent, left, LEFT, left_weight, n_stat_slots, inv_scales, l2_regularization)
        - proxy_cost(criterion, parent, left, RIGHT, right_weight, n_stat_slots, inv_scales, l2_regularization)
    )


# --- counter-based RNG --------------------------------------------------------
# splitmix64's finaliser (Steele, Lea & Flood 2014) applied to a counter: a
# stateless hash of (seed, purpose, a, b), so that any draw can be made in any
# order, on any device, and gives the same number.

PURPOSE_FEATURES = 1
PURPOSE_BOOTSTRAP = 2
PURPOSE_THRESHOLD = 3
PURPOSE_BINNING = 4

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def _mix64(z):
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def hash_uint64(seed, purpose, a, b):
    """A 64-bit hash of four non-negative integers."""
    h = _mix64(np.uint64(seed) + _GOLDEN)
    h = _mix64(h ^ (np.uint64(purpose) * _GOLDEN))
    h = _mix64(h ^ np.uint64(a))
    return _mix64(h ^ (np.uint64(b) + _GOLDEN))


@njit(cache=True)
def hash_uniform(seed, purpose, a, b):
    """A float64 in [0, 1) from the top 53 bits of ``hash_uint64``."""
    return float(hash_uint64(seed, purpose, a, b) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def node_impurity(criterion, totals, n_stat_slots, inv_scales, l2_regularization):
    """Impurity of one node from its fixed-point totals: ``cost / W``.

    ``cost`` is the proxy cost plus the terms linear in the statistics that
    ``proxy_cost`` leaves out (see the module docstring).
    """
    weight = node_weight(criterion, totals, totals, PARENT, n_stat_slots, inv_scales)
    if weight <= 0.0:
        return 0.0
    linear = 0.0
    if criterion == GINI or criterion == MISCLASSIFICATION:
        linear = weight
    elif criterion == SQUARED_ERROR or criterion == POISSON:
        linear = slot_value(totals, totals, PARENT, 2, inv_scales)
    proxy = proxy_cost(criterion, totals, totals, PARENT, weight, n_stat_slots, inv_scales, l2_regularization)
    # Rounding can leave -1e-17 for a pure node; impurity is never negative.
    return max((linear + proxy) / weight, 0.0)
