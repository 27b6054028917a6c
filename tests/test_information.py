"""gpuforest.information against Quinlan's worked example, naive formulas, scipy and scikit-learn."""

import math
from collections import defaultdict

import numpy as np
import pytest
from sklearn.metrics import log_loss, mutual_info_score
from sklearn.tree import DecisionTreeClassifier

from gpuforest import information
from gpuforest.datasets import load_weather


def naive_entropy(weights_by_value, base=2.0):
    """``-sum p log p`` of a dict value -> total weight, term by term."""
    total = sum(weights_by_value.values())
    return -sum(w / total * math.log(w / total, base) for w in weights_by_value.values() if w > 0)


def totals(*columns, weights):
    """Total weight of each value (tuple of values) of the zipped columns."""
    result = defaultdict(float)
    for key, weight in zip(zip(*columns), weights):
        result[key] += weight
    return result


def naive_conditional_entropy(y, x, weights, base=2.0):
    """``sum_x p(x) H(Y | X = x)`` by grouping the rows of each ``x`` (Quinlan's ``info_X(T)``)."""
    total = sum(weights)
    groups = defaultdict(lambda: defaultdict(float))
    for y_value, x_value, weight in zip(y, x, weights):
        groups[x_value][y_value] += weight
    return sum(sum(group.values()) / total * naive_entropy(group, base) for group in groups.values())


def random_labels(seed, n_samples=40):
    rng = np.random.default_rng(seed)
    x = rng.choice(["a", "b", "c", "d"], size=n_samples)
    y = rng.integers(0, 3, size=n_samples) + (x == "a")
    weights = rng.uniform(0.0, 3.0, size=n_samples)
    return x, y, weights


def weather_columns():
    weather = load_weather()
    return weather.target, dict(zip(weather.feature_names, weather.data.T))


def test_weather_entropy_and_gains_are_quinlans():
    """Quinlan (1986), section 4: info 0.940 bits; gains 0.246 (0.2467), 0.029, 0.151 (0.1518), 0.048."""
    play, attributes = weather_columns()
    assert round(information.entropy(play), 3) == 0.940
    gains = {name: round(information.information_gain(play, x), 3) for name, x in attributes.items()}
    assert gains == {"outlook": 0.247, "temperature": 0.029, "humidity": 0.152, "windy": 0.048}


def test_weather_gain_ratios_follow_the_books_definitions():
    """Quinlan (1993), section 2.2: split info of Outlook 1.577 bits, gain ratio 0.156; the others by
    the same definition, gain over split information, from class counts read off the table."""
    play, attributes = weather_columns()
    assert round(information.intrinsic_value(attributes["outlook"]), 3) == 1.577
    # (Play yes, Play no) for each value of each attribute, counted from Quinlan (1986), Table 1.
    counts = {
        "outlook": [(2, 3), (4, 0), (3, 2)], "temperature": [(2, 2), (4, 2), (3, 1)],
        "humidity": [(3, 4), (6, 1)], "windy": [(6, 2), (3, 3)],
    }
    ratios = {}
    for name, branches in counts.items():
        info = naive_entropy({"yes": 9, "no": 5})
        info_x = sum((yes + no) / 14 * naive_entropy({"yes": yes, "no": no}) for yes, no in branches)
        split_info = naive_entropy(dict(enumerate(yes + no for yes, no in branches)))
        ratios[name] = (info - info_x) / split_info
        assert information.gain_ratio(play, attributes[name]) == pytest.approx(ratios[name], abs=1e-12)
    assert {name: round(ratio, 3) for name, ratio in ratios.items()} == {
        "outlook": 0.156, "temperature": 0.019, "humidity": 0.152, "windy": 0.049,
    }


@pytest.mark.parametrize("base", [2, math.e, 10])
@pytest.mark.parametrize("seed", [0, 1])
def test_label_functions_match_naive_formulas(seed, base):
    x, y, weights = random_labels(seed)
    kwargs = dict(sample_weight=weights, base=base)
    h_y = naive_entropy(totals(y, weights=weights), base)
    h_x = naive_entropy(totals(x, weights=weights), base)
    h_xy = naive_entropy(totals(x, y, weights=weights), base)
    h_y_given_x = naive_conditional_entropy(y, x, weights, base)
    assert information.entropy(y, **kwargs) == pytest.approx(h_y, rel=1e-12)
    assert information.intrinsic_value(x, **kwargs) == pytest.approx(h_x, rel=1e-12)
    assert information.joint_entropy(x, y, **kwargs) == pytest.approx(h_xy, rel=1e-12)
    assert information.conditional_entropy(y, x, **kwargs) == pytest.approx(h_y_given_x, rel=1e-12)
    assert information.information_gain(y, x, **kwargs) == pytest.approx(h_y - h_y_given_x, rel=1e-12)
    assert information.gain_ratio(y, x, **kwargs) == pytest.approx((h_y - h_y_given_x) / h_x, rel=1e-12)
    frequencies = np.array(list(totals(y, weights=weights).values())) / weights.sum()
    assert information.gini_index(y, sample_weight=weights) == pytest.approx(1 - np.sum(frequencies**2))
    assert information.misclassification_error(y, sample_weight=weights) == pytest.approx(1 - frequencies.max())


