"""Benchmark: coverage of a forest's 95% intervals from its prediction variances.

Friedman's first function (Friedman 1991; ``sklearn.datasets.make_friedman1``, noise 1):
``f(x) = 10 sin(pi x0 x1) + 20 (x2 - 0.5)^2 + 10 x3 + 5 x4`` over 10 uniform features. Per seed,
1,000 training rows and 500 test points drawn afresh, ``RandomForestRegressor(n_estimators=500)``
(other parameters default), and at each test point the interval ``prediction +- 1.96 std`` with
``std`` from ``gpuforest.uncertainty.prediction_variance`` (each method, with and without the
Monte-Carlo bias correction; negative variances as 0). Reported: the share of intervals that hold
the true ``f(x)`` (the nominal level is 95%); the share that hold the mean prediction of the seeds'
forests (an estimate of the forest's expected prediction, which the variances are about: this
coverage measures their calibration apart from the forest's bias); and the mean estimated standard
deviation against the standard deviation of the predictions over the seeds' forests at the same
test points (the sampling variability that the variances estimate).
An interval around a biased prediction can miss ``f(x)`` however well its width estimates the
sampling variability (Wager, Hastie and Efron 2014, section 4).

Run (a few minutes on 2 cores), which writes ``benchmarks/results/uncertainty_coverage.{json,md}``::

    python benchmarks/bench_uncertainty_coverage.py [--seeds 10] [--n-estimators 500] [--device cpu]
"""

import argparse

import bench_common
import numpy as np
from sklearn.datasets import make_friedman1

import gpuforest
from gpuforest.uncertainty import prediction_variance

N_TRAIN = 1_000
N_TEST = 500
Z_95 = 1.959963984540054  # the standard normal's 0.975 quantile
VARIANTS = [
    ("infinitesimal_jackknife", True), ("infinitesimal_jackknife", False),
    ("jackknife_after_bootstrap", True), ("jackknife_after_bootstrap", False),
]


def friedman1_function(X):
    return 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]


def variant_name(method, bias_correction):
    return f"{method}{' (bias-corrected)' if bias_correction else ''}"


def compare(seeds, n_estimators, device):
    X_test, _ = make_friedman1(N_TEST, noise=1.0, random_state=10_000)
    truth = friedman1_function(X_test)
    coverage = {variant_name(*variant): [] for variant in VARIANTS}
    mean_std = {variant_name(*variant): [] for variant in VARIANTS}
    predictions, stds = [], {variant_name(*variant): [] for variant in VARIANTS}
    for seed in range(seeds):
        X_train, y_train = make_friedman1(N_TRAIN, noise=1.0, random_state=seed)
        forest = gpuforest.RandomForestRegressor(n_estimators=n_estimators, random_state=seed, device=device)
        prediction = forest.fit(X_train, y_train).predict(X_test)
        predictions.append(prediction)
        for method, bias_correction in VARIANTS:
            variance = prediction_variance(forest, X_test, method=method, bias_correction=bias_correction)[:, 0]
            std = np.sqrt(np.maximum(variance, 0.0))
            name = variant_name(method, bias_correction)
            coverage[name].append(float(np.mean(np.abs(prediction - truth) <= Z_95 * std)))
            mean_std[name].append(float(std.mean()))
            stds[name].append(std)
    expected = np.mean(predictions, axis=0)
    coverage_of_expected = {
        name: float(np.mean(np.abs(np.array(predictions) - expected) <= Z_95 * np.array(values)))
        for name, values in stds.items()
    }
    return {
        "seeds": seeds, "n_estimators": n_estimators, "n_train": N_TRAIN, "n_test": N_TEST, "device": device,
        "gpuforest": gpuforest.__version__, "coverage": coverage, "coverage_of_expected": coverage_of_expected,
        "mean_std": mean_std,
        "sampling_std": float(np.std(predictions, axis=0, ddof=1).mean()),
        "mean_absolute_bias": float(np.abs(np.mean(predictions, axis=0) - truth).mean()),
    }


def markdown(report):
    result = report["results"]
    lines = [
        f"# Coverage of a forest's 95% intervals on Friedman 1 ({report['date']})",
        "",
        f"`RandomForestRegressor(n_estimators={result['n_estimators']})` (gpuforest {result['gpuforest']}, "
        f"device={result['device']}), {result['n_train']:,} training rows per seed (noise 1), "
        f"{result['n_test']} test points, {result['seeds']} seeds; interval `prediction +- 1.96 std` against the "
        f"true regression function. Machine: {report['machine']['cpu_count']} CPUs, {report['machine']['platform']}. "
        "Made by `benchmarks/bench_uncertainty_coverage.py`.",
        "",
        "| variance | coverage of f(x) (nominal 95%) | coverage of the mean forest prediction | mean estimated std |",
        "|---|---:|---:|---:|",
    ]
    for name, values in result["coverage"].items():
        lines.append(
            f"| {name} | {100 * np.mean(values):.1f}% | {100 * result['coverage_of_expected'][name]:.1f}% | "
            f"{np.mean(result['mean_std'][name]):.3f} |"
        )
    lines += [
        "",
        f"Standard deviation of the predictions over the {result['seeds']} seeds' forests (the sampling "
        f"variability the variances estimate), mean over the test points: {result['sampling_std']:.3f}. "
        f"Mean absolute bias of the mean prediction: {result['mean_absolute_bias']:.3f}: the intervals "
        "are centred on biased predictions, so they cover f(x) less often than the nominal 95%. With "
        f"{result['n_estimators']} trees for {result['n_train']:,} rows the Monte-Carlo corrections (`n v / B`) are "
        "of the size of the variances themselves, so the corrected estimates are noisy (a negative one is taken as 0) "
        "and cover the mean prediction less often than 95% too; Wager, Hastie and Efron use B of the order of n "
        "or more. The uncorrected ones are several times too wide.",
    ]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n-estimators", type=int, default=500)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    report = bench_common.make_report(lambda: compare(args.seeds, args.n_estimators, args.device))
    bench_common.save_report(report, "uncertainty_coverage", markdown(report))


if __name__ == "__main__":
    main()
