"""Exports of fitted trees (``gpuforest.export``) against scikit-learn's exports and hand-derived trees.

References: scikit-learn's ``export_text``, ``export_graphviz`` and ``plot_tree``
on scikit-learn trees of the same structure (integer features: the bins are the
exact CART candidates, and the data has no tied splits, checked node by node);
for ensembles the members' own estimators (``estimators_``) or hand-derived
leaves; for categorical and multiway splits ``Tree``s built by hand with the
text, DOT, positions and rules derived from them by hand.
"""

import functools
import io
import re
import sys

import numpy as np
import pytest
from sklearn import tree as sk_tree
from sklearn.base import is_classifier
from sklearn.exceptions import NotFittedError

import gpuforest
from gpuforest import export_graphviz, export_rules, export_text, plot_tree
from gpuforest.tree import CATEGORICAL, MULTIWAY, TREE_LEAF, TREE_UNDEFINED, Tree

FEATURE_NAMES = ["a", 'b "in"', "c"]  # a quote: DOT escapes it


def _data():
    """40 rows of 3 integer features; labels of 3 classes, a regression target and weights."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 10, (40, 3)).astype(float)
    y = ((X[:, 0] + 2 * X[:, 1] + rng.integers(0, 6, 40)) > 14).astype(int) + (X[:, 2] > 6)
    target = X[:, 0] * 1.5 + X[:, 1] ** 2 / 4 + rng.normal(0, 0.5, 40)
    weight = rng.integers(1, 4, 40) * 0.5
    return X, y, target, weight


@functools.cache
def _tree_pair(kind, weighted=False):
    """A gpuforest tree and scikit-learn's of depth 3 on ``_data``: ``kind`` is "classifier" or "regressor"."""
    X, y, target, weight = _data()
    labels = np.array(["low", "mid", "high"])[y]
    ours, theirs = {
        "classifier": (gpuforest.DecisionTreeClassifier, sk_tree.DecisionTreeClassifier),
        "regressor": (gpuforest.DecisionTreeRegressor, sk_tree.DecisionTreeRegressor),
    }[kind]
    target = labels if kind == "classifier" else target
    sample_weight = weight if weighted else None
    return (
        ours(max_depth=3, device="cpu").fit(X, target, sample_weight=sample_weight),
        theirs(max_depth=3, random_state=0).fit(X, target, sample_weight=sample_weight),
    )


def _matching_nodes(ours, theirs):
    """Our node index -> scikit-learn's node at the same place, checking that the trees split alike."""
    matching = {}

    def visit(node, their_node):
        matching[node] = their_node
        assert (ours.children_left[node] == TREE_LEAF) == (theirs.children_left[their_node] == -1)
        if ours.children_left[node] != TREE_LEAF:
            assert ours.feature[node] == theirs.feature[their_node]
            assert ours.threshold[node] == theirs.threshold[their_node]
            visit(ours.children_left[node], theirs.children_left[their_node])
            visit(ours.children_right[node], theirs.children_right[their_node])

    visit(0, 0)
    return matching


def _without_missing(text):
    """scikit-learn's exports do not say where missing values go."""
    return re.sub(r" \(missing: (left|right)\)", "", text)


def _in_their_numbering(dot, matching):
    """``dot`` with our node ids (statements, edges, ``#k`` labels) replaced by scikit-learn's."""
    dot = re.sub(r"^(\d+) (\[|->)", lambda m: f"{matching[int(m.group(1))]} {m.group(2)}", dot, flags=re.M)
    dot = re.sub(r"-> (\d+)", lambda m: f"-> {matching[int(m.group(1))]}", dot)
    return re.sub(r'(label="(?:node )?#)(\d+)', lambda m: f"{m.group(1)}{matching[int(m.group(2))]}", dot)


