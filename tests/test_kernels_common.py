"""``kernels/common.py``: the counter-based hash RNG, pinned; the portable exp, within one ulp of libm; and the split
criteria on worked examples.

Every model (bootstrap draws, feature and threshold draws, binning subsamples) and
every test reference built on ``hash_uniform`` depends on these exact numbers, so a
change to the mixing constants must fail here. The expected values come from a
pure-Python transcription of the same splitmix64-style mixing (Steele, Lea and Flood,
"Fast splittable pseudorandom number generators", OOPSLA 2014; the finaliser of
Vigna's splitmix64), in integers modulo 2**64, and from literals.

Every criterion is written as a node cost ``W * impurity``; a split's gain is
``cost(parent) - cost(left) - cost(right)``. The worked examples give the gains and
impurities computed by hand (the arithmetic is in the comments), check the gains that
``split_gain`` returns for fixed-point sums built by ``gpuforest.statistics``, and the
split a tree then chooses.
"""

import numpy as np
import pytest
from sklearn import tree as sk_tree

import gpuforest
from gpuforest.backend import CPUBackend
from gpuforest.kernels import common
from gpuforest.kernels.common import PURPOSE_BOOTSTRAP, bootstrap_row, hash_uint64, hash_uniform
from gpuforest.statistics import classification_statistics, newton_statistics, regression_statistics

MASK = 2**64 - 1
GOLDEN = 0x9E3779B97F4A7C15


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def python_hash(seed, purpose, a, b):
    h = mix((seed + GOLDEN) & MASK)
    h = mix(h ^ ((purpose * GOLDEN) & MASK))
    h = mix(h ^ a)
    return mix(h ^ ((b + GOLDEN) & MASK))


# Computed once with ``python_hash``, so that a change to both transcriptions together fails too.
PINNED = [9126777247673538071, 17914986086456298471, 2794565641734556615, 18151096734264404625]
PINNED_ROWS = [580, 539, 711, 376, 263, 405, 207, 525]  # rows of seed 42, tree 3, draws 0..7 of 1000
CASES = [(0, 0, 0, 0), (1, 2, 3, 4), (42, PURPOSE_BOOTSTRAP, 7, 123456), (2**31 - 1, 6, 2**40 + 5, 2**62 + 1)]


@pytest.mark.parametrize("seed, purpose, a, b", CASES)
def test_hash_matches_a_pure_python_splitmix64(seed, purpose, a, b):
    expected = python_hash(seed, purpose, a, b)
    assert int(hash_uint64(seed, purpose, a, b)) == expected
    assert hash_uniform(seed, purpose, a, b) == (expected >> 11) / 2**53


def test_hash_outputs_are_pinned():
    assert [int(hash_uint64(*case)) for case in CASES] == PINNED
    assert [bootstrap_row(42, 3, draw, 1000) for draw in range(8)] == PINNED_ROWS


def test_bootstrap_row_is_the_uniform_scaled_to_the_rows():
    for draw in range(50):
        u = (python_hash(9, PURPOSE_BOOTSTRAP, 2, draw) >> 11) / 2**53
        assert bootstrap_row(9, 2, draw, 37) == min(int(u * 37), 36)
    assert [bootstrap_row(1, 0, draw, 1) for draw in range(5)] == [0] * 5


def test_portable_exp_is_within_one_ulp_of_libm():
    from numba import njit

    def exp_loop(exp):
        @njit
        def exp_all(values):
            out = np.empty_like(values)
            for i in range(values.shape[0]):
                out[i] = exp(values[i])
            return out

        return exp_all

    exp_all = exp_loop(common.portable_exp)
    # The CPU gradients' form: inlined in a loop that LLVM vectorizes.
    inlined_exp_all = exp_loop(common.inlined_portable_exp)

    rng = np.random.default_rng(0)
    values = np.concatenate([rng.uniform(-1, 1, 20_000), rng.uniform(-708, 709.7, 20_000)])
    ulps = np.abs(exp_all(values) - np.exp(values)) / np.spacing(np.exp(values))
    assert ulps.max() <= 1.0
    # Subnormal results (2**k below 2**-1022, rounded once): within one unit of the smallest subnormal.
    tiny = rng.uniform(-745.1, -708.4, 20_000)
    assert np.abs(exp_all(tiny) - np.exp(tiny)).max() <= np.spacing(0.0)
    specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 709.78, 709.79, 710.0, -745.1, -745.14, -746.0])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(exp_all(specials), np.exp(specials))
    # Both compilations give the same bits, the ends and NaN included.
    for inputs in (values, tiny, specials, rng.normal(0.0, 400.0, 20_000)):
        np.testing.assert_array_equal(inlined_exp_all(inputs), exp_all(inputs))


