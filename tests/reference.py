"""Naive reference implementations of the CPU kernels, for the kernel tests.

Everything here is written independently of ``kernels/``: plain Python loops
over numpy arrays, Python integers for the fixed-point sums (so an int64
overflow in a kernel shows up as a mismatch), and node costs computed from the
textbook impurity definitions (``W * impurity`` with every term kept) rather
than from the proxy costs of ``kernels.common``. The only kernel code used is
``kernels.common.hash_uniform``, the random numbers behind ``feature_masks``.

Criteria are named by strings: ``"gini"``, ``"entropy"``,
``"misclassification"``, ``"squared_error"``, ``"poisson"``, ``"newton"``.
"""

import math

import numpy as np

from gpuforest.kernels.common import PURPOSE_BOOTSTRAP, hash_uniform

CLASSIFICATION = ("gini", "entropy", "misclassification")
NO_SPLIT = -1
LEAF = -1
# Purpose code of the feature-sampling draws (documented in kernels/cpu/sampling.py).
PURPOSE_FEATURES = 1
# Purpose code of the random-threshold draws (kernels/cpu/sampling.py's threshold_draws).
PURPOSE_THRESHOLD = 3


# --- binning ------------------------------------------------------------------


def map_to_bins(X, bin_thresholds, n_thresholds, missing_bin):
    """Bin of each value: how many of the feature's thresholds are ``< x``; NaN -> missing_bin."""
    n_samples, n_features = X.shape
    out = np.empty((n_samples, n_features), dtype=np.uint8)
    for row in range(n_samples):
        for feature in range(n_features):
            value = float(X[row, feature])
            if math.isnan(value):
                out[row, feature] = missing_bin
                continue
            below = 0
            for k in range(int(n_thresholds[feature])):
                if float(bin_thresholds[feature, k]) < value:
                    below += 1
            out[row, feature] = below
    return out


# --- random draws ---------------------------------------------------------------


def uniform_per_row(seed, purpose, stream, n_rows):
    return np.array([hash_uniform(seed, purpose, stream, row) for row in range(n_rows)])


def feature_masks(seed, node_tree, node_idx, n_features, max_features):
    """The ``max_features`` features with the lowest priorities (ties: lowest index)."""
    masks = np.zeros((len(node_tree), n_features), dtype=bool)
    for position in range(len(node_tree)):
        stream = (int(node_tree[position]) << 32) + int(node_idx[position])
        priorities = [(hash_uniform(seed, PURPOSE_FEATURES, stream, f), f) for f in range(n_features)]
        chosen = []
        for _ in range(max_features):
            # Selection by repeated minimum over the features not chosen yet.
            best = None
            for priority, feature in priorities:
                if feature in chosen:
                    continue
                if best is None or priority < best[0] or (priority == best[0] and feature < best[1]):
                    best = (priority, feature)
            chosen.append(best[1])
        masks[position, chosen] = True
    return masks


# --- histograms and totals --------------------------------------------------------


def _add_row(target, stats_row, multiplicity, row_slot, row_stats):
    first = int(row_slot[stats_row])
    for s in range(row_stats.shape[1]):
        target[first + s] += int(multiplicity) * int(row_stats[stats_row, s])
    target[-1] += 1


def _to_int64(values):
    """Python ints to int64, failing loudly if a sum does not fit."""
    flat = [v for v in np.asarray(values, dtype=object).ravel()]
    for v in flat:
        if not -(2**63) <= v < 2**63:
            raise OverflowError(f"fixed-point sum {v} does not fit in int64")
    return np.array(flat, dtype=np.int64).reshape(np.shape(values))


def node_rows(sample_indices, node_start, node_stop, node):
    return [int(r) for r in sample_indices[int(node_start[node]) : int(node_stop[node])]]


def node_totals(
    sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats, n_slots, stats_stride=0
):
    """Tree ``t``'s statistics of row ``r`` are at ``t * stats_stride + r`` (here and in ``build_histograms``)."""
    totals = []
    for node in range(len(node_start)):
        total = [0] * n_slots
        tree = int(node_tree[node])
        for row in node_rows(sample_indices, node_start, node_stop, node):
            _add_row(total, tree * stats_stride + row, sample_counts[tree, row], row_slot, row_stats)
        totals.append(total)
    return _to_int64(totals).reshape(len(node_start), n_slots)


