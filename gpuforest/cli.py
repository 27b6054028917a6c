"""The ``gpuforest`` command line: train, predict, evaluate, export, info, warmup, bench and demo.

Data files are CSV or Parquet (read by pyarrow, one column per feature and a named target column)
or ``.npy`` (a 2-D array whose target is a column index). Models are gpuforest model files,
written by ``save_model`` and read by ``gpuforest.load_model``. See ``docs/cli.md``.

Exit status, as argparse sets it: 0 on success, 2 for a usage error (a malformed or
unknown argument, or a value the data or the estimator's parameter validation refuses), 1 for
any other error (a file that cannot be read, data an estimator cannot fit). Errors are one
line naming what to fix, never a traceback.
"""

import argparse
import ast
import contextlib
import importlib.util
import io
import os
import sys
import time
from importlib import metadata
from pathlib import Path

import numpy as np
from sklearn.base import is_classifier
from sklearn.metrics import accuracy_score, log_loss, mean_absolute_error, mean_squared_error, r2_score, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.multiclass import type_of_target

import gpuforest

from . import prebuilt
from .backend import DEVICES, get_backend, python_levels
from .binning import BinMapper
from .compilation import compile_in_processes, kernel_cache_directory, side_by_side_shares

TASKS = ("classification", "regression")
# --model: the estimator of each task.
MODELS = {
    "tree": ("DecisionTreeClassifier", "DecisionTreeRegressor"),
    "forest": ("RandomForestClassifier", "RandomForestRegressor"),
    "extra-trees": ("ExtraTreesClassifier", "ExtraTreesRegressor"),
    "boosting": ("GradientBoostingClassifier", "GradientBoostingRegressor"),
    "adaboost": ("AdaBoostClassifier", "AdaBoostRegressor"),
}
TABLE_SUFFIXES = (".csv", ".parquet", ".pq")
PREDICTION_SUFFIXES = (".csv", ".npy")
# The distributions `gpuforest info` reports, and the import names of the benchmark peers not named by them.
DISTRIBUTIONS = ("gpuforest", "numpy", "numba", "numba-cuda", "cupy-cuda12x", "scikit-learn", "scipy", "pyarrow")
PEER_MODULES = {"scikit-learn": "sklearn", "gpuforest-ordinal": "gpuforest"}
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
# Rows of the data sets `gpuforest warmup` fits on: enough for every estimator to split, and for histograms.
WARMUP_SAMPLES = 1000


class UsageError(Exception):
    """An argument value the data or an estimator refuses: reported with the subcommand's usage, exit status 2."""


# ----------------------------------------------------------------------------------------------------------------
# Data files


def read_table(path):
    """A data file as a ``pyarrow.Table``; a ``.npy`` array's columns are named by their index.

    Parameters
    ----------
    path : str
        A ``.csv``, ``.parquet`` (or ``.pq``) or ``.npy`` file; a ``.npy`` array is of shape
        (n_samples, n_columns) and is read without pickles.

    Returns
    -------
    table : pyarrow.Table of shape (n_samples, n_columns)
    """
    import pyarrow as pa
    from pyarrow import csv, parquet

    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        return csv.read_csv(path)
    if suffix in (".parquet", ".pq"):
        return parquet.read_table(path)
    if suffix == ".npy":
        array = np.load(path, allow_pickle=False)
        if array.ndim != 2:
            raise ValueError(f"{path}: a .npy data file holds a 2-D array (rows x columns), got {array.ndim}-D.")
        return pa.table({str(index): array[:, index] for index in range(array.shape[1])})
    raise UsageError(f"{path}: a data file ends in {', '.join(TABLE_SUFFIXES + ('.npy',))}, not {suffix or 'nothing'}.")


def target_name(table, path, target):
    """The name of the column ``--target`` picks: a column name, or for a ``.npy`` file an index (negative
    counts from the last column)."""
    if Path(path).suffix.lower() == ".npy":
        try:
            index = int(target)
        except ValueError:
            raise UsageError(f"--target {target!r}: a .npy file's target is a column index, e.g. --target -1.")
        if not -table.num_columns <= index < table.num_columns:
            raise UsageError(f"--target {index}: {path} has {table.num_columns} columns (indices 0 to "
                             f"{table.num_columns - 1}).")
        return table.column_names[index]
    if target not in table.column_names:
        raise UsageError(f"--target {target!r}: {path} has no such column; its columns are "
                         f"{', '.join(table.column_names)}.")
    return target


