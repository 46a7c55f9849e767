"""The M07.3 initializers: how large should the starting weights be?

One output of a layer is z = sum_j w_j x_j over n_in inputs; with independent
zero-mean weights of variance std**2,

    Var(z) = n_in * std**2 * E[x**2].

Keeping that equal to the layer's input gives every rule below: Xavier for
layers that are linear near 0, Kaiming for ReLU, a gain for the activation in
between, and GPT-2's 1/sqrt(2L) for the outputs that add into a residual stream.

Every initializer returns a new float32, C-contiguous array of exactly `shape`,
filled in row-major order with exactly prod(shape) values drawn from `rng`
(docs/spec.md, section 4). It checks its arguments before drawing anything.

The scales live here once: `xavier_std`, `kaiming_std`, `uniform_bound` and
`xavier_bound` (as torch keeps `_calculate_correct_fan`). Whatever else in the
package needs a Xavier or Kaiming std asks them.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import arguments
from .activations import LEAKY_RELU_SLOPE, normal_cdf
from .arguments import generator, integer, number, one_of
from .distributions import (
    normal,
    normal_float64,
    scaled_normal_float32,
    scaled_uniform_float32,
    uniform_float32,
    uniforms,
)

__all__ = [
    "INITIALIZERS",
    "Initializer",
    "calculate_gain",
    "constant_init",
    "dirac_init",
    "eye_init",
    "fans",
    "initializer_row",
    "kaiming_normal",
    "kaiming_std",
    "kaiming_uniform",
    "lsuv_factor",
    "normal_init",
    "ones_init",
    "orthogonal_init",
    "scaled_residual_std",
    "sparse_init",
    "torch_default_init",
    "trunc_normal_init",
    "uniform_bound",
    "uniform_init",
    "xavier_bound",
    "xavier_normal",
    "xavier_std",
    "xavier_uniform",
    "zeros_init",
]

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


# --- argument checks: say what was wrong, the value, and what is accepted -------


def _shape(shape, *, min_dims: int = 0) -> tuple[int, ...]:
    """shape as a tuple of ints (arguments.shape), with at least min_dims of them."""
    dims = arguments.shape("shape", shape)
    if len(dims) < min_dims:
        raise ValueError(
            f"shape {dims!r} has {len(dims)} dimension(s); fans need at least 2, "
            f"(out, in, *kernel), as in torch"
        )
    return dims


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
    fan_in, fan_out = _fans(dims)
    if fan_in == 0 or fan_out == 0:
        raise ValueError(
            f"shape {dims!r} has fan_in={fan_in} and fan_out={fan_out}; both must be >= 1"
        )
    return fan_in, fan_out


def _fans(dims: tuple[int, ...]) -> tuple[int, int]:
    receptive = math.prod(dims[2:])
    return dims[1] * receptive, dims[0] * receptive


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
    if one_of("nonlinearity", nonlinearity, NONLINEARITIES) != "leaky_relu":
        return GAINS[nonlinearity]
    slope = LEAKY_RELU_SLOPE if param is None else param
    number("param (the leaky_relu negative slope)", slope)
    return _leaky_relu_gain(slope)


def _leaky_relu_gain(slope) -> float:
    """sqrt(2 / (1 + slope**2)) for any finite slope, torch's formula to the bit where it can.

    torch computes math.sqrt(2.0 / (1 + slope ** 2)): so does this, with a numpy float kept as
    given (a float32 slope is squared in float32, as in torch) and any other number as a float
    (a numpy integer's square wraps around, a Python int's can be past float range). Where
    that formula leaves its float's range, past |slope| = 9.5e153 in float64 (1.3e19 in
    float32), the square is inf or 2 / (1 + slope**2) below the smallest normal float, and the
    formula would give 0 or lose digits; the gain is then sqrt(2) / hypot(1, slope), which
    overflows nowhere, in float64.

    >>> _leaky_relu_gain(0.2) == math.sqrt(2.0 / (1 + 0.2 * 0.2)), _leaky_relu_gain(-1e200)
    (True, 1.4142135623730953e-200)
    """
    if isinstance(slope, np.floating):
        with np.errstate(over="ignore", under="ignore"):  # its square past its range: below
            ratio = 2.0 / (1 + slope * slope)
        smallest = max(np.finfo(ratio).smallest_normal, sys.float_info.min)
    else:
        slope = float(slope)
        ratio, smallest = 2.0 / (1 + slope * slope), sys.float_info.min
    if ratio >= smallest:
        return math.sqrt(ratio)
    return math.sqrt(2.0) / math.hypot(1.0, float(slope))


# --- scales: each formula once --------------------------------------------------------


def xavier_std(fan_in: int, fan_out: int, gain: float = 1.0) -> float:
    """Glorot & Bengio's std: gain * sqrt(2 / (fan_in + fan_out)).

    The variance 2 / (fan_in + fan_out) is the compromise between keeping the
    forward signal (1 / fan_in) and the gradients (1 / fan_out).

    >>> xavier_std(3, 4)
    0.5345224838248488
    """
    fan_in, fan_out, gain = _fans_and_gain(fan_in, fan_out, gain)
    return _times_root(gain, 2.0, fan_in + fan_out)


def xavier_bound(fan_in: int, fan_out: int, gain: float = 1.0) -> float:
    """The bound a of Xavier's U(-a, a): gain * sqrt(6 / (fan_in + fan_out)).

    Equal to uniform_bound(xavier_std(...)) in exact arithmetic; computed this
    way, as the spec states it, it can differ from that product in the last bit.

    >>> xavier_bound(3, 4)      # the card's sqrt(6/7)
    0.9258200997725514
    """
    fan_in, fan_out, gain = _fans_and_gain(fan_in, fan_out, gain)
    return _times_root(gain, 6.0, fan_in + fan_out)


def _fans_and_gain(fan_in, fan_out, gain) -> tuple[int, int, float]:
    fan_in, fan_out = integer("fan_in", fan_in, minimum=1), integer("fan_out", fan_out, minimum=1)
    return fan_in, fan_out, number("gain", gain, minimum=0)


def kaiming_std(fan: int, gain: float) -> float:
    """He et al.'s std: gain / sqrt(fan), fan being fan_in or fan_out.

    >>> kaiming_std(3, calculate_gain("relu"))
    0.8164965809277261
    """
    fan, gain = integer("fan", fan, minimum=1), number("gain", gain, minimum=0)
    return _over_root(gain, fan)


# An int of more bits than this may be past float range, where math.sqrt(n) and c / n raise
# OverflowError: its root is taken as that of n >> 2k, of ROOT_BITS bits, times 2**k.
FLOAT_BITS = 1023
ROOT_BITS = 1000


def _over_root(x: float, n: int) -> float:
    """x / sqrt(n) for an int n >= 1 of any size: x / math.sqrt(n), to the bit, while n is a
    float's size; beyond, x / sqrt(n >> 2k) / 2**k, as exact as a float is (n >> 2k has 1000
    bits, and what is shifted out weighs less than 2**-999 of it). A result below the
    smallest float is 0, as 1e-400 is.

    >>> _over_root(1.0, 4), _over_root(1.0, 2**1100) == 2.0**-550
    (0.5, True)
    """
    if n.bit_length() <= FLOAT_BITS:
        return x / math.sqrt(n)
    k = (n.bit_length() - ROOT_BITS) // 2
    return math.ldexp(x / math.sqrt(n >> 2 * k), -k)


def _times_root(x: float, c: float, n: int) -> float:
    """x * sqrt(c / n) for an int n >= 1 of any size, as _over_root: to the bit while n is a
    float's size.

    >>> _times_root(1.0, 2.0, 8), _times_root(1.0, 2.0, 2**1101) == 2.0**-550
    (0.5, True)
    """
    if n.bit_length() <= FLOAT_BITS:
        return x * math.sqrt(c / n)
    k = (n.bit_length() - ROOT_BITS) // 2
    return math.ldexp(x * math.sqrt(c / (n >> 2 * k)), -k)


def uniform_bound(std: float) -> float:
    """The bound a of U(-a, a) with standard deviation std: a = sqrt(3) * std.

    Var U(-a, a) = a**2 / 3. Computed as torch's kaiming_uniform_ does.

    >>> uniform_bound(1.0)
    1.7320508075688772
    """
    return math.sqrt(3.0) * number("std", std, minimum=0)


# --- initializers ----------------------------------------------------------------------


def _scaled_normal(shape: tuple[int, ...], std: float, rng, mean: float = 0.0) -> np.ndarray:
    return scaled_normal_float32(rng, math.prod(shape), std, mean).reshape(shape)


def xavier_uniform(shape, gain: float, rng) -> np.ndarray:
    """Glorot & Bengio (2010): W ~ U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)).

    U(-a, a) has variance a**2 / 3 = gain**2 * 2 / (fan_in + fan_out). Element k
    is -a + 2a * u_k, with u_k the k-th rng.uniform().

    >>> from tinyinit import PCG32
    >>> xavier_uniform((4, 3), 1.0, PCG32(0))[0, 0]
    np.float32(-0.40678263)
    """
    fans(shape)
    gain = number("gain", gain, minimum=0)
    generator("rng", rng)
    return _xavier_uniform(_shape(shape), rng, gain=gain)


def _xavier_uniform(shape: tuple[int, ...], rng, *, gain: float) -> np.ndarray:
    fan_in, fan_out = _fans(shape)
    a = _times_root(gain, 6.0, fan_in + fan_out)  # xavier_bound
    return scaled_uniform_float32(rng, math.prod(shape), a).reshape(shape)


def xavier_normal(shape, gain: float, rng) -> np.ndarray:
    """Glorot & Bengio (2010): W ~ N(0, std**2), std = gain * sqrt(2 / (fan_in + fan_out)).

    >>> from tinyinit import PCG32
    >>> xavier_normal((4, 3), 1.0, PCG32(0))[0, 0]
    np.float32(-0.43255538)
    """
    fans(shape)
    gain = number("gain", gain, minimum=0)
    generator("rng", rng)
    return _xavier_normal(_shape(shape), rng, gain=gain)


def _xavier_normal(shape: tuple[int, ...], rng, *, gain: float) -> np.ndarray:
    fan_in, fan_out = _fans(shape)
    return _scaled_normal(shape, _times_root(gain, 2.0, fan_in + fan_out), rng)  # xavier_std


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
    gain = _kaiming_gain(shape, fan_mode, nonlinearity, param, rng)
    return _kaiming_normal(_shape(shape), rng, fan_mode=fan_mode, gain=gain)


def _kaiming_normal(shape: tuple[int, ...], rng, *, fan_mode: str, gain: float) -> np.ndarray:
    fan_in, fan_out = _fans(shape)
    return _scaled_normal(shape, _over_root(gain, fan_in if fan_mode == "fan_in" else fan_out), rng)


def _kaiming_gain(shape, fan_mode, nonlinearity, param, rng) -> float:
    """Kaiming's gain for these arguments, after checking all of them (rng included)."""
    fans(shape)
    one_of("fan_mode", fan_mode, FAN_MODES)
    gain = calculate_gain(nonlinearity, param)
    generator("rng", rng)
    return gain


