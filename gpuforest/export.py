"""Exports of fitted trees: text, DOT (Graphviz), matplotlib drawings, rules and a table of nodes.

Every export takes a fitted gpuforest decision tree, a bare ``Tree``, or a
fitted ensemble whose members are gpuforest trees (``RandomForest*``,
``ExtraTrees*``, ``GradientBoosting*``, ``AdaBoost*``, ``Bagging*``, ``Voting*``)
with ``tree_index``: one member, or ``None`` for every member, each in a section
headed ``tree i`` (a DOT graph each); ``trees_to_dataframe`` gives XGBoost's table
of nodes. The text and DOT layouts are scikit-learn's
(``sklearn.tree.export_text``, ``sklearn.tree.export_graphviz``), with the split
kinds of ``gpuforest.tree`` that scikit-learn lacks:

- ``NUMERIC``: ``x <= t`` goes left, ``x >  t`` right;
- ``CATEGORICAL``: ``x in {a, b}`` goes left, ``x not in {a, b}`` right;
- ``MULTIWAY``: ``x = a``, one branch per category;

categories named by ``category_names`` (else their codes). A binary split shows
where missing values go: ``(missing: left)`` or ``(missing: right)``.
"""

import math
from collections.abc import Mapping
from numbers import Integral
from typing import NamedTuple

import numpy as np
from sklearn.base import is_classifier
from sklearn.ensemble import (
    AdaBoostClassifier, AdaBoostRegressor, BaggingClassifier, BaggingRegressor, VotingClassifier, VotingRegressor,
)
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions, validate_params
from sklearn.utils.validation import check_is_fitted

from .boosting import BaseGradientBoosting
from .decision_tree import BaseDecisionTree
from .forest import BaseForest
from .multioutput import check_single_output
from .tree import CATEGORICAL, MAX_CATEGORIES, MULTIWAY, NUMERIC, TREE_LEAF, Tree

# Ensembles of scikit-learn's whose members are in ``estimators_``, gpuforest's subclasses included.
_MEMBER_LIST_ENSEMBLES = (
    AdaBoostClassifier, AdaBoostRegressor, BaggingClassifier, BaggingRegressor, VotingClassifier, VotingRegressor,
)
_TRUNCATED_FILL = "#C0C0C0"

_COMMON_CONSTRAINTS = {
    "estimator": "no_validation",  # _members names what it takes
    "tree_index": [Interval(Integral, 0, None, closed="left"), None],
    "feature_names": ["array-like", None],
    "category_names": [Mapping, "array-like", None],
}
_DRAWING_CONSTRAINTS = dict(
    _COMMON_CONSTRAINTS,
    max_depth=[Interval(Integral, 0, None, closed="left"), None],
    class_names=["array-like", "boolean", None],
    label=[StrOptions({"all", "root", "none"})],
    filled=["boolean"],
    impurity=["boolean"],
    node_ids=["boolean"],
    proportion=["boolean"],
    rounded=["boolean"],
    precision=[Interval(Integral, 0, None, closed="left")],
)


# --- the trees of an estimator -------------------------------------------------------------------------


class _Member(NamedTuple):
    """One tree of an estimator.

    Attributes
    ----------
    tree : Tree
    features : ndarray of shape (tree.n_features,), dtype int64
        The estimator's feature index of each of the tree's features (bagging
        members may see a subset).
    class_indices : ndarray of shape (n_values,) or None
        The estimator's class index of each value column of a classification
        tree; None when the values are not class proportions.
    criterion : str
        The impurity's name in node labels.
    title : str
        The section header.
    """

    tree: Tree
    features: np.ndarray
    class_indices: object
    criterion: str
    title: str


class _Section(NamedTuple):
    """A tree to export with the names of its features, categories and classes.

    Attributes
    ----------
    index : int or None
        The member's index in its ensemble; None for a lone tree.
    title : str
    tree : Tree
    feature_names : list of str of length tree.n_features
    category_names : dict
        The tree's feature index -> the names of its category codes.
    class_names : ndarray of shape (n_values,) or None
        The class of each value column of a classification tree; None when the
        values are regression values or raw scores.
    criterion : str
    """

    index: object
    title: str
    tree: Tree
    feature_names: list
    category_names: dict
    class_names: object
    criterion: str


def _members(estimator):
    """The fitted trees of ``estimator`` as ``_Member``s (a ``TypeError`` for a member that is no gpuforest
    tree), its feature count, its classes (None: not a classifier) and whether it is an ensemble. One output only."""
    check_single_output(estimator)
    if isinstance(estimator, Tree):
        # A bare tree of more than one value per node holds class proportions.
        n_values = estimator.value.shape[2]
        classes = np.arange(n_values) if n_values > 1 else None
        member = _Member(estimator, np.arange(estimator.n_features), classes, "impurity", "tree")
        return [member], estimator.n_features, classes, False
    classes = getattr(estimator, "classes_", None) if is_classifier(estimator) else None
    if isinstance(estimator, BaseDecisionTree):
        check_is_fitted(estimator, "tree_")
        class_indices = None if classes is None else np.arange(classes.shape[0])
        member = _Member(estimator.tree_, np.arange(estimator.tree_.n_features), class_indices, estimator.criterion,
                         "tree")
        return [member], estimator.tree_.n_features, classes, False
    if isinstance(estimator, BaseForest):
        check_is_fitted(estimator, "trees_")
        class_indices = None if classes is None else np.arange(estimator.classes_.shape[0])
        features = np.arange(estimator.n_features_in_)
        members = [
            _Member(tree, features, class_indices, estimator.criterion, f"tree {index}")
            for index, tree in enumerate(estimator.trees_)
        ]
        return members, estimator.n_features_in_, classes, True
    if isinstance(estimator, BaseGradientBoosting):
        check_is_fitted(estimator, "trees_")
        return _boosting_members(estimator), estimator.n_features_in_, classes, True
    if isinstance(estimator, _MEMBER_LIST_ENSEMBLES):
        check_is_fitted(estimator, "estimators_")
        return _listed_members(estimator, classes), estimator.n_features_in_, classes, True
    raise TypeError(
        "Expected a gpuforest decision tree, an ensemble of gpuforest trees or a gpuforest.tree.Tree; got "
        f"{type(estimator).__name__} (scikit-learn's own trees: sklearn.tree's exports)."
    )


