"""Benchmark: gpuforest.dask on a local cluster against the local fit and xgboost.dask.

Fits a forest (``--model forest``: RandomForestClassifier) or boosting (``--model boosting``:
GradientBoostingClassifier) on synthetic classification data (default 1M rows x 28 features, float32) three
ways: the local gpuforest estimator in this process, ``gpuforest.dask`` on a ``LocalCluster`` of
``--workers`` processes of one thread each, and ``xgboost.dask`` on the same cluster (when importable).
Each is warmed up on tiny data first (numba's compile, the workers' imports), not timed.

Dask's overhead per level: each level of the distributed fit is one round trip
(``DaskBackend._summed``: partition tasks, a tree reduction, the result). Its wall time minus the busiest
worker's task time in it (the workers' task stream) is the time the level spends in Dask: scheduling,
transfers, serialisation. The projection to ``--project-rows`` rows on ``--project-workers`` workers keeps
that overhead per level and divides the measured per-level compute by the rows per worker.

Checks that the distributed model equals the local one (every tree array) and writes JSON and a markdown
table to ``benchmarks/results/``.

    python benchmarks/bench_dask.py [--model forest|boosting] [--n-samples 1000000] [--n-features 28]
        [--n-estimators 10] [--max-depth 8] [--workers 2] [--partitions 8]
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
from bench_common import synthetic_data

RESULTS = Path(__file__).parent / "results"
TREE_ARRAYS = ("children_left", "children_right", "feature", "threshold", "value", "n_node_samples")


def estimator_params(args):
    common = dict(n_estimators=args.n_estimators, max_depth=args.max_depth, random_state=0)
    if args.model == "forest":
        return dict(common, max_features="sqrt")
    return dict(common, learning_rate=0.1, early_stopping=False)


def gpuforest_class(module, args):
    return getattr(module, "RandomForestClassifier" if args.model == "forest" else "GradientBoostingClassifier")


def xgboost_fit(client, X_dask, y_dask, args):
    """Seconds of an ``xgboost.dask`` fit of the same model (its random forest or boosting, hist method)."""
    import xgboost.dask as dxgb

    params = dict(n_estimators=args.n_estimators, max_depth=args.max_depth, tree_method="hist", max_bin=256)
    if args.model == "forest":
        estimator = dxgb.DaskXGBRFClassifier(subsample=0.632, colsample_bynode=0.2, **params)
    else:
        estimator = dxgb.DaskXGBClassifier(learning_rate=0.1, **params)
    estimator.client = client
    start = time.perf_counter()
    estimator.fit(X_dask, y_dask)
    return time.perf_counter() - start


def level_timings(client, fit):
    """``fit()`` with each level's round trip timed: ``(model, seconds, levels)``, levels a list of
    ``(wall, compute)``: the round trip's wall time, and its busiest worker's task time (the partition tasks and
    the reduction's sums it ran during the level; a worker runs its tasks one after another)."""
    from distributed import get_task_stream

    import gpuforest.dask as gd

    summed = gd.DaskBackend._summed
    intervals = []

    def timed(self, rows, task, *args):
        start = time.time()
        result = summed(self, rows, task, *args)
        intervals.append((start, time.time()))
        return result

    gd.DaskBackend._summed = timed
    try:
        with get_task_stream(client) as stream:
            start = time.perf_counter()
            model = fit()
            seconds = time.perf_counter() - start
    finally:
        gd.DaskBackend._summed = summed
    levels = []
    for level_start, level_stop in intervals:
        busy = {}
        for record in stream.data:
            for event in record["startstops"]:
                if event["action"] == "compute" and level_start <= event["start"] <= level_stop:
                    busy[record["worker"]] = busy.get(record["worker"], 0.0) + event["stop"] - event["start"]
        levels.append((level_stop - level_start, max(busy.values(), default=0.0)))
    return model, seconds, levels


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=("forest", "boosting"), default="forest")
    parser.add_argument("--n-samples", type=int, default=1_000_000)
    parser.add_argument("--n-features", type=int, default=28)
    parser.add_argument("--n-estimators", type=int, default=10)
    parser.add_argument("--max-depth", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--project-rows", type=int, default=100_000_000)
    parser.add_argument("--project-workers", type=int, default=16)
    args = parser.parse_args()

    import dask.array as da
    from distributed import Client, LocalCluster

    import gpuforest
    import gpuforest.dask as gd

    X, y, _, _ = synthetic_data("classification", args.n_samples, args.n_features, 0)
    params = estimator_params(args)
    local_class, dask_class = gpuforest_class(gpuforest, args), gpuforest_class(gd, args)
    tiny = min(2000, args.n_samples)
    local_class(**params).fit(X[:tiny], y[:tiny])
    start = time.perf_counter()
    local = local_class(**params).fit(X, y)
    local_seconds = time.perf_counter() - start

    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None)
    with Client(cluster) as client:
        rows_per_partition = -(-args.n_samples // args.partitions)
        X_dask = da.from_array(X, chunks=(rows_per_partition, args.n_features)).persist()
        y_dask = da.from_array(y, chunks=(rows_per_partition,)).persist()
        dask_class(**params).fit(X_dask[:tiny], y_dask[:tiny])
        model, dask_seconds, levels = level_timings(client, lambda: dask_class(**params).fit(X_dask, y_dask))
        fitted = model.to_local()
        equal = all(
            np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True)
            for a, b in zip(fitted.trees_, local.trees_) for name in TREE_ARRAYS
        )
        try:
            xgboost_fit(client, X_dask[:tiny], y_dask[:tiny], args)
            xgboost_seconds = xgboost_fit(client, X_dask, y_dask, args)
        except ImportError as error:
            xgboost_seconds = f"not run: {error}"
    cluster.close()

    walls = np.array([wall for wall, _ in levels])
    computes = np.array([compute for _, compute in levels])
    overhead = np.maximum(walls - computes, 0.0)
    rows_per_worker = args.n_samples / args.workers
    projected_compute = computes * (args.project_rows / args.project_workers) / rows_per_worker
    result = dict(
        vars(args), local_seconds=local_seconds, dask_seconds=dask_seconds, xgboost_dask_seconds=xgboost_seconds,
        levels=len(levels), level_wall_ms_mean=1000 * walls.mean(), level_compute_ms_mean=1000 * computes.mean(),
        level_overhead_ms_mean=1000 * overhead.mean(), level_overhead_ms_median=1000 * np.median(overhead),
        projected_level_ms=1000 * (overhead + projected_compute).mean(),
        projected_fit_seconds=float((overhead + projected_compute).sum()), identical_to_local=equal,
    )
    stem = f"dask_{args.model}_{args.n_samples}x{args.n_features}"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
    xgboost_text = xgboost_seconds if isinstance(xgboost_seconds, str) else f"{xgboost_seconds:.2f} s"
    lines = [
        f"# gpuforest.dask, {args.model}: {args.n_samples:,} x {args.n_features}, {args.n_estimators} trees "
        f"(rounds), max_depth={args.max_depth}",
        "",
        f"{args.workers} local workers (1 thread each), {args.partitions} partitions; local fit in one process.",
        "",
        "| fit | seconds |",
        "|---|---|",
        f"| gpuforest local | {local_seconds:.2f} |",
        f"| gpuforest.dask | {dask_seconds:.2f} |",
        f"| xgboost.dask | {xgboost_text} |",
        "",
        f"Distributed model identical to the local one: {equal}.",
        "",
        f"Levels (round trips): {len(levels)}; per level: wall {result['level_wall_ms_mean']:.1f} ms, busiest "
        f"worker's tasks {result['level_compute_ms_mean']:.1f} ms, Dask overhead {result['level_overhead_ms_mean']:.1f}"
        f" ms mean, {result['level_overhead_ms_median']:.1f} ms median.",
        "",
        f"Projection to {args.project_rows:,} rows on {args.project_workers} workers (the overhead per level kept, "
        f"the compute scaled by rows per worker): {result['projected_level_ms']:.0f} ms per level, "
        f"{result['projected_fit_seconds']:.1f} s of levels.",
    ]
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
