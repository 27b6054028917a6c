"""Benchmark: a decision tree on categorical features, gpuforest vs scikit-learn on one-hot encoded data.

The data (``categorical_data``): ``bench_common.synthetic_data`` (default 1M rows x 28
features, like HIGGS, and 100k test rows), then the five features of largest ANOVA F
statistic on the training rows (``sklearn.feature_selection.f_classif``: informative ones)
become categorical. Each is cut into 8, 16, 24, 40 and 64 quantile buckets (of the training
rows) and the buckets get codes in a random order, so the categories carry the feature's
signal but their codes are in no useful order. The five columns move to the end of X.

Three rows, each library in its own child process by ``bench_common``'s method (a warm-up fit
on tiny data reported apart, ``--runs N``, peak memory of each fit its own):

- ``gpuforest``: ``DecisionTreeClassifier(categorical_features=<the five>)``: binary subset
  splits on the categories;
- ``scikit-learn``: its ``DecisionTreeClassifier`` on the same data with the five columns
  one-hot encoded (``OneHotEncoder``, dense float32, which scikit-learn's splitter reads
  fastest); the encoding of the training and test rows is timed apart and not counted in the
  fit or predict time (the favourable choice for scikit-learn);
- ``gpuforest-ordinal``: gpuforest on the same data without ``categorical_features``, the codes
  as ordered numbers: what the categorical splits buy.

All grow to the same ``max_depth`` (default 16) with the same ``random_state``. Reported: fit and
predict times, test accuracy, tree size (leaves, depth), the ratios of each row's times over
gpuforest's. Writes JSON and a markdown table to ``benchmarks/results/``.

    python benchmarks/bench_categorical.py [--n-samples 1000000] [--n-features 28] [--max-depth 16]
        [--device cpu] [--libraries gpuforest scikit-learn gpuforest-ordinal] [--runs 1] [--output-name NAME]
"""

import argparse

import bench_common
import numpy as np
import sklearn
from bench_common import WARM_UP_SAMPLES, best_time, synthetic_data
from sklearn.feature_selection import f_classif
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier

import gpuforest

LIBRARIES = ("gpuforest", "scikit-learn", "gpuforest-ordinal")
# Categories of each categorical column, within the 8 to 64 of #14's benchmark.
CATEGORY_COUNTS = (8, 16, 24, 40, 64)
# The acceptance of #14: gpuforest's categorical tree fits at least this much faster than
# scikit-learn's on one-hot encoded data, at equal or better test accuracy.
REQUIRED_FIT_RATIO = 3.0

SETTINGS_NOTES = {
    "gpuforest": (
        "The five categorical columns split by category subsets (categories sorted by class proportion and "
        "scanned, as LightGBM does); max_bins=256 by default."
    ),
    "scikit-learn": (
        "The five categorical columns one-hot encoded (OneHotEncoder(sparse_output=False, dtype=float32, "
        "handle_unknown='ignore'), fitted on the training rows) next to the numeric columns; exact splits."
    ),
    "gpuforest-ordinal": "No categorical_features: the category codes split as ordered numbers.",
}


def categorical_data(n_samples, n_features, seed):
    """``bench_common.synthetic_data`` with five informative features as categories, moved to the end.

    Returns
    -------
    X_train : ndarray of shape (n_samples, n_features), dtype float32
        Columns ``n_features - 5 ..`` hold category codes ``0 .. k - 1``, ``k`` from ``CATEGORY_COUNTS``.
    y_train : ndarray of shape (n_samples,)
    X_test : ndarray of shape (n_samples // 10, n_features), dtype float32
    y_test : ndarray of shape (n_samples // 10,)
    """
    X_train, y_train, X_test, y_test = synthetic_data("classification", n_samples, n_features, seed)
    f_statistic, _ = f_classif(X_train, y_train)
    informative = np.argsort(f_statistic)[::-1][: len(CATEGORY_COUNTS)]
    order = np.concatenate([np.setdiff1d(np.arange(n_features), informative), informative])
    X_train, X_test = X_train[:, order], X_test[:, order]
    rng = np.random.default_rng(seed)
    for column, n_categories in zip(categorical_columns(n_features), CATEGORY_COUNTS):
        edges = np.quantile(X_train[:, column], np.arange(1, n_categories) / n_categories)
        codes = rng.permutation(n_categories).astype(np.float32)
        X_train[:, column] = codes[np.searchsorted(edges, X_train[:, column])]
        X_test[:, column] = codes[np.searchsorted(edges, X_test[:, column])]
    return X_train, y_train, X_test, y_test


def categorical_columns(n_features):
    """Indices of the categorical columns of ``categorical_data``: the last ``len(CATEGORY_COUNTS)``."""
    return list(range(n_features - len(CATEGORY_COUNTS), n_features))


def settings(library, args):
    """Each row's tree parameters: the same tree, with or without the categorical features declared."""
    if library == "scikit-learn":
        return dict(max_depth=args.max_depth, random_state=args.seed)
    parameters = dict(max_depth=args.max_depth, random_state=args.seed, device=args.device)
    if library == "gpuforest":
        parameters["categorical_features"] = categorical_columns(args.n_features)
    return parameters


# --- one library in this process ----------------------------------------------------------


class OneHotColumns:
    """The numeric columns of X followed by the one-hot encoding of its categorical ``columns``."""

    def __init__(self, columns):
        self.columns = columns
        self.encoder = OneHotEncoder(sparse_output=False, dtype=np.float32, handle_unknown="ignore")

    def fit(self, X):
        self.encoder.fit(X[:, self.columns])
        return self

    def transform(self, X):
        numeric = np.delete(X, self.columns, axis=1)
        return np.hstack([numeric, self.encoder.transform(X[:, self.columns])])