def normal_init(shape, std: float, rng, *, mean: float = 0.0) -> np.ndarray:
    """W ~ N(mean, std**2) for any shape, 1-D included (embeddings, GPT-2's 0.02).

    Element k is z_k * std + mean (mean 0 is not added), z = normal(rng, prod(shape)).

    >>> from tinyinit import PCG32
    >>> normal_init((3,), 0.02, PCG32(0))
    array([-0.01618474,  0.00109749, -0.01491485], dtype=float32)
    >>> normal_init((2,), 0.02, PCG32(0), mean=1.0)
    array([0.98381525, 1.0010974 ], dtype=float32)
    """
    dims = _shape(shape)
    std = number("std", std, minimum=0)
    mean = number("mean", mean)
    generator("rng", rng)
    return _normal_init(dims, rng, std=std, mean=mean)


def _normal_init(shape: tuple[int, ...], rng, *, std: float, mean: float = 0.0) -> np.ndarray:
    return _scaled_normal(shape, std, rng, mean)


def scaled_residual_std(base_std: float, n_layers: int) -> float:
    """The std for the output projections of L blocks: base_std / sqrt(2L).

    Each block adds two outputs (attention, MLP) to the residual stream, 2L in
    all; with this std their variances add up to base_std**2 whatever L is.
    GPT-2's paper scales by 1/sqrt(N), N "the number of residual layers" (its
    released code scales nothing); N = 2L is nanoGPT's, Hugging Face's and
    Megatron-LM's reading, and the module card's.

    >>> scaled_residual_std(0.02, 12)
    0.004082482904638631
    """
    base_std = number("base_std", base_std, minimum=0)
    n_layers = integer("n_layers", n_layers, minimum=1)
    return _over_root(base_std, 2 * n_layers)