def _boosting_members(estimator):
    """Gradient boosting's trees, whose values are raw scores: with a tree per class and round, each titled
    by its round and class."""
    features = np.arange(estimator.n_features_in_)
    n_per_round = estimator.baseline_.shape[0]
    members = []
    for index, tree in enumerate(estimator.trees_):
        title = f"tree {index}"
        if n_per_round > 1:
            title += f" (round {index // n_per_round}, class {estimator.classes_[index % n_per_round]})"
        members.append(_Member(tree, features, None, "impurity", title))
    return members


def _listed_members(estimator, classes):
    """The members of an ensemble that keeps them in ``estimators_`` (bagging, AdaBoost, voting); a
    ``TypeError`` in place of a member that is not a gpuforest tree, raised if it is exported."""
    # scikit-learn's bagging loop and voting fit their members on class indices, not labels.
    encoded = isinstance(estimator, VotingClassifier) or (
        isinstance(estimator, BaggingClassifier) and getattr(estimator, "forest_", None) is None
    )
    all_features = np.arange(estimator.n_features_in_)
    subsets = getattr(estimator, "estimators_features_", None)
    members = []
    for index, member in enumerate(estimator.estimators_):
        if not isinstance(member, BaseDecisionTree):
            members.append(TypeError(
                f"Member {index} of {type(estimator).__name__} is a {type(member).__name__}, not a gpuforest "
                "decision tree: export it on its own."
            ))
            continue
        class_indices = None
        if classes is not None:
            member_classes = member.classes_
            class_indices = member_classes.astype(np.int64) if encoded else np.searchsorted(classes, member_classes)
        features = all_features if subsets is None else np.asarray(subsets[index], dtype=np.int64)
        members.append(_Member(member.tree_, features, class_indices, member.criterion, f"tree {index}"))
    return members


def _sections(estimator, tree_index, feature_names, class_names, category_names, default_feature_name):
    """The trees to export from ``estimator`` and the names to show in them.

    Parameters
    ----------
    tree_index : int or None
        One member of an ensemble, or None for all of them.
    feature_names : sequence of length n_features or None
        None: ``default_feature_name.format(i)`` for feature ``i``.
    class_names : sequence of length n_classes, True or None
        None: the estimator's ``classes_``; True: ``y[i]`` for class ``i``.
    category_names : mapping, sequence of length n_features or None
        Feature (index or name) -> names of its category codes; or, per
        feature, its names or None.

    Returns
    -------
    sections : list of _Section
    headed : bool
        Whether the sections need headers (every member of an ensemble).
    """
    members, n_features, classes, is_ensemble = _members(estimator)
    if tree_index is None:
        chosen = range(len(members))
    elif tree_index < len(members):
        chosen = [tree_index]
    else:
        raise ValueError(f"tree_index={tree_index} is out of range: {type(estimator).__name__} has "
                         f"{len(members)} tree{'s' if len(members) != 1 else ''}.")
    if feature_names is None:
        feature_names = [default_feature_name.format(i) for i in range(n_features)]
    elif len(feature_names) != n_features:
        raise ValueError(f"feature_names must contain {n_features} elements, got {len(feature_names)}.")
    names_of_classes = None
    if classes is not None:
        if class_names is None:
            names_of_classes = np.asarray(classes)
        elif class_names is True:
            names_of_classes = np.array([f"y[{k}]" for k in range(classes.shape[0])])
        elif len(class_names) != classes.shape[0]:
            raise ValueError(f"class_names must contain {classes.shape[0]} elements, got {len(class_names)}.")
        else:
            names_of_classes = np.asarray(class_names)
    categories = _categories_by_feature(category_names, feature_names)
    sections = []
    for index in chosen:
        member = members[index]
        if isinstance(member, TypeError):
            raise member
        sections.append(_Section(
            index if is_ensemble else None, member.title, member.tree,
            [str(feature_names[feature]) for feature in member.features],
            {j: categories[feature] for j, feature in enumerate(member.features) if feature in categories},
            None if member.class_indices is None else names_of_classes[member.class_indices],
            str(member.criterion),
        ))
    return sections, is_ensemble and tree_index is None


def _categories_by_feature(category_names, feature_names):
    """``category_names`` as a dict of feature index -> list of names (see ``_sections``)."""
    if category_names is None:
        return {}
    n_features = len(feature_names)
    if not isinstance(category_names, Mapping):
        if len(category_names) != n_features:
            raise ValueError(
                f"category_names must be a mapping or contain {n_features} elements, got {len(category_names)}."
            )
        return {feature: list(names) for feature, names in enumerate(category_names) if names is not None}
    index_of_name = {str(name): feature for feature, name in enumerate(feature_names)}
    categories = {}
    for key, names in category_names.items():
        if isinstance(key, Integral) and 0 <= key < n_features:
            categories[int(key)] = list(names)
        elif isinstance(key, str) and key in index_of_name:
            categories[index_of_name[key]] = list(names)
        else:
            raise ValueError(f"category_names has a key {key!r} that is neither a feature index below "
                             f"{n_features} nor a feature name.")
    return categories


