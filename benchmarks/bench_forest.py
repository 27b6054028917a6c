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
        [--libraries gpuforest scikit-learn lightgbm xgboost] [--output-name NAME]
"""

import argparse
import ctypes
import gc
import json
import math
import os
import platform
import resource
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from importlib import import_module
from pathlib import Path

import numpy as np
from bench_common import best_time, synthetic_data
from sklearn.metrics import accuracy_score, r2_score

RESULTS = Path(__file__).resolve().parent / "results"
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
WARM_UP_SAMPLES = 2000
DATA_NAMES = ("X_train", "y_train", "X_test", "y_test")


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


def _peak_rss_mb():
    """Peak resident memory of this process in MiB: VmHWM on Linux (resettable), else ru_maxrss."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def _reset_peak_rss():
    """Reset the peak to the current resident memory (Linux >= 4.0); False where not possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _release_free_memory():
    """Collect garbage and hand freed heap memory back to the OS (glibc's malloc_trim), so
    that memory a warm-up freed is not counted in the baseline and then reused by the fit."""
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _estimator(library, task, parameters):
    module, classifier, regressor = ESTIMATORS[library]
    return getattr(import_module(module), classifier if task == "classification" else regressor)(**parameters)


def _warm_up_seconds(library, args, parameters):
    """One-off costs (JIT compile, thread pools, CUDA context): a fit on tiny data with the same settings."""
    X_tiny, y_tiny, _, _ = synthetic_data(args.task, WARM_UP_SAMPLES, args.n_features, args.seed)
    estimator = _estimator(library, args.task, parameters)
    seconds, _ = best_time(lambda: estimator.fit(X_tiny, y_tiny).predict(X_tiny))
    return seconds


def measure(library, args, data):
    """Fit and predict with ``library`` in this process: times, test score and peak memory."""
    X_train, y_train, X_test, y_test = data
    parameters = settings(library, args)
    version = import_module(ESTIMATORS[library][0].split(".")[0]).__version__
    warm_up_seconds = _warm_up_seconds(library, args, parameters)
    _release_free_memory()
    # Baseline: the data and the library are loaded. With the peak reset, the fit's peak is
    # measured from the memory in use now; without, from the peak so far (a lower bound).
    reset = _reset_peak_rss()
    baseline_mb = _peak_rss_mb()
    estimator = _estimator(library, args.task, parameters)
    fit_seconds, _ = best_time(lambda: estimator.fit(X_train, y_train))
    fit_peak_mb = _peak_rss_mb()
    predict_seconds, predictions = best_time(lambda: estimator.predict(X_test), repeats=3)
    metric, score = ("accuracy", accuracy_score) if args.task == "classification" else ("r2", r2_score)
    row = {
        "library": library,
        "version": version,
        "fit_s": fit_seconds,
        "predict_s": predict_seconds,
        metric: float(score(y_test, predictions)),
        "warm_up_s": warm_up_seconds,
        "baseline_rss_mb": baseline_mb,
        "fit_peak_rss_mb": fit_peak_mb,
        "fit_peak_rss_increase_mb": fit_peak_mb - baseline_mb,
        "peak_reset": reset,
        "ru_maxrss_after_predict_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        / (2**20 if sys.platform == "darwin" else 1024),
        "settings": parameters,
    }
    if library == "gpuforest":
        row["device_used"] = estimator.device_
    return row


# --- every library, each in a child process -------------------------------------------------


def _child_command(library, args, data_dir, row_path):
    command = [
        sys.executable, str(Path(__file__).resolve()), "--only", library, "--data-dir", str(data_dir),
        "--row-output", str(row_path), "--task", args.task, "--n-samples", str(args.n_samples),
        "--n-features", str(args.n_features), "--n-estimators", str(args.n_estimators),
        "--device", args.device, "--seed", str(args.seed),
    ]
    return command + ["--max-depth", "none" if args.max_depth is None else str(args.max_depth)]


def run(args):
    """Each library in its own process on the same data (generated once, passed as .npy files)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_forest_") as data_dir:
        data = synthetic_data(args.task, args.n_samples, args.n_features, args.seed)
        for name, array in zip(DATA_NAMES, data):
            np.save(Path(data_dir) / f"{name}.npy", array)
        del data
        for library in args.libraries:
            print(f"[bench_forest] {library} ...", file=sys.stderr, flush=True)
            row_path = Path(data_dir) / f"row_{library}.json"
            child = subprocess.run(_child_command(library, args, data_dir, row_path), capture_output=True, text=True)
            if child.returncode == 0 and row_path.exists():
                row = json.loads(row_path.read_text())
                print(f"[bench_forest]   fit {row['fit_s']:.2f} s, predict {row['predict_s']:.3f} s", file=sys.stderr)
            else:
                error = (child.stderr or child.stdout)[-3000:]
                print(f"[bench_forest]   failed (exit {child.returncode}):\n{error}", file=sys.stderr)
                row = {"library": library, "error": f"exit {child.returncode}: {error}"}
            rows.append(row)
    ours = next((row for row in rows if row["library"] == "gpuforest" and "error" not in row), None)
    for row in rows:
        if ours is not None and "error" not in row:
            row["fit_ratio"] = row["fit_s"] / ours["fit_s"]
            row["predict_ratio"] = row["predict_s"] / ours["predict_s"]
    return {
        "task": args.task,
        "n_samples": args.n_samples,
        "n_test": args.n_samples // 10,
        "n_features": args.n_features,
        "n_estimators": args.n_estimators,
        "max_depth": args.max_depth,
        "device": args.device,
        "gpuforest_compile_s": ours["warm_up_s"] if ours else None,
        "rows": rows,
    }


def _markdown(report):
    result = report["results"]
    metric = "accuracy" if result["task"] == "classification" else "r2"
    versions = ", ".join(f"{row['library']} {row['version']}" for row in result["rows"] if "version" in row)
    lines = [
        f"# Random forest: gpuforest vs scikit-learn, LightGBM, XGBoost ({report['date']})",
        "",
        f"Machine: {report['machine']['cpu_count']} CPUs, {report['machine']['platform']}; "
        f"gpuforest on device={result['device']}; {versions}. Load average (1 min) before / after: "
        f"{report['machine']['load_average_before'][0]:.1f} / {report['machine']['load_average_after'][0]:.1f}.",
        "Each library fits and predicts in its own process on the same data; times are the best of "
        "1 fit / 3 predicts, after a warm-up fit on "
        f"{WARM_UP_SAMPLES:,} rows (reported apart, not included: gpuforest's is its one-off JIT compile). "
        "Peak memory is the process's peak resident memory (VmHWM) during the fit: absolute, and its "
        "increase over the memory in use just before the fit (data and library loaded, peak reset). "
        "Host memory only: device memory is not counted. Ratios are peer time / gpuforest time "
        "(>1: gpuforest faster).",
        "",
        f"## {result['task']}: {result['n_samples']:,} x {result['n_features']} train, {result['n_test']:,} test, "
        f"{result['n_estimators']} trees, max_depth={result['max_depth']}, max_features=sqrt, bootstrap",
        "",
        f"| library | fit s | predict s | test {metric} | fit peak MiB | fit increase MiB | fit ratio "
        "| predict ratio | warm-up s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in result["rows"]:
        if "error" in row:
            lines.append(f"| {row['library']} | failed: {row['error'].strip().splitlines()[-1][:80]} |||||||")
            continue
        ratios = (
            f"{row['fit_ratio']:.2f}x | {row['predict_ratio']:.2f}x" if "fit_ratio" in row else "- | -"
        )
        lines.append(
            f"| {row['library']} | {row['fit_s']:.2f} | {row['predict_s']:.3f} | {row[metric]:.4f} "
            f"| {row['fit_peak_rss_mb']:,.0f} | {row['fit_peak_rss_increase_mb']:,.0f} | {ratios} "
            f"| {row['warm_up_s']:.1f} |"
        )
    if result["gpuforest_compile_s"] is not None:
        lines += ["", f"gpuforest compile (one-off): {result['gpuforest_compile_s']:.1f} s."]
    lines += ["", "### Settings", ""]
    for row in result["rows"]:
        if "settings" in row:
            parameters = ", ".join(f"{key}={value!r}" for key, value in row["settings"].items())
            _, classifier, regressor = ESTIMATORS[row["library"]]
            estimator = classifier if result["task"] == "classification" else regressor
            lines.append(f"- **{row['library']}** `{estimator}({parameters})`. {SETTINGS_NOTES[row['library']]}")
    return "\n".join(lines)


def _max_depth(text):
    return None if text.lower() == "none" else int(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=1_000_000)
    parser.add_argument("--n-features", type=int, default=28)
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--max-depth", type=_max_depth, default=16, help="an int, or none")
    parser.add_argument("--task", choices=["classification", "regression"], default="classification")
    parser.add_argument("--device", choices=["cpu", "cuda", "auto"], default="cpu", help="gpuforest's (and XGBoost's)")
    parser.add_argument("--libraries", nargs="+", choices=LIBRARIES, default=list(LIBRARIES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-name", default=None, help="file stem under benchmarks/results/ (or an absolute path)")
    parser.add_argument("--only", choices=LIBRARIES, help="run one library in this process and print its row")
    parser.add_argument("--data-dir", help=argparse.SUPPRESS)
    parser.add_argument("--row-output", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only:
        if args.data_dir:
            data = tuple(np.load(Path(args.data_dir) / f"{name}.npy") for name in DATA_NAMES)
        else:
            data = synthetic_data(args.task, args.n_samples, args.n_features, args.seed)
        row = json.dumps(measure(args.only, args, data), indent=2)
        if args.row_output:
            Path(args.row_output).write_text(row + "\n")
        else:
            print(row)
        return
    report = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "machine": {
            "cpu_count": os.cpu_count(), "platform": platform.platform(), "load_average_before": list(os.getloadavg()),
        },
        "versions": {"python": platform.python_version(), "numpy": np.__version__},
        "results": run(args),
    }
    report["machine"]["load_average_after"] = list(os.getloadavg())
    RESULTS.mkdir(exist_ok=True)
    suffix = "" if args.task == "classification" else "_regression"
    stem = RESULTS / (args.output_name or f"forest_{args.device}_{args.n_samples}x{args.n_features}{suffix}")
    Path(f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n")
    markdown = _markdown(report)
    Path(f"{stem}.md").write_text(markdown + "\n")
    print(markdown)


if __name__ == "__main__":
    main()