def build_histograms(
    X_binned, sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats, n_bins, n_slots,
    stats_stride=0,
):
    n_nodes, n_features = len(node_start), X_binned.shape[1]
    hist = [[[[0] * n_slots for _ in range(n_bins)] for _ in range(n_features)] for _ in range(n_nodes)]
    for node in range(n_nodes):
        tree = int(node_tree[node])
        for row in node_rows(sample_indices, node_start, node_stop, node):
            for feature in range(n_features):
                bin_idx = int(X_binned[row, feature])
                _add_row(
                    hist[node][feature][bin_idx], tree * stats_stride + row, sample_counts[tree, row], row_slot,
                    row_stats,
                )
    return _to_int64(hist).reshape(n_nodes, n_features, n_bins, n_slots)


# --- impurities, from their definitions ---------------------------------------------


def node_stats(criterion, totals, inv_scales):
    """Float statistics of a node from its fixed-point totals (a sequence of ints)."""
    n_stat = len(totals) - 1
    values = [int(totals[s]) * float(inv_scales[s]) for s in range(n_stat)]
    if criterion in CLASSIFICATION:
        return {"counts": values, "W": sum(values)}
    if criterion == "newton":
        return {"G": values[0], "H": values[1], "W": values[1]}
    return {"W": values[0], "S": values[1], "T": values[2]}


def impurity(criterion, stats):
    """Impurity of a node with ``W > 0`` (``newton`` has none)."""
    W = stats["W"]
    if criterion in CLASSIFICATION:
        p = [c / W for c in stats["counts"]]
        if criterion == "gini":
            return 1.0 - sum(q * q for q in p)
        if criterion == "entropy":
            return -sum(q * math.log2(q) for q in p if q > 0)
        return 1.0 - max(p)
    if criterion == "squared_error":
        # S = sum w y, T = sum w y^2: weighted variance.
        mean = stats["S"] / W
        return stats["T"] / W - mean * mean
    if criterion == "poisson":
        # Half Poisson deviance per unit weight with mu = mean y, T = sum w y log y:
        # (1/W) sum w (y log(y / mu) - y + mu); scikit-learn's inf for a zero mean.
        S = stats["S"]
        if S <= 0:
            return math.inf
        mu = S / W
        return (stats["T"] - S * math.log(mu) - S + W * mu) / W
    raise ValueError(criterion)


def shrunk_gradient(G, l1):
    """XGBoost's L1 soft threshold of a gradient sum: ``sign(G) * max(|G| - l1, 0)``."""
    return float(np.sign(G) * np.maximum(np.abs(G) - l1, 0.0))


def node_cost(criterion, stats, regularization):
    """``W * impurity``; for ``newton`` the structure score ``-T(G)^2 / (H + l2)``.

    ``regularization`` is ``(l2, l1)``; ``T`` is ``shrunk_gradient``.
    """
    if criterion == "newton":
        l2, l1 = regularization
        return -shrunk_gradient(stats["G"], l1) ** 2 / (stats["H"] + l2)
    return stats["W"] * impurity(criterion, stats)


def node_values(criterion, totals, inv_scales, regularization):
    """(value, impurity, weight) per node; impurity is ``None`` for ``newton``.

    The ``newton`` value is ``-T(G) / (H + l2)`` with ``(l2, l1) = regularization``.
    """
    out = []
    for node_total in totals:
        stats = node_stats(criterion, node_total, inv_scales)
        W = stats["W"]
        if criterion in CLASSIFICATION:
            value = [c / W for c in stats["counts"]]
        elif criterion == "newton":
            l2, l1 = regularization
            value = [-shrunk_gradient(stats["G"], l1) / (stats["H"] + l2)]
        else:
            value = [stats["S"] / W]
        node_impurity = None if criterion == "newton" else impurity(criterion, stats)
        out.append((value, node_impurity, W))
    return out


# --- split finding, by brute force ----------------------------------------------------


