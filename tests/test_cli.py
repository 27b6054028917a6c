"""The command line, in process (``cli.main``) on tiny data files, against the library's own API and
scikit-learn's metrics."""

import itertools

import numpy as np
import pyarrow as pa
import pytest
from pyarrow import csv, parquet
from sklearn.metrics import accuracy_score, log_loss, mean_absolute_error, mean_squared_error, r2_score, roc_auc_score

import gpuforest
from gpuforest import DecisionTreeClassifier, RandomForestRegressor, cli, prebuilt

LABELS = np.array(["no", "yes"])


def classification_data(n_samples=80):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n_samples, 3))
    y = LABELS[(X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n_samples) > 0).astype(int)]
    return X, y


def write_csv(path, X, y=None, target="label"):
    columns = {f"f{index}": X[:, index] for index in range(X.shape[1])}
    if y is not None:
        columns[target] = y
    csv.write_csv(pa.table(columns), path)
    return str(path)


def metrics_printed(output):
    """``{metric: value}`` of the table ``print_metrics`` writes."""
    rows = (line.split() for line in output.splitlines() if line.startswith("  "))
    return {name: float(value) for name, value in rows}


def test_train_predict_evaluate_csv(tmp_path, capsys):
    X, y = classification_data()
    data = write_csv(tmp_path / "train.csv", X, y)
    model_path = str(tmp_path / "tree.gpuforest")
    assert cli.main(["train", data, "--target", "label", "--model", "tree", "--param", "max_depth=3",
                     "--param", "criterion=entropy", "--device", "cpu", "--output", model_path]) == 0
    assert f"Saved the model to {model_path}" in capsys.readouterr().out

    reference = DecisionTreeClassifier(max_depth=3, criterion="entropy", device="cpu").fit(X, y)
    X_new = np.random.default_rng(1).normal(size=(20, 3))
    new_data = write_csv(tmp_path / "new.csv", X_new)
    predictions = tmp_path / "predictions.csv"
    assert cli.main(["predict", model_path, new_data, "--output", str(predictions)]) == 0
    np.testing.assert_array_equal(csv.read_csv(predictions).column("prediction").to_numpy(zero_copy_only=False),
                                  reference.predict(X_new))

    assert cli.main(["predict", model_path, new_data, "--proba", "--output", str(tmp_path / "proba.npy")]) == 0
    np.testing.assert_allclose(np.load(tmp_path / "proba.npy"), reference.predict_proba(X_new))

    # The training file with its target: the column to leave out is named.
    assert cli.main(["predict", model_path, data, "--target", "label"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == '"prediction"'
    assert [line.strip('"') for line in lines[1:]] == reference.predict(X).tolist()

    assert cli.main(["evaluate", model_path, data, "--target", "label"]) == 0
    printed = metrics_printed(capsys.readouterr().out)
    proba = reference.predict_proba(X)
    assert printed["accuracy"] == pytest.approx(accuracy_score(y, reference.predict(X)), abs=1e-6)
    assert printed["log_loss"] == pytest.approx(log_loss(y, proba), abs=1e-6)
    assert printed["roc_auc"] == pytest.approx(roc_auc_score(y == "yes", proba[:, 1]), abs=1e-6)


def test_train_parquet_regression_held_out_scores(tmp_path, capsys):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 3))
    y = 2 * X[:, 0] - X[:, 2] + rng.normal(scale=0.1, size=100)
    data = tmp_path / "train.parquet"
    parquet.write_table(pa.table({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y}), data)
    params = {"n_estimators": 3, "max_depth": 4, "random_state": 0}
    assert cli.main(["train", str(data), "--target", "y", "--eval-fraction", "0.25", "--seed", "3", "--device", "cpu",
                     *(f"--param={key}={value}" for key, value in params.items())]) == 0
    printed = metrics_printed(capsys.readouterr().out)

    # The same split (scikit-learn's, unstratified for a continuous target) and fit through the API.
    from sklearn.model_selection import train_test_split

    X_train, X_eval, y_train, y_eval = train_test_split(X, y, test_size=0.25, random_state=3)
    predicted = RandomForestRegressor(**params, device="cpu").fit(X_train, y_train).predict(X_eval)
    assert printed["r2"] == pytest.approx(r2_score(y_eval, predicted), abs=1e-6)
    assert printed["rmse"] == pytest.approx(np.sqrt(mean_squared_error(y_eval, predicted)), abs=1e-6)
    assert printed["mae"] == pytest.approx(mean_absolute_error(y_eval, predicted), abs=1e-6)


