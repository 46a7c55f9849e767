"""Every bad argument is an error that names the argument, the value and what is accepted.

And a call that raises has drawn nothing: the generator is where it was, so a
caller that catches the error can go on initializing layers in sequence.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from tinyinit import (
    PCG32,
    calculate_gain,
    fans,
    kaiming_normal,
    normal_init,
    orthogonal_init,
    scaled_residual_std,
    xavier_normal,
    xavier_uniform,
    zeros_init,
)
from tinyinit.core.arguments import MAX_ELEMENTS
from tinyinit.core.init import NONLINEARITIES

# Each case: (call taking rng, the words every message must contain).
CASES = {}


def case(name: str, call, *words: str) -> None:
    """call(rng) must raise a ValueError whose message contains every one of words."""
    CASES[name] = (call, words)


def every_initializer_with_shape(shape):
    """fans and the three initializers that need fans, each called with shape."""
    return {
        "fans": lambda rng: fans(shape),
        "xavier_uniform": lambda rng: xavier_uniform(shape, 1.0, rng),
        "xavier_normal": lambda rng: xavier_normal(shape, 1.0, rng),
        "kaiming_normal": lambda rng: kaiming_normal(shape, "fan_in", "relu", rng),
    }


# --- shapes -----------------------------------------------------------------------------

for shape in [(), (5,), (1,)]:  # no fan-in: fewer than 2 dimensions
    for fn, call in every_initializer_with_shape(shape).items():
        case(f"{fn}{shape}", call, "shape", repr(shape), "at least 2")

for shape in [(0, 3), (4, 0), (4, 3, 0), (0, 0)]:  # a fan of 0
    for fn, call in every_initializer_with_shape(shape).items():
        case(f"{fn}{shape}", call, "shape", repr(shape), "fan_in=", "fan_out=", ">= 1")

for shape in [(-1, 3), (4, -3), (4, 3, -1), (-7,), (2.5, 3), None]:  # normal_init too
    calls = every_initializer_with_shape(shape)
    calls["normal_init"] = lambda rng, shape=shape: normal_init(shape, 0.02, rng)
    for fn, call in calls.items():
        case(f"{fn}{shape}", call, "shape", repr(shape), "non-negative integers")

# more elements (or a dimension larger) than MAX_ELEMENTS: refused before numpy's MemoryError
for shape, elements in [((2**31, 2), 2**32), ((2**40, 2**40), 2**80), ((0, 2**40), 0)]:
    calls = every_initializer_with_shape(shape)
    calls["normal_init"] = lambda rng, shape=shape: normal_init(shape, 0.02, rng)
    calls["orthogonal_init"] = lambda rng, shape=shape: orthogonal_init(shape, 1.0, rng)
    calls["zeros_init"] = lambda rng, shape=shape: zeros_init(shape)
    for fn, call in calls.items():
        words = ("shape", repr(shape), f"of {elements} elements", f"at most {MAX_ELEMENTS}")
        case(f"{fn}{shape}", call, *words)

# --- gains and standard deviations: finite reals >= 0 ---------------------------------

BAD_REALS = {
    "-1.0": -1.0,
    "-0.5": -0.5,
    "nan": math.nan,
    "inf": math.inf,
    "-inf": -math.inf,
    "'1.0'": "1.0",  # a string is not a number
    "True": True,  # nor is a bool
    "None": None,
}
for text, bad in BAD_REALS.items():
    for fn, name, call in [
        ("xavier_uniform", "gain", lambda rng, bad=bad: xavier_uniform((4, 3), bad, rng)),
        ("xavier_normal", "gain", lambda rng, bad=bad: xavier_normal((4, 3), bad, rng)),
        ("normal_init", "std", lambda rng, bad=bad: normal_init((4, 3), bad, rng)),
        ("scaled_residual_std", "base_std", lambda rng, bad=bad: scaled_residual_std(bad, 12)),
    ]:
        case(f"{fn} {name}={text}", call, name, text, "finite real number", ">= 0")

# --- names: nonlinearity and fan mode -----------------------------------------------------

for bad in ["gelu", "ReLU", "", "leaky-relu", None, 3, ["relu"]]:
    # the message lists every accepted name
    case(
        f"calculate_gain({bad!r})",
        lambda rng, bad=bad: calculate_gain(bad),
        *("nonlinearity", repr(bad), *NONLINEARITIES),
    )
    case(
        f"kaiming_normal nonlinearity={bad!r}",
        lambda rng, bad=bad: kaiming_normal((4, 3), "fan_in", bad, rng),
        *("nonlinearity", repr(bad), *NONLINEARITIES),
    )

for bad in ["fan_avg", "FAN_IN", "in", None, ["fan_in"]]:
    case(
        f"kaiming_normal fan_mode={bad!r}",
        lambda rng, bad=bad: kaiming_normal((4, 3), bad, "relu", rng),
        *("fan_mode", repr(bad), "fan_in", "fan_out"),
    )

# --- leaky_relu's slope: a real number --------------------------------------------------

for text, bad in {"True": True, "False": False, "'0.2'": "0.2", "nan": math.nan}.items():
    words = ("param", "leaky_relu", text, "finite real number")
    case(
        f"calculate_gain leaky_relu param={text}",
        lambda rng, bad=bad: calculate_gain("leaky_relu", bad),
        *words,
    )
    case(
        f"kaiming_normal leaky_relu param={text}",
        lambda rng, bad=bad: kaiming_normal((4, 3), "fan_in", "leaky_relu", rng, param=bad),
        *words,
    )

# --- depth: an integer >= 1 -------------------------------------------------------------

for text, bad in {"0": 0, "-3": -3, "2.0": 2.0, "True": True, "'12'": "12", "None": None}.items():
    case(
        f"scaled_residual_std n_layers={text}",
        lambda rng, bad=bad: scaled_residual_std(0.02, bad),
        *("n_layers", text, "integer", ">= 1"),
    )

# --- the generator: anything with uniform() ------------------------------------------------


class NoUniform:
    def __repr__(self):
        return "NoUniform()"

    def next_u32(self):
        return 0


class UniformNotCallable:
    uniform = 0.5

    def __repr__(self):
        return "UniformNotCallable()"


INITIALIZERS = {
    "xavier_uniform": lambda rng: xavier_uniform((4, 3), 1.0, rng),
    "xavier_normal": lambda rng: xavier_normal((4, 3), 1.0, rng),
    "kaiming_normal": lambda rng: kaiming_normal((4, 3), "fan_in", "relu", rng),
    "normal_init": lambda rng: normal_init((4, 3), 0.02, rng),
}
for bad in [None, 42, NoUniform(), UniformNotCallable()]:
    for fn, init in INITIALIZERS.items():
        case(
            f"{fn} rng={bad!r}",
            lambda rng, init=init, bad=bad: init(bad),  # the good rng stays untouched
            *("rng", repr(bad), "uniform()"),
        )


class UniformReturns:
    """A generator whose uniform() returns one value that is no float in [0, 1)."""

    def __init__(self, value):
        self.value = value

    def uniform(self):
        return self.value

    def __repr__(self):
        return f"UniformReturns({self.value!r})"


for bad in [UniformReturns(math.nan), UniformReturns(1.5), UniformReturns("0.5")]:
    for fn, init in INITIALIZERS.items():
        case(
            f"{fn} rng={bad!r}",
            lambda rng, init=init, bad=bad: init(bad),
            *("rng", repr(bad), "floats in [0, 1)", f"uniform() returned {bad.value!r}"),
        )


@pytest.mark.parametrize("name", CASES)
def test_bad_argument_is_an_error_that_says_what_and_why(name):
    call, words = CASES[name]
    rng = PCG32(17)
    with pytest.raises((ValueError, TypeError)) as error:
        call(rng)
    message = str(error.value)
    missing = [w for w in words if w not in message]
    assert not missing, f"message {message!r} lacks {missing}"
    assert rng == PCG32(17), "the call raised after drawing from the generator"


def test_a_rejected_call_draws_nothing_so_the_next_layer_is_unchanged():
    rng = PCG32(3)
    for bad in (
        lambda: kaiming_normal((4, 3), "fan_in", "gelu", rng),
        lambda: kaiming_normal((4, 3), "fan_avg", "relu", rng),
        lambda: xavier_normal((4, 3), -1.0, rng),
        lambda: xavier_uniform((4, 0), 1.0, rng),
        lambda: normal_init((4, -3), 0.02, rng),
    ):
        with pytest.raises((ValueError, TypeError)):
            bad()
    assert xavier_uniform((4, 3), 1.0, rng).tobytes() == (
        xavier_uniform((4, 3), 1.0, PCG32(3)).tobytes()
    )


def test_the_unknown_nonlinearity_message_lists_the_names_in_torchs_order():
    with pytest.raises(ValueError, match=re.escape(", ".join(NONLINEARITIES))):
        calculate_gain("gelu")


def test_good_edge_values_are_accepted():
    """The boundary of what is accepted: 0, integers, numpy scalars, a negative slope."""
    rng = PCG32(1)
    assert not xavier_uniform((4, 3), 0, rng).any()  # gain 0: all zeros, still a draw
    assert not normal_init((4, 3), 0.0, rng).any()
    assert scaled_residual_std(0, 1) == 0.0
    assert scaled_residual_std(np.float32(0.02), np.int64(12)) == pytest.approx(0.02 / 24**0.5)
    assert calculate_gain("leaky_relu", -0.2) == calculate_gain("leaky_relu", 0.2)
    assert calculate_gain("leaky_relu", 0) == calculate_gain("relu")
    assert fans([4, 3]) == (3, 4)
    assert fans(np.array([8, 4, 3, 3])) == (36, 72)
