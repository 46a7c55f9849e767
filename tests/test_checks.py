"""The argument checks: what each accepts, and the exact message for what it refuses."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tinyinit.checks import integer, number, one_of


@pytest.mark.parametrize(
    "value, minimum, message",
    [
        (1.0, None, "n must be an integer, got 1.0"),
        (True, None, "n must be an integer, got True"),
        ("3", None, "n must be an integer, got '3'"),
        (-1, 0, "n must be a non-negative integer, got -1"),
        (0, 1, "n must be an integer >= 1, got 0"),
        (2, 3, "n must be an integer >= 3, got 2"),
    ],
)
def test_integer_refuses_with_what_it_accepts(value, minimum, message):
    with pytest.raises(ValueError) as refusal:
        integer("n", value, minimum=minimum)
    assert str(refusal.value) == message


def test_integer_accepts_python_and_numpy_integers_at_the_minimum():
    assert integer("n", 0, minimum=0) == 0 and type(integer("n", np.int64(3))) is int
    assert integer("n", 3, minimum=3) == 3 and integer("n", -5) == -5


@pytest.mark.parametrize(
    "value, bounds, message",
    [
        ("0", {}, "x must be a finite real number, got '0'"),
        (None, {}, "x must be a finite real number, got None"),
        (True, {}, "x must be a finite real number, got True"),
        (math.nan, {}, "x must be a finite real number, got nan"),
        (math.inf, {"minimum": 0}, "x must be a finite real number >= 0, got inf"),
        (-0.5, {"minimum": 0}, "x must be a finite real number >= 0, got -0.5"),
        (0, {"above": 0}, "x must be a finite real number > 0, got 0"),
        (-1.0, {"above": -1.0}, "x must be a finite real number > -1.0, got -1.0"),
    ],
)
def test_number_refuses_with_what_it_accepts(value, bounds, message):
    with pytest.raises(ValueError) as refusal:
        number("x", value, **bounds)
    assert str(refusal.value) == message


def test_number_accepts_finite_reals_on_and_past_the_bounds():
    assert number("x", 0, minimum=0) == 0.0 and type(number("x", 1)) is float
    assert number("x", 1e-300, above=0) == 1e-300 and number("x", np.float32(2.5)) == 2.5
    assert number("x", -7) == -7.0


@pytest.mark.parametrize("value", ["Conv", ["linear"], None, 1])
def test_one_of_names_every_choice_in_order(value):
    with pytest.raises(ValueError) as refusal:
        one_of("layer", value, ("linear", "conv", None) if value == 1 else ("linear", "conv"))
    choices = "linear, conv, None" if value == 1 else "linear, conv"
    assert str(refusal.value) == f"layer must be one of {choices}; got {value!r}"


def test_one_of_gives_back_the_value_itself():
    choice = ("a", 1)
    assert one_of("pair", choice, [choice, ("b", 2)]) is choice
    assert one_of("fan", None, ("fan_in", None)) is None
