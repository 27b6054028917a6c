"""What the benchmark scripts share: the synthetic data, the timer, and the method of the
library comparisons (``bench_forest.py``, ``bench_boosting.py``).

The method: the parent generates the data once and saves it, with its parsed options, to
a temporary folder; each library then fits and predicts in its own child process (the
script run again with ``--only LIBRARY``), so that each fit's peak memory is its own.
A child first fits its library once on tiny data (one-off costs: JIT compile, thread
pools, CUDA context; gpuforest also bins the training rows), reported apart, and with
gpuforest counts the kernels its fit still compiles; then measures the fit (1 run), the prediction
(best of 3), the test scores and the peak resident memory (VmHWM) during the fit. With
``--runs N`` the parent runs the libraries in turn N times (so that a slow spell of a
shared machine falls on all of them) and keeps each library's run of fastest fit, with
every run's fit time. It adds ratios to gpuforest's times, and writes JSON and a markdown table.

Imported by the scripts of this folder, which run as ``python benchmarks/<script>.py``
(so this folder is on ``sys.path``).
"""

import argparse
import contextlib
import ctypes
import gc
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification, make_regression

RESULTS = Path(__file__).resolve().parent / "results"
WARM_UP_SAMPLES = 2000
DATA_NAMES = ("X_train", "y_train", "X_test", "y_test")
# Options of the parent that a child does not take over (it gets its own).
_CHILD_OPTIONS = ("only", "data_dir", "row_output")
_ARGS_FILE = "args.json"


def best_time(function, repeats=1):
    """Best wall time of ``repeats`` calls, and the last result."""
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def synthetic_data(task, n_samples, n_features, seed):
    """Train and test (``n_samples // 10`` rows) sets with float32 features, half of them informative."""
    n_total = n_samples + n_samples // 10
    if task == "classification":
        X, y = make_classification(
            n_samples=n_total, n_features=n_features, n_informative=n_features // 2, random_state=seed
        )
    else:
        X, y = make_regression(
            n_samples=n_total, n_features=n_features, n_informative=n_features // 2, noise=10.0, random_state=seed
        )
    X = X.astype(np.float32)
    return X[:n_samples], y[:n_samples], X[n_samples:], y[n_samples:]


# --- peak memory of this process ----------------------------------------------------------


