"""The CUDA kernel tests' twins: every CUDA launcher against its CPU kernel, bit for bit.

Each test builds a small random problem, runs the CPU kernel of
``gpuforest.kernels.cpu`` and the launcher of the same name of
``gpuforest.kernels.cuda`` on copies of identical inputs, and asserts that all
outputs are exactly equal (floats included). Without a GPU the launchers run
under numba's CUDA simulator (``tests/conftest.py``), which executes every
thread in Python, so the problems are a few dozen rows. ``GPUFOREST_REAL_CUDA=1``
runs the same tests on a real device (arrays copied there with
``numba.cuda.to_device``).

Launches are capped at 65535 blocks and use grid-stride loops; the tests
shrink the cap (``MAX_BLOCKS``) to 1 so that one block or one thread covers
several tiles, nodes or rows.
"""

import numpy as np
from numba import config, cuda

SIMULATOR = bool(config.ENABLE_CUDASIM)


def run_both(cpu_kernel, cuda_launcher, args):
    """Run both kernels on their own copies of ``args``; returns (cpu_args, cuda_args) afterwards.

    Arrays are copied (order kept), so in-place outputs can be compared
    argument by argument; on a real device the CUDA copies go through device
    memory and come back.
    """
    cpu_args = [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args]
    cuda_args = [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args]
    cpu_kernel(*cpu_args)
    if SIMULATOR:
        cuda_launcher(*cuda_args)
    else:
        device_args = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in cuda_args]
        cuda_launcher(*device_args)
        cuda.synchronize()
        cuda_args = [d.copy_to_host() if isinstance(a, np.ndarray) else a for a, d in zip(cuda_args, device_args)]
    return cpu_args, cuda_args


def assert_all_equal(cpu_args, cuda_args):
    """Every array argument identical: same dtype, shape and bytes (so also the same NaNs)."""
    for index, (expected, actual) in enumerate(zip(cpu_args, cuda_args)):
        if isinstance(expected, np.ndarray):
            assert actual.dtype == expected.dtype and actual.shape == expected.shape, index
            np.testing.assert_array_equal(actual, expected, err_msg=f"argument {index}")
            assert actual.tobytes() == expected.tobytes(), f"argument {index} differs in its bits"