def _tree(n_features, children, feature, threshold, missing_go_to_left, value, n_node_samples, split_type=(),
          bitsets=None):
    """A ``Tree`` built by hand.

    ``children``: ``(children_left, children_right)`` per split node, None per
    leaf; ``split_type``: per node (default all ``NUMERIC``); ``bitsets``:
    node -> the category codes that go left. Weights are the row counts,
    impurities 0.
    """
    node_count = len(children)
    children_left = np.array([TREE_LEAF if pair is None else pair[0] for pair in children], dtype=np.int32)
    children_right = np.array([TREE_LEAF if pair is None else pair[1] for pair in children], dtype=np.int32)
    depth = np.zeros(node_count, dtype=np.int64)
    for node, pair in enumerate(children):  # parents come before their children
        if pair is not None:
            depth[pair[0]:pair[1] + 1] = depth[node] + 1
    tree = Tree(
        n_features, children_left, children_right, np.array(feature, dtype=np.int32),
        np.array(threshold, dtype=np.float64), np.zeros(node_count, dtype=np.int32),
        np.array(missing_go_to_left, dtype=bool), np.array(value, dtype=np.float64).reshape(node_count, 1, -1),
        np.zeros(node_count), np.array(n_node_samples, dtype=np.int64), np.array(n_node_samples, dtype=np.float64),
        depth,
    )
    tree.split_type[:len(split_type)] = split_type
    for node, codes in (bitsets or {}).items():
        for code in codes:
            tree.category_bitset[node, code // 32] |= np.uint32(1 << (code % 32))
    return tree


def _weather_tree():
    """ID3's tree of Quinlan's weather data (1986) with C4.5's humidity threshold: a multiway split on
    Outlook (sunny, overcast, rainy), a numeric one on Humidity and a categorical one on Windy (false goes
    left). Classes (no, yes); rows per node from the 14 days."""
    U = TREE_UNDEFINED
    return _tree(
        4,
        children=[(1, 3), (4, 5), None, (6, 7), None, None, None, None],
        feature=[0, 2, U, 3, U, U, U, U],
        threshold=[U, 70.0, U, U, U, U, U, U],
        missing_go_to_left=[False, False, False, True, False, False, False, False],
        value=[[5 / 14, 9 / 14], [3 / 5, 2 / 5], [0, 1], [2 / 5, 3 / 5], [0, 1], [1, 0], [0, 1], [1, 0]],
        n_node_samples=[14, 5, 4, 5, 2, 3, 3, 2],
        split_type=[MULTIWAY, 0, 0, CATEGORICAL],
        bitsets={3: [0]},
    )


WEATHER_NAMES = dict(
    feature_names=["Outlook", "Temperature", "Humidity", "Windy"], class_names=["no", "yes"],
    category_names={"Outlook": ["sunny", "overcast", "rainy"], 3: ["false", "true"]},
)


def _merging_tree():
    """A regression tree that tests numeric feature x0 twice on a path (``x0 <= 5``, then ``x0 <= 2``) and
    categorical feature x1 twice (``x1 in {0, 1, 2}``, then ``x1 in {1}``)."""
    U = TREE_UNDEFINED
    return _tree(
        2,
        children=[(1, 2), (3, 4), None, None, (5, 6), (7, 8), None, None, None],
        feature=[0, 0, U, U, 1, 1, U, U, U],
        threshold=[5.0, 2.0, U, U, U, U, U, U, U],
        missing_go_to_left=[True, False, False, False, True, False, False, False, False],
        value=[5.0, 3.0, 10.0, 1.0, 5.0, 7.3, 6.0, 7.0, 8.0],
        n_node_samples=[12, 8, 4, 3, 5, 3, 2, 2, 1],
        split_type=[0, 0, 0, 0, CATEGORICAL, CATEGORICAL],
        bitsets={4: [0, 1, 2], 5: [1]},
    )


# --- single trees against scikit-learn ----------------------------------------------------------------


@pytest.mark.parametrize("kind, weighted", [("classifier", False), ("classifier", True), ("regressor", False)])
@pytest.mark.parametrize("options", [
    {},
    {"feature_names": FEATURE_NAMES, "decimals": 3, "spacing": 2, "max_depth": 1},
    {"show_weights": True, "max_depth": 0},
])
def test_export_text_equals_scikit_learn(kind, weighted, options):
    ours, theirs = _tree_pair(kind, weighted)
    _matching_nodes(ours.tree_, theirs.tree_)
    assert _without_missing(export_text(ours, **options)) == sk_tree.export_text(theirs, **options)


@pytest.mark.parametrize("kind, weighted", [("classifier", False), ("classifier", True), ("regressor", False)])
@pytest.mark.parametrize("options", [
    {"filled": True},
    {"feature_names": FEATURE_NAMES, "class_names": True, "node_ids": True, "proportion": True, "rounded": True,
     "label": "root", "precision": 2},
    {"max_depth": 1, "impurity": False, "label": "none", "rotate": True, "filled": True, "fontname": "times"},
])
def test_export_graphviz_equals_scikit_learn(kind, weighted, options):
    ours, theirs = _tree_pair(kind, weighted)
    matching = _matching_nodes(ours.tree_, theirs.tree_)
    dot = export_graphviz(ours, **options)
    assert _in_their_numbering(_without_missing(dot), matching) == sk_tree.export_graphviz(theirs, **options)


def test_export_graphviz_writes_to_a_path_or_a_file(tmp_path):
    ours, _ = _tree_pair("classifier")
    export_graphviz(ours, str(tmp_path / "tree.dot"))
    with open(tmp_path / "file.dot", "w") as file:
        assert export_graphviz(ours, file) is None
    assert (tmp_path / "tree.dot").read_text() == (tmp_path / "file.dot").read_text() == export_graphviz(ours)


def test_plot_tree_draws_scikit_learns_boxes():
    pyplot = pytest.importorskip("matplotlib.pyplot")
    ours, theirs = _tree_pair("classifier")
    _matching_nodes(ours.tree_, theirs.tree_)
    options = dict(filled=True, max_depth=2, class_names=["x", "y", "z"], feature_names=FEATURE_NAMES)
    figure = pyplot.figure(figsize=(8, 5))
    try:
        annotations = plot_tree(ours, **options)
        figure.clear()
        expected = sk_tree.plot_tree(theirs, **options)
        assert [_without_missing(a.get_text()) for a in annotations] == [a.get_text() for a in expected]
        for a, b in zip(annotations, expected):
            if a.get_bbox_patch() is not None and "(...)" not in a.get_text():
                assert a.get_bbox_patch().get_facecolor() == b.get_bbox_patch().get_facecolor()
    finally:
        pyplot.close(figure)


def test_plot_tree_without_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # import fails as if not installed
    with pytest.raises(ImportError, match=r"gpuforest\[plot\]"):
        plot_tree(_weather_tree())


def test_rules_of_a_fitted_tree_hold_on_the_training_rows():
    X, y, _, weight = _data()
    model = gpuforest.DecisionTreeClassifier(max_depth=3, device="cpu").fit(X, y, sample_weight=weight)
    rules = export_rules(model)
    leaves = model.apply(X)
    assert sorted(rule.leaf for rule in rules) == sorted(np.unique(leaves))
    for rule in rules:
        reaching = leaves == rule.leaf
        class_weight = np.bincount(y[reaching], weights=weight[reaching], minlength=3)
        assert rule.tree_index is None
        assert rule.n_samples == np.count_nonzero(reaching)
        assert rule.weight == pytest.approx(weight[reaching].sum())
        assert rule.support == pytest.approx(weight[reaching].sum() / weight.sum())
        assert rule.prediction == np.argmax(class_weight)
        assert rule.confidence == pytest.approx(class_weight.max() / class_weight.sum())
        assert len(rule.conditions) <= 3  # merged: one per feature


# --- categorical and multiway splits on hand-built trees -------------------------------------------------


def test_export_text_renders_multiway_and_categorical_splits():
    assert export_text(_weather_tree(), **WEATHER_NAMES) == (
        "|--- Outlook = sunny\n"
        "|   |--- Humidity <= 70.00\n"
        "|   |   |--- class: yes\n"
        "|   |--- Humidity >  70.00 (missing: right)\n"
        "|   |   |--- class: no\n"
        "|--- Outlook = overcast\n"
        "|   |--- class: yes\n"
        "|--- Outlook = rainy\n"
        "|   |--- Windy in {false} (missing: left)\n"
        "|   |   |--- class: yes\n"
        "|   |--- Windy not in {false}\n"
        "|   |   |--- class: no\n"
    )
    by_position = [["sunny", "overcast", "rainy"], None, None, ["false", "true"]]  # a list per feature
    assert export_text(_weather_tree(), **dict(WEATHER_NAMES, category_names=by_position)) == export_text(
        _weather_tree(), **WEATHER_NAMES
    )
    # Without names: features feature_i, categories their codes, classes 0 .. n_values - 1.
    assert export_text(_weather_tree(), max_depth=0) == (
        "|--- feature_0 = 0\n"
        "|   |--- truncated branch of depth 2\n"
        "|--- feature_0 = 1\n"
        "|   |--- class: 1\n"
        "|--- feature_0 = 2\n"
        "|   |--- truncated branch of depth 2\n"
    )
    assert export_text(_merging_tree(), feature_names=["x0", "x1"], decimals=1) == (
        "|--- x0 <= 5.0 (missing: left)\n"
        "|   |--- x0 <= 2.0\n"
        "|   |   |--- value: [1.0]\n"
        "|   |--- x0 >  2.0 (missing: right)\n"
        "|   |   |--- x1 in {0, 1, 2} (missing: left)\n"
        "|   |   |   |--- x1 in {1}\n"
        "|   |   |   |   |--- value: [7.0]\n"
        "|   |   |   |--- x1 not in {1} (missing: right)\n"
        "|   |   |   |   |--- value: [8.0]\n"
        "|   |   |--- x1 not in {0, 1, 2}\n"
        "|   |   |   |--- value: [6.0]\n"
        "|--- x0 >  5.0\n"
        "|   |--- value: [10.0]\n"
    )


def test_export_graphviz_renders_multiway_and_categorical_splits():
    assert export_graphviz(_weather_tree(), impurity=False, **WEATHER_NAMES) == (
        "digraph Tree {\n"
        'node [shape=box, fontname="helvetica"] ;\n'
        'edge [fontname="helvetica"] ;\n'
        '0 [label="Outlook\\nsamples = 14\\nvalue = [5, 9]\\nclass = yes"] ;\n'
        '1 [label="Humidity <= 70.0 (missing: right)\\nsamples = 5\\nvalue = [3, 2]\\nclass = no"] ;\n'
        '0 -> 1 [label="= sunny"] ;\n'
        '4 [label="samples = 2\\nvalue = [0, 2]\\nclass = yes"] ;\n'
        "1 -> 4 ;\n"
        '5 [label="samples = 3\\nvalue = [3, 0]\\nclass = no"] ;\n'
        "1 -> 5 ;\n"
        '2 [label="samples = 4\\nvalue = [0, 4]\\nclass = yes"] ;\n'
        '0 -> 2 [label="= overcast"] ;\n'
        '3 [label="Windy in {false} (missing: left)\\nsamples = 5\\nvalue = [2, 3]\\nclass = yes"] ;\n'
        '0 -> 3 [label="= rainy"] ;\n'
        '6 [label="samples = 3\\nvalue = [0, 3]\\nclass = yes"] ;\n'
        "3 -> 6 ;\n"
        '7 [label="samples = 2\\nvalue = [2, 0]\\nclass = no"] ;\n'
        "3 -> 7 ;\n"
        "}"
    )


def test_plot_tree_places_multiway_children_under_their_parent():
    pyplot = pytest.importorskip("matplotlib.pyplot")
    figure = pyplot.figure()
    try:
        annotations = plot_tree(_weather_tree(), impurity=False, **WEATHER_NAMES)
    finally:
        pyplot.close(figure)
    position = {a.get_text().split("\n")[0]: a.xyann for a in annotations}
    # Leaves 4, 5, 2, 6, 7 in columns 0 .. 4 of 5; nodes 1 and 3 over their children (0.5, 3.5), the root
    # over them (2.0); rows at depth 0, 1, 2 of 3; an edge label half way along its arrow.
    assert position["Outlook"] == pytest.approx((2.5 / 5, 2.5 / 3))
    assert position["Humidity <= 70.0 (missing: right)"] == pytest.approx((1.0 / 5, 1.5 / 3))
    assert position["Windy in {false} (missing: left)"] == pytest.approx((4.0 / 5, 1.5 / 3))
    assert position["= overcast"] == pytest.approx(((2.5 + 2.5) / 10, (2.5 + 1.5) / 6))
    assert position["= rainy"] == pytest.approx(((2.5 + 4.0) / 10, (2.5 + 1.5) / 6))
    leaf_columns = sorted(a.xyann[0] for a in annotations if a.get_text().startswith("samples"))
    assert leaf_columns == pytest.approx([0.5 / 5, 1.5 / 5, 2.5 / 5, 3.5 / 5, 4.5 / 5])


def test_export_rules_merge_the_conditions_on_each_feature():
    rules = export_rules(_merging_tree(), feature_names=["x0", "x1"])
    assert [(rule.leaf, rule.conditions) for rule in rules] == [
        (3, ("x0 <= 2.00",)),
        (7, ("2.00 < x0 <= 5.00 (or missing)", "x1 = 1")),
        (8, ("2.00 < x0 <= 5.00 (or missing)", "x1 in {0, 2} (or missing)")),
        (6, ("2.00 < x0 <= 5.00 (or missing)", "x1 not in {0, 1, 2}")),
        (2, ("x0 > 5.00",)),
    ]
    assert [(rule.prediction, rule.confidence, rule.n_samples, rule.support) for rule in rules] == [
        (1.0, 1.0, 3, 3 / 12), (7.0, 7.0, 2, 2 / 12), (8.0, 8.0, 1, 1 / 12), (6.0, 6.0, 2, 2 / 12),
        (10.0, 10.0, 4, 4 / 12),
    ]


def test_export_rules_of_the_weather_tree():
    rules = export_rules(_weather_tree(), **WEATHER_NAMES)
    assert [(rule.conditions, rule.prediction, rule.confidence, rule.n_samples) for rule in rules] == [
        (("Outlook = sunny", "Humidity <= 70.00"), "yes", 1.0, 2),
        (("Outlook = sunny", "Humidity > 70.00 (or missing)"), "no", 1.0, 3),
        (("Outlook = overcast",), "yes", 1.0, 4),
        (("Outlook = rainy", "Windy = false (or missing)"), "yes", 1.0, 3),
        (("Outlook = rainy", "Windy not in {false}"), "no", 1.0, 2),
    ]
    assert str(rules[2]) == "IF Outlook = overcast THEN yes (support: 4 rows, 28.6%; confidence: 1)"


# --- ensembles ------------------------------------------------------------------------------------------


def _headed(texts):
    return "\n".join(f"tree {index}\n{text}" for index, text in enumerate(texts))


@pytest.mark.parametrize("make", [
    lambda: gpuforest.RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0, device="cpu"),
    lambda: gpuforest.ExtraTreesRegressor(n_estimators=2, max_depth=2, random_state=0, device="cpu"),
    lambda: gpuforest.AdaBoostClassifier(n_estimators=2, random_state=0),
    lambda: gpuforest.AdaBoostRegressor(n_estimators=2, random_state=0),
    lambda: gpuforest.BaggingRegressor(n_estimators=2, random_state=0),  # grown as a batched forest
], ids=["forest", "extra_trees", "adaboost_classifier", "adaboost_regressor", "bagging_forest"])
def test_ensemble_sections_are_its_members(make):
    X, y, target, _ = _data()
    model = make()
    model.fit(X, np.array(["low", "mid", "high"])[y] if is_classifier(model) else target)
    members = model.estimators_
    assert export_text(model) == _headed([export_text(member) for member in members])
    assert export_text(model, tree_index=1, feature_names=FEATURE_NAMES) == export_text(
        members[1], feature_names=FEATURE_NAMES
    )
    assert export_rules(model, tree_index=1) == [rule._replace(tree_index=1) for rule in export_rules(members[1])]
    # One DOT graph per member, the member's own graph labelled with its title.
    dots = export_graphviz(model, filled=True)
    assert len(dots) == len(members)
    for index, (dot, member) in enumerate(zip(dots, members)):
        lines = export_graphviz(member, filled=True).split("\n")
        assert dot.split("\n") == lines[:3] + [f'label="tree {index}" ;', 'labelloc="t" ;'] + lines[3:]
    assert export_graphviz(model, tree_index=0) == export_graphviz(members[0])
    written = io.StringIO()
    export_graphviz(model, written, filled=True)
    assert written.getvalue() == "\n".join(dots)


