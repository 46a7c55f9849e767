"""my_init.py: the seven initializers of module card M07.3, written by you.

The notebooks ask for them one at a time, as each idea arrives. Each docstring says what
to write. A weight has torch's layout, shape (out, in, *kernel); it is a new float32
array, filled in row-major (C) order with exactly one draw per element from the
generator `rng` you are given (a tinyinit.PCG32): uniforms from rng.uniform(), one call
per element, and normals from normal(rng, n), one call for the whole weight. Nothing
else is drawn. Bad arguments raise ValueError, before anything is drawn.

Check your functions against the card's eleven tests, from a terminal next to this file:

    python -m tinyinit check my_init.py

or from a notebook: `from tinyinit.catalog import check_init` and `check_init("my_init.py")`.
"""

import math

import numpy as np

from tinyinit import PCG32, normal


def fans(shape: tuple[int, ...]) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of shape (out, in, *kernel).

    fan_in = in * r and fan_out = out * r, with r the product of the kernel sizes
    (r = 1 for a Linear weight): fans((4, 3)) is (3, 4), fans((8, 4, 3, 3)) is (36, 72).
    ValueError for a shape of fewer than 2 dimensions, or with a fan of 0.
    """
    ### BEGIN SOLUTION
    if len(shape) < 2:
        raise ValueError(f"shape {shape} has no fans: it needs 2 dimensions, (out, in, *kernel)")
    r = math.prod(shape[2:])
    fan_in, fan_out = shape[1] * r, shape[0] * r
    if fan_in == 0 or fan_out == 0:
        raise ValueError(f"shape {shape} has fan_in {fan_in} and fan_out {fan_out}; need >= 1")
    return fan_in, fan_out
    ### END SOLUTION


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The gain g of an activation, torch's table (std = g / sqrt(fan)).

    g = 1 for "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d" and "sigmoid"; sqrt(2) for "relu"; 3/4 for
    "selu"; 5/3 for "tanh"; sqrt(2 / (1 + s**2)) for "leaky_relu", with negative slope
    s = param (0.01 when param is None). ValueError for any other name, and for a
    leaky_relu param that is not a number (True is not a number here).
    """
    ### BEGIN SOLUTION
    table = {
        "linear": 1.0,
        "conv1d": 1.0,
        "conv2d": 1.0,
        "conv3d": 1.0,
        "conv_transpose1d": 1.0,
        "conv_transpose2d": 1.0,
        "conv_transpose3d": 1.0,
        "sigmoid": 1.0,
        "tanh": 5 / 3,
        "relu": math.sqrt(2.0),
        "selu": 3 / 4,
    }
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"param, leaky_relu's negative slope, must be a number: {param!r}")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity not in table:
        raise ValueError(f"unknown nonlinearity {nonlinearity!r}; known: {', '.join(table)}")
    return table[nonlinearity]
    ### END SOLUTION


def xavier_uniform(shape, gain: float, rng: PCG32) -> np.ndarray:
    """Glorot and Bengio's uniform: W ~ U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)).

    U(-a, a) has variance a**2 / 3 = gain**2 * 2 / (fan_in + fan_out). Element k, in
    row-major order, is -a + 2a * u_k with u_k the k-th rng.uniform(), computed in
    float64; the array is float32, of exactly `shape`. ValueError for a shape without
    fans or a negative gain.
    """
    ### BEGIN SOLUTION
    fan_in, fan_out = fans(shape)
    if gain < 0:
        raise ValueError(f"gain must be >= 0, got {gain}")
    a = gain * math.sqrt(6 / (fan_in + fan_out))
    values = [-a + 2 * a * rng.uniform() for _ in range(math.prod(shape))]
    return np.array(values).astype(np.float32).reshape(shape)
    ### END SOLUTION


def xavier_normal(shape, gain: float, rng: PCG32) -> np.ndarray:
    """Glorot and Bengio's normal: W ~ N(0, std**2), std = gain * sqrt(2 / (fan_in + fan_out)).

    The weights are std * normal(rng, n), n = prod(shape), computed in float64, then
    float32 of exactly `shape` (normal k to element k, row-major). ValueError for a
    shape without fans or a negative gain.
    """
    ### BEGIN SOLUTION
    fan_in, fan_out = fans(shape)
    if gain < 0:
        raise ValueError(f"gain must be >= 0, got {gain}")
    std = gain * math.sqrt(2 / (fan_in + fan_out))
    return (std * normal(rng, math.prod(shape))).astype(np.float32).reshape(shape)
    ### END SOLUTION


def kaiming_normal(shape, fan_mode: str, nonlinearity: str, rng: PCG32) -> np.ndarray:
    """He et al.'s normal: W ~ N(0, std**2), std = gain / sqrt(fan).

    gain = calculate_gain(nonlinearity), sqrt(2) for "relu"; fan is fan_in when
    fan_mode is "fan_in" (keeps the forward signal), fan_out when it is "fan_out" (keeps
    the gradients). The weights are std * normal(rng, n), n = prod(shape), then float32
    of exactly `shape`, row-major. ValueError for a shape without fans, a fan_mode
    other than those two, or an unknown nonlinearity.
    """
    ### BEGIN SOLUTION
    fan_in, fan_out = fans(shape)
    if fan_mode not in ("fan_in", "fan_out"):
        raise ValueError(f"fan_mode must be 'fan_in' or 'fan_out', got {fan_mode!r}")
    gain = calculate_gain(nonlinearity)
    fan = fan_in if fan_mode == "fan_in" else fan_out
    std = gain / math.sqrt(fan)
    return (std * normal(rng, math.prod(shape))).astype(np.float32).reshape(shape)
    ### END SOLUTION


def normal_init(shape, std: float, rng: PCG32) -> np.ndarray:
    """W ~ N(0, std**2) for any shape, 1-D and empty ones included (no fans needed).

    The weights are std * normal(rng, n), n = prod(shape), then float32 of exactly
    `shape`, row-major. ValueError for a negative std or a negative dimension.
    """
    ### BEGIN SOLUTION
    if std < 0:
        raise ValueError(f"std must be >= 0, got {std}")
    if any(d < 0 for d in shape):
        raise ValueError(f"shape {shape} has a negative dimension")
    return (std * normal(rng, math.prod(shape))).astype(np.float32).reshape(shape)
    ### END SOLUTION


def scaled_residual_std(base_std: float, n_layers: int) -> float:
    """GPT-2's std for the two output projections of each of n_layers blocks.

    Each block adds two outputs to the residual stream, 2L in all, so
    s = base_std / sqrt(2 * n_layers) keeps their total variance 2L s**2 = base_std**2.
    ValueError for n_layers < 1 or a negative base_std.
    """
    ### BEGIN SOLUTION
    if n_layers < 1:
        raise ValueError(f"n_layers must be >= 1, got {n_layers}")
    if base_std < 0:
        raise ValueError(f"base_std must be >= 0, got {base_std}")
    return base_std / math.sqrt(2 * n_layers)
    ### END SOLUTION
