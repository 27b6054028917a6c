"""Information theory of labels, attribute values and distributions.

Two kinds of function, each taking ``base`` (of the logarithm, greater than 1; 2, bits, by
default; ``numpy.e`` for nats):

* functions of **labels**: 1-D arrays of class labels or attribute values of any
  type ``numpy.unique`` sorts, with optional ``sample_weight``; the probabilities
  are the (weighted) frequencies of the values. Counts of a table are labels with
  weights: ``entropy([0, 1], sample_weight=[9, 5])`` is the entropy of 9 against 5;
* functions of **distributions**: 1-D vectors of probabilities or counts on a
  common support, normalised to sum 1.

Formulas (``p`` the frequencies or probabilities, ``log`` to ``base``; C&T is Cover & Thomas):

self_information(p)
    ``I(p) = -log p``. Shannon (1948); C&T section 2.1.
entropy(y)
    ``H(Y) = -sum_y p(y) log p(y)``. Shannon (1948), section 6; C&T section 2.1.
joint_entropy(x, y)
    ``H(X, Y) = -sum_{x, y} p(x, y) log p(x, y)``. C&T section 2.2.
conditional_entropy(y, x)
    ``H(Y | X) = sum_x p(x) H(Y | X = x)``. C&T section 2.2.
mutual_information(x, y)
    ``I(X; Y) = D(p(x, y) || p(x) p(y))``. C&T section 2.3.
cross_entropy(p, q)
    ``H(p, q) = -sum_i p_i log q_i = H(p) + D(p || q)``: the cost of a code for ``q`` on data from
    ``p``. C&T theorem 5.4.3.
kl_divergence(p, q)
    ``D(p || q) = sum_i p_i log(p_i / q_i)``. C&T section 2.3.
js_divergence(p, q)
    ``JS(p, q) = H(m) - (H(p) + H(q)) / 2`` with ``m = (p + q) / 2``; at most ``log 2`` (1 bit).
    Lin (1991).
wasserstein_distance(p, q)
    ``W_1(p, q) = integral |F_p(t) - F_q(t)| dt`` on the real line, ``F`` the cumulative
    distribution functions. Vallender (1973).
information_gain(y, x)
    ``gain(X) = H(Y) - H(Y | X)``. Quinlan (1986), section 4; it equals ``I(X; Y)`` (C&T theorem 2.4.1).
intrinsic_value(x)
    ``IV(X) = -sum_x p(x) log p(x)``, C4.5's split information. Quinlan (1986), section 7.
gain_ratio(y, x)
    ``gain(X) / IV(X)``. Quinlan (1986), section 7; Quinlan (1993), section 2.2.
gini_index(y)
    ``1 - sum_y p(y)^2``. Breiman et al. (1984), ch. 4.
misclassification_error(y)
    ``1 - max_y p(y)``: the error of guessing the majority class. Breiman et al. (1984), ch. 4.

Terms with ``p = 0`` are 0 (``0 log 0 = 0``, C&T section 2.1); a divergence is
infinite where ``q_i = 0 < p_i``. Information gain and mutual information are one
quantity, computed here each from its own formula. An attribute's values are
categories: pass ``x <= threshold`` for a binary test on a continuous attribute
(Quinlan 1993, section 2.4).

References
----------
Shannon, C. E. (1948). A mathematical theory of communication. Bell System Technical Journal, 27.
Cover, T. M., & Thomas, J. A. (2006). Elements of Information Theory, 2nd ed. (C&T).
Quinlan, J. R. (1986). Induction of decision trees. Machine Learning, 1(1), 81-106.
Quinlan, J. R. (1993). C4.5: Programs for Machine Learning. Morgan Kaufmann.
Breiman, L., Friedman, J., Olshen, R., & Stone, C. (1984). Classification and Regression Trees.
Lin, J. (1991). Divergence measures based on the Shannon entropy. IEEE Trans. Inf. Theory, 37(1), 145-151.
Vallender, S. S. (1973). Calculation of the Wasserstein distance between probability distributions on
the line. Theory of Probability and Its Applications, 18(4), 784-786.
"""