# --- split criteria: fixed-point sums and gains --------------------------------------------------


def fixed_sums(stats, rows):
    """Fixed-point totals (n_slots,) of ``rows``, summed as the histogram kernels do."""
    totals = np.zeros(stats.n_slots, dtype=np.int64)
    for row in rows:
        first = stats.row_slot[row]
        totals[first: first + stats.row_stats.shape[1]] += stats.row_stats[row]
        totals[-1] += 1
    return totals


def kernel_gain(stats, parent_rows, left_rows):
    """``split_gain`` of sending ``left_rows`` of the node ``parent_rows`` left."""
    parent, left = fixed_sums(stats, parent_rows), fixed_sums(stats, left_rows)
    n_stat_slots = stats.n_slots - 1
    args = (n_stat_slots, stats.inv_scales)
    weights = [common.node_weight(stats.criterion, parent, left, side, *args) for side in
               (common.PARENT, common.LEFT, common.RIGHT)]
    parent_cost = common.proxy_cost(
        stats.criterion, parent, left, common.PARENT, weights[0], *args, stats.regularization
    )
    return common.split_gain(
        stats.criterion, parent, left, parent_cost, weights[1], weights[2], *args, stats.regularization
    )


def cost_decrease(tree, node):
    """``W * impurity`` of ``node`` minus that of its two children, from ``tree_``."""
    cost = tree.weighted_n_node_samples * tree.impurity
    return cost[node] - cost[tree.children_left[node]] - cost[tree.children_right[node]]


# --- entropy: Quinlan's play-tennis table ---------------------------------------------------------

# Quinlan (1986), "Induction of decision trees", table 1. Encoded as ordered
# integers: outlook overcast=0, sunny=1, rain=2; temperature cool=0, mild=1,
# hot=2; humidity normal=0, high=1; wind weak=0, strong=1; play no=0, yes=1.
PLAY_TENNIS = np.array([
    # outlook, temperature, humidity, wind, play
    [1, 2, 1, 0, 0],  # D1  sunny    hot  high   weak   no
    [1, 2, 1, 1, 0],  # D2  sunny    hot  high   strong no
    [0, 2, 1, 0, 1],  # D3  overcast hot  high   weak   yes
    [2, 1, 1, 0, 1],  # D4  rain     mild high   weak   yes
    [2, 0, 0, 0, 1],  # D5  rain     cool normal weak   yes
    [2, 0, 0, 1, 0],  # D6  rain     cool normal strong no
    [0, 0, 0, 1, 1],  # D7  overcast cool normal strong yes
    [1, 1, 1, 0, 0],  # D8  sunny    mild high   weak   no
    [1, 0, 0, 0, 1],  # D9  sunny    cool normal weak   yes
    [2, 1, 0, 0, 1],  # D10 rain     mild normal weak   yes
    [1, 1, 0, 1, 1],  # D11 sunny    mild normal strong yes
    [0, 1, 1, 1, 1],  # D12 overcast mild high   strong yes
    [0, 2, 0, 0, 1],  # D13 overcast hot  normal weak   yes
    [2, 1, 1, 1, 0],  # D14 rain     mild high   strong no
])
OUTLOOK, TEMPERATURE, HUMIDITY, WIND = range(4)

