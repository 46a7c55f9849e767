"""Gaussian integrals of an activation: the theory under every variance in the package.

A layer with weights of std gain / sqrt(n) sends a pre-activation of variance
q to the next one's

    q_next = gain**2 * E[phi(z)**2],    z ~ N(0, q)          (the mean-field map)

and scales a gradient's mean square by chi = gain**2 * E[phi'(z)**2]. A deep
stack settles where q* = gain**2 * E[phi(z)**2], z ~ N(0, q*) (the fixed point),
if the map's slope there is below 1 (`q_map_slope`); above 1 it leaves it.

Every one of these is a one-dimensional Gaussian integral, E[f(z)] for
z ~ N(0, q), computed here by quadrature (numpy only): Gauss-Legendre panels
over xi = z / sqrt(q) in [-12, 12], with a panel edge at 0 and at every kink
of the activation, so ReLU's corner costs no accuracy (E[relu(z)**2] = q/2 to
about 1e-15 relative), and panels that shrink toward 0 as q grows, so tanh's
turn near z = 0 stays resolved at any scale. Depth is the map applied layer after
layer (`mean_field`, forward and backward: the one recursion).
`tinyinit.physics.propagation`, `tinyinit.physics.gains`, `tinyinit.networks.transformer` and the
explorer all
take their theory from here.

>>> round(activation_mean_square("relu", 3.0), 12)   # relu keeps half of E[z**2] = q
1.5
>>> round(fixed_point("tanh", 5 / 3), 6)
1.17848
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from ..core.activations import Activation, as_activation
from ..core.arguments import KindError, flag, function, integer, number, one_of

__all__ = [
    "activation_mean_square",
    "fixed_point",
    "gaussian_expectation",
    "gradient_factor",
    "mean_field",
    "next_q",
    "q_map_slope",
    "slope_mean_square",
]

DIRECTIONS = ("forward", "backward")

Phi = str | Callable[[np.ndarray], np.ndarray] | Activation


# Panel edges in xi (standard normal units), mirrored. Beyond |xi| = 12 the
# density is below 1e-31: nothing a float64 sum could see is left out.
_EDGES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0])
NODES_PER_PANEL = 48


@lru_cache(maxsize=128)
def _rule(edges: tuple[float, ...], nodes_per_panel: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes xi and weights w with sum(w * f(xi)) = E[f(xi)], xi ~ N(0, 1), for these panels."""
    x, w = np.polynomial.legendre.leggauss(nodes_per_panel)
    edges = np.array(edges)
    lo, hi = edges[:-1, None], edges[1:, None]
    xi = (0.5 * (hi - lo) * x + 0.5 * (hi + lo)).ravel()
    weight = (0.5 * (hi - lo) * w).ravel() * np.exp(-0.5 * xi**2)
    weight /= weight.sum()  # E[1] = 1 to rounding: a constant (tanh**2 at q = inf) is exact
    for a in (xi, weight):
        a.setflags(write=False)
    return xi, weight


def _panels(kinks_xi: list[float], q: float) -> tuple[float, ...]:
    """Panel edges in xi: the fixed ones, the kinks, and for q > 1 edges halving toward 0.

    With a large q, a smooth phi (tanh, sigmoid) turns within |z| ~ 1, that is
    within |xi| ~ 1 / sqrt(q): the edges at 0.5 / 2**j, j = 1 .. ceil(log2(q) / 2),
    keep that turn inside panels of its own size (tanh's E[phi(z)**2] to 1e-15
    even at q = 1e6, where one panel [0, 0.5] is off by 1e-5).
    """
    return _edges(tuple(kinks_xi), _halvings(q))


def _halvings(q: float) -> int:
    # Capped: beyond q = 2**128 the turn is thinner than float64 can matter.
    return min(math.ceil(math.log2(q) / 2), 64) if 1 < q < math.inf else 0


@lru_cache(maxsize=1024)
def _edges(kinks_xi: tuple[float, ...], halvings: int) -> tuple[float, ...]:
    # Cached: a mean-field recursion asks for the same few sets of edges at every layer.
    near_zero = [0.5 * 2.0**-j for j in range(1, halvings + 1)]
    edges = np.concatenate([-_EDGES[::-1], _EDGES[1:], kinks_xi, near_zero, -np.array(near_zero)])
    return tuple(np.unique(np.clip(edges, -_EDGES[-1], _EDGES[-1])).tolist())