# --- the rest of torch.nn.init ------------------------------------------------------------


def kaiming_uniform(
    shape, fan_mode: str, nonlinearity: str, rng, *, param: float | None = None
) -> np.ndarray:
    """He et al. (2015), uniform: W ~ U(-a, a), a = sqrt(3) * gain / sqrt(fan).

    The same std as kaiming_normal (U(-a, a) has variance a**2 / 3); element k
    is -a + 2a * u_k. torch's default for every nn.Linear and nn.Conv weight is
    this with leaky_relu and param = sqrt(5): see torch_default_init.

    >>> from tinyinit import PCG32
    >>> kaiming_uniform((4, 3), "fan_in", "relu", PCG32(0))[0, 0]
    np.float32(-0.62137073)
    """
    gain = _kaiming_gain(shape, fan_mode, nonlinearity, param, rng)
    dims = _shape(shape)
    fan_in, fan_out = _fans(dims)
    a = math.sqrt(3.0) * _over_root(gain, fan_in if fan_mode == "fan_in" else fan_out)
    return scaled_uniform_float32(rng, math.prod(dims), a).reshape(dims)


TORCH_DEFAULT_SLOPE = math.sqrt(5.0)


def torch_default_init(shape, rng) -> np.ndarray:
    """What an untouched torch nn.Linear or nn.Conv weight starts from.

    kaiming_uniform(shape, "fan_in", "leaky_relu", rng, param=sqrt(5)): the gain
    sqrt(2 / (1 + 5)) makes the bound a = 1 / sqrt(fan_in), so the variance is
    1 / (3 fan_in), a third of what keeps a linear layer's signal.

    >>> from tinyinit import PCG32
    >>> w = torch_default_init((4, 3), PCG32(0))
    >>> w[0, 0], float(np.abs(w).max()) <= 1 / 3**0.5
    (np.float32(-0.25367352), True)
    """
    return kaiming_uniform(shape, "fan_in", "leaky_relu", rng, param=TORCH_DEFAULT_SLOPE)


