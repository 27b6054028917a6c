"""gpuforest: tree ensembles on the GPU and the CPU with scikit-learn's API."""

from . import datasets, information, prebuilt, resampling
from .adaboost import AdaBoostClassifier, AdaBoostRegressor
from .bagging import BaggingClassifier, BaggingRegressor
from .compilation import install_cache_lock, install_first_compile_notice
from .boosting import GradientBoostingClassifier, GradientBoostingRegressor
from .decision_tree import DecisionTreeClassifier, DecisionTreeRegressor
from .devices import show_devices
from .export import export_graphviz, export_rules, export_text, plot_tree, trees_to_dataframe
from .forest import ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier, RandomForestRegressor
from .model_io import load_model
from .partial_dependence import register_recursion
from .plotting import plot_benchmark, plot_importance, plot_learning_curve, plot_margins
from .progress import Checkpoint, StopTraining, TrainingCallback
from .voting import VotingClassifier, VotingRegressor

register_recursion(
    DecisionTreeClassifier, DecisionTreeRegressor, RandomForestClassifier, RandomForestRegressor, ExtraTreesClassifier,
    ExtraTreesRegressor, GradientBoostingClassifier, GradientBoostingRegressor,
)

__all__ = [
    "DecisionTreeClassifier", "DecisionTreeRegressor", "export_text", "show_devices",
    "export_graphviz", "plot_tree", "export_rules", "trees_to_dataframe",
    "plot_importance", "plot_learning_curve", "plot_benchmark", "plot_margins",
    "VotingClassifier", "VotingRegressor", "RandomForestClassifier", "RandomForestRegressor",
    "ExtraTreesClassifier", "ExtraTreesRegressor", "BaggingClassifier", "BaggingRegressor",
    "GradientBoostingClassifier", "GradientBoostingRegressor", "AdaBoostClassifier", "AdaBoostRegressor",
    "datasets", "information", "resampling", "load_model",
    "Checkpoint", "StopTraining", "TrainingCallback",
]
__version__ = "0.1.0"

install_cache_lock()
install_first_compile_notice()
prebuilt.install()
