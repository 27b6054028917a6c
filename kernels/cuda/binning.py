"""Map raw feature values to uint8 bins on the GPU (twin of ``kernels.cpu.binning``).

``X`` is row-major float64 or float32 and ``X_binned`` column-major uint8, so the kernel
transposes through shared memory: a block of 32 x 8 threads reads a tile of
32 rows x 32 features along the rows of ``X`` (consecutive threads, consecutive
features), bins each value with ``common.bin_of_value`` and writes the tile
along the columns of ``X_binned`` (consecutive threads, consecutive rows), so
both the reads and the writes are coalesced. Tiles are visited by a
grid-stride loop.
"""

import numba
from numba import cuda, types

from ..common import bin_of_value
from . import jit_kernel

TILE = 32  # rows and features per tile
TILE_PADDED = TILE + 1  # one extra column avoids shared-memory bank conflicts
BLOCK_ROWS = 8  # threadIdx.y extent; each thread handles TILE // BLOCK_ROWS values
BLOCK = (TILE, BLOCK_ROWS)
BLOCK_SIZE = TILE * BLOCK_ROWS
MAX_BLOCKS = 65535


def _map_to_bins_kernel(X, bin_thresholds, n_thresholds, missing_bin, X_binned):
    tile = cuda.shared.array((TILE, TILE_PADDED), numba.int32)
    n_samples, n_features = X.shape
    n_feature_tiles = (n_features + TILE - 1) // TILE
    n_tiles = n_feature_tiles * ((n_samples + TILE - 1) // TILE)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    for tile_idx in range(cuda.blockIdx.x, n_tiles, cuda.gridDim.x):
        first_feature = (tile_idx % n_feature_tiles) * TILE
        first_row = (tile_idx // n_feature_tiles) * TILE
        # Read along the rows of X: consecutive threads, consecutive features.
        feature_idx = first_feature + tx
        if feature_idx < n_features:
            thresholds = bin_thresholds[feature_idx]
            count = n_thresholds[feature_idx]
            for k in range(ty, TILE, BLOCK_ROWS):
                row = first_row + k
                if row < n_samples:
                    tile[k, tx] = bin_of_value(thresholds, count, X[row, feature_idx], missing_bin)
        cuda.syncthreads()
        # Write along the columns of X_binned: consecutive threads, consecutive rows.
        row = first_row + tx
        if row < n_samples:
            for k in range(ty, TILE, BLOCK_ROWS):
                feature_idx = first_feature + k
                if feature_idx < n_features:
                    X_binned[row, feature_idx] = tile[tx, k]
        cuda.syncthreads()


_map_to_bins = jit_kernel(_map_to_bins_kernel)


def map_to_bins(X, bin_thresholds, n_thresholds, missing_bin, X_binned):
    """Fill ``X_binned`` with the bin of every value of ``X`` (see ``kernels.cpu.binning``).

    Launch: blocks of 32 x 8 threads, one 32 x 32 tile per block and
    iteration, at most 65535 blocks (grid-stride over tiles).
    """
    n_samples, n_features = X.shape
    n_tiles = ((n_samples + TILE - 1) // TILE) * ((n_features + TILE - 1) // TILE)
    if n_tiles == 0:
        return
    _map_to_bins[min(n_tiles, MAX_BLOCKS), BLOCK](X, bin_thresholds, n_thresholds, missing_bin, X_binned)


def ptx_specializations():
    """``(name, python_function, argument_types, block_size)`` of every kernel launched here."""
    return [
        (
            "map_to_bins",
            _map_to_bins_kernel,
            (
                types.Array(types.float32, 2, "C"),
                types.Array(types.float64, 2, "C"),
                types.Array(types.int32, 1, "C"),
                types.int64,
                types.Array(types.uint8, 2, "F"),
            ),
            BLOCK_SIZE,
        )
    ]
