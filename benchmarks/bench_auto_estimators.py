"""Benchmark: ``n_estimators="auto"`` against a fixed forest of 500 trees, on three data sets.

Per data set a stratified (classification) or plain 75/25 split, then ``RandomForest*`` with
``n_estimators="auto"`` (defaults ``n_iter_no_change=3``, ``tol=1e-4``) and with
``n_estimators=500``, both ``random_state=0``, other parameters default. Reported: the trees each
grew, the fit time of each (the best of ``--repeats``), the trees and the share of time saved, and
the test score of each (accuracy or R^2). The 500-tree forest's first ``n_estimators_`` trees are the
auto forest's (``tests/test_auto_estimators.py``).

Run (a few minutes on 2 cores), which writes ``benchmarks/results/auto_estimators.{json,md}``::

    python benchmarks/bench_auto_estimators.py [--repeats 2] [--device cpu]
"""

import argparse
import time

import bench_common
from sklearn.datasets import load_breast_cancer, load_digits, make_friedman1
from sklearn.model_selection import train_test_split

import gpuforest

FIXED_TREES = 500


def data_sets():
    """``(name, Forest, X, y, stratify)`` of each data set."""
    X_friedman, y_friedman = make_friedman1(n_samples=2_000, noise=1.0, random_state=0)
    return [
        ("breast_cancer", gpuforest.RandomForestClassifier, *load_breast_cancer(return_X_y=True), True),
        ("digits", gpuforest.RandomForestClassifier, *load_digits(return_X_y=True), True),
        ("friedman1 (2,000 rows)", gpuforest.RandomForestRegressor, X_friedman, y_friedman, False),
    ]


def timed_fit(make_forest, X, y, repeats):
    """The fitted forest and its best fit time in seconds."""
    best, forest = float("inf"), None
    for _ in range(repeats):
        forest = make_forest()
        start = time.perf_counter()
        forest.fit(X, y)
        best = min(best, time.perf_counter() - start)
    return forest, best


def compare(repeats, device):
    rows = []
    for name, Forest, X, y, stratify in data_sets():
        X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0, stratify=y if stratify else None)
        Forest(n_estimators=10, random_state=0, device=device).fit(X_train, y_train)  # compiles the kernels
        auto, auto_s = timed_fit(lambda: Forest(n_estimators="auto", random_state=0, device=device), X_train, y_train,
                                 repeats)
        fixed, fixed_s = timed_fit(lambda: Forest(n_estimators=FIXED_TREES, random_state=0, device=device), X_train,
                                   y_train, repeats)
        rows.append({
            "data": name, "n_train": X_train.shape[0], "n_features": X.shape[1],
            "auto_trees": auto.n_estimators_, "measured_trees": 10 * len(auto.oob_errors_), "auto_fit_s": auto_s,
            "fixed_trees": FIXED_TREES, "fixed_fit_s": fixed_s,
            "auto_score": auto.score(X_test, y_test), "fixed_score": fixed.score(X_test, y_test),
        })
    return {"repeats": repeats, "device": device, "gpuforest": gpuforest.__version__, "rows": rows}


def markdown(report):
    result = report["results"]
    lines = [
        f"# n_estimators=\"auto\" against {FIXED_TREES} trees ({report['date']})",
        "",
        f"gpuforest {result['gpuforest']}, device={result['device']}, `random_state=0`, other parameters default; "
        f"fit times the best of {result['repeats']}; test scores on a 25% split (accuracy, or R^2 for friedman1). "
        f"Machine: {report['machine']['cpu_count']} CPUs, {report['machine']['platform']}. "
        "Made by `benchmarks/bench_auto_estimators.py`.",
        "",
        "| data | rows x features | auto: trees kept (measured) | auto fit (s) | 500 trees fit (s) | model trees saved | "
        "time saved | auto score | 500 trees score |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in result["rows"]:
        lines.append(
            f"| {row['data']} | {row['n_train']} x {row['n_features']} | {row['auto_trees']} ({row['measured_trees']}) | "
            f"{row['auto_fit_s']:.2f} | {row['fixed_fit_s']:.2f} | {row['fixed_trees'] - row['auto_trees']} | "
            f"{100 * (1 - row['auto_fit_s'] / row['fixed_fit_s']):.0f}% | {row['auto_score']:.4f} | "
            f"{row['fixed_score']:.4f} |"
        )
    lines += [
        "",
        "Auto grows its steps of 10 trees in batches (`n_iter_no_change + 1` steps, or as many trees as it has) and "
        "drops the trees grown past the stop, so it grows more trees than it measures, and the time saved is less "
        "than the share of trees saved in the model (whose prediction routes each row through that many fewer trees). "
        f"Load average of the shared machine before and after: {report['machine']['load_average_before'][0]:.1f}, "
        f"{report['machine']['load_average_after'][0]:.1f}: the times are noisy.",
    ]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    report = bench_common.make_report(lambda: compare(args.repeats, args.device))
    bench_common.save_report(report, "auto_estimators", markdown(report))


if __name__ == "__main__":
    main()
