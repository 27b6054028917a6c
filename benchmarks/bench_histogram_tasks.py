"""Benchmark: one node's histogram on the CPU, as a best-first boosting step builds it, on one thread and on all.

A step builds the smaller child's histogram: one node of a few thousand to tens of thousands of rows, scattered
over the training rows. ``kernels/cpu/chunks.py`` decides how many tasks share it; this times
``histogram.build_histograms`` of such a node (boosting's packed (gradient, hessian) statistics, 28 features of
255 bins, rows drawn from 150,000) for node sizes around the rules' thresholds, with numba's threads set to one
and to all in turn (best of ``--repeats`` builds each), and reports the speed-up of all threads over one: about
the thread count where a node is cut into a task per thread, 1 where it is one task.

    python benchmarks/bench_histogram_tasks.py [--repeats 200]
"""

import argparse
import json
import os
import platform
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
STEM = "histogram_tasks_cpu"
N_SAMPLES, N_FEATURES = 150_000, 28
NODE_SIZES = (1_000, 2_500, 4_000, 9_000, 12_000, 20_000, 40_000, 150_000)


def measure(n_repeats, seed=0):
    """``(n_threads, {node size: (one thread's best seconds, all threads' best seconds)})``."""
    import numba

    from gpuforest.kernels.cpu import histogram
    from gpuforest.statistics import newton_statistics

    rng = np.random.default_rng(seed)
    X_binned = rng.integers(0, 255, size=(N_SAMPLES, N_FEATURES), dtype=np.uint8)
    stats = newton_statistics(rng.normal(size=N_SAMPLES), rng.uniform(0.05, 0.25, N_SAMPLES), 0.0)
    sample_counts = np.ones((1, N_SAMPLES), dtype=np.int32)
    hist = np.zeros((1, N_FEATURES, 256, 3), dtype=np.int64)
    feature_mask = np.ones((1, N_FEATURES), dtype=bool)
    n_threads = numba.get_num_threads()
    times = {}
    for size in NODE_SIZES:
        sample_indices = np.sort(rng.choice(N_SAMPLES, size, replace=False)).astype(np.int32)
        args = (
            X_binned, sample_indices, np.array([0]), np.array([size]), np.array([0]), feature_mask, sample_counts,
            stats.row_slot, stats.row_stats, 0, hist,
        )
        best = {}
        for threads in (1, n_threads):
            numba.set_num_threads(threads)
            options = {"unit_counts": True, "count_bits": stats.count_bits}
            histogram.build_histograms(*args, **options)
            seconds = np.inf
            for _ in range(n_repeats):
                start = time.perf_counter()
                histogram.build_histograms(*args, **options)
                seconds = min(seconds, time.perf_counter() - start)
            best[threads] = seconds
        numba.set_num_threads(n_threads)
        times[size] = (best[1], best[n_threads])
    return n_threads, times


def markdown(report):
    lines = [
        "# One node's histogram on the CPU: one thread and all",
        "",
        f"{report['date']}, {report['machine']}; gpuforest {report['version']}. "
        "`benchmarks/bench_histogram_tasks.py`: `histogram.build_histograms` of one node of boosting's packed "
        f"(gradient, hessian) rows, {N_FEATURES} features of 255 bins, rows drawn from {N_SAMPLES:,}; best of "
        f"{report['repeats']} builds each (us).",
        "",
        f"| node rows | 1 thread | {report['threads']} threads | speed-up |",
        "|---:|---:|---:|---:|",
    ]
    for size, (one, all_threads) in report["results"].items():
        lines.append(f"| {int(size):,} | {one * 1e6:.1f} | {all_threads * 1e6:.1f} | {one / all_threads:.2f}x |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    import gpuforest

    n_threads, times = measure(args.repeats)
    report = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "version": gpuforest.__version__, "repeats": args.repeats, "threads": n_threads,
        "results": {str(size): list(pair) for size, pair in times.items()},
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{STEM}.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / f"{STEM}.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
