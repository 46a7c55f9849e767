"""The activations phi, their slopes phi', and where they bend: one table for the package.

    h = phi(z),    dloss/dz = phi'(z) * dloss/dh

`ACTIVATIONS` maps a name to an `Activation(phi, dphi, kinks)`: two elementwise
functions on float64 arrays and the points where phi has a corner (phi' jumps
there, so a quadrature puts a panel edge on each). The simulation, the theory,
the gains, the Transformer and the explorer's dropdown all read this table: to
add an activation, add an entry here (see docs/developing/architecture.md, "Where a
new thing goes").

    linear        z
    relu          max(z, 0)
    leaky_relu    z if z > 0 else slope * z          (slope 0.01, as torch)
    tanh          tanh(z)
    sigmoid       1 / (1 + exp(-z))
    selu          scale * (z if z > 0 else alpha * (exp(z) - 1))
    gelu          z * Phi(z),  Phi the standard normal CDF (exact, with erf)
    silu          z * sigmoid(z)

>>> act = activation("relu")
>>> act.phi(np.array([-1.0, 2.0])), act.dphi(np.array([-1.0, 2.0])), act.kinks
(array([0., 2.]), array([0., 1.]), (0.0,))
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .arguments import KindError, number, one_of, real_array

__all__ = [
    "ACTIVATIONS",
    "Activation",
    "activation",
    "as_activation",
    "erf",
    "gelu",
    "gelu_slope",
    "leaky_relu",
    "normal_cdf",
    "relu",
    "silu",
    "silu_slope",
]

# leaky_relu's negative slope when none is given: torch's, in nn.LeakyReLU and calculate_gain.
LEAKY_RELU_SLOPE = 0.01
# Klambauer et al. (2017), "Self-Normalizing Neural Networks", the exact constants.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_SQRT_2PI = math.sqrt(2 * math.pi)

# Karpathy's "saturated" tanh unit: |tanh(z)| > TANH_SATURATED, where the slope
# 1 - tanh(z)**2 is below SATURATED_SLOPE = 1 - 0.97**2 (0.0591). The same bound on
# phi' counts the shut-off entries of any activation (ReLU's zeros among them).
TANH_SATURATED = 0.97
SATURATED_SLOPE = 1.0 - TANH_SATURATED**2


class Activation(NamedTuple):
    """An activation phi, its derivative phi' (both elementwise on arrays), and its kinks.

    kinks: the z where phi has a corner (relu's 0); empty for a smooth phi.
    homogeneous: phi(c z) = c phi(z) for every c > 0 (linear, relu, leaky_relu).
    A stack of such layers with every weight scaled by c then scales layer l by
    c**l exactly, and phi'(c z) = phi'(z): a new gain only rescales.

    >>> Activation(np.tanh, lambda z: 1.0 - np.tanh(z) ** 2).kinks
    ()
    """

    phi: Callable[[np.ndarray], np.ndarray]
    dphi: Callable[[np.ndarray], np.ndarray]
    kinks: tuple[float, ...] = ()
    homogeneous: bool = False


def _sigmoid(z):
    # exp(-log(1 + e^-z)) never overflows, whatever the sign of z; NaN stays NaN, silently.
    with np.errstate(invalid="ignore"):
        return np.exp(-np.logaddexp(0.0, -z))


def _selu(z):
    return SELU_SCALE * np.where(z > 0, z, SELU_ALPHA * np.expm1(np.minimum(z, 0.0)))


def _relu(z):
    return np.maximum(z, 0.0)


def relu(z: np.ndarray) -> np.ndarray:
    """max(z, 0), elementwise in float64: the package's one ReLU.

    >>> relu(np.array([-1.0, 2.0]))
    array([0., 2.])
    """
    return _relu(real_array("z", z))


def leaky_relu(slope: float = LEAKY_RELU_SLOPE) -> Activation:
    """leaky_relu with negative slope `slope`: phi(z) = z if z > 0 else slope * z.

    >>> leaky_relu(0.2).phi(np.array([-1.0, 1.0]))
    array([-0.2,  1. ])
    """
    slope = number("slope", slope)
    return Activation(
        lambda z: np.where(z > 0, z, slope * z),
        lambda z: np.where(z > 0, 1.0, slope),
        (0.0,),
        homogeneous=True,
    )


def erf(z: np.ndarray) -> np.ndarray:
    """The error function erf(z) = 2/sqrt(pi) * integral_0^z exp(-t**2) dt, elementwise.

    The C library's erf (math.erf), element by element: exact to the last bit,
    at about 50 ns per element (numpy has no erf; a vector rewrite would differ
    by a few ulp). A (256, 16) layer of GELU costs some 0.2 ms for it.

    >>> erf(np.array([0.0, 1.0]))
    array([0.        , 0.84270079])
    """
    return _erf(real_array("z", z))


def _erf(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    return np.fromiter(map(math.erf, z.ravel().tolist()), np.float64, z.size).reshape(z.shape)


def normal_cdf(z: np.ndarray) -> np.ndarray:
    """Phi(z) = (1 + erf(z / sqrt 2)) / 2, the standard normal CDF, elementwise in float64.

    Any input dtype is computed in float64, with the C library's erf (see `erf`).

    >>> normal_cdf(np.array([0.0, 1.0])).round(6)
    array([0.5     , 0.841345])
    """
    return _normal_cdf(real_array("z", z))


def _normal_cdf(z) -> np.ndarray:
    return 0.5 * (1.0 + _erf(np.asarray(z, dtype=np.float64) / math.sqrt(2.0)))


def gelu(z: np.ndarray, approximate: str = "none") -> np.ndarray:
    """GELU(z) = z Phi(z) = z (1 + erf(z / sqrt 2)) / 2 (Hendrycks & Gimpel, 2016).

    approximate="none" is exact, with the C library's erf; "tanh" is GPT-2's
    0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z**3))), as torch's `approximate`.

    >>> gelu(np.array([-1.0, 0.0, 1.0])).round(6)
    array([-0.158655,  0.      ,  0.841345])
    """
    z, approximate = real_array("z", z), one_of("approximate", approximate, ("none", "tanh"))
    if approximate == "none":
        return _gelu(z)
    with np.errstate(over="ignore", invalid="ignore"):  # beyond float64: inf, as everywhere
        return 0.5 * z * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z**3)))


def _gelu(z) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # -inf * 0 at z = -inf: gelu's limit there is 0
        return np.where(z == -np.inf, 0.0, z * _normal_cdf(z))


def gelu_slope(z: np.ndarray) -> np.ndarray:
    """GELU's derivative (exact form): Phi(z) + z * phi(z), phi the standard normal density.

    >>> float(gelu_slope(np.array([0.0]))[0])
    0.5
    """
    return _gelu_slope(real_array("z", z))


def _gelu_slope(z) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # z * z beyond float64: the slope is 0 or 1
        density = np.exp(-0.5 * z * z) / _SQRT_2PI
        return _normal_cdf(z) + np.where(density > 0, z * density, 0.0)


def silu(z: np.ndarray) -> np.ndarray:
    """SiLU (swish): z * sigmoid(z).

    >>> silu(np.array([0.0, 1.0])).round(6)
    array([0.      , 0.731059])
    >>> silu(np.array([-1000.0])), silu(np.array([1e300]))   # no overflow, no warning
    (array([-0.]), array([1.e+300]))
    """
    return _silu(real_array("z", z))


def _silu(z) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # -inf * 0 at z = -inf: silu's limit there is 0
        return np.where(z == -np.inf, 0.0, z * _sigmoid(z))


def silu_slope(z: np.ndarray) -> np.ndarray:
    """SiLU's derivative: sigmoid(z) * (1 + z * (1 - sigmoid(z))).

    >>> float(silu_slope(np.array([0.0]))[0])
    0.5
    """
    return _silu_slope(real_array("z", z))


def _silu_slope(z) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    s, s_minus = _sigmoid(z), _sigmoid(-z)  # 1 - sigmoid(z), without the cancellation
    with np.errstate(invalid="ignore"):  # z * 0 at z = -inf: no slope left there
        return np.nan_to_num(s * (1.0 + z * s_minus), nan=0.0)


ACTIVATIONS: dict[str, Activation] = {
    "linear": Activation(lambda z: z, lambda z: np.ones_like(z), homogeneous=True),
    "relu": Activation(_relu, lambda z: (z > 0).astype(z.dtype), (0.0,), homogeneous=True),
    "leaky_relu": leaky_relu(LEAKY_RELU_SLOPE),
    "tanh": Activation(np.tanh, lambda z: 1.0 - np.tanh(z) ** 2),
    "sigmoid": Activation(_sigmoid, lambda z: _sigmoid(z) * _sigmoid(-z)),
    "selu": Activation(
        _selu,
        lambda z: SELU_SCALE * np.where(z > 0, 1.0, SELU_ALPHA * np.exp(np.minimum(z, 0.0))),
        (0.0,),
    ),
    # The two of a Transformer's MLP that torch's gain table lacks.
    "gelu": Activation(_gelu, _gelu_slope),
    "silu": Activation(_silu, _silu_slope),
}

# A callable's derivative by central differences: the step that balances
# truncation (step**2) against rounding (1e-16 / step) for smooth phi.
_DIFFERENCE_STEP = 1e-6


def activation(phi: str | Callable[[np.ndarray], np.ndarray], param: float | None = None):
    """The Activation for a name of ACTIVATIONS, or for your own elementwise callable phi.

    param: leaky_relu's negative slope (default 0.01, as torch); for any other name it must be
    None. A callable gets phi' by central differences (step 1e-6) and no known kinks; it is
    tried once on an array first, so that one which cannot take arrays (math.tanh) or returns
    nothing is refused here, not deep in a computation.

    >>> activation("leaky_relu", 0.2).dphi(np.array([-1.0, 1.0]))
    array([0.2, 1. ])
    >>> activation("swish")
    Traceback (most recent call last):
    ...
    ValueError: phi must be one of linear, relu, leaky_relu, tanh, sigmoid, selu, gelu, silu, or a callable, got 'swish'
    """  # noqa: E501
    return _resolve(phi, param, "phi")


def as_activation(phi, param: float | None = None, *, name: str = "phi") -> Activation:
    """phi itself if it is an Activation, else `activation(phi, param)`; errors call it `name`.

    A name or a callable is resolved where it enters; the Activation travels on.

    >>> as_activation("relu") is as_activation(as_activation("relu"))
    True
    >>> as_activation(None, name="activation")
    Traceback (most recent call last):
    ...
    tinyinit.core.arguments.KindError: activation must be one of linear, relu, leaky_relu, tanh, sigmoid, selu, gelu, silu, or a callable, got None
    """  # noqa: E501
    if isinstance(phi, Activation):
        if not (callable(phi.phi) and callable(phi.dphi)):
            raise KindError(f"{name} must be an Activation of two callables, got {phi!r}")
        if param is not None:
            raise ValueError(f"param must be None for an Activation (its own slope), got {param!r}")
        return phi
    return _resolve(phi, param, name)


def _resolve(phi, param, name: str) -> Activation:
    accepted = f"one of {', '.join(ACTIVATIONS)}, or a callable"
    if callable(phi):
        _try_on_an_array(phi, name)
        if param is not None:
            number("param (the leaky_relu negative slope)", param)
            raise ValueError(f"param must be None for a callable {name}, got {param!r}")
        h = _DIFFERENCE_STEP
        return Activation(phi, lambda z: (phi(z + h) - phi(z - h)) / (2 * h))
    if not isinstance(phi, str):
        raise KindError(f"{name} must be {accepted}, got {phi!r}")
    if phi not in ACTIVATIONS:
        raise ValueError(f"{name} must be {accepted}, got {phi!r}")
    if param is not None:
        number("param (the leaky_relu negative slope)", param)
    if phi == "leaky_relu" and param is not None:
        return leaky_relu(param)
    if param is not None:
        raise ValueError(f"param must be None for {phi} (it is leaky_relu's slope), got {param!r}")
    return ACTIVATIONS[phi]


_PROBE = np.array([-1.0, 0.0, 1.0])


def _try_on_an_array(phi, name: str) -> None:
    """A callable activation must map an array to an array of its shape, in numbers."""
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(phi(_PROBE.copy()), dtype=np.float64)
        why = None if out.shape == _PROBE.shape else f"gave {out.shape} for shape (3,)"
    except (TypeError, ValueError) as error:
        why = f"raised {type(error).__name__}: {error}"
    if why:
        raise KindError(
            f"{name} must be a callable that maps a numpy array to one of its shape, elementwise, "
            f"got {phi!r}, which {why} (try np.tanh for math.tanh)"
        )
