"""gpuforest.dask: fits on a 2-worker LocalCluster equal to local fits, through partitionings, lost workers and
crashing tasks; bad input refused. Every fit has a timeout (the estimators' ``timeout``)."""

import gc
import os
import time

import numpy as np
import pytest

import gpuforest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
gd = pytest.importorskip("gpuforest.dask")

pytestmark = pytest.mark.dask

TIMEOUT = 60
N_ROWS = 240
TREE_ARRAYS = (
    "children_left", "children_right", "feature", "threshold", "bin_threshold", "missing_go_to_left", "value",
    "impurity", "n_node_samples", "weighted_n_node_samples", "split_type", "category_bitset",
)


@pytest.fixture(scope="module")
def client():
    # One crash is retried, the second is KilledWorker: short crash tests.
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        with distributed.Client(cluster) as client:
            yield client
        cluster.close()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N_ROWS, 4))
    X[rng.random(X.shape) < 0.05] = np.nan
    signal = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1])
    y_class = (signal + rng.normal(scale=0.5, size=N_ROWS) > 0).astype(int) + (np.nan_to_num(X[:, 2]) > 1)
    y_real = signal + rng.normal(scale=0.3, size=N_ROWS)
    weight = rng.integers(0, 3, N_ROWS).astype(float)
    return X, y_class, y_real, weight


def assert_same_trees(distributed_fit, local_fit):
    """Every tree array of the fitted ``distributed_fit.to_local()`` equals ``local_fit``'s."""
    fitted = distributed_fit.to_local()
    trees = getattr(fitted, "trees_", None) or [fitted.tree_]
    expected = getattr(local_fit, "trees_", None) or [local_fit.tree_]
    assert len(trees) == len(expected)
    for tree, expected_tree in zip(trees, expected):
        for name in TREE_ARRAYS:
            assert np.array_equal(getattr(tree, name), getattr(expected_tree, name), equal_nan=True), name
    assert sorted(vars(fitted)) == sorted(vars(local_fit))


def as_dask(chunks, *arrays):
    return [da.from_array(array, chunks=(chunks,) + array.shape[1:]) for array in arrays]


CASES = [
    ("DecisionTreeClassifier", "class", dict(max_depth=6)),
    ("RandomForestRegressor", "real", dict(n_estimators=4, max_depth=5, max_features=2)),
    ("ExtraTreesClassifier", "class", dict(n_estimators=3, bootstrap=True, max_samples=0.7)),
]
BOOSTING_CASES = [
    ("GradientBoostingClassifier", "class", dict(n_estimators=3, max_depth=3)),  # 3 classes: 3 trees a round
    ("GradientBoostingRegressor", "real", dict(n_estimators=3, subsample=0.7, colsample_bytree=0.6)),
    ("GradientBoostingRegressor", "real", dict(n_estimators=3, loss="quantile", max_leaf_nodes=6)),
]


@pytest.mark.parametrize(
    "chunks", [N_ROWS, (40, 150, 50), 20, (0, 120, 120)],
    ids=["one partition (a worker without data)", "uneven", "more partitions than workers (two reduction levels)",
         "an empty partition"],
)
@pytest.mark.parametrize("name, target, params", CASES, ids=[case[0] for case in CASES])
def test_to_local_equals_local_fit(client, data, chunks, name, target, params):
    X, y_class, y_real, weight = data
    y = y_class if target == "class" else y_real
    local = getattr(gpuforest, name)(random_state=3, **params).fit(X, y, sample_weight=weight)
    X_dask, y_dask, weight_dask = as_dask(chunks, X, y, weight)
    fitted = getattr(gd, name)(random_state=3, timeout=TIMEOUT, **params).fit(X_dask, y_dask, sample_weight=weight_dask)
    assert_same_trees(fitted, local)
    assert np.array_equal(fitted.predict(X_dask).compute(), local.predict(X))
    if target == "class":
        assert np.array_equal(fitted.predict_proba(X_dask).compute(), local.predict_proba(X))


@pytest.mark.parametrize("name, target, params", BOOSTING_CASES, ids=["multinomial", "subsampled", "quantile best-first"])
def test_boosting_equals_local_fit(client, data, name, target, params):
    X, y_class, y_real, weight = data
    y = y_class if target == "class" else y_real
    local = getattr(gpuforest, name)(random_state=3, **params).fit(X, y, sample_weight=weight)
    X_dask, y_dask, weight_dask = as_dask((40, 150, 50), X, y, weight)
    fitted = getattr(gd, name)(random_state=3, timeout=TIMEOUT, **params).fit(X_dask, y_dask, sample_weight=weight_dask)
    assert_same_trees(fitted, local)
    assert np.array_equal(fitted.predict(X_dask).compute(), local.predict(X))


def test_dataframe_input(client, data):
    pd = pytest.importorskip("pandas")
    X, _, y_real, _ = data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    local = gpuforest.ExtraTreesRegressor(n_estimators=3, max_depth=4, random_state=0).fit(frame, y_real)
    X_frame = dd.from_pandas(frame, npartitions=3)
    y_series = dd.from_pandas(pd.Series(y_real), npartitions=3)
    fitted = gd.ExtraTreesRegressor(n_estimators=3, max_depth=4, random_state=0, timeout=TIMEOUT).fit(X_frame, y_series)
    assert_same_trees(fitted, local)
    assert list(fitted.to_local().feature_names_in_) == list(frame.columns)
    assert np.array_equal(fitted.predict(X_frame).compute(), local.predict(frame))


