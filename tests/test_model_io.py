"""Model files (``save_model`` / ``load_model``) and pickles of every estimator kind."""

import hashlib
import io
import json
import pickle
import zipfile

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier as SklearnRandomForestClassifier
from sklearn.tree import DecisionTreeClassifier as SklearnDecisionTreeClassifier

import gpuforest as gf

X, y = make_classification(n_samples=80, n_features=4, n_informative=3, n_redundant=0, n_classes=3, random_state=0)
X = X.astype(np.float32)
X[::7, 1] = np.nan
X[:, 3] = np.arange(80) % 5  # category codes
y_reg = X[:, 0] * 2.0 + (X[:, 3] == 2)

ESTIMATORS = {
    "tree_categorical": (gf.DecisionTreeClassifier(max_depth=4, categorical_features=[3], device="cpu"), y),
    "tree_surrogates": (gf.DecisionTreeRegressor(max_depth=3, use_surrogates=True, device="cpu"), y_reg),
    "tree_c45": (gf.DecisionTreeClassifier(algorithm="c45", categorical_features=[3], device="cpu"), y),
    "random_forest": (gf.RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0, device="cpu"), y),
    "extra_trees": (gf.ExtraTreesRegressor(n_estimators=3, max_depth=3, random_state=0, device="cpu"), y_reg),
    "bagging_classifier": (gf.BaggingClassifier(n_estimators=3, random_state=0), y),
    "bagging_regressor": (gf.BaggingRegressor(n_estimators=3, random_state=0), y_reg),
    "boosting_classifier": (gf.GradientBoostingClassifier(n_estimators=3, max_depth=3, device="cpu"), y),
    "boosting_regressor": (gf.GradientBoostingRegressor(n_estimators=3, max_depth=3, device="cpu"), y_reg),
    "adaboost_classifier": (gf.AdaBoostClassifier(n_estimators=3, random_state=0), y),
    "adaboost_regressor": (gf.AdaBoostRegressor(n_estimators=3, random_state=0), y_reg),
    "voting_classifier": (gf.VotingClassifier(
        [("tree", gf.DecisionTreeClassifier(max_depth=3, device="cpu")),
         ("forest", gf.RandomForestClassifier(n_estimators=2, max_depth=3, random_state=0, device="cpu"))],
        voting="soft"), y),
    "voting_regressor": (gf.VotingRegressor([("tree", gf.DecisionTreeRegressor(max_depth=3, device="cpu"))]), y_reg),
}


def predictions(estimator):
    outputs = [estimator.predict(X)]
    if hasattr(estimator, "predict_proba"):
        outputs.append(estimator.predict_proba(X))
    return outputs


@pytest.fixture(scope="module")
def fitted():
    return {name: estimator.fit(X, target) for name, (estimator, target) in ESTIMATORS.items()}


@pytest.mark.parametrize("name", ESTIMATORS)
def test_round_trip_predicts_identically(fitted, name, tmp_path):
    estimator = fitted[name]
    path = tmp_path / "model.gpuforest"
    estimator.save_model(path)
    loaded = gf.load_model(path, device="cpu")
    assert type(loaded) is type(estimator)
    assert loaded.get_params(deep=False).keys() == estimator.get_params(deep=False).keys()
    for expected, actual in zip(predictions(estimator), predictions(loaded)):
        np.testing.assert_array_equal(actual, expected)
    for expected, actual in zip(predictions(estimator), predictions(pickle.loads(pickle.dumps(estimator)))):
        np.testing.assert_array_equal(actual, expected)


def test_file_holds_the_documented_fields(fitted, tmp_path):
    path = tmp_path / "model.gpuforest"
    fitted["tree_categorical"].save_model(path)
    with zipfile.ZipFile(path) as archive:
        document = json.loads(archive.read("model.json"))
        estimator = document["estimator"]
        assert (document["format"], document["format_version"], document["library_version"]) == (
            "gpuforest-model", 2, gf.__version__)
        assert estimator["$object"] == "gpuforest.decision_tree.DecisionTreeClassifier"
        assert estimator["params"]["max_depth"] == 4
        tree = estimator["attributes"]["tree_"]["attributes"]
        threshold = np.load(archive.open(tree["threshold"]["$array"]), allow_pickle=False)
    np.testing.assert_array_equal(threshold, fitted["tree_categorical"].tree_.threshold)


