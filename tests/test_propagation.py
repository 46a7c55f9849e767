"""Signal propagation: the theory against closed forms and Monte Carlo, the simulation
against the module card's claims, and the explorer's weights against the initializers."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from tinyinit import (
    PCG32,
    calculate_gain,
    kaiming_normal,
    normal_init,
    xavier_normal,
    xavier_uniform,
)
from tinyinit import activations as acts
from tinyinit import propagation as prop
from tinyinit.activations import ACTIVATIONS, LEAKY_RELU_SLOPE
from tinyinit.distributions import normal
from tinyinit.gaussian import gaussian_expectation
from tinyinit.propagation import (
    UnitWeights,
    layer_weights,
    mean_field,
    propagate,
    simulate,
    unit_batch,
    unit_matrix,
)

RELU_GAIN = math.sqrt(2.0)


def square(name):
    phi = ACTIVATIONS[name].phi
    return lambda z: phi(z) ** 2


def reference_expectation(f, q, n=200_001, cutoff=40.0):
    """E[f(z)], z ~ N(0, q), by trapezoid rules on each half line, Richardson-extrapolated.

    Split at 0 because relu-like functions and their slopes jump or bend there;
    each half is smooth, the trapezoid error is c h**2 + O(h**4), and
    (4 T(h/2) - T(h)) / 3 removes the h**2 term: about 1e-15 with h = 2e-4.
    """

    def half(sign, n):
        x = sign * np.linspace(0.0, cutoff, n)
        x[0] = sign * 1e-300  # the one-sided limit at 0
        with np.errstate(all="ignore"):
            y = f(math.sqrt(q) * x) * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
        return abs(np.trapezoid(y, x))

    def both(n):
        return half(1.0, n) + half(-1.0, n)

    return (4 * both(2 * n - 1) - both(n)) / 3


# --- theory: quadrature against closed forms -------------------------------------------


@pytest.mark.parametrize("q", [1e-8, 0.01, 0.5, 1.0, 2.0, 37.0, 1e6])
def test_quadrature_matches_closed_forms(q):
    assert gaussian_expectation(square("linear"), q) == pytest.approx(q, rel=1e-12)
    assert gaussian_expectation(square("relu"), q) == pytest.approx(q / 2, rel=1e-12)
    leaky = (1 + LEAKY_RELU_SLOPE**2) / 2 * q
    assert gaussian_expectation(square("leaky_relu"), q) == pytest.approx(leaky, rel=1e-12)
    # phi'(z)**2 of relu is the indicator of z > 0: probability 1/2.
    relu_slope = gaussian_expectation(lambda z: ACTIVATIONS["relu"].dphi(z) ** 2, q)
    assert relu_slope == pytest.approx(0.5, rel=1e-12)


@pytest.mark.parametrize("q", [0.01, 0.3, 1.0, 1.1785, 3.0, 30.0])
@pytest.mark.parametrize("name", ["tanh", "sigmoid", "selu"])
def test_quadrature_matches_a_high_precision_reference(name, q):
    act = ACTIVATIONS[name]
    for f in (lambda z: act.phi(z) ** 2, lambda z: act.dphi(z) ** 2):
        assert gaussian_expectation(f, q) == pytest.approx(reference_expectation(f, q), rel=1e-10)


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "selu", "relu"])
def test_theory_matches_monte_carlo(name):
    rng = np.random.default_rng(0)
    n = 400_000
    act = ACTIVATIONS[name]
    for q in (0.25, 1.0, 4.0):
        z = math.sqrt(q) * rng.standard_normal(n)
        for f in (lambda v: act.phi(v) ** 2, lambda v: act.dphi(v) ** 2):
            sample = f(z)
            stderr = sample.std() / math.sqrt(n)
            assert abs(gaussian_expectation(f, q) - sample.mean()) < 5 * stderr + 1e-12


def test_mean_field_recursions_in_closed_form():
    layers = np.arange(21)
    # Xavier + relu: n std**2 = 1 and E[relu(z)**2] = q / 2, so m_l = 2**-l.
    np.testing.assert_allclose(mean_field("relu", 1.0, 20), 2.0**-layers, rtol=1e-12)
    # Kaiming + relu: n std**2 = 2, the mean square stays 1, forward and backward.
    np.testing.assert_allclose(mean_field("relu", 2.0, 20), 1.0, rtol=1e-12)
    np.testing.assert_allclose(mean_field("relu", 2.0, 20, "backward"), 1.0, rtol=1e-12)
    # Linear: a factor n std**2 per layer; backward from the top down.
    np.testing.assert_allclose(mean_field("linear", 3.0, 5), 3.0 ** np.arange(6), rtol=1e-12)
    back = mean_field("linear", 3.0, 5, "backward")
    np.testing.assert_allclose(back, 3.0 ** np.arange(5, -1, -1), rtol=1e-12)
    leaky = (1 + LEAKY_RELU_SLOPE**2) / 2
    np.testing.assert_allclose(mean_field("leaky_relu", 1.0, 4), leaky ** np.arange(5), rtol=1e-12)


def test_card_tanh_numbers_are_the_mean_square_of_the_activations():
    """0.42 with gain 5/3, about 0.026 after 20 layers with gain 1: E[h**2], not Var(z)."""
    settled = mean_field("tanh", (5 / 3) ** 2, 20)[-1]
    assert settled == pytest.approx(0.4243, abs=1e-3)
    assert mean_field("tanh", 1.0, 20)[-1] == pytest.approx(0.0259, abs=1e-3)


def test_derivatives_match_finite_differences():
    z = np.linspace(-3.0, 3.0, 61)
    z = z[np.abs(z) > 1e-3]  # away from the kinks at 0
    h = 1e-6
    for name, act in ACTIVATIONS.items():
        numeric = (act.phi(z + h) - act.phi(z - h)) / (2 * h)
        np.testing.assert_allclose(act.dphi(z), numeric, rtol=1e-6, atol=1e-8, err_msg=name)


def test_selu_uses_the_exact_constants():
    assert acts.SELU_ALPHA == 1.6732632423543772
    assert acts.SELU_SCALE == 1.0507009873554805
    # Self-normalizing: with n std**2 = 1, N(0, 1) in gives mean square 1 out.
    assert mean_field("selu", 1.0, 1)[-1] == pytest.approx(1.0, abs=1e-6)


# --- the module card's three claims, measured ------------------------------------------


def test_kaiming_keeps_a_20_layer_relu_stack_within_a_factor_16():
    r = simulate("relu", "kaiming_fan_in", gain=RELU_GAIN, n_layers=20, width=256, seeds=3)
    ratios = r.per_seed[:, 20] / r.per_seed[:, 1]
    assert np.all((ratios > 1 / 16) & (ratios < 16)), ratios
    assert np.all((r.per_seed[:, 20] > 1 / 16) & (r.per_seed[:, 20] < 16))


def test_xavier_collapses_a_20_layer_relu_stack_by_about_2_to_the_19():
    r = simulate("relu", "xavier_uniform", gain=1.0, n_layers=20, width=256, seeds=3)
    ratios = r.per_seed[:, 20] / r.per_seed[:, 1]
    assert np.all(ratios < 1e-4), ratios
    assert abs(math.log2(r.ratio(start=1)) + 19) < 1.0
    assert abs(math.log2(r.measured_end) + 20) < 1.0  # and 2**-20 of the input


def test_tanh_settles_near_042_with_gain_5_3_and_drains_with_gain_1():
    settled = simulate("tanh", "xavier_uniform", gain=5 / 3, n_layers=20, width=256, seeds=3)
    drained = simulate("tanh", "xavier_uniform", gain=1.0, n_layers=20, width=256, seeds=3)
    assert 0.1 < settled.measured_end < 1
    assert settled.measured_end == pytest.approx(0.42, abs=0.03)
    assert drained.measured_end < settled.measured_end / 2
    assert drained.measured_end == pytest.approx(drained.theory_end, rel=0.15)


@pytest.mark.parametrize("name", ["linear", "relu", "leaky_relu", "tanh", "sigmoid", "selu"])
@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_measured_follows_theory_at_default_gains(name, direction):
    gain = calculate_gain(name)
    r = simulate(name, "kaiming_fan_in", gain=gain, n_layers=10, width=256, seeds=3,
                 direction=direction)  # fmt: skip
    # Finite width: the log of the mean square wanders like a random walk, a few
    # percent per layer; a factor 2 over 10 layers is a loose, safe bound.
    np.testing.assert_allclose(r.median, r.theory, rtol=1.0)
    assert r.per_seed[:, r.end_layer].min() > 0


def test_backward_xavier_relu_gradient_halves_per_layer():
    r = simulate("relu", "xavier_uniform", n_layers=20, width=256, seeds=3, direction="backward")
    assert r.per_seed[0, 20] == pytest.approx(1.0)  # the upstream gradient
    assert abs(math.log2(r.measured_end) + 20) < 1.0
    np.testing.assert_allclose(r.theory, 2.0 ** -np.arange(20, -1, -1), rtol=1e-12)


def test_layer_zero_is_the_unit_input():
    x = unit_batch(64, 8, 3, prop.INPUT_STREAM)
    assert x.shape == (64, 8)
    assert np.mean(x * x) == pytest.approx(1.0, rel=1e-14)
    r = simulate("tanh", "xavier_normal", n_layers=3, width=64, seeds=2)
    np.testing.assert_allclose(r.per_seed[:, 0], 1.0, rtol=1e-14)
    assert r.theory[0] == 1.0


# --- extreme settings: inf and 0, never an exception or a warning ----------------------


@pytest.mark.parametrize(
    "settings, overflow, zero",
    [
        (
            dict(activation="linear", initializer="xavier_uniform", gain=3.0, n_layers=100),
            None,
            None,
        ),
        (dict(activation="relu", initializer="xavier_uniform", gain=0.0), None, 1),
        (dict(activation="relu", initializer="normal", std=0.0), None, 1),
        (dict(activation="linear", initializer="normal", std=10.0, n_layers=100), 70, None),
        (dict(activation="relu", initializer="normal", std=0.001, n_layers=100), None, 84),
        (dict(activation="tanh", initializer="normal", std=10.0, n_layers=100), None, None),
        (dict(activation="sigmoid", initializer="normal", std=0.0), None, None),
    ],
)
@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_extreme_settings_give_inf_or_zero_without_warnings(settings, overflow, zero, direction):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = simulate(width=256, seeds=2, direction=direction, **settings)
    assert not np.isnan(r.per_seed).any() and not np.isnan(r.theory).any()
    if direction == "forward":
        assert r.overflow_from == overflow
        assert r.underflow_from == zero
        if overflow is not None:
            assert np.isinf(r.median[overflow:]).all()
            assert np.isfinite(r.median[:overflow]).all()
        if zero is not None:
            assert (r.median[zero:] == 0).all()


def test_sigmoid_with_zero_weights_sits_at_one_quarter():
    r = simulate("sigmoid", "normal", std=0.0, n_layers=5, width=16, seeds=1)
    np.testing.assert_array_equal(r.per_seed[0, 1:], 0.25)
    np.testing.assert_allclose(r.theory[1:], 0.25, rtol=1e-15)


# --- the explorer's weights are the initializers' weights ------------------------------


def stack(init, width, depth, seed):
    """Layers 1 .. depth as a model initializes them: one generator, layer after layer."""
    rng = PCG32(seed)
    return [init((width, width), rng) for _ in range(depth)]


INITIALIZER_CALLS = {
    "xavier_uniform": lambda g, s: lambda shape, rng: xavier_uniform(shape, g, rng),
    "xavier_normal": lambda g, s: lambda shape, rng: xavier_normal(shape, g, rng),
    "kaiming_fan_in": lambda g, s: lambda shape, rng: kaiming_normal(shape, "fan_in", "relu", rng),
    "kaiming_fan_out": lambda g, s: (
        lambda shape, rng: kaiming_normal(shape, "fan_out", "tanh", rng)
    ),
    "normal": lambda g, s: lambda shape, rng: normal_init(shape, s, rng),
}
GAINS = {"kaiming_fan_in": RELU_GAIN, "kaiming_fan_out": 5 / 3}


@pytest.mark.parametrize("initializer", list(INITIALIZER_CALLS))
@pytest.mark.parametrize("width", [5, 6])
@pytest.mark.parametrize("seed", [0, 7])
def test_layer_weights_are_the_initializer_output_bit_for_bit(initializer, width, seed):
    gain, std = GAINS.get(initializer, 0.7), 0.3
    expected = stack(INITIALIZER_CALLS[initializer](gain, std), width, 4, seed)
    for layer in range(1, 5):
        w = layer_weights(initializer, width, layer, seed, gain=gain, std=std)
        assert w.dtype == np.float64 and w.shape == (width, width)
        np.testing.assert_array_equal(w.astype(np.float32), expected[layer - 1])


def test_layer_weights_at_full_width():
    expected = stack(lambda shape, rng: xavier_uniform(shape, 1.0, rng), 256, 2, 1)
    w = layer_weights("xavier_uniform", 256, 2, 1)
    np.testing.assert_array_equal(w.astype(np.float32), expected[1])
    rng = PCG32(2)
    for _ in range(3):
        expected = kaiming_normal((256, 256), "fan_in", "relu", rng)
    w = layer_weights("kaiming_fan_in", 256, 3, 2, gain=RELU_GAIN)
    np.testing.assert_array_equal(w.astype(np.float32), expected)


@pytest.mark.parametrize("scale", [2.0**-1060, 1e-300, 1e-30, 1.0, 1e30, 1e300, 2.0**1020])
def test_float32_products_keep_24_bits_at_any_scale(scale):
    unit = unit_matrix("normal", 32, 1, seed=3)
    h = unit_batch(32, 8, seed=3, stream=prop.INPUT_STREAM) * scale
    with np.errstate(all="ignore"):
        # In long double where the machine has one (x86: to 1e4932), so that no partial
        # sum overflows: a product is inf where its value is beyond float64, no sooner.
        wide = unit.astype(np.longdouble) @ h.astype(np.longdouble)
        exact = wide.astype(np.float64)
        fast = prop.product(unit.astype(np.float32), h)
        hinted = prop.product(unit.astype(np.float32), h, 1.0, prop.mean_square(h))
        size = (np.abs(unit).astype(np.longdouble) @ np.abs(h)).astype(np.float64)
    assert fast.dtype == np.float64
    np.testing.assert_array_equal(np.isfinite(fast), np.isfinite(exact))
    # A float32 sum of n = 32 products of rounded factors is off by at most about
    # (n + 2) * 2**-24 of the sum of their sizes (a sum that cancels, relatively more).
    finite = np.isfinite(exact) & (size > 1e-290)
    for product in (fast, hinted):  # sized by max|h|, and by its root mean square
        error = np.abs(product[finite] - exact[finite])
        assert (error <= 34 * 2.0**-24 * size[finite]).all()


def test_float32_products_pass_zeros_inf_and_nan_through():
    unit = np.ones((2, 2), dtype=np.float32)
    with np.errstate(all="ignore"):
        assert (prop.product(unit, np.zeros((2, 3))) == 0).all()
        assert np.isinf(prop.product(unit, np.array([[np.inf], [1.0]]))).all()
        assert np.isnan(prop.product(unit, np.array([[np.nan], [1.0]]))).all()
        assert np.isinf(prop.product(unit, np.full((2, 1), 1.7e308))).all()  # 3.4e308: beyond


@pytest.mark.parametrize("size", [1e-3, 0.5, 1.0, 3.0, 1e3])
def test_a_float32_unit_multiplies_in_float32_at_any_size_of_h(size):
    unit = unit_matrix("normal", 16, 1, seed=3).astype(np.float32)
    h = unit_batch(16, 4, seed=3, stream=prop.INPUT_STREAM) * size
    # h's rescaling by a power of 2 is exact: the float32 product of h itself, bit for bit
    expected = (unit @ h.astype(np.float32)).astype(np.float64)
    assert prop.product(unit, h).tolist() == expected.tolist()
    assert prop.product(unit, h, 1.0, prop.mean_square(h)).tolist() == expected.tolist()


def test_a_float32_product_beyond_float64s_powers_of_2_is_still_in_float32():
    unit = unit_matrix("normal", 16, 1, seed=3).astype(np.float32)
    h = unit_batch(16, 4, seed=3, stream=prop.INPUT_STREAM)
    # 2**1006 and 2**-1000 are taken in exact steps; the result is 32 times the float32 product
    expected = (32.0 * (unit @ h.astype(np.float32)).astype(np.float64)).tolist()
    assert prop.product(unit, h * 2.0**1005, 2.0**-1000).tolist() == expected


def test_a_float32_product_whose_factor_underflows_keeps_a_subnormal_result():
    unit = np.ones((1, 256), dtype=np.float32)
    h = np.full((256, 1), 2.0**-60)  # factor 2**-1020 * 2**-59 is below float64's smallest
    assert prop.product(unit, h, 2.0**-1020).tolist() == [[2.0**-1072]]  # as in float64


def test_a_float32_product_is_sized_by_the_largest_entry_even_a_negative_one():
    unit = np.ones((1, 2), dtype=np.float32)
    h = np.array([[1e-30], [-1e30]])  # sized by 1e-30, -1e30 would be far beyond float32
    np.testing.assert_allclose(prop.product(unit, h), [[-1e30]], rtol=1e-7)


def test_simulation_agrees_with_float64_products():
    """The cache's float32 units and products against float64 ones, layer by layer."""
    width, depth, seed = 64, 12, 2
    x = unit_batch(width, 16, seed, prop.INPUT_STREAM)
    for activation_name in ("relu", "tanh", "gelu"):
        kind, scale = prop.unit_scale("kaiming_fan_in", width, width, 1.7)
        units = [unit_matrix(kind, width, k, seed) for k in range(1, depth + 1)]
        exact = propagate(units, scale, activation_name, x)
        r = simulate(activation_name, "kaiming_fan_in", gain=1.7, n_layers=depth, width=width,
                     seeds=[seed], batch=16)  # fmt: skip
        np.testing.assert_allclose(r.per_seed[0], exact, rtol=1e-5)


