"""Benchmark: one fully grown decision tree, gpuforest vs scikit-learn, in one run.

Times fit and predict of a single deep tree on synthetic data (default 1M rows x 28
features, like HIGGS) for both libraries on the same machine in the same process,
with gpuforest's one-off JIT compile time measured apart (first fit on tiny data).
Writes JSON and a markdown table to ``benchmarks/results/``.

    python benchmarks/bench_tree.py [--n-samples 1000000] [--n-features 28] [--max-depth N]
"""

import argparse
import json
import os
import platform
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import sklearn
from sklearn import tree as sklearn_tree
from bench_common import best_time, synthetic_data
from sklearn.metrics import accuracy_score, r2_score

import gpuforest

RESULTS = Path(__file__).resolve().parent / "results"


def _compile_seconds(task):
    X, y, _, _ = synthetic_data("classification", 2000, 8, 0)
    estimator = gpuforest.DecisionTreeClassifier() if task == "classification" else gpuforest.DecisionTreeRegressor()
    seconds, _ = best_time(lambda: estimator.fit(X, y.astype(float) if task == "regression" else y).predict(X))
    return seconds


def run(task, n_samples, n_features, max_depth, seed):
    X_train, y_train, X_test, y_test = synthetic_data(task, n_samples, n_features, seed)
    compile_seconds = _compile_seconds(task)
    if task == "classification":
        ours = gpuforest.DecisionTreeClassifier(max_depth=max_depth, random_state=seed, device="cpu")
        theirs = sklearn_tree.DecisionTreeClassifier(max_depth=max_depth, random_state=seed)
        metric, score = "accuracy", accuracy_score
    else:
        ours = gpuforest.DecisionTreeRegressor(max_depth=max_depth, random_state=seed, device="cpu")
        theirs = sklearn_tree.DecisionTreeRegressor(max_depth=max_depth, random_state=seed)
        metric, score = "r2", r2_score
    rows = []
    for name, estimator in (("gpuforest", ours), ("scikit-learn", theirs)):
        fit_seconds, _ = best_time(lambda: estimator.fit(X_train, y_train))
        predict_seconds, predictions = best_time(lambda: estimator.predict(X_test), repeats=3)
        rows.append(
            {
                "library": name,
                "fit_s": fit_seconds,
                "predict_s": predict_seconds,
                metric: float(score(y_test, predictions)),
                "train_" + metric: float(score(y_train, estimator.predict(X_train))),
                "depth": int(estimator.get_depth()),
                "leaves": int(estimator.get_n_leaves()),
            }
        )
    return {
        "task": task,
        "n_samples": n_samples,
        "n_test": X_test.shape[0],
        "n_features": n_features,
        "max_depth": max_depth,
        "gpuforest_compile_s": compile_seconds,
        "fit_speedup_vs_sklearn": rows[1]["fit_s"] / rows[0]["fit_s"],
        "predict_speedup_vs_sklearn": rows[1]["predict_s"] / rows[0]["predict_s"],
        "rows": rows,
    }


def _markdown(report):
    lines = [
        f"# Single decision tree: gpuforest vs scikit-learn ({report['date']})",
        "",
        f"Machine: {report['machine']['cpu_count']} CPUs, {report['machine']['platform']}; "
        f"gpuforest {report['versions']['gpuforest']} on device=cpu, scikit-learn {report['versions']['sklearn']}.",
        "Both fitted in the same process; times are the best of 1 fit / 3 predicts; "
        "gpuforest's one-off JIT compile time is reported apart and not included.",
        "",
    ]
    for result in report["results"]:
        metric = "accuracy" if result["task"] == "classification" else "r2"
        lines += [
            f"## {result['task']}: {result['n_samples']:,} x {result['n_features']} train, "
            f"{result['n_test']:,} test, max_depth={result['max_depth']}",
            "",
            f"| library | fit s | predict s | test {metric} | train {metric} | depth | leaves |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for row in result["rows"]:
            lines.append(
                f"| {row['library']} | {row['fit_s']:.2f} | {row['predict_s']:.3f} | {row[metric]:.4f} "
                f"| {row['train_' + metric]:.4f} | {row['depth']} | {row['leaves']:,} |"
            )
        lines += [
            "",
            f"Fit speed-up vs scikit-learn: **{result['fit_speedup_vs_sklearn']:.2f}x**; "
            f"predict: **{result['predict_speedup_vs_sklearn']:.2f}x**; "
            f"gpuforest compile (one-off): {result['gpuforest_compile_s']:.1f} s.",
            "",
        ]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=1_000_000)
    parser.add_argument("--n-features", type=int, default=28)
    parser.add_argument("--max-depth", type=int, default=None)
    parser.add_argument("--tasks", nargs="+", default=["classification", "regression"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tag", default="cpu")
    args = parser.parse_args()
    report = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
        "versions": {"gpuforest": gpuforest.__version__, "sklearn": sklearn.__version__, "numpy": np.__version__},
        "results": [run(task, args.n_samples, args.n_features, args.max_depth, args.seed) for task in args.tasks],
    }
    RESULTS.mkdir(exist_ok=True)
    stem = RESULTS / f"tree_{args.tag}_{args.n_samples}x{args.n_features}"
    stem.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    markdown = _markdown(report)
    stem.with_suffix(".md").write_text(markdown + "\n")
    print(markdown)


if __name__ == "__main__":
    main()