def test_npy_target_index(tmp_path):
    X, y = classification_data()
    data = tmp_path / "train.npy"
    np.save(data, np.column_stack([(y == "yes").astype(float), X]))
    model_path = str(tmp_path / "tree.gpuforest")
    assert cli.main(["train", str(data), "--target", "0", "--model", "tree", "--device", "cpu", "-o", model_path]) == 0
    model = gpuforest.load_model(model_path)
    np.testing.assert_array_equal(model.classes_, [0.0, 1.0])
    assert model.n_features_in_ == 3


@pytest.mark.parametrize("arguments, message", [
    (["train", "DATA", "--target", "label", "--model", "jungle"], "invalid choice: 'jungle'"),
    (["train", "DATA", "--target", "label", "--param", "max_depth"], "is not key=value"),
    (["train", "DATA", "--target", "label", "--eval-fraction", "1.5"], "not strictly between 0 and 1"),
    (["train", "DATA", "--target", "label", "--model", "tree", "--param", "n_trees=3"],
     "--param n_trees: DecisionTreeClassifier takes no such parameter"),
    (["train", "DATA", "--target", "label", "--model", "tree", "--param", "max_depth=-1"],
     "The 'max_depth' parameter of DecisionTreeClassifier must be"),
    (["train", "DATA", "--target", "species"], "--target 'species': DATA has no such column; its columns are "
                                               "f0, f1, f2, label."),
    (["train", "DATA.txt", "--target", "label"], "a data file ends in .csv, .parquet, .pq, .npy, not .txt"),
    (["export", "MODEL", "--format", "svg"], "invalid choice: 'svg'"),
    (["predict"], "the following arguments are required: model, data"),
    ([], "the following arguments are required: COMMAND"),
])
def test_usage_errors_exit_2(tmp_path, capsys, arguments, message):
    X, y = classification_data(20)
    data = write_csv(tmp_path / "train.csv", X, y)
    arguments = [data if argument == "DATA" else argument for argument in arguments]
    with pytest.raises(SystemExit) as exit_info:
        cli.main(arguments)
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert "usage: gpuforest" in error
    assert message.replace("DATA", data) in error
    assert "Traceback" not in error


def test_other_errors_exit_1(tmp_path, capsys):
    table = pa.table({"colour": ["red", "blue"] * 5, "label": [0, 1] * 5})
    csv.write_csv(table, tmp_path / "text.csv")
    assert cli.main(["train", str(tmp_path / "text.csv"), "--target", "label"]) == 1
    assert "Feature column 'colour' is string, not numeric" in capsys.readouterr().err
    assert cli.main(["evaluate", str(tmp_path / "missing.gpuforest"), str(tmp_path / "text.csv"), "--target", "label"]) == 1
    assert "missing.gpuforest" in capsys.readouterr().err
    (tmp_path / "text.gpuforest").write_text("not a model")
    assert cli.main(["evaluate", str(tmp_path / "text.gpuforest"), str(tmp_path / "text.csv"), "--target", "label"]) == 1
    assert "is not a gpuforest model file" in capsys.readouterr().err


def test_export(tmp_path, capsys):
    X, y = classification_data(40)
    model_path = str(tmp_path / "tree.gpuforest")
    cli.main(["train", write_csv(tmp_path / "train.csv", X, y), "--target", "label", "--model", "tree",
              "--param", "max_depth=2", "--device", "cpu", "-o", model_path])
    capsys.readouterr()
    assert cli.main(["export", model_path, "--format", "dot"]) == 0
    expected = gpuforest.export_graphviz(DecisionTreeClassifier(max_depth=2, device="cpu").fit(X, y))
    assert capsys.readouterr().out == expected
    assert cli.main(["export", model_path, "--format", "json", "-o", str(tmp_path / "copy.gpuforest")]) == 0
    np.testing.assert_array_equal(gpuforest.load_model(str(tmp_path / "copy.gpuforest")).predict(X),
                                  DecisionTreeClassifier(max_depth=2, device="cpu").fit(X, y).predict(X))
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["export", model_path, "--format", "treelite", "-o", str(tmp_path / "tree.tl")])
    assert exit_info.value.code == 2
    assert "DecisionTreeClassifier has no Treelite export" in capsys.readouterr().err


