"""Each failure's report written out as it happens (``GPUFOREST_FAILURES``: a file), so that a device
session's step cut by its time limit still leaves the tracebacks that pytest prints only at the end."""

import os


def pytest_runtest_logreport(report):
    path = os.environ.get("GPUFOREST_FAILURES")
    if path and report.failed and "PYTEST_XDIST_WORKER" not in os.environ:  # once, in the controller
        with open(path, "a") as failures:
            failures.write(f"\n=== {report.nodeid} ({report.when})\n{report.longreprtext}\n")
