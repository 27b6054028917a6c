"""Benchmark: random forests, gpuforest vs scikit-learn, LightGBM and XGBoost, in one run.

Fits and predicts a random forest (default 100 trees, max_depth=16, sqrt(n_features)
features per split, bootstrap samples) on synthetic data (default 1M rows x 28 features,
like HIGGS, and 100k test rows) with each library, each in its own child process (this
script run again with ``--only LIBRARY``), so that each fit's peak memory is its own.
Every child first fits its library once on tiny data (for gpuforest, its one-off JIT
compile), reported apart and not included in the fit time. Ratios are each peer's time
over gpuforest's in the same run (>1: gpuforest is faster). Writes JSON and a markdown
table to ``benchmarks/results/``.

    python benchmarks/bench_forest.py [--n-samples 1000000] [--n-features 28] [--n-estimators 100]
        [--max-depth 16] [--device cpu] [--task classification|regression]
        [--libraries gpuforest scikit-learn lightgbm xgboost] [--runs 1] [--output-name NAME]
"""

import argparse
import math
from importlib import import_module

import bench_common
from bench_common import WARM_UP_SAMPLES, synthetic_data
from sklearn.metrics import accuracy_score, r2_score

LIBRARIES = ("gpuforest", "scikit-learn", "lightgbm", "xgboost")
# (module, class) of each library's forest, per task.
ESTIMATORS = {
    "gpuforest": ("gpuforest", "RandomForestClassifier", "RandomForestRegressor"),
    "scikit-learn": ("sklearn.ensemble", "RandomForestClassifier", "RandomForestRegressor"),
    "lightgbm": ("lightgbm", "LGBMClassifier", "LGBMRegressor"),
    "xgboost": ("xgboost", "XGBRFClassifier", "XGBRFRegressor"),
}
# A bootstrap sample of n draws holds 1 - 1/e of the rows; LightGBM and XGBoost sample
# without replacement only, so they get that fraction of distinct rows.
BOOTSTRAP_DISTINCT_FRACTION = 0.632
# The largest num_leaves LightGBM accepts.
LIGHTGBM_MAX_LEAVES = 131072


def _feature_fraction(n_features):
    """Fraction of the features per split that LightGBM and XGBoost turn into scikit-learn's "sqrt".

    scikit-learn draws ``k = max(1, int(sqrt(n_features)))`` features (5 of 28). LightGBM
    rounds ``fraction * n_features`` and XGBoost truncates it; ``(k + 0.25) / n_features``
    gives k under both (``sqrt(28) / 28`` happens to as well, but not for every n_features).
    """
    k = max(1, int(math.sqrt(n_features)))
    return (k + 0.25) / n_features


def settings(library, args):
    """The parameters each library's forest gets: the same forest, in each one's terms."""
    depth, seed, fraction = args.max_depth, args.seed, _feature_fraction(args.n_features)
    if library == "gpuforest":
        return dict(
            n_estimators=args.n_estimators, max_depth=depth, max_features="sqrt", random_state=seed,
            device=args.device, n_jobs=None,
        )
    if library == "scikit-learn":
        return dict(
            n_estimators=args.n_estimators, max_depth=depth, max_features="sqrt", bootstrap=True,
            random_state=seed, n_jobs=-1,
        )
    if library == "lightgbm":
        return dict(
            boosting_type="rf", n_estimators=args.n_estimators, max_depth=-1 if depth is None else depth,
            num_leaves=LIGHTGBM_MAX_LEAVES if depth is None else min(2**depth, LIGHTGBM_MAX_LEAVES),
            subsample=BOOTSTRAP_DISTINCT_FRACTION, subsample_freq=1, feature_fraction_bynode=fraction,
            colsample_bytree=1.0, min_child_samples=1, min_child_weight=0.0, reg_lambda=0.0, max_bin=255,
            deterministic=True, force_row_wise=True, random_state=seed, n_jobs=-1, verbosity=-1,
        )
    if library == "xgboost":
        return dict(
            n_estimators=args.n_estimators, max_depth=0 if depth is None else depth, tree_method="hist",
            subsample=BOOTSTRAP_DISTINCT_FRACTION, colsample_bynode=fraction, min_child_weight=0.0,
            reg_lambda=0.0, max_bin=255, random_state=seed, n_jobs=-1,
            device="cuda" if args.device == "cuda" else "cpu",
        )
    raise ValueError(f"unknown library {library!r}")


