"""Benchmark: gradient boosting (and AdaBoost), gpuforest vs scikit-learn, LightGBM and XGBoost, in one run.

Fits and predicts boosted trees on synthetic data (default 1M rows x 28 features, like
HIGGS, and 100k test rows) with each library, each in its own child process (this script
run again with ``--only LIBRARY``), by the method of ``bench_forest.py`` (see
``bench_common``): peak memory of each fit its own, a warm-up fit on tiny data reported
apart, ratios of each peer's time over gpuforest's (>1: gpuforest is faster). Writes JSON
and a markdown table to ``benchmarks/results/``.

Tasks:

- ``classification`` (default): binary log loss, 200 rounds of trees of depth 8, 255
  value bins, learning rate 0.1, at least 20 rows per leaf, no L2, no early stopping;
  gpuforest's GradientBoostingClassifier, scikit-learn's HistGradientBoostingClassifier,
  LightGBM's LGBMClassifier, XGBoost's XGBClassifier. Timed prediction: predict_proba.
  Scores: test AUC and accuracy.
- ``regression``: the same with squared error; scores: test RMSE and R^2.
- ``--max-leaf-nodes N`` (classification, regression): best-first (leaf-wise) trees of N leaves
  instead, ``max_depth`` none unless given: gpuforest's default growth (``grow_policy="lossguide"``,
  31 leaves), HistGradientBoosting's ``max_leaf_nodes``, LightGBM's ``num_leaves``, XGBoost's
  ``grow_policy="lossguide"`` with ``max_leaves``.
- ``adaboost``: SAMME AdaBoost of decision stumps (default 200k x 28, 100 rounds),
  gpuforest's AdaBoostClassifier vs scikit-learn's; predict_proba, AUC and accuracy.

    python benchmarks/bench_boosting.py [--task classification|regression|adaboost]
        [--n-samples 1000000] [--n-features 28] [--n-estimators 200] [--max-depth 8]
        [--max-leaf-nodes N] [--device cpu] [--libraries gpuforest scikit-learn lightgbm xgboost] [--runs 1]
        [--output-name NAME]
"""

import argparse
from importlib import import_module

import bench_common
import numpy as np
from bench_common import WARM_UP_SAMPLES, synthetic_data
from sklearn.metrics import accuracy_score, r2_score, roc_auc_score, root_mean_squared_error
from sklearn.tree import DecisionTreeClassifier

LIBRARIES = ("gpuforest", "scikit-learn", "lightgbm", "xgboost")
TASKS = ("classification", "regression", "adaboost")
# The libraries of each task, and the (module, class) of each one's estimator.
ESTIMATORS = {
    "classification": {
        "gpuforest": ("gpuforest", "GradientBoostingClassifier"),
        "scikit-learn": ("sklearn.ensemble", "HistGradientBoostingClassifier"),
        "lightgbm": ("lightgbm", "LGBMClassifier"),
        "xgboost": ("xgboost", "XGBClassifier"),
    },
    "regression": {
        "gpuforest": ("gpuforest", "GradientBoostingRegressor"),
        "scikit-learn": ("sklearn.ensemble", "HistGradientBoostingRegressor"),
        "lightgbm": ("lightgbm", "LGBMRegressor"),
        "xgboost": ("xgboost", "XGBRegressor"),
    },
    "adaboost": {
        "gpuforest": ("gpuforest", "AdaBoostClassifier"),
        "scikit-learn": ("sklearn.ensemble", "AdaBoostClassifier"),
    },
}
# Defaults per task: (n_samples, n_estimators, max_depth).
DEFAULTS = {
    "classification": (1_000_000, 200, 8),
    "regression": (1_000_000, 200, 8),
    "adaboost": (200_000, 100, 1),
}
LEARNING_RATE = 0.1
ADABOOST_LEARNING_RATE = 1.0
# The rules that stop a split, the same in every library where it has them.
MIN_SAMPLES_LEAF = 20
MIN_HESSIAN_LEAF = 1e-3  # scikit-learn's (fixed) and LightGBM's default; gpuforest's min_child_weight default
L2_REGULARIZATION = 0.0
VALUE_BINS = 255  # bins of feature values; gpuforest's max_bins also counts the missing-value bin
# The largest num_leaves LightGBM accepts.
LIGHTGBM_MAX_LEAVES = 131072
# Not the task's default: the option was not given.
_UNSET = object()


