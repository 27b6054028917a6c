"""Exact TreeSHAP of every row on the GPU (twin of ``kernels.cpu.contributions``).

One thread per row (grid-stride) walks every path with the CPU kernel's code
(``common.add_path_contributions``, ``common.add_path_interactions``); its scratch
is local memory for paths of at most ``MAX_PATH_ELEMENTS`` distinct features.
"""

from numba import cuda, types

from ..common import add_path_contributions, add_path_interactions
from . import jit_kernel
from .launch import BLOCK_SIZE, elementwise_config

MAX_PATH_ELEMENTS = 64  # local scratch per thread: 2 x 65 float64
# A local array's size must be a constant, not an expression numba types as int64.
WEIGHT_SLOTS = MAX_PATH_ELEMENTS + 1
# ptxas's register cap: at 64, 4 blocks of 256 threads per SM (50% occupancy); uncapped they take 110-114.
MAX_REGISTERS = 64


def _path_contributions_kernel(X, split_value, node_info, category_bitset, split_start, split_node, split_rank,
                               split_element, element_start, element_feature, element_zero, path_value, out):
    one = cuda.local.array(MAX_PATH_ELEMENTS, types.float64)
    weights = cuda.local.array(WEIGHT_SLOTS, types.float64)
    for row in range(cuda.grid(1), X.shape[0], cuda.gridsize(1)):
        add_path_contributions(
            X, row, split_value, node_info, category_bitset, split_start, split_node, split_rank, split_element,
            element_start, element_feature, element_zero, path_value, one, weights, out[row],
        )


def _path_interactions_kernel(X, split_value, node_info, category_bitset, split_start, split_node, split_rank,
                              split_element, element_start, element_feature, element_zero, path_value, out):
    one = cuda.local.array(MAX_PATH_ELEMENTS, types.float64)
    weights = cuda.local.array(WEIGHT_SLOTS, types.float64)
    for row in range(cuda.grid(1), X.shape[0], cuda.gridsize(1)):
        add_path_interactions(
            X, row, split_value, node_info, category_bitset, split_start, split_node, split_rank, split_element,
            element_start, element_feature, element_zero, path_value, one, weights, out[row],
        )


_path_contributions = jit_kernel(_path_contributions_kernel, max_registers=MAX_REGISTERS)
_path_interactions = jit_kernel(_path_interactions_kernel, max_registers=MAX_REGISTERS)


def _launch(kernel, X, element_start, args):
    if X.shape[0] == 0:
        return
    # CuPy's max takes no ``initial``: an empty forest has no path.
    longest = int((element_start[1:] - element_start[:-1]).max()) if element_start.shape[0] > 1 else 0
    if longest > MAX_PATH_ELEMENTS:
        raise ValueError(
            f"A path has {longest} distinct features; the CUDA TreeSHAP kernels take at most {MAX_PATH_ELEMENTS}."
        )
    blocks, threads = elementwise_config(X.shape[0])
    kernel[blocks, threads](*args)


def path_contributions(X, split_value, node_info, category_bitset, split_start, split_node, split_rank, split_element,
                       element_start, element_feature, element_zero, path_value, out):
    """Add the SHAP values of every row to ``out`` (see ``kernels.cpu.contributions``).

    Launch: one thread per row, blocks of up to 256 threads (grid-stride).
    """
    _launch(_path_contributions, X, element_start, (
        X, split_value, node_info, category_bitset, split_start, split_node, split_rank, split_element,
        element_start, element_feature, element_zero, path_value, out,
    ))


def path_interactions(X, split_value, node_info, category_bitset, split_start, split_node, split_rank, split_element,
                      element_start, element_feature, element_zero, path_value, out):
    """Add the SHAP interaction values off the diagonal of every row to ``out`` (see
    ``kernels.cpu.contributions``). Launch as ``path_contributions``."""
    _launch(_path_interactions, X, element_start, (
        X, split_value, node_info, category_bitset, split_start, split_node, split_rank, split_element,
        element_start, element_feature, element_zero, path_value, out,
    ))


def ptx_specializations():
    """``(name, python_function, argument_types, block_size, max_registers)`` of every kernel launched here."""
    int64_vector, float64_vector = types.Array(types.int64, 1, "C"), types.Array(types.float64, 1, "C")
    path_arrays = (int64_vector,) * 6 + (float64_vector, types.Array(types.float64, 2, "C"))
    rows_and_trees = (
        types.Array(types.float32, 2, "C"), float64_vector, int64_vector, types.Array(types.uint32, 2, "C"),
    )
    return [
        ("path_contributions", _path_contributions_kernel,
         (*rows_and_trees, *path_arrays, types.Array(types.float64, 3, "C")), BLOCK_SIZE, MAX_REGISTERS),
        ("path_interactions", _path_interactions_kernel,
         (*rows_and_trees, *path_arrays, types.Array(types.float64, 4, "C")), BLOCK_SIZE, MAX_REGISTERS),
    ]
