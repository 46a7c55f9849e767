"""tinyinit.core.activations: one table of phi, phi' and kinks that every module reads."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from tinyinit.core.activations import (
    ACTIVATIONS,
    SATURATED_SLOPE,
    TANH_SATURATED,
    Activation,
    activation,
    as_activation,
    erf,
    gelu,
    gelu_slope,
    leaky_relu,
    normal_cdf,
    silu,
    silu_slope,
)


def test_the_table_holds_torchs_activations_and_the_transformers_two():
    assert list(ACTIVATIONS) == [
        "linear", "relu", "leaky_relu", "tanh", "sigmoid", "selu", "gelu", "silu",
    ]  # fmt: skip
    assert all(isinstance(act, Activation) for act in ACTIVATIONS.values())


def test_kinks_are_where_the_slope_jumps():
    z = np.array([-1e-9, 1e-9])
    for name, act in ACTIVATIONS.items():
        jumps = abs(np.diff(act.dphi(z))[0]) > 1e-6
        assert jumps == (0.0 in act.kinks), name


def test_erf_is_the_c_librarys_bit_for_bit():
    z = np.linspace(-7, 7, 4001).reshape(4001, 1)
    expected = np.array([math.erf(v) for v in z.ravel()]).reshape(z.shape)
    assert np.array_equal(erf(z), expected)
    assert erf(0.5).shape == () and float(erf(0.5)) == math.erf(0.5)


def test_gelu_is_one_function_with_torchs_two_forms():
    x = np.linspace(-6, 6, 241)
    assert np.array_equal(gelu(x), x * 0.5 * (1.0 + erf(x / math.sqrt(2.0))))
    np.testing.assert_allclose(gelu(x, "tanh"), gelu(x), atol=1e-3)
    assert np.array_equal(ACTIVATIONS["gelu"].phi(x), gelu(x))  # the table's is gelu unchecked
    with pytest.raises(ValueError, match="^approximate must be one of none, tanh, got 'erf'"):
        gelu(x, "erf")


def test_gelu_and_its_slope_read_the_one_normal_cdf():
    z = np.linspace(-6, 6, 1201)
    assert np.array_equal(gelu(z), z * normal_cdf(z))
    assert gelu_slope(np.array([0.0]))[0] == normal_cdf(0.0) == 0.5
    erfc_form = [0.5 * math.erfc(-v / math.sqrt(2)) for v in z]
    np.testing.assert_allclose(normal_cdf(z), erfc_form, rtol=0, atol=1e-15)
    assert normal_cdf(np.float32(1.0)).dtype == np.float64


def test_a_saturated_tanh_unit_is_one_threshold_on_h_and_on_the_slope():
    z = np.linspace(-4, 4, 8001)
    by_slope = ACTIVATIONS["tanh"].dphi(z) < SATURATED_SLOPE
    by_value = np.abs(np.tanh(z)) > TANH_SATURATED
    assert np.mean(by_slope != by_value) < 1e-3  # the two differ by rounding at the edge only
    assert round(SATURATED_SLOPE, 4) == 0.0591


def test_leaky_relu_slope_is_a_parameter():
    z = np.array([-2.0, 3.0])
    assert np.array_equal(activation("leaky_relu", 0.2).phi(z), [-0.4, 3.0])
    assert np.array_equal(activation("leaky_relu").phi(z), ACTIVATIONS["leaky_relu"].phi(z))
    assert np.array_equal(leaky_relu(0.5).dphi(z), [0.5, 1.0])


def test_a_callable_gets_its_slope_by_central_differences():
    act = activation(np.sin)
    z = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(act.dphi(z), np.cos(z), atol=1e-9)
    assert act.kinks == ()


@pytest.mark.parametrize("bad", ["swish", "ReLU", "", None, 3])
def test_an_unknown_activation_is_named_in_the_error(bad):
    error = TypeError if not isinstance(bad, str) else ValueError
    with pytest.raises(error, match=rf"^phi must be one of linear, .*, got {bad!r}$"):
        activation(bad)
    with pytest.raises(error, match=rf"^activation must be one of linear, .*, got {bad!r}$"):
        as_activation(bad, name="activation")


@pytest.mark.parametrize("bad", [math.tanh, lambda z: None, lambda z: z[:1]])
def test_a_callable_that_cannot_map_an_array_is_refused_where_it_enters(bad):
    with pytest.raises(TypeError, match=r"^activation must be a callable that maps a numpy array"):
        as_activation(bad, name="activation")


def test_a_slope_goes_with_leaky_relu_only():
    assert activation("leaky_relu", np.float32(0.5)).phi(np.array([-2.0]))[0] == -1.0
    for name in ("relu", np.tanh):
        with pytest.raises(ValueError, match=r"^param must be None for "):
            activation(name, 0.2)


def test_silu_and_its_slope_are_stable_at_the_ends():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z = np.array([-1e300, -1000.0, 0.0, 1000.0, 1e300])
        np.testing.assert_array_equal(silu(z), [-0.0, -0.0, 0.0, 1000.0, 1e300])
        np.testing.assert_array_equal(silu_slope(z), [0.0, 0.0, 0.5, 1.0, 1.0])
