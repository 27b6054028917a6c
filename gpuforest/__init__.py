"""gpuforest: tree ensembles on the GPU and the CPU with scikit-learn's API."""

from .decision_tree import DecisionTreeClassifier, DecisionTreeRegressor
from .devices import show_devices
from .export import export_text

__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor", "export_text", "show_devices"]
__version__ = "0.1.0"