def test_simulation_multiplies_by_exactly_those_weights():
    width, depth, seed, gain = 32, 4, 5, 1.3
    x = unit_batch(width, 8, seed, prop.INPUT_STREAM)
    for initializer in ("xavier_uniform", "kaiming_fan_in"):
        weights = [layer_weights(initializer, width, k, seed, gain=gain) for k in range(1, 5)]
        h, expected = x, [1.0]
        for w in weights:
            h = np.tanh(w @ h)
            expected.append(np.mean(h * h))
        kind, scale = prop.unit_scale(initializer, width, width, gain)
        units = [unit_matrix(kind, width, k, seed) for k in range(1, depth + 1)]
        measured = propagate(units, scale, "tanh", x)
        np.testing.assert_allclose(measured, expected, rtol=1e-12)


def test_unit_matrices_are_drawn_once_and_rescaled():
    cache = UnitWeights()
    simulate("relu", "xavier_uniform", gain=1.0, n_layers=10, width=32, seeds=2, cache=cache)
    assert cache.draws == 20
    for gain in (0.5, 1.5, 2.5):  # a gain slider: rescale only
        simulate("relu", "xavier_uniform", gain=gain, n_layers=10, width=32, seeds=2, cache=cache)
        simulate("tanh", "xavier_uniform", gain=gain, n_layers=10, width=32, seeds=2, cache=cache,
                 direction="backward")  # fmt: skip
    assert cache.draws == 20
    simulate("relu", "xavier_uniform", n_layers=15, width=32, seeds=2, cache=cache)
    assert cache.draws == 30  # deeper: only the 5 new layers per seed
    simulate("relu", "xavier_normal", n_layers=15, width=32, seeds=2, cache=cache)
    simulate("relu", "kaiming_fan_in", gain=2.0, n_layers=15, width=32, seeds=2, cache=cache)
    simulate("relu", "normal", std=0.1, n_layers=15, width=32, seeds=2, cache=cache)
    assert cache.draws == 60  # every normal initializer shares the standard normals


