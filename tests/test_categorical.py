"""``categorical_features`` on every estimator: declared, validated, recorded; pandas categories as codes."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.utils import get_tags

import gpuforest
from gpuforest.categorical import categorical_mask

ESTIMATORS = [
    gpuforest.DecisionTreeClassifier(random_state=0),
    gpuforest.DecisionTreeRegressor(random_state=0),
    gpuforest.RandomForestClassifier(n_estimators=3, random_state=0),
    gpuforest.RandomForestRegressor(n_estimators=3, random_state=0),
    gpuforest.ExtraTreesClassifier(n_estimators=3, random_state=0),
    gpuforest.ExtraTreesRegressor(n_estimators=3, random_state=0),
    gpuforest.GradientBoostingClassifier(n_estimators=3, random_state=0),
    gpuforest.GradientBoostingRegressor(n_estimators=3, random_state=0),
    gpuforest.AdaBoostClassifier(n_estimators=3, random_state=0),
    gpuforest.AdaBoostRegressor(n_estimators=3, random_state=0),
    gpuforest.BaggingClassifier(n_estimators=3, random_state=0),
    gpuforest.BaggingRegressor(n_estimators=3, random_state=0),
]
COLORS = ["blue", "green", "red"]


def color_frame(rng, n_samples):
    """``(X, y)``: a frame of a ``category`` column of colors, a numeric one and integer codes 0 to 4 as
    floats; ``y`` depends on the color and the number."""
    X = pd.DataFrame({
        "color": pd.Categorical(rng.choice(COLORS, n_samples), categories=COLORS),
        "size": rng.normal(size=n_samples),
        "grade": rng.integers(0, 5, n_samples).astype(np.float64),
    })
    y = ((X["color"] == "red").to_numpy() ^ (X["size"] > 0).to_numpy()).astype(np.int64)
    return X, y


@pytest.mark.parametrize(
    "categorical_features, expected",
    [
        (None, None),
        ("from_dtype", [True, False, False]),
        ([0, 2], [True, False, True]),
        (np.array([2]), [False, False, True]),
        (["grade", "color"], [True, False, True]),
        ([False, True, False], [False, True, False]),
        ([], None),
        ([False, False, False], None),
    ],
)
def test_categorical_features_select_the_mask(categorical_features, expected):
    X, y = color_frame(np.random.default_rng(0), 30)
    # Numbers only, so that any column may be numeric or categorical.
    X["color"] = X["color"].cat.rename_categories([0.0, 1.0, 2.0])
    X["size"] = X["size"].abs().round()
    model = gpuforest.DecisionTreeClassifier(categorical_features=categorical_features, device="cpu").fit(X, y)
    if expected is None:
        assert model.is_categorical_ is None and model.categories_ is None
    else:
        assert model.is_categorical_.tolist() == expected
        assert model._bin_mapper.is_categorical.tolist() == expected


def test_category_columns_of_numbers_stay_numeric_by_default():
    """The default None keeps today's meaning of a ``category`` column of numbers: its values."""
    X = pd.DataFrame({"level": pd.Categorical([10.0, 30.0, 20.0, 30.0])})
    model = gpuforest.DecisionTreeClassifier(device="cpu").fit(X, [0, 1, 0, 1])
    assert model.is_categorical_ is None
    assert model.tree_.threshold[0] == 25.0  # between the values 20 and 30, not between codes


@pytest.mark.parametrize(
    "categorical_features, error, message",
    [
        ([3], ValueError, r"indices must be a 1-D array of integers from 0 to 2 \(X has 3 features\); got \[3\]"),
        ([-1], ValueError, r"from 0 to 2"),
        ([[0, 1]], ValueError, r"1-D array"),
        (["colour"], ValueError, r"names \['colour'\], which are not features of X"),
        ([True, False], ValueError, r"bool mask needs one entry per feature \(3\); got shape \(2,\)"),
        ([0.5], ValueError, r"array-like of bool, int or str; got float64"),
        (np.array([0, "color"], dtype=object), ValueError, r"array-like of bool, int or str; got object"),
        ("color", ValueError, r"categorical_features"),  # a bare string other than "from_dtype"
    ],
)
def test_bad_categorical_features_are_refused(categorical_features, error, message):
    X, y = color_frame(np.random.default_rng(1), 20)
    with pytest.raises(error, match=message):
        gpuforest.DecisionTreeClassifier(categorical_features=categorical_features, device="cpu").fit(X, y)


