"""Feature contributions (SHAP values) and SHAP interaction values of trees and tree ensembles.

Exact path-dependent TreeSHAP (Lundberg, Erion & Lee 2018, "Consistent individualized feature attribution
for tree ensembles", Algorithm 2): the value of a set S of known features is the tree's expectation when a
split on a feature in S follows the row and any other split averages its children weighted by their
training cover (``weighted_n_node_samples``). A row's SHAP values are the Shapley values of that game;
its interaction values the Shapley interaction index of section 4. The ensemble's values are the sums
of its trees' values scaled as the ensemble adds the trees up.

``ContributionsMixin`` gives the estimators ``predict_contributions`` (XGBoost's ``pred_contribs=True``)
and ``predict_interactions`` (``pred_interactions=True``), on the estimator's device; the kernels are
``kernels/cpu/contributions.py`` and its CUDA twin.
"""

import numpy as np

from .backend import get_backend
from .sparse import in_dense_row_blocks
from .tree import MULTIWAY, TREE_LEAF, pack_forest


class TreePaths:
    """Every root-to-leaf path of some trees, one element per distinct feature on it (the kernels' input).

    Parameters
    ----------
    trees : list of Tree
        Trees of binary (numeric or categorical) splits.
    tree_values : list of ndarray of shape (node_count, n_outputs)
        What each node's leaf adds to each output of the ensemble.

    Attributes
    ----------
    routing : tuple
        ``(split_value, node_info, category_bitset)`` of ``tree.pack_forest``.
    arrays : tuple
        ``(split_start, split_node, split_rank, split_element, element_start, element_feature, element_zero,
        path_value)`` as the ``contributions`` kernels read them (``kernels.common``'s TreeSHAP section).
    expected_value : ndarray of shape (n_outputs,)
        The sum over the paths of the leaf value times the product of the cover ratios on the path: each
        tree's mean over the training cover.
    """

    def __init__(self, trees, tree_values):
        for tree in trees:
            if tree.missing_fractional or tree.surrogate_feature.shape[1] > 0 or np.any(tree.split_type == MULTIWAY):
                raise ValueError(
                    "Feature contributions need trees of binary splits whose missing values go one way: "
                    "multiway splits (algorithm='id3' or 'c45'), fractional missing values and surrogate "
                    "splits are not supported."
                )
        tree_offsets, split_value, node_info, category_bitset, _, tree_node = pack_forest(trees)
        self.routing = (split_value, node_info, category_bitset)
        node_counts = np.array([tree.node_count for tree in trees], dtype=np.int64)
        node_tree_offset = np.repeat(tree_offsets, node_counts)
        flat = node_tree_offset + tree_node  # each packed node's row in the trees' concatenated arrays
        cover = np.concatenate([tree.weighted_n_node_samples for tree in trees])[flat]
        node_value = np.concatenate(tree_values)[flat]
        children = np.where(node_info >= 0, node_tree_offset + (node_info >> 32), TREE_LEAF)
        features = (node_info >> 3) & 0x1FFFFFFF
        paths = ([0], [], [], [], [0], [], [], [])
        for root in tree_offsets:
            self._add_paths(int(root), [], children, features, cover, paths)
        split_start, split_node, split_rank, split_element, element_start, element_feature, element_zero, leaves = (
            np.array(column) for column in paths
        )
        path_value = node_value[leaves.astype(np.int64)].reshape(len(leaves), -1)
        self.arrays = (
            split_start.astype(np.int64), split_node.astype(np.int64), split_rank.astype(np.int64),
            split_element.astype(np.int64), element_start.astype(np.int64), element_feature.astype(np.int64),
            element_zero.astype(np.float64), path_value,
        )
        path_zero = np.ones(len(leaves))
        path_of_element = np.repeat(np.arange(len(leaves)), np.diff(element_start))
        np.multiply.at(path_zero, path_of_element, element_zero)
        self.expected_value = path_zero @ path_value

    @staticmethod
    def _add_paths(root, splits, children, features, cover, paths):
        """Append the paths of the subtree at ``root`` (a packed node) to the lists ``paths``, the splits above
        it ``splits`` (pairs of packed node and child rank); depth first, an explicit stack."""
        split_start, split_node, split_rank, split_element, element_start, element_feature, element_zero, leaves = (
            paths
        )
        stack = [(root, splits)]
        while stack:
            node, splits = stack.pop()
            left = children[node]
            if left != TREE_LEAF:
                for rank in (1, 0):
                    stack.append((left + rank, splits + [(node, rank)]))
                continue
            elements = {}  # feature -> index on the path, in order of first split
            zero = []
            for parent, rank in splits:
                element = elements.setdefault(int(features[parent]), len(elements))
                if element == len(zero):
                    zero.append(1.0)
                left = children[parent]
                zero[element] *= cover[left + rank] / (cover[left] + cover[left + 1])
                split_node.append(parent)
                split_rank.append(rank)
                split_element.append(element)
            split_start.append(len(split_node))
            element_feature.extend(elements)
            element_zero.extend(zero)
            element_start.append(len(element_feature))
            leaves.append(node)

    def _run(self, backend, kernel, X, shape):
        """``out`` of ``shape`` (zeros) after ``backend``'s ``kernel`` (a ``contributions`` kernel) added to it."""
        out = backend.xp.zeros(shape)
        getattr(backend.kernels.contributions, kernel)(
            backend.to_device(X), *backend.to_device_many(*self.routing, *self.arrays), out
        )
        return backend.to_host(out)

    @in_dense_row_blocks
    def contributions(self, X, backend):
        """SHAP values, shape (n_samples, n_features + 1, n_outputs): the last slot is ``expected_value``."""
        out = self._run(backend, "path_contributions", X, (X.shape[0], X.shape[1] + 1, self.expected_value.shape[0]))
        out[:, -1] = self.expected_value
        return out

    @in_dense_row_blocks
    def interactions(self, X, backend):
        """SHAP interaction values, shape (n_samples, n_features + 1, n_features + 1, n_outputs): off the
        diagonal ``phi_ij`` (each pair's interaction shared equally by ``ij`` and ``ji``), on it the main effect
        ``phi_ii = phi_i - sum_{j != i} phi_ij``, ``expected_value`` at ``[n_features, n_features]``."""
        n_features = X.shape[1]
        out = self._run(
            backend, "path_interactions", X, (X.shape[0], n_features + 1, n_features + 1, self.expected_value.shape[0])
        )
        shap_values = self.contributions(X, backend)
        diagonal = np.arange(n_features + 1)
        out[:, diagonal, diagonal] = shap_values - out.sum(axis=2)
        return out


