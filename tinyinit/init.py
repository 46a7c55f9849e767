"""The M07.3 initializers: how large should the starting weights be?

One output of a layer is z = sum_j w_j x_j over n_in inputs; with independent
zero-mean weights of variance std**2,

    Var(z) = n_in * std**2 * E[x**2].

Keeping that equal to the layer's input gives every rule below: Xavier for
layers that are linear near 0, Kaiming for ReLU, a gain for the activation in
between, and GPT-2's 1/sqrt(2L) for the outputs that add into a residual stream.

Every initializer returns a new float32, C-contiguous array of exactly `shape`,
filled in row-major order with exactly prod(shape) values drawn from `rng`
(spec/pcg32.md section 4). It checks its arguments before drawing anything.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from .distributions import _check_rng, scaled_normal_float32, scaled_uniform_float32

# torch.nn.init.calculate_gain's table; leaky_relu is a formula of its slope.
GAINS = {
    "linear": 1.0,
    "conv1d": 1.0,
    "conv2d": 1.0,
    "conv3d": 1.0,
    "conv_transpose1d": 1.0,
    "conv_transpose2d": 1.0,
    "conv_transpose3d": 1.0,
    "sigmoid": 1.0,
    "tanh": 5.0 / 3,
    "relu": math.sqrt(2.0),
    "leaky_relu": None,
    "selu": 3.0 / 4,
}
NONLINEARITIES = tuple(GAINS)
FAN_MODES = ("fan_in", "fan_out")
DEFAULT_LEAKY_RELU_SLOPE = 0.01


# --- argument checks: say what was wrong, the value, and what is accepted -------


def _shape(shape, *, min_dims: int = 0) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise ValueError(f"shape must be a tuple of non-negative integers, got {shape!r}") from None
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
            raise ValueError(f"shape must be a tuple of non-negative integers, got {shape!r}")
    if len(dims) < min_dims:
        raise ValueError(
            f"shape {dims!r} has {len(dims)} dimension(s); fans need at least 2, "
            f"(out, in, *kernel), as in torch"
        )
    return tuple(int(d) for d in dims)


def _non_negative(name: str, value) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, Real)
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(f"{name} must be a finite real number >= 0, got {value!r}")
    return float(value)


# --- fans and gains ------------------------------------------------------------------


def fans(shape: tuple[int, ...]) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of shape (out, in, *kernel), torch's rule.

    fan_in = in * r and fan_out = out * r, with r the product of the kernel
    dimensions (1 for a Linear weight).

    >>> fans((4, 3))            # Linear(3 -> 4) stores W as (out, in)
    (3, 4)
    >>> fans((8, 4, 3, 3))      # Conv2d(4 -> 8, 3x3): n_in = 4 * 9
    (36, 72)
    """
    dims = _shape(shape, min_dims=2)
    receptive = math.prod(dims[2:])
    fan_in, fan_out = dims[1] * receptive, dims[0] * receptive
    if fan_in == 0 or fan_out == 0:
        raise ValueError(
            f"shape {dims!r} has fan_in={fan_in} and fan_out={fan_out}; both must be >= 1"
        )
    return fan_in, fan_out


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The gain g of an activation: std = g / sqrt(n) keeps the signal's size.

    g = 1 for linear, convolutions and sigmoid; sqrt(2) for relu (it zeroes half
    its input's second moment); sqrt(2 / (1 + s**2)) for leaky_relu with
    negative slope s = param (default 0.01); 3/4 for selu; 5/3 for tanh (empirical).

    >>> calculate_gain("relu")
    1.4142135623730951
    >>> calculate_gain("leaky_relu", 0.2)
    1.3867504905630728
    """
    if not isinstance(nonlinearity, str) or nonlinearity not in GAINS:  # a list is unhashable
        raise ValueError(
            f"nonlinearity must be one of {', '.join(NONLINEARITIES)}; got {nonlinearity!r}"
        )
    if nonlinearity != "leaky_relu":
        return GAINS[nonlinearity]
    slope = DEFAULT_LEAKY_RELU_SLOPE if param is None else param
    if isinstance(slope, bool) or not isinstance(slope, Real) or not math.isfinite(slope):
        raise ValueError(
            f"param (the leaky_relu negative slope) must be a finite real number, got {param!r}"
        )
    return math.sqrt(2.0 / (1 + slope**2))


# --- initializers ----------------------------------------------------------------------


def _scaled_normal(shape: tuple[int, ...], std: float, rng) -> np.ndarray:
    return scaled_normal_float32(rng, math.prod(shape), std).reshape(shape)


def xavier_uniform(shape, gain: float, rng) -> np.ndarray:
    """Glorot & Bengio (2010): W ~ U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)).

    U(-a, a) has variance a**2 / 3 = gain**2 * 2 / (fan_in + fan_out). Element k
    is -a + 2a * u_k, with u_k the k-th rng.uniform().

    >>> from tinyinit import PCG32
    >>> xavier_uniform((4, 3), 1.0, PCG32(0))[0, 0]
    np.float32(-0.40678263)
    """
    fan_in, fan_out = fans(shape)
    gain = _non_negative("gain", gain)
    _check_rng(rng)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return scaled_uniform_float32(rng, math.prod(shape), a).reshape(shape)


def xavier_normal(shape, gain: float, rng) -> np.ndarray:
    """Glorot & Bengio (2010): W ~ N(0, std**2), std = gain * sqrt(2 / (fan_in + fan_out)).

    >>> from tinyinit import PCG32
    >>> xavier_normal((4, 3), 1.0, PCG32(0))[0, 0]
    np.float32(-0.43255538)
    """
    fan_in, fan_out = fans(shape)
    gain = _non_negative("gain", gain)
    _check_rng(rng)
    return _scaled_normal(_shape(shape), gain * math.sqrt(2.0 / (fan_in + fan_out)), rng)


def kaiming_normal(
    shape, fan_mode: str, nonlinearity: str, rng, *, param: float | None = None
) -> np.ndarray:
    """He et al. (2015): W ~ N(0, std**2), std = gain / sqrt(fan).

    fan is fan_in (keeps the forward signal) or fan_out (keeps the gradients);
    gain = calculate_gain(nonlinearity, param), sqrt(2) for relu.

    >>> from tinyinit import PCG32
    >>> kaiming_normal((4, 3), "fan_in", "relu", PCG32(0))[0, 0]
    np.float32(-0.66073924)
    """
    fan_in, fan_out = fans(shape)
    if fan_mode not in FAN_MODES:
        raise ValueError(f"fan_mode must be 'fan_in' or 'fan_out', got {fan_mode!r}")
    gain = calculate_gain(nonlinearity, param)
    _check_rng(rng)
    fan = fan_in if fan_mode == "fan_in" else fan_out
    return _scaled_normal(_shape(shape), gain / math.sqrt(fan), rng)


def normal_init(shape, std: float, rng) -> np.ndarray:
    """W ~ N(0, std**2) for any shape, 1-D included (embeddings, GPT-2's 0.02).

    >>> from tinyinit import PCG32
    >>> normal_init((3,), 0.02, PCG32(0))
    array([-0.01618474,  0.00109749, -0.01491485], dtype=float32)
    """
    dims = _shape(shape)
    std = _non_negative("std", std)
    _check_rng(rng)
    return _scaled_normal(dims, std, rng)


def scaled_residual_std(base_std: float, n_layers: int) -> float:
    """GPT-2's std for the output projections of L blocks: base_std / sqrt(2L).

    Each block adds two outputs (attention, MLP) to the residual stream, 2L in
    all; with this std their variances add up to base_std**2 whatever L is.

    >>> scaled_residual_std(0.02, 12)
    0.004082482904638631
    """
    base_std = _non_negative("base_std", base_std)
    if isinstance(n_layers, bool) or not isinstance(n_layers, (int, np.integer)) or n_layers < 1:
        raise ValueError(f"n_layers must be an integer >= 1, got {n_layers!r}")
    return base_std / math.sqrt(2 * n_layers)