def peak_rss_mb():
    """Peak resident memory of this process in MiB: VmHWM on Linux (resettable), else ru_maxrss."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return max_rss_mb()


def max_rss_mb():
    """``ru_maxrss`` in MiB: the peak since the process started (not resettable)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def reset_peak_rss():
    """Reset the peak to the current resident memory (Linux >= 4.0); False where not possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def release_free_memory():
    """Collect garbage and hand freed heap memory back to the OS (glibc's malloc_trim), so
    that memory a warm-up freed is not counted in the baseline and then reused by the fit."""
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


# --- one library in this process ----------------------------------------------------------


def measure(library, version, make_estimator, parameters, data, warm_up_data, predict, score):
    """Fit and predict one library in this process: its row (times, scores, peak memory) and the estimator.

    ``make_estimator()`` returns a new unfitted estimator (with ``parameters``);
    ``predict(estimator, X)`` is the timed prediction; ``score(estimator, y_true, predictions)``
    returns the test scores, a dict (its keys become the row's, after ``predict_s``).
    """
    X_train, y_train, X_test, y_test = data
    warm_up_seconds = _warm_up_seconds(library, make_estimator, predict, *warm_up_data[:2], X_train)
    release_free_memory()
    # Baseline: the data and the library are loaded. With the peak reset, the fit's peak is
    # measured from the memory in use now; without, from the peak so far (a lower bound).
    reset = reset_peak_rss()
    baseline_mb = peak_rss_mb()
    estimator = make_estimator()
    with _device_counts(library) as counts:
        fit_seconds, _ = best_time(lambda: estimator.fit(X_train, y_train))
    fit_peak_mb = peak_rss_mb()
    predict_seconds, predictions = best_time(lambda: predict(estimator, X_test), repeats=3)
    row = {
        "library": library,
        "version": version,
        "fit_s": fit_seconds,
        "predict_s": predict_seconds,
        **score(estimator, y_test, predictions),
        "warm_up_s": warm_up_seconds,
        "fit_compilations": None if counts is None else counts.compilations,
        "baseline_rss_mb": baseline_mb,
        "fit_peak_rss_mb": fit_peak_mb,
        "fit_peak_rss_increase_mb": fit_peak_mb - baseline_mb,
        "peak_reset": reset,
        "ru_maxrss_after_predict_mb": max_rss_mb(),
        "settings": parameters,
    }
    return row, estimator


def _device_counts(library):
    """gpuforest's ``Backend.counting`` (what its fit does to a GPU: the kernels it compiles after the warm-up),
    or a block that counts nothing for the peers."""
    if library != "gpuforest":
        return contextlib.nullcontext()
    from gpuforest.backend import get_backend

    return get_backend("cpu").counting()  # the counts are the process's, whatever the backend


def _warm_up_seconds(library, make_estimator, predict, X_tiny, y_tiny, X_train):
    """One-off costs (JIT compile, thread pools, CUDA context): a fit and a prediction on tiny data. gpuforest's
    also bins ``X_train``: fits of more than ``binning.SUBSAMPLE`` rows draw the binning's subsample with a kernel
    of its own, which the tiny fit does not compile (about a second on a fresh cache)."""
    estimator = make_estimator()
    seconds, _ = best_time(lambda: predict(estimator.fit(X_tiny, y_tiny), X_tiny))
    if library == "gpuforest":
        from gpuforest.binning import BinMapper

        seconds += best_time(lambda: BinMapper(random_state=0).fit(X_train))[0]
    return seconds


def run_child(args, measure_library, make_data):
    """The ``--only LIBRARY`` side: measure one library and write (or print) its row as JSON.

    Under a parent (``--data-dir``), the data and the parent's options come from the folder
    it saved; run by hand, the options are this process's and the data is ``make_data(args)``.
    ``measure_library(library, args, data)`` returns the row.
    """
    if args.data_dir:
        saved = json.loads((Path(args.data_dir) / _ARGS_FILE).read_text())
        for key, value in saved.items():
            if key not in _CHILD_OPTIONS:
                setattr(args, key, value)
        data = tuple(np.load(Path(args.data_dir) / f"{name}.npy") for name in DATA_NAMES)
    else:
        data = make_data(args)
    row = json.dumps(measure_library(args.only, args, data), indent=2, default=repr)
    if args.row_output:
        Path(args.row_output).write_text(row + "\n")
    else:
        print(row)


# --- every library, each in a child process -------------------------------------------------


def run_libraries(script, args, make_data):
    """Each of ``args.libraries`` in its own process (``script --only LIBRARY``) on the same data,
    ``args.runs`` times in turn.

    The data (``make_data(args)``, generated once) and ``args`` are handed over as files
    in a temporary folder. A child that fails gives a row with ``error`` (its exit status
    and the end of its output). A library's row is its run of fastest fit, with
    ``fit_s_runs`` (every run's fit time). Rows get ``fit_ratio`` and ``predict_ratio``
    (their time over gpuforest's) when gpuforest ran. Returns the rows.
    """
    tag = Path(script).stem
    runs = {library: [] for library in args.libraries}
    with tempfile.TemporaryDirectory(prefix=f"{tag}_") as data_dir:
        data_dir = Path(data_dir)
        for name, array in zip(DATA_NAMES, make_data(args)):
            np.save(data_dir / f"{name}.npy", array)
        saved = {key: value for key, value in vars(args).items() if key not in _CHILD_OPTIONS}
        (data_dir / _ARGS_FILE).write_text(json.dumps(saved))
        for library in [library for _ in range(args.runs) for library in args.libraries]:
            print(f"[{tag}] {library} ...", file=sys.stderr, flush=True)
            row_path = data_dir / f"row_{library}.json"
            command = [
                sys.executable, str(Path(script).resolve()), "--only", library, "--data-dir", str(data_dir),
                "--row-output", str(row_path),
            ]
            child = subprocess.run(command, capture_output=True, text=True)
            if child.returncode == 0 and row_path.exists():
                row = json.loads(row_path.read_text())
                print(f"[{tag}]   fit {row['fit_s']:.2f} s, predict {row['predict_s']:.3f} s", file=sys.stderr)
            else:
                error = (child.stderr or child.stdout)[-3000:]
                print(f"[{tag}]   failed (exit {child.returncode}):\n{error}", file=sys.stderr)
                row = {"library": library, "error": f"exit {child.returncode}: {error}"}
            runs[library].append(row)
    rows = [_fastest_run(runs[library]) for library in args.libraries]
    ours = gpuforest_row(rows)
    for row in rows:
        if ours is not None and "error" not in row:
            row["fit_ratio"] = row["fit_s"] / ours["fit_s"]
            row["predict_ratio"] = row["predict_s"] / ours["predict_s"]
    return rows


def _fastest_run(rows):
    """A library's row of fastest fit among its runs, with every run's fit time; its first
    failure if no run succeeded."""
    fitted = [row for row in rows if "error" not in row]
    if not fitted:
        return rows[0]
    return {**min(fitted, key=lambda row: row["fit_s"]), "fit_s_runs": [row["fit_s"] for row in fitted]}


def gpuforest_row(rows):
    """gpuforest's row if it ran without error, else None."""
    return next((row for row in rows if row["library"] == "gpuforest" and "error" not in row), None)


def add_shared_arguments(parser, libraries):
    """The options every library benchmark takes, and the hidden ones of its child processes."""
    parser.add_argument("--device", choices=["cpu", "cuda", "auto"], default="cpu", help="gpuforest's (and XGBoost's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=1, help="times the libraries run in turn; the fastest fit is kept")
    parser.add_argument("--output-name", default=None, help="file stem under benchmarks/results/ (or an absolute path)")
    parser.add_argument("--only", choices=libraries, help="run one library in this process and print its row")
    parser.add_argument("--data-dir", help=argparse.SUPPRESS)
    parser.add_argument("--row-output", help=argparse.SUPPRESS)


def run_report(script, args, make_data, **settings):
    """Each library in its own process on the same data: the run's settings (``settings`` after
    the shared ones) and rows, the ``results`` of the report."""
    rows = run_libraries(script, args, make_data)
    ours = gpuforest_row(rows)
    return {
        "task": args.task,
        "n_samples": args.n_samples,
        "n_test": args.n_samples // 10,
        "n_features": args.n_features,
        "n_estimators": args.n_estimators,
        "max_depth": args.max_depth,
        **settings,
        "device": args.device,
        "runs": args.runs,
        "gpuforest_compile_s": ours["warm_up_s"] if ours else None,
        "gpuforest_fit_compilations": ours.get("fit_compilations") if ours else None,
        "rows": rows,
    }


# --- the report: JSON and markdown ------------------------------------------------------------


def make_report(run):
    """The report of one comparison: date, machine (load average before and after), versions, ``run()``."""
    report = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "machine": {
            "cpu_count": os.cpu_count(), "platform": platform.platform(), "load_average_before": list(os.getloadavg()),
        },
        "versions": {"python": platform.python_version(), "numpy": np.__version__},
        "results": run(),
    }
    report["machine"]["load_average_after"] = list(os.getloadavg())
    return report


def save_report(report, stem, markdown):
    """Write ``stem``.json and ``stem``.md (``stem``: a name under benchmarks/results/, or an absolute path)."""
    RESULTS.mkdir(exist_ok=True)
    stem = RESULTS / stem
    Path(f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n")
    Path(f"{stem}.md").write_text(markdown + "\n")
    print(markdown)


def method_lines(title, report):
    """The title and the paragraph on the machine and the method, common to the comparisons."""
    result, machine = report["results"], report["machine"]
    versions = ", ".join(f"{row['library']} {row['version']}" for row in result["rows"] if "version" in row)
    return [
        f"# {title} ({report['date']})",
        "",
        f"Machine: {machine['cpu_count']} CPUs, {machine['platform']}; "
        f"gpuforest on device={result['device']}; {versions}. Load average (1 min) before / after: "
        f"{machine['load_average_before'][0]:.1f} / {machine['load_average_after'][0]:.1f}.",
        "Each library fits and predicts in its own process on the same data; times are the best of "
        f"{_runs_text(result.get('runs', 1))}1 fit / 3 predicts, after a warm-up fit on "
        f"{WARM_UP_SAMPLES:,} rows (reported apart, not included: gpuforest's is its one-off JIT compile, "
        "with the binning of the training rows, whose subsample draw the tiny fit does not compile). "
        "Peak memory is the process's peak resident memory (VmHWM) during the fit: absolute, and its "
        "increase over the memory in use just before the fit (data and library loaded, peak reset). "
        "Host memory only: device memory is not counted. Ratios are peer time / gpuforest time "
        "(>1: gpuforest faster).",
    ]


def _runs_text(runs):
    """How the runs are counted in the method paragraph: nothing for one."""
    return "" if runs == 1 else f"{runs} runs (the libraries in turn, each run in a new process) of "


def fit_runs_lines(rows):
    """Every run's fit time of each library, when there were several runs."""
    runs = [(row["library"], row["fit_s_runs"]) for row in rows if len(row.get("fit_s_runs", ())) > 1]
    if not runs:
        return []
    texts = [f"{library} {', '.join(f'{seconds:.2f}' for seconds in times)}" for library, times in runs]
    return ["", "Fit seconds of each run: " + "; ".join(texts) + "."]


def table_lines(rows, metrics):
    """The results table: one line per library; ``metrics`` are (row key, header, format) of the test scores."""
    headers = ["library", "fit s", "predict s"] + [header for _, header, _ in metrics] + [
        "fit peak MiB", "fit increase MiB", "fit ratio", "predict ratio", "warm-up s",
    ]
    lines = ["| " + " | ".join(headers) + " |", "|---" + "|---:" * (len(headers) - 1) + "|"]
    for row in rows:
        if "error" in row:
            error = row["error"].strip().splitlines()[-1][:80]
            lines.append(f"| {row['library']} | failed: {error} |" + "|" * (len(headers) - 2))
            continue
        cells = [row["library"], f"{row['fit_s']:.2f}", f"{row['predict_s']:.3f}"]
        cells += [format(row[key], spec) for key, _, spec in metrics]
        cells += [f"{row['fit_peak_rss_mb']:,.0f}", f"{row['fit_peak_rss_increase_mb']:,.0f}"]
        cells += [f"{row[key]:.2f}x" if key in row else "-" for key in ("fit_ratio", "predict_ratio")]
        cells.append(f"{row['warm_up_s']:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def compile_lines(result):
    """The line on gpuforest's one-off compile time, if it ran."""
    if result["gpuforest_compile_s"] is None:
        return []
    line = f"gpuforest compile (one-off): {result['gpuforest_compile_s']:.1f} s."
    if result.get("device") == "cuda" and result.get("gpuforest_fit_compilations") is not None:
        line += f" Kernels compiled in the timed fit, after the warm-up: {result['gpuforest_fit_compilations']}."
    return ["", line]


def settings_lines(rows, estimator_name, notes):
    """The settings section: each library's call, ``estimator_name(library)`` with its parameters, and its note."""
    lines = ["", "### Settings", ""]
    for row in rows:
        if "settings" in row:
            parameters = ", ".join(f"{key}={_parameter_text(value)}" for key, value in row["settings"].items())
            library = row["library"]
            lines.append(f"- **{library}** `{estimator_name(library)}({parameters})`. {notes[library]}")
    return lines


def _parameter_text(value):
    """A parameter as written in a call: repr, except an estimator (saved as its repr) is written bare."""
    if isinstance(value, str) and value.endswith(")") and "(" in value and value[:1].isupper():
        return value
    return repr(value)
