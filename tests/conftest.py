"""Test set-up: CUDA kernels run under numba's simulator unless a real GPU is asked for.

``NUMBA_ENABLE_CUDASIM`` and ``NUMBA_NUM_THREADS`` must be set before numba is first imported, hence here.
The pytest-xdist workers compile into one kernel cache, the package's: ``gpuforest.compilation``'s lock
keeps their saves apart, and each kernel compiled by one worker is loaded by the others.
Set ``GPUFOREST_REAL_CUDA=1`` to run against a real device (the ``gpu`` tests).
"""

import importlib
import os
import sys

import pytest

# The pytest-xdist workers share the cores: numba's threads of all of them together no more than the
# cores. With more threads than cores, every parallel kernel waits for threads that are not running
# (a launch of microseconds then takes milliseconds).
_n_workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
if _n_workers:
    os.environ.setdefault("NUMBA_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // int(_n_workers))))

if os.environ.get("GPUFOREST_REAL_CUDA") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    # The simulator runs each CUDA thread as a Python thread that mostly waits at
    # barriers: switching threads more often makes simulated launches faster.
    sys.setswitchinterval(1e-4)

    import threading
    import traceback

    import numpy as np
    from numba import types
    from numba.cuda.simulator import kernelapi
    from numba.np import numpy_support

    _shared_allocation_lock = threading.Lock()

    def _shared_array(self, shape, dtype, alignment=None):
        """``cuda.shared.array`` of the simulator with its check-then-create under a lock.

        numba-cuda 0.30's ``FakeCUDAShared.array`` looks the array up by call site
        and creates it when missing, unlocked: two threads of a block that get
        there together each create one and stop sharing it, so a block-wide scan
        reads flags no one wrote (seen as a rare IndexError in the partition kernel).
        """
        if alignment is not None:
            raise RuntimeError("Array alignment is not supported in cudasim")
        if shape == 0:  # dynamic shared memory: one buffer, no race
            return _simulator_shared_array(self, shape, dtype)
        caller = traceback.extract_stack(sys._getframe(1), limit=1)[-1][0:2]
        with _shared_allocation_lock:
            allocation = self._allocations.get(caller)
            if allocation is None:
                if isinstance(dtype, types.Type):
                    dtype = numpy_support.as_dtype(dtype)
                allocation = np.empty(shape, dtype)
                self._allocations[caller] = allocation
        return allocation

    _simulator_shared_array = kernelapi.FakeCUDAShared.array
    kernelapi.FakeCUDAShared.array = _shared_array


# The longest tests (each a subprocess that compiles every kernel) go first, so that pytest-xdist
# runs them beside the others rather than after them.
SLOW_FIRST = ("test_ptx.py::test_kernels_compile_without_spills_at_half_occupancy", "test_boundscheck.py::")


# scikit-learn's checks of several outputs: quality tier, as tests/test_multioutput.py (the kernels compile anew
# for several outputs' criteria, about 40 s a worker).
MULTI_OUTPUT_CHECKS = ("check_classifier_multioutput", "check_regressor_multioutput")


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: not any(name in item.nodeid for name in SLOW_FIRST))
    for item in items:
        if any(check in item.nodeid for check in MULTI_OUTPUT_CHECKS):
            item.add_marker(pytest.mark.quality)


# Threads per block of the CUDA kernels under the simulator, which runs every CUDA thread as a Python thread:
# one warp, so that a block costs 32 threads instead of up to 256. The kernels' code is the same at every size; the
# real-device tests (tests/gpu) and the PTX check take the real sizes, as does a test marked real_launch_sizes.
SIMULATOR_BLOCK_THREADS = 32


@pytest.fixture
def benchmark_script(monkeypatch):
    """``load(name)``: the script ``benchmarks/<name>.py`` as a module; it imports bench_common from its own
    folder, as it does when run."""
    monkeypatch.syspath_prepend(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
    return importlib.import_module


@pytest.fixture(autouse=True)
def simulator_launch_sizes(request, monkeypatch):
    from numba import config

    if not config.ENABLE_CUDASIM or request.node.get_closest_marker("real_launch_sizes"):
        return
    from gpuforest.kernels.cuda import growth, histogram, launch, splitting

    for module, name in (
        (histogram, "THREADS"), (histogram, "SUBTRACT_THREADS"), (launch, "BLOCK_SIZE"), (splitting, "PICK_THREADS"),
        (splitting, "FINISH_ROWS_THREADS"), (growth, "PLAN_THREADS"), (growth, "DERIVE_THREADS"),
    ):
        monkeypatch.setattr(module, name, SIMULATOR_BLOCK_THREADS)


@pytest.fixture(params=["one task per node", "several tasks per node"])
def chunking(request, monkeypatch):
    """The CPU histogram, totals and partition kernels as they run on tiny nodes, and with every node cut into
    several tasks."""
    from gpuforest.kernels.cpu import histogram, multiway, partitioning

    if request.param == "several tasks per node":
        # The kernels' own rule makes one task of a node this small.
        for module in (histogram, multiway, partitioning):
            monkeypatch.setattr(module, "rows_per_chunk", lambda node_start, node_stop: 3)
    return request.param


@pytest.fixture(params=["full", "one_block"])
def grid(request, monkeypatch):
    """Each CUDA kernel at its normal launch size, and squeezed into a single block."""
    from gpuforest.kernels.cuda import binning, launch, sampling

    if request.param == "one_block":
        monkeypatch.setattr(launch, "MAX_BLOCKS", 1)
        for module in (binning, sampling):
            monkeypatch.setattr(module, "MAX_BLOCKS", 1)
    return request.param