from numbers import Real

import numpy as np
from scipy import spatial, stats

__all__ = [
    "self_information", "entropy", "joint_entropy", "conditional_entropy", "mutual_information",
    "cross_entropy", "kl_divergence", "js_divergence", "wasserstein_distance",
    "information_gain", "intrinsic_value", "gain_ratio", "gini_index", "misclassification_error",
]


def _check_base(base):
    """``base`` as a float: finite and above 1 (a base below 1 would make information negative)."""
    if isinstance(base, bool) or not isinstance(base, Real):
        raise TypeError(f"base must be a real number, got {base!r}.")
    if not (np.isfinite(base) and base > 1):
        raise ValueError(f"base must be a finite number greater than 1, got {base!r}.")
    return float(base)


def _check_vector(values, name):
    """``values`` as a non-empty 1-D ndarray."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {values.shape}.")
    if values.shape[0] == 0:
        raise ValueError(f"{name} is empty.")
    return values


def _check_same_length(first, second, first_name, second_name):
    if first.shape[0] != second.shape[0]:
        raise ValueError(
            f"{first_name} and {second_name} have different lengths ({first.shape[0]} and {second.shape[0]})."
        )


def _check_numbers(values, name):
    """``values`` as finite float64, non-negative."""
    if not (np.issubdtype(values.dtype, np.number) or values.dtype == np.bool_):
        raise TypeError(f"{name} must hold numbers, got dtype {values.dtype}.")
    values = values.astype(np.float64)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite; it holds NaN or infinity.")
    if np.any(values < 0):
        raise ValueError(f"{name} must be non-negative; it holds {values.min():g}.")
    return values


def _check_distribution(values, name):
    """A probability or count vector, shape (n,), normalised to sum 1."""
    values = _check_numbers(_check_vector(values, name), name)
    total = values.sum()
    if not total > 0:
        raise ValueError(f"{name} must have a positive sum; every entry is zero.")
    return values / total


def _check_distributions(p, q):
    p, q = _check_distribution(p, "p"), _check_distribution(q, "q")
    _check_same_length(p, q, "p", "q")
    return p, q


def _codes(labels, name):
    """Category codes ``0 .. k-1`` of ``labels``, shape (n_samples,), and ``k``."""
    if labels.dtype.kind == "f" and np.any(np.isnan(labels)):
        raise ValueError(f"{name} holds NaN; missing values have no category.")
    try:
        categories, codes = np.unique(labels, return_inverse=True)
    except TypeError as error:
        raise TypeError(f"{name} must hold values of one sortable type: {error}") from error
    return codes.reshape(-1), categories.shape[0]


def _contingency(label_arrays, names, sample_weight):
    """Joint frequencies of label arrays: ndarray with one axis per array, summing to 1.

    Samples of weight 0 are left out, so every category kept has a positive
    frequency in each margin.
    """
    arrays = [_check_vector(labels, name) for labels, name in zip(label_arrays, names)]
    for labels, name in zip(arrays[1:], names[1:]):
        _check_same_length(arrays[0], labels, names[0], name)
    if sample_weight is None:
        weights = np.ones(arrays[0].shape[0])
    else:
        weights = _check_numbers(_check_vector(sample_weight, "sample_weight"), "sample_weight")
        _check_same_length(arrays[0], weights, names[0], "sample_weight")
        if not weights.sum() > 0:
            raise ValueError("sample_weight must have a positive sum; every weight is zero.")
    kept = weights > 0
    coded = [_codes(labels[kept], name) for labels, name in zip(arrays, names)]
    shape = tuple(n_categories for _, n_categories in coded)
    cells = np.ravel_multi_index(tuple(codes for codes, _ in coded), shape)
    counts = np.bincount(cells, weights=weights[kept], minlength=int(np.prod(shape)))
    return counts.reshape(shape) / counts.sum()


def _conditional_entropy(joint, base):
    """``H(Y | X)`` of joint frequencies of shape (n_x_values, n_y_values): each row's entropy, weighted."""
    return float(joint.sum(axis=1) @ stats.entropy(joint, base=base, axis=1))