@pytest.mark.parametrize(
    "categorical_features, tagged", [(None, False), ("from_dtype", False), ([0], True), ([True, False], True)]
)
def test_declared_columns_tag_the_input_as_categorical(categorical_features, tagged):
    """Columns of X declared categorical must hold codes: the categorical input tag makes scikit-learn's checks
    give X as codes; no declaration, or the DataFrame's dtypes, need no codes."""
    for estimator in ESTIMATORS[:-2]:  # Bagging keeps scikit-learn's tags
        tags = get_tags(clone(estimator).set_params(categorical_features=categorical_features))
        assert tags.input_tags.categorical is tagged


def test_names_need_feature_names():
    with pytest.raises(ValueError, match="X has no feature names"):
        categorical_mask(["color"], 3)


def test_category_columns_train_on_their_codes():
    """A frame's ``category`` column trains as its codes: the same tree as on the codes by hand (NaN
    where missing), and ``categories_`` are the column's categories; a column of strings too."""
    rng = np.random.default_rng(2)
    X, y = color_frame(rng, 80)
    X.loc[rng.random(80) < 0.1, "color"] = np.nan
    by_frame = gpuforest.DecisionTreeClassifier(categorical_features=["color", "grade"], device="cpu").fit(X, y)
    codes = X.to_numpy(dtype=object)
    codes[:, 0] = [COLORS.index(color) if isinstance(color, str) else np.nan for color in X["color"]]
    by_codes = gpuforest.DecisionTreeClassifier(categorical_features=[0, 2], device="cpu").fit(codes.astype(float), y)
    for name in ("children_left", "feature", "threshold", "missing_go_to_left", "value"):
        np.testing.assert_array_equal(getattr(by_frame.tree_, name), getattr(by_codes.tree_, name))
    assert list(by_frame.categories_[0]) == COLORS and by_frame.categories_[1] is None
    # Strings code as the categories of their sorted distinct values.
    by_strings = gpuforest.DecisionTreeClassifier(categorical_features=["color", "grade"], device="cpu").fit(
        X.assign(color=X["color"].astype(object)), y
    )
    np.testing.assert_array_equal(by_strings.tree_.threshold, by_codes.tree_.threshold)
    assert list(by_strings.categories_[0]) == COLORS
    np.testing.assert_array_equal(by_frame.categories_[2], np.arange(5))
    assert list(by_frame.feature_names_in_) == ["color", "size", "grade"]


def test_prediction_codes_frames_with_the_categories_seen_at_fit():
    """At predict, a category column with other categories, in another order, or strings, is coded with the
    fit's categories; an unknown category, a code past the fit's and a value that is no code act as NaN."""
    X, y = color_frame(np.random.default_rng(3), 80)
    model = gpuforest.DecisionTreeClassifier(categorical_features=["color", "grade"], device="cpu").fit(X, y)
    colors = ["red", "purple", "blue", "green", None]
    grades = [1.0, 2.0, 7.0, -1.0, 2.5]
    # Numeric columns hold codes: the fit's codes of the colors, NaN for the unknown grades.
    by_hand = pd.DataFrame(
        {"color": [2, np.nan, 0, 1, np.nan], "size": 0.0, "grade": [1.0, 2.0, np.nan, np.nan, np.nan]}
    )
    expected = model.apply(by_hand)
    assert np.unique(expected).size > 1
    reordered = pd.Categorical(colors, categories=["red", "purple", "green", "blue"])
    for column in (reordered, np.array(colors, dtype=object)):
        frame = pd.DataFrame({"color": column, "size": 0.0, "grade": grades})
        np.testing.assert_array_equal(model.apply(frame), expected)


def test_prediction_leaves_the_callers_array_alone():
    X, y = color_frame(np.random.default_rng(4), 40)
    codes = np.column_stack([X["color"].cat.codes, X["size"], X["grade"]])
    model = gpuforest.DecisionTreeClassifier(categorical_features=[0], device="cpu").fit(codes, y)
    rows = np.array([[7.0, 0.0, 1.0], [1.0, 0.0, 1.0]], dtype=np.float32)
    model.predict(rows)
    assert rows[0, 0] == 7.0


