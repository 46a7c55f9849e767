"""The test catalog of module card M07.3 (section 4), one test per row, on tinyinit.core.init.

The eleven catalog tests are defined once, in tinyinit/course/catalog.py, as `check_*`
functions that take an implementation (any namespace with fans, calculate_gain,
xavier_uniform, xavier_normal, kaiming_normal, normal_init and scaled_residual_std):
here they run on tinyinit.core.init, in tests/test_mutants.py on the card's pitfalls
(tests/mutants/), and through `python -m tinyinit check` on a student's file. A
failed check raises AssertionError.

The catalog computes its expected values from tinyinit's scalar PCG32.uniform() and
its normal; the tests below hold those against the scalar reference written from the
spec alone (tests/reference_pcg32.py), and the catalog's torch table against the
recorded fixture.
"""

from __future__ import annotations

import math
import sys
from decimal import Decimal, localcontext

import numpy as np
import reference_pcg32 as ref
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tinyinit.core.init as impl
from tinyinit import PCG32
from tinyinit.course import catalog
from tinyinit.course.catalog import NAMES, SEEDS, SHAPES, bits

# --- the card's eleven tests, in its order --------------------------------------------


def test_hand_example_linear_4x3():
    catalog.check_hand_example_linear_4x3(impl)


def test_fans_and_gains_match_torch():
    catalog.check_fans_and_gains_match_torch(impl)


def test_normal_inits_draw_spec_normals_in_c_order():
    catalog.check_normal_inits_draw_spec_normals_in_c_order(impl)


def test_uniform_uses_one_draw_per_element():
    catalog.check_uniform_uses_one_draw_per_element(impl)


def test_same_seed_same_weights():
    catalog.check_same_seed_same_weights(impl)


def test_empirical_variance_matches_the_formula():
    catalog.check_empirical_variance_matches_the_formula(impl)


def test_relu_signal_survives_20_layers():
    catalog.check_relu_signal_survives_20_layers(impl)


def test_tanh_signal_survives_with_xavier():
    catalog.check_tanh_signal_survives_with_xavier(impl)


def test_scaled_residual_keeps_the_stream_bounded():
    catalog.check_scaled_residual_keeps_the_stream_bounded(impl)


def test_shapes_and_dtype():
    catalog.check_shapes_and_dtype(impl)


def test_rejects_bad_arguments():
    catalog.check_rejects_bad_arguments(impl)


def test_every_catalog_test_is_here():
    assert all(callable(globals()[name]) for name in NAMES)
    assert len(NAMES) == 11


# --- what the catalog's expected values rest on -------------------------------------------


def test_the_catalogs_draws_are_the_scalar_references():
    big = (129, 2 * catalog.PAIRS_PER_BLOCK // 128 + 1)
    for shape in [*SHAPES, big]:
        n = math.prod(shape)
        for seed in SEEDS:
            assert catalog.spec_normals(seed, n).tolist() == ref.normal(ref.PCG32(seed), n)
            scalar = ref.PCG32(seed)
            expected = [scalar.uniform() for _ in range(min(n, 5000))]
            assert catalog.uniforms_one_by_one(PCG32(seed), len(expected)) == expected
        if len(shape) >= 2:
            assert catalog.card_fans(shape) == ref.fans(shape)


def test_golden_file_is_torchs_and_covers_the_whole_table():
    golden = catalog.torch_golden()  # tinyinit/data/init_torch.json, scripts/make_torch_golden.py
    assert golden["torch_version"].startswith("2.13.0")
    assert {case["nonlinearity"] for case in golden["gains"]} == set(impl.NONLINEARITIES)
    assert any(len(case["shape"]) == 5 for case in golden["fans"])  # conv3d


weight_shapes = st.tuples(st.integers(1, 6), st.integers(1, 6)) | st.tuples(
    st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3)
)


@settings(max_examples=15, deadline=None, database=None)
@given(seed=st.integers(0, 2**64 - 1), other=st.integers(0, 2**64 - 1), shape=weight_shapes)
def test_same_seed_same_weights_for_any_seeds_and_shapes(seed, other, shape):
    """The catalog's fixed cases, and more of the same drawn at random."""
    assume(seed != other)
    catalog.same_seed_same_weights(impl, seed, other, shape)


# --- tinyinit beyond the card's signatures ------------------------------------------------


def test_kaiming_normal_takes_the_leaky_relu_slope():
    """param, torch's `a`: the catalog's check of the spec normals, with slope 0.2."""
    catalog.draws_spec_normals_in_c_order(
        "kaiming_normal leaky_relu(0.2) fan_out",
        lambda s, rng: impl.kaiming_normal(s, "fan_out", "leaky_relu", rng, param=0.2),
        lambda fan_in, fan_out: math.sqrt(2 / (1 + 0.2**2)) / math.sqrt(fan_out),
    )