# H(S) = -(9/14) log2(9/14) - (5/14) log2(5/14) = 0.40978 + 0.53051 = 0.940286 bits.
H_ROOT = 0.940286
# Binary cuts at the root (information gain in bits, children as (yes, no)):
#   outlook <= 0.5 (overcast | sunny, rain): (4,0) | (5,5): 0.940286 - 10/14 * 1       = 0.226000
#   outlook <= 1.5 (overcast, sunny | rain): (6,3) | (3,2): 0.940286 - 9/14 * 0.918296
#                                                          - 5/14 * 0.970951          = 0.003185
#   humidity (normal | high):                (6,1) | (3,4): 0.940286 - 7/14 * 0.591673
#                                                          - 7/14 * 0.985228          = 0.151836
#   wind (weak | strong):                    (6,2) | (3,3): 0.940286 - 8/14 * 0.811278
#                                                          - 6/14 * 1                 = 0.048127
#   temperature <= 0.5 (cool | mild, hot):   (3,1) | (6,4): 0.940286 - 4/14 * 0.811278
#                                                          - 10/14 * 0.970951         = 0.014956
#   temperature <= 1.5 (cool, mild | hot):   (7,3) | (2,2): 0.940286 - 10/14 * 0.881291
#                                                          - 4/14 * 1                 = 0.025078
# (Humidity and wind match Quinlan's 0.151 and 0.048; his outlook gain 0.246 is
# for the three-way split.)
ROOT_GAINS = {
    (OUTLOOK, 0): 0.226000, (OUTLOOK, 1): 0.003185, (HUMIDITY, 0): 0.151836,
    (WIND, 0): 0.048127, (TEMPERATURE, 0): 0.014956, (TEMPERATURE, 1): 0.025078,
}
# In the (sunny, rain) child, (5,5) and H = 1 bit:
#   humidity:            (4,1) | (1,4): 1 - 5/10 * 0.721928 - 5/10 * 0.721928 = 0.278072
#   temperature <= 1.5:  (5,3) | (0,2): 1 - 8/10 * 0.954434                  = 0.236453
#   wind:                (4,2) | (1,3): 1 - 6/10 * 0.918296 - 4/10 * 0.811278 = 0.124511
#   temperature <= 0.5:  (2,1) | (3,4): 1 - 3/10 * 0.918296 - 7/10 * 0.985228 = 0.034852
#   outlook <= 1.5:      (2,3) | (3,2): 1 - 0.970951                        = 0.029049


def test_entropy_play_tennis_gains_in_the_kernel():
    X, y = PLAY_TENNIS[:, :4], PLAY_TENNIS[:, 4]
    stats = classification_statistics("entropy", y, 2, np.ones(14))
    everything = np.arange(14)
    for (feature, value), gain_bits in ROOT_GAINS.items():
        left = np.flatnonzero(X[:, feature] <= value)
        # split_gain is in cost units: W * (gain in bits), W = 14.
        np.testing.assert_allclose(kernel_gain(stats, everything, left) / 14, gain_bits, atol=1e-6)


def test_entropy_play_tennis_tree():
    X, y = PLAY_TENNIS[:, :4].astype(float), PLAY_TENNIS[:, 4]
    clf = gpuforest.DecisionTreeClassifier(criterion="entropy", max_depth=2, device="cpu").fit(X, y)
    tree = clf.tree_
    np.testing.assert_allclose(tree.impurity[0], H_ROOT, atol=1e-6)
    # Root: the best binary cut is overcast | (sunny, rain), 0.226 bits.
    assert (tree.feature[0], tree.threshold[0]) == (OUTLOOK, 0.5)
    left, right = tree.children_left[0], tree.children_right[0]
    np.testing.assert_allclose(cost_decrease(tree, 0) / 14, 0.226000, atol=1e-6)
    assert tree.impurity[left] == 0.0 and tree.children_left[left] == -1  # overcast: 4 yes
    np.testing.assert_allclose(tree.impurity[right], 1.0, atol=1e-12)  # 5 yes, 5 no
    # (sunny, rain): humidity, 0.278 bits; children (4,1) and (1,4), 0.721928 bits each.
    assert (tree.feature[right], tree.threshold[right]) == (HUMIDITY, 0.5)
    np.testing.assert_allclose(cost_decrease(tree, right) / 10, 0.278072, atol=1e-6)
    for child in (tree.children_left[right], tree.children_right[right]):
        np.testing.assert_allclose(tree.impurity[child], 0.721928, atol=1e-6)
        assert tree.n_node_samples[child] == 5
    # "log_loss" is the same criterion.
    alias = gpuforest.DecisionTreeClassifier(criterion="log_loss", max_depth=2, device="cpu").fit(X, y)
    np.testing.assert_array_equal(alias.tree_.feature, tree.feature)
    np.testing.assert_array_equal(alias.tree_.impurity, tree.impurity)


