"""Run by `make plain-install-check` in a virtualenv holding only `pip install .` (no extras):
the CPU backend trains and predicts, device='auto' is the CPU, device='cuda' is a clear error."""

import importlib.util

import numpy as np
from sklearn.datasets import load_iris

import gpuforest

for extra in ("cupy", "numba_cuda"):
    assert importlib.util.find_spec(extra) is None, f"{extra} is installed: this is not a plain install"
X, y = load_iris(return_X_y=True)
model = gpuforest.DecisionTreeClassifier(random_state=0).fit(X, y)
assert model.device_ == "cpu" and model.score(X, y) == 1.0
try:
    gpuforest.DecisionTreeRegressor(device="cuda").fit(X, y.astype(float))
except ValueError as error:
    assert "device='cuda' needs CuPy" in str(error)
else:
    raise SystemExit("device='cuda' did not fail without CuPy")
gpuforest.show_devices()
print("plain install OK:", gpuforest.__file__, "numpy", np.__version__)