def gaussian_expectation(
    f: Callable[[np.ndarray], np.ndarray],
    q: float = 1.0,
    *,
    kinks: tuple[float, ...] = (0.0,),
    nodes_per_panel: int = NODES_PER_PANEL,
) -> float:
    """E[f(z)] for z ~ N(0, q), by Gauss-Legendre quadrature on panels.

        E[f(z)] = integral f(sqrt(q) xi) exp(-xi**2 / 2) / sqrt(2 pi) dxi

    Gauss-Legendre with m nodes is exact for polynomials of degree 2m - 1 on a
    panel, and converges fast for anything smooth there; a kink inside a panel
    (relu's corner) would slow it to a crawl, so every kink (in z units) is a
    panel edge. q = 0 gives f(0); q = inf gives what f does at +-inf (no node
    sits at 0), which is where a stack that overflowed has gone. No warning
    escapes: an overflow inside f gives inf.

    >>> round(gaussian_expectation(lambda z: np.maximum(z, 0) ** 2), 15)
    0.5
    """
    f = function("f", f)
    q = _variance("q", q)
    kinks = tuple(number("kinks", k) for k in _sequence("kinks", kinks))
    nodes_per_panel = integer("nodes_per_panel", nodes_per_panel, minimum=1)
    return _expectation(f, q, kinks, nodes_per_panel)


def _expectation(f: Callable, q: float, kinks: tuple[float, ...], nodes_per_panel: int) -> float:
    """gaussian_expectation trusting its arguments (what f gives is still checked)."""
    with np.errstate(all="ignore"):
        if q == 0:
            return float(_values("f", f, np.zeros(1))[0])
        root_q = math.sqrt(q)
        xi, weight = _rule(_panels([k / root_q for k in kinks], q), nodes_per_panel)
        return float(np.sum(weight * _values("f", f, root_q * xi)))


def _variance(name: str, q) -> float:
    """q as a float, if it is a real number >= 0; inf is allowed (a stack that overflowed).

    >>> _variance("q", 2), _variance("q", float("inf"))
    (2.0, inf)
    """
    return number(name, q, minimum=0, finite=False)


def _sequence(name: str, value) -> tuple:
    if not isinstance(value, (tuple, list)):
        raise KindError(f"{name} must be a tuple of numbers, got {value!r}")
    return tuple(value)


def _values(name: str, f, z: np.ndarray) -> np.ndarray:
    """f(z) as float64, if f gave a number for each entry of z (a callable of yours may not)."""
    try:
        values = np.asarray(f(z), dtype=np.float64)
    except (TypeError, ValueError):
        values = None
    if values is None or values.shape != z.shape:
        raise KindError(
            f"{name} must give a real number for each entry of its array argument, "
            f"got {f!r}, which does not"
        )
    return values


def activation_mean_square(phi: Phi, q: float = 1.0, *, param: float | None = None) -> float:
    """E[phi(z)**2] for z ~ N(0, q): the mean square a layer passes on to the next.

    phi: a name of tinyinit.core.activations.ACTIVATIONS, a callable or an Activation;
    param: leaky_relu's slope. (The mean square of an array is
    tinyinit.physics.variance.mean_square.)

    >>> round(activation_mean_square("relu", 3.0), 12)   # relu keeps half of E[z**2] = q
    1.5
    """
    return _activation_mean_square(as_activation(phi, param), _variance("q", q))


def _activation_mean_square(act: Activation, q: float) -> float:
    f = act.phi
    square = lambda z: np.asarray(f(z), dtype=np.float64) ** 2  # noqa: E731
    return _expectation(square, q, (0.0, *act.kinks), NODES_PER_PANEL)


def slope_mean_square(phi: Phi, q: float = 1.0, *, param: float | None = None) -> float:
    """E[phi'(z)**2] for z ~ N(0, q): what a layer does to a gradient's mean square.

    A kink is a panel edge of the quadrature, so phi' is never evaluated on it.

    >>> round(slope_mean_square("relu", 2.0), 12)   # relu' is 1 on half the line
    0.5
    """
    return _slope_mean_square(as_activation(phi, param), _variance("q", q))


