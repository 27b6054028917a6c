"""CUDA kernels (numba.cuda), the twins of ``kernels.cpu`` under the same file names.

Every module offers launchers with the names and arguments of the CPU kernels
(output arrays filled in place), over CuPy arrays on a GPU or numpy arrays
under numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``), and a
``ptx_specializations()`` list of the compiled specialisations for the PTX
checks (``benchmarks/ptx_resources.py``). The math is ``kernels.common``'s,
called as device functions.
"""

import inspect

from numba import config, cuda

if config.ENABLE_CUDASIM:
    from numba.cuda.simulator import kernel as _simulator_kernel

    # The simulator hands kernels FakeCUDAArray wrappers, which numba's CPU
    # functions cannot take; kernels call kernels/common.py's njit functions,
    # so hand them the wrapped numpy arrays (copied back after the launch as usual).
    _simulator_kernel.FakeWithinKernelCUDAArray = lambda fake_array: fake_array._ary
else:
    from numba.cuda.cudadrv import nvvm as _nvvm

    _compile_ir = _nvvm.compile_ir

    def _compile_ir_without_contraction(llvmir, **options):
        """NVVM fuses ``a * b + c`` into one FMA by default (``-fma=1``); the CPU
        never does, so the last bit of a gain could differ. ``-fma=0`` keeps the
        GPU's float results identical to the CPU's (unless fastmath is asked for)."""
        if not options.get("fastmath"):
            options.setdefault("fma", False)
        return _compile_ir(llvmir, **options)

    _nvvm.compile_ir = _compile_ir_without_contraction


def jit_kernel(kernel, max_registers=None):
    """``cuda.jit(kernel)`` linked from PTX, without link-time optimisation, launched
    through ``launch.CachedKernel`` on a GPU (``launch.SimulatedKernel`` under the simulator).

    numba-cuda links through nvJitLink with LTO when it can, and LTO fuses
    ``a * b + c`` into one FMA whatever NVVM was told (seen on an H200: gini
    impurities one ulp off the CPU's), so kernels go the PTX way, where
    ``-fma=0`` holds. The simulator and numba-cuda releases before LTO take no
    ``lto`` option. ``max_registers``: ptxas's register cap for the kernel (its
    ``ptx_specializations`` entry names the same, so that the PTX check applies it).
    """
    from .launch import CachedKernel, SimulatedKernel

    if config.ENABLE_CUDASIM:
        return SimulatedKernel(cuda.jit(kernel))

    options = {} if max_registers is None else {"max_registers": max_registers}
    if "lto" in inspect.signature(cuda.jit).parameters:
        return CachedKernel(cuda.jit(kernel, lto=False, **options))
    return CachedKernel(cuda.jit(kernel, **options))
