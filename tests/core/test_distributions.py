"""uniforms(), normal() and the float32 fast paths give the spec's numbers, bit for bit."""

from __future__ import annotations

import math

import numpy as np
import pytest
import reference_pcg32 as ref
from hypothesis import given, settings
from hypothesis import strategies as st

from tinyinit import PCG32, normal, uniforms
from tinyinit.core.distributions import (
    PAIRS_PER_BLOCK,
    box_muller,
    scaled_normal_float32,
    scaled_uniform_float32,
)

seeds = st.integers(0, 2**64 - 1)
streams = st.integers(0, 2**63 - 1)
small_counts = st.integers(0, 41)  # odd and even
stds = st.floats(1e-3, 1e3)
few = settings(max_examples=15, deadline=None)
boundary = settings(max_examples=2, deadline=None)

# One block of the fast path holds 2 * PAIRS_PER_BLOCK uniforms. Around one block the
# draw goes from one block to two (and to worker threads); past two, a third starts.
BLOCK = 2 * PAIRS_PER_BLOCK
AROUND_BLOCKS = [BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK + 1]


def bits(x: np.ndarray) -> list[int]:
    """The bit patterns of a float32 array, so -0.0 != 0.0 and equality is exact."""
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).tolist()


class UniformOnly:
    """A generator with nothing but uniform(), like a course's frozen scalar PCG32."""

    def __init__(self, seed: int, stream: int = 54):
        self.scalar = ref.PCG32(seed, stream)

    def uniform(self) -> float:
        return self.scalar.uniform()


# --- spec section 6 ------------------------------------------------------------------


def test_spec_normals_of_seed_0():
    spec = [
        -0.809237002555057,
        0.05487465048869301,
        -0.7457425176448607,
        1.1572358387116342,
        0.18554303822392118,
    ]
    assert normal(PCG32(0), 5).tolist() == spec
    assert ref.normal(ref.PCG32(0), 5) == spec


def test_spec_uniforms_of_seed_0():
    assert uniforms(PCG32(0), 2).tolist() == [0.2803122753265841, 0.4892241428740438]


def test_numpy_cos_and_sin_round_like_the_c_library():
    u = uniforms(PCG32(2024), 200_000)
    t = 2 * math.pi * u
    for name, fast, exact in [("cos", np.cos, math.cos), ("sin", np.sin, math.sin)]:
        differ = np.flatnonzero(fast(t) != np.array([exact(x) for x in t.tolist()]))
        assert differ.size == 0, (
            f"np.{name} and math.{name} round differently on {differ.size} of {t.size} angles "
            f"(first t = {t[differ[0]]!r}). tinyinit's Box-Muller takes cos and sin from numpy "
            f"for speed, assuming they agree with the C library's (spec section 3); on this "
            f"numpy/CPU they do not, so normal() no longer matches the spec bit for bit. "
            f"Compute cos/sin with math (as distributions._c_log does for the log)."
        )


# --- normal() and uniforms() against the scalar reference ----------------------------