SETTINGS_NOTES = {
    "gpuforest": "max_bins=256 by default: 255 value bins plus one for missing values.",
    "scikit-learn": "Exact splits (no binning); bootstrap of n_samples draws with replacement.",
    "lightgbm": (
        "`boosting_type=\"rf\"` needs bagging, and LightGBM samples without replacement: "
        "`subsample` (bagging_fraction) = 0.632, the fraction of distinct rows in a bootstrap, every "
        "iteration (`subsample_freq=1`). `feature_fraction_bynode` draws features per split, like "
        "`max_features`. num_leaves = 2**max_depth (the full tree; LightGBM's limit is 131072) so that "
        "only max_depth bounds the tree; min_child_samples=1, min_child_weight (min_sum_hessian_in_leaf)=0 "
        "and reg_lambda=0 so that no regularisation stops a split scikit-learn would make; 255 bins; "
        "`deterministic` with `force_row_wise` for repeatable trees. Its fit memory is dominated by its "
        "histogram cache, num_leaves x n_features x bins x 16 B whatever the rows (about 7.5 GB at "
        "65536 x 28 x 255); `histogram_pool_size` would cap it, at some speed: left at LightGBM's default "
        "(no cap)."
    ),
    "xgboost": (
        "XGBRF* grows all trees in one round (num_parallel_tree=n_estimators, learning_rate=1). "
        "No sampling with replacement either: `subsample=0.632` without replacement, as for LightGBM. "
        "min_child_weight=0 (its default 1 would need 4 rows per leaf at hessian 0.25) and reg_lambda=0; "
        "max_bin=255 value bins; device follows --device."
    ),
}


# --- one library in this process ----------------------------------------------------------


def _estimator(library, task, parameters):
    module, classifier, regressor = ESTIMATORS[library]
    return getattr(import_module(module), classifier if task == "classification" else regressor)(**parameters)


def _score(task):
    metric, score = ("accuracy", accuracy_score) if task == "classification" else ("r2", r2_score)
    return lambda estimator, y_true, predictions: {metric: float(score(y_true, predictions))}


def measure(library, args, data):
    """Fit and predict with ``library`` in this process: times, test score and peak memory."""
    parameters = settings(library, args)
    row, estimator = bench_common.measure(
        library,
        import_module(ESTIMATORS[library][0].split(".")[0]).__version__,
        lambda: _estimator(library, args.task, parameters),
        parameters,
        data,
        warm_up_data=synthetic_data(args.task, WARM_UP_SAMPLES, args.n_features, args.seed),
        predict=lambda estimator, X: estimator.predict(X),
        score=_score(args.task),
    )
    if library == "gpuforest":
        row["device_used"] = estimator.device_
    return row


def _data(args):
    return synthetic_data(args.task, args.n_samples, args.n_features, args.seed)


def _markdown(report):
    result = report["results"]
    metric = "accuracy" if result["task"] == "classification" else "r2"
    lines = bench_common.method_lines("Random forest: gpuforest vs scikit-learn, LightGBM, XGBoost", report)
    lines += [
        "",
        f"## {result['task']}: {result['n_samples']:,} x {result['n_features']} train, {result['n_test']:,} test, "
        f"{result['n_estimators']} trees, max_depth={result['max_depth']}, max_features=sqrt, bootstrap",
        "",
    ]
    lines += bench_common.table_lines(result["rows"], [(metric, f"test {metric}", ".4f")])
    lines += bench_common.fit_runs_lines(result["rows"])
    lines += bench_common.compile_lines(result)
    lines += bench_common.settings_lines(
        result["rows"], lambda library: _estimator_name(library, result["task"]), SETTINGS_NOTES
    )
    return "\n".join(lines)


def _estimator_name(library, task):
    _, classifier, regressor = ESTIMATORS[library]
    return classifier if task == "classification" else regressor


def _max_depth(text):
    return None if text.lower() == "none" else int(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=1_000_000)
    parser.add_argument("--n-features", type=int, default=28)
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--max-depth", type=_max_depth, default=16, help="an int, or none")
    parser.add_argument("--task", choices=["classification", "regression"], default="classification")
    parser.add_argument("--libraries", nargs="+", choices=LIBRARIES, default=list(LIBRARIES))
    bench_common.add_shared_arguments(parser, LIBRARIES)
    args = parser.parse_args()
    if args.only:
        bench_common.run_child(args, measure, _data)
        return
    report = bench_common.make_report(lambda: bench_common.run_report(__file__, args, _data))
    suffix = "" if args.task == "classification" else "_regression"
    stem = args.output_name or f"forest_{args.device}_{args.n_samples}x{args.n_features}{suffix}"
    bench_common.save_report(report, stem, _markdown(report))

if __name__ == "__main__":
    main()
