"""Benchmark: the small fits of ``make demo``'s table (a full tree on diabetes and on breast_cancer), gpuforest vs
scikit-learn, with numba's default threads and with one.

A fit of a few hundred rows takes a millisecond or two, so a shared machine's slow spells (minutes long, in
which a second thread helps less or not at all) decide a single run. The parent therefore runs ``--rounds``
rounds; each round starts one child process per thread setting, in turn, and each child fits ours and
scikit-learn's in turn ``--fits`` times (after a warm-up) and reports each one's best. The report gives every
round's ratio (scikit-learn's best over ours), so that a slow spell shows as such, and the median ratio.

    python benchmarks/bench_small_fits.py [--rounds 6] [--fits 200]
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
STEM = "small_fits_cpu"
THREAD_SETTINGS = ("default", "1")


def _cases():
    """``(name, ours, scikit-learn's, X_train, y_train)``: the demo's split (``train_test_split``, seed 0)."""
    from sklearn import tree as sklearn_tree
    from sklearn.datasets import load_breast_cancer, load_diabetes
    from sklearn.model_selection import train_test_split

    import gpuforest

    for name, load, ours, theirs in (
        ("diabetes tree", load_diabetes, gpuforest.DecisionTreeRegressor, sklearn_tree.DecisionTreeRegressor),
        ("breast_cancer tree", load_breast_cancer, gpuforest.DecisionTreeClassifier,
         sklearn_tree.DecisionTreeClassifier),
    ):
        X_train, _, y_train, _ = train_test_split(*load(return_X_y=True), random_state=0)
        yield name, ours(random_state=0), theirs(random_state=0), X_train, y_train


def child(n_fits):
    """Each case's best fit times, ours and scikit-learn's fitted in turn; printed as JSON."""
    import numba

    results = {"threads": numba.get_num_threads(), "cases": {}}
    for name, ours, theirs, X, y in _cases():
        for _ in range(20):
            ours.fit(X, y)
            theirs.fit(X, y)
        best = {"gpuforest": np.inf, "scikit-learn": np.inf}
        for _ in range(n_fits):
            for library, estimator in (("gpuforest", ours), ("scikit-learn", theirs)):
                start = time.perf_counter()
                estimator.fit(X, y)
                best[library] = min(best[library], time.perf_counter() - start)
        results["cases"][name] = best
    print(json.dumps(results))


def parent(n_rounds, n_fits):
    rounds = []
    for _ in range(n_rounds):
        for threads in THREAD_SETTINGS:
            env = dict(os.environ)
            if threads != "default":
                env["NUMBA_NUM_THREADS"] = threads
            output = subprocess.run(
                [sys.executable, __file__, "--child", "--fits", str(n_fits)], env=env, check=True,
                capture_output=True, text=True,
            ).stdout
            rounds.append({"setting": threads, **json.loads(output.splitlines()[-1])})
    import gpuforest
    import sklearn

    report = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "versions": {"gpuforest": gpuforest.__version__, "scikit-learn": sklearn.__version__},
        "rounds": n_rounds, "fits": n_fits, "results": rounds,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{STEM}.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / f"{STEM}.md").write_text(markdown(report))
    print(markdown(report))


def markdown(report):
    lines = [
        "# Small fits on the CPU: gpuforest vs scikit-learn",
        "",
        f"{report['date']}, {report['machine']}; gpuforest {report['versions']['gpuforest']}, scikit-learn "
        f"{report['versions']['scikit-learn']}. `benchmarks/bench_small_fits.py`: {report['rounds']} rounds, each a "
        f"process per thread setting in turn, each fitting ours and scikit-learn's in turn {report['fits']} times "
        "(best of each, ms). Ratio: scikit-learn's time over ours (above 1: gpuforest faster).",
        "",
    ]
    cases = list(report["results"][0]["cases"])
    for case in cases:
        lines += [
            f"## {case}", "",
            "| threads | round ratios | median ratio | gpuforest ms (best) | scikit-learn ms (best) |",
            "|---|---|---|---|---|",
        ]
        for setting in THREAD_SETTINGS:
            runs = [run for run in report["results"] if run["setting"] == setting]
            ours = [run["cases"][case]["gpuforest"] * 1e3 for run in runs]
            theirs = [run["cases"][case]["scikit-learn"] * 1e3 for run in runs]
            ratios = [t / o for o, t in zip(ours, theirs)]
            lines.append(
                f"| {runs[0]['threads']} | {' '.join(f'{r:.2f}' for r in ratios)} | {np.median(ratios):.2f} | "
                f"{min(ours):.3f} | {min(theirs):.3f} |"
            )
        lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--fits", type=int, default=200)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.fits)
    else:
        parent(args.rounds, args.fits)


if __name__ == "__main__":
    main()