def test_integer_features(client, data):
    X, _, y_real, _ = data
    X_int = np.rint(np.nan_to_num(X) * 3).astype(np.int64)
    local = gpuforest.DecisionTreeRegressor(max_depth=5).fit(X_int, y_real)
    fitted = gd.DecisionTreeRegressor(max_depth=5, timeout=TIMEOUT).fit(*as_dask(100, X_int, y_real))
    assert_same_trees(fitted, local)


def fit_tree_classifier(data, chunks=60):
    X, y_class, _, _ = data
    X_dask, y_dask = as_dask(chunks, X, y_class)
    return gd.DecisionTreeClassifier(max_depth=5, random_state=0, timeout=TIMEOUT).fit(X_dask, y_dask)


def test_worker_restarted_between_levels(client, data, monkeypatch):
    X, y_class, _, _ = data
    local = gpuforest.DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y_class)
    build_histograms = gd.DaskBackend.build_histograms
    levels = []

    def restart_at_second_level(self, *args, **kwargs):
        levels.append(None)
        if len(levels) == 2:
            # The partitions it held are recomputed from their graphs.
            self.client.restart_workers([next(iter(self.client.scheduler_info()["workers"]))], timeout=TIMEOUT)
        return build_histograms(self, *args, **kwargs)

    monkeypatch.setattr(gd.DaskBackend, "build_histograms", restart_at_second_level)
    assert_same_trees(fit_tree_classifier(data), local)
    assert len(levels) > 2


def crashing_histograms(marker):
    """``_partition_histograms`` whose worker process dies (``os._exit(1)``) the first time, or every time
    (``marker`` None)."""
    partition_histograms = gd._partition_histograms

    def crash(*args):
        if marker is None or not os.path.exists(marker):
            if marker is not None:
                open(marker, "w").close()
            os._exit(1)
        return partition_histograms(*args)

    return crash


def test_task_crashing_once_gives_the_same_model(client, data, monkeypatch, tmp_path):
    X, y_class, _, _ = data
    local = gpuforest.DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y_class)
    monkeypatch.setattr(gd, "_partition_histograms", crashing_histograms(str(tmp_path / "crashed")))
    assert_same_trees(fit_tree_classifier(data, chunks=N_ROWS), local)
    assert (tmp_path / "crashed").exists()


def test_task_always_crashing_ends_in_killed_worker(client, data, monkeypatch):
    monkeypatch.setattr(gd, "_partition_histograms", crashing_histograms(None))
    with pytest.raises(distributed.KilledWorker):
        fit_tree_classifier(data, chunks=N_ROWS)
    client.wait_for_workers(2, timeout=TIMEOUT)


def scheduler_tasks(client):
    return client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))


def test_scheduler_memory_does_not_grow(client, data):
    fit_tree_classifier(data)
    gc.collect()
    baseline = scheduler_tasks(client)
    for _ in range(2):
        fit_tree_classifier(data)
    gc.collect()
    deadline = time.monotonic() + TIMEOUT
    while scheduler_tasks(client) > baseline and time.monotonic() < deadline:
        time.sleep(0.1)
    assert scheduler_tasks(client) <= baseline


def test_bad_input(client, data):
    X, y_class, _, _ = data
    X_dask, y_dask = as_dask(60, X, y_class)
    estimator = gd.DecisionTreeClassifier(timeout=TIMEOUT)
    unknown = dd.from_array(X, chunksize=60).to_dask_array()
    with pytest.raises(ValueError, match="unknown length"):
        estimator.fit(unknown, y_dask)
    with pytest.raises(ValueError, match="partitioned as the rows of X"):
        estimator.fit(X_dask, as_dask(80, y_class)[0])
    with pytest.raises(TypeError, match="dask array or dataframe"):
        estimator.fit(X, y_dask)
    with pytest.raises(ValueError, match="fits one output"):
        estimator.fit(X_dask, as_dask(60, np.c_[y_class, y_class])[0])
    with pytest.raises(ValueError, match="does not support pruning"):
        gd.DecisionTreeClassifier(ccp_alpha=0.1, timeout=TIMEOUT).fit(X_dask, y_dask)
    with pytest.raises(ValueError, match="does not stop early"):
        gd.GradientBoostingRegressor(early_stopping="auto", timeout=TIMEOUT).fit(*as_dask(60, np.tile(X, (50, 1)),
                                                                                   np.arange(50 * N_ROWS) * 1.0))
    with pytest.raises(TimeoutError, match="timeout=1e-09"):
        gd.DecisionTreeClassifier(timeout=1e-9).fit(X_dask, y_dask)


def test_closed_client(data):
    X, y_class, _, _ = data
    closed = distributed.Client(processes=False, n_workers=1, dashboard_address=":0")
    closed.close()
    with pytest.raises(ValueError, match="closed, not running"):
        gd.DecisionTreeClassifier(client=closed).fit(*as_dask(60, X, y_class))


def test_parameters_are_the_local_ones_and_client():
    names = set(gd.RandomForestClassifier().get_params())
    assert names == set(gpuforest.RandomForestClassifier().get_params()) | {"client", "timeout"}
    assert gd.RandomForestClassifier(n_estimators=7).get_params()["n_estimators"] == 7