@pytest.mark.parametrize(
    "column, max_bins, message",
    [
        (pd.Categorical(["a", "b", "c", "a"], categories=list("abcdefgh")), 8,
         r"Categorical feature 'level' has 8 categories \(codes 0 to 7\); max_bins=8 allows at most 7"),
        (np.array([0.0, 1.0, 9.0, 2.0]), 8, r"feature 'level' has 10 categories"),
        (np.array([0.0, 1.0, -1.0, 2.0]), 256, r"Categorical feature 'level' must hold category codes.*-1\.0"),
        (np.array([0.0, 1.0, 0.5, 2.0]), 256, r"Categorical feature 'level' must hold category codes.*0\.5"),
    ],
)
def test_bad_categorical_columns_are_refused(column, max_bins, message):
    X = pd.DataFrame({"level": column, "size": [0.0, 1.0, 2.0, 3.0]})
    model = gpuforest.DecisionTreeClassifier(categorical_features=["level"], max_bins=max_bins, device="cpu")
    with pytest.raises(ValueError, match=message):
        model.fit(X, [0, 1, 0, 1])


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda estimator: type(estimator).__name__)
def test_every_estimator_takes_categorical_features(estimator):
    """Declared, recorded, handed to the bins, and an unknown category predicts as a missing value."""
    X, y = color_frame(np.random.default_rng(5), 60)
    params = {"device": "cpu"} if "device" in estimator.get_params() else {}
    model = estimator.set_params(categorical_features=["color"], **params).fit(X, y)
    assert model.is_categorical_.tolist() == [True, False, False]
    assert list(model.categories_[0]) == COLORS
    unknown = pd.DataFrame({"color": ["purple", "red"], "size": [0.3, -0.2], "grade": [1.0, 4.0]})
    missing = unknown.assign(color=pd.Categorical([None, "red"], categories=COLORS))
    np.testing.assert_array_equal(model.predict(unknown), model.predict(missing))


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda estimator: type(estimator).__name__)
def test_every_estimator_refuses_unknown_categories_at_fit(estimator):
    """#14's bad input at fit, on every estimator: a value of a categorical column that is no category code
    (negative, fractional, past the codes ``max_bins`` leaves room for) and a ``category`` column with more
    categories than ``max_bins`` allows, each a ValueError naming the feature."""
    X, y = color_frame(np.random.default_rng(8), 30)
    params = {"device": "cpu"} if "device" in estimator.get_params() else {}
    model = estimator.set_params(categorical_features=["color", "grade"], **params)
    for bad_code, message in [
        (-1.0, r"Categorical feature 'grade' must hold category codes.*-1\.0"),
        (2.5, r"Categorical feature 'grade' must hold category codes.*2\.5"),
        (255.0, r"Categorical feature 'grade' has 256 categories \(codes 0 to 255\); max_bins=256 allows at most 255"),
    ]:
        with pytest.raises(ValueError, match=message):
            model.fit(X.assign(grade=np.where(np.arange(30) == 4, bad_code, X["grade"])), y)
    many = pd.Categorical(["c0", "c1", "c2"] * 10, categories=[f"c{code}" for code in range(300)])
    with pytest.raises(ValueError, match=r"Categorical feature 'color' has 300 categories"):
        model.fit(X.assign(color=many), y)


def test_ensemble_members_carry_the_categorical_features():
    X, y = color_frame(np.random.default_rng(6), 60)
    forest = gpuforest.RandomForestClassifier(n_estimators=2, categorical_features=[0], device="cpu").fit(X, y)
    for member in forest.estimators_:
        assert member.is_categorical_.tolist() == [True, False, False]
        np.testing.assert_array_equal(member.predict(X), member.classes_[np.argmax(member.predict_proba(X), axis=1)])
    boost = gpuforest.AdaBoostClassifier(n_estimators=2, categorical_features=[0], device="cpu").fit(X, y)
    assert all(member.is_categorical_.tolist() == [True, False, False] for member in boost.estimators_)
    assert boost.estimators_[0]._bin_mapper.is_categorical.tolist() == [True, False, False]
    own = gpuforest.AdaBoostRegressor(gpuforest.DecisionTreeRegressor(max_depth=2), n_estimators=2,
                                      categorical_features=[0]).fit(X, y)
    assert own.estimators_[0].is_categorical_.tolist() == [True, False, False]


def test_bagging_needs_the_batched_forest_for_categorical_features():
    X, y = color_frame(np.random.default_rng(7), 30)
    with pytest.raises(ValueError, match="categorical_features needs the members grown as one forest"):
        gpuforest.BaggingClassifier(max_features=0.5, categorical_features=[0]).fit(X, y)
