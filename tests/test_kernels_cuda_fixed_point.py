"""Kernel tier, kernels/cuda/fixed_point.py: each launcher against the CPU kernel bit for bit (several blocks,
one, no rows), and its ``rint`` against numpy's at the halves, the signs and the magnitudes where it changes."""

import numpy as np
import pytest

from gpuforest.backend import get_backend
from gpuforest.kernels.cpu import fixed_point as cpu_fixed_point
from gpuforest.kernels.cuda import fixed_point as cuda_fixed_point

try:
    from .test_kernels_cpu_fixed_point import columns_of
except ImportError:
    from test_kernels_cpu_fixed_point import columns_of


def test_rint_rounds_as_numpy():
    halves = np.arange(-6, 7) + 0.5
    large = np.array([2.0**52 - 0.5, 2.0**52 - 1.5, 2.0**52, 2.0**52 + 2.0, 2.0**62, 1e300])
    values = np.concatenate([halves, large, -large, [0.0, -0.0, 0.49999999999999994, -1e-300, 3.7, -3.2]])
    rounded = np.array([cuda_fixed_point.rint(value) for value in values])
    np.testing.assert_array_equal(rounded, np.rint(values))
    np.testing.assert_array_equal(np.signbit(rounded), np.signbit(np.rint(values)))


@pytest.mark.parametrize("n_rows", [0, 5, 700])
def test_cuda_passes_equal_the_cpu_passes(n_rows):
    backend = get_backend("cuda")
    columns = columns_of(n_rows, seed=3)
    device_columns = backend.to_device_many(*columns)
    scales = np.array([2.0**44, 2.0**3])
    for name, args, dtype, shape in [
        ("column_abs_max", (), np.float64, (2,)),
        ("column_fixed_abs_sums", (scales,), np.int64, (2,)),
        ("to_fixed_point", (scales,), np.int64, (n_rows, 2)),
    ]:
        expected = np.empty(shape, dtype=dtype)
        getattr(cpu_fixed_point, name)(columns, *args, expected)
        out = backend.xp.full(shape, 99, dtype=dtype)
        getattr(cuda_fixed_point, name)(device_columns, *args, out)
        np.testing.assert_array_equal(backend.to_host(out), expected)