def feature_matrix(table):
    """The numeric columns of ``table`` as float64 features, missing values as NaN.

    Returns
    -------
    X : ndarray of shape (n_samples, n_columns)
    """
    import pyarrow as pa

    columns = []
    for name, column in zip(table.column_names, table.columns):
        if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
                or pa.types.is_boolean(column.type) or pa.types.is_null(column.type)):
            raise ValueError(f"Feature column {name!r} is {column.type}, not numeric: encode it as numbers "
                             "(categories as codes 0, 1, ..., declared with --param categorical_features=[...]), "
                             "or, if it is the target, name it with --target.")
        columns.append(column.cast(pa.float64()).to_numpy())
    return np.column_stack(columns) if columns else np.empty((table.num_rows, 0))


def target_vector(table, name):
    """The target column: numbers, or labels as str.

    Returns
    -------
    y : ndarray of shape (n_samples,)
    """
    column = table.column(name)
    if column.null_count:
        raise ValueError(f"Target column {name!r} has {column.null_count} missing values: drop those rows.")
    y = column.to_numpy()
    return y.astype(str) if y.dtype == object else y


def read_data(path, target):
    """Features and target of a data file.

    Parameters
    ----------
    path : str
        As in ``read_table``.
    target : str or None
        The ``--target`` argument; None: every column is a feature.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or None
    """
    table = read_table(path)
    if target is None:
        return feature_matrix(table), None
    name = target_name(table, path, target)
    return feature_matrix(table.drop_columns([name])), target_vector(table, name)


def checked_features(model, X):
    """``X`` if it has the model's feature count, else a ``UsageError`` saying how to fix it."""
    expected = model.n_features_in_
    if X.shape[1] == expected:
        return X
    hint = " (name the target column to drop with --target)" if X.shape[1] == expected + 1 else ""
    raise UsageError(f"The data has {X.shape[1]} feature columns, the model was trained on {expected}{hint}.")


def write_predictions(values, columns, output):
    """Predictions to a ``.csv`` or ``.npy`` file, or as CSV to stdout when ``output`` is None.

    Parameters
    ----------
    values : ndarray of shape (n_samples,) or (n_samples, n_columns)
    columns : list of str of length n_columns
        The CSV header.
    output : str or None
    """
    import pyarrow as pa
    from pyarrow import csv

    values = values.reshape(values.shape[0], -1)
    if output is not None and Path(output).suffix.lower() == ".npy":
        np.save(output, values.squeeze(axis=1) if values.shape[1] == 1 else values, allow_pickle=False)
        return
    if output is not None and Path(output).suffix.lower() != ".csv":
        raise UsageError(f"--output {output}: predictions are written to {' or '.join(PREDICTION_SUFFIXES)}.")
    table = pa.table({name: np.ascontiguousarray(values[:, index]) for index, name in enumerate(columns)})
    if output is not None:
        csv.write_csv(table, output)
        return
    sink = io.BytesIO()
    csv.write_csv(table, sink)
    sys.stdout.write(sink.getvalue().decode())


# ----------------------------------------------------------------------------------------------------------------
# Estimators


def parse_param(text):
    """``key=value`` as ``(key, value)``: the value as a Python literal (``ast.literal_eval``), else as the
    string itself, so that ``criterion=entropy`` needs no quotes."""
    key, separator, value = text.partition("=")
    if not separator or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"{text!r} is not key=value (e.g. max_depth=8)")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value