@pytest.mark.parametrize("seed", [0, 1])
def test_identities(seed):
    """C&T theorem 2.4.1 and the chain rule (theorem 2.2.1)."""
    x, y, weights = random_labels(seed)
    h_x, h_y = information.entropy(x, sample_weight=weights), information.entropy(y, sample_weight=weights)
    h_xy = information.joint_entropy(x, y, sample_weight=weights)
    mutual = information.mutual_information(x, y, sample_weight=weights)
    assert mutual == pytest.approx(h_x + h_y - h_xy, rel=1e-12)
    assert information.conditional_entropy(y, x, sample_weight=weights) == pytest.approx(h_xy - h_x, rel=1e-12)
    assert information.information_gain(y, x, sample_weight=weights) == pytest.approx(mutual, rel=1e-12)
    assert information.mutual_information(y, x, sample_weight=weights) == pytest.approx(mutual, rel=1e-12)


def test_mutual_information_is_scikit_learns_in_nats():
    x, y, _ = random_labels(2)
    assert information.mutual_information(x, y, base=math.e) == pytest.approx(mutual_info_score(x, y), rel=1e-12)
    assert information.mutual_information(x, y) == pytest.approx(mutual_info_score(x, y) / math.log(2), rel=1e-12)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_impurities_and_gain_match_a_scikit_learn_stump(criterion):
    """A stump on a binary attribute: its root impurity, and the impurity decrease (the gain)."""
    x, y, weights = random_labels(3)
    is_a = (x == "a").astype(np.float64)
    stump = DecisionTreeClassifier(criterion=criterion, max_depth=1).fit(is_a[:, None], y, sample_weight=weights)
    node_weights = stump.tree_.weighted_n_node_samples
    impurity = stump.tree_.impurity
    if criterion == "gini":
        assert information.gini_index(y, sample_weight=weights) == pytest.approx(impurity[0], rel=1e-12)
    else:
        assert information.entropy(y, sample_weight=weights) == pytest.approx(impurity[0], rel=1e-12)
        children_impurity = (node_weights[1:] @ impurity[1:]) / node_weights[0]
        gain = information.information_gain(y, is_a, sample_weight=weights)
        assert gain == pytest.approx(impurity[0] - children_impurity, rel=1e-12)


def test_counts_as_weights_equal_repeated_labels():
    assert information.entropy([0, 1], sample_weight=[9, 5]) == pytest.approx(
        information.entropy([0] * 9 + [1] * 5), rel=1e-15
    )
    x, y, weights = random_labels(4)
    weights[::3] = 0.0
    kept = weights > 0
    assert information.information_gain(y, x, sample_weight=weights) == pytest.approx(
        information.information_gain(y[kept], x[kept], sample_weight=weights[kept]), rel=1e-12
    )


DISTRIBUTIONS = [
    (np.array([0.1, 0.4, 0.5]), np.array([0.3, 0.3, 0.4])),
    (np.array([2.0, 0.0, 6.0, 2.0]), np.array([1.0, 1.0, 1.0, 1.0])),  # counts, normalised
]


def naive_h(p, base):
    return -sum(pi * math.log(pi, base) for pi in p if pi > 0)


@pytest.mark.parametrize("base", [2, math.e])
@pytest.mark.parametrize("p, q", DISTRIBUTIONS)
def test_divergences_match_naive_formulas(p, q, base):
    p_normal, q_normal = p / p.sum(), q / q.sum()
    kl = sum(pi * math.log(pi / qi, base) for pi, qi in zip(p_normal, q_normal) if pi > 0)
    cross = -sum(pi * math.log(qi, base) for pi, qi in zip(p_normal, q_normal) if pi > 0)
    m = (p_normal + q_normal) / 2
    js = naive_h(m, base) - (naive_h(p_normal, base) + naive_h(q_normal, base)) / 2
    assert information.kl_divergence(p, q, base=base) == pytest.approx(kl, rel=1e-12)
    assert information.cross_entropy(p, q, base=base) == pytest.approx(cross, rel=1e-12)
    assert information.js_divergence(p, q, base=base) == pytest.approx(js, rel=1e-12)
    assert information.js_divergence(q, p, base=base) == pytest.approx(js, rel=1e-12)
    assert information.self_information(p_normal, base=base) == pytest.approx(
        [-math.log(pi, base) if pi > 0 else math.inf for pi in p_normal], rel=1e-12
    )


def test_cross_entropy_is_the_log_loss_of_a_constant_prediction():
    y = np.array([0, 0, 1, 2, 2, 2, 2, 1])
    q = np.array([0.2, 0.3, 0.5])
    frequencies = np.bincount(y) / y.size
    assert information.cross_entropy(frequencies, q, base=math.e) == pytest.approx(
        log_loss(y, np.tile(q, (y.size, 1))), rel=1e-12
    )


