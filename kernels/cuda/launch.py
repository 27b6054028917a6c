"""Launch configuration shared by the one-thread-per-item CUDA kernels; ``CachedKernel`` and ``SimulatedKernel``."""

import functools
import sys

import numpy as np
from numba import config, typeof, types

from ..counting import count

if not config.ENABLE_CUDASIM:
    from numba.cuda import dispatcher as _dispatcher
    from numba.cuda.cudadrv import driver as _driver

BLOCK_SIZE = 256
MAX_BLOCKS = 65535  # kernels grid-stride beyond this many blocks


def elementwise_config(n_items):
    """``(blocks, threads)`` for one thread per item: whole warps, up to ``BLOCK_SIZE`` threads."""
    threads = min(BLOCK_SIZE, (n_items + 31) // 32 * 32)
    return min((n_items + threads - 1) // threads, MAX_BLOCKS), threads


class CachedKernel:
    """A ``cuda.jit`` kernel launched through its compiled specialisation.

    numba-cuda types every argument anew at each launch (about 20 us per CuPy
    array). Here a specialisation is looked up by a cheap key of the arguments
    (each array's dtype, dimensions and contiguity; each scalar's type), and CuPy
    arrays are marshalled from their own attributes, as numba lays them out. The
    first launch of a key goes through numba, which compiles; arguments of other
    kinds (host arrays) always do.
    """

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self.py_func = dispatcher.py_func
        self._specialisations = {}

    def __getitem__(self, launch_config):
        count("launches")
        griddim, blockdim = (
            tuple(map(int, dims)) if isinstance(dims, tuple) else int(dims) for dims in launch_config
        )
        return functools.partial(self._launch, griddim, blockdim)

    def _launch(self, griddim, blockdim, *args):
        key = tuple(map(_argument_key, args))
        specialisation = self._specialisations.get(key)
        if specialisation is None:
            n_compiled = len(self.dispatcher.overloads)
            self.dispatcher[griddim, blockdim](*args)
            if len(self.dispatcher.overloads) > n_compiled:
                count("compilations")
            # numba may have run an overload of other types (a conversion): then its path stays.
            kernel = self.dispatcher.overloads.get(tuple(map(self.dispatcher.typeof_pyval, args)))
            if None not in key and kernel is not None:
                self._specialisations[key] = kernel, kernel._codelibrary.get_cufunc().kernel
            return
        kernel, function = specialisation
        kernel_args = []
        for argument_type, value in zip(kernel.argument_types, args):
            if isinstance(argument_type, types.Array):
                # numba's array layout: meminfo, parent, size, itemsize, data, shape, strides.
                kernel_args += (0, 0, value.size, value.itemsize, value.data.ptr, *value.shape, *value.strides)
            else:
                kernel._prepare_args(argument_type, value, None, None, kernel_args)
        config = _dispatcher.LaunchConfig(grid=griddim, block=blockdim, shmem_size=0)
        _dispatcher.launch(_default_stream(), config, function, *kernel_args)


class SimulatedKernel:
    """A kernel of numba's CUDA simulator whose launches are counted (``Backend.counting``).

    The simulator runs kernels in Python and passes any argument; a GPU's numba-cuda
    marshals only arrays, numbers and tuples of them, and raises ``NotImplementedError``
    at a None. Launches here refuse None alike, so that simulator tests catch it. The
    first launch of new argument types counts as a compilation, as it would on a GPU.
    """

    def __init__(self, kernel):
        self.kernel = kernel
        self._specialisations = set()

    def __getitem__(self, launch_config):
        count("launches")
        return functools.partial(self._launch, self.kernel[launch_config])

    def _launch(self, configured, *args):
        if any(_holds_none(value) for value in args):
            raise TypeError(f"{self.kernel.py_func.__name__}: a None argument cannot be passed to a GPU kernel")
        key = tuple(map(_numba_type, args))
        if key not in self._specialisations:
            self._specialisations.add(key)
            count("compilations")
        return configured(*args)

    def __getattr__(self, name):
        return getattr(self.kernel, name)


def _argument_key(value):
    """What numba's type of a kernel argument depends on; None: not a CuPy array, a scalar or a tuple of them."""
    if isinstance(value, (bool, int, float, np.generic)):
        return type(value)
    if isinstance(value, tuple):
        keys = tuple(map(_argument_key, value))
        return None if None in keys else keys
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(value, cupy.ndarray):
        flags = value.flags
        return value.dtype, value.ndim, flags.c_contiguous, flags.f_contiguous
    return None


def _numba_type(value):
    """The numba type of a kernel argument, as a GPU's numba-cuda would type it."""
    if isinstance(value, tuple):
        return tuple(map(_numba_type, value))
    return typeof(value)


def _holds_none(value):
    return value is None or (isinstance(value, tuple) and any(map(_holds_none, value)))


@functools.cache
def _default_stream():
    return _driver._to_core_stream(0)