def test_deeper_stack_from_memo_equals_a_fresh_pass():
    cache = UnitWeights()
    for depth in (3, 9, 5, 12):
        simulate("selu", "xavier_normal", gain=1.1, n_layers=depth, width=32, seeds=2, cache=cache)
    memo = simulate("selu", "xavier_normal", gain=1.1, n_layers=12, width=32, seeds=2, cache=cache)
    fresh = simulate("selu", "xavier_normal", gain=1.1, n_layers=12, width=32, seeds=2,
                     cache=UnitWeights())  # fmt: skip
    assert len(cache.forward_memo) == 2  # one pass per seed, grown and sliced
    np.testing.assert_array_equal(memo.per_seed, fresh.per_seed)


def test_cache_drops_least_recently_used_entries_beyond_its_budget():
    layer = 16 * 16 * 4  # one float32 (16, 16) unit matrix
    cache = UnitWeights(max_bytes=3 * layer)
    units = cache.get("uniform", 16, 0, 2)
    assert all(u.dtype == np.float32 and not u.flags.writeable for u in units)
    cache.get("normal", 16, 0, 2)  # over budget: the uniform entry goes
    assert cache.nbytes == 2 * layer
    assert len(cache.get("normal", 16, 0, 2)) == 2 and cache.draws == 4
    cache = UnitWeights(max_bytes=2 * layer)
    cache.get("uniform", 16, 0, 1)
    cache.get("normal", 16, 0, 1)  # exactly the budget: both stay
    assert cache.nbytes == 2 * layer
    cache = UnitWeights(max_bytes=1)
    cache.get("uniform", 16, 0, 1)
    assert len(cache.get("normal", 16, 0, 2)) == 2  # over any budget, the newest stays
    assert cache.nbytes == 2 * layer and cache.draws == 3