def _slope_mean_square(act: Activation, q: float) -> float:
    dphi = act.dphi
    square = lambda z: np.asarray(dphi(z), dtype=np.float64) ** 2  # noqa: E731
    return _expectation(square, q, (0.0, *act.kinks), NODES_PER_PANEL)


def next_q(phi: Phi, gain: float, q: float, *, param: float | None = None) -> float:
    """One layer of the mean-field map: q_next = gain**2 * E[phi(z)**2], z ~ N(0, q).

    >>> round(next_q("relu", 2**0.5, 3.0), 12)       # Kaiming keeps relu's q
    3.0
    """
    gain = number("gain", gain, minimum=0)
    return _square(gain) * activation_mean_square(phi, q, param=param)


def q_map_slope(phi: Phi, gain: float, q: float, *, param: float | None = None) -> float:
    """d q_next / d q of the mean-field map at q: gain**2 * E[z phi(z) phi'(z)] / q, z ~ N(0, q).

    At a fixed point q* it decides what depth does to a small error in q: a slope below 1
    shrinks it layer after layer (a stable fixed point, the stack settles at q*), above 1
    grows it (unstable: the signal leaves q* for ever larger or smaller values), and exactly
    1 at every q, as for a positively homogeneous phi at its own gain, keeps it (a line of
    fixed points: the stack keeps whatever it was given). The single-layer gain makes q = 1 a
    fixed point; whether the stack stays there is this slope.

    >>> round(q_map_slope("relu", 2**0.5, 3.0), 12)   # Kaiming: slope 1 at every q
    1.0
    >>> round(q_map_slope("tanh", 5 / 3, fixed_point("tanh", 5 / 3)), 4)   # stable
    0.4309
    >>> round(q_map_slope("gelu", 1.5335304411955353, 1.0), 4)   # its single-layer gain: unstable
    1.1441
    """
    act = as_activation(phi, param)
    gain, q = number("gain", gain, minimum=0), number("q", q, above=0)
    f, dphi = act.phi, act.dphi

    def integrand(z: np.ndarray) -> np.ndarray:
        return z * np.asarray(f(z), dtype=np.float64) * np.asarray(dphi(z), dtype=np.float64)

    with np.errstate(all="ignore"):  # a gain beyond float64: an inf slope, as every square
        return _square(gain) * gaussian_expectation(integrand, q, kinks=(0.0, *act.kinks)) / q


def mean_field(
    activation: Phi,
    *,
    gain: float,
    n_layers: int,
    direction: str = "forward",
    from_batch: bool = False,
):
    """The mean-field theory of a deep stack: the mean square per layer, l = 0 .. n_layers.

    The one entry to the recursion over depth (float64 array, read-only). gain: std = gain /
    sqrt(n) (n fan_in forward, fan_out backward: equal for a square stack), so gain**2 =
    n * std**2.

        forward:   m_0 = 1,  q_l = gain**2 * m_{l-1},  m_l = E[phi(z)**2],  z ~ N(0, q_l)
        backward:  g_L = 1,  g_{l-1} = gain**2 * E[phi'(z)**2] * g_l,          z ~ N(0, q_l)

    q_l is the variance of layer l's pre-activation, m_l the mean square of its output, g_l
    the mean square of dloss/dh_l. Beyond float64 is inf (a nan, inf * 0 inside phi: the
    stack has overflowed). activation: a name of ACTIVATIONS, a callable or an Activation.

    from_batch: every layer's scale read from the batch reaching it (LSUV), so that
    q_l = gain**2 at every layer; layer l's n * std**2 is then gain**2 / m_{l-1}, the factor
    backward in place of gain**2, and 1 above a dead layer (m_{l-1} = 0), which LSUV leaves
    as it started (`lsuv_factor` is 1 where Var(z) is 0).

    >>> mean_field("relu", gain=1.0, n_layers=3)      # Xavier + ReLU halves per layer
    array([1.   , 0.5  , 0.25 , 0.125])
    >>> mean_field("relu", gain=2**0.5, n_layers=2, direction="backward")   # Kaiming: chi = 1
    array([1., 1., 1.])
    >>> mean_field("relu", gain=1.0, n_layers=3, from_batch=True)      # LSUV: q_l = 1 at every l
    array([1. , 0.5, 0.5, 0.5])
    """
    act = as_activation(activation, name="activation")
    fan_var = _square(number("gain", gain, minimum=0))
    n_layers = integer("n_layers", n_layers, minimum=0)
    one_of("direction", direction, DIRECTIONS)
    from_batch = flag("from_batch", from_batch)
    q, m = _forward(act, fan_var, n_layers, from_batch)
    if direction == "forward":
        out = np.array(m)
    else:
        fan_vars = [fan_var] * n_layers
        if from_batch:  # LSUV's layer l: n * std**2 = gain**2 / m_{l-1}, its start's 1 if dead
            fan_vars = [fan_var / m_l if m_l > 0 else 1.0 for m_l in m[:-1]]
        out = np.array(_backward(act, fan_vars, q))
    out[np.isnan(out)] = math.inf  # inf * 0 on the way down: the stack has overflowed
    out.setflags(write=False)
    return out


