"""The counter-based hash RNG of ``kernels/common.py``, pinned.

Every model (bootstrap draws, feature and threshold draws, binning subsamples) and
every test reference built on ``hash_uniform`` depends on these exact numbers, so a
change to the mixing constants must fail here. The expected values come from a
pure-Python transcription of the same splitmix64-style mixing (Steele, Lea and Flood,
"Fast splittable pseudorandom number generators", OOPSLA 2014; the finaliser of
Vigna's splitmix64), in integers modulo 2**64, and from literals.
"""

import pytest

from gpuforest.kernels.common import PURPOSE_BOOTSTRAP, bootstrap_row, hash_uint64, hash_uniform

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
