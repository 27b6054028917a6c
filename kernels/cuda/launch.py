"""Launch configuration shared by the one-thread-per-item CUDA kernels."""

BLOCK_SIZE = 256
MAX_BLOCKS = 65535  # kernels grid-stride beyond this many blocks


def elementwise_config(n_items):
    """``(blocks, threads)`` for one thread per item: whole warps, up to ``BLOCK_SIZE`` threads."""
    threads = min(BLOCK_SIZE, (n_items + 31) // 32 * 32)
    return min((n_items + threads - 1) // threads, MAX_BLOCKS), threads