def _forward(
    act: Activation, fan_var: float, n_layers: int, from_batch: bool = False
) -> tuple[list[float], list[float]]:
    """([q_1 .. q_L], [m_0 .. m_L]) of mean_field forward, m_0 = 1."""
    q, m = [], [1.0]
    for _ in range(n_layers):
        q.append(fan_var if from_batch else fan_var * m[-1])
        m_l = _activation_mean_square(act, q[-1])
        m.append(math.inf if math.isnan(m_l) else m_l)
    return q, m


def _backward(act: Activation, fan_vars: list[float], q: list[float]) -> list[float]:
    """[g_0 .. g_L] of mean_field backward, from g_L = 1 down; q = [q_1 .. q_L], fan_vars
    the n * std**2 of layers 1 .. L."""
    g = [1.0]
    for fan_var, q_l in zip(reversed(fan_vars), reversed(q)):
        g.append(_chi(act, fan_var, q_l) * g[-1])
    return g[::-1]


def _chi(act: Activation, fan_var: float, q: float) -> float:
    # One layer's factor on a gradient's mean square; gradient_factor is its public face.
    with np.errstate(all="ignore"):
        return fan_var * _slope_mean_square(act, q)


def fixed_point(phi: Phi, gain: float, *, param: float | None = None, q0: float = 1.0) -> float:
    """The q* > 0 with q* = gain**2 * E[phi(z)**2], z ~ N(0, q*), where a deep stack settles.

    Found by bisection on log q of gain**2 * E[phi(z)**2] / q - 1 over
    q in [1e-12, 1e8] (one crossing assumed). When there is none, the stack
    drains (returns 0.0) or blows up (returns inf). A positively homogeneous
    phi (relu, leaky_relu, linear) scales q by the same factor at every size:
    with its own gain every q is a fixed point, and the stack keeps q0.

    >>> round(fixed_point("tanh", 5 / 3), 6)
    1.17848
    >>> fixed_point("tanh", 1.0), fixed_point("relu", 2 ** 0.5)
    (0.0, 1.0)
    """
    act = as_activation(phi, param)
    gain, q0 = number("gain", gain, minimum=0), number("q0", q0, above=0)

    def excess(q: float) -> float:
        return next_q(act, gain, q) / q - 1.0

    lo, hi = 1e-12, 1e8
    at_lo, at_hi = excess(lo), excess(hi)
    if abs(at_lo) < 1e-12 and abs(at_hi) < 1e-12:
        return float(q0)
    if at_lo <= 0 and at_hi <= 0:
        return 0.0
    if at_lo > 0 and at_hi > 0:
        return math.inf
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if (excess(mid) > 0) == (at_lo > 0):
            lo = mid
        else:
            hi = mid
        if hi / lo - 1 < 1e-15:
            break
    return math.sqrt(lo * hi)


def gradient_factor(phi: Phi, gain: float, q: float, *, param: float | None = None) -> float:
    """chi = gain**2 * E[phi'(z)**2], z ~ N(0, q): how a gradient's mean square scales per layer.

    Backward, a square layer multiplies the gradient by W^T and then phi'(z);
    chi > 1 grows gradients with depth, chi < 1 shrinks them.

    >>> round(gradient_factor("relu", 2**0.5, 1.0), 12)   # Kaiming: gradients keep their size
    1.0
    """
    act, gain = as_activation(phi, param), number("gain", gain, minimum=0)
    return _chi(act, _square(gain), _variance("q", q))


def _square(gain: float) -> float:
    """gain**2, inf beyond float64 (a Python float's ** would raise OverflowError)."""
    return gain * gain
