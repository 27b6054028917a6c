"""Test set-up: CUDA kernels run under numba's simulator unless a real GPU is asked for.

``NUMBA_ENABLE_CUDASIM`` must be set before numba is first imported, hence here.
Set ``GPUFOREST_REAL_CUDA=1`` to run against a real device (the ``gpu`` tests).
"""

import os
import sys

if os.environ.get("GPUFOREST_REAL_CUDA") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    # The simulator runs each CUDA thread as a Python thread that mostly waits at
    # barriers: switching threads more often makes simulated launches faster.
    sys.setswitchinterval(1e-4)
