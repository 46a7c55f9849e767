"""tinyinit.PCG32 gives exactly the words and uniforms of docs/spec.md, however it is driven."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import reference_pcg32 as ref
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tinyinit import PCG32
from tinyinit.core.pcg32 import BLOCK_WORDS

seeds = st.integers(0, 2**64 - 1)
streams = st.integers(0, 2**63 - 1)


def around_multiples(unit: int) -> list[int]:
    """Sizes within 1 of one and two multiples of `unit`, where one block ends and one starts."""
    return [m * unit + d for m in (1, 2) for d in (-1, 0, 1)]


small_counts = st.integers(0, 41)
few = settings(max_examples=15, deadline=None)
boundary = settings(max_examples=2, deadline=None)


def reference_words(rng: ref.PCG32, n: int) -> list[int]:
    return [rng.next_u32() for _ in range(n)]


# --- spec section 6: the test vectors ----------------------------------------------


def test_spec_words_of_seed_0_and_42():
    rng0, rng42 = PCG32(0), PCG32(42)
    assert [rng0.next_u32() for _ in range(4)] == [1203932051, 3113183783, 2101201694, 4034269462]
    assert [rng42.next_u32() for _ in range(4)] == [2707161783, 2068313097, 3122475824, 2211639955]
    assert PCG32(0).words(4).tolist() == [1203932051, 3113183783, 2101201694, 4034269462]
    assert PCG32(42).words(4).tolist() == [2707161783, 2068313097, 3122475824, 2211639955]


def test_spec_first_two_uniforms_of_seed_0():
    rng = PCG32(0)
    assert [rng.uniform(), rng.uniform()] == [0.2803122753265841, 0.4892241428740438]
    assert PCG32(0).uniforms(2).tolist() == [0.2803122753265841, 0.4892241428740438]


def test_reference_matches_the_spec_vectors():
    """The reference itself is right, so the property tests below compare with the spec."""
    assert reference_words(ref.PCG32(0), 4) == [1203932051, 3113183783, 2101201694, 4034269462]
    assert reference_words(ref.PCG32(42), 4) == [2707161783, 2068313097, 3122475824, 2211639955]
    assert ref.PCG32(0).uniform() == 0.2803122753265841


# --- the block path against the scalar reference -------------------------------------


def check_words(seed: int, stream: int, n: int) -> None:
    rng, scalar = PCG32(seed, stream), ref.PCG32(seed, stream)
    assert rng.words(n).tolist() == reference_words(scalar, n)
    assert rng.state == scalar.state  # the block path leaves the generator where n steps do
    assert rng.next_u32() == scalar.next_u32()


def check_uniforms(seed: int, stream: int, n: int) -> None:
    rng, scalar = PCG32(seed, stream), ref.PCG32(seed, stream)
    u = rng.uniforms(n)
    assert u.dtype == np.float64
    assert u.tolist() == [scalar.uniform() for _ in range(n)]
    assert rng.state == scalar.state


@few
@given(seed=seeds, stream=streams, n=small_counts)
def test_words_equal_scalar_steps(seed, stream, n):
    check_words(seed, stream, n)


@pytest.mark.parametrize("n", around_multiples(BLOCK_WORDS))
@boundary
@given(seed=seeds, stream=streams)
def test_words_equal_scalar_steps_across_block_boundaries(n, seed, stream):
    check_words(seed, stream, n)


@few
@given(seed=seeds, stream=streams, n=small_counts)
def test_uniforms_equal_scalar_uniforms(seed, stream, n):
    check_uniforms(seed, stream, n)


@pytest.mark.parametrize("n", around_multiples(BLOCK_WORDS // 2))  # two words per uniform
@boundary
@given(seed=seeds, stream=streams)
def test_uniforms_equal_scalar_uniforms_across_block_boundaries(n, seed, stream):
    check_uniforms(seed, stream, n)


@settings(max_examples=30, deadline=None)
@given(seed=seeds, stream=streams, sizes=st.lists(st.integers(0, 9), max_size=6))
def test_mixed_scalar_and_block_draws_stay_on_one_sequence(seed, stream, sizes):
    rng, scalar = PCG32(seed, stream), ref.PCG32(seed, stream)
    for n in sizes:
        assert rng.words(n).tolist() == reference_words(scalar, n)
        assert rng.uniform() == scalar.uniform()
        assert rng.uniforms(n).tolist() == [scalar.uniform() for _ in range(n)]


@settings(max_examples=40, deadline=None)
@given(seed=seeds, stream=streams)
def test_seeding_follows_pcg32_srandom_r(seed, stream):
    rng, scalar = PCG32(seed, stream), ref.PCG32(seed, stream)
    assert (rng.state, rng.inc) == (scalar.state, scalar.inc)
    assert PCG32(seed).inc == ref.PCG32(seed).inc == 109  # stream 54: (54 << 1) | 1


# --- advance(k) ----------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(seed=seeds, stream=streams, k=st.integers(0, 3000))
@example(seed=0, stream=54, k=0)
def test_advance_equals_k_steps(seed, stream, k):
    rng, scalar = PCG32(seed, stream), ref.PCG32(seed, stream)
    reference_words(scalar, k)
    assert rng.advance(k).state == scalar.state
    assert rng.next_u32() == scalar.next_u32()


@settings(max_examples=30, deadline=None)
@given(seed=seeds, stream=streams, k=st.integers(0, 2**70))
@example(seed=5, stream=54, k=2**64)
@example(seed=5, stream=54, k=2**64 - 1)
def test_advance_far_ahead_matches_the_closed_form(seed, stream, k):
    rng = PCG32(seed, stream)
    expected = ref.jumped_state(rng.state, rng.inc, k)
    assert rng.advance(k).state == expected


@settings(max_examples=30, deadline=None)
@given(seed=seeds, stream=streams, k=st.integers(1, 2**64), j=st.integers(0, 2**64))
def test_negative_advance_goes_back(seed, stream, k, j):
    rng = PCG32(seed, stream)
    start = rng.state
    assert rng.advance(k).advance(-k).state == start
    assert rng.copy().advance(j).advance(k).state == rng.copy().advance(j + k).state
    assert PCG32(seed, stream).advance(2**64).state == start  # the period


def test_advance_back_one_replays_the_last_word():
    rng = PCG32(7)
    rng.words(10)
    last = rng.copy().advance(-1).next_u32()
    rng.advance(-1)
    assert rng.next_u32() == last == reference_words(ref.PCG32(7), 10)[-1]


def test_advance_returns_the_generator_for_chaining():
    rng = PCG32(3)
    assert rng.advance(5) is rng


# --- snapshots ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "snapshot",
    [
        PCG32.copy,
        copy.copy,
        copy.deepcopy,
        lambda rng: pickle.loads(pickle.dumps(rng)),
    ],
    ids=["copy-method", "copy.copy", "copy.deepcopy", "pickle"],
)
def test_snapshots_are_independent(snapshot):
    rng = PCG32(123, 9)
    rng.words(5)
    twin = snapshot(rng)
    assert twin == rng and twin is not rng
    ahead = rng.words(50).tolist()
    assert twin.words(50).tolist() == ahead  # the snapshot did not move
    twin.uniforms(10)
    assert rng.words(3).tolist() == reference_words(_reference_after(123, 9, 55), 3)


def _reference_after(seed: int, stream: int, steps: int) -> ref.PCG32:
    scalar = ref.PCG32(seed, stream)
    reference_words(scalar, steps)
    return scalar


def test_generators_compare_by_position_and_are_unhashable():
    assert PCG32(1) == PCG32(1)
    assert PCG32(1) != PCG32(2)
    assert PCG32(1) != PCG32(1, stream=3)
    with pytest.raises(TypeError):
        hash(PCG32(1))


# --- arguments ----------------------------------------------------------------------


@pytest.mark.parametrize("bad", [1.5, "3", None, True])
def test_seed_must_be_an_integer(bad):
    with pytest.raises(ValueError, match=r"seed must be an integer, got"):
        PCG32(bad)


@pytest.mark.parametrize("bad", [-1, 2.0, True])
def test_counts_must_be_non_negative_integers(bad):
    rng = PCG32(0)
    with pytest.raises(ValueError, match=r"n must be a non-negative integer, got"):
        rng.words(bad)
    with pytest.raises(ValueError, match=r"n must be a non-negative integer, got"):
        rng.uniforms(bad)
    assert rng == PCG32(0)


def test_seeds_reduce_mod_2_64_like_uint64():
    assert PCG32(-1) == PCG32(2**64 - 1)
    assert PCG32(2**64 + 5) == PCG32(5)


def test_seed_stream_and_advance_are_taken_mod_2_64():
    """The spec's state is 64 bits: a seed, stream or step count beyond them wraps around."""
    wrap = 2**64
    expected = PCG32(5, 7).words(4)
    np.testing.assert_array_equal(PCG32(5 + wrap, 7 + wrap).words(4), expected)
    np.testing.assert_array_equal(PCG32(5 - wrap, 7 - 3 * wrap).words(4), expected)
    assert (PCG32(-1).words(2) == PCG32(wrap - 1).words(2)).all()
    np.testing.assert_array_equal(
        PCG32(5, 7).advance(3 + wrap).words(4), PCG32(5, 7).advance(3).words(4)
    )