def test_plot_tree_draws_each_member_on_its_own_axes():
    pyplot = pytest.importorskip("matplotlib.pyplot")
    X, y, _, _ = _data()
    model = gpuforest.RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0, device="cpu").fit(X, y)
    figure, axes = pyplot.subplots(1, 2)
    try:
        annotations = plot_tree(model, ax=axes, fontsize=6)
        texts = [[a.get_text() for a in annotations if a.axes is axis] for axis in axes]
        assert [axis.get_title() for axis in axes] == ["tree 0", "tree 1"]
        for index, member in enumerate(model.estimators_):
            assert texts[index] == [a.get_text() for a in plot_tree(member, ax=axes[index], fontsize=6)]
        with pytest.raises(ValueError, match="ax holds 1 Axes for 2 trees"):
            plot_tree(model, ax=axes[:1])
    finally:
        pyplot.close(figure)


def test_gradient_boosting_trees_show_raw_score_leaves():
    # Squared error, learning rate 0.5, one split per round: baseline mean(y) = 2; round 0's residuals are
    # -2 | +2, so leaves -1 | +1; round 1's are -1 | +1, so leaves -0.5 | +0.5. Equal halves: missing left.
    X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0.0, 0.0, 4.0, 4.0])
    model = gpuforest.GradientBoostingRegressor(
        n_estimators=2, learning_rate=0.5, max_depth=1, min_samples_leaf=1, device="cpu"
    ).fit(X, y)
    leaves = ["-1.00", "1.00"], ["-0.50", "0.50"]
    assert export_text(model) == _headed([
        f"|--- feature_0 <= 1.50 (missing: left)\n|   |--- value: [{low}]\n"
        f"|--- feature_0 >  1.50\n|   |--- value: [{high}]\n"
        for low, high in leaves
    ])
    rules = export_rules(model, tree_index=1)
    assert [(rule.tree_index, rule.conditions, rule.prediction, rule.n_samples, rule.support) for rule in rules] == [
        (1, ("feature_0 <= 1.50 (or missing)",), pytest.approx(-0.5), 2, 0.5),
        (1, ("feature_0 > 1.50",), pytest.approx(0.5), 2, 0.5),
    ]


