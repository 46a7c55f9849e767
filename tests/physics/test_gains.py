"""Gains from first principles: quadrature against closed forms and torch's table."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tinyinit import PCG32, calculate_gain, kaiming_normal, normal
from tinyinit.core.activations import ACTIVATIONS, activation, gelu
from tinyinit.physics.gains import gain_for_fixed_point, single_layer_gain
from tinyinit.physics.mean_field import (
    activation_mean_square,
    fixed_point,
    gaussian_expectation,
    gradient_factor,
    mean_field,
)


def test_relu_gain_is_sqrt2_to_1e12():
    assert abs(activation_mean_square("relu") - 0.5) < 1e-12
    assert abs(single_layer_gain("relu") - math.sqrt(2)) < 1e-12
    assert abs(single_layer_gain("relu") - calculate_gain("relu")) < 1e-12


@pytest.mark.parametrize("q", [1e-4, 0.3, 1.0, 7.0, 1e3])
def test_relu_keeps_half_the_second_moment_at_every_scale(q):
    assert activation_mean_square("relu", q) == pytest.approx(q / 2, rel=1e-13)


@pytest.mark.parametrize("slope", [0.0, 0.01, 0.2, 0.5, 1.0, 3.0])
def test_leaky_relu_gain_is_the_formula(slope):
    expected = math.sqrt(2 / (1 + slope**2))
    assert abs(single_layer_gain("leaky_relu", param=slope) - expected) < 1e-12
    assert (
        abs(single_layer_gain("leaky_relu", param=slope) - calculate_gain("leaky_relu", slope))
        < 1e-12
    )


def test_a_kink_inside_a_panel_is_what_the_panel_edge_avoids():
    # Gauss-Hermite over the whole line straddles relu's corner: E[relu(z)] = 1/sqrt(2 pi)
    # comes out with an error that only falls like 1/n (E[relu(z)**2] is saved by symmetry).
    c = math.sqrt(2 * math.pi)
    x, w = np.polynomial.hermite_e.hermegauss(40)
    assert abs(np.sum(w * np.maximum(x, 0)) / c - 1 / c) > 1e-3
    assert abs(gaussian_expectation(lambda z: np.maximum(z, 0)) - 1 / c) < 1e-14
    assert abs(gaussian_expectation(lambda z: np.maximum(z, 0) ** 2) - 0.5) < 1e-14


@pytest.mark.parametrize("q", [1e-3, 1.0, 50.0])
def test_quadrature_agrees_with_a_fine_trapezoid_for_tanh(q):
    xi = np.linspace(-12, 12, 400_001)
    density = np.exp(-0.5 * xi**2) / math.sqrt(2 * math.pi)
    trapezoid = np.trapezoid if hasattr(np, "trapezoid") else np.trapz
    reference = trapezoid(np.tanh(math.sqrt(q) * xi) ** 2 * density, xi)
    assert activation_mean_square("tanh", q) == pytest.approx(reference, rel=1e-9)


def test_tanh_single_layer_gain_is_below_torchs_five_thirds():
    g = single_layer_gain("tanh")
    assert round(g, 4) == 1.5925
    assert g < calculate_gain("tanh") == 5 / 3
    # the gain whose deep stack settles at q* = 1 is the single-layer gain
    assert gain_for_fixed_point("tanh", 1.0) == pytest.approx(g, rel=1e-14)
    assert fixed_point("tanh", g) == pytest.approx(1.0, rel=1e-9)


def test_tanh_with_five_thirds_settles_near_042_and_with_gain_1_drains():
    q_star = fixed_point("tanh", 5 / 3)
    settled = activation_mean_square("tanh", q_star)
    assert round(settled, 2) == 0.42
    h = mean_field("tanh", gain=5 / 3, n_layers=20)
    assert abs(h[-1] - settled) < 1e-6
    h1 = mean_field("tanh", gain=1.0, n_layers=20)
    assert 0.02 < h1[-1] < 0.03  # "about 0.02 after 20 layers"
    assert h1[-1] < h[-1] / 2  # the card's test_tanh_signal_survives_with_xavier
    assert fixed_point("tanh", 1.0) == 0.0
    assert np.all(np.diff(h1) < 0)


def test_tanh_five_thirds_matches_a_real_deep_stack():
    # 20 square tanh layers of width 256, Xavier-normal with gain 5/3 (= gain / sqrt(n)).
    width, rng = 256, PCG32(7)
    x = normal(rng, 512 * width).reshape(512, width)
    for _ in range(20):
        w = kaiming_normal((width, width), "fan_in", "tanh", rng).astype(np.float64)
        x = np.tanh(x @ w.T)
    settled = activation_mean_square("tanh", fixed_point("tanh", 5 / 3))
    assert float(np.mean(x**2)) == pytest.approx(settled, rel=0.05)


def test_selu_is_self_normalizing_with_gain_1_and_torchs_three_quarters_helps_gradients():
    assert abs(activation_mean_square("selu") - 1.0) < 1e-12
    assert single_layer_gain("selu") == pytest.approx(1.0, abs=1e-12)
    assert fixed_point("selu", 1.0) == pytest.approx(1.0, rel=1e-9)
    q34 = fixed_point("selu", calculate_gain("selu"))
    assert 0.02 < q34 < 0.03  # the forward signal settles small
    chi_1 = gradient_factor("selu", 1.0, 1.0)
    chi_34 = gradient_factor("selu", 0.75, q34)
    assert chi_1 > 1.07 and abs(chi_34 - 1) < 0.005


def test_gelu_and_silu_gains_sit_near_relus():
    assert abs(gelu(np.array([1.0]))[0] - 0.8413447460685429) < 1e-15
    g_gelu, g_silu = single_layer_gain("gelu"), single_layer_gain("silu")
    assert round(g_gelu, 3) == 1.534 and round(g_silu, 3) == 1.677
    for g in (g_gelu, g_silu):
        assert abs(g - math.sqrt(2)) / math.sqrt(2) < 0.2


def test_every_activation_has_a_finite_gain():
    for name in ACTIVATIONS:
        assert 0.5 < single_layer_gain(name) < 2.0, name


def test_a_phi_that_is_zero_everywhere_has_no_gain_and_is_refused_by_name():
    # E[phi(z)**2] = 0: no gain scales its output to a unit one (not a division by zero)
    for call, law in [
        (lambda phi: single_layer_gain(phi), "N(0, 1)"),
        (lambda phi: gain_for_fixed_point(phi, 2.0), "N(0, q_star)"),
    ]:
        for phi in [np.zeros_like, lambda z: 0.0 * z]:
            with pytest.raises(ValueError) as refusal:
                call(phi)
            assert str(refusal.value).startswith(
                f"phi must be an activation with E[phi(z)**2] > 0 for z ~ {law} (no gain "
                "scales a zero output to a unit one), got <function "
            )
    assert single_layer_gain(lambda z: z * (z > 3)) > 1  # nonzero on a tail only: a gain


def test_relu_fixed_point_is_marginal():
    assert fixed_point("relu", math.sqrt(2), q0=3.0) == 3.0
    assert fixed_point("relu", 1.0) == 0.0
    assert fixed_point("relu", 2.0) == math.inf


def test_slopes_agree_with_central_differences():
    z = np.linspace(-4, 4, 81) + 0.0125  # off the kinks at 0
    for name in ACTIVATIONS:
        f = activation(name).phi
        numeric = (f(z + 1e-6) - f(z - 1e-6)) / 2e-6
        assert np.allclose(activation(name).dphi(z), numeric, atol=1e-6), name
    assert np.allclose(activation("leaky_relu", 0.2).dphi(np.array([-1.0, 1.0])), [0.2, 1.0])
