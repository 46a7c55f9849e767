"""The Monte Carlo helpers measure what the formula predicts, reproducibly."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from tinyinit import PCG32, kaiming_normal, normal, xavier_normal, xavier_uniform
from tinyinit.variance import (
    INPUTS,
    Estimate,
    draw_inputs,
    draw_weights,
    format_table,
    hand_example,
    input_moments,
    mean_square_of,
    mean_square_through,
    predicted_variance,
    relu,
    sample_sums,
    stack_layers,
    variance_of,
)


@pytest.mark.parametrize("kind", list(INPUTS))
def test_inputs_have_their_stated_moments(kind):
    x = draw_inputs(kind, PCG32(1), 200_000)
    m = input_moments(kind)
    mean_se = math.sqrt(m.variance / len(x))
    assert abs(x.mean() - m.mean) < 4 * mean_se
    assert mean_square_of(x).agrees(m.mean_square)


@pytest.mark.parametrize("kind", list(INPUTS))
@pytest.mark.parametrize("weights", ["normal", "uniform"])
def test_variance_of_a_sum_matches_the_formula(kind, weights):
    fan_in, std = 16, 0.3
    z = sample_sums(fan_in, std, kind, PCG32(2), 20_000, weights=weights)
    expected = predicted_variance(fan_in, std**2, input_moments(kind).mean_square)
    assert variance_of(z).agrees(expected)


def test_relu_inputs_refute_the_variance_of_x():
    fan_in, std = 32, 0.25
    measured = variance_of(sample_sums(fan_in, std, "relu", PCG32(3), 40_000))
    wrong = predicted_variance(fan_in, std**2, input_moments("relu").variance)
    assert abs(measured.z_score(wrong)) > 20


def test_sums_are_reproducible_and_draw_weights_first():
    a = sample_sums(5, 1.0, "normal", PCG32(7), 10)
    b = sample_sums(5, 1.0, "normal", PCG32(7), 10)
    assert a.tobytes() == b.tobytes()
    rng = PCG32(7)
    w = draw_weights((10, 5), 1.0, rng)
    x = normal(rng, 50).reshape(10, 5)
    np.testing.assert_allclose(a, (w * x).sum(axis=1), rtol=1e-12)


def test_draw_weights_uniform_has_the_normal_variance():
    w = draw_weights(100_000, 0.5, PCG32(4), "uniform")
    assert np.abs(w).max() <= math.sqrt(3) * 0.5
    assert mean_square_of(w).agrees(0.25)


def test_a_custom_input_distribution_is_a_callable():
    x = draw_inputs(lambda rng, n: 3.0 + normal(rng, n), PCG32(5), (4, 6))
    assert x.shape == (4, 6)
    np.testing.assert_array_equal(x.ravel(), 3.0 + normal(PCG32(5), 24))


def test_bad_names_raise_value_errors_naming_the_choices():
    with pytest.raises(ValueError, match="normal, uniform, shifted, relu"):
        draw_inputs("cauchy", PCG32(0), 3)
    with pytest.raises(ValueError, match="normal, uniform"):
        draw_weights(3, 1.0, PCG32(0), "laplace")


def test_predicted_variance_is_exact_with_fractions():
    assert predicted_variance(3, Fraction(2, 3), 1) == 2
    assert predicted_variance(3, Fraction(2, 7), 1) == Fraction(6, 7)


def test_estimate_agreement_counts_standard_errors():
    est = Estimate(1.0, 0.1)
    assert est.z_score(0.7) == pytest.approx(3.0)
    assert est.agrees(0.7) and not est.agrees(0.5)


def test_mean_square_through_a_kaiming_4x3_layer():
    weights = stack_layers(lambda rng: kaiming_normal((4, 3), "fan_in", "relu", rng), range(4000))
    x = normal(PCG32(9, stream=1), 4000 * 8 * 3).reshape(4000, 8, 3)
    assert mean_square_through(weights, x).agrees(2.0)
    assert mean_square_through(weights, x, relu).agrees(1.0)


def test_stack_layers_uses_one_seed_per_layer():
    stacked = stack_layers(lambda rng: xavier_normal((4, 3), 1.0, rng), [0, 1])
    np.testing.assert_array_equal(stacked[1], xavier_normal((4, 3), 1.0, PCG32(1)))


def test_hand_example_matches_the_card():
    scales = hand_example()
    assert scales["xavier_uniform_bound"] == pytest.approx(0.92582, abs=1e-5)
    assert scales["xavier_normal_std"] == pytest.approx(0.53452, abs=1e-5)
    assert scales["kaiming_normal_std"] == pytest.approx(0.81650, abs=1e-5)
    assert scales["gpt2_residual_std"] == pytest.approx(0.0040825, abs=1e-7)
    w = xavier_uniform((4, 3), 1.0, PCG32(0))
    assert np.abs(w).max() <= scales["xavier_uniform_bound"]


def test_format_table_aligns_columns():
    text = format_table(["name", "value"], [["a", 1.5], ["long name", 0.25]], ".2f")
    lines = text.splitlines()
    assert len({len(line) for line in lines}) == 1
    assert lines[2].endswith("1.50") and lines[3].startswith("long name")


def test_the_one_mean_square_is_inf_past_float64_and_refuses_nothing_to_average():
    from tinyinit.variance import mean_square, root_mean_square

    assert mean_square(np.array([3.0, -1.0])) == 5.0 and root_mean_square([[3.0], [-3.0]]) == 3.0
    assert mean_square(np.array([1e200, 1.0])) == math.inf  # the square is beyond float64
    assert mean_square(np.array([np.inf, 0.0])) == math.inf  # and so is an overflowed stack's
    assert mean_square(np.array([np.nan])) == math.inf
    assert root_mean_square(np.array([1e200])) == math.inf
    with pytest.raises(ValueError, match=r"^a must hold at least one number, got an empty array$"):
        root_mean_square(np.array([]))