def test_multiclass_gradient_boosting_heads_each_tree_with_its_round_and_class():
    X, y = np.arange(6.0).reshape(-1, 1), np.array(["a", "a", "b", "b", "c", "c"])
    model = gpuforest.GradientBoostingClassifier(
        n_estimators=2, max_depth=1, min_samples_leaf=1, device="cpu"
    ).fit(X, y)
    headers = [line for line in export_text(model).splitlines() if line.startswith("tree")]
    assert headers == [f"tree {3 * r + k} (round {r}, class {c})" for r in range(2) for k, c in enumerate("abc")]


def test_bagging_members_on_feature_subsets_show_the_ensembles_features_and_labels():
    X, y, _, _ = _data()
    labels = np.array(["low", "mid", "high"])[y]
    model = gpuforest.BaggingClassifier(
        gpuforest.DecisionTreeClassifier(max_depth=2, device="cpu"), n_estimators=3, max_features=2, random_state=0
    ).fit(X, labels)
    assert model.forest_ is None  # scikit-learn's loop: members fitted on class indices and 2 features
    for index, (member, features) in enumerate(zip(model.estimators_, model.estimators_features_)):
        expected = export_text(
            member, feature_names=[FEATURE_NAMES[f] for f in features], class_names=model.classes_[member.classes_]
        )
        assert export_text(model, tree_index=index, feature_names=FEATURE_NAMES) == expected