# --- gini, entropy and misclassification choose three different splits ---------------------------

# 20 rows, 12 of class 0 and 8 of class 1, three binary features; rows with
# x_f = 0 go left. Left children (class 0, class 1): f0 (0, 1), f1 (2, 0),
# f2 (5, 1). Gains in cost units (W * impurity decrease):
#   gini, cost = W - sum c_k^2 / W; parent 20 - (144 + 64) / 20 = 9.6
#     f0: 9.6 - 0 - (19 - 193/19)              = 9.6 - 8.842105       = 0.757895
#     f1: 9.6 - 0 - (18 - 164/18)              = 9.6 - 8.888889       = 0.711111
#     f2: 9.6 - (6 - 26/6) - (14 - 98/14)      = 9.6 - 1.666667 - 7   = 0.933333  <- gini
#   entropy, cost = W * H in bits; parent 20 * H(12, 8) = 20 * 0.970951 = 19.419012
#     f0: 19.419012 - 0 - 19 * H(12, 7) = 19.419012 - 19 * 0.949452   = 1.379424
#     f1: 19.419012 - 0 - 18 * H(10, 8) = 19.419012 - 18 * 0.991076   = 1.579643  <- entropy
#     f2: 19.419012 - 6 * H(5, 1) - 14 * 1 = 19.419012 - 3.900135 - 14 = 1.518877
#   misclassification, cost = W - max_k c_k; parent 20 - 12 = 8
#     f0: 8 - 0 - (19 - 12) = 1                                                    <- misclassification
#     f1: 8 - 0 - (18 - 10) = 0;  f2: 8 - (6 - 5) - (14 - 7) = 0
THREE_WAY_GAINS = {
    "gini": (0.757895, 0.711111, 0.933333),
    "entropy": (1.379424, 1.579643, 1.518877),
    "misclassification": (1.0, 0.0, 0.0),
}
THREE_WAY_CHOICE = {"gini": 2, "entropy": 1, "misclassification": 0}


def three_way_data():
    y = np.array([0] * 12 + [1] * 8)
    X = np.ones((20, 3))
    X[12, 0] = 0  # f0: one row of class 1 goes left
    X[[0, 1], 1] = 0  # f1: two rows of class 0
    X[[2, 3, 4, 5, 6, 13], 2] = 0  # f2: five rows of class 0 and one of class 1
    return X, y


@pytest.mark.parametrize("criterion", ["gini", "entropy", "misclassification"])
def test_three_criteria_three_splits(criterion):
    X, y = three_way_data()
    stats = classification_statistics(criterion, y, 2, np.ones(20))
    for feature, expected in enumerate(THREE_WAY_GAINS[criterion]):
        gain = kernel_gain(stats, np.arange(20), np.flatnonzero(X[:, feature] == 0))
        np.testing.assert_allclose(gain, expected, atol=1e-6)
    clf = gpuforest.DecisionTreeClassifier(criterion=criterion, max_depth=1, device="cpu").fit(X, y)
    assert clf.tree_.feature[0] == THREE_WAY_CHOICE[criterion]
    np.testing.assert_allclose(cost_decrease(clf.tree_, 0), max(THREE_WAY_GAINS[criterion]), atol=1e-6)
    if criterion != "misclassification":
        reference = sk_tree.DecisionTreeClassifier(criterion=criterion, max_depth=1, random_state=0).fit(X, y)
        assert reference.tree_.feature[0] == THREE_WAY_CHOICE[criterion]


