"""Gradients and hessians of the boosting losses on the GPU (twin of ``kernels.cpu.gradients``).

One thread per row (grid-stride), calling ``common.row_gradients`` as a device function.
"""

from numba import cuda, types

from ..common import row_gradients
from . import jit_kernel
from .launch import BLOCK_SIZE, elementwise_config


def _loss_gradients_kernel(loss, parameter, y, raw, sample_weight, out_gradients, out_hessians):
    for row in range(cuda.grid(1), y.shape[0], cuda.gridsize(1)):
        row_gradients(loss, parameter, y[row], raw[row], sample_weight[row], out_gradients[row], out_hessians[row])


_loss_gradients = jit_kernel(_loss_gradients_kernel)


def loss_gradients(loss, parameter, y, raw, sample_weight, out_gradients, out_hessians):
    """Weighted gradient and hessian of every row (see ``kernels.cpu.gradients``).

    Launch: one thread per row, blocks of up to 256 threads.
    """
    if y.shape[0] == 0:
        return
    blocks, threads = elementwise_config(y.shape[0])
    _loss_gradients[blocks, threads](loss, parameter, y, raw, sample_weight, out_gradients, out_hessians)


def ptx_specializations():
    """``(name, python_function, argument_types, block_size)`` of every kernel launched here."""
    float64_1d = types.Array(types.float64, 1, "C")
    float64_2d = types.Array(types.float64, 2, "C")
    return [
        (
            "loss_gradients",
            _loss_gradients_kernel,
            (types.int64, types.float64, float64_1d, float64_2d, float64_1d, float64_2d, float64_2d),
            BLOCK_SIZE,
        ),
    ]