def positive_int(text):
    """An argument of at least 1 (argparse's ``type``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def infer_task(y):
    """``"classification"`` for labels, ``"regression"`` for a continuous target or for integers of more
    distinct values than half the rows (scikit-learn's threshold for warning that integer labels may be a
    regression target), as ``sklearn.utils.multiclass.type_of_target`` tells them apart."""
    kind = type_of_target(y)
    many_values = y.dtype.kind in "iuf" and np.unique(y).size > y.shape[0] / 2
    if kind == "continuous" or (kind == "multiclass" and many_values):
        return "regression"
    if kind in ("binary", "multiclass"):
        return "classification"
    raise ValueError(f"Cannot tell the task from a {kind} target: give --task classification or regression.")


def make_estimator(model, task, params, device, verbose=1, module=gpuforest):
    """The estimator of ``model`` and ``task`` with ``params``, and ``device`` (None: the estimator's default)
    and ``verbose`` (its progress output, where it has one) unless ``params`` set them; ``module``: where the
    estimator classes are (``gpuforest.dask`` for a cluster)."""
    name = MODELS[model][TASKS.index(task)]
    if not hasattr(module, name):
        raise UsageError(f"--model {model}: {module.__name__} has no {name}.")
    estimator = getattr(module, name)()
    accepted = estimator.get_params()
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise UsageError(f"--param {', '.join(unknown)}: {type(estimator).__name__} takes no such parameter; it "
                         f"takes {', '.join(sorted(accepted))}.")
    defaults = {"device": device} if device is not None else {}
    if "verbose" in accepted:
        defaults["verbose"] = verbose
    return estimator.set_params(**{**defaults, **params})


def fit(estimator, X, y):
    """``estimator.fit(X, y)``; a parameter its validation refuses is a usage error."""
    try:
        return estimator.fit(X, y)
    except InvalidParameterError as error:
        raise UsageError(f"--param: {error}")


def metric_rows(estimator, X, y):
    """``(metric, value)`` of a fitted estimator on ``(X, y)``: accuracy, log loss and ROC AUC (one against
    the rest for several classes; NaN when ``y`` holds one class) of a classifier; R^2, RMSE and MAE of a
    regressor."""
    if not is_classifier(estimator):
        predicted = estimator.predict(X)
        return [("r2", r2_score(y, predicted)), ("rmse", np.sqrt(mean_squared_error(y, predicted))),
                ("mae", mean_absolute_error(y, predicted))]
    classes = estimator.classes_
    unseen = np.setdiff1d(y, classes)
    if unseen.size:
        raise ValueError(f"The target holds labels the model was not trained on: {unseen[:5].tolist()}.")
    proba = estimator.predict_proba(X)
    rows = [("accuracy", accuracy_score(y, estimator.predict(X))), ("log_loss", log_loss(y, proba, labels=classes))]
    if np.unique(y).size < 2:
        return rows + [("roc_auc", np.nan)]
    if classes.size == 2:
        return rows + [("roc_auc", roc_auc_score(y, proba[:, 1]))]
    return rows + [("roc_auc", roc_auc_score(y, proba, multi_class="ovr", labels=classes))]


def print_metrics(rows, n_samples, title):
    """The table of ``metric_rows`` under ``title``: a metric and its value a line."""
    print(f"{title} ({n_samples} rows)")
    for name, value in rows:
        print(f"  {name:<10}{value:>12.6f}")


# ----------------------------------------------------------------------------------------------------------------
# Subcommands


def distributed(X, y, client):
    """``X`` and ``y`` as dask arrays of one row partition per worker of ``client``."""
    import dask.array as da

    n_workers = max(1, len(client.scheduler_info()["workers"]))
    chunk_rows = max(1, -(-X.shape[0] // n_workers))
    return da.from_array(X, chunks=(chunk_rows, X.shape[1])), da.from_array(y, chunks=chunk_rows)


def connect(address):
    """A ``distributed.Client`` of the scheduler at ``address``; a clear error without the dask extra."""
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--scheduler needs dask and distributed: pip install 'gpuforest[dask]'.") from None
    return Client(address, set_as_default=False)


def train(args):
    X, y = read_data(args.data, args.target)
    task = args.task or infer_task(y)
    if args.scheduler is None:
        estimator = make_estimator(args.model, task, dict(args.param), args.device)
    else:
        import gpuforest.dask

        estimator = make_estimator(args.model, task, dict(args.param), args.device, module=gpuforest.dask)
        estimator.set_params(client=connect(args.scheduler))
    X_eval = y_eval = None
    if args.eval_fraction is not None:
        stratify = y if task == "classification" and np.unique(y, return_counts=True)[1].min() >= 2 else None
        X, X_eval, y, y_eval = train_test_split(X, y, test_size=args.eval_fraction, random_state=args.seed,
                                                stratify=stratify)
    start = time.perf_counter()
    if args.scheduler is None:
        fit(estimator, X, y)
    else:
        # The local estimator of the cluster's fit: the model of a local fit, saved and scored as one.
        client = estimator.client
        estimator = fit(estimator, *distributed(X, y, client)).to_local()
        client.close()
    print(f"Trained {type(estimator).__name__} on {X.shape[0]} rows x {X.shape[1]} features in "
          f"{time.perf_counter() - start:.2f} s.")
    if args.output is not None:
        estimator.save_model(args.output)
        print(f"Saved the model to {args.output}.")
    if X_eval is not None:
        print_metrics(metric_rows(estimator, X_eval, y_eval), X_eval.shape[0], "Held-out scores")


def predict(args):
    model = gpuforest.load_model(args.model, device=args.device)
    X, _ = read_data(args.data, args.target)
    X = checked_features(model, X)
    if not args.proba:
        write_predictions(model.predict(X), ["prediction"], args.output)
        return
    if not hasattr(model, "predict_proba"):
        raise UsageError(f"--proba: the model ({type(model).__name__}) gives no probabilities.")
    write_predictions(model.predict_proba(X), [f"proba_{label}" for label in model.classes_], args.output)


def evaluate(args):
    model = gpuforest.load_model(args.model, device=args.device)
    X, y = read_data(args.data, args.target)
    X = checked_features(model, X)
    print_metrics(metric_rows(model, X, y), X.shape[0], f"{type(model).__name__} on {args.data}")


def export(args):
    model = gpuforest.load_model(args.model, device=args.device)
    if args.format == "dot":
        text = gpuforest.export_graphviz(model, out_file=args.output, tree_index=args.tree_index)
        if args.output is None:
            sys.stdout.write(text)
        return
    if args.output is None:
        raise UsageError(f"--format {args.format} needs --output (the file to write).")
    if args.format == "json":
        model.save_model(args.output)
        return
    if not hasattr(model, "to_treelite"):
        raise UsageError(f"--format treelite: {type(model).__name__} has no Treelite export (to_treelite) in "
                         f"gpuforest {gpuforest.__version__}; export json or dot.")
    model.to_treelite().serialize(args.output)


def info(args):
    for distribution in DISTRIBUTIONS:
        try:
            version = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            version = "not installed"
        print(f"{distribution:<14}{version}")
    print(f"{'python':<14}{sys.version.split()[0]}")
    print(f"backend       {get_backend('auto').name} (device='auto')")
    print(f"kernel cache  {kernel_cache_directory()}")
    print(f"prebuilt      {prebuilt.status()} ({prebuilt.PREBUILT_DIRECTORY})")
    gpuforest.show_devices()


def warmup_data():
    """Tiny classification and regression sets with a missing value in every feature and a last feature of
    codes, declared categorical or not, which between them take the kernel specialisations of a fit: rows
    enough for the first levels' histograms, two and three classes.

    Returns
    -------
    X : ndarray of shape (WARMUP_SAMPLES, 4)
    targets : dict of task -> list of ndarray of shape (WARMUP_SAMPLES,)
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(WARMUP_SAMPLES, 4))
    X[:, 3] = rng.integers(0, 5, size=WARMUP_SAMPLES)
    regression = X[:, 0] + (X[:, 3] == 2) + rng.normal(scale=0.1, size=WARMUP_SAMPLES)
    X[rng.integers(0, WARMUP_SAMPLES, size=4), np.arange(4)] = np.nan
    classes = [np.digitize(regression, np.quantile(regression, q)) for q in ([0.5], [1 / 3, 2 / 3])]
    return X, {"classification": classes, "regression": [regression]}