def self_information(p, *, base=2):
    """Self-information (surprisal) of events of probability ``p``: ``-log(p)``.

    Parameters
    ----------
    p : float or array_like of shape (n,)
        Probabilities in [0, 1]; probability 0 has infinite self-information.
    base : float, default=2
        Base of the logarithm, greater than 1.

    Returns
    -------
    information : float, or ndarray of shape (n,) for an array ``p``
    """
    base = _check_base(base)
    probabilities = np.asarray(p)
    if probabilities.size == 0:
        raise ValueError("p is empty.")
    probabilities = _check_numbers(probabilities, "p")
    if np.any(probabilities > 1):
        raise ValueError(f"p must be a probability in [0, 1]; it holds {probabilities.max():g}.")
    with np.errstate(divide="ignore"):
        information = -np.log(probabilities) / np.log(base)
    return float(information) if information.ndim == 0 else information


def entropy(labels, *, sample_weight=None, base=2):
    """Entropy ``H(Y)`` of the labels' (weighted) frequencies.

    Parameters
    ----------
    labels : array_like of shape (n_samples,)
        Class labels or attribute values.
    sample_weight : array_like of shape (n_samples,), default=None
        Non-negative weight of each sample (a count, for a table of counts); equal by default.
    base : float, default=2
        Base of the logarithm, greater than 1.

    Returns
    -------
    entropy : float
        Between 0 and ``log(n_values)``.

    Examples
    --------
    >>> from gpuforest.information import entropy
    >>> round(entropy(["yes"] * 9 + ["no"] * 5), 3)
    0.94
    """
    base = _check_base(base)
    frequencies = _contingency([labels], ["labels"], sample_weight)
    return float(stats.entropy(frequencies, base=base))


def joint_entropy(x, y, *, sample_weight=None, base=2):
    """Joint entropy ``H(X, Y)``: the entropy of the pairs ``(x[i], y[i])``.

    Parameters
    ----------
    x : array_like of shape (n_samples,)
        Values of the first variable.
    y : array_like of shape (n_samples,)
        Values of the second variable, paired with ``x`` by position.
    sample_weight : array_like of shape (n_samples,), default=None
        Non-negative weight of each pair.
    base : float, default=2
        Base of the logarithm, greater than 1.

    Returns
    -------
    joint_entropy : float
        At least ``max(H(X), H(Y))``, at most ``H(X) + H(Y)``.
    """
    base = _check_base(base)
    joint = _contingency([x, y], ["x", "y"], sample_weight)
    return float(stats.entropy(joint.ravel(), base=base))


def conditional_entropy(y, x, *, sample_weight=None, base=2):
    """Conditional entropy ``H(Y | X)``: the entropy of ``y`` left once ``x`` is known.

    The expected entropy of ``y`` within the groups of equal ``x`` (Quinlan's
    ``info_X(T)``, the information still needed after a test on ``X``).

    Parameters
    ----------
    y : array_like of shape (n_samples,)
        Target labels.
    x : array_like of shape (n_samples,)
        Values of the attribute conditioned on.
    sample_weight : array_like of shape (n_samples,), default=None
        Non-negative weight of each sample.
    base : float, default=2
        Base of the logarithm, greater than 1.

    Returns
    -------
    conditional_entropy : float
        At most ``H(Y)``.
    """
    base = _check_base(base)
    return _conditional_entropy(_contingency([x, y], ["x", "y"], sample_weight), base)


