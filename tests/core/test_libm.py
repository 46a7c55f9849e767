"""tinyinit.core.libm gives the C library's log, cos and sin, bit for bit, on whole arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tinyinit.core import libm

SCALAR = {"log": math.log, "cos": math.cos, "sin": math.sin}


def in_c(name: str, x: np.ndarray) -> np.ndarray:
    return np.array([SCALAR[name](v) for v in np.asarray(x).tolist()])


def spec_arguments(rng: np.random.Generator, n: int) -> np.ndarray:
    """1 - u0 for n spec uniforms u0 = k / 2**53: every value Box-Muller takes a log of."""
    return 1.0 - rng.integers(0, 2**53, n, dtype=np.uint64).astype(np.float64) / 2.0**53


@pytest.fixture(params=["backwards loop", "one by one"])
def path(request, monkeypatch):
    """Both ways libm can compute: numpy's backward loop, and math per element."""
    if request.param == "one by one":
        monkeypatch.setattr(libm, "backwards_is_exact", lambda name: False)
    return request.param


def test_numpy_walked_backwards_is_the_c_library_here():
    """On this machine the fast path is taken for all three (else the benchmark is moot)."""
    assert all(libm.backwards_is_exact(name) for name in ("log", "cos", "sin"))


def test_log_equals_the_c_library_on_box_muller_arguments(path):
    x = spec_arguments(np.random.default_rng(0), 400_000)
    assert np.array_equal(libm.log(x), in_c("log", x))


def test_log_equals_the_c_library_near_one_near_zero_and_at_the_edges(path):
    rng = np.random.default_rng(1)
    near_one = 1.0 - rng.integers(0, 2**30, 50_000, dtype=np.uint64) / 2.0**53
    tiny = rng.integers(1, 2**20, 50_000, dtype=np.uint64) / 2.0**53
    wide = np.exp(rng.uniform(-700, 700, 50_000))
    edges = np.array([2.0**k for k in range(-1074, 1024)] + [math.sqrt(0.5), math.sqrt(2), 1.0])
    edges = np.concatenate([edges, np.nextafter(edges, 0), np.nextafter(edges, np.inf)])
    edges = edges[(edges > 0) & np.isfinite(edges)]
    for x in (near_one, tiny, wide, edges):
        assert np.array_equal(libm.log(x), in_c("log", x))


@pytest.mark.parametrize("name", ["cos", "sin"])
def test_cos_and_sin_equal_the_c_library_on_box_muller_angles_and_beyond(name, path):
    rng = np.random.default_rng(2)
    angles = 2.0 * math.pi * (rng.integers(0, 2**53, 200_000, dtype=np.uint64) / 2.0**53)
    wide = rng.uniform(-1e6, 1e6, 20_000) * 10.0 ** rng.integers(-300, 300, 20_000)
    for x in (angles, wide):
        f = getattr(libm, name)
        assert np.array_equal(f(x), in_c(name, x))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=5e-324, max_value=1.7e308), min_size=1, max_size=64))
def test_log_equals_the_c_library_on_any_positive_double(values):
    x = np.array(values)
    assert np.array_equal(libm.log(x), in_c("log", x))


def test_log_of_one_is_exactly_zero():
    assert libm.log(np.array([1.0]))[0] == 0.0


def test_shape_and_order_are_kept_whatever_the_strides():
    x = spec_arguments(np.random.default_rng(3), 12).reshape(3, 4)
    for view in (x, x[::-1], x.T, x[:, ::2]):
        assert libm.log(view).shape == view.shape
        assert np.array_equal(libm.log(view).ravel(), in_c("log", view.ravel()))
    assert libm.log(2.0).shape == ()


def test_the_check_rejects_a_function_one_bit_off_in_one_value_in_300():
    """What the first-use check guards against: a vector log rounding a few values the other way."""
    x = spec_arguments(np.random.default_rng(0), libm.PROBE_SIZE)

    def off_by_a_bit(v):
        y = libm.log(v)
        y[::300] = np.nextafter(y[::300], 0)
        return y

    assert libm.agrees(libm.log, math.log, x)
    assert not libm.agrees(off_by_a_bit, math.log, x)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, -math.inf])
def test_log_refuses_what_is_not_positive(bad):
    with pytest.raises(ValueError, match=r"x must hold positive numbers only .* got " + str(bad)):
        libm.log(np.array([0.5, bad]))