def settings(library, args):
    """The parameters each library's booster gets: the same model, in each one's terms."""
    rounds, depth, seed, leaves = args.n_estimators, args.max_depth, args.seed, args.max_leaf_nodes
    regression = args.task == "regression"
    if args.task == "adaboost":
        if library == "gpuforest":
            return dict(
                n_estimators=rounds, learning_rate=ADABOOST_LEARNING_RATE, algorithm="SAMME", random_state=seed,
                device=args.device,
            )
        if library == "scikit-learn":
            return dict(
                estimator=DecisionTreeClassifier(max_depth=1), n_estimators=rounds,
                learning_rate=ADABOOST_LEARNING_RATE, random_state=seed,
            )
    elif library == "gpuforest":
        return dict(
            n_estimators=rounds, max_depth=depth, grow_policy="depthwise" if leaves is None else "lossguide",
            max_leaf_nodes=leaves, learning_rate=LEARNING_RATE,
            min_samples_leaf=MIN_SAMPLES_LEAF, min_child_weight=MIN_HESSIAN_LEAF,
            l2_regularization=L2_REGULARIZATION, max_bins=VALUE_BINS + 1, early_stopping=False,
            device=args.device, random_state=seed,
        )
    elif library == "scikit-learn":
        return dict(
            max_iter=rounds, max_depth=depth, max_leaf_nodes=leaves, learning_rate=LEARNING_RATE,
            min_samples_leaf=MIN_SAMPLES_LEAF, l2_regularization=L2_REGULARIZATION, max_bins=VALUE_BINS,
            early_stopping=False, random_state=seed,
        )
    elif library == "lightgbm":
        return dict(
            n_estimators=rounds, max_depth=-1 if depth is None else depth,
            num_leaves=_lightgbm_leaves(depth, leaves),
            learning_rate=LEARNING_RATE, min_child_samples=MIN_SAMPLES_LEAF, min_child_weight=MIN_HESSIAN_LEAF,
            min_split_gain=0.0, reg_alpha=0.0, reg_lambda=L2_REGULARIZATION, subsample=1.0, colsample_bytree=1.0,
            max_bin=VALUE_BINS, random_state=seed, n_jobs=-1, verbosity=-1,
        )
    elif library == "xgboost":
        return dict(
            n_estimators=rounds, max_depth=0 if depth is None else depth, tree_method="hist",
            grow_policy="depthwise" if leaves is None else "lossguide", max_leaves=leaves or 0,
            learning_rate=LEARNING_RATE,
            # Hessian 1 per row: min_samples_leaf rows exactly; log loss: the smallest hessian sum.
            min_child_weight=float(MIN_SAMPLES_LEAF) if regression else MIN_HESSIAN_LEAF,
            gamma=0.0, reg_alpha=0.0, reg_lambda=L2_REGULARIZATION, max_bin=VALUE_BINS, random_state=seed,
            n_jobs=-1, device="cuda" if args.device == "cuda" else "cpu",
        )
    raise ValueError(f"no {library!r} for task {args.task!r}")


def _lightgbm_leaves(depth, leaves):
    """``num_leaves``: the leaf budget, else the full tree of ``depth`` (LightGBM's limit without either)."""
    if leaves is not None:
        return leaves
    return LIGHTGBM_MAX_LEAVES if depth is None else min(2**depth, LIGHTGBM_MAX_LEAVES)


