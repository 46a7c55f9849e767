"""Every argument of every public function of init, pcg32, distributions and propagation
is named at the very start of its error: "std must be ...", not just somewhere (whether
ValueError or TypeError is tests/test_every_argument.py's question).

Matching the start catches a message that names the wrong argument, which a
`word in message` check lets through when the word occurs elsewhere. A call
that raises has drawn nothing.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import tinyinit as ti
from tinyinit import PCG32
from tinyinit.core.activations import activation
from tinyinit.core.distributions import normal, uniform_float32, uniforms
from tinyinit.core.init import initializer_row
from tinyinit.physics.propagation import mean_field, simulate

# (call taking rng, the start of the message)
CASES = {
    # shapes
    "fans shape": (lambda rng: ti.fans((5,)), "shape (5,) has 1 dimension(s)"),
    "fans zero fan": (lambda rng: ti.fans((0, 3)), "shape (0, 3) has fan_in=3 and fan_out=0"),
    "normal_init shape": (lambda rng: ti.normal_init((2, -1), 1.0, rng), "shape must be a tuple"),
    "uniform_init shape": (lambda rng: ti.uniform_init("3", 0, 1, rng), "shape must be a tuple"),
    "constant_init shape": (lambda rng: ti.constant_init(None, 1.0), "shape must be a tuple"),
    "zeros_init shape": (lambda rng: ti.zeros_init((1.5,)), "shape must be a tuple"),
    "ones_init shape": (lambda rng: ti.ones_init((True,)), "shape must be a tuple"),
    "trunc_normal_init shape": (lambda rng: ti.trunc_normal_init((-2,), 1.0, rng), "shape must"),
    "eye_init shape": (lambda rng: ti.eye_init((3,)), "shape must have 2 dimensions"),
    "dirac_init shape": (lambda rng: ti.dirac_init((3, 3)), "shape must have 3, 4 or 5"),
    "dirac_init kernel": (lambda rng: ti.dirac_init((2, 2, 0)), "shape must have 3, 4 or 5"),
    "sparse_init shape": (lambda rng: ti.sparse_init((3,), 0.5, 1.0, rng), "shape must have 2"),
    "orthogonal_init shape": (lambda rng: ti.orthogonal_init((3,), 1.0, rng), "shape (3,) has 1"),
    "orthogonal_init empty": (
        lambda rng: ti.orthogonal_init((0, 3), 1.0, rng),
        "shape (0, 3) has no elements",
    ),
    "kaiming_uniform shape": (
        lambda rng: ti.kaiming_uniform((4,), "fan_in", "relu", rng),
        "shape (4,) has 1",
    ),
    "torch_default_init shape": (lambda rng: ti.torch_default_init((4, 0), rng), "shape (4, 0)"),
    # gains, stds and other reals
    "xavier_uniform gain": (lambda rng: ti.xavier_uniform((4, 3), -1.0, rng), "gain must be"),
    "xavier_normal gain": (lambda rng: ti.xavier_normal((4, 3), math.nan, rng), "gain must be"),
    "orthogonal_init gain": (lambda rng: ti.orthogonal_init((4, 3), "1", rng), "gain must be"),
    "normal_init std": (lambda rng: ti.normal_init((4, 3), -0.1, rng), "std must be"),
    "normal_init mean": (lambda rng: ti.normal_init((4, 3), 0.1, rng, mean=math.inf), "mean must"),
    "sparse_init std": (lambda rng: ti.sparse_init((4, 3), 0.5, None, rng), "std must be"),
    "sparse_init sparsity": (lambda rng: ti.sparse_init((4, 3), 1.5, 0.1, rng), "sparsity must"),
    "trunc_normal_init std": (lambda rng: ti.trunc_normal_init((3,), 0.0, rng), "std must be"),
    "trunc_normal_init std < 0": (lambda rng: ti.trunc_normal_init((3,), -1.0, rng), "std must"),
    "trunc_normal_init mean": (
        lambda rng: ti.trunc_normal_init((3,), 1.0, rng, mean=True),
        "mean must be",
    ),
    "trunc_normal_init a": (lambda rng: ti.trunc_normal_init((3,), 1.0, rng, a=math.nan), "a must"),
    "trunc_normal_init b": (lambda rng: ti.trunc_normal_init((3,), 1.0, rng, b="2"), "b must be"),
    "trunc_normal_init a < b": (
        lambda rng: ti.trunc_normal_init((3,), 1.0, rng, a=1.0, b=1.0),
        "a must be < b",
    ),
    "trunc_normal_init chance": (
        lambda rng: ti.trunc_normal_init((3,), 1.0, rng, a=8.0, b=9.0),
        "a and b must leave",
    ),
    "uniform_init low": (lambda rng: ti.uniform_init((3,), None, 1.0, rng), "low must be"),
    "uniform_init high": (lambda rng: ti.uniform_init((3,), 0.0, math.inf, rng), "high must be"),
    "uniform_init order": (lambda rng: ti.uniform_init((3,), 1.0, 0.0, rng), "high must be >="),
    "constant_init value": (lambda rng: ti.constant_init((3,), math.nan), "value must be"),
    "scaled_residual_std base_std": (lambda rng: ti.scaled_residual_std(-1, 2), "base_std must"),
    "scaled_residual_std n_layers": (lambda rng: ti.scaled_residual_std(1, 0), "n_layers must"),
    "dirac_init groups": (lambda rng: ti.dirac_init((4, 2, 3), 0), "groups must be an integer"),
    "dirac_init groups divide": (
        lambda rng: ti.dirac_init((4, 2, 3), 3),
        "groups must divide shape[0] = 4, got 3",
    ),
    "dirac_init groups bool": (lambda rng: ti.dirac_init((4, 2, 3), True), "groups must be an"),
    "dirac_init groups float": (lambda rng: ti.dirac_init((4, 2, 3), 2.0), "groups must be an"),
    "sparse_init sparsity bool": (
        lambda rng: ti.sparse_init((4, 3), True, 0.1, rng),
        "sparsity must be a finite real number from 0 to 1, got True",
    ),
    "sparse_init sparsity str": (lambda rng: ti.sparse_init((4, 3), "0.5", 0.1, rng), "sparsity"),
    # names
    "calculate_gain nonlinearity": (lambda rng: ti.calculate_gain("gelu"), "nonlinearity must"),
    "calculate_gain param": (lambda rng: ti.calculate_gain("leaky_relu", "0.1"), "param (the"),
    "kaiming_normal fan_mode": (
        lambda rng: ti.kaiming_normal((4, 3), "fan_avg", "relu", rng),
        "fan_mode must be",
    ),
    "kaiming_uniform fan_mode": (
        lambda rng: ti.kaiming_uniform((4, 3), ["fan_in"], "relu", rng),
        "fan_mode must be",
    ),
    "kaiming_uniform nonlinearity": (
        lambda rng: ti.kaiming_uniform((4, 3), "fan_in", "ReLU", rng),
        "nonlinearity must be",
    ),
    "kaiming_uniform param": (
        lambda rng: ti.kaiming_uniform((4, 3), "fan_in", "leaky_relu", rng, param=math.inf),
        "param (the leaky_relu",
    ),
    # the generator and counts
    "PCG32 seed": (lambda rng: PCG32(1.0), "seed must be an integer"),
    "PCG32 stream": (lambda rng: PCG32(1, stream="54"), "stream must be an integer"),
    "advance k": (lambda rng: PCG32(1).advance(2.0), "k must be an integer"),
    "words n": (lambda rng: rng.words(-1), "n must be a non-negative integer"),
    "PCG32.uniforms n": (lambda rng: rng.uniforms(True), "n must be a non-negative integer"),
    "uniforms n": (lambda rng: uniforms(rng, 2.0), "n must be a non-negative integer"),
    "normal n": (lambda rng: normal(rng, -3), "n must be a non-negative integer"),
    "uniform_float32 n": (lambda rng: uniform_float32(rng, None, 0.0, 1.0), "n must be"),
    "uniform_float32 rng": (lambda rng: uniform_float32(1, 2, 0.0, 1.0), "rng must be a generator"),
    "uniforms rng": (lambda rng: uniforms(object(), 2), "rng must be a generator"),
    "normal rng": (lambda rng: normal(None, 2), "rng must be a generator"),
    # propagation
    "activation name": (lambda rng: activation("swish"), "phi must be one of"),
    "initializer_row key": (lambda rng: initializer_row("he"), "initializer must be one of"),
    "mean_field activation_name": (
        lambda rng: mean_field("swish", gain=1.0, n_layers=3),
        "activation must be one of",
    ),
    "mean_field direction": (
        lambda rng: mean_field("relu", gain=1.0, n_layers=3, direction="up"),
        "direction must be",
    ),
    "simulate direction": (lambda rng: simulate(direction="sideways"), "direction must be"),
    "simulate activation": (lambda rng: simulate("swish", n_layers=1, seeds=1), "activation must"),
    "simulate initializer": (
        lambda rng: simulate(initializer="he", n_layers=1),
        "initializer must",
    ),
}

INITIALIZERS_WITH_RNG = {
    "xavier_uniform": lambda bad: ti.xavier_uniform((4, 3), 1.0, bad),
    "kaiming_uniform": lambda bad: ti.kaiming_uniform((4, 3), "fan_in", "relu", bad),
    "torch_default_init": lambda bad: ti.torch_default_init((4, 3), bad),
    "uniform_init": lambda bad: ti.uniform_init((4, 3), 0.0, 1.0, bad),
    "trunc_normal_init": lambda bad: ti.trunc_normal_init((4, 3), 1.0, bad),
    "orthogonal_init": lambda bad: ti.orthogonal_init((4, 3), 1.0, bad),
    "sparse_init": lambda bad: ti.sparse_init((4, 3), 0.5, 1.0, bad),
    "normal_init": lambda bad: ti.normal_init((4, 3), 1.0, bad),
}
for name, call in INITIALIZERS_WITH_RNG.items():
    CASES[f"{name} rng"] = (lambda rng, call=call: call(42), "rng must be a generator")


@pytest.mark.parametrize("name", CASES)
def test_the_message_starts_with_the_arguments_name(name):
    call, start = CASES[name]
    rng = PCG32(17)
    with pytest.raises((ValueError, TypeError), match="^" + re.escape(start)):
        call(rng)
    assert rng == PCG32(17), "the call raised after drawing from the generator"


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: initializer_row("he"),
            "initializer must be one of xavier_uniform, xavier_normal, kaiming_normal, "
            "kaiming_normal_fan_out, orthogonal_init, normal_init, lsuv, got 'he'",
        ),
    ],
)
def test_a_message_with_a_choice_lists_every_value_accepted(call, message):
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        call()


@pytest.mark.parametrize(
    "call, value",
    [
        (lambda: ti.uniform_init((3,), 0.0, math.nan, PCG32(0)), "nan"),
        (lambda: ti.constant_init((3,), "1"), "'1'"),
        (lambda: ti.sparse_init((3, 3), -0.1, 1.0, PCG32(0)), "-0.1"),
        (lambda: ti.dirac_init((4, 2, 3), 3), "3"),
        (lambda: ti.trunc_normal_init((3,), 1.0, PCG32(0), a=8.0, b=9.0), "a=8.0, b=9.0"),
        (lambda: ti.orthogonal_init((2, 0, 3), 1.0, PCG32(0)), "(2, 0, 3)"),
    ],
)
def test_the_message_says_the_value_given(call, value):
    with pytest.raises((ValueError, TypeError)) as error:
        call()
    assert value in str(error.value)


def test_accepted_edges_of_the_new_initializers():
    rng = PCG32(1)
    assert not ti.sparse_init((4, 3), 1.0, 1.0, rng).any()
    assert np.count_nonzero(ti.sparse_init((4, 3), 0, 1.0, rng)) == 12
    assert ti.dirac_init((6, 2, 3), np.int64(3)).sum() == 6
    assert not ti.orthogonal_init((3, 3), 0, rng).any()
    assert ti.uniform_init((2,), np.float32(-1), 1, rng).dtype == np.float32
    assert ti.constant_init((2,), np.float64(3.4e38)).max() > 3e38


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda rng: uniform_float32(rng, -1, 0.0, 1.0),
         "n must be a non-negative integer, got -1"),
        (lambda rng: ti.trunc_normal_init((4, 3), -1.0, rng),
         "std must be a finite real number >= 0, got -1.0"),
        (lambda rng: ti.orthogonal_init((4, 3), -1.0, rng),
         "gain must be a finite real number >= 0, got -1.0"),
        (lambda rng: ti.sparse_init((4, 3), 0.5, -1.0, rng),
         "std must be a finite real number >= 0, got -1.0"),
    ],
)  # fmt: skip
def test_a_negative_count_gain_or_std_is_refused_with_its_bound(call, message):
    rng = PCG32(0)
    with pytest.raises(ValueError) as refusal:
        call(rng)
    assert str(refusal.value) == message
    assert rng == PCG32(0)  # nothing drawn
