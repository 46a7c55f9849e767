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
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from ..core import arguments
from ..core.activations import relu
from ..core.arguments import KindError, generator, integer, number, one_of, shown
from ..core.distributions import normal, scaled_uniform_float32, uniforms
from ..core.init import (
    calculate_gain,
    fans,
    kaiming_std,
    normal_init,
    scaled_residual_std,
    uniform_bound,
    xavier_bound,
    xavier_std,
)
from ..core.pcg32 import PCG32
from .propagation import mean_square

__all__ = [
    "Estimate",
    "Moments",
    "draw_inputs",
    "draw_weights",
    "format_table",
    "hand_example",
    "input_moments",
    "mean_square_of",
    "mean_square_through",
    "predicted_variance",
    "relu",
    "root_mean_square",
    "sample_sums",
    "stack_layers",
    "variance_of",
]


class Moments(NamedTuple):
    """Mean, mean square E[x**2] and variance of an input distribution, exact.

    >>> Moments(1.0, 2.0).variance          # E[x**2] - E[x]**2
    1.0
    """

    mean: float
    mean_square: float

    @property
    def variance(self) -> float:
        return self.mean_square - self.mean**2


class Estimate(NamedTuple):
    """A Monte Carlo estimate and its standard error.

    >>> Estimate(0.98, 0.01).agrees(1.0)    # 2 standard errors away: within 4
    True
    """

    value: float
    stderr: float

    def z_score(self, expected: float) -> float:
        """How many standard errors the estimate lies from `expected` (+-inf off an exact one).

        >>> Estimate(1.2, 0.1).z_score(1.0), Estimate(2.0, 0.0).z_score(2.0)
        (1.9999999999999996, 0.0)
        """
        gap = self.value - number("expected", expected)
        if self.stderr == 0:  # an exact estimate: agrees with its own value only
            return 0.0 if gap == 0 else math.copysign(math.inf, gap)
        return gap / self.stderr

    def agrees(self, expected: float, n_se: float = 4.0) -> bool:
        """True when the estimate is within n_se standard errors of `expected`.

        >>> Estimate(1.2, 0.1).agrees(1.0), Estimate(1.2, 0.1).agrees(1.0, n_se=1.0)
        (True, False)
        """
        return abs(self.z_score(expected)) <= number("n_se", n_se, minimum=0)


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
    return INPUTS[one_of("kind", kind, INPUTS)][1]


def draw_inputs(kind, rng, shape) -> np.ndarray:
    """float64 inputs of `shape`, drawn in one call, row-major.

    kind is a name of INPUTS, or a callable (rng, n) -> n values for any other
    distribution.

    >>> from tinyinit import PCG32
    >>> draw_inputs("uniform", PCG32(0), (2, 2)).round(3)
    array([[-0.439, -0.022],
           [ 0.225, -0.318]])
    """
    return _inputs("kind", kind, rng, shape)


def _inputs(name: str, kind, rng, shape) -> np.ndarray:
    """draw_inputs, its kind called `name` in an error."""
    if not callable(kind):
        kind = INPUTS[one_of(name, kind, INPUTS)][0]
    generator("rng", rng)
    shape = arguments.shape("shape", shape)
    n = math.prod(shape)
    try:
        values = np.asarray(kind(rng, n), dtype=np.float64)
    except (TypeError, ValueError):
        values = None
    if values is None or values.shape != (n,):
        raise KindError(
            f"{name} must be a name of INPUTS or a callable (rng, n) -> n numbers, got {kind!r}, "
            f"which gave {shown(values)} for n = {n}"
        )
    return values.reshape(shape)


def predicted_variance(fan_in, weight_variance, mean_square):
    """Var(z) = fan_in * Var(w) * E[x**2]; exact for Fractions.

    >>> from fractions import Fraction
    >>> predicted_variance(3, Fraction(2, 7), 1)
    Fraction(6, 7)
    """
    integer("fan_in", fan_in, minimum=1)
    number("weight_variance", weight_variance, minimum=0)  # checked, kept as given: a Fraction
    number("mean_square", mean_square, minimum=0)
    return fan_in * weight_variance * mean_square


def draw_weights(shape, std: float, rng, weights: str = "normal") -> np.ndarray:
    """float64 weights of `shape` with mean 0 and standard deviation std.

    "normal": std * N(0, 1); "uniform": U(-a, a) with a = sqrt(3) * std, the same
    variance since Var U(-a, a) = a**2 / 3. Both come from tinyinit's float32
    initializer paths, one draw per element in row-major order.

    >>> from tinyinit import PCG32
    >>> draw_weights((2,), 0.5, PCG32(0), "uniform").round(4)
    array([-0.3805, -0.0187])
    """
    one_of("weights", weights, WEIGHTS)
    shape = arguments.shape("shape", shape)
    std = number("std", std, minimum=0)
    generator("rng", rng)
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
    fan_in = integer("fan_in", fan_in, minimum=1)
    n_samples = integer("n_samples", n_samples, minimum=1)
    if not callable(inputs):
        one_of("inputs", inputs, INPUTS)
    one_of("weights", weights, WEIGHTS)
    w = draw_weights((n_samples, fan_in), std, rng, weights)
    x = _inputs("inputs", inputs, rng, (n_samples, fan_in))
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
    z = _samples(samples)
    sq = (z - z.mean()) ** 2
    return Estimate(float(sq.mean()), float(sq.std(ddof=1) / math.sqrt(len(sq))))


