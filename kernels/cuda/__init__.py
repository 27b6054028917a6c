"""CUDA kernels (numba.cuda), the twins of ``kernels.cpu`` under the same file names.

Empty until the CUDA backend lands; see docs/ARCHITECTURE.md.
"""
