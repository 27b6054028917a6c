"""Apply splits on the GPU: stable partition of each split node's rows (twin of ``kernels.cpu.partitioning``).

One block per node (grid-stride over the nodes). The block walks its node's
rows in chunks of ``block`` rows: each thread reads one row (coalesced along
``sample_indices``) and whether it goes left (``common.goes_left``), a
block-wide exclusive scan of those flags in shared memory gives every row its
place among the chunk's left rows, and with the counts of the chunks before
it each row is written to its final position in ``scratch``: left rows from
``start``, right rows from ``start + n_left``, both in their original order.
Once the node is done, the block copies ``scratch[start:stop]`` back to
``sample_indices``. Nodes must not overlap (as on the CPU).
"""

import functools

import numba
from numba import cuda, types

from ..common import goes_left
from . import jit_kernel

# Threads per block, chosen by the launcher from the mean number of entries per node.
BLOCK_SIZES = (64, 128, 256)
MAX_BLOCKS = 65535


@functools.lru_cache(maxsize=None)
def _apply_splits_kernel(block):
    """The partition kernel for ``block`` threads per block: ``(python_function, kernel)``."""

    def apply_splits_kernel(
        X_binned, sample_indices, scratch, node_start, node_stop, n_left, split_feature, split_bin,
        split_missing_left, missing_bin,
    ):
        scan = cuda.shared.array(block, numba.int32)
        tid = cuda.threadIdx.x
        for node in range(cuda.blockIdx.x, node_start.shape[0], cuda.gridDim.x):
            start = node_start[node]
            stop = node_stop[node]
            feature_idx = split_feature[node]
            threshold_bin = split_bin[node]
            missing_left = split_missing_left[node]
            right_start = start + n_left[node]
            n_left_before = 0  # left rows in the chunks already done
            for chunk_start in range(start, stop, block):
                position = chunk_start + tid
                row = 0
                left = 0
                if position < stop:
                    row = sample_indices[position]
                    if goes_left(X_binned[row, feature_idx], threshold_bin, missing_left, missing_bin):
                        left = 1
                # Inclusive scan of the flags (Hillis-Steele).
                scan[tid] = left
                cuda.syncthreads()
                offset = 1
                while offset < block:
                    total = scan[tid]
                    if tid >= offset:
                        total += scan[tid - offset]
                    cuda.syncthreads()
                    scan[tid] = total
                    cuda.syncthreads()
                    offset *= 2
                left_before = n_left_before + scan[tid] - left  # left rows before this one in the node
                if position < stop:
                    if left == 1:
                        scratch[start + left_before] = row
                    else:
                        scratch[right_start + (position - start - left_before)] = row
                n_left_before += scan[block - 1]
                # Everyone has read the scan (and written scratch) before the next chunk.
                cuda.syncthreads()
            for position in range(start + tid, stop, block):
                sample_indices[position] = scratch[position]

    return apply_splits_kernel, jit_kernel(apply_splits_kernel)


def _block_size(n_entries, n_nodes):
    mean_rows = (n_entries + n_nodes - 1) // n_nodes
    for block in BLOCK_SIZES:
        if mean_rows <= block:
            return block
    return BLOCK_SIZES[-1]


def apply_splits(
    X_binned, sample_indices, scratch, node_start, node_stop, n_left, split_feature, split_bin,
    split_missing_left, missing_bin,
):
    """Partition ``sample_indices[node_start:node_stop]`` of every split node (see ``kernels.cpu``).

    Launch: one block per node (grid-stride over nodes, at most 65535 blocks)
    of 64, 128 or 256 threads, the smallest covering the mean entries per node.
    """
    n_nodes = node_start.shape[0]
    if n_nodes == 0:
        return
    block = _block_size(sample_indices.shape[0], n_nodes)
    kernel = _apply_splits_kernel(block)[1]
    kernel[min(n_nodes, MAX_BLOCKS), block](
        X_binned, sample_indices, scratch, node_start, node_stop, n_left, split_feature, split_bin,
        split_missing_left, missing_bin,
    )


def ptx_specializations():
    """``(name, python_function, argument_types, block_size)`` of every kernel launched here."""
    int64_1d = types.Array(types.int64, 1, "C")
    int32_1d = types.Array(types.int32, 1, "C")
    argument_types = (
        types.Array(types.uint8, 2, "F"), int32_1d, int32_1d, int64_1d, int64_1d, int64_1d, int32_1d, int32_1d,
        types.Array(types.boolean, 1, "C"), types.int64,
    )
    return [
        (f"apply_splits_block{block}", _apply_splits_kernel(block)[0], argument_types, block)
        for block in BLOCK_SIZES
    ]