def test_cache_keeps_the_last_memo_size_input_batches():
    cache = UnitWeights(memo_size=2)
    first = cache.batch(8, 4, 0, prop.INPUT_STREAM)
    other = cache.batch(8, 4, 1, prop.INPUT_STREAM)
    assert other.tolist() == unit_batch(8, 4, 1, prop.INPUT_STREAM).tolist() != first.tolist()
    assert cache.batch(8, 4, 0, prop.INPUT_STREAM) is first  # two fit
    cache.memo_size = 1
    assert cache.batch(8, 4, 2, prop.INPUT_STREAM).tolist() == unit_batch(8, 4, 2, 1).tolist()
    assert cache.batch(8, 4, 0, prop.INPUT_STREAM) is not first  # dropped, drawn again


def test_rejects_unknown_names():
    with pytest.raises(ValueError, match="activation must be one of"):
        simulate("swish", n_layers=2, width=8, seeds=1)
    with pytest.raises(ValueError, match="initializer must be one of"):
        simulate("relu", "orthogonal", n_layers=2, width=8, seeds=1)
    with pytest.raises(ValueError, match="direction"):
        simulate("relu", n_layers=2, width=8, seeds=1, direction="sideways")


@pytest.mark.parametrize("activation_name", ["relu", "leaky_relu", "linear"])
def test_a_homogeneous_stack_at_another_gain_is_rescaled_not_rerun(activation_name):
    cache = UnitWeights()
    settings = dict(n_layers=12, width=32, seeds=2, batch=8)
    simulate(activation_name, "kaiming_fan_in", gain=1.0, cache=cache, **settings)
    for gain in (0.7, 1.9):
        for direction in ("forward", "backward"):
            fast = simulate(activation_name, "kaiming_fan_in", gain=gain, cache=cache,
                            direction=direction, sample_layers=(3, 12), **settings)  # fmt: skip
            fresh = simulate(activation_name, "kaiming_fan_in", gain=gain,
                             direction=direction, sample_layers=(3, 12), **settings)  # fmt: skip
            # Equal up to the float32 products' rounding, which a rescale moves (1e-7 a layer).
            np.testing.assert_allclose(fast.per_seed, fresh.per_seed, rtol=2e-6)
            if direction == "backward":
                np.testing.assert_allclose(fast.weight_per_seed, fresh.weight_per_seed, rtol=2e-6)
            for layer in (3, 12):  # an entry that is a cancelling sum: relative to their size
                size = np.sqrt(np.mean(fresh.samples[layer] ** 2))
                np.testing.assert_allclose(
                    fast.samples[layer], fresh.samples[layer], atol=1e-5 * size
                )
    # Forward: each gain, each seed, once (4); backward: the second gain from the first (2).
    assert cache.rescales == 2 * 2 + 2