def mutual_information(x, y, *, sample_weight=None, base=2):
    """Mutual information ``I(X; Y)``: the divergence of the joint from the product of the marginals.

    Parameters
    ----------
    x, y : array_like of shape (n_samples,)
        Values of the two variables, paired by position; the result is symmetric in them.
    sample_weight : array_like of shape (n_samples,), default=None
        Non-negative weight of each pair.
    base : float, default=2
        Base of the logarithm, greater than 1; ``numpy.e`` gives
        ``sklearn.metrics.mutual_info_score``.

    Returns
    -------
    mutual_information : float
        Non-negative, 0 for independent variables.
    """
    base = _check_base(base)
    joint = _contingency([x, y], ["x", "y"], sample_weight)
    independent = np.outer(joint.sum(axis=1), joint.sum(axis=0))
    # I(X; Y) >= 0 (C&T theorem 2.6.3): clip the rounding error of independent variables.
    return max(0.0, float(stats.entropy(joint.ravel(), independent.ravel(), base=base)))


def cross_entropy(p, q, *, base=2):
    """Cross-entropy ``H(p, q)``: the expected code length, on data from ``p``, of a code made for ``q``.

    Parameters
    ----------
    p : array_like of shape (n,)
        Probabilities or counts of the data's distribution; normalised to sum 1.
    q : array_like of shape (n,)
        Probabilities or counts of the model's distribution, on the same support.
    base : float, default=2
        Base of the logarithm, greater than 1; ``numpy.e`` gives the log loss of predicting ``q``.

    Returns
    -------
    cross_entropy : float
        At least ``H(p)``; infinite where ``q`` is 0 and ``p`` is not.
    """
    base = _check_base(base)
    p, q = _check_distributions(p, q)
    return float(stats.entropy(p, base=base) + stats.entropy(p, q, base=base))


def kl_divergence(p, q, *, base=2):
    """Kullback-Leibler divergence (relative entropy) ``D(p || q)``.

    Parameters
    ----------
    p : array_like of shape (n,)
        Probabilities or counts of the true distribution; normalised to sum 1.
    q : array_like of shape (n,)
        Probabilities or counts of the approximating distribution, on the same support.
    base : float, default=2
        Base of the logarithm, greater than 1.

    Returns
    -------
    kl_divergence : float
        Non-negative, not symmetric; infinite where ``q`` is 0 and ``p`` is not.
    """
    base = _check_base(base)
    p, q = _check_distributions(p, q)
    return float(stats.entropy(p, q, base=base))


def js_divergence(p, q, *, base=2):
    """Jensen-Shannon divergence of ``p`` and ``q``.

    The square of ``scipy.spatial.distance.jensenshannon``, which is the
    Jensen-Shannon distance.

    Parameters
    ----------
    p, q : array_like of shape (n,)
        Probabilities or counts on the same support, each normalised to sum 1; their order
        does not matter.
    base : float, default=2
        Base of the logarithm, greater than 1.

    Returns
    -------
    js_divergence : float
        Between 0 and ``log(2)`` (1 bit).
    """
    base = _check_base(base)
    p, q = _check_distributions(p, q)
    return float(spatial.distance.jensenshannon(p, q, base=base) ** 2)


def wasserstein_distance(p, q, *, support=None):
    """First Wasserstein (earth mover's) distance of ``p`` and ``q`` on a common 1-D support.

    The area between the two cumulative distribution functions; in the units of
    ``support``, so there is no ``base``.

    Parameters
    ----------
    p, q : array_like of shape (n,)
        Probabilities or counts; each is normalised to sum 1.
    support : array_like of shape (n,), default=None
        The real value of each entry; ``0, 1, ..., n - 1`` (ordered categories) by default.

    Returns
    -------
    distance : float
    """
    p, q = _check_distributions(p, q)
    if support is None:
        support = np.arange(p.shape[0], dtype=np.float64)
    else:
        support = _check_vector(support, "support")
        if not np.issubdtype(support.dtype, np.number):
            raise TypeError(f"support must hold numbers, got dtype {support.dtype}.")
        if not np.all(np.isfinite(support)):
            raise ValueError("support must be finite; it holds NaN or infinity.")
        _check_same_length(p, support, "p", "support")
    return float(stats.wasserstein_distance(support, support, p, q))