def split_candidates(
    criterion, X_binned, rows, counts, row_slot, row_stats, parent, feature_mask, n_bins_non_missing, missing_bin,
    inv_scales, regularization, min_samples_leaf, min_weight_leaf,
):
    """Every candidate split of one node in scan order, with its validity and gain.

    Scan order: features increasing; per feature, threshold bins increasing;
    per bin, missing values right then (if the node has any) left. Returns a
    list of dicts with ``feature, bin, missing_left, left (ints), has_missing,
    valid, gain``. ``counts``, ``row_slot`` and ``row_stats`` are those of the
    node's tree, indexed by row.
    """
    n_slots = len(parent)
    parent = [int(v) for v in parent]
    parent_stats = node_stats(criterion, parent, inv_scales)
    parent_cost = node_cost(criterion, parent_stats, regularization) if parent_stats["W"] > 0 else None
    candidates = []
    for feature in range(X_binned.shape[1]):
        if not feature_mask[feature]:
            continue
        missing = [0] * n_slots
        for row in rows:
            if int(X_binned[row, feature]) == missing_bin:
                _add_row(missing, row, counts[row], row_slot, row_stats)
        has_missing = missing[-1] > 0
        for threshold in range(int(n_bins_non_missing[feature])):
            left_non_missing = [0] * n_slots
            for row in rows:
                bin_idx = int(X_binned[row, feature])
                if bin_idx != missing_bin and bin_idx <= threshold:
                    _add_row(left_non_missing, row, counts[row], row_slot, row_stats)
            for missing_left in (False, True) if has_missing else (False,):
                left = [a + b for a, b in zip(left_non_missing, missing)] if missing_left else left_non_missing
                right = [p - l for p, l in zip(parent, left)]
                candidate = {
                    "feature": feature, "bin": threshold, "missing_left": missing_left, "left": left,
                    "has_missing": has_missing, "valid": False, "gain": -math.inf,
                }
                candidates.append(candidate)
                if left_non_missing[-1] == 0:  # the non-missing left part must not be empty
                    continue
                if left[-1] < min_samples_leaf or right[-1] < min_samples_leaf:
                    continue
                left_stats = node_stats(criterion, left, inv_scales)
                right_stats = node_stats(criterion, right, inv_scales)
                weights = (left_stats["W"], right_stats["W"])
                if min(weights) < min_weight_leaf or min(weights) <= 0:
                    continue
                if criterion == "poisson" and (left_stats["S"] <= 0 or right_stats["S"] <= 0):
                    continue  # a Poisson child needs a positive mean
                gain = (
                    parent_cost
                    - node_cost(criterion, left_stats, regularization)
                    - node_cost(criterion, right_stats, regularization)
                )
                candidate["valid"] = True
                candidate["gain"] = gain
    return candidates, parent_stats, parent_cost


def best_split(
    criterion, X_binned, rows, counts, row_slot, row_stats, parent, feature_mask, n_bins_non_missing, missing_bin,
    inv_scales, regularization, min_samples_leaf, min_weight_leaf, tie_tolerance=1e-12,
):
    """The documented choice: the first valid candidate in scan order with the largest gain.

    Gains within ``tie_tolerance * scale`` of the largest count as ties (the
    reference and the kernels round differently; ``scale`` is the size of the
    parent's cost). Returns a dict with ``feature, bin, missing_left,
    left_totals, gain, scale, candidates``; ``feature == NO_SPLIT`` when no
    candidate is valid.
    """
    candidates, parent_stats, parent_cost = split_candidates(
        criterion, X_binned, rows, counts, row_slot, row_stats, parent, feature_mask, n_bins_non_missing,
        missing_bin, inv_scales, regularization, min_samples_leaf, min_weight_leaf,
    )
    scale = abs(parent_stats["W"]) + (abs(parent_cost) if parent_cost is not None else 0.0)
    if criterion == "squared_error":
        scale += abs(parent_stats["T"])
    valid = [c for c in candidates if c["valid"]]
    n_slots = len(parent)
    result = {"scale": scale, "candidates": candidates}
    if not valid:
        result.update(
            feature=NO_SPLIT, bin=NO_SPLIT, missing_left=False, left_totals=[0] * n_slots, gain=-math.inf,
            next_bin=NO_SPLIT,
        )
        return result
    largest = max(c["gain"] for c in valid)
    chosen = next(c for c in valid if c["gain"] >= largest - tie_tolerance * scale)
    if chosen["has_missing"]:
        missing_left = chosen["missing_left"]
    else:
        # No missing value here: future ones follow the majority of rows (ties left).
        missing_left = 2 * chosen["left"][-1] >= int(parent[-1])
    # The lowest occupied non-missing bin above the chosen one, where the raw threshold's upper end lies.
    above = [
        int(X_binned[row, chosen["feature"]]) for row in rows
        if chosen["bin"] < X_binned[row, chosen["feature"]] != missing_bin
    ]
    result.update(
        feature=chosen["feature"], bin=chosen["bin"], missing_left=missing_left, left_totals=chosen["left"],
        gain=chosen["gain"], next_bin=min(above) if above else NO_SPLIT,
    )
    return result