def torch_default_bias(shape, fan_in: int, rng) -> np.ndarray:
    """An untouched torch nn.Linear or nn.Conv bias: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).

    fan_in is its layer's weight's (`fans(weight_shape)[0]`); torch draws the bias right after
    the weight, from the same generator (`tinyinit.networks.training.init_params(..., init_bias=)`
    does
    too). The variance 1 / (3 fan_in) is added to every pre-activation, for every input alike.

    >>> from tinyinit import PCG32
    >>> b = torch_default_bias((4,), 3, PCG32(0))
    >>> b[0], float(np.abs(b).max()) <= 1 / 3**0.5
    (np.float32(-0.25367352), True)
    """
    fan_in = integer("fan_in", fan_in, minimum=0)
    bound = _over_root(1.0, fan_in) if fan_in > 0 else 0.0  # torch's rule, fan_in 0 included
    return uniform_init(shape, -bound, bound, rng)


def uniform_init(shape, low: float, high: float, rng) -> np.ndarray:
    """W ~ U(low, high): element k is low + (high - low) * u_k, for any shape.

    >>> from tinyinit import PCG32
    >>> uniform_init((3,), 0.0, 2.0, PCG32(0))
    array([0.56062454, 0.9784483 , 1.2247084 ], dtype=float32)
    """
    dims = _shape(shape)
    low, high = number("low", low), number("high", high)
    if not (low <= high and math.isfinite(high - low)):
        raise ValueError(
            f"high must be >= low and high - low finite, got low={low!r} and high={high!r}"
        )
    generator("rng", rng)
    return uniform_float32(rng, math.prod(dims), low, high).reshape(dims)


def constant_init(shape, value: float) -> np.ndarray:
    """W = value everywhere; draws nothing.

    >>> constant_init((2, 2), 0.5)
    array([[0.5, 0.5],
           [0.5, 0.5]], dtype=float32)
    """
    dims = _shape(shape)
    value = number("value", value)
    with np.errstate(over="ignore"):  # beyond float32 is inf, as every overflow in tinyinit
        return np.full(dims, np.float32(value), dtype=np.float32)


