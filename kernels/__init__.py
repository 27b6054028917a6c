"""Numba kernels of gpuforest, installed as ``gpuforest.kernels``.

``common`` holds the scalar math both backends share (split gain, impurity,
the counter-based hash RNG); ``cpu`` holds the ``njit`` kernels; ``cuda`` holds
their numba.cuda twins under the same file names.
"""