def test_voting_members_show_the_labels_and_non_tree_members_are_refused():
    X, y, _, _ = _data()
    labels = np.array(["low", "mid", "high"])[y]
    model = gpuforest.VotingClassifier([
        ("tree", gpuforest.DecisionTreeClassifier(max_depth=2, device="cpu")),
        ("forest", gpuforest.RandomForestClassifier(n_estimators=2, max_depth=2, device="cpu")),
    ]).fit(X, labels)
    tree = model.estimators_[0]  # fitted on class indices
    assert export_text(model, tree_index=0) == export_text(tree, class_names=model.classes_[tree.classes_])
    with pytest.raises(TypeError, match="Member 1 of VotingClassifier is a RandomForestClassifier"):
        export_text(model)


# --- bad input ------------------------------------------------------------------------------------------


EXPORTS = [export_text, export_graphviz, export_rules]


@pytest.mark.parametrize("export", EXPORTS)
@pytest.mark.parametrize("estimator", [
    gpuforest.DecisionTreeClassifier(), gpuforest.RandomForestRegressor(), gpuforest.GradientBoostingClassifier(),
    gpuforest.BaggingClassifier(), gpuforest.AdaBoostRegressor(),
], ids=lambda estimator: type(estimator).__name__)
def test_unfitted_estimators_raise_not_fitted(export, estimator):
    with pytest.raises(NotFittedError):
        export(estimator)