def check_normal(seed: int, stream: int, n: int) -> None:
    rng, scalar = PCG32(seed, stream), ref.PCG32(seed, stream)
    z = normal(rng, n)
    assert z.dtype == np.float64 and z.shape == (n,)
    assert z.tolist() == ref.normal(scalar, n)
    # ceil(n / 2) pairs: an odd n still consumes the whole last pair
    assert rng.state == scalar.state
    assert rng == PCG32(seed, stream).advance(4 * ((n + 1) // 2))


def check_uniforms(seed: int, stream: int, n: int) -> None:
    rng, scalar = PCG32(seed, stream), ref.PCG32(seed, stream)
    assert uniforms(rng, n).tolist() == [scalar.uniform() for _ in range(n)]
    assert rng.state == scalar.state


@few
@given(seed=seeds, stream=streams, n=small_counts)
def test_normal_equals_the_reference(seed, stream, n):
    check_normal(seed, stream, n)


@pytest.mark.parametrize("n", AROUND_BLOCKS)
@boundary
@given(seed=seeds, stream=streams)
def test_normal_equals_the_reference_across_blocks(n, seed, stream):
    check_normal(seed, stream, n)


@few
@given(seed=seeds, stream=streams, n=small_counts)
def test_uniforms_equal_the_reference(seed, stream, n):
    check_uniforms(seed, stream, n)


@pytest.mark.parametrize("n", AROUND_BLOCKS)
@boundary
@given(seed=seeds, stream=streams)
def test_uniforms_equal_the_reference_across_blocks(n, seed, stream):
    check_uniforms(seed, stream, n)


def test_split_normal_draws_are_not_one_draw():
    """Spec section 3: normal(rng, 3) then normal(rng, 1) is not normal(rng, 4)."""
    rng = PCG32(0)
    split = np.concatenate([normal(rng, 3), normal(rng, 1)])
    whole = normal(PCG32(0), 4)
    assert split[:3].tolist() == whole[:3].tolist()
    assert split[3] != whole[3]
    assert split[3] == normal(PCG32(0), 5)[4]  # the dropped sine's pair was skipped


# --- the float32 fast paths ----------------------------------------------------------


def check_scaled_normal(seed: int, n: int, std: float) -> None:
    rng, scalar = PCG32(seed), ref.PCG32(seed)
    w = scaled_normal_float32(rng, n, std)
    assert w.dtype == np.float32 and w.shape == (n,)
    expected = np.array([std * z for z in ref.normal(scalar, n)]).astype(np.float32)
    assert bits(w) == bits(expected)
    assert rng.state == scalar.state


def check_scaled_uniform(seed: int, n: int, a: float) -> None:
    rng, scalar = PCG32(seed), ref.PCG32(seed)
    w = scaled_uniform_float32(rng, n, a)
    assert w.dtype == np.float32 and w.shape == (n,)
    expected = np.array([-a + 2 * a * scalar.uniform() for _ in range(n)]).astype(np.float32)
    assert bits(w) == bits(expected)
    assert rng.state == scalar.state


@few
@given(seed=seeds, n=small_counts, std=stds)
def test_scaled_normal_float32_is_float32_of_std_times_the_reference(seed, n, std):
    check_scaled_normal(seed, n, std)


@pytest.mark.parametrize("n", AROUND_BLOCKS)
@boundary
@given(seed=seeds, std=stds)
def test_scaled_normal_float32_across_blocks(n, seed, std):
    check_scaled_normal(seed, n, std)


@few
@given(seed=seeds, n=small_counts, a=stds)
def test_scaled_uniform_float32_is_float32_of_the_reference(seed, n, a):
    check_scaled_uniform(seed, n, a)


@pytest.mark.parametrize("n", AROUND_BLOCKS)
@boundary
@given(seed=seeds, a=stds)
def test_scaled_uniform_float32_across_blocks(n, seed, a):
    check_scaled_uniform(seed, n, a)


@settings(max_examples=40, deadline=None)
@given(seed=seeds, k=st.integers(0, 9), side=st.sampled_from([-1, 0, 1]))
def test_scaled_normal_float32_rounds_values_on_a_float32_boundary_like_the_reference(
    seed, k, side
):
    """Pick std so that std * z_k lands (within an ulp) on a float32 rounding midpoint.

    That is where numpy's log and the C library's could round differently, so the
    fast path must recompute these values; it must still agree with the reference.
    """
    z = ref.normal(ref.PCG32(seed), k + 1)[k]
    below = np.float32(abs(z))
    midpoint = (float(below) + float(np.nextafter(below, np.float32(np.inf)))) / 2
    std = math.nextafter(midpoint / abs(z), math.inf * side) if side else midpoint / abs(z)
    check_scaled_normal(seed, k + 1, std)


# --- any object with uniform() is a generator --------------------------------------------


DRAWS = {
    "uniforms": lambda rng, n: uniforms(rng, n),
    "normal": lambda rng, n: normal(rng, n),
    "scaled_normal_float32": lambda rng, n: scaled_normal_float32(rng, n, 0.37),
    "scaled_uniform_float32": lambda rng, n: scaled_uniform_float32(rng, n, 0.37),
}


@pytest.mark.parametrize("draw", DRAWS.values(), ids=DRAWS.keys())
@pytest.mark.parametrize("n", [0, 1, 6, 7, BLOCK + 1])
def test_a_uniform_only_generator_gives_the_same_arrays_and_advance(draw, n):
    fast, slow = PCG32(99, 3), UniformOnly(99, 3)
    a, b = draw(fast, n), draw(slow, n)
    assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    assert fast.state == slow.scalar.state


class Returning:
    """A generator whose uniform() returns `values` in turn, the last one from then on."""

    def __init__(self, *values):
        self.values, self.calls = values, 0

    def uniform(self):
        self.calls += 1
        return self.values[min(self.calls, len(self.values)) - 1]

    def __repr__(self):
        return f"Returning{self.values!r}"


@pytest.mark.parametrize("draw", DRAWS.values(), ids=DRAWS.keys())
def test_a_generator_whose_uniform_is_no_float_in_0_1_is_refused_with_what_it_returned(draw):
    from refusals import assert_refused

    from tinyinit.core.arguments import KindError, shown

    accepted = "rng must be a generator whose uniform() returns floats in [0, 1), such as "
    accepted += "tinyinit.PCG32(seed), got {}, whose uniform() returned {}"
    refused = [
        (Returning(math.nan), ValueError, "nan"),
        (Returning(0.5, math.inf), ValueError, "inf"),
        (Returning(0.5, 0.25, 1.0), ValueError, "1.0"),
        (Returning(-1e-300), ValueError, "-1e-300"),
        (Returning("0.5"), KindError, "'0.5'"),  # float() would take it
        (Returning(None), KindError, "None"),
        (Returning(True), KindError, "True"),
        (Returning(0), KindError, "0"),
        (
            Returning(0.5, "x"),
            KindError,
            "a value that is no float (could not convert string to float: 'x')",
        ),
    ]
    assert_refused(
        (lambda rng=rng: draw(rng, 7), kind, accepted.format(repr(rng), returned))
        for rng, kind, returned in refused
    )
    # every block of a long draw is checked, not the first alone
    late = Returning(*[0.5] * BLOCK, math.nan)
    assert_refused(
        [(lambda: draw(late, BLOCK + 2), ValueError, accepted.format(shown(late), "nan"))]
    )
    # the least and the largest uniform are taken
    assert draw(Returning(0.0, math.nextafter(1.0, 0.0)), 2).shape == (2,)


def test_box_muller_makes_its_own_array_of_two_values_per_pair():
    u = uniforms(PCG32(5), 6)
    made = box_muller(u[0::2], u[1::2])
    assert made.shape == (6,) and made.dtype == np.float64
    np.testing.assert_array_equal(made, normal(PCG32(5), 6))
    given_out = np.full(6, np.nan)
    assert box_muller(u[0::2], u[1::2], out=given_out) is given_out
    np.testing.assert_array_equal(given_out, made)


def test_every_refusal_of_the_draws_is_worded_to_the_letter_and_each_range_taken_to_its_bound():
    from refusals import assert_refused

    from tinyinit.core.arguments import KindError
    from tinyinit.core.distributions import box_muller, scaled_uniform_float32, uniform_float32

    u = np.array([0.25, 0.5])
    uniforms_ = (
        "{} must hold uniforms in [0, 1), as many as u0, got an array of shape {} and dtype float64"
    )
    row = "{} must be a real array of 1 dimensions, got an array of shape (1, 2) and dtype float64"
    out = "out must be a float64 array of shape (4,), got an array of shape {} and dtype {}"
    assert_refused(
        [
            (lambda: box_muller(u.reshape(1, 2), u), ValueError, row.format("u0")),
            (lambda: box_muller(u, u.reshape(1, 2)), ValueError, row.format("u1")),
            (
                lambda: box_muller(np.array([0.25, 1.0]), u),
                ValueError,
                uniforms_.format("u0", "(2,)"),
            ),
            (
                lambda: box_muller(u, np.array([-1e-300, 0.5])),
                ValueError,
                uniforms_.format("u1", "(2,)"),
            ),
            (
                lambda: box_muller(u, np.array([0.5, 1.0])),
                ValueError,
                uniforms_.format("u1", "(2,)"),
            ),
            (lambda: box_muller(u, np.array([0.5])), ValueError, uniforms_.format("u1", "(1,)")),
            (
                lambda: box_muller(u, u, out=[0.0] * 4),
                KindError,
                "out must be None or a float64 array for the 2 * len(u0) normals, "
                "got [0.0, 0.0, 0.0, 0.0]",
            ),
            (
                lambda: box_muller(u, u, out=np.empty(4, np.float32)),
                ValueError,
                out.format("(4,)", "float32"),
            ),
            (lambda: box_muller(u, u, out=np.empty(3)), ValueError, out.format("(3,)", "float64")),
            (
                lambda: scaled_uniform_float32(PCG32(0), 2, 1e308),
                ValueError,
                "a must be a finite real number with 2a finite too, got 1e+308",
            ),
            (
                lambda: uniform_float32(PCG32(0), 2, -1e308, 1e308),
                ValueError,
                "high - low must be finite, got low=-1e+308 and high=1e+308",
            ),
        ]
    )
    # Each range from its bound: a uniform of 0 (Box-Muller's r is then 0), a std and an a of 0,
    # and the largest a whose 2a is finite (its weights beyond float32: inf, the package's
    # overflow).
    assert np.array_equal(box_muller(np.array([0.0]), np.array([0.0])), [0.0, 0.0])
    assert np.array_equal(scaled_normal_float32(PCG32(0), 2, 0.0), np.zeros(2, np.float32))
    assert np.array_equal(scaled_uniform_float32(PCG32(0), 2, 0.0), np.zeros(2, np.float32))
    assert np.isinf(scaled_uniform_float32(PCG32(0), 2, 7e307)).all()
    # Rejected values of a truncated draw are NaN, kept ones float32 values in [a, b].
    cut = scaled_normal_float32(PCG32(0), 1000, 1.0, bounds=(-0.5, 0.5))
    kept = cut[~np.isnan(cut)]
    assert 0 < len(kept) < 1000 and np.all(np.abs(kept) <= 0.5) and cut.dtype == np.float32
    # bounds one float apart are taken (a std of 0 keeps every value at the mean, inside)
    narrow = scaled_normal_float32(PCG32(0), 2, 0.0, 1.0, bounds=(1.0, math.nextafter(1.0, 2)))
    assert np.array_equal(narrow, [1.0, 1.0])