def zeros_init(shape) -> np.ndarray:
    """W = 0 everywhere (torch's zeros_, the usual bias); draws nothing.

    >>> zeros_init((3,))
    array([0., 0., 0.], dtype=float32)
    """
    return constant_init(shape, 0.0)


def ones_init(shape) -> np.ndarray:
    """W = 1 everywhere (torch's ones_, a LayerNorm gain); draws nothing.

    >>> ones_init((3,))
    array([1., 1., 1.], dtype=float32)
    """
    return constant_init(shape, 1.0)


# trunc_normal_init redraws until every value is in [a, b]; below this probability of
# landing there, that would take more than 1,000 draws per weight: refused instead.
MIN_TRUNC_ACCEPTANCE = 1e-3


def trunc_normal_init(
    shape, std: float, rng, *, mean: float = 0.0, a: float = -2.0, b: float = 2.0
) -> np.ndarray:
    """W ~ N(mean, std**2) truncated to [a, b], by rejection (GPT-style 0.02).

    a and b are absolute cutoffs, as in torch (not multiples of std). Exactly:
    x = mean + std * normal(rng, n) in float64, n = prod(shape); then, while
    some x_k < a or x_k > b, those (m of them, in C order) take the values
    mean + std * normal(rng, m) in turn; finally cast to float32. So the
    generator advances by a number of draws that depends on the seed.
    Refused when the chance of [a, b] is below MIN_TRUNC_ACCEPTANCE.

    >>> from tinyinit import PCG32
    >>> trunc_normal_init((4,), 1.0, PCG32(0), a=-0.5, b=2.0)  # normal(PCG32(0), 4) is
    ...                          # -0.81, 0.05, -0.75, 1.16: two redrawn, from the next pair
    array([ 0.18554305,  0.05487465, -0.3948574 ,  1.1572359 ], dtype=float32)
    """
    dims = _shape(shape)
    number("std", std, minimum=0)  # a negative std hears what every std hears; then 0 is refused
    std = number("std", std, above=0)
    mean, a, b = number("mean", mean), number("a", a), number("b", b)
    if not a < b:
        raise ValueError(f"a must be < b (the cutoffs of [a, b]), got a={a!r} and b={b!r}")
    chance = float(normal_cdf((b - mean) / std) - normal_cdf((a - mean) / std))
    if not chance >= MIN_TRUNC_ACCEPTANCE:
        raise ValueError(
            f"a and b must leave N(mean, std**2) a chance >= {MIN_TRUNC_ACCEPTANCE} of "
            f"[a, b], got a={a!r}, b={b!r} for mean={mean!r}, std={std!r} (chance {chance:.3g})"
        )
    generator("rng", rng)
    # The first draw on the fast path, with NaN where a value fell outside [a, b]
    w = scaled_normal_float32(rng, math.prod(dims), std, mean, bounds=(a, b))
    redraw = np.flatnonzero(np.isnan(w))
    while redraw.size:
        x = mean + std * normal(rng, redraw.size)
        inside = (x >= a) & (x <= b)
        w[redraw[inside]] = x[inside]
        redraw = redraw[~inside]
    return w.reshape(dims)


def orthogonal_init(shape, gain: float, rng) -> np.ndarray:
    """Saxe et al. (2013): a (semi-)orthogonal W, times gain; torch's algorithm.

    The trailing dimensions are flattened: M of shape (rows, cols), rows =
    shape[0], filled in C order from normal(rng, rows * cols). For a wide M
    (rows < cols) the QR is of M's transpose. Q, R = qr(M), reduced; Q's
    columns are multiplied by the signs of R's diagonal (so Q is uniform over
    the orthogonal matrices, Mezzadri 2007); a wide M takes Q transposed back.
    W = gain * Q in float64, cast to float32. The normals are exact; the QR is
    numpy's (LAPACK), so W is exact to float tolerance only, not bit for bit.

    >>> from tinyinit import PCG32
    >>> w = orthogonal_init((3, 5), 1.0, PCG32(0))
    >>> bool(np.allclose(w @ w.T, np.eye(3), atol=1e-6))
    True
    """
    dims = _shape(shape, min_dims=2)
    rows = dims[0]
    cols = math.prod(dims) // rows if rows else 0
    if rows == 0 or cols == 0:
        raise ValueError(f"shape {dims!r} has no elements; orthogonal_init needs rows, cols >= 1")
    gain = number("gain", gain, minimum=0)
    generator("rng", rng)
    return _orthogonal_init(dims, rng, gain=gain)