@pytest.mark.parametrize("export", EXPORTS)
def test_bad_input_gets_a_clear_error(export):
    ours, _ = _tree_pair("classifier")
    with pytest.raises(ValueError, match="feature_names must contain 3 elements, got 2"):
        export(ours, feature_names=["a", "b"])
    with pytest.raises(ValueError, match="class_names must contain 3 elements, got 2"):
        export(ours, class_names=["a", "b"])
    with pytest.raises(ValueError, match=r"tree_index=1 is out of range: DecisionTreeClassifier has 1 tree\."):
        export(ours, tree_index=1)
    with pytest.raises(ValueError, match="tree_index"):
        export(ours, tree_index=-1)
    with pytest.raises(ValueError, match="category_names has a key 'd'"):
        export(ours, category_names={"d": ["x"]})
    with pytest.raises(ValueError, match="'Outlook' has 2 names; the tree has category code 2"):
        export(_weather_tree(), feature_names=WEATHER_NAMES["feature_names"], category_names={0: ["sun", "cloud"]})
    with pytest.raises(TypeError, match="got DecisionTreeClassifier"):
        export(sk_tree.DecisionTreeClassifier().fit([[0.0], [1.0]], [0, 1]))
    broken = _merging_tree()
    broken.split_type[0] = 7
    with pytest.raises(ValueError, match="Node 0 has split_type 7"):
        export(broken)