def information_gain(y, x, *, sample_weight=None, base=2):
    """Information gain of a test on attribute ``x`` for target ``y``: ``H(Y) - H(Y | X)``.

    Quinlan's ``gain(A)`` (1986, section 4): the entropy of the classes less
    the expected entropy in the subsets the attribute's values form.

    Parameters
    ----------
    y : array_like of shape (n_samples,)
        Target labels.
    x : array_like of shape (n_samples,)
        The attribute's value (the test's outcome) of each sample.
    sample_weight : array_like of shape (n_samples,), default=None
        Non-negative weight of each sample (C4.5's fractional instances).
    base : float, default=2
        Base of the logarithm, greater than 1.

    Returns
    -------
    gain : float
        Between 0 and ``H(Y)``.

    Examples
    --------
    >>> from gpuforest.datasets import load_weather
    >>> from gpuforest.information import information_gain
    >>> weather = load_weather()
    >>> round(information_gain(weather.target, weather.data[:, 0]), 3)  # Outlook
    0.247
    """
    base = _check_base(base)
    joint = _contingency([x, y], ["x", "y"], sample_weight)
    class_entropy = stats.entropy(joint.sum(axis=0), base=base)
    # The gain is non-negative (C&T theorem 2.6.5): clip the rounding error of a useless attribute.
    return max(0.0, float(class_entropy - _conditional_entropy(joint, base)))


def intrinsic_value(x, *, sample_weight=None, base=2):
    """Intrinsic value (C4.5's split information) of a test: the entropy of its outcomes ``x``.

    Parameters
    ----------
    x : array_like of shape (n_samples,)
        The attribute's value (the test's outcome) of each sample.
    sample_weight : array_like of shape (n_samples,), default=None
        Non-negative weight of each sample.
    base : float, default=2
        Base of the logarithm, greater than 1.

    Returns
    -------
    intrinsic_value : float
        ``log(k)`` for a test with ``k`` equally frequent outcomes.
    """
    return entropy(x, sample_weight=sample_weight, base=base)


def gain_ratio(y, x, *, sample_weight=None, base=2):
    """Gain ratio of a test on attribute ``x``: information gain over intrinsic value.

    Parameters
    ----------
    y : array_like of shape (n_samples,)
        Target labels.
    x : array_like of shape (n_samples,)
        The attribute's value (the test's outcome) of each sample.
    sample_weight : array_like of shape (n_samples,), default=None
        Non-negative weight of each sample.
    base : float, default=2
        Cancels out of the ratio; accepted as by the other functions.

    Returns
    -------
    gain_ratio : float
        NaN when ``x`` takes a single value: its gain and split information are
        both 0 and the ratio is undefined (C4.5 never chooses such a test).
    """
    gain = information_gain(y, x, sample_weight=sample_weight, base=base)
    split_information = intrinsic_value(x, sample_weight=sample_weight, base=base)
    return gain / split_information if split_information > 0 else float("nan")


def gini_index(labels, *, sample_weight=None):
    """Gini index (impurity) of the labels' frequencies: ``1 - sum_y p(y)^2``.

    Parameters
    ----------
    labels : array_like of shape (n_samples,)
        Class labels of the samples in a node.
    sample_weight : array_like of shape (n_samples,), default=None
        Non-negative weight of each sample.

    Returns
    -------
    gini : float
        The probability that two samples drawn at random (by weight, with replacement)
        have different labels; between 0 and ``1 - 1/k`` for ``k`` classes.
    """
    frequencies = _contingency([labels], ["labels"], sample_weight)
    return float(1.0 - frequencies @ frequencies)


def misclassification_error(labels, *, sample_weight=None):
    """Misclassification error of a majority-class guess: ``1 - max_y p(y)``.

    Parameters
    ----------
    labels : array_like of shape (n_samples,)
        Class labels of the samples in a node, which predicts their most frequent one.
    sample_weight : array_like of shape (n_samples,), default=None
        Non-negative weight of each sample.

    Returns
    -------
    error : float
        The (weighted) fraction of samples outside the most frequent class.
    """
    frequencies = _contingency([labels], ["labels"], sample_weight)
    return float(1.0 - frequencies.max())