def test_a_smooth_stack_or_one_near_float64s_ends_is_run_again():
    cache = UnitWeights()
    simulate("tanh", "xavier_normal", gain=1.0, n_layers=6, width=16, seeds=1, cache=cache)
    simulate("tanh", "xavier_normal", gain=1.5, n_layers=6, width=16, seeds=1, cache=cache)
    assert cache.rescales == 0  # tanh(c z) is not c tanh(z)
    # A gain of 1e6 over 60 layers: h_60 is 1e360 times larger, beyond float64.
    simulate("relu", "kaiming_fan_in", gain=1.0, n_layers=60, width=16, seeds=1, cache=cache)
    r = simulate("relu", "kaiming_fan_in", gain=1e6, n_layers=60, width=16, seeds=1, cache=cache)
    assert cache.rescales == 0
    fresh = simulate("relu", "kaiming_fan_in", gain=1e6, n_layers=60, width=16, seeds=1)
    np.testing.assert_array_equal(r.per_seed, fresh.per_seed)
    assert np.isinf(r.per_seed[0, -1])


def test_suggested_gain_is_torchs_where_it_has_one_else_the_one_layer_gain():
    assert prop.suggested_gain("relu") == (RELU_GAIN, "calculate_gain")
    assert prop.suggested_gain("leaky_relu") == (calculate_gain("leaky_relu"), "calculate_gain")
    gain, source = prop.suggested_gain("gelu")  # torch has no gain for gelu
    assert source == "quadrature"
    # one gelu layer at this gain keeps a unit signal's mean square at 1
    assert math.isclose(gain**2 * gaussian_expectation(square("gelu"), 1.0), 1.0, rel_tol=1e-12)
    with pytest.raises(ValueError, match="^activation must be one of"):
        prop.suggested_gain("swish")


def test_propagate_with_an_upstream_gradient_gives_both_directions_as_by_hand():
    width, seed, scale = 6, 4, 0.7
    x = unit_batch(width, 5, seed, prop.INPUT_STREAM)
    g = unit_batch(width, 5, seed + 1, prop.INPUT_STREAM)
    units = [unit_matrix("normal", width, k, seed) for k in (1, 2, 3)]
    hs, zs = [x], []
    for unit in units:
        zs.append(scale * (unit @ hs[-1]))
        hs.append(np.tanh(zs[-1]))
    grads = [g]  # dloss/dh_L, then down to dloss/dh_0
    for unit, z in zip(reversed(units), reversed(zs)):
        grads.append(scale * (unit.T @ ((1 - np.tanh(z) ** 2) * grads[-1])))
    forward, backward = propagate(units, scale, "tanh", x, upstream=g)
    np.testing.assert_allclose(forward, [np.mean(h * h) for h in hs], rtol=1e-12)
    np.testing.assert_allclose(backward, [np.mean(d * d) for d in grads[::-1]], rtol=1e-12)
    assert backward[-1] == prop.mean_square(g) and backward[0] != backward[-1]


def test_a_rescale_goes_by_the_ratio_of_the_scales_within_the_range():
    x = unit_batch(8, 4, 0, prop.INPUT_STREAM)
    trace = prop.Trace(x, "linear", 1e10)
    trace.extend([np.eye(8)] * 12)  # m_l = 1e20 ** l, up to 1e240
    assert trace.rescaled(1e10).squares == trace.squares  # a ratio of 1
    down = trace.rescaled(1e9)  # m_l = 1e18 ** l
    np.testing.assert_allclose(down.squares, [1e18**layer for layer in range(13)], rtol=1e-12)
    assert down.scale == 1e9 and down.slopes == trace.slopes
    np.testing.assert_allclose(down.zs[-1], trace.zs[-1] * 0.1**12, rtol=1e-12)
    assert down.nbytes == sum(a.nbytes for a in down.zs + down.hs[1:])
    up = trace.rescaled(2e10)  # m_12 = 4**12 * 1e240: inside
    np.testing.assert_allclose(up.squares, [4e20**layer for layer in range(13)], rtol=1e-12)
    assert trace.rescaled(3e10) is None  # m_12 = 9**12 * 1e240, beyond RESCALE_SQUARES