def skewed_bin_values(n_features, n_bins):
    """Increasing bin values (n_features, n_bins), far from evenly spaced (``b**3``), so that a threshold
    uniform over values is not one uniform over bins."""
    return np.arange(n_bins, dtype=np.float64) ** 3 * (1.0 + np.arange(n_features))[:, None]


def random_threshold_bins(X_binned, rows, feature_mask, threshold_draws, missing_bin, bin_values):
    """Extra trees: the one candidate threshold bin of each feature of a node (``NO_SPLIT``: none).

    With ``lo``/``hi`` the lowest/highest non-missing bins of the node's rows,
    ``u = threshold_draws[feature]`` and ``v = bin_values[feature]``, the threshold
    is ``t = (1 - u) v[lo] + u v[hi]`` (uniform between the node's values, Geurts
    et al. 2006) and the drawn bin the highest bin ``b < hi`` with ``v[b] <= t``
    (``lo`` at least); the candidate is the highest bin of a row at or below it.
    """
    bins = []
    for feature in range(X_binned.shape[1]):
        present = sorted({int(X_binned[row, feature]) for row in rows} - {missing_bin})
        if not feature_mask[feature] or len(present) < 2:
            bins.append(NO_SPLIT)
            continue
        lo, hi = present[0], present[-1]
        u = float(threshold_draws[feature])
        threshold = (1 - u) * bin_values[feature, lo] + u * bin_values[feature, hi]
        drawn = max([lo] + [b for b in range(lo, hi) if bin_values[feature, b] <= threshold])
        bins.append(max(b for b in present if b <= drawn))
    return bins


def random_threshold_split(
    criterion, X_binned, rows, counts, row_slot, row_stats, parent, feature_mask, threshold_draws,
    n_bins_non_missing, missing_bin, inv_scales, regularization, min_samples_leaf, min_weight_leaf, bin_values,
    tie_tolerance=1e-12,
):
    """The documented extra-trees choice: ``best_split`` among the random candidates only.

    ``threshold_draws`` is the node's row (n_features,); ``bin_values`` (n_features, n_bins). Returns the dict of
    ``best_split`` plus ``thresholds``, the ``random_threshold_bins``.
    """
    thresholds = random_threshold_bins(X_binned, rows, feature_mask, threshold_draws, missing_bin, bin_values)
    everything = best_split(
        criterion, X_binned, rows, counts, row_slot, row_stats, parent, feature_mask, n_bins_non_missing,
        missing_bin, inv_scales, regularization, min_samples_leaf, min_weight_leaf, tie_tolerance,
    )
    scale = everything["scale"]
    candidates = [c for c in everything["candidates"] if c["bin"] == thresholds[c["feature"]]]
    valid = [c for c in candidates if c["valid"]]
    result = {"scale": scale, "candidates": candidates, "thresholds": thresholds}
    if not valid:
        result.update(
            feature=NO_SPLIT, bin=NO_SPLIT, missing_left=False, left_totals=[0] * len(parent), gain=-math.inf,
            next_bin=NO_SPLIT,
        )
        return result
    largest = max(c["gain"] for c in valid)
    chosen = next(c for c in valid if c["gain"] >= largest - tie_tolerance * scale)
    missing_left = chosen["missing_left"] if chosen["has_missing"] else 2 * chosen["left"][-1] >= int(parent[-1])
    above = [
        int(X_binned[row, chosen["feature"]]) for row in rows
        if chosen["bin"] < X_binned[row, chosen["feature"]] != missing_bin
    ]
    result.update(
        feature=chosen["feature"], bin=chosen["bin"], missing_left=missing_left, left_totals=chosen["left"],
        gain=chosen["gain"], next_bin=min(above) if above else NO_SPLIT,
    )
    return result


