"""Text rendering of a fitted tree, in the format of scikit-learn's ``export_text``."""

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from .tree import TREE_LEAF


def export_text(decision_tree, *, feature_names=None, class_names=None, max_depth=10, decimals=2, show_weights=False):
    """Rules of a fitted ``DecisionTreeClassifier``/``DecisionTreeRegressor`` as text.

    Same layout as ``sklearn.tree.export_text``; a split whose missing values
    go left is marked ``(missing: left)`` and one whose missing values go
    right ``(missing: right)`` on the ``>`` branch.

    Parameters
    ----------
    decision_tree : fitted gpuforest decision tree
    feature_names : list of str of length n_features, default=None
    class_names : list of str of length n_classes, default=None
    max_depth : int, default=10
        Deeper branches are printed as ``truncated branch of depth d``.
    decimals : int, default=2
    show_weights : bool, default=False
        Print the weighted class counts of each leaf (classification).

    Returns
    -------
    report : str
    """
    check_is_fitted(decision_tree, "tree_")
    tree = decision_tree.tree_
    classifier = is_classifier(decision_tree)
    if feature_names is not None and len(feature_names) != tree.n_features:
        raise ValueError(f"feature_names must contain {tree.n_features} elements, got {len(feature_names)}.")
    if classifier:
        if class_names is None:
            class_names = decision_tree.classes_
        elif len(class_names) != len(decision_tree.classes_):
            raise ValueError(
                f"class_names must contain {len(decision_tree.classes_)} elements, got {len(class_names)}."
            )
    names = feature_names if feature_names is not None else [f"feature_{i}" for i in range(tree.n_features)]
    lines = []

    def leaf_text(node):
        value = tree.value[node, 0]
        if not classifier:
            return "value: [" + ", ".join(f"{v:.{decimals}f}" for v in value) + "]"
        text = f"class: {class_names[int(np.argmax(value))]}"
        if show_weights:
            weights = value * tree.weighted_n_node_samples[node]
            text = "weights: [" + ", ".join(f"{w:.{decimals}f}" for w in weights) + "] " + text
        return text

    def subtree_depth(node):
        if tree.children_left[node] == TREE_LEAF:
            return 1
        return 1 + max(subtree_depth(tree.children_left[node]), subtree_depth(tree.children_right[node]))

    def visit(node, depth):
        indent = "|   " * (depth - 1) + "|---"
        if tree.children_left[node] == TREE_LEAF:
            lines.append(f"{indent} {leaf_text(node)}")
            return
        if depth > max_depth + 1:
            lines.append(f"{indent} truncated branch of depth {subtree_depth(node)}")
            return
        name = names[tree.feature[node]]
        threshold = f"{tree.threshold[node]:.{decimals}f}"
        left_missing, right_missing = (" (missing: left)", "") if tree.missing_go_to_left[node] else ("", " (missing: right)")
        lines.append(f"{indent} {name} <= {threshold}{left_missing}")
        visit(tree.children_left[node], depth + 1)
        lines.append(f"{indent} {name} >  {threshold}{right_missing}")
        visit(tree.children_right[node], depth + 1)

    visit(0, 1)
    return "\n".join(lines) + "\n"