def _one_hot_data(data, columns):
    """``data`` with ``columns`` one-hot encoded, and the seconds of encoding the training and the test rows."""
    X_train, y_train, X_test, y_test = data
    encoding = OneHotColumns(columns)
    train_seconds, X_train = best_time(lambda: encoding.fit(X_train).transform(X_train))
    test_seconds, X_test = best_time(lambda: encoding.transform(X_test))
    return (X_train, y_train, X_test, y_test), {"encode_train_s": train_seconds, "encode_test_s": test_seconds}


def _score(estimator, y_true, predictions):
    return {
        "accuracy": float(np.mean(predictions == y_true)),
        "leaves": int(estimator.get_n_leaves()),
        "depth": int(estimator.get_depth()),
    }


def measure(library, args, data):
    """Fit and predict ``library``'s tree in this process: times, test accuracy, tree size, peak memory."""
    parameters = settings(library, args)
    warm_up_data = categorical_data(WARM_UP_SAMPLES, args.n_features, args.seed)
    if library == "scikit-learn":
        columns = categorical_columns(args.n_features)
        data, encoding_times = _one_hot_data(data, columns)
        warm_up_data, _ = _one_hot_data(warm_up_data, columns)
        make_estimator, version = lambda: DecisionTreeClassifier(**parameters), sklearn.__version__
    else:
        encoding_times = {}
        make_estimator, version = lambda: gpuforest.DecisionTreeClassifier(**parameters), gpuforest.__version__
    row, estimator = bench_common.measure(
        library, version, make_estimator, parameters, data, warm_up_data,
        predict=lambda estimator, X: estimator.predict(X), score=_score,
    )
    row["n_columns_fitted"] = int(data[0].shape[1])
    if library != "scikit-learn":
        row["device_used"] = estimator.device_
    return {**row, **encoding_times}


def _data(args):
    return categorical_data(args.n_samples, args.n_features, args.seed)


# --- the report -----------------------------------------------------------------------------


def _markdown(report):
    result = report["results"]
    rows = {row["library"]: row for row in result["rows"]}
    lines = bench_common.method_lines("Categorical decision tree: gpuforest vs scikit-learn on one-hot data", report)
    lines += [
        "",
        f"## {result['n_samples']:,} x {result['n_features']} train ({len(CATEGORY_COUNTS)} categorical columns of "
        f"{', '.join(map(str, CATEGORY_COUNTS))} categories), {result['n_test']:,} test, "
        f"max_depth={result['max_depth']}",
        "",
    ]
    lines += bench_common.table_lines(
        result["rows"], [("accuracy", "test accuracy", ".4f"), ("leaves", "leaves", ","), ("depth", "depth", "d")]
    )
    lines += bench_common.fit_runs_lines(result["rows"])
    lines += bench_common.compile_lines(result)
    lines += _encoding_lines(rows.get("scikit-learn"))
    lines += _acceptance_lines(rows.get("gpuforest"), rows.get("scikit-learn"))
    lines += bench_common.settings_lines(result["rows"], lambda library: "DecisionTreeClassifier", SETTINGS_NOTES)
    return "\n".join(lines)


def _encoding_lines(row):
    """The line on scikit-learn's one-hot encoding time, not counted in its fit or predict time."""
    if row is None or "error" in row:
        return []
    return [
        "",
        f"scikit-learn's one-hot encoding ({row['n_columns_fitted']} columns fitted), not counted in its times: "
        f"{row['encode_train_s']:.2f} s for the training rows, {row['encode_test_s']:.3f} s for the test rows.",
    ]


def _acceptance_lines(ours, theirs):
    """#14's acceptance: a fit ``REQUIRED_FIT_RATIO`` times faster than scikit-learn's at equal or better accuracy."""
    if ours is None or theirs is None or "error" in theirs:
        return []
    met = theirs["fit_ratio"] >= REQUIRED_FIT_RATIO and ours["accuracy"] >= theirs["accuracy"]
    return [
        "",
        f"Acceptance (#14: at least {REQUIRED_FIT_RATIO:g}x faster fit at equal or better test accuracy): "
        f"**{'met' if met else 'not met'}**: fit {theirs['fit_ratio']:.2f}x faster, test accuracy "
        f"{ours['accuracy']:.4f} against {theirs['accuracy']:.4f}.",
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=1_000_000)
    parser.add_argument("--n-features", type=int, default=28)
    parser.add_argument("--max-depth", type=int, default=16)
    parser.add_argument("--libraries", nargs="+", choices=LIBRARIES, default=list(LIBRARIES))
    bench_common.add_shared_arguments(parser, LIBRARIES)
    parser.set_defaults(task="classification", n_estimators=1)  # the fields of bench_common's report: one tree
    args = parser.parse_args()
    if args.n_features <= len(CATEGORY_COUNTS):
        parser.error(f"--n-features must be above {len(CATEGORY_COUNTS)}, the number of categorical columns")
    if args.only:
        bench_common.run_child(args, measure, _data)
        return
    report = bench_common.make_report(lambda: bench_common.run_report(__file__, args, _data))
    stem = args.output_name or f"categorical_tree_{args.device}_{args.n_samples}x{args.n_features}"
    bench_common.save_report(report, stem, _markdown(report))


if __name__ == "__main__":
    main()
