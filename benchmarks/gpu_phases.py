"""Phase timings of GPU fits: where a round or a tree's levels spend their time.

Every ``Backend`` method is a phase (histograms, split search, partition, leaf values...).
CUDA events are recorded just before and just after each kernel's enqueue, so a phase's
device time counts its kernels alone, not the host work that prepares their launches; its
host time is the wall time spent inside the method (waits for the device included). The
fit's wall time beyond the methods is the host loop's own work ("outside the backend").
Each model is fitted once before it is timed, then once more under cProfile, which lists
the Python functions that cost the most host time.

    python benchmarks/gpu_phases.py [--n-samples 1000000] [--rounds 20] [--trees 100] [--output STEM]

Writes ``STEM.md`` (the tables) and ``STEM_profile.txt``.
"""

import argparse
import cProfile
import io
import pstats
import time
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path

from bench_common import synthetic_data

import gpuforest
from gpuforest.backend import Backend
from gpuforest.devices import list_devices

PHASES = {
    "map_to_bins": "binning",
    "loss_gradients": "gradients",
    "row_data": "statistics and row data",
    "uniform_per_row": "sampling",
    "bootstrap_counts": "sampling",
    "feature_masks": "sampling",
    "threshold_draws": "sampling",
    "node_totals": "histograms",
    "build_histograms": "histograms",
    "subtract_histograms": "histograms",
    "find_best_splits": "split search",
    "apply_splits": "partition",
    "node_values": "leaf values",
    "add_leaf_values": "leaf values",
    "predict_raw": "predict",
    "predict_leaves": "predict",
    "to_device": "copies",
    "to_host": "copies",
}


