"""gpuforest: tree ensembles on the GPU and the CPU with scikit-learn's API."""

from .decision_tree import DecisionTreeClassifier, DecisionTreeRegressor
from .export import export_text

__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor", "export_text"]
__version__ = "0.1.0"