def test_a_shared_tree_is_stored_once(fitted, tmp_path):
    bagging = fitted["bagging_classifier"]
    path = tmp_path / "model.gpuforest"
    bagging.save_model(path)
    loaded = gf.load_model(path, device="cpu")
    assert loaded.estimators_[0].tree_ is loaded.forest_.trees_[0]
    n_nodes = sum(tree.node_count for tree in bagging.forest_.trees_)
    with zipfile.ZipFile(path) as archive:
        stored = [np.load(archive.open(name)) for name in archive.namelist() if name.startswith("arrays/")]
    # children_left, children_right, feature, ... : each tree's node arrays once.
    assert sum(array.shape[0] for array in stored if array.dtype == np.int32 and array.ndim == 1) <= 4 * n_nodes + 16


def test_model_trained_on_gpu_predicts_on_cpu_and_back(tmp_path):
    """The CUDA backend here is numba's simulator: the file is the same whichever device trained it."""
    X_small, y_small = X[:16, :1], y[:16]  # the simulator grows trees slowly
    for device, other in (("cuda", "cpu"), ("cpu", "cuda")):
        model = gf.DecisionTreeClassifier(max_depth=1, max_bins=4, device=device).fit(X_small, y_small)
        assert model.tree_.node_count == 3
        path = tmp_path / f"{device}.gpuforest"
        model.save_model(path)
        loaded = gf.load_model(path, device=other)
        assert loaded.device_ == other
        np.testing.assert_array_equal(loaded.predict_proba(X_small), model.predict_proba(X_small))


def rewrite(path, edit_document=None, keep_checksum=False):
    """Rewrite the model file at ``path`` with ``edit_document`` applied to its JSON and, unless
    ``keep_checksum``, the checksum recomputed as docs/model-format.md defines it."""
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    document = json.loads(members["model.json"])
    if edit_document:
        edit_document(document)
    members["model.json"] = json.dumps(document).encode()
    if not keep_checksum:
        digest = hashlib.sha256(members["model.json"])
        for name in sorted(name for name in members if name.startswith("arrays/")):
            digest.update(name.encode())
            digest.update(members[name])
        members["checksum.sha256"] = digest.hexdigest().encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


@pytest.fixture
def saved(fitted, tmp_path):
    path = tmp_path / "model.gpuforest"
    fitted["random_forest"].save_model(path)
    return path


def test_recomputed_checksum_loads(saved):
    rewrite(saved)
    gf.load_model(saved, device="cpu")


def test_a_parameter_missing_from_an_older_file_takes_its_default(fitted, saved):
    def drop_importance_type(document):
        del document["estimator"]["params"]["importance_type"]

    rewrite(saved, drop_importance_type)
    loaded = gf.load_model(saved, device="cpu")
    assert loaded.importance_type == "gain"
    np.testing.assert_array_equal(loaded.feature_importances_, fitted["random_forest"].feature_importances_)


def test_truncated_file_is_refused(saved):
    data = saved.read_bytes()
    saved.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="truncated or damaged"):
        gf.load_model(saved)


def test_edited_file_is_refused(fitted, saved):
    def edit(document):
        document["estimator"]["params"]["max_depth"] = 5

    rewrite(saved, edit, keep_checksum=True)
    with pytest.raises(ValueError, match="checksum does not match"):
        gf.load_model(saved)


