"""tinyinit.libm.log equals the C library's log, bit for bit, on what Box-Muller meets."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tinyinit import libm
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


# --- the argument of tinyinit/libm.py's docstring, checked step by step -----------------


def test_the_table_makes_r_exact_and_the_first_sum_error_free():
    """Per interval: g has 9 bits, |r| < 2**-8, and |w| >= |r| where k = 0 and g != 1."""
    for i, g in enumerate(libm.G.tolist()):
        assert math.ldexp(math.frexp(g)[0], 9).is_integer(), f"g = {g!r} has more than 9 bits"
        lo, hi = libm._interval(i)
        largest_r = max(abs(Fraction(lo) * Fraction(g) - 1), abs(Fraction(hi) * Fraction(g) - 1))
        assert largest_r < Fraction(1, 2**8), i
        if g != 1.0:
            assert abs(Fraction(libm.MINUS_LN_G_HI[i])) >= largest_r, i
        assert (Fraction(libm.MINUS_LN_G_HI[i]) * 2**43).denominator == 1
    assert (Fraction(libm.LN2_HI) * 2**42).denominator == 1  # k * LN2_HI exact for |k| < 2**11


def sample_of_every_kind(n: int) -> np.ndarray:
    """Box-Muller arguments, values near 1, both ends of every table interval, wide values."""
    rng = np.random.default_rng(3)
    ends = np.array([v for i in range(256) for v in libm._interval(i)])
    return np.concatenate(
        [
            spec_arguments(rng, n),
            1.0 + rng.integers(-(2**44), 2**44, n) / 2.0**52,
            ends,
            ends * 2.0 ** rng.integers(-60, 60, ends.size),
            np.exp(rng.uniform(-700, 700, n)),
        ]
    )


def test_the_reduction_is_exact():
    x = sample_of_every_kind(2_000)
    k, i, r = libm._reduce(x.copy())
    for xv, kv, iv, rv in zip(x.tolist(), k.tolist(), i.tolist(), r.tolist()):
        z = Fraction(xv) / Fraction(2) ** kv
        assert Fraction(0.6875) <= z < Fraction(1.375)
        assert z * Fraction(libm.G[iv]) - 1 == Fraction(rv)


def test_the_estimate_is_within_a_hundredth_of_an_ulp():
    """|y + t - ln x| <= 0.01 |ln x| 2**-53, which is 0.01 of the gap on either side of y."""
    x = sample_of_every_kind(4_000)
    y, t = libm.log_estimate(x.copy())
    with localcontext() as ctx:
        ctx.prec = 60
        for xv, yv, tv in zip(x.tolist(), y.tolist(), t.tolist()):
            exact = Decimal(xv).ln()
            error = abs(Decimal(yv) + Decimal(tv) - exact)
            assert error <= Decimal("0.01") * abs(exact) / 2**53, (xv, float(error / abs(exact)))
