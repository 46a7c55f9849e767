"""The explorer's fast path: every kept, rescaled or float32 result equals the plain simulate.

`tinyinit.physics.propagation.simulate` is the definition;
`tinyinit.physics.propagation_fast.UnitWeights`
reaches the same DepthResult from what it keeps (as pcg32.py pairs its scalar
definition with its fast path). Equal means: the same theory, bit for bit, and
the measured numbers to float32's rounding (the fast path's products are float32).
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plain_propagation import propagate
from refusals import assert_refused

from tinyinit.core.activations import ACTIVATIONS
from tinyinit.core.distributions import normal, uniforms
from tinyinit.core.init import INITIALIZERS
from tinyinit.core.pcg32 import PCG32
from tinyinit.physics import propagation as prop
from tinyinit.physics import propagation_fast as fp
from tinyinit.physics.propagation import INPUT_STREAM, simulate, unit_batch
from tinyinit.physics.propagation_fast import UnitWeights
from tinyinit.physics.variance import mean_square


def unit_matrix(kind: str, width: int, layer: int, seed: int) -> np.ndarray:
    """Layer `layer` of a stack of unit matrices drawn from PCG32(seed), layer after layer:
    standard normal, or uniform on [-1, 1) ("uniform"), float64 (width, width)."""
    rng = PCG32(seed)
    for _ in range(layer):
        n = width * width
        unit = normal(rng, n) if kind == "normal" else 2.0 * uniforms(rng, n) - 1.0
    return unit.reshape(width, width)


# The fast path's products are float32: each entry of W h is rounded to about width x 6e-8
# of the sum of its terms' sizes, over 2 x n_layers products backward, more where a sum
# cancels. In 5,500 random settings of SETTINGS below, 6 mean squares were more than 1e-5
# off the float64 ones and none more than 4e-5 (selu and gelu, width 8, backward); 1e-4
# leaves room, and any error of the fast path's own (a scale, a layer, a seed) is far larger.
RTOL = 1e-4


def per_sample_weight_square_by_hand(delta, h):
    outer = [np.outer(delta[:, b], h[:, b]) for b in range(delta.shape[1])]
    return float(np.mean([np.mean(w * w) for w in outer]))


def assert_same_result(fast, plain):
    """Two DepthResults equal: the settings and theory exactly, the measurements to RTOL (the
    weights' std too, for a row read from a batch, where it is measured)."""
    measured = INITIALIZERS[plain.initializer].std is None
    for field in dataclasses.fields(plain):
        a, b = getattr(fast, field.name), getattr(plain, field.name)
        if field.name == "weight_std" and measured:
            assert math.isclose(a, b, rel_tol=RTOL), field.name
        elif field.name in ("per_seed", "weight_per_seed") and b is not None:
            assert a.shape == b.shape, field.name
            np.testing.assert_allclose(a, b, rtol=RTOL, err_msg=field.name)
        elif field.name == "samples" and b is not None:
            assert a.keys() == b.keys()
            for layer in b:  # each value a cancelling sum: to RTOL of the layer's size
                size = math.sqrt(np.mean(b[layer] ** 2))
                np.testing.assert_allclose(a[layer], b[layer], rtol=RTOL, atol=RTOL * size)
        elif isinstance(b, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg=field.name)
        else:
            assert a == b, field.name


# Settings where no mean square comes near float64's ends (there, the layer where a
# stack overflows may differ by one between float32 and float64 products).
SETTINGS = st.fixed_dictionaries(
    {
        "activation": st.sampled_from(["relu", "leaky_relu", "linear", "tanh", "gelu", "selu"]),
        "initializer": st.sampled_from(list(INITIALIZERS)),
        "gain": st.floats(0.6, 1.8),
        "std": st.floats(0.05, 0.4),
        "n_layers": st.integers(1, 10),
        "width": st.sampled_from([8, 16]),
        "seeds": st.integers(1, 2),
        "batch": st.sampled_from([2, 4]),
        "direction": st.sampled_from(["forward", "backward"]),
        "sample_layers": st.sampled_from([(), (0, 1), (0, 3, 10)]),
    }
)


@settings(max_examples=40, deadline=None)
@given(st.lists(SETTINGS, min_size=1, max_size=6))
def test_every_kept_or_rescaled_result_equals_the_plain_simulate(walk):
    """A walk through settings on one cache, as hands on the sliders: each stop equals simulate.

    Revisits, deeper and shallower stacks, other gains of a kept homogeneous pass
    (rescaled), kept backward passes: whatever the cache reuses, the result is
    the plain simulate's.
    """
    cache = UnitWeights()
    for stop in walk + walk[:2]:  # and back to where the walk began: kept passes
        assert_same_result(cache.simulate(**stop), simulate(**stop))


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_seeds_given_as_a_sequence_go_through_the_cache_as_through_simulate(direction):
    settings = dict(n_layers=4, width=8, batch=2, direction=direction, sample_layers=(0, 2))
    cache = UnitWeights()
    for seeds in [(3, 1), [5], range(2, 4)]:
        fast = cache.simulate("tanh", "xavier_normal", seeds=seeds, **settings)
        assert_same_result(fast, simulate("tanh", "xavier_normal", seeds=seeds, **settings))
        assert fast.seeds == tuple(seeds)


@settings(max_examples=20, deadline=None)
@given(SETTINGS, st.lists(st.floats(0.3, 3.0), min_size=1, max_size=4))
def test_a_gain_slider_on_a_homogeneous_stack_rescales_and_stays_equal(stop, gains):
    stop = {**stop, "activation": "relu", "initializer": "kaiming_normal"}
    cache = UnitWeights()
    cache.simulate(**stop)
    for gain in gains:
        assert_same_result(
            cache.simulate(**{**stop, "gain": gain}), simulate(**{**stop, "gain": gain})
        )
    # Each seed's pass at a gain not seen yet is a rescale of a kept one, never a rerun:
    # its forward pass, and backward its backward pass too.
    passes = 1 if stop["direction"] == "forward" else 2
    assert cache.rescales == passes * stop["seeds"] * len(set(gains) - {stop["gain"]})


def test_the_theory_is_kept_per_cache_not_in_a_module_global():
    one, other = UnitWeights(), UnitWeights()
    r = one.simulate("tanh", n_layers=3, width=8, seeds=1)
    assert one.theory_memo and not other.theory_memo
    again = one.simulate("tanh", n_layers=3, width=8, seeds=1)
    assert again.theory is r.theory  # kept
    gain = prop.gain_of(8, r.weight_std)
    np.testing.assert_array_equal(r.theory, prop.mean_field("tanh", gain=gain, n_layers=3))
    back = one.simulate("tanh", n_layers=3, width=8, seeds=1, direction="backward")
    backward = prop.mean_field("tanh", gain=gain, n_layers=3, direction="backward")
    np.testing.assert_array_equal(back.theory, backward)
    expected = prop.weight_gradient_theory("tanh", gain=gain, n_layers=3)
    np.testing.assert_array_equal(back.weight_theory, expected)


@pytest.mark.parametrize("scale", [2.0**-1060, 1e-300, 1e-30, 1.0, 1e30, 1e300, 2.0**1020])
def test_float32_products_keep_24_bits_at_any_scale(scale):
    unit = unit_matrix("normal", 32, 1, seed=3)
    h = unit_batch(32, 8, seed=3, stream=INPUT_STREAM) * scale
    with np.errstate(all="ignore"):
        # In long double where the machine has one (x86: to 1e4932), so that no partial
        # sum overflows: a product is inf where its value is beyond float64, no sooner.
        wide = unit.astype(np.longdouble) @ h.astype(np.longdouble)
        exact = wide.astype(np.float64)
        fast = fp._product(unit.astype(np.float32), h)
        hinted = fp._product(unit.astype(np.float32), h, 1.0, mean_square(h))
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
        assert (fp._product(unit, np.zeros((2, 3))) == 0).all()
        assert np.isinf(fp._product(unit, np.array([[np.inf], [1.0]]))).all()
        assert np.isnan(fp._product(unit, np.array([[np.nan], [1.0]]))).all()
        assert np.isinf(fp._product(unit, np.full((2, 1), 1.7e308))).all()  # 3.4e308: beyond


@pytest.mark.parametrize("size", [1e-3, 0.5, 1.0, 3.0, 1e3])
def test_a_float32_unit_multiplies_in_float32_at_any_size_of_h(size):
    unit = unit_matrix("normal", 16, 1, seed=3).astype(np.float32)
    h = unit_batch(16, 4, seed=3, stream=INPUT_STREAM) * size
    # h's rescaling by a power of 2 is exact: the float32 product of h itself, bit for bit
    expected = (unit @ h.astype(np.float32)).astype(np.float64)
    assert fp._product(unit, h).tolist() == expected.tolist()
    assert fp._product(unit, h, 1.0, mean_square(h)).tolist() == expected.tolist()


def test_a_float32_product_beyond_float64s_powers_of_2_is_still_in_float32():
    unit = unit_matrix("normal", 16, 1, seed=3).astype(np.float32)
    h = unit_batch(16, 4, seed=3, stream=INPUT_STREAM)
    # 2**1006 and 2**-1000 are taken in exact steps; the result is 32 times the float32 product
    expected = (32.0 * (unit @ h.astype(np.float32)).astype(np.float64)).tolist()
    assert fp._product(unit, h * 2.0**1005, 2.0**-1000).tolist() == expected


def test_a_float32_product_whose_factor_underflows_keeps_a_subnormal_result():
    unit = np.ones((1, 256), dtype=np.float32)
    h = np.full((256, 1), 2.0**-60)  # factor 2**-1020 * 2**-59 is below float64's smallest
    assert fp._product(unit, h, 2.0**-1020).tolist() == [[2.0**-1072]]  # as in float64


def test_a_float32_product_is_sized_by_the_largest_entry_even_a_negative_one():
    unit = np.ones((1, 2), dtype=np.float32)
    h = np.array([[1e-30], [-1e30]])  # sized by 1e-30, -1e30 would be far beyond float32
    np.testing.assert_allclose(fp._product(unit, h), [[-1e30]], rtol=1e-7)


def test_simulation_agrees_with_float64_products():
    """The cache's float32 units and products against float64 ones, layer by layer."""
    width, depth, seed = 64, 12, 2
    x = unit_batch(width, 16, seed, INPUT_STREAM)
    for activation_name in ("relu", "tanh", "gelu"):
        units = UnitWeights().get("kaiming_normal", width, seed, depth)  # float32, at gain 1
        exact = propagate([np.float64(1.7) * u for u in units], 1.0, activation_name, x)
        r = simulate(activation_name, "kaiming_normal", gain=1.7, n_layers=depth, width=width,
                     seeds=[seed], batch=16)  # fmt: skip
        np.testing.assert_allclose(r.per_seed[0], exact, rtol=1e-5)


def test_unit_matrices_are_drawn_once_and_rescaled():
    cache = UnitWeights()
    cache.simulate("relu", "xavier_uniform", gain=1.0, n_layers=10, width=32, seeds=2)
    assert cache.draws == 20
    for gain in (0.5, 1.5, 2.5):  # a gain slider: rescale only
        cache.simulate("relu", "xavier_uniform", gain=gain, n_layers=10, width=32, seeds=2)
        cache.simulate(
            "tanh",
            "xavier_uniform",
            gain=gain,
            n_layers=10,
            width=32,
            seeds=2,
            direction="backward",
        )
    assert cache.draws == 20
    cache.simulate("relu", "xavier_uniform", n_layers=15, width=32, seeds=2)
    assert cache.draws == 30  # deeper: only the 5 new layers per seed
    cache.simulate("relu", "xavier_normal", n_layers=15, width=32, seeds=2)
    cache.simulate("relu", "kaiming_normal", gain=2.0, n_layers=15, width=32, seeds=2)
    assert cache.draws == 90  # each initializer its own stack
    cache.simulate("relu", "kaiming_normal", gain=0.5, n_layers=15, width=32, seeds=2)
    assert cache.draws == 90


def test_deeper_stack_from_memo_equals_a_fresh_pass():
    cache = UnitWeights()
    for depth in (3, 9, 5, 12):
        cache.simulate("selu", "xavier_normal", gain=1.1, n_layers=depth, width=32, seeds=2)
    memo = cache.simulate("selu", "xavier_normal", gain=1.1, n_layers=12, width=32, seeds=2)
    fresh = UnitWeights().simulate(
        "selu", "xavier_normal", gain=1.1, n_layers=12, width=32, seeds=2
    )
    assert len(cache.forward_memo) == 2  # one pass per seed, grown and sliced
    np.testing.assert_array_equal(memo.per_seed, fresh.per_seed)


def test_cache_drops_least_recently_used_entries_beyond_its_budget():
    layer = 16 * 16 * 4  # one float32 (16, 16) unit matrix
    cache = UnitWeights(max_bytes=3 * layer)
    units = cache.get("xavier_uniform", 16, 0, 2)
    assert all(u.dtype == np.float32 and not u.flags.writeable for u in units)
    cache.get("xavier_normal", 16, 0, 2)  # over budget: the uniform entry goes
    assert cache.nbytes == 2 * layer
    assert len(cache.get("xavier_normal", 16, 0, 2)) == 2 and cache.draws == 4
    cache = UnitWeights(max_bytes=2 * layer)
    cache.get("xavier_uniform", 16, 0, 1)
    cache.get("xavier_normal", 16, 0, 1)  # exactly the budget: both stay
    assert cache.nbytes == 2 * layer
    cache = UnitWeights(max_bytes=1)
    cache.get("xavier_uniform", 16, 0, 1)
    assert len(cache.get("xavier_normal", 16, 0, 2)) == 2  # over any budget, the newest stays
    assert cache.nbytes == 2 * layer and cache.draws == 3


def test_cache_keeps_the_last_memo_size_input_batches():
    cache = UnitWeights(memo_size=2)
    first = cache.batch(8, 4, 0, INPUT_STREAM)
    other = cache.batch(8, 4, 1, INPUT_STREAM)
    assert other.tolist() == unit_batch(8, 4, 1, INPUT_STREAM).tolist() != first.tolist()
    assert cache.batch(8, 4, 0, INPUT_STREAM) is first  # two fit
    cache.memo_size = 1
    assert cache.batch(8, 4, 2, INPUT_STREAM).tolist() == unit_batch(8, 4, 2, 1).tolist()
    assert cache.batch(8, 4, 0, INPUT_STREAM) is not first  # dropped, drawn again


@pytest.mark.parametrize("activation_name", ["relu", "leaky_relu", "linear"])
def test_a_homogeneous_stack_at_another_gain_is_rescaled_not_rerun(activation_name):
    cache = UnitWeights()
    settings = dict(n_layers=12, width=32, seeds=2, batch=8)
    cache.simulate(activation_name, "kaiming_normal", gain=1.0, **settings)
    for gain in (0.7, 1.9):
        for direction in ("forward", "backward"):
            fast = cache.simulate(
                activation_name,
                "kaiming_normal",
                gain=gain,
                direction=direction,
                sample_layers=(3, 12),
                **settings,
            )
            fresh = simulate(activation_name, "kaiming_normal", gain=gain,
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
    cache.simulate("tanh", "xavier_normal", gain=1.0, n_layers=6, width=16, seeds=1)
    cache.simulate("tanh", "xavier_normal", gain=1.5, n_layers=6, width=16, seeds=1)
    assert cache.rescales == 0  # tanh(c z) is not c tanh(z)
    # A gain of 1e6 over 60 layers: h_60 is 1e360 times larger, beyond float64.
    cache.simulate("relu", "kaiming_normal", gain=1.0, n_layers=60, width=16, seeds=1)
    r = cache.simulate("relu", "kaiming_normal", gain=1e6, n_layers=60, width=16, seeds=1)
    assert cache.rescales == 0
    fresh = UnitWeights().simulate(
        "relu", "kaiming_normal", gain=1e6, n_layers=60, width=16, seeds=1
    )
    np.testing.assert_array_equal(r.per_seed, fresh.per_seed)
    assert np.isinf(r.per_seed[0, -1])


def test_a_rescale_goes_by_the_ratio_of_the_scales_within_the_range():
    x = unit_batch(8, 4, 0, INPUT_STREAM)
    trace = fp._Trace(x, ACTIVATIONS["linear"], 1e10)
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
    x = unit_batch(8, 4, 0, INPUT_STREAM)
    units = [unit_matrix("normal", 8, layer, 0) for layer in (1, 2, 3)]
    computed = fp._Trace(x, ACTIVATIONS["relu"], 2.0)
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
    direct = fp._Trace(x, ACTIVATIONS["relu"], 2.0)
    direct.extend(units + units[:1])
    assert back.n_layers == 4 and len(back.zs) == 4
    assert back.squares == direct.squares  # scaled by 0.5**l and back: exact


def test_a_rescale_overflows_as_a_direct_pass_does_without_a_warning():
    x = np.array([[1.0], [0.0]])
    unit = np.array([[1.0, 0.0], [-1e300, 0.0]])  # z = (1, -1e300): relu keeps only the 1
    trace = fp._Trace(x, ACTIVATIONS["relu"], 1.0)
    trace.extend([unit])
    direct = fp._Trace(x, ACTIVATIONS["relu"], 1e10)
    direct.extend([unit])
    with warnings.catch_warnings(), np.errstate(all="warn"):
        warnings.simplefilter("error")
        fast = trace.rescaled(1e10)
        scaled = fast.zs[0]  # made here, when first asked for
    assert scaled.tolist() == direct.zs[0].tolist() == [[1e10], [-math.inf]]
    assert fast.squares == direct.squares


def test_no_rescale_from_or_to_a_zero_scale_or_through_a_layer_of_zeros():
    x = unit_batch(8, 4, 0, INPUT_STREAM)
    trace = fp._Trace(x, ACTIVATIONS["relu"], 1.0)
    trace.extend([np.eye(8)] * 2)
    assert trace.rescaled(0.0) is None
    at_zero = fp._Trace(x, ACTIVATIONS["relu"], 0.0)
    at_zero.extend([np.eye(8)])
    assert at_zero.rescaled(1.0) is None
    dead = fp._Trace(x, ACTIVATIONS["linear"], 1.0)
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
    """_RESCALE_SQUARES is an open range: a square on either end, before or after, runs the pass."""
    trace = fp._Trace(np.full((8, 4), x_value), ACTIVATIONS["linear"], 1.0)
    trace.extend([np.eye(8) * unit_value])
    assert trace.squares == [x_value**2, 1.0]  # exact: powers of 2
    assert trace.rescaled(scale) is not None
    monkeypatch.setattr(fp, "_RESCALE_SQUARES", ends)
    assert trace.rescaled(scale) is None


def test_rescaled_square_keeps_both_ends_of_its_range_open():
    rescaled = fp._rescaled_square
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
    back = fp._Backward(1.0, [1.0, 1.0, 1.0], [math.nan, 1.0, 1.0], {0: np.ones(2)})
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
    back = fp._Backward(1.0, [1.0, 1.0], [math.nan, 1.0], {0: np.array([5e-324, 1.0])})
    with np.errstate(all="raise"):
        halved = back.rescaled(0.5, homogeneous=True)  # 2**-1074 / 2 rounds to 0: an underflow
    assert halved.kept[0][1] == 0.5


def test_a_kept_backward_pass_far_from_the_new_scale_is_run_again_not_rescaled():
    """A ratio of 1e20 over 20 layers is 1e400, beyond float64: run the pass, never raise."""
    cache = UnitWeights()
    settings = dict(n_layers=20, width=8, seeds=1, batch=4, direction="backward")
    cache.simulate("relu", "normal_init", std=1e-10, **settings)
    far = cache.simulate("relu", "normal_init", std=1e10, **settings)
    assert cache.rescales == 0
    fresh = UnitWeights().simulate("relu", "normal_init", std=1e10, **settings)
    np.testing.assert_array_equal(far.per_seed, fresh.per_seed)


def test_a_kept_backward_pass_is_handed_back_itself_and_the_oldest_goes_first():
    cache = UnitWeights(memo_size=2)
    settings = dict(n_layers=3, width=8, seeds=1, batch=4, direction="backward")
    cache.simulate("tanh", "normal_init", std=0.1, **settings)
    ((key, first),) = cache.backward_memo.items()
    cache.simulate("tanh", "normal_init", std=0.1, **settings)
    assert cache.backward_memo[key] is first  # not run again (tanh is never rescaled)
    for std in (0.2, 0.3):
        cache.simulate("tanh", "normal_init", std=std, **settings)
    assert [k[1] for k in cache.backward_memo] == [0.2, 0.3]


def test_slopes_at_huge_z_come_without_a_warning_and_are_counted_once():
    x = np.array([[1.0], [1.0]])
    trace = fp._Trace(x, ACTIVATIONS["gelu"], 1.0)
    trace.extend([np.array([[1e300, 1e300], [-1e300, 0.0]])])  # z = (2e300, -1e300)
    with warnings.catch_warnings(), np.errstate(all="warn"):
        warnings.simplefilter("error")
        slope = trace.slope(1)
    assert slope.tolist() == [[1.0], [0.0]] and trace.slope(1) is slope
    assert trace.nbytes == trace.zs[0].nbytes + trace.hs[1].nbytes + slope.nbytes


def test_backward_trace_gives_one_weight_per_layer_and_keeps_only_what_is_asked():
    width, scale = 6, 0.5
    x, g = (unit_batch(width, 3, seed, INPUT_STREAM) for seed in (0, 1))
    units = [unit_matrix("normal", width, k, 0) for k in (1, 2, 3)]
    trace = fp._Trace(x, ACTIVATIONS["tanh"], scale)
    trace.extend(units)
    gradient, weight, kept = fp._backward_trace(units, trace, 3, g)
    assert kept == {} and len(gradient) == len(weight) == 4 and math.isnan(weight[0])
    _, backward = propagate(units, scale, "tanh", x, upstream=g)
    np.testing.assert_allclose(gradient, backward, rtol=1e-12)
    delta = (1 - np.tanh(trace.zs[2]) ** 2) * g  # dloss/dz_3
    assert math.isclose(
        weight[3], per_sample_weight_square_by_hand(delta, trace.hs[2]), rel_tol=1e-12
    )
    _, _, kept = fp._backward_trace(units, trace, 3, g, keep=(0, 3))
    assert sorted(kept) == [0, 3] and kept[3] is g
    assert mean_square(kept[0]) == gradient[0]


def test_a_kept_pass_that_overflows_stays_silent():
    x = np.array([[1.0], [1.0]])
    unit = np.array([[1e300, 1e300], [-1e300, 0.0]])
    trace = fp._Trace(x, ACTIVATIONS["silu"], 1.0)
    with warnings.catch_warnings(), np.errstate(all="warn"):
        warnings.simplefilter("error")
        trace.extend([unit, unit])  # silu's exp(1e300), then z_2 = (2e600, -2e600)
    assert trace.squares[1:] == [math.inf, math.inf]  # (2e300)**2 is beyond float64 already
    assert trace.nbytes == sum(a.nbytes for a in trace.zs + trace.hs[1:])  # x is not its own


def test_a_backward_pass_that_overflows_stays_silent():
    x = np.array([[1.0], [1.0]])
    unit = np.array([[1e300, 1e300], [-1e300, 0.0]])  # float64: products beyond float64 are inf
    trace = fp._Trace(x, ACTIVATIONS["relu"], 1.0)
    trace.extend([unit] * 3)
    with warnings.catch_warnings(), np.errstate(all="warn"):
        warnings.simplefilter("error")
        gradient, weight, _ = fp._backward_trace([unit] * 3, trace, 3, np.ones((2, 1)))
    assert gradient == [math.inf, math.inf, math.inf, 1.0]
    assert math.isnan(weight[0]) and weight[1:] == [math.inf] * 3


def test_the_forward_memo_keeps_memo_size_passes_and_memo_bytes_bytes():
    settings = dict(n_layers=3, width=8, seeds=1, batch=4)
    cache = UnitWeights(memo_size=1)
    for std in (0.1, 0.2):
        cache.simulate("tanh", "normal_init", std=std, **settings)
    assert list(cache.forward_memo) == [("normal_init", 0.2, ACTIVATIONS["tanh"], 8, 0, 4)]
    one = cache.forward_memo[("normal_init", 0.2, ACTIVATIONS["tanh"], 8, 0, 4)].nbytes
    cache = UnitWeights(memo_bytes=2 * one)  # two passes of the same size: just fit
    for std in (0.1, 0.2):
        cache.simulate("tanh", "normal_init", std=std, **settings)
    assert len(cache.forward_memo) == 2
    cache.memo_bytes = 0
    cache.trim_memo()  # over budget, but the newest pass always stays
    assert list(cache.forward_memo) == [("normal_init", 0.2, ACTIVATIONS["tanh"], 8, 0, 4)]
    cache.memo_bytes = 1 << 30
    for std in (0.3, 0.4, 0.5):
        cache.simulate("tanh", "normal_init", std=std, **settings)
    cache.memo_bytes = 2 * one
    cache.trim_memo()  # four passes, room for two: the two oldest go at once
    assert [key[1] for key in cache.forward_memo] == [0.4, 0.5]


def test_the_theory_is_kept_once_per_setting_and_at_most_eight_memo_sizes_of_it():
    cache = UnitWeights(memo_size=2)
    first = cache.theory(ACTIVATIONS["tanh"], 1.0, 4, "backward")
    assert cache.theory(ACTIVATIONS["tanh"], 1.0, 4, "backward") is first  # kept, not recomputed
    forward, weights = cache.theory(ACTIVATIONS["tanh"], 1.0, 4, "forward")
    assert weights is None
    np.testing.assert_array_equal(forward, prop.mean_field("tanh", gain=1.0, n_layers=4))
    backward = prop.mean_field("tanh", gain=1.0, n_layers=4, direction="backward")
    np.testing.assert_array_equal(first[0], backward)
    expected = prop.weight_gradient_theory("tanh", gain=1.0, n_layers=4)
    np.testing.assert_array_equal(first[1], expected)
    for n_layers in range(5, 30):
        cache.theory(ACTIVATIONS["relu"], 2.0, n_layers, "forward")
    assert len(cache.theory_memo) == 16
    assert next(reversed(cache.theory_memo)) == (ACTIVATIONS["relu"], 2.0, 29, "forward", False)
    lsuv = cache.theory(ACTIVATIONS["tanh"], 1.0, 4, "backward", from_batch=True)
    assert lsuv is not first and lsuv[0][0] != first[0][0]  # a theory of its own, kept apart
    expected = prop.mean_field("tanh", gain=1.0, n_layers=4, direction="backward", from_batch=True)
    np.testing.assert_array_equal(lsuv[0], expected)


def test_a_shallower_stack_from_a_deeper_kept_pass_has_its_own_layers_and_samples():
    cache = UnitWeights()
    cache.simulate("tanh", "xavier_normal", n_layers=6, width=8, seeds=1, batch=4)
    r = cache.simulate(
        "tanh", "xavier_normal", n_layers=3, width=8, seeds=1, batch=4, sample_layers=(0, 3, 5)
    )
    assert r.per_seed.shape == (1, 4) and sorted(r.samples) == [0, 3]
    x = unit_batch(8, 4, r.seeds[0], INPUT_STREAM)
    assert r.samples[0].tolist() == x.ravel().tolist()  # layer 0: the input itself


def test_a_new_gain_on_a_kept_homogeneous_stack_is_rescaled_at_once():
    cache = UnitWeights()
    settings = dict(n_layers=4, width=8, seeds=1, batch=4)
    cache.simulate("relu", "kaiming_normal", gain=1.0, **settings)
    cache.simulate("relu", "kaiming_normal", gain=2.0, **settings)
    assert cache.rescales == 1
    cache.simulate("relu", "kaiming_normal", gain=2.0, **settings)  # now kept itself
    assert cache.rescales == 1


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_a_pass_counts_its_bytes_as_the_sum_of_its_arrays(name):
    x = unit_batch(6, 3, 0, INPUT_STREAM)
    units = [unit_matrix("normal", 6, layer, 0).astype(np.float32) for layer in (1, 2)]
    trace = fp._Trace(x, ACTIVATIONS[name], 0.5)
    trace.extend(units)
    trace.slope(2)
    arrays = trace.zs + trace.hs[1:] + trace.slopes
    assert trace.nbytes == sum(a.nbytes for a in arrays) == 6 * x.nbytes


def test_the_theory_memo_takes_no_layers_and_the_fast_path_refuses_a_draw_in_its_words():
    cache = UnitWeights()
    forward, backward = cache.theory(ACTIVATIONS["relu"], 1.0, 0, "forward")
    assert forward.tolist() == [1.0] and backward is None
    with pytest.raises(ValueError, match=r"^n_layers must be a non-negative integer, got -1$"):
        cache.theory(ACTIVATIONS["relu"], 1.0, -1, "forward")
    words = "draw must be None here: the fast path draws tinyinit's weights "
    words += "(propagation.simulate draws with yours)"
    with pytest.raises(ValueError) as caught:
        cache.simulate("relu", draw=lambda shape, rng: np.zeros(shape))
    assert str(caught.value) == words


def test_the_caches_take_each_range_from_its_bound_and_refuse_past_it_in_their_words():
    smallest = UnitWeights(max_bytes=0, memo_size=1, memo_bytes=0)
    assert (
        smallest.get("normal_init", 1, 0, 0) == []
        and len(smallest.get("normal_init", 1, 0, 1)) == 1
    )
    assert smallest.batch(1, 1, 0, 0).shape == (1, 1)
    cache = UnitWeights()
    refusals = [
        (lambda: UnitWeights(max_bytes=-1), "max_bytes must be a non-negative integer, got -1"),
        (lambda: UnitWeights(memo_size=0), "memo_size must be an integer >= 1, got 0"),
        (lambda: UnitWeights(memo_bytes=-1), "memo_bytes must be a non-negative integer, got -1"),
        (lambda: cache.get("normal_init", 0, 0, 1), "width must be an integer >= 1, got 0"),
        (
            lambda: cache.get("normal_init", 4, 0, -1),
            "n_layers must be a non-negative integer, got -1",
        ),
        (lambda: cache.batch(0, 2, 0, 0), "width must be an integer >= 1, got 0"),
        (lambda: cache.batch(2, 0, 0, 0), "batch must be an integer >= 1, got 0"),
    ]
    assert_refused((call, ValueError, words) for call, words in refusals)
