"""GPU benchmark: fit time of a deep tree on 1M and 10M rows x 28 features, and the
histogram kernel's effective bandwidth against the device's measured copy bandwidth.

Needs a CUDA GPU with CuPy (``pip install "gpuforest[cuda]"``). With ``--cpu-baseline``
the CPU backend is timed in the same run on sets up to 1M rows. Writes JSON and markdown to
``benchmarks/results/`` with the device named.

    python benchmarks/bench_gpu.py [--sizes 1000000 10000000] [--max-depth 16] [--cpu-baseline]
"""

import argparse
import json
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

import gpuforest
from gpuforest.backend import get_backend
from gpuforest.binning import BinMapper
from gpuforest.devices import list_devices
from gpuforest.statistics import classification_statistics

RESULTS = Path(__file__).resolve().parent / "results"


def synthetic(n_samples, n_features, seed=0):
    """Classification data like HIGGS: informative linear signal plus noise (float32)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features), dtype=np.float32)
    weights = rng.standard_normal(n_features).astype(np.float32)
    y = (X @ weights + rng.standard_normal(n_samples, dtype=np.float32) > 0).astype(np.int64)
    return X, y


def cuda_seconds(function, repeats=3):
    """Best time of ``function`` on the GPU stream, measured with CUDA events."""
    import cupy

    best = np.inf
    for _ in range(repeats):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        function()
        stop.record()
        stop.synchronize()
        best = min(best, cupy.cuda.get_elapsed_time(start, stop) / 1000)
    return best


def copy_bandwidth():
    """Device-to-device copy bandwidth in bytes/s (read + write) of a 1 GiB buffer."""
    import cupy

    source = cupy.ones(2**30 // 4, dtype=np.float32)
    target = cupy.empty_like(source)
    seconds = cuda_seconds(lambda: target.__setitem__(Ellipsis, source), repeats=5)
    return 2 * source.nbytes / seconds


def histogram_bandwidth(X, y):
    """Effective bandwidth of build_histograms over every row (the root node) in bytes/s."""
    backend = get_backend("cuda")
    bin_mapper = BinMapper(256).fit(X)
    stats = classification_statistics("gini", y, 2, np.ones(y.shape[0]))
    n_samples, n_features = X.shape
    rows = backend.row_data(
        backend.binned_rows(bin_mapper.transform(X, backend)), np.arange(n_samples, dtype=np.int32),
        np.ones((1, n_samples), dtype=np.int32), stats,
    )
    start, stop, tree = np.array([0]), np.array([n_samples]), np.array([0])
    every_feature = np.ones((1, n_features), dtype=bool)
    seconds = cuda_seconds(lambda: backend.build_histograms(rows, start, stop, tree, 256, stats.n_slots, every_feature))
    # Bytes the kernel must read: the bins, and per row its index, count, slot and statistic.
    bytes_read = n_samples * (n_features + 4 + 4 + 4 + 8 * stats.row_stats.shape[1])
    return bytes_read / seconds, seconds


def fit_seconds(device, X, y, max_depth):
    """``(seconds, model, compilations)``: the fit's wall time and the kernels it compiled (``Backend.counting``)."""
    model = gpuforest.DecisionTreeClassifier(max_depth=max_depth, random_state=0, device=device)
    with get_backend(device).counting() as counts:
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
    return seconds, model, counts.compilations


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[1_000_000, 10_000_000])
    parser.add_argument("--n-features", type=int, default=28)
    parser.add_argument("--max-depth", type=int, default=16)
    parser.add_argument("--cpu-baseline", action="store_true",
                        help="also time the CPU backend on sizes up to 1M rows (compiles the CPU kernels first)")
    args = parser.parse_args()
    devices = list_devices()
    device_name = devices[0].name if devices else "unknown CUDA device"
    warm_X, warm_y = synthetic(5000, args.n_features)
    start = time.perf_counter()
    fit_seconds("cuda", warm_X, warm_y, args.max_depth)
    compile_seconds = time.perf_counter() - start
    copy = copy_bandwidth()
    results = []
    for n_samples in args.sizes:
        X, y = synthetic(n_samples, args.n_features)
        histogram, histogram_seconds = histogram_bandwidth(X, y)
        gpu_seconds, model, compilations = fit_seconds("cuda", X, y, args.max_depth)
        row = {
            "n_samples": n_samples,
            "gpu_fit_s": gpu_seconds,
            "gpu_fit_compilations": compilations,
            "train_accuracy": float(model.score(X[:1_000_000], y[:1_000_000])),
            "leaves": int(model.get_n_leaves()),
            "root_histogram_s": histogram_seconds,
            "histogram_bandwidth_GBps": histogram / 1e9,
            "histogram_fraction_of_copy": histogram / copy,
        }
        if args.cpu_baseline and n_samples <= 1_000_000:
            row["cpu_fit_s"], _, _ = fit_seconds("cpu", X, y, args.max_depth)
            row["gpu_speedup_vs_cpu"] = row["cpu_fit_s"] / gpu_seconds
        results.append(row)
    report = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "device": device_name,
        "n_features": args.n_features,
        "max_depth": args.max_depth,
        "compile_s": compile_seconds,
        "copy_bandwidth_GBps": copy / 1e9,
        "results": results,
    }
    lines = [
        f"# GPU decision tree on {device_name} ({report['date']})",
        "",
        f"max_depth={args.max_depth}, {args.n_features} features; one-off compile {compile_seconds:.1f} s (not included); "
        f"device copy bandwidth {copy / 1e9:.0f} GB/s.",
        "",
        "| rows | GPU fit s | kernels compiled in the fit | CPU fit s | GPU speed-up | root histogram s "
        "| histogram GB/s | fraction of copy |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in results:
        cpu = f"{row['cpu_fit_s']:.2f}" if "cpu_fit_s" in row else "-"
        speedup = f"{row['gpu_speedup_vs_cpu']:.1f}x" if "gpu_speedup_vs_cpu" in row else "-"
        lines.append(
            f"| {row['n_samples']:,} | {row['gpu_fit_s']:.2f} | {row['gpu_fit_compilations']} | {cpu} | {speedup} "
            f"| {row['root_histogram_s']:.4f} "
            f"| {row['histogram_bandwidth_GBps']:.0f} | {row['histogram_fraction_of_copy']:.2f} |"
        )
    RESULTS.mkdir(exist_ok=True)
    stem = RESULTS / f"gpu_tree_{device_name.replace(' ', '_')}"
    stem.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
