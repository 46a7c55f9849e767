"""tinyinit.physics.mean_field: the one quadrature, at every scale the theory reaches."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from test_propagation import reference_expectation

from tinyinit.core.activations import ACTIVATIONS
from tinyinit.physics.mean_field import (
    activation_mean_square,
    fixed_point,
    gaussian_expectation,
    next_q,
    q_map_slope,
    slope_mean_square,
)


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