def test_js_divergence_is_at_most_one_bit():
    assert information.js_divergence([1, 0], [0, 1]) == pytest.approx(1.0, rel=1e-12)
    assert information.js_divergence([1, 0], [0, 1], base=math.e) == pytest.approx(math.log(2), rel=1e-12)
    rng = np.random.default_rng(5)
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(5) * 0.3, size=2)
        assert 0.0 <= information.js_divergence(p, q) <= 1.0


def test_infinities():
    assert information.kl_divergence([0.5, 0.5], [1.0, 0.0]) == math.inf
    assert information.cross_entropy([0.5, 0.5], [1.0, 0.0]) == math.inf
    assert information.kl_divergence([1.0, 0.0], [0.5, 0.5]) == pytest.approx(1.0)
    assert information.self_information(0.0) == math.inf and information.self_information(0.5) == 1.0


def test_wasserstein_distance_is_the_area_between_the_cdfs():
    support = np.array([3.0, -1.0, 0.5, 2.0])
    p, q = np.array([1.0, 2.0, 0.0, 1.0]), np.array([0.25, 0.25, 0.25, 0.25])
    order = np.argsort(support)
    cdf_p, cdf_q = np.cumsum(p[order]) / p.sum(), np.cumsum(q[order]) / q.sum()
    area = np.sum(np.abs(cdf_p - cdf_q)[:-1] * np.diff(support[order]))
    assert information.wasserstein_distance(p, q, support=support) == pytest.approx(area, rel=1e-12)
    # On the default support 0, 1, 2: moving all mass two steps costs 2.
    assert information.wasserstein_distance([1, 0, 0], [0, 0, 1]) == pytest.approx(2.0)


def test_base_only_rescales():
    play, attributes = weather_columns()
    in_bits = information.information_gain(play, attributes["outlook"])
    for base in (math.e, 10, 1.5):
        in_base = information.information_gain(play, attributes["outlook"], base=base)
        assert in_base == pytest.approx(in_bits * math.log(2) / math.log(base), rel=1e-12)
    assert information.gain_ratio(play, attributes["outlook"], base=10) == pytest.approx(
        information.gain_ratio(play, attributes["outlook"]), rel=1e-12
    )


def test_constant_attribute_has_no_gain_and_no_gain_ratio():
    play, _ = weather_columns()
    assert information.information_gain(play, np.zeros(14)) == 0.0
    assert math.isnan(information.gain_ratio(play, np.zeros(14)))


@pytest.mark.parametrize("call, error, message", [
    (lambda: information.entropy([]), ValueError, "labels is empty"),
    (lambda: information.entropy([[0, 1], [1, 0]]), ValueError, "1-D"),
    (lambda: information.entropy([0.0, np.nan]), ValueError, "NaN"),
    (lambda: information.entropy([0, "a", None]), TypeError, "sortable"),
    (lambda: information.information_gain([0, 1, 1], [0, 1]), ValueError, "different lengths"),
    (lambda: information.joint_entropy([0, 1], [0, 1], sample_weight=[1.0]), ValueError, "different lengths"),
    (lambda: information.entropy([0, 1], sample_weight=[1.0, -1.0]), ValueError, "sample_weight must be non-neg"),
    (lambda: information.entropy([0, 1], sample_weight=[0.0, 0.0]), ValueError, "positive sum"),
    (lambda: information.entropy([0, 1], sample_weight=[1.0, np.inf]), ValueError, "finite"),
    (lambda: information.entropy([0, 1], base=1), ValueError, "base"),
    (lambda: information.entropy([0, 1], base=0.5), ValueError, "base"),
    (lambda: information.entropy([0, 1], base=-2), ValueError, "base"),
    (lambda: information.entropy([0, 1], base=np.inf), ValueError, "base"),
    (lambda: information.entropy([0, 1], base="2"), TypeError, "base"),
    (lambda: information.kl_divergence([0.5, -0.5], [0.5, 0.5]), ValueError, "p must be non-negative"),
    (lambda: information.js_divergence([0.5, 0.5], [0.5, 0.5, 0.0]), ValueError, "different lengths"),
    (lambda: information.cross_entropy([], []), ValueError, "p is empty"),
    (lambda: information.cross_entropy([0, 0], [1, 1]), ValueError, "positive sum"),
    (lambda: information.kl_divergence(["a", "b"], [1, 1]), TypeError, "numbers"),
    (lambda: information.self_information([0.5, 1.5]), ValueError, r"\[0, 1\]"),
    (lambda: information.self_information([]), ValueError, "empty"),
    (lambda: information.wasserstein_distance([1, 1], [1, 1], support=[0.0]), ValueError, "different lengths"),
    (lambda: information.wasserstein_distance([1, 1], [1, 1], support=[0.0, np.nan]), ValueError, "finite"),
])
def test_bad_input_is_a_clear_error(call, error, message):
    with pytest.raises(error, match=message):
        call()
