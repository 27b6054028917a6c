"""What a backend does to the device: kernel launches, copies each way, synchronisations, compilations.

Opt-in (``Backend.counting``): while no counting is active, ``ACTIVE.counts``
is None and each counting site costs one attribute test.
"""

from dataclasses import dataclass
from types import SimpleNamespace


@dataclass
class DeviceCounts:
    """Counts of one ``Backend.counting`` block.

    Attributes
    ----------
    launches : int
        CUDA kernel launches (the ``jit_kernel`` kernels).
    host_to_device : int
        Copies from host memory to the device (a packed copy of several arrays counts once).
    device_to_host : int
        Copies from the device to host memory, each a synchronisation: explicit
        ones (``to_host``) and, under numba's simulator, a device scalar turned
        into a Python number (``bool``, ``int``, ``float``, ``item``), as CuPy would sync.
    compilations : int
        Kernel specialisations compiled: the first launch of a kernel with new argument
        types (under numba's simulator, which compiles nothing, those a GPU would compile).
    """

    launches: int = 0
    host_to_device: int = 0
    device_to_host: int = 0
    compilations: int = 0


ACTIVE = SimpleNamespace(counts=None)


def count(event, n=1):
    """Add ``n`` to ``event`` (a ``DeviceCounts`` field) of the active counts, if any."""
    counts = ACTIVE.counts
    if counts is not None:
        setattr(counts, event, getattr(counts, event) + n)