def test_initializers_equal_the_scalar_reference():
    """The reference's own initializers (card 2.3 and 2.4, spec 4) agree with tinyinit."""
    calls = [
        lambda m, s, rng: m.xavier_uniform(s, 0.7, rng),
        lambda m, s, rng: m.xavier_normal(s, 0.7, rng),
        lambda m, s, rng: m.kaiming_normal(s, "fan_out", "leaky_relu", rng, param=0.3),
        lambda m, s, rng: m.normal_init(s, 0.02, rng),
    ]
    for shape in SHAPES:
        for call in calls:
            assert bits(call(impl, shape, PCG32(9))) == bits(call(ref, shape, ref.PCG32(9)))
    assert impl.scaled_residual_std(0.02, 7) == ref.scaled_residual_std(0.02, 7)
    # layers in sequence from one generator, as the catalog's uniform test draws them
    for shape in SHAPES:
        rng, scalar = PCG32(5), ref.PCG32(5)
        for layer in ("first", "second"):
            w, expected = (
                impl.xavier_uniform(shape, 0.25, rng),
                ref.xavier_uniform(shape, 0.25, scalar),
            )
            assert bits(w) == bits(expected), f"{layer} layer {shape}"


def test_normal_init_adds_its_mean_to_each_scaled_normal():
    for shape in SHAPES:
        n = math.prod(shape)
        z = ref.normal(ref.PCG32(9), n)
        expected = np.array([0.02 * z_k + 0.5 for z_k in z]).astype(np.float32).reshape(shape)
        assert bits(impl.normal_init(shape, 0.02, PCG32(9), mean=0.5)) == bits(expected)


def test_normal_init_at_std_0_keeps_the_sign_of_each_normal():
    """A mean of 0 is not added: 0.0 * z is -0.0 for a negative z, as in the spec."""
    w = impl.normal_init((4, 3), 0.0, PCG32(0))
    z = ref.normal(ref.PCG32(0), 12)
    assert not w.any() and np.signbit(w).ravel().tolist() == [z_k < 0 for z_k in z]


def test_the_scale_helpers_refuse_each_bound_in_their_own_words():
    # Each argument's least value is taken (a fan of 1, a gain or std of 0) and one past it is
    # refused by the argument's name: a fan of 0 would divide by zero, a negative gain or std
    # would give a negative scale.
    from refusals import assert_refused

    assert impl.xavier_std(1, 1, 0.0) == impl.kaiming_std(1, 0.0) == impl.uniform_bound(0.0) == 0
    assert impl.xavier_bound(1, 1) == math.sqrt(3.0) and impl.kaiming_std(1, 1.0) == 1.0
    fan = "{} must be an integer >= 1, got 0"
    negative = "{} must be a finite real number >= 0, got -1.0"
    assert_refused(
        [
            (lambda: impl.xavier_std(0, 3), ValueError, fan.format("fan_in")),
            (lambda: impl.xavier_std(3, 0), ValueError, fan.format("fan_out")),
            (lambda: impl.xavier_std(3, 4, -1.0), ValueError, negative.format("gain")),
            (lambda: impl.xavier_bound(0, 3), ValueError, fan.format("fan_in")),
            (lambda: impl.xavier_bound(3, 0), ValueError, fan.format("fan_out")),
            (lambda: impl.xavier_bound(3, 4, -1.0), ValueError, negative.format("gain")),
            (lambda: impl.kaiming_std(0, 1.0), ValueError, fan.format("fan")),
            (lambda: impl.kaiming_std(3, -1.0), ValueError, negative.format("gain")),
            (lambda: impl.uniform_bound(-1.0), ValueError, negative.format("std")),
            (
                lambda: impl.sparse_init((4, 3), 0.5, -1.0, PCG32(0)),
                ValueError,
                negative.format("std"),
            ),
        ]
    )


def exactly(function, *args) -> Decimal:
    """function(*args) in 80 decimal digits, each argument (a float or an integer, Python's or
    numpy's) taken at its exact value."""
    with localcontext(prec=80):
        exact = (Decimal(int(a) if isinstance(a, (int, np.integer)) else float(a)) for a in args)
        return +function(*exact)


def within_ulps(got: float, exact: Decimal, ulps: int) -> bool:
    """Whether got is within `ulps` units in the last place of exact, subnormals included."""
    return abs(Decimal(got) - exact) <= ulps * Decimal(math.ulp(float(exact)))