def test_a_rescaled_pass_scales_its_arrays_only_when_asked_and_from_the_computed_pass():
    x = unit_batch(8, 4, 0, prop.INPUT_STREAM)
    units = [unit_matrix("normal", 8, layer, 0) for layer in (1, 2, 3)]
    computed = prop.Trace(x, "relu", 2.0)
    computed.extend(units)
    computed.slope(3)  # a backward pass asked for phi'(z): shared with every rescaled pass
    half = computed.rescaled(1.0)  # c = 1/2
    assert half._zs == [] and half._source is computed  # a forward curve needs the squares only
    assert half.n_layers == 3 and half.nbytes == computed.nbytes  # it keeps computed's alive
    np.testing.assert_allclose(half.squares, [m * 0.25**k for k, m in enumerate(computed.squares)])
    back = half.rescaled(2.0)  # from computed, not from half's scaled arrays
    assert back._source is computed and back.squares == computed.squares  # powers of 2: exact
    for layer in (1, 3):
        np.testing.assert_array_equal(half.zs[layer - 1], computed.zs[layer - 1] * 0.5**layer)
        np.testing.assert_array_equal(half.hs[layer], computed.hs[layer] * 0.5**layer)
    assert half.hs[0] is x and half._source is None and half.slopes == computed.slopes
    arrays = half.zs + half.hs[1:] + half.slopes
    assert half.nbytes == sum(a.nbytes for a in arrays) == 3 * 3 * x.nbytes
    assert half.rescaled(2.0)._source is half  # now half has arrays of its own
    back.extend(units[:1])  # deeper: scaled first, then run on
    direct = prop.Trace(x, "relu", 2.0)
    direct.extend(units + units[:1])
    assert back.n_layers == 4 and len(back.zs) == 4
    assert back.squares == direct.squares  # scaled by 0.5**l and back: exact


def test_a_rescale_overflows_as_a_direct_pass_does_without_a_warning():
    x = np.array([[1.0], [0.0]])
    unit = np.array([[1.0, 0.0], [-1e300, 0.0]])  # z = (1, -1e300): relu keeps only the 1
    trace = prop.Trace(x, "relu", 1.0)
    trace.extend([unit])
    direct = prop.Trace(x, "relu", 1e10)
    direct.extend([unit])
    with warnings.catch_warnings(), np.errstate(all="warn"):
        warnings.simplefilter("error")
        fast = trace.rescaled(1e10)
        scaled = fast.zs[0]  # made here, when first asked for
    assert scaled.tolist() == direct.zs[0].tolist() == [[1e10], [-math.inf]]
    assert fast.squares == direct.squares


def test_no_rescale_from_or_to_a_zero_scale_or_through_a_layer_of_zeros():
    x = unit_batch(8, 4, 0, prop.INPUT_STREAM)
    trace = prop.Trace(x, "relu", 1.0)
    trace.extend([np.eye(8)] * 2)
    assert trace.rescaled(0.0) is None
    at_zero = prop.Trace(x, "relu", 0.0)
    at_zero.extend([np.eye(8)])
    assert at_zero.rescaled(1.0) is None
    dead = prop.Trace(x, "linear", 1.0)
    dead.extend([np.zeros((8, 8)), np.eye(8)])
    assert dead.rescaled(2.0) is None


@pytest.mark.parametrize(
    "x_value, unit_value, ends, scale",
    [
        (2.0, 0.5, (1.0, 1e250), 2.0),  # m_1 = 1 on the lower end before
        (0.5, 2.0, (1e-250, 1.0), 0.5),  # m_1 = 1 on the upper end before
        (2.0, 0.5, (0.25, 1e250), 0.5),  # m_1 * 0.5**2 on the lower end after
        (0.5, 2.0, (1e-250, 4.0), 2.0),  # m_1 * 2**2 on the upper end after
    ],
)
def test_a_mean_square_on_an_end_of_the_rescale_range_is_not_rescaled(
    monkeypatch, x_value, unit_value, ends, scale
):
    """RESCALE_SQUARES is an open range: a square on either end, before or after, runs the pass."""
    trace = prop.Trace(np.full((8, 4), x_value), "linear", 1.0)
    trace.extend([np.eye(8) * unit_value])
    assert trace.squares == [x_value**2, 1.0]  # exact: powers of 2
    assert trace.rescaled(scale) is not None
    monkeypatch.setattr(prop, "RESCALE_SQUARES", ends)
    assert trace.rescaled(scale) is None


def test_rescaled_square_keeps_both_ends_of_its_range_open():
    rescaled = prop._rescaled_square
    assert rescaled(4.0, 0.5, 0.5, 8.0) == 1.0
    assert rescaled(0.5, 2.0, 0.5, 8.0) is None  # m on the lower end
    assert rescaled(8.0, 0.5, 0.5, 8.0) is None  # m on the upper end
    assert rescaled(2.0, 0.5, 0.5, 8.0) is None  # the result on the lower end
    assert rescaled(2.0, 2.0, 0.5, 8.0) is None  # the result on the upper end
    assert rescaled(4.0, 4.0, 0.5, 8.0) is None  # the result beyond
    assert rescaled(16.0, 0.25, 0.5, 8.0) is None  # m beyond, the result inside
    for m in (0.0, math.inf, math.nan):
        assert rescaled(m, 1.0, 0.5, 8.0) is None


def test_a_backward_pass_is_rescaled_between_positive_scales_within_the_range():
    back = prop.Backward(1.0, [1.0, 1.0, 1.0], [math.nan, 1.0, 1.0], {0: np.ones(2)})
    twice = back.rescaled(2.0, homogeneous=True)  # L = 2, c = 2
    assert twice.scale == 2.0 and twice.gradient == [16.0, 4.0, 1.0]
    assert math.isnan(twice.weight[0]) and twice.weight[1:] == [4.0, 4.0]
    assert twice.kept[0].tolist() == [4.0, 4.0]
    assert back.rescaled(1.0, homogeneous=True).gradient == back.gradient  # c = 1
    near = back.rescaled(1.001, homogeneous=True)  # c near 1: log(c) near 0
    np.testing.assert_allclose(near.gradient, [1.001**4, 1.001**2, 1.0], rtol=1e-15)
    assert back.rescaled(2.0, homogeneous=False) is None
    for scale in (0.0, -1.0):
        assert back.rescaled(scale, homogeneous=True) is None
        assert back._replace(scale=scale).rescaled(1.0, homogeneous=True) is None
    # c**L beyond float64 is never computed (a Python float power raises OverflowError)
    assert back.rescaled(math.exp(400.0), homogeneous=True) is None
    # one weight gradient pushed past the range is enough: 5e249 * 2**2 > 1e250
    assert back._replace(weight=[math.nan, 5e249, 1.0]).rescaled(2.0, homogeneous=True) is None


