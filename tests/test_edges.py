"""Edges the other tests leave open, each one a place where wrong code would pass them.

Uniforms past one jump table; the dtype of words; scalar and integer shapes;
no floating-point warning escaping the propagation code at extreme inputs
(warnings are errors here); the defaults of the propagation helpers.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import reference_pcg32 as ref
from plain_propagation import propagate

import tinyinit as ti
from tinyinit import PCG32
from tinyinit.core.activations import ACTIVATIONS
from tinyinit.core.init import INITIALIZERS
from tinyinit.core.pcg32 import TABLE_SIZE
from tinyinit.physics.mean_field import gaussian_expectation
from tinyinit.physics.propagation import mean_field, simulate, weight_gradient_theory
from tinyinit.physics.propagation_fast import UnitWeights
from tinyinit.physics.variance import mean_square

# --- the generator -------------------------------------------------------------------------


@pytest.mark.parametrize("n", [TABLE_SIZE + 1, TABLE_SIZE + 5, 2 * TABLE_SIZE + 3])
def test_pcg32_uniforms_past_one_table_continue_the_sequence(n):
    rng = PCG32(3, 7)
    u = rng.uniforms(n)
    scalar = ref.PCG32(3, 7)
    expected = [scalar.uniform() for _ in range(n)]
    assert u.tolist() == expected
    assert rng == PCG32(3, 7).advance(2 * n)


def test_words_are_uint32():
    w = PCG32(0).words(5)
    assert w.dtype == np.uint32 and w.shape == (5,)
    assert PCG32(0).words(0).dtype == np.uint32


# --- scalar and integer shapes --------------------------------------------------------------

SHAPED = {
    "normal_init": lambda s, rng: ti.normal_init(s, 0.5, rng),
    "uniform_init": lambda s, rng: ti.uniform_init(s, -1.0, 1.0, rng),
    "trunc_normal_init": lambda s, rng: ti.trunc_normal_init(s, 0.5, rng),
    "constant_init": lambda s, rng: ti.constant_init(s, 2.0),
    "zeros_init": lambda s, rng: ti.zeros_init(s),
    "ones_init": lambda s, rng: ti.ones_init(s),
}


@pytest.mark.parametrize("name", SHAPED)
def test_a_scalar_shape_and_an_int_shape_are_accepted(name):
    draw = SHAPED[name]
    scalar = draw((), PCG32(0))
    assert scalar.shape == () and scalar.dtype == np.float32
    three = draw(3, PCG32(0))
    assert three.shape == (3,) and three.dtype == np.float32 and three.flags.c_contiguous
    assert three.tobytes() == draw((3,), PCG32(0)).tobytes()
    assert draw(np.int64(3), PCG32(0)).tobytes() == three.tobytes()
    assert scalar.reshape(1).tobytes() == draw((1,), PCG32(0)).tobytes()


def test_normal_init_of_a_scalar_shape_is_the_first_normal_scaled():
    assert ti.normal_init((), 0.5, PCG32(0)) == np.float32(0.5 * ti.normal(PCG32(0), 1)[0])
    assert ti.normal_init(3, 0.5, PCG32(0)).tolist() == ti.normal_init((3,), 0.5, PCG32(0)).tolist()


# --- no warning escapes, at extreme inputs ---------------------------------------------------


@pytest.fixture
def warnings_are_errors():
    with warnings.catch_warnings(), np.errstate(all="warn"):
        warnings.simplefilter("error")
        yield


@pytest.mark.usefixtures("warnings_are_errors")
def test_mean_square_overflows_to_inf_without_a_warning():
    assert mean_square(np.array([1e307, 1e307])) == math.inf
    assert mean_square(np.array([1e-200])) == 0.0


@pytest.mark.usefixtures("warnings_are_errors")
def test_mean_square_of_nan_is_inf():
    assert mean_square(np.array([math.nan, 1.0])) == math.inf
    assert mean_square(np.array([math.inf])) == math.inf


@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("activation", ["tanh", "linear", "gelu", "silu", "sigmoid"])
def test_propagate_overflows_without_a_warning(activation):
    # 1e200 * 10 is past float64 already in the weights; gelu's, silu's and sigmoid's
    # phi' warn on inf when nothing silences them.
    unit = np.full((4, 4), 10.0)
    h = np.ones((4, 2))
    forward, backward = propagate([unit, unit, unit], 1e308, activation, h, upstream=h)
    assert forward[0] == 1.0 and len(forward) == len(backward) == 4
    if activation not in ("tanh", "sigmoid"):  # those saturate: their h stay finite
        assert forward[-1] == math.inf
    assert not any(math.isnan(m) for m in forward + backward)  # overflowed is inf


def test_propagate_computes_in_float64_whatever_the_unit_matrices_dtype():
    # float32 units times 1e39 would be inf in float32 (its largest is 3.4e38).
    unit = np.eye(3, dtype=np.float32)
    x = np.ones((3, 2))
    first, last = propagate([unit], 1e39, "linear", x)
    assert first == 1.0 and math.isclose(last, 1e78, rel_tol=1e-15)


@pytest.mark.usefixtures("warnings_are_errors")
@pytest.mark.parametrize("direction", ["forward", "backward"])
@pytest.mark.parametrize(
    "extreme",
    [dict(initializer="normal_init", std=1e300), dict(initializer="normal_init", std=1e-300),
     dict(initializer="kaiming_normal", gain=1e300)],
)  # fmt: skip
def test_simulate_at_an_extreme_std_or_gain_shows_overflow_and_raises_nothing(direction, extreme):
    # What a slider at its end asks: std**2 alone is past float64 here (Python raises
    # OverflowError for 1e300**2), and gelu's and silu's phi' warn on inf unless silenced.
    settings = dict(n_layers=3, width=8, seeds=1, batch=2, direction=direction, **extreme)
    for name in ACTIVATIONS:
        plain = simulate(name, **settings)
        assert not np.isnan(plain.per_seed).any() and not np.isnan(plain.theory).any()
        fast = UnitWeights().simulate(name, **settings)
        np.testing.assert_array_equal(fast.theory, plain.theory)


@pytest.mark.usefixtures("warnings_are_errors")
def test_weight_gradient_theory_beyond_float64_is_inf_not_nan():
    # gelu at gain 1e100: g overflows and E[phi'**2] * g * m meets inf * 0 on the way
    out = weight_gradient_theory("gelu", gain=1e100, n_layers=6)
    assert math.isnan(out[0]) and all(v == math.inf for v in out[1:])


@pytest.mark.usefixtures("warnings_are_errors")
def test_gaussian_expectation_overflows_without_a_warning():
    assert gaussian_expectation(lambda z: z * z, 1e307) == math.inf
    assert gaussian_expectation(lambda z: np.exp(z), 1e6) == math.inf


# --- defaults and the helpers' own checks ------------------------------------------------------


def test_each_row_s_std_is_its_formula_at_its_knob():
    assert INITIALIZERS["normal_init"].std(3, 4, 0.02) == 0.02
    assert INITIALIZERS["xavier_normal"].std(3, 4, 1.0) == math.sqrt(2 / 7)  # gain 1
    assert INITIALIZERS["xavier_uniform"].std(3, 4, 1.0) == ti.xavier_std(3, 4)
    assert INITIALIZERS["kaiming_normal"].std(3, 4, 1.0) == 1 / math.sqrt(3)
    assert INITIALIZERS["kaiming_normal_fan_out"].std(3, 4, 1.0) == 0.5
    assert INITIALIZERS["orthogonal_init"].std(3, 4, 1.0) == 0.5  # rows of 4 entries


def test_mean_field_takes_direction_forward_by_default():
    forward = mean_field("relu", gain=1.0, n_layers=3)
    assert np.allclose(forward, [1.0, 0.5, 0.25, 0.125], rtol=1e-12)
    assert (
        forward.tolist() == mean_field("relu", gain=1.0, n_layers=3, direction="forward").tolist()
    )
    assert np.allclose(
        mean_field("relu", gain=1.0, n_layers=2, direction="backward"), [0.25, 0.5, 1.0], rtol=1e-12
    )


@pytest.mark.usefixtures("warnings_are_errors")
def test_beyond_float32_a_weight_is_inf_without_a_warning_whichever_initializer():
    # The package's one overflow: a number beyond its type's range is +-inf, silently.
    assert ti.constant_init((2,), -1e39).tolist() == [-math.inf, -math.inf]
    assert np.isinf(ti.xavier_normal((4, 3), 1e300, PCG32(0))).all()
    assert np.isinf(ti.uniform_init((3,), 0.0, 1e39, PCG32(0))[1:]).all()
    assert np.isinf(ti.orthogonal_init((3, 3), 1e300, PCG32(0))).any()


@pytest.mark.usefixtures("warnings_are_errors")
def test_a_slope_whose_square_is_past_float_range_has_its_gain_without_a_warning():
    # sqrt(2 / (1 + a**2)) is sqrt(2) / |a| to the last bit here: not sqrt(2 / inf) = 0
    assert ti.calculate_gain("leaky_relu", 1e200) == math.sqrt(2.0) / 1e200
    a32 = np.float32(-1e20)  # past float32's range when squared in float32
    assert ti.calculate_gain("leaky_relu", a32) == math.sqrt(2.0) / -float(a32)


def test_a_row_s_weights_are_the_spec_formula_rounded_to_float32_once():
    from tinyinit.physics.propagation_fast import UnitWeights

    width, seed = 5, 3
    scalar = ref.PCG32(seed)
    u = np.array([scalar.uniform() for _ in range(width * width)]).reshape(width, width)
    a = ti.xavier_bound(width, width)
    w = INITIALIZERS["xavier_uniform"].initializer(1.0)((width, width), PCG32(seed))
    assert w.tolist() == (-a + 2.0 * a * u).astype(np.float32).tolist()
    z = np.array(ref.normal(ref.PCG32(seed), width * width)).reshape(width, width)
    w = INITIALIZERS["normal_init"].initializer(0.02)((width, width), PCG32(seed))
    assert w.tolist() == (0.02 * z).astype(np.float32).tolist()
    std = ti.xavier_std(width, width)
    w = INITIALIZERS["xavier_normal"].initializer(1.0)((width, width), PCG32(seed))
    assert w.tolist() == (std * z).astype(np.float32).tolist()

    # the forward memo of a cache holds at most memo_size passes, 64 by default
    cache = UnitWeights()
    for k in range(66):
        cache.simulate("tanh", "normal_init", std=0.1 + k / 100, n_layers=1, width=4, seeds=1)
    assert len(cache.forward_memo) == 64


@pytest.mark.usefixtures("warnings_are_errors")
def test_depth_result_ratio_is_last_over_first_layer_without_a_warning():
    from tinyinit.physics.propagation import simulate

    r = simulate("relu", "xavier_normal", n_layers=4, width=8, seeds=3)
    expected = np.median(r.per_seed[:, -1] / r.per_seed[:, 1])
    assert r.ratio() == float(expected)
    assert r.ratio(2) == float(np.median(r.per_seed[:, -1] / r.per_seed[:, 2]))
    dead = simulate("relu", "normal_init", std=0.0, n_layers=3, width=8, seeds=2)  # 0 / 0
    assert math.isnan(dead.ratio())
