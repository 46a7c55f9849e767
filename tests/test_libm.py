"""tinyinit.libm.log equals the C library's log, bit for bit, on what Box-Muller meets."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tinyinit.libm import log


def c_log(x: np.ndarray) -> np.ndarray:
    return np.array([math.log(v) for v in x.tolist()])


def spec_arguments(rng: np.random.Generator, n: int) -> np.ndarray:
    """1 - u0 for n spec uniforms u0 = k / 2**53: every value Box-Muller takes a log of."""
    return 1.0 - rng.integers(0, 2**53, n, dtype=np.uint64).astype(np.float64) / 2.0**53


def test_equals_the_c_library_on_box_muller_arguments():
    x = spec_arguments(np.random.default_rng(0), 400_000)
    assert np.array_equal(log(x), c_log(x))


def test_equals_the_c_library_near_one_and_near_zero():
    rng = np.random.default_rng(1)
    near_one = 1.0 - rng.integers(0, 2**30, 100_000, dtype=np.uint64) / 2.0**53
    tiny = rng.integers(1, 2**20, 100_000, dtype=np.uint64) / 2.0**53
    for x in (near_one, tiny):
        assert np.array_equal(log(x), c_log(x))


def test_equals_the_c_library_across_binades_and_at_the_edges():
    rng = np.random.default_rng(2)
    wide = np.exp(rng.uniform(-700, 700, 200_000))
    edges = np.array([2.0**k for k in range(-1074, 1024)] + [math.sqrt(0.5), math.sqrt(2), 1.0])
    edges = np.concatenate([edges, np.nextafter(edges, 0), np.nextafter(edges, np.inf)])
    edges = edges[(edges > 0) & np.isfinite(edges)]
    for x in (wide, edges):
        assert np.array_equal(log(x), c_log(x))


def test_one_gives_exactly_zero():
    assert log(np.array([1.0]))[0] == 0.0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=5e-324, max_value=1.7e308), min_size=1, max_size=64))
def test_equals_the_c_library_on_any_positive_double(values):
    x = np.array(values)
    assert np.array_equal(log(x), c_log(x))
