"""A practitioner's diagnostics: chance loss, saturated and dead fractions, histograms, and the
training loop's records of them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tinyinit import PCG32, kaiming_normal, xavier_normal
from tinyinit.core.activations import SATURATED_SLOPE
from tinyinit.networks.training import init_params, load_digits_split, loss_and_gradients, train
from tinyinit.physics.diagnostics import (
    UPDATE_RATIO,
    chance_loss,
    dead_fraction,
    histograms,
    saturated_fraction,
)


def test_chance_loss_is_the_loss_of_a_uniform_guess():
    for n in (2, 10, 26):
        logits = np.zeros((5, n))
        loss, _ = loss_and_gradients(
            [(np.zeros((n, 3)), np.zeros(n))], np.ones((5, 3)), np.arange(5) % n, "relu"
        )
        assert loss == pytest.approx(chance_loss(n), rel=1e-12)
        assert chance_loss(n) == pytest.approx(-math.log(1 / n))
        assert logits.shape == (5, n)
    with pytest.raises(ValueError, match="n_classes must be an integer >= 2, got 1"):
        chance_loss(1)


def test_saturated_and_dead_fractions_count_entries_and_units():
    slopes = np.array([[0.0, 1.0, 0.5, 0.0], [0.0, 0.0, 1.0, SATURATED_SLOPE]])
    assert saturated_fraction(slopes) == 4 / 8  # SATURATED_SLOPE itself still passes a gradient
    assert dead_fraction(slopes) == 1 / 4  # only the first unit is shut for both examples


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_fractions_are_the_means_of_the_flags_to_the_last_bit(dtype):
    # A count over a size, as the training loop records them every step: the same float as
    # numpy's mean of the flags (a sum of ones and zeros is exact), for any shape.
    rng = np.random.default_rng(3)
    for rows, units in [(1, 1), (3, 7), (64, 64), (100, 33), (257, 5)]:
        slopes = (rng.random((rows, units)) * rng.choice([0.0, 1.0], (rows, units))).astype(dtype)
        flags = slopes < SATURATED_SLOPE
        assert saturated_fraction(slopes) == float(np.mean(flags))
        assert dead_fraction(slopes) == float(np.mean(flags.all(axis=0)))
        assert type(saturated_fraction(slopes)) is float is type(dead_fraction(slopes))


def test_histograms_share_edges_and_integrate_to_the_fraction_inside():
    rng = np.random.default_rng(0)
    values = [rng.normal(size=1000), 3 * rng.normal(size=1000), np.array([np.nan, 0.5])]
    edges = np.linspace(-2, 2, 21)
    rows = histograms(values, edges)
    assert rows.shape == (3, 20)
    inside = [np.mean(np.abs(values[0]) <= 2), np.mean(np.abs(values[1]) <= 2), 1.0]
    np.testing.assert_allclose((rows * np.diff(edges)).sum(axis=1), inside, rtol=1e-12)
    with pytest.raises(ValueError, match="edges must be an increasing 1-d array"):
        histograms(values, np.array([1.0, 0.0]))


def test_the_training_loop_records_the_diagnostics_of_each_step():
    digits = load_digits_split()
    sizes = [64] + [64] * 10 + [10]
    runs = {
        name: train(
            init_params(sizes, init, PCG32(0)),
            digits.x_train,
            digits.labels_train,
            "relu",
            lr=0.02,
            steps=40,
        )
        for name, init in {
            "xavier": lambda s, r: xavier_normal(s, 1.0, r),
            "kaiming": lambda s, r: kaiming_normal(s, "fan_in", "relu", r),
        }.items()
    }
    # Kaiming's updates sit near the rule of thumb; Xavier's, 2^-5 of its gradient, far below
    kaiming, xavier = (np.median(runs[n].update_ratio) for n in ("kaiming", "xavier"))
    assert UPDATE_RATIO / 10 < kaiming < UPDATE_RATIO * 10 and xavier < kaiming / 10
    assert abs(runs["kaiming"].saturated[0].mean() - 0.5) < 0.05  # ReLU: half its entries at 0
