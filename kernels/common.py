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

Several outputs
---------------
The kernels take a criterion of ``n_outputs > 1`` outputs (multi-output y, as scikit-learn's trees)
as the pair ``(base, n_outputs)`` (``multi_output_criterion``), one output's as its base id: the
type selects the code, so that single-output kernels compile exactly as without outputs. The slots: squared error ``w``,
``w*y_1 .. w*y_K``, ``sum_k w*y_k**2`` (Poisson ``sum_k w*y_k*log(y_k)``); classification one
block of ``n_stat_slots / n_outputs`` class slots per output (``offset_k + class``, padded to the
largest number of classes; misclassification takes one output). The impurity is the mean over the
outputs of each output's impurity, as scikit-learn's ``_criterion.pyx`` (``node_impurity``). The scans
divide by nothing more than one output does: ``proxy_cost`` and the gain are the outputs' *summed*
(``n_outputs`` times the mean's, the same best split; the grower divides the gain by ``n_outputs``), and a
classification node's ``node_weight`` sums every output's block, ``T = n_outputs * W`` (the grower scales
``min_weight_leaf`` by as much), so gini's summed cost is ``T - n_outputs * sum c^2 / T`` and entropy's
``T log2 T - sum c log2 c`` less the linear ``T log2 n_outputs``.

Newton regularization
---------------------
``regularization = (l2, l1)`` (a float64 pair; every other criterion ignores
it) regularizes the ``newton`` leaf values and costs as XGBoost's ``lambda``
and ``alpha`` (LightGBM's ``lambda_l2`` and ``lambda_l1``): with the
soft-thresholded gradient sum ``T(G) = sign(G) max(|G| - l1, 0)``
(``threshold_l1``), a node costs ``-T(G)^2 / (H + l2)`` and its leaf value is
``-T(G) / (H + l2)``. Chen & Guestrin (2016, eqs. 5-6) give the ``l2`` form;
the ``l1`` term is XGBoost's ``ThresholdL1`` in ``CalcWeight`` / ``CalcGain``
(src/tree/param.h), and LightGBM's ``ThresholdL1``
(src/treelearner/feature_histogram.hpp).

Split gain
----------
Every criterion is written as a node *cost* ``W * impurity``. The gain of a
split is ``cost(parent) - cost(left) - cost(right)``, which is scikit-learn's
weighted impurity decrease times the root weight (Breiman et al. 1984, ch. 4).
Terms of the cost that are linear in the statistics cancel exactly in the
gain, so the kernels evaluate only the non-linear *proxy* part
(``proxy_cost``), as scikit-learn's ``proxy_impurity_improvement`` does.

Random thresholds
-----------------
Extra-trees splits (Geurts, Ernst & Wehenkel 2006; scikit-learn's
``splitter="random"``) keep one candidate threshold per (node, feature): with
``lo`` and ``hi`` the lowest and highest occupied non-missing bins of the node
in the feature and ``u`` the node's uniform draw for the feature
(``PURPOSE_THRESHOLD``), ``random_threshold_value_bin`` draws a threshold
uniformly between the node's lowest and highest values, as scikit-learn does
(not uniformly over bins), read from the bins' values ``v`` (the bin mapper's
``bin_values``): ``t = (1 - u) v[lo] + u v[hi]``, and ``b`` is the highest bin
in ``[lo, hi)`` with ``v[b] <= t``. The candidate is the highest occupied bin
``<= b`` (the rows with bin ``<= b`` go left). ``hi == lo`` gives no split. The
candidate is then judged by ``scan_threshold`` like any other. A categorical
feature's random subset is drawn over its codes (``random_threshold_bin``).
"""

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from ..tree import CATEGORICAL, MAX_CATEGORIES, MULTIWAY, NUMERIC

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


def multi_output_criterion(criterion, n_outputs):
    """The kernel criterion of ``criterion`` (a base id) over ``n_outputs`` outputs: the id itself for one
    output, else the pair ``(criterion, n_outputs)``, whose type selects the several outputs' code when
    kernels compile (``base_criterion``, ``criterion_outputs``; see "Several outputs"), so that
    single-output kernels compile without it."""
    return criterion if n_outputs == 1 else (criterion, n_outputs)


def base_criterion(criterion):
    """The base criterion (``GINI`` .. ``NEWTON``) of a kernel criterion (``multi_output_criterion``)."""
    return criterion[0] if isinstance(criterion, tuple) else criterion


def criterion_outputs(criterion):
    """The number of outputs of a kernel criterion (``multi_output_criterion``)."""
    return criterion[1] if isinstance(criterion, tuple) else 1


@overload(base_criterion, target="generic", inline="always")
def _base_criterion_of(criterion):
    if isinstance(criterion, types.BaseTuple):
        return lambda criterion: criterion[0]
    return lambda criterion: criterion


@overload(criterion_outputs, target="generic", inline="always")
def _criterion_outputs_of(criterion):
    if isinstance(criterion, types.BaseTuple):
        return lambda criterion: criterion[1]
    return lambda criterion: 1


@njit(cache=True, inline="always")
def mean_over_outputs(cost, n_outputs):
    """``cost / n_outputs``, no division with one output (single-output fits compute what they did before)."""
    if n_outputs == 1:
        return cost
    return cost / n_outputs


@njit(cache=True, inline="always")
def node_weight(criterion, parent, left, side, n_stat_slots, inv_scales):
    """Total sample weight (hessian for ``newton``) of one node; with several class outputs, the sum of every
    output's: ``n_outputs`` times the weight (see "Several outputs")."""
    kind = base_criterion(criterion)
    if kind <= MISCLASSIFICATION:
        total = 0.0
        for slot in range(n_stat_slots):
            total += slot_value(parent, left, side, slot, inv_scales)
        return total
    if kind == NEWTON:
        return slot_value(parent, left, side, 1, inv_scales)
    return slot_value(parent, left, side, 0, inv_scales)


@njit(cache=True, inline="always")
def threshold_l1(sum_gradients, l1):
    """``sign(G) * max(|G| - l1, 0)``: the gradient sum shrunk by L1 (XGBoost's ``ThresholdL1``).

    Exactly ``G`` when ``l1 == 0``. Written without branches (at most one of the two terms
    is nonzero): the sign of ``G`` is a coin toss in a split scan, a branch on it mispredicted.
    """
    return max(sum_gradients - l1, 0.0) + min(sum_gradients + l1, 0.0)


@njit(cache=True, inline="always")
def proxy_cost(criterion, parent, left, side, weight, n_stat_slots, inv_scales, regularization):
    """Non-linear part of ``W * impurity`` of one node (see the module docstring).

    ``weight`` is the node's ``node_weight``, passed in because the callers
    already have it; ``regularization`` is the ``(l2, l1)`` pair of
    ``newton`` (a 2-tuple of float64). Returns ``inf`` where the node cannot be
    a child (Poisson with a zero sum of y).
    """
    kind = base_criterion(criterion)
    n_outputs = criterion_outputs(criterion)
    if kind == GINI:
        # W * (1 - sum p_k^2) = W - sum c_k^2 / W
        squares = 0.0
        for slot in range(n_stat_slots):
            count = slot_value(parent, left, side, slot, inv_scales)
            squares += count * count
        return -(n_outputs * squares) / weight
    if kind == ENTROPY:
        # W * H = W log2 W - sum c_k log2 c_k (summed over the outputs: T log2 T less the linear T log2 K)
        cost = weight * math.log(weight)
        for slot in range(n_stat_slots):
            count = slot_value(parent, left, side, slot, inv_scales)
            if count > 0.0:
                cost -= count * math.log(count)
        return cost * INV_LOG2
    if kind == MISCLASSIFICATION:
        # W * (1 - max p_k) = W - max c_k (one output only: multioutput.py refuses several)
        largest = 0.0
        for slot in range(n_stat_slots):
            largest = max(largest, slot_value(parent, left, side, slot, inv_scales))
        return -largest
    if kind == SQUARED_ERROR:
        # sum w y^2 - (sum w y)^2 / W; the first output outside the loop (single-output scans run no loop)
        sum_wy = slot_value(parent, left, side, 1, inv_scales)
        squares = sum_wy * sum_wy
        for output in range(1, n_outputs):
            sum_wy = slot_value(parent, left, side, 1 + output, inv_scales)
            squares += sum_wy * sum_wy
        return -squares / weight
    if kind == POISSON:
        # half Poisson deviance: sum w y log y - (sum w y) log(mean y)
        cost = 0.0
        for output in range(n_outputs):
            sum_wy = slot_value(parent, left, side, 1 + output, inv_scales)
            if sum_wy <= 0.0:
                return math.inf
            cost -= sum_wy * math.log(sum_wy / weight)
        return cost
    return newton_cost(slot_value(parent, left, side, 0, inv_scales), weight, regularization)


@njit(cache=True, inline="always")
def newton_cost(sum_gradients, sum_hessians, regularization):
    """``proxy_cost`` of ``newton``: -T(G)^2 / (H + l2) (Chen & Guestrin 2016, eq. 6, without the 1/2; T: threshold_l1)."""
    l2, l1 = regularization
    shrunk = threshold_l1(sum_gradients, l1)
    return -shrunk * shrunk / (sum_hessians + l2)


@njit(cache=True, inline="always")
def split_gain(
    criterion, parent, left, parent_cost, left_weight, right_weight, n_stat_slots, inv_scales, regularization
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
    regularization : tuple of 2 float64
        ``(l2, l1)`` of ``newton`` (see the module docstring); ignored by the others.
    """
    return (
        parent_cost
        - proxy_cost(criterion, parent, left, LEFT, left_weight, n_stat_slots, inv_scales, regularization)
        - proxy_cost(criterion, parent, left, RIGHT, right_weight, n_stat_slots, inv_scales, regularization)
    )


# --- split search steps shared by every backend's kernels -----------------------
# Plain functions of scalars and caller-owned 1-D arrays (no allocation), so
# numba.cuda kernels call them as device functions.

NO_SPLIT = -1
# A node's ``hist_rows`` entry in a split search (``find_best_splits``) when its split is searched from its
# rows, and when it is not searched (its outputs: no split); else the row of its histogram.
FROM_ROWS = -1
NOT_SEARCHED = -2
# The monotonic constraint of a feature without one (an int64, as the constraints' array holds them).
NO_CONSTRAINT = np.int64(0)


@njit(cache=True, inline="always")
def bin_of_value(thresholds, n_thresholds, value, missing_bin):
    """Bin of one raw value: binary search over ``thresholds[:n_thresholds]``."""
    if math.isnan(value):
        return missing_bin
    return count_below(thresholds, value, 0, n_thresholds)


@njit(cache=True, inline="always")
def count_below(thresholds, value, low, high):
    """``low`` plus how many of the increasing ``thresholds[low:high]`` are ``< value`` (binary search)."""
    while low < high:
        middle = (low + high) >> 1
        if thresholds[middle] < value:
            low = middle + 1
        else:
            high = middle
    return low


@njit(cache=True, inline="always")
def accumulate_row(target, row, multiplicity, row_slot, row_stats):
    """Add one row's statistics into ``target`` of shape (n_slots,)."""
    first_slot = row_slot[row]
    for stat_idx in range(row_stats.shape[1]):
        target[first_slot + stat_idx] += multiplicity * row_stats[row, stat_idx]
    target[target.shape[0] - 1] += 1


@njit(cache=True, inline="always")
def goes_left(bin_idx, split_bin, missing_left, missing_bin):
    """Whether a row with ``bin_idx`` in the split feature goes to the left child."""
    if bin_idx == missing_bin:
        return missing_left
    return bin_idx <= split_bin


@njit(cache=True)
def parent_cost(criterion, parent, n_stat_slots, inv_scales, regularization):
    """``proxy_cost`` of a node, shared by all its candidate splits."""
    weight = node_weight(criterion, parent, parent, PARENT, n_stat_slots, inv_scales)
    return proxy_cost(criterion, parent, parent, PARENT, weight, n_stat_slots, inv_scales, regularization)


# Called, not inlined in numba's IR: inlined (with its callees) into every scan, it made each split
# kernel compile for about 40 s; LLVM still inlines it where that pays.
@njit(cache=True)
def candidate_gain(
    criterion, parent, left, cost, n_stat_slots, inv_scales, regularization, min_samples_leaf, min_weight_leaf,
    monotonic, lower, upper,
):
    """Gain of sending ``left`` left and the rest right; ``-inf`` if not allowed.

    ``cost`` is the parent's ``parent_cost``. ``monotonic`` (-1, 0, 1) is the split feature's monotonic
    constraint and ``[lower, upper]`` the node's value bounds (``constrained_gain``); ``0, -inf, inf`` cost
    one test.
    """
    count_slot = parent.shape[0] - 1
    if left[count_slot] < min_samples_leaf or parent[count_slot] - left[count_slot] < min_samples_leaf:
        return -math.inf
    left_weight = node_weight(criterion, parent, left, LEFT, n_stat_slots, inv_scales)
    right_weight = node_weight(criterion, parent, left, RIGHT, n_stat_slots, inv_scales)
    if left_weight < min_weight_leaf or right_weight < min_weight_leaf or left_weight <= 0 or right_weight <= 0:
        return -math.inf
    gain = split_gain(
        criterion, parent, left, cost, left_weight, right_weight, n_stat_slots, inv_scales, regularization
    )
    if monotonic == 0 and lower == -math.inf and upper == math.inf:
        return gain
    return constrained_gain(
        criterion, parent, left, gain, left_weight, right_weight, inv_scales, regularization, monotonic, lower, upper
    )


@njit(cache=True, inline="always")
def split_constraint(monotonic_cst, value_bounds, node, feature_idx):
    """``(monotonic, lower, upper)`` of ``candidate_gain`` for (node, feature): from ``monotonic_cst``
    (n_features,) and ``value_bounds`` (n_nodes, 2), or no constraint when they have no rows."""
    if value_bounds.shape[0] == 0:
        return NO_CONSTRAINT, -math.inf, math.inf
    return monotonic_cst[feature_idx], value_bounds[node, 0], value_bounds[node, 1]


@njit(cache=True, inline="always")
def constraint_value(criterion, parent, left, side, weight, inv_scales, regularization):
    """The value of a node that a monotonic constraint orders: the proportion of class 1 (two classes;
    scikit-learn's trees), the mean target, or the Newton step ``-T(G) / (H + l2)``."""
    if base_criterion(criterion) == NEWTON:
        l2, l1 = regularization
        return -threshold_l1(slot_value(parent, left, side, 0, inv_scales), l1) / (weight + l2)
    return slot_value(parent, left, side, 1, inv_scales) / weight


@njit(cache=True)
def constrained_gain(
    criterion, parent, left, gain, left_weight, right_weight, inv_scales, regularization, monotonic, lower, upper
):
    """``candidate_gain`` of a split under a monotonic constraint ``monotonic`` (-1, 0, 1) on its feature and
    the node's value bounds ``[lower, upper]``; ``gain`` is the unconstrained gain, ``-inf`` where not allowed.

    ``newton`` as scikit-learn's HistGradientBoosting (``splitting.pyx``, ``_split_gain``): the children's
    values are clipped into the bounds, the split is refused when they decrease (increase) along an increasing
    (decreasing) constraint, and a node of value ``v`` costs ``T(G) v`` (``-T(G)^2 / (H + l2)`` unclipped),
    the parent at its own clipped value. Other criteria as scikit-learn's trees (``_criterion.pyx``,
    ``_check_monotonicity``): a split on a constrained feature is refused when a child's value is outside the
    bounds or the values violate the constraint; the gain is unchanged.
    """
    left_value = constraint_value(criterion, parent, left, LEFT, left_weight, inv_scales, regularization)
    right_value = constraint_value(criterion, parent, left, RIGHT, right_weight, inv_scales, regularization)
    if base_criterion(criterion) == NEWTON:
        left_value = min(max(left_value, lower), upper)
        right_value = min(max(right_value, lower), upper)
        if (left_value - right_value) * monotonic > 0:
            return -math.inf
        parent_weight = node_weight(criterion, parent, parent, PARENT, 2, inv_scales)
        parent_value = constraint_value(criterion, parent, parent, PARENT, parent_weight, inv_scales, regularization)
        parent_value = min(max(parent_value, lower), upper)
        l1 = regularization[1]
        return (
            threshold_l1(slot_value(parent, parent, PARENT, 0, inv_scales), l1) * parent_value
            - threshold_l1(slot_value(parent, left, LEFT, 0, inv_scales), l1) * left_value
            - threshold_l1(slot_value(parent, left, RIGHT, 0, inv_scales), l1) * right_value
        )
    within = lower <= min(left_value, right_value) and max(left_value, right_value) <= upper
    if monotonic != 0 and (not within or (left_value - right_value) * monotonic > 0):
        return -math.inf
    return gain


@njit(cache=True, inline="always")
def scan_threshold(
    bin_idx, parent, cost, left, missing, left_with_missing, has_missing, best_gain, best_bin, best_missing_left,
    criterion, n_stat_slots, inv_scales, regularization, min_samples_leaf, min_weight_leaf, monotonic, lower, upper,
):
    """Consider threshold ``bin_idx`` (``left`` = non-missing rows with bin <= it); ``monotonic``, ``lower``
    and ``upper``: the constraints of ``candidate_gain``.

    Returns the updated ``(best_gain, best_bin, best_missing_left)``.
    """
    if left[left.shape[0] - 1] == 0:
        return best_gain, best_bin, best_missing_left
    gain = candidate_gain(
        criterion, parent, left, cost, n_stat_slots, inv_scales, regularization, min_samples_leaf,
        min_weight_leaf, monotonic, lower, upper,
    )
    if gain > best_gain:
        best_gain, best_bin, best_missing_left = gain, bin_idx, False
    if has_missing:
        for slot in range(left.shape[0]):
            left_with_missing[slot] = left[slot] + missing[slot]
        gain = candidate_gain(
            criterion, parent, left_with_missing, cost, n_stat_slots, inv_scales, regularization,
            min_samples_leaf, min_weight_leaf, monotonic, lower, upper,
        )
        if gain > best_gain:
            best_gain, best_bin, best_missing_left = gain, bin_idx, True
    return best_gain, best_bin, best_missing_left


@njit(cache=True, inline="always")
def random_threshold_bin(lo, hi, draw):
    """Bin ``b`` in ``[lo, hi)`` drawn by ``draw`` in [0, 1): ``lo + min(int(draw * (hi - lo)), hi - lo - 1)``.

    ``lo < hi`` are the lowest and highest occupied non-missing bins of a node
    in a feature; the rows with bin ``<= b`` go left, so both sides hold rows.
    The ``min`` keeps ``b < hi`` where ``draw * (hi - lo)`` rounds up to ``hi - lo``.
    """
    span = hi - lo
    return lo + min(int(draw * span), span - 1)


@njit(cache=True)
def random_threshold_value_bin(bin_values, first, lo, hi, draw):
    """Bin ``b`` in ``[lo, hi)`` of a threshold drawn uniformly by ``draw`` in [0, 1) between the values of bins
    ``lo < hi`` (Geurts, Ernst & Wehenkel 2006, sec. 2.1: uniform in ``[min, max]`` of the node's values).

    ``bin_values[first + b]``, float64: the value of bin ``b`` (``BinMapper.bin_values``; flat on the GPU, where
    a 2-D index costs registers); ``b`` is the highest bin in
    ``[lo, hi)`` whose value is at most ``t = (1 - draw) v[lo] + draw v[hi]`` (a convex combination, so no
    overflow and ``v[lo] <= t``; ``lo`` when rounding puts ``t`` below every value). With one value per bin,
    the rows with bin ``<= b`` are exactly those with a value ``<= t``.
    """
    threshold = (1.0 - draw) * bin_values[first + lo] + draw * bin_values[first + hi]
    drawn = lo
    for bin_idx in range(lo + 1, hi):
        if bin_values[first + bin_idx] <= threshold:
            drawn = bin_idx
    return drawn


@njit(cache=True)
def multiway_gain(
    criterion, parent, feature_hist, n_bins_non_missing, missing_bin, inv_scales, regularization, min_samples_leaf,
    min_weight_leaf,
):
    """Gain of splitting a node into one child per non-missing bin of a feature; ``-inf`` if not allowed.

    ``cost(known) - sum_c cost(child_c)`` with ``cost = W * impurity`` (``proxy_cost``), where
    ``known`` are the node's rows with a value and child ``c`` those in bin ``c``. For
    ``ENTROPY`` this is ``W`` times Quinlan's ``gain(A) = H(node) - sum_c (W_c / W) H(child_c)``
    (1986, section 4); rows with a missing value stay at the node and count as C4.5 counts
    them (Quinlan 1993, ch. 3: the known rows' gain times their share ``W_known / W``, which
    in costs is the known rows' gain). Empty children are allowed (ID3's empty subsets); the
    others need ``min_samples_leaf`` rows and ``min_weight_leaf`` weight, and at least two
    children must hold rows.

    Parameters
    ----------
    criterion : int
    parent : ndarray of shape (n_slots,), dtype int64
        The node's totals.
    feature_hist : ndarray of shape (n_bins, n_slots), dtype int64
        The node's histogram of the feature.
    n_bins_non_missing, missing_bin : int
    inv_scales, regularization, min_samples_leaf, min_weight_leaf
        As in ``candidate_gain``.
    """
    n_stat_slots = parent.shape[0] - 1
    children_cost = 0.0
    n_children = 0
    for bin_idx in range(n_bins_non_missing):
        child = feature_hist[bin_idx]
        if child[n_stat_slots] == 0:
            continue
        weight = node_weight(criterion, child, child, PARENT, n_stat_slots, inv_scales)
        if child[n_stat_slots] < min_samples_leaf or weight < min_weight_leaf or weight <= 0:
            return -math.inf
        children_cost += proxy_cost(criterion, child, child, PARENT, weight, n_stat_slots, inv_scales, regularization)
        n_children += 1
    if n_children < 2:
        return -math.inf
    missing = feature_hist[missing_bin]
    known_weight = node_weight(criterion, parent, missing, RIGHT, n_stat_slots, inv_scales)
    known_cost = proxy_cost(criterion, parent, missing, RIGHT, known_weight, n_stat_slots, inv_scales, regularization)
    return known_cost - children_cost


# C4.5's largest least number of cases on each side of a threshold (release 8's MINSPLIT bound, J48's 25).
C45_MAX_MIN_SPLIT = 25.0
NO_REGULARIZATION = (0.0, 0.0)


@njit(cache=True, inline="always")
def _weight_bits(weight):
    """``w log2 w`` (0 for ``w <= 0``): a term of an entropy in weighted counts."""
    if weight <= 0.0:
        return 0.0
    return weight * math.log(weight) * INV_LOG2


@njit(cache=True, inline="always")
def _gain_ratio(gain, weight, branch_bits, unknown_weight):
    """``gain / split_info``, C4.5's split information over the branches and the unknown cases: ``split_info =
    (W log2 W - sum_b w_b log2 w_b - w_u log2 w_u) / W`` (Quinlan 1993, ch. 2-3); 0 for a trivial split."""
    split_bits = _weight_bits(weight) - branch_bits - _weight_bits(unknown_weight)
    if split_bits <= 1e-12 * weight:
        return 0.0
    return gain * weight / split_bits


@njit(cache=True)
def c45_split_gain(totals, feature_hist, categorical, n_bins_non_missing, missing_bin, inv_scales, min_objects, work):
    """C4.5's information gain and gain ratio of splitting one node on one feature (Quinlan 1993, ch. 2-3; 1996).

    Costs are ``W H`` in bits (``proxy_cost`` of ``ENTROPY``, weighted class
    counts in the statistic slots). With ``W`` the node's weight and ``known``
    its cases with a value, ``gain = (cost(known) - sum_b cost(b)) / W`` (the
    known cases' gain times their share ``W_known / W``, ch. 3).

    - categorical: one branch per code (``multiway_gain``'s); valid when at
      least two branches hold ``min_objects`` (J48's ``-M``) weight;
    - numeric: a binary split at the threshold of largest gain among the
      boundaries between occupied bins with at least ``min_split`` weight on
      each side, ``min_split = 0.1 W_known / n_classes`` within
      ``[min_objects, 25]``; the gain less ``log2(n_candidates) / W``, release 8's
      penalty (Quinlan 1996, "Improved use of continuous attributes in C4.5",
      JAIR 4, section 3; J48's ``C45Split``), must stay positive.

    ``gain_ratio = gain / split_info`` (``_gain_ratio``), the split information
    counting the unknown cases as one more branch, as J48's ``GainRatioSplitCrit``.

    Parameters
    ----------
    totals : ndarray of shape (n_slots,), dtype int64
    feature_hist : ndarray of shape (n_bins, n_slots), dtype int64
    categorical : bool
    n_bins_non_missing, missing_bin : int
    inv_scales : ndarray of shape (n_slots,), dtype float64
    min_objects : float
    work : ndarray of shape (2, n_slots), dtype int64
        Scratch: the known cases' totals and a threshold's left totals.

    Returns
    -------
    gain : float
        ``-inf`` where the feature has no valid split.
    gain_ratio : float
    bin : int
        A numeric split's threshold bin (its left side: bins ``<= bin``), else ``NO_SPLIT``.
    """
    n_slots = totals.shape[0]
    n_stat_slots = n_slots - 1
    known, left = work[0], work[1]
    for slot in range(n_slots):
        known[slot] = totals[slot] - feature_hist[missing_bin, slot]
        left[slot] = 0
    weight = node_weight(ENTROPY, totals, totals, PARENT, n_stat_slots, inv_scales)
    known_weight = node_weight(ENTROPY, known, known, PARENT, n_stat_slots, inv_scales)
    if known[n_stat_slots] == 0 or known_weight <= 0.0:
        return -math.inf, 0.0, NO_SPLIT
    unknown_weight = weight - known_weight
    known_cost = proxy_cost(ENTROPY, known, known, PARENT, known_weight, n_stat_slots, inv_scales, NO_REGULARIZATION)
    if categorical:
        children_cost, branch_bits, n_large = 0.0, 0.0, 0
        for bin_idx in range(n_bins_non_missing):
            child = feature_hist[bin_idx]
            if child[n_stat_slots] == 0:
                continue
            child_weight = node_weight(ENTROPY, child, child, PARENT, n_stat_slots, inv_scales)
            if child_weight >= min_objects:
                n_large += 1
            children_cost += proxy_cost(
                ENTROPY, child, child, PARENT, child_weight, n_stat_slots, inv_scales, NO_REGULARIZATION
            )
            branch_bits += _weight_bits(child_weight)
        if n_large < 2:
            return -math.inf, 0.0, NO_SPLIT
        gain = (known_cost - children_cost) / weight
        return gain, _gain_ratio(gain, weight, branch_bits, unknown_weight), NO_SPLIT
    min_split = min(max(0.1 * known_weight / n_stat_slots, min_objects), C45_MAX_MIN_SPLIT)
    if known_weight < 2.0 * min_split:
        return -math.inf, 0.0, NO_SPLIT
    best_decrease, best_bin, n_candidates = 0.0, NO_SPLIT, 0
    for bin_idx in range(n_bins_non_missing):
        if feature_hist[bin_idx, n_stat_slots] == 0:
            continue
        for slot in range(n_slots):
            left[slot] += feature_hist[bin_idx, slot]
        if left[n_stat_slots] == known[n_stat_slots]:
            break
        # node_weight and proxy_cost of both sides, their loops fused (the same sums in the same order):
        # fewer registers in the GPU kernel.
        left_weight, right_weight = 0.0, 0.0
        for slot in range(n_stat_slots):
            left_weight += left[slot] * inv_scales[slot]
            right_weight += (known[slot] - left[slot]) * inv_scales[slot]
        if left_weight < min_split or right_weight < min_split:
            continue
        n_candidates += 1
        left_cost, right_cost = left_weight * math.log(left_weight), right_weight * math.log(right_weight)
        for slot in range(n_stat_slots):
            left_count, right_count = left[slot] * inv_scales[slot], (known[slot] - left[slot]) * inv_scales[slot]
            if left_count > 0.0:
                left_cost -= left_count * math.log(left_count)
            if right_count > 0.0:
                right_cost -= right_count * math.log(right_count)
        decrease = known_cost - left_cost * INV_LOG2 - right_cost * INV_LOG2
        if decrease > best_decrease:
            best_decrease, best_bin = decrease, bin_idx
    if n_candidates == 0 or best_bin == NO_SPLIT:
        return -math.inf, 0.0, NO_SPLIT
    # The weights again, after the scan, rather than kept through it: fewer registers in the GPU kernel.
    weight = node_weight(ENTROPY, totals, totals, PARENT, n_stat_slots, inv_scales)
    gain = (best_decrease - math.log(n_candidates) * INV_LOG2) / weight
    if gain <= 0.0:
        return -math.inf, 0.0, NO_SPLIT
    for slot in range(n_slots):
        left[slot] = 0
    for bin_idx in range(best_bin + 1):
        for slot in range(n_slots):
            left[slot] += feature_hist[bin_idx, slot]
    known_weight = node_weight(ENTROPY, known, known, PARENT, n_stat_slots, inv_scales)
    best_left_weight = node_weight(ENTROPY, known, left, LEFT, n_stat_slots, inv_scales)
    branch_bits = _weight_bits(best_left_weight) + _weight_bits(known_weight - best_left_weight)
    return gain, _gain_ratio(gain, weight, branch_bits, weight - known_weight), best_bin


@njit(cache=True)
def pick_best_feature(gains, bins, node):
    """Lowest feature with the largest gain for one node, or ``NO_SPLIT``."""
    best_feature = NO_SPLIT
    best_gain = -math.inf
    for feature_idx in range(gains.shape[1]):
        if bins[node, feature_idx] != NO_SPLIT and gains[node, feature_idx] > best_gain:
            best_gain = gains[node, feature_idx]
            best_feature = feature_idx
    return best_feature, best_gain


@njit(cache=True, inline="always")
def record_best_feature(
    gains, bins, node, categorical_features, out_gain, out_feature, out_bin, out_missing_left, out_left_totals,
    out_next_bin, out_categorical, out_category_bitset,
):
    """Write ``node``'s best feature (``pick_best_feature``), gain and bin, and the defaults of its
    other outputs. Returns ``(feature, category_position)``: the feature, ``NO_SPLIT`` if none (the
    split's other outputs are then final), and its position in ``categorical_features``, -1 for a
    numeric one (whose ``bin`` is the threshold bin; a categorical split's is ``NO_SPLIT``)."""
    best_feature, best_gain = pick_best_feature(gains, bins, node)
    out_feature[node] = best_feature
    out_gain[node] = best_gain
    for slot in range(out_left_totals.shape[1]):
        out_left_totals[node, slot] = 0
    for word in range(out_category_bitset.shape[1]):
        out_category_bitset[node, word] = 0
    out_next_bin[node] = NO_SPLIT
    position = -1 if best_feature == NO_SPLIT else category_position(categorical_features, best_feature)
    out_categorical[node] = position >= 0
    if best_feature == NO_SPLIT or position >= 0:
        out_bin[node] = NO_SPLIT
    else:
        out_bin[node] = bins[node, best_feature]
    if best_feature == NO_SPLIT:
        out_missing_left[node] = False
    return best_feature, position


@njit(cache=True)
def resolve_missing_left(chosen_missing_left, missing, left_totals, totals):
    """Direction of missing values; adds them to ``left_totals`` when they go left.

    A node without missing values in the split feature sends future missing
    values to the child with more rows (scikit-learn's rule; ties go left).
    """
    count_slot = totals.shape[0] - 1
    if missing[count_slot] == 0:
        return 2 * left_totals[count_slot] >= totals[count_slot]
    if chosen_missing_left:
        for slot in range(left_totals.shape[0]):
            left_totals[slot] += missing[slot]
    return chosen_missing_left


@njit(cache=True)
def finish_split_from_histogram(feature_hist, best_bin, n_bins_non_missing, missing_bin, chosen_missing_left,
                                totals, left_totals):
    """Left totals, next occupied bin and missing direction of a node's chosen split.

    ``feature_hist`` (n_bins, n_slots) is the node's histogram of the chosen
    feature; ``left_totals`` (n_slots,) is filled. Returns
    ``(missing_left, next_bin)`` (``next_bin == NO_SPLIT`` when no occupied
    bin lies above ``best_bin``).
    """
    n_slots = totals.shape[0]
    for slot in range(n_slots):
        left_totals[slot] = 0
    for bin_idx in range(best_bin + 1):
        for slot in range(n_slots):
            left_totals[slot] += feature_hist[bin_idx, slot]
    next_bin = NO_SPLIT
    for bin_idx in range(best_bin + 1, n_bins_non_missing):
        if feature_hist[bin_idx, n_slots - 1] > 0:
            next_bin = bin_idx
            break
    missing_left = resolve_missing_left(chosen_missing_left, feature_hist[missing_bin], left_totals, totals)
    return missing_left, next_bin


# --- categorical splits ----------------------------------------------------------------
# A categorical feature's bins are its category codes. A split sends a subset of the node's
# occupied categories (those with rows) left, the rest right; the candidates are scanned as
# ``scan_threshold`` scans numeric ones (missing values right, then left, for each), with the
# left sums of the subset in place of a threshold's. Which subsets are candidates:
#
# - the prefixes of the occupied categories ordered by ``category_order_key`` (ties: lower code
#   first), each of 1 to all of them: the ordering of Fisher (1958) and Breiman et al. (1984,
#   Theorem 4.5; section 9.4 for regression), under which a sorted scan finds the best subset, for two classes
#   (the proportion of class 1), regression (the mean target: squared error and Poisson, whose
#   costs are ``W phi(mean)`` with ``phi`` concave) and ``newton`` without regularization (the
#   ratio ``G / H``, LightGBM's ``FindBestThresholdCategorical`` and XGBoost's partition-based
#   splits; with ``l2``/``l1`` the leaf value ``T(G) / (H + l2)``, as XGBoost sorts, a heuristic);
# - with more than two classes: every split once when the node has at most
#   ``MAX_EXHAUSTIVE_CATEGORIES`` occupied categories: the ``2**(m - 1)`` subsets that hold the
#   lowest one (the odd bit masks over the categories in code order, increasing; the others are
#   their mirror images, the same splits), else the prefixes ordered by the
#   proportion of the node's majority class, a heuristic (the ordering theorem holds for two
#   classes only);
# - random thresholds (extra trees): the one prefix of ``random_threshold_bin(1, m, u)``
#   categories in the ordering above (``m >= 2``).
#
# Categories with no rows at a node go with its missing values (``category_bitset``).

# Most occupied categories of a node searched by every subset (multiclass): 32 splits, one per
# thread of the smallest CUDA block (kernels/cuda/splitting.py).
MAX_EXHAUSTIVE_CATEGORIES = 6


@njit(cache=True, inline="always")
def category_position(categorical_features, feature_idx):
    """Position of ``feature_idx`` in the increasing ``categorical_features``, -1 if it is numeric."""
    for position in range(categorical_features.shape[0]):
        if categorical_features[position] == feature_idx:
            return position
    return -1


@njit(cache=True, inline="always")
def has_category(bits, code):
    """Whether bit ``code % 32`` of word ``code // 32`` of ``bits`` (uint32 words) is set."""
    return ((bits[code >> 5] >> (code & 31)) & 1) == 1


@njit(cache=True, inline="always")
def category_goes_left(bin_idx, left_categories, missing_left, missing_bin):
    """Whether a row with ``bin_idx`` in the split feature goes left at a categorical split;
    ``left_categories``: the node's row of ``category_bitset``."""
    if bin_idx == missing_bin:
        return missing_left
    return has_category(left_categories, bin_idx)


@njit(cache=True, inline="always")
def searches_all_subsets(criterion, n_stat_slots, n_categories, draw):
    """Whether a categorical scan tries every subset: more than two classes, at most
    ``MAX_EXHAUSTIVE_CATEGORIES`` occupied categories, best splits (``draw < 0``)."""
    return (
        draw < 0.0 and base_criterion(criterion) <= MISCLASSIFICATION and n_stat_slots > 2
        and n_categories <= MAX_EXHAUSTIVE_CATEGORIES
    )


@njit(cache=True, inline="always")
def category_order_key(criterion, category, parent, n_stat_slots, inv_scales, regularization):
    """Sort key of one category, its histogram row ``category`` (n_slots,) int64 (see above).

    Two classes: the proportion of class 1; more: of the class the ``parent``
    totals have most of (the lowest such class); squared error and Poisson:
    the mean target; ``newton``: ``T(G) / (H + l2)``. 0 where the denominator
    is not positive, so that a key is never NaN.
    """
    if base_criterion(criterion) <= MISCLASSIFICATION:
        target = 1
        if n_stat_slots != 2:
            target = 0
            for slot in range(1, n_stat_slots):
                if parent[slot] * inv_scales[slot] > parent[target] * inv_scales[target]:
                    target = slot
        numerator = category[target] * inv_scales[target]
        denominator = node_weight(criterion, category, category, PARENT, n_stat_slots, inv_scales)
    elif base_criterion(criterion) == NEWTON:
        l2, l1 = regularization
        numerator = threshold_l1(category[0] * inv_scales[0], l1)
        denominator = category[1] * inv_scales[1] + l2
    else:
        numerator = category[1] * inv_scales[1]
        denominator = category[0] * inv_scales[0]
    return numerator / denominator if denominator > 0.0 else 0.0


@njit(cache=True, inline="always")
def category_bitset(category_bits, missing_left, out_bitset):
    """``out_bitset`` (n_words,) uint32: the chosen left categories ``category_bits[0]``, plus, when missing
    values go left, every category without rows at the node (not in ``category_bits[1]``)."""
    for word in range(out_bitset.shape[0]):
        left = category_bits[0, word]
        if missing_left:
            left |= ~category_bits[1, word]
        out_bitset[word] = left


@njit(cache=True)
def finish_category_split(feature_hist, category_bits, n_bins_non_missing, missing_bin, chosen_missing_left, totals,
                          left_totals, out_bitset):
    """Left totals, missing direction and left categories of a node's chosen categorical split.

    ``feature_hist`` (n_bins, n_slots): the node's histogram of the feature;
    ``category_bits`` (2, n_words) uint32: the chosen left categories and the
    occupied ones, from the scan. Fills ``left_totals`` (n_slots,) and
    ``out_bitset`` (n_words,); returns ``missing_left`` (``resolve_missing_left``).
    """
    n_slots = totals.shape[0]
    for slot in range(n_slots):
        left_totals[slot] = 0
    for code in range(n_bins_non_missing):
        if has_category(category_bits[0], code):
            for slot in range(n_slots):
                left_totals[slot] += feature_hist[code, slot]
    missing_left = resolve_missing_left(chosen_missing_left, feature_hist[missing_bin], left_totals, totals)
    category_bitset(category_bits, missing_left, out_bitset)
    return missing_left


@njit(cache=True, inline="always")
def category_code(value):
    """``value`` as a category code, an integer in ``[0, MAX_CATEGORIES)``, or -1 when it is none (NaN too)."""
    code = -1
    if value >= 0 and value < MAX_CATEGORIES:  # False for NaN
        code = int(value)
        if code != value:
            code = -1
    return code


@njit(cache=True, inline="always")
def category_child(value, split_type, missing_go_left, split_value, category_bitset):
    """Child rank (0 = ``children_left``) that a raw ``value`` takes at a ``CATEGORICAL`` or ``MULTIWAY`` split,
    or -1: stop at this ``MULTIWAY`` node.

    A value is a category code when it is an integer in ``[0, MAX_CATEGORIES)``. At a
    ``CATEGORICAL`` split (``split_value``: the row of its bitset) code ``c`` goes left when bit
    ``c % 32`` of word ``c // 32`` is set, anything else (NaN, no code) where missing values
    go. At a ``MULTIWAY`` node (``split_value``: its number of children) code ``c`` takes child
    ``c``; a missing value, no code or a code without a child stops the row there.
    """
    code = category_code(value)
    if split_type == CATEGORICAL:
        if code < 0:
            return 0 if missing_go_left else 1
        word = category_bitset[int(split_value), code >> 5]
        return 0 if (word >> (code & 31)) & 1 else 1
    if code < 0 or code >= split_value:
        return -1
    return code


@njit(cache=True, inline="always")
def route_to_leaf(X, row, offset, split_value, node_info, category_bitset):
    """Node (index within its tree) that raw row ``row`` of ``X`` ends in, in the tree at ``offset``:
    a leaf, or a ``MULTIWAY`` node where the row's value has no child.

    ``node_info = left_child << 32 | feature << 3 | split_type << 1 |
    missing_go_left`` is negative at leaves; ``split_value`` is a numeric
    split's threshold, a categorical split's row of ``category_bitset``, a
    multiway node's number of children (see ``gpuforest.tree.pack_node_info``
    and ``pack_split_values``). Only a categorical split reads a bitset, so
    trees of numeric splits read what they read without categories.
    """
    node = 0
    info = node_info[offset]
    while info >= 0:
        child = split_child(X[row, (info >> 3) & 0x1FFFFFFF], info, split_value[offset + node], category_bitset)
        if child < 0:
            return node
        node = (info >> 32) + child
        info = node_info[offset + node]
    return node


@njit(cache=True, inline="always")
def split_child(value, info, split_value, category_bitset):
    """Child rank (0 = ``children_left``) that a raw ``value`` takes at the split node of ``node_info``
    ``info`` and ``split_value`` (see ``route_to_leaf``), or -1: stop at this ``MULTIWAY`` node."""
    split_type = (info >> 1) & 3
    if split_type == NUMERIC:
        if math.isnan(value):
            left = (info & 1) == 1
        else:
            left = value <= split_value
        return 0 if left else 1
    return category_child(value, split_type, (info & 1) == 1, split_value, category_bitset)


@njit(cache=True, inline="always")
def add_fractional_value(X, row, split_value, node_info, category_bitset, branch_share, value, stack_node,
                         stack_weight, out):
    """Add to ``out`` (n_values,) the value of every leaf raw row ``row`` of ``X`` reaches in one tree (at offset
    0), times the weight it reaches it with: C4.5's classification of a case with unknown values (Quinlan 1993,
    ch. 3). Where the row has a value with a branch, it goes down that branch; where it has none (NaN, or a code
    without a child at a ``MULTIWAY`` node), down every branch, its weight times the branch's ``branch_share``
    (the child's share of its parent's training weight).

    ``value`` (n_nodes, n_values); ``stack_node`` (int64) and ``stack_weight`` (float64), scratch of
    ``1 + depth * (most children - 1)`` entries: the pending (node, weight) pairs, depth first, first child first.
    """
    stack_node[0] = 0
    stack_weight[0] = 1.0
    top = 1
    while top > 0:
        top -= 1
        node = stack_node[top]
        weight = stack_weight[top]
        info = node_info[node]
        if info < 0:
            for k in range(out.shape[0]):
                out[k] += weight * value[node, k]
            continue
        x = X[row, (info >> 3) & 0x1FFFFFFF]
        child = -1
        if not math.isnan(x):
            child = split_child(x, info, split_value[node], category_bitset)
        first_child = info >> 32
        if child >= 0:
            stack_node[top] = first_child + child
            stack_weight[top] = weight
            top += 1
            continue
        n_branches = int(split_value[node]) if ((info >> 1) & 3) == MULTIWAY else 2
        for rank in range(n_branches - 1, -1, -1):
            branch = first_child + rank
            if branch_share[branch] > 0.0:
                stack_node[top] = branch
                stack_weight[top] = weight * branch_share[branch]
                top += 1


@njit(cache=True, inline="always")
def split_value_missing(value, info):
    """Whether a raw ``value`` is missing at the split node of ``node_info`` ``info`` (see ``route_to_leaf``):
    NaN at a ``NUMERIC`` split, anything but a category code (NaN too) at a ``CATEGORICAL`` or ``MULTIWAY`` one."""
    if ((info >> 1) & 3) == NUMERIC:
        return math.isnan(value)
    return category_code(value) < 0


@njit(cache=True, inline="always")
def route_to_leaf_with_surrogates(X, row, split_value, node_info, category_bitset, surrogates):
    """``route_to_leaf`` of one tree (at offset 0) whose ``NUMERIC`` and ``CATEGORICAL`` splits have
    surrogate splits (``gpuforest.surrogates``): a row whose value of the split's feature is missing
    (``split_value_missing``) takes the direction of the first surrogate that sends it somewhere, else
    ``missing_go_left``. ``MULTIWAY`` splits have none: a missing value stops the row there.

    ``surrogates = (feature, split_type, threshold, left_is_le, left_codes, right_codes)``, the
    ``Tree``'s ``surrogate_*`` arrays of shape (n_nodes, max_surrogates[, CATEGORY_WORDS]); a
    node's surrogates are in order, then -1 features. A ``NUMERIC`` surrogate ``k`` sends a row
    with a value ``x`` of its feature left when ``(x <= threshold[node, k]) == left_is_le[node, k]``;
    a ``CATEGORICAL`` one sends code ``c`` left or right when its bit is set in ``left_codes`` or
    ``right_codes`` (a code it did not see, or no code, goes on to the next surrogate).
    """
    feature, split_type, threshold, left_is_le, left_codes, right_codes = surrogates
    node = 0
    info = node_info[0]
    while info >= 0:
        value = X[row, (info >> 3) & 0x1FFFFFFF]
        if ((info >> 1) & 3) != MULTIWAY and split_value_missing(value, info):
            left = (info & 1) == 1
            for k in range(feature.shape[1]):
                if feature[node, k] < 0:
                    break
                surrogate_value = X[row, feature[node, k]]
                if split_type[node, k] == NUMERIC:
                    if not math.isnan(surrogate_value):
                        left = (surrogate_value <= threshold[node, k]) == left_is_le[node, k]
                        break
                else:
                    code = category_code(surrogate_value)
                    if code >= 0 and (left_codes[node, k, code >> 5] >> (code & 31)) & 1:
                        left = True
                        break
                    if code >= 0 and (right_codes[node, k, code >> 5] >> (code & 31)) & 1:
                        left = False
                        break
            child = 0 if left else 1
        else:
            child = split_child(value, info, split_value[node], category_bitset)
            if child < 0:
                return node
        node = (info >> 32) + child
        info = node_info[node]
    return node


@njit(cache=True)
def heap_child(slot, value, threshold, missing_go_right, nan_aware):
    """Child slot (``2 slot`` left, ``2 slot + 1`` right) that ``value`` goes to from heap ``slot``.

    ``slot`` is a uint64; right when ``value > threshold``, or when ``value``
    is NaN and ``missing_go_right``. The NaN test is made only if
    ``nan_aware``, a constant at every call site, so the compiled step has no
    test where it is False (without NaN, ``value > threshold`` alone decides).
    """
    right = value > threshold
    if nan_aware:
        right |= (value != value) & missing_go_right
    return slot + slot + np.uint64(right)


# --- counter-based RNG --------------------------------------------------------
# splitmix64's finaliser (Steele, Lea & Flood 2014) applied to a counter: a
# stateless hash of (seed, purpose, a, b), so that any draw can be made in any
# order, on any device, and gives the same number.

PURPOSE_FEATURES = 1
PURPOSE_BOOTSTRAP = 2
PURPOSE_THRESHOLD = 3
PURPOSE_BINNING = 4
PURPOSE_SUBSAMPLE = 5
PURPOSE_COLUMNS = 6  # features per tree (column subsampling by tree)

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
def node_impurity(criterion, totals, n_stat_slots, inv_scales, regularization):
    """Impurity of one node from its fixed-point totals: ``cost / W``.

    ``cost`` is the proxy cost plus the terms linear in the statistics that
    ``proxy_cost`` leaves out (see the module docstring).
    """
    weight = node_weight(criterion, totals, totals, PARENT, n_stat_slots, inv_scales)
    if weight <= 0.0:
        return 0.0
    linear = 0.0
    kind = base_criterion(criterion)
    n_outputs = criterion_outputs(criterion)
    if kind == GINI or kind == MISCLASSIFICATION:
        linear = weight
    elif kind == ENTROPY and n_outputs > 1:
        linear = -weight * math.log(n_outputs) * INV_LOG2
    elif kind == SQUARED_ERROR or kind == POISSON:
        linear = slot_value(totals, totals, PARENT, n_outputs + 1, inv_scales)
    proxy = proxy_cost(criterion, totals, totals, PARENT, weight, n_stat_slots, inv_scales, regularization)
    if base_criterion(criterion) == NEWTON:
        # -T(G)^2 / (H (H + l2)): no linear terms, negative, and W * impurity
        # differences are the split gains (feature importances).
        return proxy / weight
    # The outputs' summed cost over their summed weight (classes: ``weight`` already sums them) is the mean
    # impurity. Rounding can leave -1e-17 for a pure node; impurity is never negative.
    outputs_weight = weight if kind <= MISCLASSIFICATION else weight * n_outputs
    return max((linear + proxy) / outputs_weight, 0.0)


# IEEE division (an empty node's values are nan) also where it is compiled on its own (the CUDA simulator).
@njit(cache=True, inline="always", error_model="numpy")
def node_values_at(criterion, totals, node, inv_scales, regularization, out_value, out_impurity, out_weight):
    """Value, impurity and weight of node ``node`` of ``totals`` (``kernels.cpu.leaf_values.node_values``), the
    body of both backends' node loops."""
    n_stat_slots = totals.shape[1] - 1
    n_outputs = criterion_outputs(criterion) if base_criterion(criterion) <= MISCLASSIFICATION else 1
    node_totals = totals[node]
    # A classification node_weight sums every output's block of classes: their mean is the weight.
    weight = mean_over_outputs(node_weight(criterion, node_totals, node_totals, PARENT, n_stat_slots, inv_scales), n_outputs)
    out_weight[node] = weight
    out_impurity[node] = node_impurity(criterion, node_totals, n_stat_slots, inv_scales, regularization)
    if base_criterion(criterion) <= MISCLASSIFICATION:
        for slot in range(n_stat_slots):
            out_value[node, slot] = slot_value(node_totals, node_totals, PARENT, slot, inv_scales) / weight
    elif base_criterion(criterion) == NEWTON:
        l2, l1 = regularization
        shrunk = threshold_l1(slot_value(node_totals, node_totals, PARENT, 0, inv_scales), l1)
        out_value[node, 0] = -shrunk / (weight + l2)
    else:
        for output in range(out_value.shape[1]):
            out_value[node, output] = slot_value(node_totals, node_totals, PARENT, 1 + output, inv_scales) / weight


@njit(cache=True)
def bootstrap_row(seed, tree, draw, n_samples):
    """Row picked by bootstrap draw ``draw`` of tree ``tree`` (uniform over ``n_samples``)."""
    row = int(hash_uniform(seed, PURPOSE_BOOTSTRAP, tree, draw) * n_samples)
    return min(row, n_samples - 1)


# --- boosting losses ---------------------------------------------------------------
# Gradient and hessian of each row at its raw scores (the losses of
# scikit-learn's ``sklearn._loss``). ``parameter`` is the loss's own number:
# huber's delta, the quantile's alpha; unused by the others.
LOSS_SQUARED_ERROR = 0
LOSS_ABSOLUTE_ERROR = 1
LOSS_HUBER = 2
LOSS_QUANTILE = 3
LOSS_POISSON = 4
LOSS_GAMMA = 5
LOSS_BINOMIAL = 6
LOSS_EXPONENTIAL = 7
LOSS_MULTINOMIAL = 8

# fdlibm's split of ln 2: k * _LN2_HI is exact for |k| < 2**20.
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_EXP_OVERFLOW = 709.782712893383973096
_EXP_UNDERFLOW = -745.13321910194110842
# Taylor coefficients 1/n! of exp, n = 0..13: |r| <= ln(2) / 2, the first term left out is < 1e-17 relative.
_EXP_TAYLOR = tuple(1.0 / math.factorial(n) for n in range(14))
# 2**k for k = -1074..1023, each exact (subnormal below -1022): a constant array on both backends.
_EXP2_MIN = -1074
_POWERS_OF_TWO = np.ldexp(1.0, np.arange(_EXP2_MIN, 1024))


def _portable_exp(x):
    """``exp(x)`` from IEEE-754 ``+ - * /`` alone, within 1 ulp of libm (tested).

    libm's and libdevice's ``exp`` may differ in the last bit; these
    correctly rounded operations (no FMA on either side) do not, so both
    backends get the same gradients. Cody & Waite's reduction
    ``x = k ln 2 + r``, a Taylor polynomial in ``r``, then one multiplication
    by ``2**k`` from a table of exact powers of two. Selects, no branches:
    the CPU's loops over rows vectorize it.
    """
    # NaN and the ends computed at a finite point, then replaced by the selects at the end.
    clamped = 0.0 if x != x else min(max(x, _EXP_UNDERFLOW), _EXP_OVERFLOW)
    k = int(math.floor(clamped * INV_LOG2 + 0.5))
    r = (clamped - k * _LN2_HI) - k * _LN2_LO
    # Terms 3..13 by Estrin's scheme (independent products: 1.8x faster than Horner's
    # chain), the last three by Horner's rule, which keeps the result within 1 ulp.
    c = _EXP_TAYLOR
    r2 = r * r
    r4 = r2 * r2
    tail = (
        ((c[3] + c[4] * r) + (c[5] + c[6] * r) * r2)
        + ((c[7] + c[8] * r) + (c[9] + c[10] * r) * r2) * r4
        + ((c[11] + c[12] * r) + c[13] * r2) * (r4 * r4)
    )
    polynomial = c[0] + r * (c[1] + r * (c[2] + r * tail))
    # k is in [-1075, 1024]: move the ends into the table (exact: the polynomial is near 1).
    high = k > 1023
    low = k < _EXP2_MIN
    polynomial *= 2.0 if high else (0.5 if low else 1.0)
    k += -1 if high else (1 if low else 0)
    # One multiplication by an exact power of two: exact unless the result is subnormal,
    # and then rounded once.
    value = polynomial * _POWERS_OF_TWO[k - _EXP2_MIN]
    value = math.inf if x > _EXP_OVERFLOW else (0.0 if x < _EXP_UNDERFLOW else value)
    return x if x != x else value


# Called (not inlined) by the CUDA kernels: each inlined copy would carry its own
# 16 KB table, and PTX allows 64 KB of constant data.
portable_exp = njit(cache=True)(_portable_exp)
# Inlined into the CPU's loops over rows, which then vectorize (3x faster gradients).
inlined_portable_exp = njit(inline="always")(_portable_exp)


def score_gradient_with(exp):
    """``score_gradient(loss, parameter, y, score) -> (gradient, hessian)``, unweighted,
    for the losses of one raw score per row, compiled with ``exp`` (one of the two above)."""

    @njit(inline="always")
    def score_gradient(loss, parameter, y, score):
        hessian = 1.0
        if loss == LOSS_SQUARED_ERROR:
            gradient = score - y
        elif loss == LOSS_ABSOLUTE_ERROR:
            gradient = 1.0 if score > y else -1.0
        elif loss == LOSS_HUBER:
            gradient = min(max(score - y, -parameter), parameter)
        elif loss == LOSS_QUANTILE:
            gradient = -parameter if y > score else 1.0 - parameter
        elif loss == LOSS_POISSON:
            hessian = exp(score)
            gradient = hessian - y
        elif loss == LOSS_GAMMA:
            hessian = y * exp(-score)
            gradient = 1.0 - hessian
        elif loss == LOSS_BINOMIAL:
            p = 1.0 / (1.0 + exp(-score))
            gradient = p - y
            hessian = p * (1.0 - p)
        else:  # LOSS_EXPONENTIAL: exp(-s raw) with s = 2y - 1 in {-1, 1}
            sign = 2.0 * y - 1.0
            hessian = exp(-sign * score)
            gradient = -sign * hessian
        return gradient, hessian

    return score_gradient



def row_gradients_with(exp):
    """``row_gradients`` compiled with ``exp`` (``portable_exp`` or its inlined twin)."""
    score_gradient = score_gradient_with(exp)

    @njit(inline="always")
    def row_gradients(loss, parameter, y, raw, weight, out_gradients, out_hessians):
        """Weighted gradient and hessian of one row, for each of its raw scores.

        Parameters
        ----------
        loss : int
            A ``LOSS_*`` constant.
        parameter : float
        y : float
            Target; the class index for ``LOSS_MULTINOMIAL``, 0 or 1 for the binary losses.
        raw : ndarray of shape (n_scores,), float64
        weight : float
        out_gradients, out_hessians : ndarray of shape (n_scores,), float64
        """
        if loss == LOSS_MULTINOMIAL:
            largest = raw[0]
            for k in range(1, raw.shape[0]):
                largest = max(largest, raw[k])
            total = 0.0
            for k in range(raw.shape[0]):
                # exp kept in the hessians until the total is known
                out_hessians[k] = exp(raw[k] - largest)
                total += out_hessians[k]
            for k in range(raw.shape[0]):
                p = out_hessians[k] / total
                out_gradients[k] = weight * (p - (1.0 if k == y else 0.0))
                out_hessians[k] = weight * p * (1.0 - p)
            return
        gradient, hessian = score_gradient(loss, parameter, y, raw[0])
        out_gradients[0] = weight * gradient
        out_hessians[0] = weight * hessian

    return row_gradients


row_gradients = row_gradients_with(portable_exp)


# --- TreeSHAP over root-to-leaf paths (kernels/*/contributions.py) ------------------------------------------------
#
# Lundberg, Erion & Lee (2018), "Consistent individualized feature attribution for tree ensembles", Algorithm 2,
# written per leaf as GPUTreeSHAP does (Mitchell, Frank & Holmes 2022, section 3). A leaf's path has one element
# per distinct feature: its zero fraction (the product of the path's training cover ratios at that feature's
# splits, the same for every row) and its one fraction (1 when the row takes the path's child at every split on
# that feature, else 0). EXTEND gives the permutation weights of the path's subsets, UNWIND takes an element out.
# The path arrays (``gpuforest.contributions.TreePaths``): ``split_start`` (n_paths + 1) and ``split_node``,
# ``split_rank``, ``split_element`` (each split's packed node, the rank of the path's child there, its element's
# index on the path); ``element_start`` (n_paths + 1), ``element_feature``, ``element_zero``; ``path_value``
# (n_paths, n_values).


@njit(cache=True, inline="always")
def shap_extend(weights, depth, zero_fraction, one_fraction):
    """EXTEND (Algorithm 2): add an element with these fractions to a path of ``depth`` elements whose
    subset weights are ``weights[:depth]``; the new weights are ``weights[:depth + 1]``."""
    weights[depth] = 1.0 if depth == 0 else 0.0
    share = 1.0 / (depth + 1)  # one division, not two per step
    for i in range(depth - 1, -1, -1):
        weights[i + 1] += one_fraction * weights[i] * ((i + 1) * share)
        weights[i] = zero_fraction * weights[i] * ((depth - i) * share)


@njit(cache=True, inline="always")
def shap_unwound_sum(weights, depth, zero_fraction, one_fraction):
    """Sum of the weights of the path of ``depth + 1`` weights with the element of these fractions taken
    out (UNWIND of Algorithm 2 followed by the sum, as shap's ``unwound_path_sum``). A row's one fraction
    is 0 or 1 (it takes the path's way or not), which spares a division per step."""
    total = 0.0
    if one_fraction != 0.0:
        next_one = weights[depth]
        zero_share = zero_fraction / (depth + 1)
        for i in range(depth - 1, -1, -1):
            part = next_one * (depth + 1) / (i + 1)
            total += part
            next_one = weights[i] - part * ((depth - i) * zero_share)
    elif zero_fraction != 0.0:
        for i in range(depth - 1, -1, -1):
            total += weights[i] / (depth - i)
        total *= (depth + 1) / zero_fraction
    return total


@njit(cache=True, inline="always")
def path_one_fractions(X, row, path, split_value, node_info, category_bitset, split_start, split_node, split_rank,
                       split_element, element_start, one):
    """``one[k]`` of each element ``k`` of path ``path``: 1.0 when raw row ``row`` of ``X`` takes the path's
    child at every split on the element's feature (``split_child``), else 0.0."""
    for k in range(element_start[path + 1] - element_start[path]):
        one[k] = 1.0
    for s in range(split_start[path], split_start[path + 1]):
        node = split_node[s]
        info = node_info[node]
        if split_child(X[row, (info >> 3) & 0x1FFFFFFF], info, split_value[node], category_bitset) != split_rank[s]:
            one[split_element[s]] = 0.0


@njit(cache=True, inline="always")
def add_path_contributions(X, row, split_value, node_info, category_bitset, split_start, split_node, split_rank,
                           split_element, element_start, element_feature, element_zero, path_value, one, weights,
                           out):
    """Add every path's SHAP values of raw row ``row`` to ``out`` (n_features + 1, n_values): a path gives
    element ``k`` ``UNWOUND_k * (one_k - zero_k) * value``. ``one`` and ``weights``: scratch of the most
    elements on a path and one more."""
    for path in range(element_start.shape[0] - 1):
        first = element_start[path]
        n_elements = element_start[path + 1] - first
        path_one_fractions(X, row, path, split_value, node_info, category_bitset, split_start, split_node,
                           split_rank, split_element, element_start, one)
        # Element 0 is the empty root (both fractions 1) that the subset weights grow from.
        shap_extend(weights, 0, 1.0, 1.0)
        for k in range(n_elements):
            shap_extend(weights, k + 1, element_zero[first + k], one[k])
        for k in range(n_elements):
            zero = element_zero[first + k]
            scale = shap_unwound_sum(weights, n_elements, zero, one[k]) * (one[k] - zero)
            for v in range(path_value.shape[1]):
                out[element_feature[first + k], v] += scale * path_value[path, v]


@njit(cache=True, inline="always")
def add_path_interactions(X, row, split_value, node_info, category_bitset, split_start, split_node, split_rank,
                          split_element, element_start, element_feature, element_zero, path_value, one, weights,
                          out):
    """Add every path's SHAP interaction values of raw row ``row`` off the diagonal to ``out`` (n_features + 1,
    n_features + 1, n_values) (Lundberg et al. 2018, section 4): ``phi_ij = (phi_j(i on) - phi_j(i off)) / 2``.
    Conditioning on feature ``i`` takes its element out of the path and scales the leaf by its one fraction
    (on) or zero fraction (off), so a path adds ``(one_i - zero_i) / 2`` times ``j``'s share in the path
    without ``i``. Scratch as ``add_path_contributions``."""
    for path in range(element_start.shape[0] - 1):
        first = element_start[path]
        n_elements = element_start[path + 1] - first
        path_one_fractions(X, row, path, split_value, node_info, category_bitset, split_start, split_node,
                           split_rank, split_element, element_start, one)
        for i in range(n_elements):
            condition = 0.5 * (one[i] - element_zero[first + i])
            if condition == 0.0:
                continue
            shap_extend(weights, 0, 1.0, 1.0)
            depth = 0
            for k in range(n_elements):
                if k != i:
                    depth += 1
                    shap_extend(weights, depth, element_zero[first + k], one[k])
            for j in range(n_elements):
                if j == i:
                    continue
                zero = element_zero[first + j]
                scale = condition * shap_unwound_sum(weights, depth, zero, one[j]) * (one[j] - zero)
                for v in range(path_value.shape[1]):
                    out[element_feature[first + i], element_feature[first + j], v] += scale * path_value[path, v]