class ContributionsMixin:
    """``predict_contributions`` and ``predict_interactions`` of an estimator whose ``_additive_trees()`` says
    how its raw prediction adds up its trees (and whose ``_validate_X_predict`` checks the input)."""

    def _additive_trees(self):
        """``(trees, tree_values, baseline)``: the trees, what each node's leaf adds to each output (a
        (node_count, n_outputs) array per tree) and the constant added to the outputs (n_outputs,)."""
        raise NotImplementedError

    def _tree_paths(self):
        trees, tree_values, baseline = self._additive_trees()
        paths = TreePaths(trees, tree_values)
        paths.expected_value = paths.expected_value + baseline
        return paths

    def predict_contributions(self, X):
        """Each feature's contribution to each row's raw prediction (SHAP values, exact path-dependent TreeSHAP).

        The raw prediction is what ``predict`` returns for a regressor, ``predict_proba`` for a tree or forest
        classifier and ``decision_function`` (the margin) for gradient boosting; missing values and
        categories follow the splits as in prediction. This is XGBoost's ``predict(pred_contribs=True)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        contributions : ndarray of shape (n_samples, n_features + 1) or (n_samples, n_features + 1, n_outputs)
            The last column is the expected value over the training cover (the bias); each row sums to the
            raw prediction. Classifiers with several outputs (a tree's or forest's class probabilities,
            multinomial boosting's scores) have them on the last axis, as shap's ``TreeExplainer`` does.
        """
        X = self._validate_X_predict(X)
        return _squeezed(self._tree_paths().contributions(X, get_backend(self.device_)))

    def predict_interactions(self, X):
        """SHAP interaction values of each row (Lundberg et al. 2018, section 4; XGBoost's
        ``predict(pred_interactions=True)``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        interactions : ndarray of shape (n_samples, n_features + 1, n_features + 1[, n_outputs])
            Symmetric; ``[:, i, j]`` is half the interaction of features ``i`` and ``j``, the diagonal each
            feature's main effect, ``[:, -1, -1]`` the expected value. Summed over the last feature axis it is
            ``predict_contributions``; each row sums to the raw prediction.
        """
        X = self._validate_X_predict(X)
        return _squeezed(self._tree_paths().interactions(X, get_backend(self.device_)))


def _squeezed(values):
    """``values`` without its last (outputs) axis when there is one output."""
    return values[..., 0] if values.shape[-1] == 1 else values