def _samples(samples) -> np.ndarray:
    z = arguments.real_array("samples", samples).ravel()
    if z.size < 2:
        raise ValueError(f"samples must hold at least 2 values (a standard error), got {z.size}")
    return z


def mean_square_of(samples: np.ndarray) -> Estimate:
    """Sample mean of x**2, with its standard error.

    >>> mean_square_of(np.array([1.0, -1.0, 3.0, -3.0]))
    Estimate(value=5.0, stderr=2.309401076758503)
    """
    sq = _samples(samples) ** 2
    return Estimate(float(sq.mean()), float(sq.std(ddof=1) / math.sqrt(len(sq))))


def root_mean_square(a: np.ndarray) -> float:
    """sqrt(mean(a**2)), the size of a typical entry; inf beyond float64.

    The square root of `mean_square`.

    >>> root_mean_square(np.array([3.0, -3.0]))
    3.0
    """
    return math.sqrt(mean_square(a))  # checked there, under the same name


def _returned(name: str, f, argument) -> np.ndarray:
    """f(argument) as a float64 array, if f gave numbers (a callable of yours may not)."""
    try:
        out = np.asarray(f(argument), dtype=np.float64)
    except (TypeError, ValueError):
        out = None
    if out is None or out.ndim == 0:
        raise KindError(f"{name} must give an array of numbers, got {f!r}, which did not")
    return out


def stack_layers(init: Callable[[PCG32], np.ndarray], seeds: Sequence[int]) -> np.ndarray:
    """One weight per seed, init(PCG32(seed)), stacked: shape (len(seeds), *shape).

    A loop over layers, not over elements: each init call draws its whole
    weight in one vectorized call.

    >>> from tinyinit import normal_init
    >>> stack_layers(lambda rng: normal_init((2, 3), 1.0, rng), range(4)).shape
    (4, 2, 3)
    """
    init = arguments.function("init", init)
    seeds = arguments.integers("seeds", seeds if not isinstance(seeds, range) else list(seeds))
    if not seeds:
        raise ValueError("seeds must hold at least one seed, got none")
    weights = [_returned("init", init, PCG32(seed)) for seed in seeds]
    if any(w.shape != weights[0].shape for w in weights):
        raise ValueError(
            f"init must give one shape for every seed, got {[w.shape for w in weights]}"
        )
    return np.stack(weights)


def mean_square_through(weights: np.ndarray, x: np.ndarray, activation=None) -> Estimate:
    """E[f(W x)**2] over a batch of layers, with the standard error across layers.

    weights: (L, out, in), one layer each; x: (L, m, in), m inputs per layer.
    The outputs of one layer share its weights, so they are averaged per layer
    first; the L layer averages are independent, which gives the error bar.

    >>> mean_square_through(np.ones((2, 1, 3)), np.ones((2, 4, 3)))   # every output is 3
    Estimate(value=9.0, stderr=0.0)
    """
    weights = arguments.real_array("weights", weights, ndim=3)
    x = arguments.real_array("x", x, ndim=3)
    if len(weights) < 2 or x.shape[0] != len(weights) or x.shape[2] != weights.shape[2]:
        raise ValueError(
            f"x must be (L, m, in) for weights (L, out, in) with L >= 2 layers, got shapes "
            f"{x.shape} and {weights.shape}"
        )
    z = np.einsum("loi,lmi->lmo", weights, x)
    if activation is not None:
        z = _returned("activation", arguments.function("activation", activation), z)
    h = z
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
    _check_table(headers, rows, floatfmt)

    def cell(v) -> str:
        if isinstance(v, (float, np.floating)):
            return format(float(v), floatfmt)
        return str(v)

    text = [[cell(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[c]) for r in text]) for c, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(s.rjust(w) for s, w in zip(r, widths, strict=True)) for r in text]
    return "\n".join(lines)


def _check_table(headers, rows, floatfmt) -> None:
    arguments.instance("headers", headers, (list, tuple), "a list of column names")
    if not headers or not all(isinstance(h, str) for h in headers):
        raise KindError(f"headers must be a non-empty list of column names (str), got {headers!r}")
    arguments.instance("rows", rows, (list, tuple), "a list of rows, each a list of cells")
    for row in rows:
        arguments.instance("rows", row, (list, tuple), "a list of rows, each a list of cells")
        if len(row) != len(headers):
            raise ValueError(f"rows must have {len(headers)} cells each, got {shown(row)}")
    arguments.instance("floatfmt", floatfmt, str, "a format spec such as '.6g'")
    try:
        format(1.0, floatfmt)
    except ValueError:
        raise ValueError(f"floatfmt must be a format spec for floats, got {floatfmt!r}") from None
