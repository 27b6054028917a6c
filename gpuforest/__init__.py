"""gpuforest: tree ensembles on the GPU and the CPU with scikit-learn's API."""

from . import datasets, information
from .adaboost import AdaBoostClassifier, AdaBoostRegressor
from .bagging import BaggingClassifier, BaggingRegressor
from .boosting import GradientBoostingClassifier, GradientBoostingRegressor
from .decision_tree import DecisionTreeClassifier, DecisionTreeRegressor
from .devices import show_devices
from .export import export_graphviz, export_rules, export_text, plot_tree
from .forest import ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier, RandomForestRegressor
from .progress import Checkpoint, StopTraining, TrainingCallback
from .voting import VotingClassifier, VotingRegressor

__all__ = [
    "DecisionTreeClassifier", "DecisionTreeRegressor", "export_text", "show_devices",
    "export_graphviz", "plot_tree", "export_rules",
    "VotingClassifier", "VotingRegressor", "RandomForestClassifier", "RandomForestRegressor",
    "ExtraTreesClassifier", "ExtraTreesRegressor", "BaggingClassifier", "BaggingRegressor",
    "GradientBoostingClassifier", "GradientBoostingRegressor", "AdaBoostClassifier", "AdaBoostRegressor",
    "datasets", "information",
    "Checkpoint", "StopTraining", "TrainingCallback",
]
__version__ = "0.1.0"
