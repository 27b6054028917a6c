"""SHAP values: gpuforest's ``predict_contributions`` against XGBoost's ``predict(pred_contribs=True)``.

Each library boosts its own model of the same size (``--n-estimators`` trees of depth ``--max-depth``, depth-wise,
no early stopping)
on the same synthetic regression data, then explains ``--explain-rows`` test rows, best of ``--repeats``. Both are
exact path-dependent TreeSHAP (O(leaves x depth^2) per row), so the time per (row, leaf) compares the engines; the
table also gives each model's leaf count and the largest gap between the contributions' row sums and the
prediction (XGBoost's output is float32).
XGBoost runs on the CPU (its TreeSHAP in C++) and, with ``--gpu``, on the GPU (GPUTreeSHAP).

    python benchmarks/bench_contributions.py --n-samples 100000 --explain-rows 2000
"""

import argparse

import numpy as np
from bench_common import best_time, make_report, save_report, synthetic_data

import gpuforest


def _gpuforest_row(args, data):
    X_train, y_train, X_test, _ = data
    model = gpuforest.GradientBoostingRegressor(
        n_estimators=args.n_estimators, max_depth=args.max_depth, grow_policy="depthwise", early_stopping=False,
        random_state=0, device=args.device,
    ).fit(X_train, y_train)
    rows = X_test[: args.explain_rows]
    model.predict_contributions(rows[:10])  # compiles the kernel (cached after the first run)
    seconds, contributions = best_time(lambda: model.predict_contributions(rows), args.repeats)
    return {
        "library": "gpuforest", "version": gpuforest.__version__, "device": args.device, "shap_s": seconds,
        "leaves": int(sum((tree.children_left == -1).sum() for tree in model.trees_)),
        "sum_gap": float(np.abs(contributions.sum(axis=1) - model.predict(rows)).max()),
    }


def _xgboost_row(args, data, device):
    import xgboost

    X_train, y_train, X_test, _ = data
    model = xgboost.XGBRegressor(
        n_estimators=args.n_estimators, max_depth=args.max_depth, tree_method="hist", device=device
    ).fit(X_train, y_train)
    booster = model.get_booster()
    rows = xgboost.DMatrix(X_test[: args.explain_rows])
    seconds, contributions = best_time(lambda: booster.predict(rows, pred_contribs=True), args.repeats)
    leaves = booster.trees_to_dataframe().query("Feature == 'Leaf'").shape[0]
    return {
        "library": "xgboost", "version": xgboost.__version__, "device": device, "shap_s": seconds, "leaves": leaves,
        "sum_gap": float(np.abs(contributions.sum(axis=1) - booster.predict(rows, output_margin=True)).max()),
    }


def _markdown(report):
    result = report["results"]
    lines = [
        f"# SHAP values (TreeSHAP) of boosted trees ({report['date']})",
        "",
        f"Machine: {report['machine']['cpu_count']} CPUs, {report['machine']['platform']}; load average (1 min) "
        f"before / after: {report['machine']['load_average_before'][0]:.1f} / "
        f"{report['machine']['load_average_after'][0]:.1f}.",
        f"Each library boosts {result['n_estimators']} trees of depth {result['max_depth']} on "
        f"{result['n_samples']} x {result['n_features']} synthetic regression data and explains "
        f"{result['explain_rows']} test rows (best of {result['repeats']}).",
        "",
        "| library | device | leaves | SHAP values (s) | rows / s | ns per (row, leaf) | max abs(sum - margin) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for row in result["rows"]:
        lines.append(
            f"| {row['library']} {row['version']} | {row['device']} | {row['leaves']} | {row['shap_s']:.2f} | "
            f"{result['explain_rows'] / row['shap_s']:.0f} | "
            f"{1e9 * row['shap_s'] / (result['explain_rows'] * row['leaves']):.0f} | {row['sum_gap']:.1e} |"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=100_000)
    parser.add_argument("--n-features", type=int, default=28)
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--max-depth", type=int, default=8)
    parser.add_argument("--explain-rows", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default="cpu", help="gpuforest's device")
    parser.add_argument("--gpu", action="store_true", help="also XGBoost's GPUTreeSHAP (device='cuda')")
    parser.add_argument("--output", default=None, help="results stem under benchmarks/results/")
    args = parser.parse_args()
    data = synthetic_data("regression", args.n_samples, args.n_features, seed=0)

    def run():
        rows = [_gpuforest_row(args, data), _xgboost_row(args, data, "cpu")]
        if args.gpu:
            rows.append(_xgboost_row(args, data, "cuda"))
        return {
            "n_samples": args.n_samples, "n_features": args.n_features, "n_estimators": args.n_estimators,
            "max_depth": args.max_depth, "explain_rows": args.explain_rows, "repeats": args.repeats, "rows": rows,
        }

    report = make_report(run)
    stem = args.output or f"contributions_{args.device}_{args.n_samples}x{args.n_features}"
    save_report(report, stem, _markdown(report))


if __name__ == "__main__":
    main()
