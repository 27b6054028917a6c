"""CPU kernels: numba ``njit(parallel=True, cache=True)`` over plain numpy arrays."""