def test_the_leaky_relu_gain_is_exact_for_every_slope_a_float_can_hold():
    # sqrt(2 / (1 + a**2)) recomputed in exact decimals: a slope whose square is past float
    # range gives its gain, not 0, and a numpy integer's square does not wrap around.
    def gain(a):
        return (2 / (1 + a * a)).sqrt()

    slopes = [1e-300, 0.01, 0.2, math.sqrt(5.0), -10.0, 1e8, 1e100, 1e153, 9e153, 1e154]
    slopes += [1.5e154, 1e155, -1e200, 1e300, -sys.float_info.max, 10**300]
    slopes += [np.float32(1e20), np.float32(-3e38), np.float16(300), np.float16(65504)]
    slopes += [np.int8(20), np.int64(-(2**40))]
    for a in slopes:
        assert within_ulps(impl.calculate_gain("leaky_relu", a), exactly(gain, a), 2), a
    # where the square is in range, torch's formula to the bit, a float32 in float32
    for a in [0.0, 0.01, -0.2, math.sqrt(5.0), 10.0, 1e8, 1e150]:
        assert impl.calculate_gain("leaky_relu", a) == math.sqrt(2.0 / (1 + a * a)), a
    a32 = np.float32(0.2)
    assert impl.calculate_gain("leaky_relu", a32) == math.sqrt(2.0 / (1 + a32 * a32))


def test_the_scales_take_fans_and_depths_of_any_size_and_refuse_a_gain_no_float_holds():
    # Past 2**1024 an int is past float range, where math.sqrt(n) and 2.0 / n raise
    # OverflowError: the scales are computed all the same, checked against exact decimals
    # (one beyond the smallest float is 0, as 1e-400 is), and to the bit as before in range.
    def kaiming(n, gain):
        return gain / n.sqrt()

    def xavier(n, gain, c=2):
        return gain * (c / (n + 1)).sqrt()

    def residual(n, std):
        return std / (2 * n).sqrt()

    for n in [2**1023 - 1, 2**1023, 2**1024, 2**1100, 3**2000, 10**400, 2**5000]:
        for x in [1.0, 0.02, 1e300]:
            assert within_ulps(impl.kaiming_std(n, x), exactly(kaiming, n, x), 2), n
            assert within_ulps(impl.xavier_std(n, 1, x), exactly(xavier, n, x), 2), n
            assert within_ulps(impl.xavier_bound(1, n, x), exactly(xavier, n, x, 6), 2), n
            assert within_ulps(impl.scaled_residual_std(x, n), exactly(residual, n, x), 2), n
    for n in [1, 3, 12, 2**53 + 1, 2**1000]:
        assert impl.kaiming_std(n, 1.4) == 1.4 / math.sqrt(n)
        assert impl.xavier_std(n, 1, 1.4) == 1.4 * math.sqrt(2.0 / (n + 1))
        assert impl.xavier_bound(1, n, 1.4) == 1.4 * math.sqrt(6.0 / (n + 1))
        assert impl.scaled_residual_std(1.4, n) == 1.4 / math.sqrt(2 * n)
    assert impl.kaiming_std(2**1100, 1.0) == impl.scaled_residual_std(1.0, 2**1099) == 2.0**-550
    assert np.array_equal(
        impl.torch_default_bias((5,), 2**1100, PCG32(3)),
        impl.uniform_init((5,), -(2.0**-550), 2.0**-550, PCG32(3)),
    )
    from refusals import assert_refused

    past = "gain must be a finite real number >= 0, one a float can hold, got 1" + "0" * 75 + " ..."
    assert_refused([(lambda: impl.kaiming_std(3, 10**400), ValueError, past)])


def test_torch_default_bias_is_uniform_within_one_over_root_fan_in_from_a_fan_of_1():
    # torch's rule: bound 1/sqrt(fan_in), and 0 (a bias of zeros, drawn all the same) for a fan
    # of 0. A fan of 1 is the first with a bound, 1.
    drawn = impl.torch_default_bias((5,), 1, PCG32(3))
    assert np.array_equal(drawn, impl.uniform_init((5,), -1.0, 1.0, PCG32(3)))
    assert np.abs(drawn).max() > 1 / math.sqrt(2)  # not a smaller bound
    rng, drawn_past = PCG32(3), PCG32(3)
    assert np.array_equal(impl.torch_default_bias((5,), 0, rng), np.zeros(5, np.float32))
    impl.uniform_init((5,), -1.0, 1.0, drawn_past)
    assert rng.state == drawn_past.state  # the generator moves on as torch's does