def test_misclassification_zero_gain():
    """10 rows (8 of class 0): the only cut is (4, 0) | (4, 2).

    Both children keep class 0 as majority, so the misclassification cost does
    not move: 2 = 0 + 2 (gain 0). Gini sees the purer left child:
    cost 10 - (64 + 4)/10 = 3.2 against 0 + (6 - (16 + 4)/6) = 2.666667, gain 0.533333.
    """
    X = np.array([[0.0]] * 4 + [[1.0]] * 6)
    y = np.array([0, 0, 0, 0, 0, 0, 0, 0, 1, 1])
    for criterion, expected in (("misclassification", 0.0), ("gini", 0.533333)):
        stats = classification_statistics(criterion, y, 2, np.ones(10))
        np.testing.assert_allclose(kernel_gain(stats, np.arange(10), np.arange(4)), expected, atol=1e-6)
    strict = dict(max_depth=1, min_impurity_decrease=1e-6, device="cpu")
    # A zero-gain split is refused once any decrease is required ...
    assert gpuforest.DecisionTreeClassifier(criterion="misclassification", **strict).fit(X, y).tree_.node_count == 1
    assert gpuforest.DecisionTreeClassifier(criterion="gini", **strict).fit(X, y).tree_.node_count == 3
    # ... and made (as scikit-learn does) when none is.
    free = gpuforest.DecisionTreeClassifier(criterion="misclassification", max_depth=1, device="cpu").fit(X, y)
    assert free.tree_.node_count == 3
    np.testing.assert_allclose(free.tree_.impurity, [0.2, 0.0, 2 / 6], atol=1e-12)


# --- squared error --------------------------------------------------------------------------------


def test_squared_error_worked_example():
    """y = 1, 2, 3, 10, 11, 12 at x0 = 1..6 (x1 is shuffled noise).

    Root: mean 6.5, SSE = 2 * (5.5^2 + 4.5^2 + 3.5^2) = 125.5, impurity 125.5/6 = 20.916667.
    Cut x0 <= 3.5: children {1,2,3}, {10,11,12}, SSE 2 each (impurity 2/3), means 2 and 11;
    gain 125.5 - 2 - 2 = 121.5. Next best, x0 <= 2.5: {1,2} SSE 0.5, {3,10,11,12} mean 9,
    SSE 36+1+4+9 = 50; gain 75.
    """
    X = np.column_stack([np.arange(1.0, 7.0), [2.0, 5.0, 1.0, 6.0, 3.0, 4.0]])
    y = np.array([1.0, 2.0, 3.0, 10.0, 11.0, 12.0])
    stats = regression_statistics("squared_error", y, np.ones(6))
    np.testing.assert_allclose(kernel_gain(stats, np.arange(6), np.arange(3)), 121.5, rtol=1e-12)
    np.testing.assert_allclose(kernel_gain(stats, np.arange(6), np.arange(2)), 75.0, rtol=1e-12)
    reg = gpuforest.DecisionTreeRegressor(max_depth=1, device="cpu").fit(X, y)
    tree = reg.tree_
    assert (tree.feature[0], tree.threshold[0]) == (0, 3.5)
    np.testing.assert_allclose(tree.impurity, [125.5 / 6, 2 / 3, 2 / 3], rtol=1e-12)
    np.testing.assert_allclose(tree.value[:, 0, 0], [6.5, 2.0, 11.0], rtol=1e-12)
    np.testing.assert_allclose(cost_decrease(tree, 0), 121.5, rtol=1e-12)


# --- Poisson --------------------------------------------------------------------------------------

# y = 1, 1, 3, 6 at x = 1..4. Node cost = half Poisson deviance = sum y log(y / mean)
# (the sum(mean - y) term is zero), natural log.
#   root: mean 2.75: 2 log(1/2.75) + 3 log(3/2.75) + 6 log(6/2.75)
#         = -2.023202 + 0.261034 + 4.680951 = 2.918784 (impurity 0.729696)
#   x <= 1.5: {1} 0, {1,3,6} mean 10/3: log 0.3 + 3 log 0.9 + 6 log 1.8
#             = -1.203973 - 0.316082 + 3.526720 = 2.006666;                     gain 0.912118
#   x <= 2.5: {1,1} 0, {3,6} mean 4.5: 3 log(2/3) + 6 log(4/3) = 0.509697;       gain 2.409087 <- Poisson
#   x <= 3.5: {1,1,3} mean 5/3: 2 log 0.6 + 3 log 1.8 = 0.741709, {6} 0;          gain 2.177075
# Squared error on the same data prefers x <= 3.5 (SSE 16.75 - 2.666667 = 14.083333
# against 16.75 - 4.5 = 12.25 for x <= 2.5).
POISSON_X = np.arange(1.0, 5.0)[:, None]
POISSON_Y = np.array([1.0, 1.0, 3.0, 6.0])