def test_a_backward_rescale_raises_no_floating_point_error_under_any_numpy_setting():
    back = prop.Backward(1.0, [1.0, 1.0], [math.nan, 1.0], {0: np.array([5e-324, 1.0])})
    with np.errstate(all="raise"):
        halved = back.rescaled(0.5, homogeneous=True)  # 2**-1074 / 2 rounds to 0: an underflow
    assert halved.kept[0][1] == 0.5


def test_a_kept_backward_pass_far_from_the_new_scale_is_run_again_not_rescaled():
    """A ratio of 1e20 over 20 layers is 1e400, beyond float64: run the pass, never raise."""
    cache = UnitWeights()
    settings = dict(n_layers=20, width=8, seeds=1, batch=4, direction="backward", cache=cache)
    simulate("relu", "normal", std=1e-10, **settings)
    far = simulate("relu", "normal", std=1e10, **settings)
    assert cache.rescales == 0
    fresh = simulate("relu", "normal", std=1e10, **{**settings, "cache": UnitWeights()})
    np.testing.assert_array_equal(far.per_seed, fresh.per_seed)


def test_a_kept_backward_pass_is_handed_back_itself_and_the_oldest_goes_first():
    cache = UnitWeights(memo_size=2)
    settings = dict(n_layers=3, width=8, seeds=1, batch=4, direction="backward", cache=cache)
    simulate("tanh", "normal", std=0.1, **settings)
    ((key, first),) = cache.backward_memo.items()
    simulate("tanh", "normal", std=0.1, **settings)
    assert cache.backward_memo[key] is first  # not run again (tanh is never rescaled)
    for std in (0.2, 0.3):
        simulate("tanh", "normal", std=std, **settings)
    assert [k[1] for k in cache.backward_memo] == [0.2, 0.3]


def test_the_statistics_over_seeds_are_computed_once_and_read_only():
    r = simulate("relu", "kaiming_fan_in", n_layers=3, width=8, seeds=3, batch=4,
                 direction="backward")  # fmt: skip
    for name in ("median", "low", "high", "weight_median"):
        values = getattr(r, name)
        assert getattr(r, name) is values and not values.flags.writeable, name
        with pytest.raises(ValueError, match="read-only"):
            values[0] = 0.0
    np.testing.assert_array_equal(r.median, np.median(r.per_seed, axis=0))
    np.testing.assert_array_equal(r.weight_median, np.median(r.weight_per_seed, axis=0))
    assert simulate("relu", n_layers=3, width=8, seeds=1).weight_median is None


def test_overflow_and_underflow_are_found_in_the_direction_of_travel():
    per_seed = np.array([[math.inf, math.inf, 3.0, 1.0, 0.0, 0.0]])
    settings = dict(activation="relu", initializer="normal", gain=1.0, std=1.0, width=4)
    common = dict(n_layers=5, seeds=(0,), batch=2, per_seed=per_seed, theory=per_seed[0])
    common.update(settings)
    forward = prop.DepthResult(direction="forward", **common)
    assert (forward.overflow_from, forward.underflow_from) == (0, 4)
    backward = prop.DepthResult(direction="backward", **common)  # from layer 5 down to 0
    assert (backward.overflow_from, backward.underflow_from) == (1, 5)
    assert backward.first_layer(per_seed[0], lambda v: v == 3.0) == 2


def test_slopes_at_huge_z_come_without_a_warning_and_are_counted_once():
    x = np.array([[1.0], [1.0]])
    trace = prop.Trace(x, "gelu", 1.0)
    trace.extend([np.array([[1e300, 1e300], [-1e300, 0.0]])])  # z = (2e300, -1e300)
    with warnings.catch_warnings(), np.errstate(all="warn"):
        warnings.simplefilter("error")
        slope = trace.slope(1)
    assert slope.tolist() == [[1.0], [0.0]] and trace.slope(1) is slope
    assert trace.nbytes == trace.zs[0].nbytes + trace.hs[1].nbytes + slope.nbytes


def per_sample_weight_square_by_hand(delta, h):
    outer = [np.outer(delta[:, b], h[:, b]) for b in range(delta.shape[1])]
    return float(np.mean([np.mean(w * w) for w in outer]))


def test_per_sample_weight_square_is_the_mean_square_of_each_samples_outer_product():
    rng = np.random.default_rng(0)
    delta, h = rng.normal(size=(3, 4)), rng.normal(size=(5, 4))  # out 3, in 5, batch 4
    expected = per_sample_weight_square_by_hand(delta, h)
    assert math.isclose(prop.per_sample_weight_square(delta, h), expected, rel_tol=1e-12)
    with warnings.catch_warnings(), np.errstate(all="warn"):
        warnings.simplefilter("error")  # inf * 0 is nan: inf, silently
        assert prop.per_sample_weight_square(np.array([[np.inf]]), np.array([[0.0]])) == math.inf


def test_backward_trace_gives_one_weight_per_layer_and_keeps_only_what_is_asked():
    width, scale = 6, 0.5
    x, g = (unit_batch(width, 3, seed, prop.INPUT_STREAM) for seed in (0, 1))
    units = [unit_matrix("normal", width, k, 0) for k in (1, 2, 3)]
    trace = prop.Trace(x, "tanh", scale)
    trace.extend(units)
    gradient, weight, kept = prop.backward_trace(units, trace, 3, g)
    assert kept == {} and len(gradient) == len(weight) == 4 and math.isnan(weight[0])
    _, backward = propagate(units, scale, "tanh", x, upstream=g)
    np.testing.assert_allclose(gradient, backward, rtol=1e-12)
    delta = (1 - np.tanh(trace.zs[2]) ** 2) * g  # dloss/dz_3
    assert math.isclose(
        weight[3], per_sample_weight_square_by_hand(delta, trace.hs[2]), rel_tol=1e-12
    )
    _, _, kept = prop.backward_trace(units, trace, 3, g, keep=(0, 3))
    assert sorted(kept) == [0, 3] and kept[3] is g
    assert prop.mean_square(kept[0]) == gradient[0]