def threshold_draws(seed, node_tree, node_idx, n_features):
    """``U(seed, threshold, tree * 2**32 + node_idx, feature)`` per node and feature."""
    return np.array([
        [hash_uniform(seed, PURPOSE_THRESHOLD, (int(tree) << 32) + int(node), f) for f in range(n_features)]
        for tree, node in zip(node_tree, node_idx)
    ]).reshape(len(node_tree), n_features)


# --- partition and prediction --------------------------------------------------------


def apply_splits(X_binned, sample_indices, node_start, node_stop, split_feature, split_bin, missing_left, missing_bin):
    """Stable partition of each node's rows; returns (new sample_indices, n_left)."""
    out = np.array(sample_indices, copy=True)
    n_left = np.zeros(len(node_start), dtype=np.int64)
    for node in range(len(node_start)):
        start, stop = int(node_start[node]), int(node_stop[node])
        left, right = [], []
        for row in sample_indices[start:stop]:
            bin_idx = int(X_binned[row, split_feature[node]])
            if bin_idx == missing_bin:
                goes_left = bool(missing_left[node])
            else:
                goes_left = bin_idx <= int(split_bin[node])
            (left if goes_left else right).append(row)
        out[start:stop] = left + right
        n_left[node] = len(left)
    return out, n_left


def predict_leaves(X, tree_offsets, feature, threshold, missing_go_left, children_left, children_right):
    n_samples, n_trees = X.shape[0], len(tree_offsets)
    out = np.empty((n_samples, n_trees), dtype=np.int32)
    for row in range(n_samples):
        for tree in range(n_trees):
            offset = int(tree_offsets[tree])
            node = 0
            while children_left[offset + node] != LEAF:
                value = float(X[row, feature[offset + node]])
                if math.isnan(value):
                    left = bool(missing_go_left[offset + node])
                else:
                    left = value <= float(threshold[offset + node])
                node = int(children_left[offset + node] if left else children_right[offset + node])
            out[row, tree] = node
    return out


def apply_tree(tree, X):
    """Node of ``tree`` (a ``gpuforest.tree.Tree``) each row of ``X`` ends in, one node at a time, by the
    rules of the tree format's docstring: numeric, categorical (bitset) and multiway splits.

    A category code is a float equal to an integer in ``[0, 256)``; NaN and any other value
    follow ``missing_go_to_left`` at a categorical split and stop the row at a multiway node,
    as does a code without a child there.
    """
    out = np.empty(X.shape[0], dtype=np.int64)
    for row in range(X.shape[0]):
        node = 0
        while tree.children_left[node] != LEAF:
            value = float(X[row, tree.feature[node]])
            first, last = int(tree.children_left[node]), int(tree.children_right[node])
            code = int(value) if value in range(256) else None
            if tree.split_type[node] == 0:  # numeric
                go_left = bool(tree.missing_go_to_left[node]) if math.isnan(value) else value <= tree.threshold[node]
                node = first if go_left else last
            elif tree.split_type[node] == 1:  # categorical
                if code is None:
                    go_left = bool(tree.missing_go_to_left[node])
                else:
                    go_left = (int(tree.category_bitset[node, code // 32]) >> (code % 32)) & 1 == 1
                node = first if go_left else last
            else:  # multiway
                if code is None or first + code > last:
                    break
                node = first + code
        out[row] = node
    return out


def predict_raw(X, tree_offsets, feature, threshold, missing_go_left, children_left, children_right, leaf_value,
                baseline):
    """``baseline`` (n_scores,) plus each tree's leaf value in column ``tree % n_scores``, trees in order."""
    leaves = predict_leaves(X, tree_offsets, feature, threshold, missing_go_left, children_left, children_right)
    out = np.tile(np.asarray(baseline, dtype=np.float64), (X.shape[0], 1))
    for tree in range(len(tree_offsets)):
        out[:, tree % out.shape[1]] += leaf_value[int(tree_offsets[tree]) + leaves[:, tree]]
    return out


def bootstrap_counts(seed, first_tree, n_trees, n_samples, n_draws):
    """Draw ``n_draws`` rows with replacement per tree, one hash per draw."""
    counts = np.zeros((n_trees, n_samples), dtype=np.int32)
    for tree in range(n_trees):
        for draw in range(n_draws):
            u = hash_uniform(seed, PURPOSE_BOOTSTRAP, first_tree + tree, draw)
            counts[tree, min(int(u * n_samples), n_samples - 1)] += 1
    return counts