def test_warmup_fits_start_with_the_tree_and_cover_every_model_task_and_kind():
    fits = cli.warmup_fits()
    assert fits[0] == ("tree", "classification", False)
    assert sorted(fits) == sorted(itertools.product(cli.MODELS, cli.TASKS, (False, True)))


def test_warmup_data_takes_missing_values_categories_and_three_classes():
    X, targets = cli.warmup_data()
    assert np.isnan(X).any(axis=0).all()
    codes = X[~np.isnan(X[:, 3]), 3]
    np.testing.assert_array_equal(np.unique(codes), np.arange(5))
    assert np.isfinite(targets["regression"]).all()
    assert [np.unique(y).tolist() for y in targets["classification"]] == [[0, 1], [0, 1, 2]]


def test_info_reports_the_kernel_cache(capsys):
    import numba

    from gpuforest.kernels.cpu import histogram

    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    expected_cache = numba.config.CACHE_DIR or str(histogram.__file__).rsplit("/", 1)[0] + "/__pycache__"
    assert f"kernel cache  {expected_cache}" in out
    assert f"prebuilt      {prebuilt.status()} ({prebuilt.PREBUILT_DIRECTORY})" in out
    assert f"numba         {numba.__version__}" in out


def test_bench_lists_scripts_and_installed_peers(tmp_path, capsys):
    assert cli.main(["bench"]) == 0
    listed = capsys.readouterr().out
    for script in cli.BENCHMARKS.glob("bench_*.py"):
        assert script.stem.removeprefix("bench_") in listed.split("Benchmarks: ")[1]
    script = tmp_path / "bench_fake.py"
    script.write_text('LIBRARIES = ("gpuforest", "scikit-learn", "no-such-peer")\n')
    assert cli.installed_peers(script) == ["gpuforest", "scikit-learn"]
    (tmp_path / "bench_plain.py").write_text("ROWS = 10\n")
    assert cli.installed_peers(tmp_path / "bench_plain.py") is None


@pytest.mark.dask
def test_train_on_a_dask_scheduler_saves_the_local_fits_model(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    X, y = classification_data(120)
    data = write_csv(tmp_path / "train.csv", X, y)
    model_path = str(tmp_path / "forest.gpuforest")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        assert cli.main(["train", data, "--target", "label", "--param", "n_estimators=3", "--param", "max_depth=4",
                         "--param", "random_state=0", "--scheduler", cluster.scheduler_address,
                         "--output", model_path]) == 0
    assert "Trained RandomForestClassifier on 120 rows" in capsys.readouterr().out
    model = gpuforest.load_model(model_path)
    local = gpuforest.RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0).fit(X, y)
    for distributed_tree, local_tree in zip(model.trees_, local.trees_):
        for name in ("children_left", "feature", "threshold", "value"):
            np.testing.assert_array_equal(getattr(distributed_tree, name), getattr(local_tree, name))
    np.testing.assert_array_equal(model.predict_proba(X), local.predict_proba(X))
    with pytest.raises(SystemExit) as error:
        cli.main(["train", data, "--target", "label", "--model", "adaboost", "--scheduler", "tcp://127.0.0.1:1"])
    assert error.value.code == 2
    assert "gpuforest.dask has no AdaBoostClassifier" in capsys.readouterr().err


@pytest.mark.parametrize("jobs, message", [("0", "expected at least 1, got 0"), ("two", "expected a whole number")])
def test_warmup_refuses_jobs_that_are_not_a_positive_count(capsys, jobs, message):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["warmup", "--jobs", jobs])
    assert exit_info.value.code == 2
    assert f"argument --jobs: {message}" in capsys.readouterr().err


def test_warmup_share_fits_its_models_in_the_warmup_order(monkeypatch):
    fitted = []
    monkeypatch.setattr(cli, "warmup_fit", lambda *fit: fitted.append(fit) or str(fit))
    lines = cli.warmup_share(("forest", "adaboost"), "cpu")
    expected = [(*fit, "cpu") for fit in cli.warmup_fits() if fit[0] in ("forest", "adaboost")]
    assert fitted == expected and lines == [str(fit) for fit in expected]
    assert {fit[0] for fit in fitted} == {"forest", "adaboost"} and len(fitted) == 8
