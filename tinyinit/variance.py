"""The variance of a sum, measured: Monte Carlo checks of Var(z) = n * std**2 * E[x**2].

One output of a layer is z = sum_j w_j x_j over n = fan_in inputs. With
independent weights of mean 0 and variance std**2, independent of the inputs,

    Var(z) = n * std**2 * E[x**2]        (E[x**2], not Var(x): the mean counts)

The functions here draw many such sums from a PCG32 (weights first, then
inputs, each in one vectorized call), and return estimates together with their
standard errors, so a notebook or a test can say "within 4 standard errors".

>>> from tinyinit import PCG32
>>> z = sample_sums(fan_in=64, std=0.125, inputs="relu", rng=PCG32(0), n_samples=20_000)
>>> predicted_variance(64, 0.125**2, input_moments("relu").mean_square)
0.5
>>> variance_of(z).agrees(0.5)
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

import numpy as np

from .checks import one_of
from .distributions import normal, scaled_uniform_float32, uniforms
from .init import (
    calculate_gain,
    fans,
    kaiming_std,
    normal_init,
    scaled_residual_std,
    uniform_bound,
    xavier_bound,
    xavier_std,
)
from .pcg32 import PCG32


class Moments(NamedTuple):
    """Mean, mean square E[x**2] and variance of an input distribution, exact."""

    mean: float
    mean_square: float

    @property
    def variance(self) -> float:
        return self.mean_square - self.mean**2


class Estimate(NamedTuple):
    """A Monte Carlo estimate and its standard error."""

    value: float
    stderr: float

    def z_score(self, expected: float) -> float:
        """How many standard errors the estimate lies from `expected`."""
        return (self.value - expected) / self.stderr

    def agrees(self, expected: float, n_se: float = 4.0) -> bool:
        """True when the estimate is within n_se standard errors of `expected`."""
        return abs(self.z_score(expected)) <= n_se


def relu(x: np.ndarray) -> np.ndarray:
    """max(x, 0), elementwise."""
    return np.maximum(x, 0.0)


# The input distributions of the notebooks, each with its exact moments. For
# relu of a standard normal z: E[x] = E[z; z > 0] = 1/sqrt(2 pi), and
# E[x**2] = E[z**2; z > 0] = 1/2 by the symmetry of z.
INPUTS: dict[str, tuple[Callable[[PCG32, int], np.ndarray], Moments]] = {
    "normal": (lambda rng, n: normal(rng, n), Moments(0.0, 1.0)),
    "uniform": (lambda rng, n: 2.0 * uniforms(rng, n) - 1.0, Moments(0.0, 1.0 / 3.0)),
    "shifted": (lambda rng, n: 1.0 + normal(rng, n), Moments(1.0, 2.0)),
    "relu": (lambda rng, n: relu(normal(rng, n)), Moments(1.0 / math.sqrt(2 * math.pi), 0.5)),
}
WEIGHTS = ("normal", "uniform")


def input_moments(kind: str) -> Moments:
    """Exact moments of an input distribution of INPUTS.

    normal: N(0, 1); uniform: U(-1, 1); shifted: 1 + N(0, 1); relu: max(N(0, 1), 0).

    >>> input_moments("relu").variance
    0.3408450569081046
    """
    one_of("inputs", kind, INPUTS)
    return INPUTS[kind][1]


def draw_inputs(kind, rng, shape) -> np.ndarray:
    """float64 inputs of `shape`, drawn in one call, row-major.

    kind is a name of INPUTS, or a callable (rng, n) -> n values for any other
    distribution.
    """
    shape = tuple(np.atleast_1d(shape).tolist())
    if callable(kind):
        draw = kind
    else:
        input_moments(kind)  # raises, naming the accepted kinds
        draw = INPUTS[kind][0]
    return np.asarray(draw(rng, math.prod(shape)), dtype=np.float64).reshape(shape)


def predicted_variance(fan_in, weight_variance, mean_square):
    """Var(z) = fan_in * Var(w) * E[x**2]; exact for Fractions.

    >>> from fractions import Fraction
    >>> predicted_variance(3, Fraction(2, 7), 1)
    Fraction(6, 7)
    """
    return fan_in * weight_variance * mean_square


def draw_weights(shape, std: float, rng, weights: str = "normal") -> np.ndarray:
    """float64 weights of `shape` with mean 0 and standard deviation std.

    "normal": std * N(0, 1); "uniform": U(-a, a) with a = sqrt(3) * std, the same
    variance since Var U(-a, a) = a**2 / 3. Both come from tinyinit's float32
    initializer paths, one draw per element in row-major order.
    """
    one_of("weights", weights, WEIGHTS)
    shape = tuple(np.atleast_1d(shape).tolist())
    n = math.prod(shape)
    if weights == "normal":
        w = normal_init((n,), std, rng)
    else:
        w = scaled_uniform_float32(rng, n, uniform_bound(std))
    return w.astype(np.float64).reshape(shape)


def sample_sums(
    fan_in: int, std: float, inputs, rng, n_samples: int, weights: str = "normal"
) -> np.ndarray:
    """n_samples independent sums z = sum_{j < fan_in} w_j x_j, as float64.

    Each sum has its own weights (drawn first, shape (n_samples, fan_in)) and its
    own inputs (drawn next, same shape), so the samples are independent, and
    Var(z) = fan_in * std**2 * E[x**2]. Returns shape (n_samples,).

    >>> from tinyinit import PCG32
    >>> z = sample_sums(fan_in=64, std=0.125, inputs="shifted", rng=PCG32(0), n_samples=10_000)
    >>> z.shape, round(float(z.var()), 1)      # 64 * 0.125**2 * E[x**2] = 1 * 2
    ((10000,), 2.0)
    """
    w = draw_weights((n_samples, fan_in), std, rng, weights)
    x = draw_inputs(inputs, rng, (n_samples, fan_in))
    return np.einsum("sj,sj->s", w, x)


def variance_of(samples: np.ndarray) -> Estimate:
    """Sample variance, with the standard error of the mean of (z - mean)**2.

    value = mean((z - mean(z))**2) over all n entries (ddof 0), and
    stderr = std((z - mean(z))**2, ddof 1) / sqrt(n).

    >>> variance_of(np.array([1.0, 3.0]))
    Estimate(value=1.0, stderr=0.0)
    >>> from tinyinit import PCG32
    >>> z = sample_sums(fan_in=64, std=0.125, inputs="shifted", rng=PCG32(0), n_samples=10_000)
    >>> est = variance_of(z)
    >>> round(est.value, 2), round(est.stderr, 3)
    (1.98, 0.029)
    >>> est.agrees(64 * 0.125**2 * 2.0), est.agrees(64 * 0.125**2 * 1.0)   # E[x**2], not Var(x)
    (True, False)
    """
    z = np.asarray(samples, dtype=np.float64).ravel()
    sq = (z - z.mean()) ** 2
    return Estimate(float(sq.mean()), float(sq.std(ddof=1) / math.sqrt(len(sq))))


def mean_square_of(samples: np.ndarray) -> Estimate:
    """Sample mean of x**2, with its standard error."""
    sq = np.asarray(samples, dtype=np.float64).ravel() ** 2
    return Estimate(float(sq.mean()), float(sq.std(ddof=1) / math.sqrt(len(sq))))


def mean_square(a: np.ndarray) -> float:
    """mean(a**2) over every entry: the package's one mean square of an array.

    inf when it is beyond float64 or a holds inf or nan (an overflowed stack), without a warning.

    >>> mean_square(np.array([3.0, -1.0])), mean_square(np.array([1e300, 0.0]))
    (5.0, inf)
    """
    flat = np.ravel(a)
    with np.errstate(all="ignore"):
        m = float(np.dot(flat, flat)) / flat.size
    return math.inf if math.isnan(m) else m


def root_mean_square(a: np.ndarray) -> float:
    """sqrt(mean(a**2)), the size of a typical entry; inf beyond float64.

    The square root of `mean_square`.

    >>> root_mean_square(np.array([3.0, -3.0]))
    3.0
    """
    return math.sqrt(mean_square(a))


def mean_squares_by_layer(
    x: np.ndarray, layers: Iterable[Callable[[np.ndarray], np.ndarray]], phi
) -> np.ndarray:
    """[E[h_0**2], E[h_1**2], ...] for h_0 = x, h_l = phi(layer_l(h_{l-1})), one per layer.

    layers: the linear maps z_l = layer_l(h_{l-1}), taken one at a time, so a
    generator may draw each layer's weights just before it is used. Each mean
    is over every entry of h_l. Shape (1 + number of layers,).

    >>> mean_squares_by_layer(np.ones((2, 2)), [lambda h: 2 * h, lambda h: -h], relu)
    array([1., 4., 0.])
    """
    h = x
    mean_squares = [float(np.mean(h**2))]
    for layer in layers:
        h = phi(layer(h))
        mean_squares.append(float(np.mean(h**2)))
    return np.array(mean_squares)


def stack_layers(init: Callable[[PCG32], np.ndarray], seeds: Sequence[int]) -> np.ndarray:
    """One weight per seed, init(PCG32(seed)), stacked: shape (len(seeds), *shape).

    A loop over layers, not over elements: each init call draws its whole
    weight in one vectorized call.
    """
    return np.stack([init(PCG32(seed)) for seed in seeds]).astype(np.float64)


def mean_square_through(weights: np.ndarray, x: np.ndarray, activation=None) -> Estimate:
    """E[f(W x)**2] over a batch of layers, with the standard error across layers.

    weights: (L, out, in), one layer each; x: (L, m, in), m inputs per layer.
    The outputs of one layer share its weights, so they are averaged per layer
    first; the L layer averages are independent, which gives the error bar.
    """
    z = np.einsum("loi,lmi->lmo", weights, x)
    h = z if activation is None else activation(z)
    per_layer = (h**2).reshape(len(h), -1).mean(axis=1)
    return Estimate(
        float(per_layer.mean()), float(per_layer.std(ddof=1) / math.sqrt(len(per_layer)))
    )


def hand_example(shape=(4, 3), n_layers: int = 12, base_std: float = 0.02) -> dict[str, float]:
    """The scales of the module card's worked example, from tinyinit's fans and gains.

    >>> hand_example()["kaiming_normal_std"]
    0.8164965809277261
    """
    fan_in, fan_out = fans(shape)
    return {
        "xavier_uniform_bound": xavier_bound(fan_in, fan_out, calculate_gain("linear")),
        "xavier_normal_std": xavier_std(fan_in, fan_out, calculate_gain("linear")),
        "kaiming_normal_std": kaiming_std(fan_in, calculate_gain("relu")),
        "gpt2_residual_std": scaled_residual_std(base_std, n_layers),
    }


def format_table(headers: Sequence[str], rows: Sequence[Sequence], floatfmt: str = ".6g") -> str:
    """A plain-text table: columns padded to their widest cell, floats as floatfmt.

    >>> print(format_table(["n", "Var"], [[3, 0.5], [64, 2.0]]))
     n  Var
    --  ---
     3  0.5
    64    2
    """

    def cell(v) -> str:
        if isinstance(v, (float, np.floating)):
            return format(float(v), floatfmt)
        return str(v)

    text = [[cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[c]) for r in text)) for c, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(s.rjust(w) for s, w in zip(r, widths, strict=True)) for r in text]
    return "\n".join(lines)
