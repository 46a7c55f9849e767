"""The Monte Carlo helpers measure what the formula predicts, reproducibly."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from refusals import assert_refused

from tinyinit import (
    PCG32,
    kaiming_normal,
    normal,
    normal_init,
    uniform_bound,
    xavier_normal,
    xavier_uniform,
)
from tinyinit.core.arguments import KindError
from tinyinit.core.distributions import scaled_uniform_float32
from tinyinit.physics.variance import (
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
    from tinyinit.physics.variance import mean_square, root_mean_square

    assert mean_square(np.array([3.0, -1.0])) == 5.0 and root_mean_square([[3.0], [-3.0]]) == 3.0
    assert mean_square(np.array([1e200, 1.0])) == math.inf  # the square is beyond float64
    assert mean_square(np.array([np.inf, 0.0])) == math.inf  # and so is an overflowed stack's
    assert mean_square(np.array([np.nan])) == math.inf
    assert root_mean_square(np.array([1e200])) == math.inf
    with pytest.raises(ValueError, match=r"^a must hold at least one number, got an empty array$"):
        root_mean_square(np.array([]))
    with pytest.raises(KindError, match=r"^a must be a real array, got 'x'$"):
        mean_square("x")


def _one_too_many(rng, n):
    return np.zeros(n + 1)


def _a_column(rng, n):  # n numbers, but not the n-vector asked for
    return np.zeros((n, 1))


def _names(rng, n):
    return ["a"] * n


def _words(z):  # strings where numbers were asked for
    return [["a"]] * len(z)


def test_every_refusal_of_variance_is_worded_to_the_letter():
    """What a caller reads for each wrong argument, and of which kind: its name, the value shown
    as given (an int stays an int), what is accepted; each count and bound one past its end."""
    inputs = "a name of INPUTS or a callable (rng, n) -> n numbers"
    shapes = "x must be (L, m, in) for weights (L, out, in) with L >= 2 layers, got shapes"
    w, x = np.ones((2, 1, 3)), np.ones((2, 4, 3))
    shapes_by_seed = iter([(2,), (3,), (2,)])
    refusals = [
        (
            lambda: Estimate(1.0, 0.1).agrees(1.0, n_se=-1),
            ValueError,
            "n_se must be a finite real number >= 0, got -1",
        ),
        (lambda: predicted_variance(0, 1, 1), ValueError, "fan_in must be an integer >= 1, got 0"),
        (
            lambda: predicted_variance(1, -1, 1),
            ValueError,
            "weight_variance must be a finite real number >= 0, got -1",
        ),
        (
            lambda: predicted_variance(1, 1, -0.5),
            ValueError,
            "mean_square must be a finite real number >= 0, got -0.5",
        ),
        (
            lambda: draw_weights(3, -1, PCG32(0)),
            ValueError,
            "std must be a finite real number >= 0, got -1",
        ),
        (
            lambda: draw_weights(3, -1, PCG32(0), "uniform"),
            ValueError,
            "std must be a finite real number >= 0, got -1",
        ),
        (
            lambda: sample_sums(0, 1.0, "normal", PCG32(0), 2),
            ValueError,
            "fan_in must be an integer >= 1, got 0",
        ),
        (
            lambda: sample_sums(1, 1.0, "normal", PCG32(0), 0),
            ValueError,
            "n_samples must be an integer >= 1, got 0",
        ),
        (
            lambda: sample_sums(2, 1.0, len, PCG32(0), 3),  # len(rng, n) is a TypeError
            KindError,
            f"inputs must be {inputs}, got <built-in function len>, which gave None for n = 6",
        ),
        (
            lambda: draw_inputs(_names, PCG32(0), 2),  # no numbers
            KindError,
            f"kind must be {inputs}, got {_names!r}, which gave None for n = 2",
        ),
        (
            lambda: draw_inputs(_one_too_many, PCG32(0), (2, 3)),
            KindError,
            f"kind must be {inputs}, got {_one_too_many!r}, "
            "which gave an array of shape (7,) and dtype float64 for n = 6",
        ),
        (
            lambda: draw_inputs(_a_column, PCG32(0), 2),
            KindError,
            f"kind must be {inputs}, got {_a_column!r}, "
            "which gave an array of shape (2, 1) and dtype float64 for n = 2",
        ),
        (
            lambda: variance_of([1.0]),
            ValueError,
            "samples must hold at least 2 values (a standard error), got 1",
        ),
        (
            lambda: mean_square_of(np.zeros((1, 1))),
            ValueError,
            "samples must hold at least 2 values (a standard error), got 1",
        ),
        (
            lambda: mean_square_through(np.ones((2, 3)), x),
            ValueError,
            "weights must be a real array of 3 dimensions, "
            "got an array of shape (2, 3) and dtype float64",
        ),
        (
            lambda: mean_square_through(w, np.ones((2, 3))),
            ValueError,
            "x must be a real array of 3 dimensions, "
            "got an array of shape (2, 3) and dtype float64",
        ),
        (
            lambda: mean_square_through(w, np.ones((3, 4, 3))),
            ValueError,
            f"{shapes} (3, 4, 3) and (2, 1, 3)",
        ),
        (
            lambda: mean_square_through(w, np.ones((2, 4, 2))),
            ValueError,
            f"{shapes} (2, 4, 2) and (2, 1, 3)",
        ),
        (
            lambda: mean_square_through(np.ones((1, 1, 3)), np.ones((1, 4, 3))),  # one layer
            ValueError,
            f"{shapes} (1, 4, 3) and (1, 1, 3)",
        ),
        (
            lambda: mean_square_through(w, x, len),
            KindError,
            "activation must give an array of numbers, got <built-in function len>, which did not",
        ),
        (
            lambda: mean_square_through(w, x, _words),  # no numbers: a ValueError inside
            KindError,
            f"activation must give an array of numbers, got {_words!r}, which did not",
        ),
        (
            lambda: stack_layers(_names, [0]),  # _names(rng) is a TypeError
            KindError,
            f"init must give an array of numbers, got {_names!r}, which did not",
        ),
        (
            lambda: stack_layers(np.ones, []),
            ValueError,
            "seeds must hold at least one seed, got none",
        ),
        (
            lambda: stack_layers(lambda rng: np.zeros(next(shapes_by_seed)), [0, 1, 2]),
            ValueError,
            "init must give one shape for every seed, got [(2,), (3,), (2,)]",
        ),
        (lambda: format_table(3, []), KindError, "headers must be a list of column names, got 3"),
        (
            lambda: format_table([], []),
            KindError,
            "headers must be a non-empty list of column names (str), got []",
        ),
        (
            lambda: format_table(["a", 1], []),
            KindError,
            "headers must be a non-empty list of column names (str), got ['a', 1]",
        ),
        (
            lambda: format_table(["a"], 3),
            KindError,
            "rows must be a list of rows, each a list of cells, got 3",
        ),
        (
            lambda: format_table(["a"], [["b"], "ab"]),
            KindError,
            "rows must be a list of rows, each a list of cells, got 'ab'",
        ),
        (
            lambda: format_table(["a", "b"], [[1]]),
            ValueError,
            "rows must have 2 cells each, got [1]",
        ),
        (
            lambda: format_table(["a"], [], 6),
            KindError,
            "floatfmt must be a format spec such as '.6g', got 6",
        ),
        (
            lambda: format_table(["a"], [], "q"),
            ValueError,
            "floatfmt must be a format spec for floats, got 'q'",
        ),
    ]
    assert_refused(refusals)


def test_each_range_of_variance_is_taken_from_its_bound():
    """The other side of each bound refused above: it runs."""
    assert predicted_variance(1, 0, 0) == 0 and predicted_variance(1, 0.5, 2) == 1.0
    assert draw_weights(2, 0, PCG32(0)).tolist() == [0.0, 0.0]
    assert sample_sums(1, 1.0, "normal", PCG32(0), 1).shape == (1,)
    assert variance_of([1.0, 3.0]) == Estimate(1.0, 0.0)
    assert mean_square_of([1.0, 3.0]) == Estimate(5.0, 4.0)
    assert mean_square_through(np.ones((2, 1, 3)), np.ones((2, 1, 3))) == Estimate(9.0, 0.0)
    assert stack_layers(lambda rng: np.ones(2), [5]).tolist() == [[1.0, 1.0]]  # one seed
    assert Estimate(1.5, 0.25).agrees(1.0, n_se=2.0)  # exactly 2 standard errors away
    assert Estimate(2.0, 0.0).agrees(2.0, n_se=0)


def test_the_estimates_are_their_formulas():
    # deviations (-1, -1, 2), squared (1, 1, 4): mean 2, standard error sqrt(3) / sqrt(3)
    assert variance_of([0.0, 0.0, 3.0]) == Estimate(2.0, 1.0)
    # squares (1, 1, 9, 9): mean 5, deviations 4 each, standard error sqrt(64 / 3) / sqrt(4)
    assert mean_square_of([1.0, -1.0, 3.0, -3.0]) == Estimate(5.0, pytest.approx(4 / math.sqrt(3)))
    # four layers, each averaged over its two outputs first: (1, 1, 5, 5), mean 3, deviations 2
    # each, standard error sqrt(16 / 3) / sqrt(4) across the layers
    x = np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 3.0], [1.0, 3.0]]).reshape(4, 2, 1)
    through = mean_square_through(np.ones((4, 1, 1)), x)
    assert through == Estimate(3.0, pytest.approx(2 / math.sqrt(3)))


def test_an_exact_estimate_is_infinitely_many_standard_errors_from_any_other_value():
    exact = Estimate(2.0, 0.0)
    z_scores = [exact.z_score(v) for v in (2.0, 1.0, 3.0, 2.5)]
    assert z_scores == [0.0, math.inf, -math.inf, -math.inf]
    assert exact.agrees(2.0) and not exact.agrees(1.0, n_se=1e300)
    assert Estimate(2.0, 1.0).z_score(1.0) == 1.0  # a standard error of 1 is no exact one


@pytest.mark.parametrize("weights", ["normal", "uniform"])
def test_weights_are_the_initializers_draws_and_sums_use_the_kind_asked_for(weights):
    if weights == "normal":
        expected = normal_init((6,), 0.5, PCG32(3))
    else:
        expected = scaled_uniform_float32(PCG32(3), 6, uniform_bound(0.5))
    w = draw_weights((2, 3), 0.5, PCG32(3), weights)
    assert w.dtype == np.float64 and w.tobytes() == expected.astype(np.float64).tobytes()
    rng = PCG32(3)
    w, x = draw_weights((2, 3), 0.5, rng, weights), draw_inputs("relu", rng, (2, 3))
    z = sample_sums(3, 0.5, "relu", PCG32(3), 2, weights=weights)
    np.testing.assert_allclose(z, (w * x).sum(axis=1), rtol=1e-12)


def test_sums_take_a_callable_for_their_inputs_and_inputs_come_back_as_float64():
    z = sample_sums(3, 0.5, lambda rng, n: np.ones(n), PCG32(3), 2)
    np.testing.assert_allclose(z, draw_weights((2, 3), 0.5, PCG32(3)).sum(axis=1), rtol=1e-12)
    x = draw_inputs(lambda rng, n: np.arange(n), PCG32(0), (2, 2))  # integers, made floats
    assert x.dtype == np.float64 and x.tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_format_table_puts_every_header_and_cell_right_and_floats_as_6g_by_default():
    text = format_table(["n", "Var"], [[3, 1 / 3], [64, 2.5e-7]])
    assert text == " n       Var\n--  --------\n 3  0.333333\n64   2.5e-07"


def test_what_a_callable_gives_is_float64_before_it_is_squared():
    """A float32 or integer answer of a layer, an activation or an init: squared in float64."""
    big = float(np.float32(1e20)) ** 2  # past float32's range, inside float64's

    def to_float32(h):
        return (h * 1e20).astype(np.float32)

    w, x = np.ones((2, 1, 1)), np.ones((2, 3, 1))
    assert mean_square_through(w, x, to_float32) == Estimate(big, 0.0)
    stacked = stack_layers(lambda rng: np.arange(3), [0, 1])
    assert stacked.dtype == np.float64 and stacked.tolist() == [[0.0, 1.0, 2.0]] * 2