class PhaseTimer:
    """Wraps the backend's methods and numba-cuda's kernel enqueue with timers."""

    def __init__(self):
        self.phase = None
        self.host = defaultdict(float)
        self.calls = Counter()
        self.launches = Counter()
        self.launch_host = defaultdict(float)
        self.kernel_events = []  # (phase, kernel name, start event, stop event)
        self.kernel_name = None

    def install(self):
        from numba import config

        for method, phase in PHASES.items():
            setattr(Backend, method, self._timed_method(getattr(Backend, method), phase))
        from gpuforest.backend import CUDABackend

        for method in ("binned_rows", "free_memory_bytes"):
            setattr(CUDABackend, method, self._timed_method(getattr(CUDABackend, method), "other backend"))
        # The depth-wise levels on the device (kernels/cuda/growth.py): their kernels by name, one phase.
        CUDABackend.grow_levels = self._timed_method(CUDABackend.grow_levels, "levels on the device")
        if not config.ENABLE_CUDASIM:  # the simulator runs kernels in Python: nothing to time
            self._install_kernel_timers()

    def _install_kernel_timers(self):
        import cupy
        from numba.cuda import dispatcher

        from gpuforest.kernels.cuda.launch import CachedKernel

        enqueue, cached_launch = dispatcher.launch, CachedKernel._launch
        timer = self

        def timed_enqueue(stream, config, kernel, *args):
            start, stop = cupy.cuda.Event(), cupy.cuda.Event()  # on the legacy default stream, as the kernels
            start.record()
            enqueue(stream, config, kernel, *args)
            stop.record()
            timer.kernel_events.append((timer.phase or "outside the backend", timer.kernel_name, start, stop))

        def timed_launch(kernel_self, *args):
            timer.kernel_name = kernel_self.py_func.__name__
            begin = time.perf_counter()
            try:
                return cached_launch(kernel_self, *args)
            finally:
                phase = timer.phase or "outside the backend"
                timer.launches[phase] += 1
                timer.launch_host[phase] += time.perf_counter() - begin

        dispatcher.launch = timed_enqueue
        CachedKernel._launch = timed_launch

    def _timed_method(self, method, phase):
        timer = self

        def timed(*args, **kwargs):
            if timer.phase is not None:  # nested: the outer phase counts it
                return method(*args, **kwargs)
            timer.phase = phase
            begin = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                timer.host[phase] += time.perf_counter() - begin
                timer.calls[phase] += 1
                timer.phase = None

        return timed

    def reset(self):
        self.host.clear()
        self.calls.clear()
        self.launches.clear()
        self.launch_host.clear()
        self.kernel_events.clear()

    def table(self, title, wall_s, n_steps):
        """Markdown table of the phases, in ms per step (a boosting round or a tree)."""
        import cupy

        device = defaultdict(float)
        by_kernel = defaultdict(float)
        for phase, name, start, stop in self.kernel_events:
            stop.synchronize()
            seconds = cupy.cuda.get_elapsed_time(start, stop) / 1000
            device[phase] += seconds
            by_kernel[name] += seconds
        phases = sorted(set(self.host) | set(device) | set(self.launches), key=lambda p: -self.host.get(p, 0.0))
        outside = wall_s - sum(self.host.values())
        per = 1000 / n_steps
        lines = [
            f"### {title}: {wall_s:.3f} s, {n_steps} steps; ms per step",
            "",
            "| phase | calls | host ms | launches | launch host ms | kernel ms |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for phase in phases:
            lines.append(
                f"| {phase} | {self.calls.get(phase, 0) / n_steps:.1f} | {self.host.get(phase, outside) * per:.2f} "
                f"| {self.launches.get(phase, 0) / n_steps:.1f} | {self.launch_host.get(phase, 0.0) * per:.2f} "
                f"| {device.get(phase, 0.0) * per:.3f} |"
            )
        if "outside the backend" not in phases:
            lines.append(f"| outside the backend | - | {outside * per:.2f} | 0 | 0 | 0 |")
        lines.append(
            f"| **all** | | {wall_s * per:.2f} | {sum(self.launches.values()) / n_steps:.1f} "
            f"| {sum(self.launch_host.values()) * per:.2f} | {sum(device.values()) * per:.3f} |"
        )
        lines += ["", "| kernel | ms per step |", "|---|---:|"]
        for name, seconds in sorted(by_kernel.items(), key=lambda item: -item[1]):
            lines.append(f"| {name} | {seconds * per:.3f} |")
        return "\n".join(lines) + "\n"


def models(args):
    """(title, estimator, steps) of each timed fit."""
    boosting = dict(max_depth=8, grow_policy="depthwise", learning_rate=0.1, min_samples_leaf=20, max_bins=256,
                    early_stopping=False, device="cuda", random_state=0)
    return [
        (f"boosting, depth 8, {args.rounds} rounds",
         gpuforest.GradientBoostingClassifier(n_estimators=args.rounds, **boosting), args.rounds),
        (f"boosting, best-first 31 leaves, {args.rounds} rounds",
         gpuforest.GradientBoostingClassifier(
             n_estimators=args.rounds, learning_rate=0.1, early_stopping=False, device="cuda", random_state=0),
         args.rounds),
        (f"random forest, depth 16, {args.trees} trees",
         gpuforest.RandomForestClassifier(n_estimators=args.trees, max_depth=16, random_state=0, device="cuda"),
         args.trees),
        ("decision tree, depth 16",
         gpuforest.DecisionTreeClassifier(max_depth=16, random_state=0, device="cuda"), 1),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=1_000_000)
    parser.add_argument("--n-features", type=int, default=28)
    parser.add_argument("--rounds", type=int, default=20)
    # The forest benchmark's 100 (on the H200, 10 trees took 28 ms a tree, the benchmark's 100 86 ms).
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--output", type=Path, default=Path("gpu_phases"), help="path stem of the outputs")
    args = parser.parse_args()
    X, y, _, _ = synthetic_data("classification", args.n_samples, args.n_features, 0)
    X_small, y_small, _, _ = synthetic_data("classification", min(2000, args.n_samples), args.n_features, 0)
    timer = PhaseTimer()
    timer.install()
    report, profiles = [], []
    for title, estimator, n_steps in models(args):
        estimator.fit(X_small, y_small)  # compiles
        estimator.fit(X, y)  # the steady state: specialisations of the full size compiled, memory pools grown
        timer.reset()
        begin = time.perf_counter()
        estimator.fit(X, y)
        wall = time.perf_counter() - begin
        report.append(timer.table(title, wall, n_steps))
        print(report[-1], flush=True)
        profiler = cProfile.Profile()
        profiler.enable()
        estimator.fit(X, y)
        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(30)
        pstats.Stats(profiler, stream=text).sort_stats("cumtime").print_stats(45)
        profiles.append(f"## {title}\n{text.getvalue()}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    device = list_devices()[0].name if list_devices() else "unknown CUDA device"
    args.output.with_suffix(".md").write_text(
        f"# Phase timings, {args.n_samples:,} x {args.n_features}, {device} ({date.today()})\n\n" + "\n".join(report)
    )
    args.output.with_name(args.output.name + "_profile.txt").write_text("\n".join(profiles))


if __name__ == "__main__":
    main()
