"""Multi-output y of the trees, forests and extra trees, as scikit-learn's trees have it.

A 2-D ``y`` of shape (n_samples, n_outputs) grows ONE tree whose splits serve every output jointly
(Breiman et al. 1984, section 8.8 for regression; scikit-learn's ``_criterion.pyx``): the impurity of a node
is the mean over the outputs of each output's impurity (variance, Poisson deviance, gini, entropy), so the
best split is the one of the largest decrease summed over the outputs. The statistics of several outputs are
one histogram slot per output and class (``statistics``; ``kernels.common``, "Several outputs"), and
``Tree.value`` is (node_count, n_outputs, max_n_classes).

As scikit-learn: ``n_outputs_`` is ``y.shape[1]`` of a 2-D ``y``; a single column is single-output
(``predict`` gives (n_samples,), a forest warns that a column vector was passed); with several outputs a
classifier's ``classes_`` and ``n_classes_`` are per output, ``predict`` gives (n_samples, n_outputs) and
``predict_proba`` a list of (n_samples, n_classes_k) arrays. Options that follow one target
(``single_output_options``) are refused with several outputs, and the estimators carry scikit-learn's
``multi_output`` target tag only without them (``MultiOutputMixin``).
"""

import warnings

import numpy as np
from sklearn.exceptions import DataConversionWarning

from .categorical import declares_categorical_columns

# Parameters that need one target, each with the test of a value that needs it.
_SINGLE_OUTPUT_OPTIONS = (
    ("monotonic_cst", lambda value: value is not None),
    ("pruning", lambda value: value is not None),
    ("min_split_significance", lambda value: value is not None),
    ("algorithm", lambda value: value != "cart"),
    ("categorical_features", declares_categorical_columns),
    ("voting", lambda value: value != "soft"),
    ("class_weight", lambda value: isinstance(value, str) and value == "balanced_subsample"),
    ("n_estimators", lambda value: isinstance(value, str) and value == "auto"),
    ("criterion", lambda value: value == "misclassification"),  # gpuforest's own: kernels.common keeps it 1-output
)


def single_output_options(estimator):
    """``name=value`` of each of ``estimator``'s parameters that need a single output (``_SINGLE_OUTPUT_OPTIONS``):
    monotonic constraints, categorical features, pruning other than ``ccp_alpha``, ID3 and C4.5, votes other
    than soft ones, per-bootstrap class weights, ``n_estimators="auto"`` (each follows one target) and the
    misclassification criterion."""
    return [
        f"{name}={getattr(estimator, name)!r}"
        for name, needs_one in _SINGLE_OUTPUT_OPTIONS
        if hasattr(estimator, name) and needs_one(getattr(estimator, name))
    ]


class MultiOutputMixin:
    """scikit-learn's multi-output target tag, where the parameters allow several outputs."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = not single_output_options(self)
        return tags


def split_outputs(estimator, y, warn_column=False):
    """``y`` as (n_samples,) with one output, else (n_samples, n_outputs); sets ``n_outputs_``.

    ``warn_column``: a single column warns as scikit-learn's forests do (and as any estimator without the
    ``multi_output`` tag does: options that need one output). Several outputs refuse those options
    (``single_output_options``) with a ValueError.
    """
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        if warn_column or single_output_options(estimator):
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected. Please change the shape of y to "
                "(n_samples,), for example using ravel().",
                DataConversionWarning,
                stacklevel=3,
            )
        y = y[:, 0]
    estimator.n_outputs_ = 1 if y.ndim == 1 else y.shape[1]
    if estimator.n_outputs_ > 1:
        options = single_output_options(estimator)
        if getattr(estimator, "is_categorical_", None) is not None:
            options.append("categorical_features (the frame's category columns)")
        if options:
            raise ValueError(f"{', '.join(options)}: needs a single output; y has {estimator.n_outputs_} outputs.")
    return y


def encode_output_classes(y, encode_classes):
    """``(classes_, n_classes_, y_encoded)`` of classification targets: ``encode_classes`` of ``y`` (n_samples,),
    or per column of ``y`` (n_samples, n_outputs): lists of each output's classes and an int64 array of their
    counts, as scikit-learn's trees, and the class indices (n_samples, n_outputs)."""
    if y.ndim == 1:
        classes, y_encoded = encode_classes(y)
        return classes, classes.shape[0], y_encoded
    encoded = [encode_classes(column) for column in y.T]
    classes = [column_classes for column_classes, _ in encoded]
    n_classes = np.array([column_classes.shape[0] for column_classes in classes], dtype=np.int64)
    return classes, n_classes, np.stack([codes for _, codes in encoded], axis=1)


def encode_output_labels(classes, y, encode_labels):
    """``encode_labels`` of each output's labels in its classes (``encode_output_classes``' ``classes``)."""
    if y.ndim == 1:
        return encode_labels(classes, y)
    return np.stack([encode_labels(output_classes, column) for output_classes, column in zip(classes, y.T)], axis=1)


def output_probabilities(values, n_classes):
    """Class probabilities from node values (n_samples, n_outputs, max_n_classes): (n_samples, n_classes) with one
    output, else a list of (n_samples, n_classes_k) arrays."""
    if values.shape[1] == 1:
        return values[:, 0]
    return [values[:, output, :n_output_classes] for output, n_output_classes in enumerate(n_classes)]


def predicted_classes(probabilities, classes):
    """The most probable class (the first of the largest probability) of each output: (n_samples,) from one
    output's probabilities, else (n_samples, n_outputs) of ``classes[0]``'s dtype, as scikit-learn."""
    if not isinstance(probabilities, list):
        return classes[np.argmax(probabilities, axis=1)]
    predictions = np.zeros((probabilities[0].shape[0], len(classes)), dtype=classes[0].dtype)
    for output, (output_proba, output_classes) in enumerate(zip(probabilities, classes)):
        predictions[:, output] = output_classes[np.argmax(output_proba, axis=1)]
    return predictions


def check_single_output(estimator):
    """Refuse, with a ValueError, an estimator fitted on several outputs (or a ``Tree`` of several) where only one
    is supported."""
    n_outputs = getattr(estimator, "n_outputs_", getattr(estimator, "n_outputs", 1))
    if n_outputs > 1:
        raise ValueError(f"{type(estimator).__name__} was fitted on {n_outputs} outputs; this needs one.")


def mean_output_accuracy(y, y_pred):
    """The mean over the outputs of each output's accuracy, of ``y`` and ``y_pred`` (n_samples, n_outputs)."""
    return float(np.mean(np.asarray(y) == np.asarray(y_pred)))