def test_edited_array_is_refused(saved):
    with zipfile.ZipFile(saved) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    name = next(name for name in members if name.startswith("arrays/"))
    members[name] = members[name][:-1] + bytes([members[name][-1] ^ 1])
    with zipfile.ZipFile(saved, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    with pytest.raises(ValueError, match="checksum does not match"):
        gf.load_model(saved)


def test_foreign_files_are_refused(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ValueError, match="not a gpuforest model file"):
        gf.load_model(text)
    npz = tmp_path / "arrays.npz"
    np.savez(npz, a=np.arange(3))
    with pytest.raises(ValueError, match="not a gpuforest model file"):
        gf.load_model(npz)


def test_newer_format_version_is_refused(saved):
    rewrite(saved, lambda document: document.update(format_version=3))
    with pytest.raises(ValueError, match="format version 3, newer than version 2"):
        gf.load_model(saved)


def test_version_1_files_load(fitted, tmp_path):
    """A version-1 file (bin ranges stored as float32, the values of the float32 X it split) loads and predicts
    as before: its thresholds split the same float32 values. A single tree keeps its bin mapper (ensembles
    leave theirs out of the file)."""
    saved = tmp_path / "tree.gpuforest"
    fitted["tree_surrogates"].save_model(saved)
    with zipfile.ZipFile(saved) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    document = json.loads(members["model.json"])
    ranges = []

    def find_ranges(value):
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ("bin_min_", "bin_max_") and isinstance(item, dict) and "$array" in item:
                    ranges.append(item["$array"])
                find_ranges(item)
        elif isinstance(value, list):
            for item in value:
                find_ranges(item)

    find_ranges(document)
    assert ranges
    for name in ranges:
        buffer = io.BytesIO()
        np.save(buffer, np.load(io.BytesIO(members[name]), allow_pickle=False).astype(np.float32))
        members[name] = buffer.getvalue()
    with zipfile.ZipFile(saved, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    rewrite(saved, lambda document: document.update(format_version=1))
    loaded = gf.load_model(saved, device="cpu")
    for expected, actual in zip(predictions(fitted["tree_surrogates"]), predictions(loaded)):
        np.testing.assert_array_equal(actual, expected)


def test_a_class_outside_gpuforest_is_never_created(saved):
    def edit(document):
        document["estimator"]["$object"] = "subprocess.Popen"

    rewrite(saved, edit)
    with pytest.raises(ValueError, match="'subprocess.Popen' is not a gpuforest class"):
        gf.load_model(saved)


def test_a_malformed_value_is_refused(saved):
    rewrite(saved, lambda document: document["estimator"].pop("attributes"))
    with pytest.raises(ValueError, match="a value is malformed"):
        gf.load_model(saved)


def test_unfitted_estimator_keeps_its_parameters(tmp_path):
    path = tmp_path / "model.gpuforest"
    gf.GradientBoostingRegressor(learning_rate=0.3, loss="quantile", alpha=0.9).save_model(path)
    loaded = gf.load_model(path)
    assert loaded.get_params() == gf.GradientBoostingRegressor(learning_rate=0.3, loss="quantile", alpha=0.9).get_params()


def test_members_outside_gpuforest_are_refused_at_save(tmp_path):
    voting = gf.VotingClassifier([("sklearn", SklearnDecisionTreeClassifier(max_depth=2))]).fit(X, y)
    with pytest.raises(TypeError, match="sklearn.tree._classes.DecisionTreeClassifier is not part of"):
        voting.save_model(tmp_path / "model.gpuforest")


def test_a_callable_is_refused_at_save(tmp_path):
    model = gf.GradientBoostingRegressor(scoring=lambda estimator, X, y: 0.0)
    with pytest.raises(TypeError, match="Cannot save estimator.scoring: a builtins.function"):
        model.save_model(tmp_path / "model.gpuforest")


@pytest.mark.parametrize("n_estimators, max_depth", [(10, 4), (100, 4), (10, None), (100, None)])
def test_pickled_forest_is_no_larger_than_scikit_learns(n_estimators, max_depth):
    # Continuous features: ~254 bin thresholds each, the fixed cost a pickle of the bins would carry.
    X_big, y_big = make_classification(n_samples=300, n_features=10, random_state=0)
    params = dict(n_estimators=n_estimators, max_depth=max_depth, random_state=0)
    ours = gf.RandomForestClassifier(device="cpu", **params).fit(X_big, y_big)
    ours.predict(X_big)  # builds the packed prediction layout, which is not pickled
    theirs = SklearnRandomForestClassifier(**params).fit(X_big, y_big)
    assert len(pickle.dumps(ours)) <= len(pickle.dumps(theirs))
    restored = pickle.loads(pickle.dumps(ours))
    np.testing.assert_array_equal(restored.predict_proba(X_big), ours.predict_proba(X_big))
    np.testing.assert_array_equal(restored.apply(X_big), ours.apply(X_big))


@pytest.mark.parametrize("make_model", [
    lambda n: gf.RandomForestClassifier(n_estimators=n, max_depth=4, random_state=0, device="cpu"),
    lambda n: gf.GradientBoostingClassifier(n_estimators=n, max_depth=3, early_stopping=False, device="cpu"),
])
def test_warm_start_after_unpickling_grows_the_uninterrupted_model(make_model):
    """The bins are not pickled: a warm start refits them on the same X, and grows the trees of one fit."""
    first = pickle.loads(pickle.dumps(make_model(3).fit(X, y)))
    assert not hasattr(first, "_bin_mapper")
    resumed = first.set_params(warm_start=True, n_estimators=6).fit(X, y)
    np.testing.assert_array_equal(resumed.predict_proba(X), make_model(6).fit(X, y).predict_proba(X))