def test_tree_index_beyond_an_ensemble_is_out_of_range():
    X, y, _, _ = _data()
    model = gpuforest.RandomForestClassifier(n_estimators=2, max_depth=1, device="cpu").fit(X, y)
    for export in EXPORTS:
        with pytest.raises(ValueError, match="tree_index=2 is out of range: RandomForestClassifier has 2 trees"):
            export(model, tree_index=2)


def _route_table(nodes, row, feature_index):
    """The ``ID`` of the leaf a raw row reaches in one tree of ``trees_to_dataframe``'s table, walked naively."""
    by_id = nodes.set_index("ID")
    node = by_id.loc[nodes["ID"].iloc[0]]
    node_id = nodes["ID"].iloc[0]
    while node["Feature"] != "Leaf":
        value = row[feature_index[node["Feature"]]]
        if np.isnan(value):
            node_id = node["Missing"]
        elif "Category" in node.index and isinstance(node["Category"], list):
            node_id = node["Yes"] if str(int(value)) in node["Category"] else node["No"]
        else:
            node_id = node["Yes"] if value <= node["Split"] else node["No"]
        node = by_id.loc[node_id]
    return node_id


def test_trees_to_dataframe_routes_rows_as_the_estimator():
    pytest.importorskip("pandas")
    X, y, target, _ = _data()
    X = X.copy()
    X[::7, 1] = np.nan
    booster = gpuforest.GradientBoostingRegressor(n_estimators=3, max_depth=2, min_samples_leaf=2, device="cpu").fit(
        X, target
    )
    nodes = gpuforest.trees_to_dataframe(booster)
    assert list(nodes.columns) == ["Tree", "Node", "ID", "Feature", "Split", "Yes", "No", "Missing", "Gain", "Cover"]
    feature_index = {f"f{j}": j for j in range(X.shape[1])}
    leaves = {tree: table for tree, table in nodes.groupby("Tree")}
    # A leaf's Gain is its raw score: the baseline plus the reached leaves' Gains is the prediction.
    expected = [booster.baseline_[0] + sum(
        table.set_index("ID").loc[_route_table(table, row, feature_index), "Gain"] for table in leaves.values()
    ) for row in X[:20]]
    np.testing.assert_allclose(expected, booster.predict(X[:20]), rtol=1e-6)
    splits = nodes[nodes["Feature"] != "Leaf"].set_index("ID")
    cover = nodes.set_index("ID")["Cover"]
    np.testing.assert_allclose(cover[splits["Yes"]].to_numpy() + cover[splits["No"]].to_numpy(), splits["Cover"])
    # Summed per feature over the trees, the gains are the (unnormalised) gain importances.
    gains = splits.groupby("Feature")["Gain"].sum().reindex(list(feature_index), fill_value=0.0).to_numpy()
    np.testing.assert_allclose(gains / gains.sum(), booster.feature_importances_, rtol=1e-9)
    one = gpuforest.trees_to_dataframe(booster, tree_index=2)
    assert one.reset_index(drop=True).equals(nodes[nodes["Tree"] == 2].reset_index(drop=True))


def test_trees_to_dataframe_of_a_categorical_forest():
    pytest.importorskip("pandas")
    X, y, _, _ = _data()
    X = X.copy()
    X[:, 0] = np.round(np.abs(X[:, 0]) * 2) % 5
    forest = gpuforest.RandomForestClassifier(n_estimators=2, max_depth=3, categorical_features=[0], device="cpu",
                                              random_state=0).fit(X, y)
    nodes = gpuforest.trees_to_dataframe(forest, feature_names=["a", "b", "c"])
    assert "Category" in nodes.columns and nodes["Category"].map(lambda c: isinstance(c, list)).any()
    # The mean of the reached leaves' class proportions is predict_proba.
    proba = [np.mean([
        table.set_index("ID").loc[_route_table(table, row, {"a": 0, "b": 1, "c": 2}), "Value"]
        for _, table in nodes.groupby("Tree")
    ], axis=0) for row in X[:20]]
    np.testing.assert_allclose(proba, forest.predict_proba(X[:20]), rtol=1e-9)


def test_trees_to_dataframe_refuses_multiway_splits():
    pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="Node 0 of tree is a multiway split"):
        gpuforest.trees_to_dataframe(_weather_tree())
