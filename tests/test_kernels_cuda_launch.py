"""Kernel tier, kernels/cuda/launch.py: the one-thread-per-item launch configuration against its rules and a launch
that marks every item, the launch counts of ``SimulatedKernel`` and ``CachedKernel``, and the key under which
``CachedKernel`` reuses a specialisation.

``CachedKernel``'s launch through a reused specialisation needs CuPy arrays on a GPU: tests/gpu/test_real_device.py
holds it to numba's own launch there.
"""

import sys
from types import SimpleNamespace

import numpy as np
import pytest
from numba import cuda

from gpuforest.backend import get_backend
from gpuforest.kernels.cuda import jit_kernel, launch
from gpuforest.kernels.cuda.launch import BLOCK_SIZE, MAX_BLOCKS, CachedKernel, _argument_key, elementwise_config

try:
    from .cuda_twins import SIMULATOR
except ImportError:
    from cuda_twins import SIMULATOR


@pytest.mark.real_launch_sizes
@pytest.mark.parametrize("n_items", [1, 31, 32, 33, 255, 256, 257, 1000, MAX_BLOCKS * BLOCK_SIZE, 10**9])
def test_elementwise_config_gives_one_thread_per_item_in_whole_warps(n_items):
    blocks, threads = elementwise_config(n_items)
    assert threads % 32 == 0 and 32 <= threads <= BLOCK_SIZE
    assert threads - n_items < 32  # no idle warp in a block smaller than BLOCK_SIZE
    if n_items <= MAX_BLOCKS * BLOCK_SIZE:
        assert (blocks - 1) * threads < n_items <= blocks * threads  # every item a thread, no idle block
    else:
        assert (blocks, threads) == (MAX_BLOCKS, BLOCK_SIZE)  # the kernels grid-stride over the rest


def _mark_items_kernel(out):
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[i] += 1


_mark_items = jit_kernel(_mark_items_kernel)


@pytest.mark.parametrize("max_blocks", [MAX_BLOCKS, 1])
@pytest.mark.parametrize("n_items", [1, 70, 300])
def test_a_launch_of_that_configuration_reaches_every_item_once(monkeypatch, max_blocks, n_items):
    monkeypatch.setattr(launch, "MAX_BLOCKS", max_blocks)
    out = cuda.to_device(np.zeros(n_items, dtype=np.int64))
    _mark_items[elementwise_config(n_items)](out)
    np.testing.assert_array_equal(out.copy_to_host(), np.ones(n_items))


@pytest.mark.skipif(not SIMULATOR, reason="jit_kernel gives a SimulatedKernel under the simulator only")
def test_simulated_kernel_counts_its_launches_and_is_the_kernel_otherwise():
    assert _mark_items.py_func is _mark_items_kernel
    out = np.zeros(5, dtype=np.int64)
    with get_backend("cuda").counting() as counts:
        for _ in range(3):
            _mark_items[1, 32](out)
    assert counts.launches == 3
    np.testing.assert_array_equal(out, np.full(5, 3))


@pytest.mark.skipif(not SIMULATOR, reason="jit_kernel gives a SimulatedKernel under the simulator only")
def test_simulated_kernel_counts_a_compilation_at_each_new_argument_type():
    """What a GPU's numba-cuda compiles: a launch of argument types it has not seen (dtypes, dimensions, layouts)."""
    kernel = jit_kernel(_mark_items_kernel)
    ints = np.zeros(64, dtype=np.int64)
    launches = ((ints, 1), (ints, 0), (np.ones(9, dtype=np.int64), 0), (np.zeros(64), 1), (ints.astype(np.int32), 1))
    with get_backend("cuda").counting() as counts:
        for out, new_types in launches:
            compiled = counts.compilations
            kernel[1, 32](out)
            assert counts.compilations - compiled == new_types
    assert counts.launches == 5


def test_cached_kernel_counts_a_launch_and_gives_numba_integer_dimensions():
    cached = CachedKernel(SimpleNamespace(py_func=_mark_items_kernel))
    with get_backend("cuda").counting() as counts:
        launcher = cached[np.int64(4), (np.int32(8), 2)]
    assert counts.launches == 1
    assert launcher.args == (4, (8, 2)) and type(launcher.args[0]) is int and type(launcher.args[1][0]) is int


class FakeCupyArray:
    """What ``_argument_key`` reads of a CuPy array (dtype, dimensions, contiguity), from a numpy array."""

    def __init__(self, array):
        self.dtype, self.ndim, self.flags = array.dtype, array.ndim, array.flags


def test_argument_key_tells_apart_exactly_what_numba_types_tell_apart(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", SimpleNamespace(ndarray=FakeCupyArray))
    matrix = np.zeros((4, 3), dtype=np.float32)

    def key(*arrays_or_scalars):
        return tuple(
            _argument_key(FakeCupyArray(value) if isinstance(value, np.ndarray) else value)
            for value in arrays_or_scalars
        )

    # Arrays of the same dtype, dimensions and order share a key whatever their shape or contents; scalars by type.
    assert key(matrix, 2, 0.5, True) == key(np.ones((7, 3), dtype=np.float32), 9, -1.0, False)
    distinct = [
        key(matrix), key(matrix.astype(np.float64)), key(np.asfortranarray(matrix)), key(matrix[:, ::2]),
        key(matrix.ravel()), key(2), key(2.0), key(np.float32(2)), key(True), key((2, 0.5)), key((2, 2)),
    ]
    assert len(set(distinct)) == len(distinct)


def test_argument_key_sends_other_arguments_through_numba(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", SimpleNamespace(ndarray=FakeCupyArray))
    for other in (np.zeros(3), [1, 2], None, "text", (1, np.zeros(3))):
        assert _argument_key(other) is None