def warmup_fits():
    """``(model, task, categorical)`` of every warm-up fit, the decision tree's first: it compiles the kernels
    that every other fit shares."""
    return [(model, task, categorical) for categorical in (False, True) for model in MODELS for task in TASKS]


def warmup_fit(model, task, categorical, device):
    """Fit one warm-up estimator (ensembles of two members) on ``warmup_data`` and predict, from float64 values
    and from float32 ones (X keeps float32 where it holds the values exactly); returns its report line."""
    X, targets = warmup_data()
    estimator = make_estimator(model, task, {"categorical_features": [3] if categorical else None,
                                             "random_state": 0}, device, verbose=0)
    if "n_estimators" in estimator.get_params():
        # Two members take the kernels that more would: more only lengthen the warm-up.
        estimator.set_params(n_estimators=2)
    start = time.perf_counter()
    # Small fits grow in the CPU's compiled level loop, larger ones' first levels in the grower's own: both.
    for levels in (contextlib.nullcontext(), python_levels()):
        with levels:
            for X_values in (X, X.astype(np.float32)):
                for y in targets[task]:
                    fit(estimator, X_values, y).predict(X_values)
    kind = "categorical" if categorical else "numeric"
    return f"{type(estimator).__name__:<28}{kind:<13}{time.perf_counter() - start:>7.2f} s"