def test_poisson_worked_example():
    stats = regression_statistics("poisson", POISSON_Y, np.ones(4))
    for n_left, expected in ((1, 0.912118), (2, 2.409087), (3, 2.177075)):
        np.testing.assert_allclose(kernel_gain(stats, np.arange(4), np.arange(n_left)), expected, atol=1e-6)
    reg = gpuforest.DecisionTreeRegressor(criterion="poisson", max_depth=1, device="cpu").fit(POISSON_X, POISSON_Y)
    assert reg.tree_.threshold[0] == 2.5
    np.testing.assert_allclose(reg.tree_.impurity, [2.918784 / 4, 0.0, 0.509697 / 2], atol=1e-6)
    squared = gpuforest.DecisionTreeRegressor(max_depth=1, device="cpu").fit(POISSON_X, POISSON_Y)
    assert squared.tree_.threshold[0] == 3.5
    reference = sk_tree.DecisionTreeRegressor(criterion="poisson", max_depth=1).fit(POISSON_X, POISSON_Y)
    assert reference.tree_.threshold[0] == 2.5
    np.testing.assert_allclose(reg.tree_.impurity, reference.tree_.impurity, rtol=1e-12)


def test_poisson_never_makes_a_child_with_zero_sum():
    """y = 0, 0, 0, 4, 5, 6 at x = 1..6.

    Cuts at 1.5, 2.5 and 3.5 leave a left child with sum(y) = 0, where the
    Poisson deviance is undefined (log of a zero mean); scikit-learn refuses
    them, and so must we. Of the rest, x <= 4.5 ({0,0,0,4} | {5,6}) gains
    more than x <= 5.5. The child {0,0,0,4} is impure but every cut of it
    isolates zeros, so it stays a leaf.
    """
    X = np.arange(1.0, 7.0)[:, None]
    y = np.array([0.0, 0.0, 0.0, 4.0, 5.0, 6.0])
    stats = regression_statistics("poisson", y, np.ones(6))
    assert kernel_gain(stats, np.arange(6), np.arange(3)) == -np.inf
    reg = gpuforest.DecisionTreeRegressor(criterion="poisson", device="cpu").fit(X, y)
    reference = sk_tree.DecisionTreeRegressor(criterion="poisson", random_state=0).fit(X, y)
    assert reg.tree_.threshold[0] == reference.tree_.threshold[0] == 4.5
    left = reg.tree_.children_left[0]
    assert reg.tree_.children_left[left] == -1 and reg.tree_.n_node_samples[left] == 4
    assert reg.tree_.impurity[left] > 0
    assert reg.tree_.node_count == reference.tree_.node_count
    np.testing.assert_allclose(np.sort(reg.tree_.impurity), np.sort(reference.tree_.impurity), rtol=1e-12)
    np.testing.assert_allclose(reg.predict(X), reference.predict(X), rtol=1e-12)


# --- Newton (second-order boosting) ---------------------------------------------------------------

# g = -1, -1, 0.5, 0.5, 2 and h = 1, 1, 0.5, 0.5, 1, lambda = 1: G = 1, H = 4.
# Leaf value -G / (H + lambda) = -1/5 = -0.2.
# Cut {0, 1} | {2, 3, 4}: G_L = -2, H_L = 2; G_R = 3, H_R = 2.
#   gain = G_L^2/(H_L+l) + G_R^2/(H_R+l) - G^2/(H+l) = 4/3 + 9/3 - 1/5 = 4.133333
# With lambda = 0: 4/2 + 9/2 - 1/4 = 6.25; leaf -1/4.
NEWTON_G = np.array([-1.0, -1.0, 0.5, 0.5, 2.0])
NEWTON_H = np.array([1.0, 1.0, 0.5, 0.5, 1.0])


@pytest.mark.parametrize("l2, gain, leaf", [(1.0, 4.133333, -0.2), (0.0, 6.25, -0.25)])
def test_newton_worked_example(l2, gain, leaf):
    stats = newton_statistics(NEWTON_G, NEWTON_H, l2)
    np.testing.assert_allclose(kernel_gain(stats, np.arange(5), [0, 1]), gain, atol=1e-6)
    totals = fixed_sums(stats, np.arange(5))[None, :]
    value, _, weight = CPUBackend().node_values(stats, totals, 1)
    np.testing.assert_allclose(value[0, 0], leaf, rtol=1e-12)
    np.testing.assert_allclose(weight[0], 4.0, rtol=1e-12)  # a Newton node weighs its hessian sum


