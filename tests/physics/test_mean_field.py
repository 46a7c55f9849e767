"""tinyinit.physics.mean_field: the one quadrature, at every scale the theory reaches."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from test_propagation import reference_expectation

from tinyinit.core.activations import ACTIVATIONS
from tinyinit.core.arguments import KindError
from tinyinit.physics.mean_field import (
    activation_mean_square,
    fixed_point,
    gaussian_expectation,
    mean_field,
    next_q,
    q_map_slope,
    slope_mean_square,
)
from tinyinit.physics.propagation import simulate


@pytest.mark.parametrize("q", [1e2, 1e4, 1e6])
@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_a_large_variance_keeps_a_smooth_turn_resolved(name, q):
    # tanh(sqrt(q) xi) turns within |xi| ~ 1/sqrt(q): panels shrink toward 0 to follow it.
    act = ACTIVATIONS[name]
    for f in (lambda z: act.phi(z) ** 2, lambda z: act.dphi(z) ** 2):
        assert gaussian_expectation(f, q) == pytest.approx(reference_expectation(f, q), rel=1e-12)


def test_a_constant_is_exact_and_q_zero_is_f_of_zero():
    assert gaussian_expectation(lambda z: np.ones_like(z), 7.0) == pytest.approx(1.0, abs=5e-16)
    assert gaussian_expectation(lambda z: np.cos(z) + 2.0, 0.0) == 3.0


def test_an_overflowed_variance_gives_the_limits_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert activation_mean_square("relu", math.inf) == math.inf
        assert activation_mean_square("tanh", math.inf) == pytest.approx(1.0, abs=5e-16)
        assert slope_mean_square("tanh", math.inf) == 0.0


@pytest.mark.parametrize("bad", [-1.0, math.nan])
def test_a_variance_below_zero_or_nan_is_refused(bad):
    with pytest.raises(ValueError, match=r"^q must be a real number >= 0, inf allowed, got "):
        gaussian_expectation(np.square, bad)


def test_the_mean_field_map_is_gain_squared_times_the_mean_square():
    q = 0.7
    assert next_q("tanh", 1.3, q) == 1.3**2 * activation_mean_square("tanh", q)


@pytest.mark.parametrize("name", ["tanh", "gelu", "silu", "sigmoid", "relu"])
@pytest.mark.parametrize("q", [0.3, 1.0, 4.0])
def test_the_q_map_slope_is_the_derivative_of_the_map(name, q):
    gain, dq = 1.4, 1e-4 * q
    difference = (next_q(name, gain, q + dq) - next_q(name, gain, q - dq)) / (2 * dq)
    assert q_map_slope(name, gain, q) == pytest.approx(difference, rel=1e-6)


def test_relu_at_its_gain_is_a_line_of_fixed_points_and_tanh_settles():
    for q in (1e-3, 1.0, 1e3):
        assert q_map_slope("relu", math.sqrt(2.0), q) == pytest.approx(1.0, rel=1e-12)
    assert q_map_slope("tanh", 5 / 3, fixed_point("tanh", 5 / 3)) < 1


@pytest.mark.parametrize("name", ["gelu", "silu"])
def test_gelu_and_silu_are_unstable_at_their_single_layer_gain(name):
    gain = 1 / math.sqrt(activation_mean_square(name, 1.0))
    assert next_q(name, gain, 1.0) == pytest.approx(1.0, rel=1e-12)  # q = 1 is a fixed point
    assert q_map_slope(name, gain, 1.0) > 1.1  # which a deep stack leaves


@pytest.mark.parametrize("gain", [0.5, 1.0, 2.0])
def test_from_a_batch_every_layer_has_q_gain_squared_and_relu_s_gradient_keeps_after_layer_1(gain):
    """LSUV's theory: q_l = gain**2 at every layer, so m_l = E[phi(z)**2] is one number; layer
    l's n std**2 is gain**2 / m_{l-1}, which for ReLU (m = gain**2 / 2, E[phi'**2] = 1/2) makes
    every backward factor 1 but the first layer's, gain**2 / 2 (m_0 = 1)."""
    forward = mean_field("relu", gain=gain, n_layers=5, from_batch=True)
    np.testing.assert_allclose(forward, [1.0] + [gain**2 / 2] * 5, rtol=1e-12)
    backward = mean_field("relu", gain=gain, n_layers=5, direction="backward", from_batch=True)
    np.testing.assert_allclose(backward, [gain**2 / 2] + [1.0] * 5, rtol=1e-12)
    tanh = mean_field("tanh", gain=gain, n_layers=4, from_batch=True)
    assert tanh[1] == tanh[4] == mean_field("tanh", gain=gain, n_layers=1)[1]


def test_from_a_batch_a_gain_of_0_is_a_dead_stack_both_ways_and_the_flag_is_refused_by_name():
    np.testing.assert_array_equal(mean_field("relu", gain=0.0, n_layers=3, from_batch=True),
                                  [1.0, 0.0, 0.0, 0.0])  # fmt: skip
    back = mean_field("relu", gain=0.0, n_layers=3, direction="backward", from_batch=True)
    np.testing.assert_array_equal(back, [0.0, 0.0, 0.0, 1.0])
    with pytest.raises(KindError, match="from_batch must be True or False, got 'yes'"):
        mean_field("relu", gain=1.0, n_layers=3, from_batch="yes")


def test_read_from_the_batch_a_layer_above_a_dead_one_keeps_its_start_as_lsuv_leaves_it():
    """tanh at gain 0: layer 1's factor is 0, so nothing reaches layer 2, whose Var(z) is 0 and
    whose factor lsuv_factor leaves at 1: n std**2 = 1 there and above, and a gradient passes
    (tanh'(0) = 1) down to layer 1, where it stops. simulate measures the same."""
    theory = mean_field("tanh", gain=0.0, n_layers=3, direction="backward", from_batch=True)
    assert theory.tolist() == [0.0, 1.0, 1.0, 1.0]
    assert not theory.flags.writeable
    r = simulate("tanh", "lsuv", gain=0.0, n_layers=3, width=16, seeds=1, direction="backward")
    np.testing.assert_allclose(r.per_seed[0], theory, rtol=1e-6, atol=0)  # float32 weights