_TREES = (
    f"Trees: max_depth (None: unlimited), at least {MIN_SAMPLES_LEAF} rows and a hessian sum of "
    f"{MIN_HESSIAN_LEAF:g} per leaf, no L2, {VALUE_BINS} value bins, every row and feature, no early stopping, "
    "all cores."
)
def settings_notes(leaves):
    """Each library's settings explained, for depth-wise trees or best-first ones of ``leaves`` leaves."""
    if leaves is None:
        growth = {
            "gpuforest": "grow_policy='depthwise': depth-wise, only max_depth bounds the tree.",
            "lightgbm": (
                "Leaf-wise growth: num_leaves = 2**max_depth (the full tree; LightGBM's limit is 131072), so that "
                "only max_depth bounds the tree as in the others (255 would stop one split short of a full depth-8 "
                "tree)."
            ),
            "xgboost": "Depth-wise.",
        }
    else:
        growth = {
            "gpuforest": f"grow_policy='lossguide', max_leaf_nodes={leaves}: best-first (the largest gain first).",
            "lightgbm": f"Leaf-wise growth, num_leaves={leaves}.",
            "xgboost": f"grow_policy='lossguide', max_leaves={leaves}.",
        }
    return {
        "gpuforest": (
            f"max_bins={VALUE_BINS + 1}: {VALUE_BINS} value bins plus one for missing values. {growth['gpuforest']} "
            "Threads: numba's default, all cores."
        ),
        "scikit-learn": (
            f"max_bins={VALUE_BINS} value bins (plus its missing-value bin); max_leaf_nodes={leaves}; "
            "early_stopping=False (its 'auto' stops early from 10,000 rows). Its smallest leaf hessian is fixed at "
            f"{MIN_HESSIAN_LEAF:g}. OpenMP threads: all cores."
        ),
        "lightgbm": (
            f"{growth['lightgbm']} min_child_samples={MIN_SAMPLES_LEAF} (= min_samples_leaf), min_child_weight "
            f"(min_sum_hessian_in_leaf)={MIN_HESSIAN_LEAF:g}, reg_lambda=0, max_bin={VALUE_BINS}; no bagging; no early "
            "stopping (no eval set); row- or column-wise histograms: LightGBM's own choice."
        ),
        "xgboost": (
            f"{growth['xgboost']} XGBoost has no rows-per-leaf limit, only min_child_weight, a hessian sum: its "
            "default 1 would need 4 rows per leaf at hessian 0.25 (log loss), so it is set to "
            f"{MIN_HESSIAN_LEAF:g} for classification, as the others' smallest hessian (leaves may then hold fewer "
            f"than {MIN_SAMPLES_LEAF} rows), and to {MIN_SAMPLES_LEAF} for regression, where the hessian is 1 per row: "
            f"exactly {MIN_SAMPLES_LEAF} rows. reg_lambda=0 (its default is 1); max_bin={VALUE_BINS} value bins "
            "(missing values apart); no early stopping (no eval set); device follows --device."
        ),
    }


ADABOOST_NOTES = {
    "gpuforest": (
        "estimator=None: decision stumps, on binned features (max_bins default: 255 value bins plus one for "
        "missing values); SAMME."
    ),
    "scikit-learn": "Stumps with exact splits (no binning); SAMME, scikit-learn's only algorithm since 1.8.",
}


# --- one library in this process ----------------------------------------------------------


def _estimator(library, task, parameters):
    module, name = ESTIMATORS[task][library]
    return getattr(import_module(module), name)(**parameters)


def _predict(task):
    if task == "regression":
        return lambda estimator, X: estimator.predict(X)
    return lambda estimator, X: estimator.predict_proba(X)


def _score(task):
    if task == "regression":
        return lambda estimator, y_true, predictions: {
            "rmse": float(root_mean_squared_error(y_true, predictions)), "r2": float(r2_score(y_true, predictions)),
        }

    def score(estimator, y_true, proba):
        proba = np.asarray(proba)
        auc = roc_auc_score(y_true, proba[:, 1]) if proba.shape[1] == 2 else roc_auc_score(
            y_true, proba, multi_class="ovr"
        )
        labels = np.asarray(estimator.classes_)[np.argmax(proba, axis=1)]
        return {"auc": float(auc), "accuracy": float(accuracy_score(y_true, labels))}

    return score


def _data_task(task):
    return "regression" if task == "regression" else "classification"


def measure(library, args, data):
    """Fit and predict with ``library`` in this process: times, test scores and peak memory."""
    parameters = settings(library, args)
    row, estimator = bench_common.measure(
        library,
        import_module(ESTIMATORS[args.task][library][0].split(".")[0]).__version__,
        lambda: _estimator(library, args.task, parameters),
        parameters,
        data,
        warm_up_data=synthetic_data(_data_task(args.task), WARM_UP_SAMPLES, args.n_features, args.seed),
        predict=_predict(args.task),
        score=_score(args.task),
    )
    if library == "gpuforest":
        row["device_used"] = getattr(estimator, "device_", None)
    return row


def _data(args):
    return synthetic_data(_data_task(args.task), args.n_samples, args.n_features, args.seed)