# L1 (XGBoost's alpha): T(G) = sign(G) max(|G| - l1, 0) replaces G. g = 4, 4, -3 and h = 1, 1, 1
# with l2 = 1, l1 = 2: G = 5, H = 3, T = 3: leaf -3/4 = -0.75, cost -9/4, impurity -9/4 / 3 = -0.75.
#   {0, 1} | {2}: G_L = 8, T_L = 6, H_L = 2: cost -36/3 = -12, leaf -6/3 = -2;
#                 G_R = -3, T_R = -1, H_R = 1: cost -1/2, leaf 1/2;  gain -9/4 + 12 + 1/2 = 10.25
#   {0} | {1, 2}: G_L = 4, T_L = 2, H_L = 1: cost -4/2 = -2;
#                 G_R = 1, |G_R| <= l1 so T_R = 0: cost 0, leaf 0;   gain -9/4 + 2 = -0.25
# Without L1: gains 64/3 + 9/2 - 25/4 = 19.583333 and 16/2 + 1/3 - 25/4 = 2.083333; leaves -5/4 (root),
# -8/3, 3/2 and -1/3; root impurity -25/4 / 3.
NEWTON_L1_G = np.array([4.0, 4.0, -3.0])
NEWTON_L1_H = np.ones(3)


@pytest.mark.parametrize("l1, gains, leaves, root_impurity", [
    (2.0, (10.25, -0.25), (-0.75, -2.0, 0.5, 0.0), -0.75),
    (0.0, (19.583333, 2.083333), (-1.25, -8.0 / 3, 1.5, -1.0 / 3), -25.0 / 12),
])
def test_newton_l1_worked_example(l1, gains, leaves, root_impurity):
    stats = newton_statistics(NEWTON_L1_G, NEWTON_L1_H, 1.0, l1)
    assert stats.regularization == (1.0, l1)
    for left, gain in zip(([0, 1], [0]), gains):
        np.testing.assert_allclose(kernel_gain(stats, np.arange(3), left), gain, atol=1e-6)
    # The root, {0, 1}, {2} and {1, 2}.
    totals = np.stack([fixed_sums(stats, rows) for rows in ([0, 1, 2], [0, 1], [2], [1, 2])])
    value, impurity, weight = CPUBackend().node_values(stats, totals, 1)
    np.testing.assert_allclose(value[:, 0], leaves, rtol=1e-12, atol=0)
    np.testing.assert_allclose(impurity[0], root_impurity, rtol=1e-12)
    np.testing.assert_allclose(weight, [3.0, 2.0, 1.0, 2.0], rtol=1e-12)


@pytest.mark.parametrize("l2, l1", [(0.0, 0.0), (0.5, 0.0), (3.0, 0.0), (0.0, 1.5), (0.5, 4.0)])
def test_newton_gain_formula_on_random_sums(l2, l1):
    rng = np.random.RandomState(0)
    g, h = rng.uniform(-2, 2, 60), rng.uniform(0.05, 1.0, 60)
    stats = newton_statistics(g, h, l2, l1)

    def score(rows):
        """G^2 / (H + l2) with G soft-thresholded by l1."""
        G = g[rows].sum()
        return max(abs(G) - l1, 0.0) ** 2 / (h[rows].sum() + l2)

    parent = np.arange(10, 60)
    for n_left in (1, 7, 25, 49):
        left, right = parent[:n_left], parent[n_left:]
        expected = score(left) + score(right) - score(parent)
        np.testing.assert_allclose(kernel_gain(stats, parent, left), expected, rtol=1e-9, atol=1e-12)
    G, H = g[parent].sum(), h[parent].sum()
    value, _, weight = CPUBackend().node_values(stats, fixed_sums(stats, parent)[None, :], 1)
    np.testing.assert_allclose(value[0, 0], -np.sign(G) * max(abs(G) - l1, 0.0) / (H + l2), rtol=1e-9)
    np.testing.assert_allclose(weight[0], H, rtol=1e-12)
