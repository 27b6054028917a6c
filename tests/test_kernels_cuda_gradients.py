"""Kernel tier, kernels/cuda/gradients.py: the gradients and hessians of every boosting loss against the CPU's, bit
for bit."""

import numpy as np
import pytest

from gpuforest.backend import get_backend

try:
    from .kernel_problems import LOSSES, PARAMETER, loss_data
except ImportError:
    from kernel_problems import LOSSES, PARAMETER, loss_data


@pytest.mark.parametrize("name", LOSSES)
def test_cuda_gradients_equal_cpu_gradients(name):
    y, raw, weight = loss_data(name, n_samples=40, seed=1)
    cpu = get_backend("cpu").loss_gradients(LOSSES[name], PARAMETER.get(name, 0.0), y, raw, weight)
    cuda = get_backend("cuda").loss_gradients(LOSSES[name], PARAMETER.get(name, 0.0), y, raw, weight)
    for cpu_array, cuda_array in zip(cpu, cuda):
        np.testing.assert_array_equal(cpu_array, cuda_array)