# --- splits ---------------------------------------------------------------------------------------------


class _Split(NamedTuple):
    """A split node's branches as shown in every export.

    Attributes
    ----------
    feature_name : str
    children : list of int
    relations : list of str
        What leads to each child, after the feature's name: ``"<= 2.50"``,
        ``">  2.50"``, ``"in {a, b}"``, ``"not in {a, b}"`` or ``"= a"``.
    missing_child : int
        The child missing values go to; ``TREE_LEAF`` when they stop at the
        node (``MULTIWAY``) or go down every branch (``Tree.missing_fractional``).
    """

    feature_name: str
    children: list
    relations: list
    missing_child: int


def _children(tree, node):
    """The children of ``node`` (none at a leaf)."""
    left, right = int(tree.children_left[node]), int(tree.children_right[node])
    if left == TREE_LEAF:
        return []
    return list(range(left, right + 1)) if tree.split_type[node] == MULTIWAY else [left, right]


def _left_codes(tree, node):
    """The category codes that go left at a ``CATEGORICAL`` split: the set bits of its bitset."""
    codes = np.arange(MAX_CATEGORIES)
    words = tree.category_bitset[node, codes // 32].astype(np.int64)
    return np.flatnonzero((words >> (codes % 32)) & 1)


def _category_name(section, feature, code):
    names = section.category_names.get(feature)
    if names is None:
        return str(code)
    if code >= len(names):
        raise ValueError(f"category_names of feature {section.feature_names[feature]!r} has {len(names)} names; "
                         f"the tree has category code {code}.")
    return str(names[code])


def _category_set(section, feature, codes):
    return "{" + ", ".join(_category_name(section, feature, code) for code in codes) + "}"


def _split(section, node, format_threshold):
    """``_Split`` of split ``node``, thresholds written by ``format_threshold``."""
    tree = section.tree
    feature = int(tree.feature[node])
    children = _children(tree, node)
    kind = tree.split_type[node]
    missing_child = children[0] if tree.missing_go_to_left[node] else children[-1]
    if kind == NUMERIC:
        threshold = format_threshold(tree.threshold[node])
        relations = [f"<= {threshold}", f">  {threshold}"]
    elif kind == CATEGORICAL:
        categories = _category_set(section, feature, _left_codes(tree, node))
        relations = [f"in {categories}", f"not in {categories}"]
    elif kind == MULTIWAY:
        relations = [f"= {_category_name(section, feature, code)}" for code in range(len(children))]
        missing_child = TREE_LEAF
    else:
        raise _split_type_error(node, kind)
    if tree.missing_fractional:  # missing values go down every branch
        missing_child = TREE_LEAF
    return _Split(section.feature_names[feature], children, relations, missing_child)


def _split_type_error(node, kind):
    return ValueError(f"Node {node} has split_type {kind}, not NUMERIC, CATEGORICAL or MULTIWAY.")


def _missing_marker(split):
    """`` (missing: left)`` or `` (missing: right)``: the branch missing values take at a binary split."""
    if split.missing_child == TREE_LEAF:
        return ""
    return " (missing: left)" if split.missing_child == split.children[0] else " (missing: right)"


def _subtree_depth(tree, node):
    """Levels of the subtree under ``node``, itself included."""
    return 1 + max((_subtree_depth(tree, child) for child in _children(tree, node)), default=0)


# --- text -----------------------------------------------------------------------------------------------


@validate_params(
    dict(
        _COMMON_CONSTRAINTS,
        class_names=["array-like", None],
        max_depth=[Interval(Integral, 0, None, closed="left")],
        spacing=[Interval(Integral, 1, None, closed="left")],
        decimals=[Interval(Integral, 0, None, closed="left")],
        show_weights=["boolean"],
    ),
    prefer_skip_nested_validation=True,
)
def export_text(
    decision_tree, *, tree_index=None, feature_names=None, class_names=None, category_names=None, max_depth=10,
    spacing=3, decimals=2, show_weights=False,
):
    """The rules of fitted trees as indented text, in the layout of ``sklearn.tree.export_text``.

    Parameters
    ----------
    decision_tree : fitted gpuforest tree or tree ensemble, or gpuforest.tree.Tree
        A bare ``Tree`` is a classification tree when it holds more than one
        value per node (classes ``0 .. n_values - 1``).
    tree_index : int, default=None
        The member of an ensemble to export; None: every member, each headed
        ``tree i``. A lone tree is member 0.
    feature_names : array-like of str of shape (n_features,), default=None
        None: ``feature_0``, ``feature_1``, ...
    class_names : array-like of shape (n_classes,), default=None
        None: the estimator's ``classes_``.
    category_names : mapping or array-like of shape (n_features,), default=None
        The names of categorical features' codes: feature (index or name) ->
        list of names, or per feature a list of names or None. None: the codes.
    max_depth : int, default=10
        Deeper branches are printed as ``truncated branch of depth d``.
    spacing : int, default=3
        Width of each level's indentation.
    decimals : int, default=2
    show_weights : bool, default=False
        Print the weighted class counts of each leaf (classification).

    Returns
    -------
    report : str
        Gradient boosting's leaves show their raw-score values (learning rate
        applied, the baseline not added).
    """
    sections, headed = _sections(decision_tree, tree_index, feature_names, class_names, category_names, "feature_{}")
    texts = [_section_text(section, max_depth, spacing, decimals, show_weights) for section in sections]
    if not headed:
        return "".join(texts)
    return "\n".join(f"{section.title}\n{text}" for section, text in zip(sections, texts))


def _section_text(section, max_depth, spacing, decimals, show_weights):
    tree = section.tree
    lines = []

    def format_threshold(threshold):
        return f"{threshold:.{decimals}f}"

    def leaf_text(node):
        value = tree.value[node, 0]
        if section.class_names is None:
            return "value: [" + ", ".join(f"{v:.{decimals}f}" for v in value) + "]"
        text = f"class: {section.class_names[int(np.argmax(value))]}"
        if show_weights:
            weights = value * tree.weighted_n_node_samples[node]
            text = "weights: [" + ", ".join(f"{w:.{decimals}f}" for w in weights) + "] " + text
        return text

    def visit(node, depth):
        indent = ("|" + " " * spacing) * depth
        indent = indent[:-spacing] + "-" * spacing
        if tree.children_left[node] == TREE_LEAF:
            lines.append(f"{indent} {leaf_text(node)}")
            return
        if depth > max_depth + 1:
            lines.append(f"{indent} truncated branch of depth {_subtree_depth(tree, node)}")
            return
        split = _split(section, node, format_threshold)
        for child, relation in zip(split.children, split.relations):
            marker = _missing_marker(split) if child == split.missing_child else ""
            lines.append(f"{indent} {split.feature_name} {relation}{marker}")
            visit(child, depth + 1)

    visit(0, 1)
    return "\n".join(lines) + "\n"


# --- the drawn trees of export_graphviz and plot_tree ---------------------------------------------------


class _DrawnNode(NamedTuple):
    """A node box of a drawn tree, in depth-first order.

    Attributes
    ----------
    node : int
        The node's index in its tree.
    depth : int
    parent : int
        The parent's position in the drawing; -1 at the root.
    edge_label : str or None
        ``True``/``False`` under a binary root, the branch's relation under a
        ``MULTIWAY`` split (``= a``).
    lines : tuple of str
        The box's text, ``("(...)",)`` for a truncated branch.
    fill : str or None
        ``#rrggbb`` when filled.
    truncated : bool
    """

    node: int
    depth: int
    parent: int
    edge_label: object
    lines: tuple
    fill: object
    truncated: bool


def _color_brew(n):
    """``n`` colours of equally spaced hues (scikit-learn's ``sklearn.tree._export._color_brew``), as (r, g, b)."""
    saturation, value = 0.75, 0.9
    chroma = saturation * value
    shift = value - chroma
    colors = []
    for hue in np.arange(25, 385, 360.0 / n).astype(int):
        h_bar = hue / 60.0
        x = chroma * (1 - abs((h_bar % 2) - 1))
        rgb = [(chroma, x, 0), (x, chroma, 0), (0, chroma, x), (0, x, chroma), (x, 0, chroma), (chroma, 0, x),
               (chroma, x, 0)][int(h_bar)]
        colors.append([int(255 * (component + shift)) for component in rgb])
    return colors


class _Drawing:
    """The node boxes of ``export_graphviz`` and ``plot_tree``: scikit-learn's text and colours.

    Parameters as ``export_graphviz``'s; ``show_classes``: a ``class = ...`` line
    at classification nodes.
    """

    def __init__(self, *, max_depth, label, filled, impurity, node_ids, proportion, precision, show_classes):
        self.max_depth = max_depth
        self.label = label
        self.filled = filled
        self.impurity = impurity
        self.node_ids = node_ids
        self.proportion = proportion
        self.precision = precision
        self.show_classes = show_classes

    def nodes(self, section):
        """The ``_DrawnNode``s of ``section``'s tree, depth first."""
        tree = section.tree
        colors = self._colors(section)
        drawn = []

        def visit(node, depth, parent, edge_label):
            if self.max_depth is not None and depth > self.max_depth:
                fill = _TRUNCATED_FILL if self.filled else None
                drawn.append(_DrawnNode(node, depth, parent, edge_label, ("(...)",), fill, True))
                return
            split = None if tree.children_left[node] == TREE_LEAF else _split(section, node, self._round)
            fill = self._fill(colors, tree.value[node, 0]) if self.filled else None
            drawn.append(_DrawnNode(node, depth, parent, edge_label, self._lines(section, node, split), fill, False))
            if split is None:
                return
            position = len(drawn) - 1
            if tree.split_type[node] == MULTIWAY:
                labels = split.relations
            elif parent == -1 and (self.max_depth is None or self.max_depth > 0):
                labels = ["True", "False"]  # scikit-learn's, under a root whose children are drawn in full
            else:
                labels = [None, None]
            for child, label in zip(split.children, labels):
                visit(child, depth + 1, position, label)

        visit(0, 0, -1, None)
        return drawn

    def _round(self, number):
        return str(round(number, self.precision))

    def _lines(self, section, node, split):
        """The text lines of a node's box (scikit-learn's ``node_to_str``)."""
        tree = section.tree
        labels = self.label == "all" or (self.label == "root" and node == 0)
        lines = []
        if self.node_ids:
            lines.append(("node #" if labels else "#") + str(node))
        if split is not None:
            if tree.split_type[node] == MULTIWAY:
                lines.append(split.feature_name)
            else:
                lines.append(f"{split.feature_name} {split.relations[0]}{_missing_marker(split)}")
        if self.impurity:
            lines.append((f"{section.criterion} = " if labels else "") + self._round(tree.impurity[node]))
        if self.proportion:
            samples = str(round(100.0 * tree.n_node_samples[node] / float(tree.n_node_samples[0]), 1)) + "%"
        else:
            samples = str(tree.n_node_samples[node])
        lines.append(("samples = " if labels else "") + samples)
        lines.append(("value = " if labels else "") + self._value_text(section, node))
        if self.show_classes and section.class_names is not None:
            name = section.class_names[int(np.argmax(tree.value[node, 0]))]
            lines.append(("class = " if labels else "") + str(name))
        return tuple(lines)

    def _value_text(self, section, node):
        """Class counts (or proportions) in brackets, or the regression value."""
        value = section.tree.value[node, 0]
        if section.class_names is None:
            return str(np.around(value, self.precision)[0])
        if not self.proportion:
            value = value * section.tree.weighted_n_node_samples[node]
            # Counts of unweighted rows: proportions times the weight may miss the integer by a rounding error.
            integral = np.abs(value - np.round(value)) <= 1e-9 * np.maximum(1.0, np.abs(value))
            if np.all(integral):
                return "[" + ", ".join(str(int(v)) for v in np.round(value)) + "]"
        return "[" + ", ".join(str(v) for v in np.around(value, self.precision)) + "]"

    def _colors(self, section):
        """Colour per class, or one colour and the range of values that its intensity spans."""
        tree = section.tree
        if section.class_names is not None:
            return _color_brew(tree.value.shape[2]), None
        bounds = (np.min(tree.value), np.max(tree.value))
        return _color_brew(1), bounds if bounds[0] != bounds[1] else None

    @staticmethod
    def _fill(colors, value):
        """scikit-learn's fill: the majority class's colour, as intense as the node is pure (classification),
        or one colour as intense as the value is high within the tree's range."""
        rgb, bounds = colors
        if bounds is None:
            color = rgb[int(np.argmax(value))]
            ordered = np.sort(value)[::-1]
            alpha = 0.0 if ordered.shape[0] == 1 else (ordered[0] - ordered[1]) / (1 - ordered[1])
        else:
            color = rgb[0]
            alpha = (value[0] - bounds[0]) / (bounds[1] - bounds[0])
        return "#%02x%02x%02x" % tuple(int(round(alpha * c + (1 - alpha) * 255, 0)) for c in color)


# --- DOT ------------------------------------------------------------------------------------------------


@validate_params(
    dict(
        _DRAWING_CONSTRAINTS,
        out_file=[str, None, HasMethods("write")],
        rotate=["boolean"],
        fontname=[str],
    ),
    prefer_skip_nested_validation=True,
)
def export_graphviz(
    decision_tree, out_file=None, *, tree_index=None, max_depth=None, feature_names=None, class_names=None,
    category_names=None, label="all", filled=False, impurity=True, node_ids=False, proportion=False, rotate=False,
    rounded=False, precision=3, fontname="helvetica",
):
    """Fitted trees in Graphviz's DOT language, in the layout of ``sklearn.tree.export_graphviz``.

    Render with, e.g., ``dot -Tpng tree.dot -o tree.png``. scikit-learn's
    ``leaves_parallel`` and ``special_characters`` are not offered.

    Parameters
    ----------
    decision_tree : fitted gpuforest tree or tree ensemble, or gpuforest.tree.Tree
        As in ``export_text``.
    out_file : str or file-like, default=None
        A path or an object with ``write``; None returns the text.
    tree_index : int, default=None
        The member of an ensemble to export; None: every member, each a
        graph of its own labelled ``tree i``.
    max_depth : int, default=None
        Deeper nodes are drawn as ``(...)``.
    feature_names : array-like of str of shape (n_features,), default=None
        None: ``x[0]``, ``x[1]``, ...
    class_names : array-like of shape (n_classes,) or True, default=None
        A ``class = ...`` line at each classification node: these names, or
        ``y[k]`` with True; none with None.
    category_names : mapping or array-like of shape (n_features,), default=None
        As in ``export_text``.
    label : {"all", "root", "none"}, default="all"
        Which nodes name their values (``gini = ``, ``samples = ``, ...).
    filled : bool, default=False
        Colour nodes by majority class and purity (classification) or value.
    impurity : bool, default=True
    node_ids : bool, default=False
    proportion : bool, default=False
        Samples as a percentage of the root's, class values as proportions.
    rotate : bool, default=False
        Draw the tree left to right.
    rounded : bool, default=False
    precision : int, default=3
        Digits of thresholds, impurities and values.
    fontname : str, default="helvetica"

    Returns
    -------
    dot_data : str, list of str or None
        The DOT text when ``out_file`` is None: one graph, or a list of one
        graph per member for an ensemble with ``tree_index=None``. A file
        receives the graphs one after the other (``dot -Tpng -O`` renders each).
    """
    sections, headed = _sections(
        decision_tree, tree_index, feature_names, None if class_names is False else class_names, category_names,
        "x[{}]",
    )
    drawing = _Drawing(
        max_depth=max_depth, label=label, filled=filled, impurity=impurity, node_ids=node_ids, proportion=proportion,
        precision=precision, show_classes=class_names is not None and class_names is not False,
    )
    styles = [style for style, on in (("filled", filled), ("rounded", rounded)) if on]
    style = f', style="{", ".join(styles)}", color="black"' if styles else ""
    header = ["digraph Tree {", f'node [shape=box{style}, fontname="{fontname}"] ;', f'edge [fontname="{fontname}"] ;']
    if rotate:
        header.append("rankdir=LR ;")
    graphs = []
    for section in sections:
        title = [f'label="{_dot_escape(section.title)}" ;', 'labelloc="t" ;'] if headed else []
        graphs.append("\n".join(header + title + _dot_lines(drawing.nodes(section), rotate)) + "\n}")
    if out_file is None:
        return graphs if headed else graphs[0]
    if isinstance(out_file, str):
        with open(out_file, "w", encoding="utf-8") as file:
            file.write("\n".join(graphs))
    else:
        out_file.write("\n".join(graphs))
    return None


def _dot_escape(text):
    return text.replace('"', '\\"')


def _dot_lines(drawn, rotate):
    """DOT statements of one tree's drawn nodes and edges."""
    # scikit-learn's angles of the True/False labels at the root's edges.
    angles = {"True": -45 if rotate else 45, "False": 45 if rotate else -45}
    lines = []
    for box in drawn:
        node_id = box.node
        text = "\\n".join(_dot_escape(line) for line in box.lines)
        fill = "" if box.fill is None else f', fillcolor="{box.fill}"'
        lines.append(f'{node_id} [label="{text}"{fill}] ;')
        if box.parent < 0:
            continue
        edge = f"{drawn[box.parent].node} -> {node_id}"
        if box.edge_label in angles:
            edge += f' [labeldistance=2.5, labelangle={angles[box.edge_label]}, headlabel="{box.edge_label}"]'
        elif box.edge_label is not None:
            edge += f' [label="{_dot_escape(box.edge_label)}"]'
        lines.append(edge + " ;")
    return lines


# --- matplotlib -----------------------------------------------------------------------------------------


@validate_params(
    dict(_DRAWING_CONSTRAINTS, ax="no_validation", fontsize=[Interval(Integral, 0, None, closed="left"), None]),
    prefer_skip_nested_validation=True,
)
def plot_tree(
    decision_tree, *, tree_index=None, max_depth=None, feature_names=None, class_names=None, category_names=None,
    label="all", filled=False, impurity=True, node_ids=False, proportion=False, rounded=False, precision=3, ax=None,
    fontsize=None,
):
    """Draw fitted trees with matplotlib (the optional extra ``gpuforest[plot]``), as ``sklearn.tree.plot_tree``.

    The boxes are ``export_graphviz``'s; leaves are spread evenly in
    depth-first order and each parent is centred over its children.

    Parameters
    ----------
    decision_tree, tree_index, max_depth, feature_names, class_names, category_names, label, filled, impurity,
    node_ids, proportion, rounded, precision
        As in ``export_graphviz``; feature names default to ``x[i]``.
    ax : matplotlib Axes or sequence of Axes, default=None
        An Axes per exported tree (cleared first). None: the current Axes for
        one tree; for several, a grid of Axes in the current figure (cleared),
        each titled ``tree i``.
    fontsize : int, default=None
        None: the largest size at which the boxes do not overlap.

    Returns
    -------
    annotations : list of matplotlib.text.Annotation
        The boxes and edge labels of every drawn tree.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError("plot_tree needs matplotlib: pip install 'gpuforest[plot]'.") from error
    sections, headed = _sections(
        decision_tree, tree_index, feature_names, None if class_names is False else class_names, category_names,
        "x[{}]",
    )
    drawing = _Drawing(
        max_depth=max_depth, label=label, filled=filled, impurity=impurity, node_ids=node_ids, proportion=proportion,
        precision=precision, show_classes=class_names is not None and class_names is not False,
    )
    if ax is None and len(sections) == 1:
        axes = [plt.gca()]
    elif ax is None:
        figure = plt.gcf()
        figure.clear()
        n_columns = math.ceil(math.sqrt(len(sections)))
        axes = figure.subplots(math.ceil(len(sections) / n_columns), n_columns, squeeze=False).ravel()
        for unused in axes[len(sections):]:
            unused.set_axis_off()
    else:
        axes = np.ravel(np.asarray(ax, dtype=object))
        if axes.shape[0] < len(sections):
            raise ValueError(f"ax holds {axes.shape[0]} Axes for {len(sections)} trees.")
    annotations = []
    for section, axis in zip(sections, axes):
        annotations += _draw(drawing.nodes(section), axis, section.title if headed else None, rounded, fontsize)
    return annotations


def _positions(drawn):
    """Horizontal slot of each drawn node: leaves at 0, 1, 2, ... left to right, each parent centred over
    its first and last child."""
    children = [[] for _ in drawn]
    for position, box in enumerate(drawn):
        if box.parent >= 0:
            children[box.parent].append(position)
    x = np.zeros(len(drawn))
    leaves = [position for position in range(len(drawn)) if not children[position]]
    x[leaves] = np.arange(len(leaves))
    for position in reversed(range(len(drawn))):  # children come after their parent in depth-first order
        if children[position]:
            x[position] = (x[children[position][0]] + x[children[position][-1]]) / 2
    return x


def _draw(drawn, ax, title, rounded, fontsize):
    """Annotate ``ax`` with the boxes of one tree; the font fitted to the Axes unless ``fontsize`` is set."""
    import matplotlib.pyplot as plt
    from matplotlib.text import Annotation

    ax.clear()
    ax.set_axis_off()
    if title is not None:
        ax.set_title(title)
    x = _positions(drawn)
    n_columns = x.max() + 1
    n_rows = max(box.depth for box in drawn) + 1

    def xy(position):
        return (x[position] + 0.5) / n_columns, (n_rows - drawn[position].depth - 0.5) / n_rows

    text_kwargs = {"xycoords": "axes fraction"}
    if fontsize is not None:
        text_kwargs["fontsize"] = fontsize
    for position, box in enumerate(drawn):
        bbox = {"fc": box.fill or ax.get_facecolor()}
        if rounded:
            bbox["boxstyle"] = "round"
        kwargs = dict(text_kwargs, ha="center", va="center", bbox=bbox, zorder=100 - 10 * box.depth)
        text = "\n  (...)  \n" if box.truncated else "\n".join(box.lines)  # scikit-learn's larger truncated box
        if box.parent < 0:
            ax.annotate(text, xy(position), **kwargs)
            continue
        arrow = {"arrowstyle": "<-", "edgecolor": plt.rcParams["text.color"]}
        ax.annotate(text, xy(box.parent), xy(position), arrowprops=arrow, **kwargs)
        if box.edge_label is not None:
            (x0, y0), (x1, y1) = xy(box.parent), xy(position)
            # scikit-learn's True/False beside the arrows from the root; a multiway branch's label centred on its arrow
            label, ha = {"True": ("True  ", "right"), "False": ("  False", "left")}.get(
                box.edge_label, (box.edge_label, "center")
            )
            ax.annotate(label, ((x0 + x1) / 2, (y0 + y1) / 2), ha=ha, **text_kwargs)
    annotations = [child for child in ax.get_children() if isinstance(child, Annotation)]
    if fontsize is None:
        _fit_font(ax, annotations, n_columns, n_rows)
    return annotations


def _fit_font(ax, annotations, n_columns, n_rows):
    """Scale every annotation's font so that the widest box fits its column and the tallest its row
    (scikit-learn's ``plot_tree`` rule)."""
    renderer = ax.figure.canvas.get_renderer()
    for annotation in annotations:
        annotation.update_bbox_position_size(renderer)
    extents = [patch.get_window_extent() for a in annotations if (patch := a.get_bbox_patch()) is not None]
    width, height = ax.get_window_extent().width, ax.get_window_extent().height
    scale = min(width / n_columns / max(e.width for e in extents), height / n_rows / max(e.height for e in extents))
    size = annotations[0].get_fontsize() * scale
    for annotation in annotations:
        annotation.set_fontsize(size)


# --- rules ----------------------------------------------------------------------------------------------


class Rule(NamedTuple):
    """The path from a tree's root to one leaf (``export_rules``).

    Attributes
    ----------
    tree_index : int or None
        The tree's index in its ensemble; None for a lone tree.
    leaf : int
        The leaf's node index.
    conditions : tuple of str
        What the path requires of each feature, one condition per feature in
        the order the path first tests it, e.g. ``"0.50 < x <= 2.00"``,
        ``"Outlook in {sunny, rainy}"``, ``"Outlook = sunny"``; `` (or missing)``
        where missing values take the path too.
    prediction : object
        The leaf's majority class (classification) or its value (regression;
        gradient boosting: the raw score, learning rate applied).
    confidence : float
        The majority class's share of the leaf's weight (classification), or
        the leaf's value (regression).
    n_samples : int
        Training rows that reach the leaf.
    weight : float
        Their weight: a forest's bootstrap counts a row as often as it is
        drawn; gradient boosting's is the rows' hessian sum.
    support : float
        ``weight`` over the root's.
    """

    tree_index: object
    leaf: int
    conditions: tuple
    prediction: object
    confidence: float
    n_samples: int
    weight: float
    support: float

    def __str__(self):
        condition = " AND ".join(self.conditions) or "TRUE"
        return (f"IF {condition} THEN {self.prediction} "
                f"(support: {self.n_samples} rows, {self.support:.1%}; confidence: {self.confidence:.3g})")


@validate_params(
    dict(_COMMON_CONSTRAINTS, class_names=["array-like", None], decimals=[Interval(Integral, 0, None, closed="left")]),
    prefer_skip_nested_validation=True,
)
def export_rules(
    decision_tree, *, tree_index=None, feature_names=None, class_names=None, category_names=None, decimals=2,
):
    """The rule of every leaf: the conditions of its path from the root, its support and its confidence.

    Parameters
    ----------
    decision_tree, tree_index, feature_names, class_names, category_names
        As in ``export_text``.
    decimals : int, default=2
        Digits of the thresholds in the conditions.

    Returns
    -------
    rules : list of Rule
        One per leaf, tree by tree, leaves in depth-first order (left branches
        first): ``export_text``'s order. ``str(rule)`` reads
        ``IF x <= 2.50 AND ... THEN yes (support: 12 rows, 25.0%; confidence: 0.9)``;
        ``pandas.DataFrame(rules)`` gives a table of them.
    """
    sections, _ = _sections(decision_tree, tree_index, feature_names, class_names, category_names, "feature_{}")
    rules = []
    for section in sections:
        rules += _section_rules(section, decimals)
    return rules


class _FeatureCondition:
    """What a path requires of one feature: ``lower < x <= upper`` (numeric splits), or ``x`` in ``allowed``
    and not in ``excluded`` (category codes); ``missing``: whether missing values pass every split on it."""

    def __init__(self):
        self.lower, self.upper = -np.inf, np.inf
        self.allowed, self.excluded = None, set()
        self.missing = True

    def add(self, tree, node, branch, to_missing):
        """Require branch ``branch`` (0: left) of split ``node``; ``to_missing``: missing values take it."""
        kind = tree.split_type[node]
        if kind == NUMERIC:
            if branch == 0:
                self.upper = min(self.upper, tree.threshold[node])
            else:
                self.lower = max(self.lower, tree.threshold[node])
        elif kind == CATEGORICAL:
            codes = set(_left_codes(tree, node).tolist())
            if branch == 0:
                self.allowed = codes if self.allowed is None else self.allowed & codes
            else:
                self.excluded |= codes
        elif kind == MULTIWAY:
            self.allowed = {branch} if self.allowed is None else self.allowed & {branch}
        else:
            raise _split_type_error(node, kind)
        self.missing &= to_missing

    def text(self, section, feature, decimals):
        name = section.feature_names[feature]
        if self.allowed is not None:
            codes = sorted(self.allowed - self.excluded)
            if len(codes) == 1:
                text = f"{name} = {_category_name(section, feature, codes[0])}"
            else:
                text = f"{name} in {_category_set(section, feature, codes)}"
        elif self.excluded:
            text = f"{name} not in {_category_set(section, feature, sorted(self.excluded))}"
        elif self.lower > -np.inf and self.upper < np.inf:
            text = f"{self.lower:.{decimals}f} < {name} <= {self.upper:.{decimals}f}"
        elif self.upper < np.inf:
            text = f"{name} <= {self.upper:.{decimals}f}"
        else:
            text = f"{name} > {self.lower:.{decimals}f}"
        return text + (" (or missing)" if self.missing else "")


def _section_rules(section, decimals):
    tree = section.tree
    root_weight = tree.weighted_n_node_samples[0]
    rules = []

    def visit(node, path):
        children = _children(tree, node)
        if not children:
            conditions = {}  # feature -> _FeatureCondition, in the order the path first tests them
            for parent, branch in path:
                feature = int(tree.feature[parent])
                to_missing = tree.split_type[parent] != MULTIWAY and (
                    (branch == 0) == bool(tree.missing_go_to_left[parent])
                )
                conditions.setdefault(feature, _FeatureCondition()).add(tree, parent, branch, to_missing)
            value = tree.value[node, 0]
            if section.class_names is None:
                prediction = confidence = float(value[0])
            else:
                prediction = section.class_names[int(np.argmax(value))]
                confidence = float(np.max(value))
            rules.append(Rule(
                section.index, node,
                tuple(condition.text(section, feature, decimals) for feature, condition in conditions.items()),
                prediction, confidence, int(tree.n_node_samples[node]), float(tree.weighted_n_node_samples[node]),
                float(tree.weighted_n_node_samples[node] / root_weight),
            ))
            return
        for branch, child in enumerate(children):
            visit(child, path + [(node, branch)])

    visit(0, [])
    return rules



# --- a table of nodes -----------------------------------------------------------------------------------


@validate_params(_COMMON_CONSTRAINTS, prefer_skip_nested_validation=True)
def trees_to_dataframe(decision_tree, *, tree_index=None, feature_names=None, category_names=None):
    """Every node of fitted trees as a row of a pandas DataFrame, in the columns of XGBoost's
    ``Booster.trees_to_dataframe``.

    Parameters
    ----------
    decision_tree : fitted gpuforest tree or tree ensemble, or gpuforest.tree.Tree
        As in ``export_text``; multiway splits have no row layout and are refused.
    tree_index : int, default=None
        The member of an ensemble; None: every member, one after the other.
    feature_names : array-like of str of shape (n_features,), default=None
        None: ``f0``, ``f1``, ... (XGBoost's names).
    category_names : mapping or array-like of shape (n_features,), default=None
        As in ``export_text``.

    Returns
    -------
    nodes : pandas.DataFrame of shape (n_nodes, n_columns)
        ``Tree`` (the member's index; 0 for a lone tree), ``Node`` (its index
        in the tree), ``ID`` (``"tree-node"``), ``Feature`` (``"Leaf"`` at
        leaves), ``Split`` (a numeric split's threshold: ``x <= Split`` goes to
        ``Yes``), ``Yes``, ``No`` and ``Missing`` (children's IDs), ``Gain``
        (a split's decrease of the weighted impurity ``w_node i_node - w_left
        i_left - w_right i_right``, the mean decrease in impurity of Breiman et
        al. (1984) before normalisation; a leaf's value where trees hold one
        value per node, as XGBoost's), ``Cover`` (the node's training weight);
        ``Category`` (the categories going to ``Yes``) when a split is
        categorical; ``Value`` (each node's class proportions) for
        classification trees.
    """
    try:
        import pandas as pd
    except ImportError as error:
        raise ImportError("trees_to_dataframe needs pandas: pip install pandas.") from error
    sections, _ = _sections(decision_tree, tree_index, feature_names, None, category_names, "f{}")
    rows = []
    for section in sections:
        tree = section.tree
        tree_number = section.index or 0
        weighted_impurity = tree.weighted_n_node_samples * tree.impurity
        for node in range(tree.node_count):
            node_id = f"{tree_number}-{node}"
            row = {"Tree": tree_number, "Node": node, "ID": node_id, "Feature": "Leaf", "Split": np.nan,
                   "Yes": None, "No": None, "Missing": None, "Gain": np.nan,
                   "Cover": tree.weighted_n_node_samples[node], "Category": None}
            if tree.value.shape[2] > 1:
                row["Value"] = tree.value[node, 0].copy()
            elif tree.children_left[node] == TREE_LEAF:
                row["Gain"] = tree.value[node, 0, 0]
            if tree.children_left[node] != TREE_LEAF:
                if tree.split_type[node] == MULTIWAY:
                    raise ValueError(f"Node {node} of {section.title} is a multiway split, which has no Yes/No row.")
                split = _split(section, node, float)
                feature = int(tree.feature[node])
                left, right = split.children
                row.update(Feature=split.feature_name, Yes=f"{tree_number}-{left}", No=f"{tree_number}-{right}",
                           Missing=None if split.missing_child == TREE_LEAF else f"{tree_number}-{split.missing_child}",
                           Gain=weighted_impurity[node] - weighted_impurity[left] - weighted_impurity[right])
                if tree.split_type[node] == CATEGORICAL:
                    row["Category"] = [_category_name(section, feature, code) for code in _left_codes(tree, node)]
                else:
                    row["Split"] = tree.threshold[node]
            rows.append(row)
    nodes = pd.DataFrame(rows)
    if nodes["Category"].isna().all():
        nodes = nodes.drop(columns="Category")
    return nodes