def warmup_share(models, device):
    """``warmup_fit`` of every warm-up fit of ``models``, in turn, after ``warmup_binning``; returns their report
    lines."""
    warmup_binning()
    return [warmup_fit(*fit, device) for fit in warmup_fits() if fit[0] in models]


def warmup_binning():
    """Fit bins on a subsample of ``warmup_data``, as fits of more than ``binning.SUBSAMPLE`` rows do (its row
    draws are kernels of their own)."""
    X, _ = warmup_data()
    BinMapper(subsample=WARMUP_SAMPLES // 2, random_state=0).fit(X)


def warmup(args):
    total = time.perf_counter()
    if args.native:
        # This process and its workers compile instead of loading the prebuilt kernels.
        os.environ[prebuilt.ENVIRONMENT_SWITCH] = "0"
    shares = side_by_side_shares(list(MODELS), args.jobs)
    for lines in compile_in_processes(warmup_share, [(share, args.device) for share in shares]):
        print("\n".join(lines), flush=True)
    kernels = f"cached in {kernel_cache_directory()}"
    if prebuilt.unused_reason() is None:
        kernels = f"prebuilt in {prebuilt.PREBUILT_DIRECTORY} (--native compiles them for this CPU), others {kernels}"
    print(f"Fitted every estimator in {time.perf_counter() - total:.1f} s; the CPU kernels are {kernels}.")


def installed_peers(script):
    """The libraries a benchmark script compares (its ``LIBRARIES``) that are installed; None if it names none."""
    tree = ast.parse(script.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == "LIBRARIES" for target in node.targets):
            libraries = ast.literal_eval(node.value)
            return [library for library in libraries
                    if importlib.util.find_spec(PEER_MODULES.get(library, library.replace("-", "_"))) is not None]
    return None


def bench(args):
    import subprocess

    scripts = {path.stem.removeprefix("bench_"): path for path in sorted(BENCHMARKS.glob("bench_*.py"))}
    if not scripts:
        raise ValueError(f"The benchmarks are in the repository checkout (benchmarks/bench_*.py), which is not "
                         f"at {BENCHMARKS}: run `gpuforest bench` from an editable install of a clone.")
    if args.benchmark is None:
        print("Benchmarks: " + ", ".join(scripts) + " (gpuforest bench NAME [its options]; NAME --help lists them).")
        return
    if args.benchmark not in scripts:
        raise UsageError(f"No benchmark {args.benchmark!r}; there are {', '.join(scripts)}.")
    script_args = list(args.script_args)
    peers = installed_peers(scripts[args.benchmark])
    if peers is not None and "--libraries" not in script_args and "--help" not in script_args:
        script_args = ["--libraries", *peers, *script_args]
    command = [sys.executable, str(scripts[args.benchmark]), *script_args]
    print(" ".join(command), flush=True)
    return subprocess.call(command, cwd=BENCHMARKS)


def demo(args):
    from . import demo as demo_module

    np.seterr(all="ignore")
    demo_module.main()


# ----------------------------------------------------------------------------------------------------------------
# Parser


def fraction(text):
    """An ``--eval-fraction``: a float strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not strictly between 0 and 1")
    return value


def build_parser():
    parser = argparse.ArgumentParser(
        prog="gpuforest", description="Train, apply and inspect gpuforest tree ensembles.",
        epilog="Run `gpuforest COMMAND --help` for a command's options. Exit status: 0 success, 2 usage error, "
               "1 other error.",
    )
    parser.add_argument("--version", action="version", version=f"gpuforest {gpuforest.__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, function, help, description=None):
        subparser = commands.add_parser(name, help=help, description=description or help)
        subparser.set_defaults(run=function, parser=subparser)
        return subparser

    data_help = "a .csv, .parquet or .npy file"
    train_parser = command("train", train, "fit a model on a data file and save it", description=(
        "Fit a model on a data file. The held-out scores (--eval-fraction) are those of `gpuforest evaluate`."))
    train_parser.add_argument("data", help=data_help)
    train_parser.add_argument("--target", required=True, help="the target column: its name (.npy: its index)")
    train_parser.add_argument("--model", choices=list(MODELS), default="forest", help="the model kind (default forest)")
    train_parser.add_argument("--task", choices=TASKS, help="default: classification for labels, regression for "
                                                             "continuous targets")
    train_parser.add_argument("--param", type=parse_param, action="append", default=[], metavar="KEY=VALUE",
                              help="an estimator parameter, a Python literal or a string (repeatable), "
                                   "e.g. --param max_depth=8 --param criterion=entropy")
    train_parser.add_argument("--device", choices=DEVICES, help="the estimator's device (default: its own, auto)")
    train_parser.add_argument("--eval-fraction", type=fraction, metavar="F",
                              help="hold out this fraction of the rows (stratified for classes) and print the scores")
    train_parser.add_argument("--seed", type=int, default=0, help="the seed of the held-out rows (default 0)")
    train_parser.add_argument("--output", "-o", help="the model file to write")
    train_parser.add_argument("--scheduler", metavar="ADDRESS", help="fit on the Dask cluster of this scheduler "
                              "(gpuforest.dask; the dask extra): the model of a local fit, row partitions sent to "
                              "its workers, one per worker")

    predict_parser = command("predict", predict, "predict with a saved model", description=(
        "Predict with a saved model: CSV to stdout, or a .csv or .npy file with --output."))
    evaluate_parser = command("evaluate", evaluate, "score a saved model on labelled data", description=(
        "Score a saved model: accuracy, log loss and ROC AUC for classifiers; R2, RMSE and MAE for regressors."))
    for subparser in (predict_parser, evaluate_parser):
        subparser.add_argument("model", help="a model file (save_model, gpuforest train)")
        subparser.add_argument("data", help=data_help)
    predict_parser.add_argument("--target", help="a column to leave out of the features (name; .npy: index)")
    predict_parser.add_argument("--proba", action="store_true", help="class probabilities, a column per class")
    predict_parser.add_argument("--output", "-o", help="a .csv or .npy file (default: CSV to stdout)")
    evaluate_parser.add_argument("--target", required=True, help="the target column: its name (.npy: its index)")

    export_parser = command("export", export, "write a saved model as JSON, DOT or Treelite", description=(
        "Write a saved model: json, the model file; dot, Graphviz (export_graphviz); treelite, to_treelite()."))
    export_parser.add_argument("model", help="a model file")
    for subparser in (predict_parser, evaluate_parser, export_parser):
        subparser.add_argument("--device", choices=DEVICES, default="auto", help="where the loaded model predicts "
                               "(default auto), whatever device trained it")
    export_parser.add_argument("--format", choices=("json", "dot", "treelite"), required=True)
    export_parser.add_argument("--tree-index", type=int, help="dot: the member of an ensemble (default: all)")
    export_parser.add_argument("--output", "-o", help="the file to write (dot: default stdout)")

    command("info", info, "versions, the backend, GPUs and the kernel cache")
    warmup_parser = command("warmup", warmup, "compile and cache the kernels: fit each estimator on tiny data")
    warmup_parser.add_argument("--device", choices=DEVICES, help="the device to compile for (default auto)")
    warmup_parser.add_argument(
        "--jobs", type=positive_int, help="processes compiling side by side (default: one per core)"
    )
    warmup_parser.add_argument(
        "--native", action="store_true", help="compile the CPU kernels for this CPU (a few percent faster "
        "than the prebuilt portable ones on boosting, slower on small trees; about a minute)"
    )
    bench_parser = command("bench", bench, "run a benchmark of the repository checkout", description=(
        "Run benchmarks/bench_NAME.py of the repository checkout against the installed peers (scikit-learn, "
        "LightGBM, XGBoost); without NAME, list the benchmarks."))
    bench_parser.add_argument("benchmark", nargs="?", metavar="NAME")
    bench_parser.add_argument("script_args", nargs=argparse.REMAINDER, metavar="...", help="the script's options")
    command("demo", demo, "gpuforest next to scikit-learn on bundled data sets (make demo)")
    return parser


def main(argv=None):
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit status (a benchmark's own,
    for ``bench``). Usage errors exit 2 through ``SystemExit``, as argparse's do."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status = args.run(args)
    except UsageError as error:
        args.parser.error(str(error))
    except (ValueError, TypeError, OSError) as error:
        print(f"gpuforest {args.command}: error: {error}", file=sys.stderr)
        return 1
    return status or 0


if __name__ == "__main__":
    sys.exit(main())