def _markdown(report):
    result = report["results"]
    task = result["task"]
    leaves = result.get("max_leaf_nodes")
    if task == "adaboost":
        title = "AdaBoost (SAMME, stumps): gpuforest vs scikit-learn"
        model = f"{result['n_estimators']} rounds of stumps, learning_rate={result['learning_rate']}"
        notes = ADABOOST_NOTES
    else:
        title = "Gradient boosting: gpuforest vs scikit-learn (HistGradientBoosting), LightGBM, XGBoost"
        model = (
            f"{result['n_estimators']} rounds, max_depth={result['max_depth']}, "
            f"{'depth-wise' if leaves is None else f'best-first, {leaves} leaves'}, "
            f"learning_rate={result['learning_rate']}, {VALUE_BINS} value bins"
        )
        notes = settings_notes(leaves)
    if task == "regression":
        metrics = [("rmse", "test RMSE", ".3f"), ("r2", "test R^2", ".4f")]
    else:
        metrics = [("auc", "test AUC", ".4f"), ("accuracy", "test accuracy", ".4f")]
    lines = bench_common.method_lines(title, report)
    lines += [
        "",
        f"## {task}: {result['n_samples']:,} x {result['n_features']} train, {result['n_test']:,} test, {model}",
        "",
    ]
    if task != "adaboost":
        lines += [_TREES, ""]
        if leaves is not None:
            lines += [
                f"Best-first trees of {leaves} leaves in every library (the notes below speak of depth-wise runs): "
                f"gpuforest grow_policy='lossguide', max_leaf_nodes={leaves}; HistGradientBoosting "
                f"max_leaf_nodes={leaves}; LightGBM num_leaves={leaves}; XGBoost grow_policy='lossguide', "
                f"max_leaves={leaves}.",
                "",
            ]
    lines += bench_common.table_lines(result["rows"], metrics)
    lines += bench_common.fit_runs_lines(result["rows"])
    lines += bench_common.compile_lines(result)
    lines += bench_common.settings_lines(result["rows"], lambda library: ESTIMATORS[task][library][1], notes)
    return "\n".join(lines)


def _max_depth(text):
    return None if text.lower() == "none" else int(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=TASKS, default="classification")
    parser.add_argument("--n-samples", type=int, default=_UNSET, help="default 1000000 (adaboost: 200000)")
    parser.add_argument("--n-features", type=int, default=28)
    parser.add_argument("--n-estimators", type=int, default=_UNSET, help="rounds; default 200 (adaboost: 100)")
    parser.add_argument(
        "--max-depth", type=_max_depth, default=_UNSET, help="an int, or none; default 8 (adaboost: 1, the only one)"
    )
    parser.add_argument(
        "--max-leaf-nodes", type=int, default=None, help="best-first trees of this many leaves (max_depth: none)"
    )
    parser.add_argument("--libraries", nargs="+", choices=LIBRARIES, default=None, help="default: all of the task's")
    bench_common.add_shared_arguments(parser, LIBRARIES)
    args = parser.parse_args()
    if args.max_leaf_nodes is not None and args.max_depth is _UNSET:
        args.max_depth = None
    for name, default in zip(("n_samples", "n_estimators", "max_depth"), DEFAULTS[args.task]):
        if getattr(args, name) is _UNSET:
            setattr(args, name, default)
    available = list(ESTIMATORS[args.task])
    if args.libraries is None:
        args.libraries = available
    unavailable = [library for library in args.libraries + [args.only] if library and library not in available]
    if unavailable:
        parser.error(f"--task {args.task} compares {', '.join(available)} only, not {', '.join(unavailable)}")
    if args.task == "adaboost" and args.max_depth != 1:
        parser.error("--task adaboost boosts stumps: --max-depth 1 only")
    if args.only:
        bench_common.run_child(args, measure, _data)
        return
    learning_rate = ADABOOST_LEARNING_RATE if args.task == "adaboost" else LEARNING_RATE
    report = bench_common.make_report(
        lambda: bench_common.run_report(
            __file__, args, _data, learning_rate=learning_rate, max_leaf_nodes=args.max_leaf_nodes
        )
    )
    kind = "adaboost" if args.task == "adaboost" else "boosting"
    suffix = ("_regression" if args.task == "regression" else "") + (
        "" if args.max_leaf_nodes is None else f"_{args.max_leaf_nodes}_leaves"
    )
    stem = args.output_name or f"{kind}_{args.device}_{args.n_samples}x{args.n_features}{suffix}"
    bench_common.save_report(report, stem, _markdown(report))


if __name__ == "__main__":
    main()
