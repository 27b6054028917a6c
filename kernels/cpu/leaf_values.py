"""Node values, impurities and weights from the nodes' fixed-point totals."""

from numba import njit, prange

from ..common import MISCLASSIFICATION, NEWTON, PARENT, node_impurity, node_weight, slot_value


@njit(parallel=True, cache=True)
def node_values(criterion, totals, inv_scales, l2_regularization, out_value, out_impurity, out_weight):
    """Value (prediction), impurity and weighted sample count of every node.

    Parameters
    ----------
    totals : ndarray of shape (n_nodes, n_slots), dtype int64
    out_value : ndarray of shape (n_nodes, n_values), dtype float64
        Class proportions for classification; ``sum(w y) / sum(w)`` for
        regression; the Newton step ``-G / (H + lambda)`` for ``newton``.
    out_impurity, out_weight : ndarray of shape (n_nodes,), dtype float64
    """
    n_stat_slots = totals.shape[1] - 1
    for node in prange(totals.shape[0]):
        node_totals = totals[node]
        weight = node_weight(criterion, node_totals, node_totals, PARENT, n_stat_slots, inv_scales)
        out_weight[node] = weight
        out_impurity[node] = node_impurity(criterion, node_totals, n_stat_slots, inv_scales, l2_regularization)
        if criterion <= MISCLASSIFICATION:
            for slot in range(n_stat_slots):
                out_value[node, slot] = slot_value(node_totals, node_totals, PARENT, slot, inv_scales) / weight
        elif criterion == NEWTON:
            sum_gradients = slot_value(node_totals, node_totals, PARENT, 0, inv_scales)
            out_value[node, 0] = -sum_gradients / (weight + l2_regularization)
        else:
            out_value[node, 0] = slot_value(node_totals, node_totals, PARENT, 1, inv_scales) / weight