def _orthogonal_init(shape: tuple[int, ...], rng, *, gain: float) -> np.ndarray:
    rows = shape[0]
    cols = math.prod(shape) // rows
    m = normal_float64(rng, rows * cols).reshape(rows, cols)
    wide = rows < cols
    q, r = np.linalg.qr(m.T if wide else m)
    q *= np.sign(np.diag(r))
    if wide:
        q = q.T
    with np.errstate(over="ignore"):  # beyond float32 is inf, the package's overflow
        return np.ascontiguousarray(gain * q, dtype=np.float32).reshape(shape)


def eye_init(shape) -> np.ndarray:
    """The identity of a 2-D shape (out, in): W[i, i] = 1, 0 elsewhere; draws nothing.

    A Linear layer with this weight passes min(out, in) of its inputs through.

    >>> eye_init((2, 3))
    array([[1., 0., 0.],
           [0., 1., 0.]], dtype=float32)
    """
    dims = _shape(shape)
    if len(dims) != 2:
        raise ValueError(f"shape must have 2 dimensions (out, in), got {dims!r}")
    return np.eye(*dims, dtype=np.float32)


def dirac_init(shape, groups: int = 1) -> np.ndarray:
    """The identity convolution: a 1 at the kernel's centre, channel d to channel d.

    shape (out, in, *kernel), with 1, 2 or 3 kernel dimensions; out is split in
    `groups` blocks of out / groups channels. In block g, W[g * out/groups + d,
    d, k1 // 2, ...] = 1 for d < min(out / groups, in); 0 elsewhere. Draws nothing.

    >>> dirac_init((2, 2, 3))[:, :, 1]
    array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    dims = _shape(shape)
    if len(dims) not in (3, 4, 5) or 0 in dims[2:]:
        raise ValueError(
            f"shape must have 3, 4 or 5 dimensions (out, in, *kernel), the kernel's >= 1, "
            f"got {dims!r}"
        )
    groups = integer("groups", groups, minimum=1)
    if dims[0] % groups:
        raise ValueError(f"groups must divide shape[0] = {dims[0]}, got {groups!r}")
    w = np.zeros(dims, dtype=np.float32)
    per_group = dims[0] // groups
    centre = tuple(k // 2 for k in dims[2:])
    for g in range(groups):
        for d in range(min(per_group, dims[1])):
            w[(g * per_group + d, d, *centre)] = 1.0
    return w


def sparse_init(shape, sparsity: float, std: float, rng) -> np.ndarray:
    """Martens (2010): N(0, std**2) with ceil(sparsity * rows) zeros in every column.

    shape (rows, cols). First W = std * normal(rng, rows * cols), in C order;
    then, column by column, rows uniforms u (so rows * cols of them in all): the
    rows of the ceil(sparsity * rows) smallest u (the lower row first on a tie)
    are set to 0. torch picks them with randperm, which has no exact analogue.

    >>> from tinyinit import PCG32
    >>> sparse_init((3, 2), 0.5, 1.0, PCG32(0))
    array([[-0.809237 ,  0.       ],
           [ 0.       ,  0.       ],
           [ 0.       , -0.3948574]], dtype=float32)
    """
    dims = _shape(shape)
    if len(dims) != 2:
        raise ValueError(f"shape must have 2 dimensions (rows, cols), got {dims!r}")
    sparsity = number("sparsity", sparsity, minimum=0, maximum=1)
    std = number("std", std, minimum=0)
    generator("rng", rng)
    rows, cols = dims
    w = _scaled_normal(dims, std, rng)
    keys = uniforms(rng, rows * cols).reshape(cols, rows)
    zeros = math.ceil(sparsity * rows)
    chosen = np.argsort(keys, axis=1, kind="stable")[:, :zeros]
    w[chosen.T, np.arange(cols)] = 0.0
    return w


LSUV_TOL = 0.1  # the paper's Tol_var


def lsuv_factor(z: np.ndarray, gain: float = 1.0, tol: float = LSUV_TOL) -> float:
    """LSUV's step (Mishkin & Matas, 2016, "All you need is a good init"): the factor on a
    layer's weights whose output on a batch of data is z.

    z is linear in the weights (no bias), so gain / sqrt(Var(z)) brings its variance to
    gain**2, the paper's 1 at gain 1: the scale is read from the data, not from a formula.
    Var(z) is over every entry of z (the batch and the units, as the paper's Var(B_L)). The
    factor is 1 where Var(z) is already within tol of gain**2 (relative), and where no factor
    can help: a variance of 0 (a dead layer), inf or nan (an overflowed one).

    >>> z = np.array([2.0, -2.0])                                     # Var(z) = 4
    >>> lsuv_factor(z), lsuv_factor(z, gain=2.0), lsuv_factor(0 * z), lsuv_factor(z, tol=3)
    (0.5, 1.0, 1.0, 1.0)
    """
    z = arguments.real_array("z", z)
    if not z.size:
        raise ValueError(
            "z must hold a layer's output on a batch, at least one number, got an empty array"
        )
    gain = number("gain", gain, minimum=0)
    return _lsuv_factor(z, gain, number("tol", tol, minimum=0))


def _lsuv_factor(z: np.ndarray, gain: float, tol: float = LSUV_TOL) -> float:
    with np.errstate(all="ignore"):
        variance = float(np.var(z))
    if not 0 < variance < math.inf:  # nan fails both comparisons too
        return 1.0
    ratio = math.sqrt(variance) / gain if gain else math.inf
    if abs(ratio * ratio - 1.0) <= tol:
        return 1.0
    return gain / math.sqrt(variance)


# --- the initializers as a table: what the explorer, the command line and the figures offer ----


KNOBS = ("gain", "std")


@dataclass(frozen=True)
class Initializer:
    """One row of INITIALIZERS: an initializer of this module and the arguments it is called with.

    key: its name in code and on the command line, the function's own (with its fan_mode
    where that is not torch's default, fan_in); label: its name in a dropdown and a legend;
    init: the function; kwargs: its fixed arguments; knob: the one argument a slider sets,
    "gain" or "std"; std(fan_in, fan_out, knob): the std its weights have, from the formulas
    above (None for a row read from a batch, whose std is measured); formula: that std as a
    readout writes it; gain_from_activation: its gain starts from the activation's, as
    torch's kaiming_* does, else from 1; title: its name in a figure's title (the label if
    empty); from_batch: for a row whose scale is read from data (LSUV), factor(z, knob), the
    factor on a layer's weights, drawn with the knob at 1, whose output on the batch reaching
    the layer is z.

    The weights of a (fan_out, fan_in) layer are `row.initializer(value)(shape, rng)`, what
    `init(shape, ..., rng)` returns with `kwargs` and `knob=value`: one argument checked once,
    then every layer of a stack drawn without checking again. A row read from a batch draws
    its layers with `row.initializer(1.0)`, and `row.batch_factor(value)(z)` is each one's
    factor, layer after layer, as the batch goes up the stack.

    >>> from tinyinit import PCG32
    >>> row = INITIALIZERS["kaiming_normal"]
    >>> row.std(256, 128, 2**0.5)                              # gain / sqrt(fan_in)
    0.08838834764831845
    >>> w = row.initializer(2**0.5)((4, 3), PCG32(0))
    >>> bool((w == kaiming_normal((4, 3), "fan_in", "relu", PCG32(0))).all())
    True
    """

    key: str
    label: str
    init: Callable
    kwargs: dict
    knob: str
    std: Callable[[int, int, float], float] | None
    formula: str
    gain_from_activation: bool = False
    title: str = ""
    from_batch: Callable[[np.ndarray, float], float] | None = None

    def __post_init__(self):
        for name in ("key", "label", "formula", "title"):
            arguments.instance(name, getattr(self, name), str, "a str")
        arguments.function("init", self.init)
        arguments.instance("kwargs", self.kwargs, dict, "a dict of the function's arguments")
        one_of("knob", self.knob, KNOBS)
        if self.from_batch is None or self.std is not None:
            arguments.function("std", self.std)
        arguments.flag("gain_from_activation", self.gain_from_activation)
        if self.from_batch is not None:
            arguments.function("from_batch", self.from_batch)
        if not self.title:
            object.__setattr__(self, "title", self.label)  # frozen: set once, here

    @property
    def uses_gain(self) -> bool:
        return self.knob == "gain"

    def initializer(self, value: float) -> Callable[[tuple[int, ...], object], np.ndarray]:
        """init_weight(shape, rng): this row's weights with its knob (its gain or its std) at
        `value`, checked here.

        shape and rng are trusted: a stack's own shapes and generator (a caller's are checked
        by the functions above).
        """
        value = number("value", value, minimum=0)
        draw = _UNCHECKED.get(self.init)
        if draw is None:  # a row whose function has no unchecked twin: called as it is
            return lambda shape, rng: self.init(shape, rng=rng, **self.kwargs, **{self.knob: value})
        return lambda shape, rng: draw(tuple(shape), rng, **self.kwargs, **{self.knob: value})

    def batch_factor(self, value: float) -> Callable[[np.ndarray], float]:
        """factor(z): the factor on a layer of this row read from a batch, whose output on the
        batch (with the layer's weights at knob 1) is z, with the knob at `value`, checked here.

        z is trusted: the layer's own output. For a row not read from a batch, an error.

        >>> INITIALIZERS["lsuv"].batch_factor(1.0)(np.array([2.0, -2.0]))
        0.5
        """
        value = number("value", value, minimum=0)
        if self.from_batch is None:
            raise ValueError(f"{self.key} is not read from a batch: its scale is its formula's")
        return lambda z: self.from_batch(z, value)


# Each initializer of the table and its unchecked twin, which draws what it draws without
# checking its arguments again (a stack of 20 layers checks its gain once, not 20 times).
_UNCHECKED = {
    xavier_uniform: _xavier_uniform,
    xavier_normal: _xavier_normal,
    kaiming_normal: _kaiming_normal,
    normal_init: _normal_init,
    orthogonal_init: _orthogonal_init,
}


def _orthogonal_std(fan_in: int, fan_out: int, gain: float) -> float:
    # A (semi-)orthogonal matrix's rows (or columns) are unit vectors of max(fan_in, fan_out).
    return _over_root(gain, max(fan_in, fan_out))


# To offer an initializer in the explorer, the command line and the figures: add a row.
INITIALIZERS = {
    row.key: row
    for row in (
        Initializer(
            "xavier_uniform", "Xavier uniform", xavier_uniform, {}, "gain", xavier_std,
            "gain·√(2/(n_in+n_out)), from U(-a, a) with a = √3·std",
        ),
        Initializer(
            "xavier_normal", "Xavier normal", xavier_normal, {}, "gain", xavier_std,
            "gain·√(2/(n_in+n_out))",
        ),
        Initializer(
            "kaiming_normal", "Kaiming normal, fan_in", kaiming_normal, {"fan_mode": "fan_in"},
            "gain", lambda fan_in, fan_out, gain: kaiming_std(fan_in, gain), "gain/√n_in",
            gain_from_activation=True,
        ),
        Initializer(
            "kaiming_normal_fan_out", "Kaiming normal, fan_out", kaiming_normal,
            {"fan_mode": "fan_out"}, "gain",
            lambda fan_in, fan_out, gain: kaiming_std(fan_out, gain), "gain/√n_out",
            gain_from_activation=True,
        ),
        Initializer(
            "orthogonal_init", "Orthogonal", orthogonal_init, {}, "gain", _orthogonal_std,
            "gain/√n, every row a unit vector times gain",
        ),
        Initializer(
            "normal_init", "normal with std", normal_init, {}, "std",
            lambda fan_in, fan_out, std: std, "as set", title="normal weights",
        ),
        Initializer(
            "lsuv", "LSUV: orthogonal, rescaled on the batch", orthogonal_init, {}, "gain", None,
            "each layer's gain/√Var(W h) on the batch, root mean square", title="LSUV",
            from_batch=_lsuv_factor,
        ),
    )
}  # fmt: skip


def initializer_row(initializer: str) -> Initializer:
    """The row of INITIALIZERS whose key is `initializer`; an error naming the keys for any other.

    >>> initializer_row("kaiming_normal").kwargs, initializer_row("normal_init").knob
    ({'fan_mode': 'fan_in'}, 'std')
    """
    return INITIALIZERS[one_of("initializer", initializer, INITIALIZERS)]