def test_a_kept_pass_that_overflows_stays_silent():
    x = np.array([[1.0], [1.0]])
    unit = np.array([[1e300, 1e300], [-1e300, 0.0]])
    trace = prop.Trace(x, "silu", 1.0)
    with warnings.catch_warnings(), np.errstate(all="warn"):
        warnings.simplefilter("error")
        trace.extend([unit, unit])  # silu's exp(1e300), then z_2 = (2e600, -2e600)
    assert trace.squares[1:] == [math.inf, math.inf]  # (2e300)**2 is beyond float64 already
    assert trace.nbytes == sum(a.nbytes for a in trace.zs + trace.hs[1:])  # x is not its own


def test_a_backward_pass_that_overflows_stays_silent():
    x = np.array([[1.0], [1.0]])
    unit = np.array([[1e300, 1e300], [-1e300, 0.0]])  # float64: products beyond float64 are inf
    trace = prop.Trace(x, "relu", 1.0)
    trace.extend([unit] * 3)
    with warnings.catch_warnings(), np.errstate(all="warn"):
        warnings.simplefilter("error")
        gradient, weight, _ = prop.backward_trace([unit] * 3, trace, 3, np.ones((2, 1)))
    assert gradient == [math.inf, math.inf, math.inf, 1.0]
    assert math.isnan(weight[0]) and weight[1:] == [math.inf] * 3


def test_the_forward_memo_keeps_memo_size_passes_and_memo_bytes_bytes():
    settings = dict(n_layers=3, width=8, seeds=1, batch=4)
    cache = UnitWeights(memo_size=1)
    for std in (0.1, 0.2):
        simulate("tanh", "normal", std=std, cache=cache, **settings)
    assert list(cache.forward_memo) == [("normal", 0.2, "tanh", 8, 0, 4)]
    one = cache.forward_memo[("normal", 0.2, "tanh", 8, 0, 4)].nbytes
    cache = UnitWeights(memo_bytes=2 * one)  # two passes of the same size: just fit
    for std in (0.1, 0.2):
        simulate("tanh", "normal", std=std, cache=cache, **settings)
    assert len(cache.forward_memo) == 2
    cache.memo_bytes = 0
    cache.trim_memo()  # over budget, but the newest pass always stays
    assert list(cache.forward_memo) == [("normal", 0.2, "tanh", 8, 0, 4)]


def test_simulate_by_default_is_xavier_relu_20_layers_of_256_3_seeds_of_32():
    r = simulate()
    settings = (r.activation, r.initializer, r.gain, r.std, r.n_layers, r.width, r.batch)
    assert settings == ("relu", "xavier_uniform", 1.0, math.sqrt(2 / 512), 20, 256, 32)
    assert len(r.seeds) == 3 and r.per_seed.shape == (3, 21)
    assert simulate(initializer="normal", n_layers=1, width=8, seeds=1).std == 0.02


def test_a_shallower_stack_from_a_deeper_kept_pass_has_its_own_layers_and_samples():
    cache = UnitWeights()
    simulate("tanh", "xavier_normal", n_layers=6, width=8, seeds=1, batch=4, cache=cache)
    r = simulate("tanh", "xavier_normal", n_layers=3, width=8, seeds=1, batch=4, cache=cache,
                 sample_layers=(0, 3, 5))  # fmt: skip
    assert r.per_seed.shape == (1, 4) and sorted(r.samples) == [0, 3]
    x = unit_batch(8, 4, r.seeds[0], prop.INPUT_STREAM)
    assert r.samples[0].tolist() == x.ravel().tolist()  # layer 0: the input itself


def test_a_new_gain_on_a_kept_homogeneous_stack_is_rescaled_at_once():
    cache = UnitWeights()
    settings = dict(n_layers=4, width=8, seeds=1, batch=4, cache=cache)
    simulate("relu", "kaiming_fan_in", gain=1.0, **settings)
    simulate("relu", "kaiming_fan_in", gain=2.0, **settings)
    assert cache.rescales == 1
    simulate("relu", "kaiming_fan_in", gain=2.0, **settings)  # now kept itself
    assert cache.rescales == 1


def test_unit_batch_draws_its_own_stream_and_is_read_only():
    x = unit_batch(8, 4, seed=3, stream=prop.INPUT_STREAM)
    g = unit_batch(8, 4, seed=3, stream=prop.GRADIENT_STREAM)
    raw = normal(PCG32(3, prop.INPUT_STREAM), 32).reshape(8, 4)
    np.testing.assert_array_equal(x, raw / math.sqrt(np.mean(raw * raw)))
    assert not np.array_equal(x, g)  # inputs and upstream gradients never share numbers
    assert not x.flags.writeable and not g.flags.writeable  # a cache hands out the same array


def test_weight_gradients_come_with_the_backward_view_only():
    settings = dict(n_layers=5, width=16, seeds=2, batch=4)
    forward = simulate("relu", "kaiming_fan_in", gain=RELU_GAIN, **settings)
    assert forward.weight_per_seed is None and forward.weight_theory is None
    backward = simulate("relu", "kaiming_fan_in", gain=RELU_GAIN, direction="backward", **settings)
    assert backward.weight_per_seed.dtype == np.float64
    assert backward.weight_per_seed.shape == (2, 6) and backward.weight_theory.shape == (6,)
    assert np.isnan(backward.weight_per_seed[:, 0]).all()  # layer 0 has no weights
    assert (backward.weight_per_seed[:, 1:] > 0).all()
