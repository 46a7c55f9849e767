"""Where torch's gain table comes from: gains computed from the activation itself.

A layer with std = gain / sqrt(n) sends a pre-activation of variance q to

    q_next = gain**2 * E[phi(z)**2],   z ~ N(0, q)        (signal propagation)

so the gain that keeps a unit signal unit-sized after one layer is

    gain = 1 / sqrt(E[phi(z)**2]),     z ~ N(0, 1),

and a deep stack settles where q* = gain**2 * E[phi(sqrt(q*) xi)**2]. Both are
one-dimensional Gaussian integrals, computed here by quadrature (numpy only):
Gauss-Legendre panels over xi in [-12, 12] with a panel edge at every kink, so
ReLU's corner at 0 costs no accuracy (E[relu(z)**2] = 1/2 to ~1e-15).

The second half is about fans: which dimension of a weight is fan-in, for a
Linear stored (out, in) or (in, out), a convolution, and a transposed
convolution, whose torch weight (in, out / groups, *kernel) makes `fans` read
the two fans swapped. `counted_fans` counts them by running the layer.

>>> round(single_layer_gain("relu"), 12)
1.414213562373
>>> round(single_layer_gain("tanh"), 4)
1.5925
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .propagation import ACTIVATIONS as _PROPAGATION

Activation = Callable[[np.ndarray], np.ndarray]

_erf = np.frompyfunc(math.erf, 1, 1)
_SQRT_2PI = math.sqrt(2 * math.pi)


def gelu(z: np.ndarray) -> np.ndarray:
    """GELU, exact: z * Phi(z) = z * (1 + erf(z / sqrt 2)) / 2 (math.erf, elementwise)."""
    z = np.asarray(z, dtype=np.float64)
    return z * 0.5 * (1.0 + _erf(z / math.sqrt(2.0)).astype(np.float64))


def gelu_slope(z: np.ndarray) -> np.ndarray:
    """GELU's derivative: Phi(z) + z * phi(z)."""
    z = np.asarray(z, dtype=np.float64)
    cdf = 0.5 * (1.0 + _erf(z / math.sqrt(2.0)).astype(np.float64))
    return cdf + z * np.exp(-0.5 * z * z) / _SQRT_2PI


def silu(z: np.ndarray) -> np.ndarray:
    """SiLU (swish): z * sigmoid(z)."""
    z = np.asarray(z, dtype=np.float64)
    return z / (1.0 + np.exp(-z))


def silu_slope(z: np.ndarray) -> np.ndarray:
    """SiLU's derivative: sigmoid(z) * (1 + z * (1 - sigmoid(z)))."""
    z = np.asarray(z, dtype=np.float64)
    s = 1.0 / (1.0 + np.exp(-z))
    return s * (1.0 + z * (1.0 - s))


# The activations of tinyinit.propagation (linear, relu, leaky_relu, tanh,
# sigmoid, selu), and the two of a Transformer's MLP that torch's table lacks.
ACTIVATIONS: dict[str, Activation] = {name: act.phi for name, act in _PROPAGATION.items()}
ACTIVATIONS |= {"gelu": gelu, "silu": silu}
SLOPES: dict[str, Activation] = {name: act.dphi for name, act in _PROPAGATION.items()}
SLOPES |= {"gelu": gelu_slope, "silu": silu_slope}


def activation(phi: str | Activation, param: float | None = None) -> Activation:
    """The function phi itself, from a name of ACTIVATIONS or a callable.

    param is leaky_relu's negative slope (default 0.01, as torch).
    """
    if callable(phi):
        return phi
    if phi not in ACTIVATIONS:
        raise ValueError(
            f"activation must be a callable or one of {', '.join(ACTIVATIONS)}; got {phi!r}"
        )
    if phi == "leaky_relu" and param is not None:
        return lambda z: np.where(z > 0, z, float(param) * z)
    return ACTIVATIONS[phi]


def slope(phi: str | Activation, param: float | None = None) -> Activation:
    """phi', exact for a name of SLOPES; central differences (step 1e-6) for a callable."""
    if isinstance(phi, str) and phi in SLOPES:
        if phi == "leaky_relu" and param is not None:
            return lambda z: np.where(z > 0, 1.0, float(param))
        return SLOPES[phi]
    f = activation(phi, param)
    return lambda z: (f(z + 1e-6) - f(z - 1e-6)) / 2e-6


# --- Gaussian expectations by quadrature -------------------------------------------

# Panel edges in xi (standard normal units), mirrored. Beyond |xi| = 12 the
# density is below 1e-31: nothing a float64 sum could see is left out.
_EDGES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0])
NODES_PER_PANEL = 48


def _panels(kinks_xi: list[float]) -> np.ndarray:
    edges = np.concatenate([-_EDGES[::-1], _EDGES[1:], kinks_xi])
    return np.unique(np.clip(edges, -_EDGES[-1], _EDGES[-1]))


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
    panel edge. q = 0 gives f(0).

    >>> round(gaussian_expectation(lambda z: np.maximum(z, 0) ** 2), 15)
    0.5
    """
    q = float(q)
    if not math.isfinite(q) or q < 0:
        raise ValueError(f"q (the variance of z) must be a finite number >= 0, got {q!r}")
    if q == 0:
        return float(np.asarray(f(np.zeros(1)))[0])
    root_q = math.sqrt(q)
    edges = _panels([k / root_q for k in kinks])
    x, w = np.polynomial.legendre.leggauss(nodes_per_panel)
    lo, hi = edges[:-1, None], edges[1:, None]
    xi = (0.5 * (hi - lo) * x + 0.5 * (hi + lo)).ravel()
    weight = (0.5 * (hi - lo) * w).ravel() * np.exp(-0.5 * xi**2) / math.sqrt(2 * math.pi)
    return float(np.sum(weight * f(root_q * xi)))


def mean_square(phi: str | Activation, q: float = 1.0, *, param: float | None = None) -> float:
    """E[phi(z)**2] for z ~ N(0, q): what a layer passes on to the next.

    >>> round(mean_square("relu", 3.0), 12)   # relu keeps half of E[z**2] = q
    1.5
    """
    f = activation(phi, param)
    return gaussian_expectation(lambda z: np.asarray(f(z), dtype=np.float64) ** 2, q)


def single_layer_gain(phi: str | Activation, *, param: float | None = None) -> float:
    """gain = 1 / sqrt(E[phi(z)**2]), z ~ N(0, 1): one layer keeps a unit signal unit-sized.

    >>> round(single_layer_gain("leaky_relu", param=0.2), 12)   # sqrt(2 / (1 + 0.2**2))
    1.386750490563
    """
    return 1.0 / math.sqrt(mean_square(phi, 1.0, param=param))


def next_q(phi: str | Activation, gain: float, q: float, *, param: float | None = None) -> float:
    """One layer of the recursion: q_next = gain**2 * E[phi(z)**2], z ~ N(0, q)."""
    return gain**2 * mean_square(phi, q, param=param)


def mean_square_by_depth(
    phi: str | Activation,
    gain: float,
    n_layers: int,
    *,
    input_mean_square: float = 1.0,
    param: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(q, h) for layers 1..n_layers of a deep stack with std = gain / sqrt(n).

    q[l] is the variance of layer l+1's pre-activation, h[l] = E[phi(z)**2] the
    mean square of its output (what the next layer receives). The input has
    mean square `input_mean_square`, so q[0] = gain**2 * input_mean_square.

    >>> q, h = mean_square_by_depth("relu", 2 ** 0.5, 3)
    >>> h.round(12).tolist()
    [1.0, 1.0, 1.0]
    """
    q = np.empty(n_layers)
    h = np.empty(n_layers)
    x = float(input_mean_square)
    for layer in range(n_layers):
        q[layer] = gain**2 * x
        h[layer] = x = mean_square(phi, q[layer], param=param)
    return q, h


def fixed_point(
    phi: str | Activation, gain: float, *, param: float | None = None, q0: float = 1.0
) -> float:
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

    def excess(q: float) -> float:
        return next_q(phi, gain, q, param=param) / q - 1.0

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


def gain_for_fixed_point(
    phi: str | Activation, q_star: float = 1.0, *, param: float | None = None
) -> float:
    """The gain whose deep stack settles at q_star: sqrt(q_star / E[phi(z)**2]), z ~ N(0, q_star).

    For q_star = 1 this is the single-layer gain.
    """
    return math.sqrt(q_star / mean_square(phi, q_star, param=param))


def gradient_factor(
    phi: str | Activation, gain: float, q: float, *, param: float | None = None
) -> float:
    """chi = gain**2 * E[phi'(z)**2], z ~ N(0, q): how a gradient's mean square scales per layer.

    Backward, a square layer multiplies the gradient by W^T and then phi'(z);
    chi > 1 grows gradients with depth, chi < 1 shrinks them. A kink is a panel
    edge of the quadrature, so phi' is never evaluated on it.
    """
    dphi = slope(phi, param)
    return gain**2 * gaussian_expectation(lambda z: np.asarray(dphi(z), dtype=np.float64) ** 2, q)


# --- fans: which dimension is fan-in ------------------------------------------------

LAYERS = ("linear", "linear_in_out", "conv", "conv_transpose")


def weight_shape(
    layer: str, in_channels: int, out_channels: int, kernel_size: tuple[int, ...] = ()
) -> tuple[int, ...]:
    """The shape a weight is stored with.

    linear: (out, in), torch's nn.Linear; linear_in_out: (in, out), a weight
    used as x @ W (JAX, Keras, many numpy codes); conv: (out, in, *kernel);
    conv_transpose: (in, out, *kernel), torch's ConvTranspose (groups = 1).
    """
    kernel = tuple(kernel_size)
    if layer == "linear":
        return (out_channels, in_channels)
    if layer == "linear_in_out":
        return (in_channels, out_channels)
    if layer == "conv":
        return (out_channels, in_channels, *kernel)
    if layer == "conv_transpose":
        return (in_channels, out_channels, *kernel)
    raise ValueError(f"layer must be one of {', '.join(LAYERS)}; got {layer!r}")


def layer_fans(
    in_channels: int, out_channels: int, kernel_size: tuple[int, ...] = ()
) -> tuple[int, int]:
    """The fans a layer really has (stride 1, groups 1): inputs per output, outputs per input.

    Every output sums in_channels * prod(kernel) terms, whatever the layout.
    """
    receptive = math.prod(kernel_size)
    return in_channels * receptive, out_channels * receptive


def forward(layer: str, weight: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Run one layer on a batch x of shape (batch, in, *spatial); stride 1, no bias.

    conv is a valid cross-correlation; conv_transpose scatters every input
    through the kernel ("full" output, spatial + kernel - 1).
    """
    if layer == "linear":
        return x @ weight.T
    if layer == "linear_in_out":
        return x @ weight
    if layer == "conv_transpose":
        # A stride-1 transposed convolution is a convolution of the zero-padded
        # input with the kernel flipped and its two channel axes exchanged.
        kdims = weight.shape[2:]
        pad = [(0, 0), (0, 0), *[(k - 1, k - 1) for k in kdims]]
        flipped = np.flip(weight, axis=tuple(range(2, weight.ndim))).swapaxes(0, 1)
        return forward("conv", flipped, np.pad(x, pad))
    if layer == "conv":
        kdims = weight.shape[2:]
        axes = tuple(range(2, x.ndim))
        windows = np.lib.stride_tricks.sliding_window_view(x, kdims, axis=axes)
        # windows: (batch, in, *out_spatial, *kernel) -> contract in and kernel
        letters = "ijklmn"[: len(kdims)]
        spatial = "uvw"[: len(kdims)]
        spec = f"bc{spatial}{letters},oc{letters}->bo{spatial}"
        return np.einsum(spec, windows, weight, optimize=True)
    raise ValueError(f"layer must be one of {', '.join(LAYERS)}; got {layer!r}")


def counted_fans(
    layer: str, in_channels: int, out_channels: int, kernel_size: tuple[int, ...] = ()
) -> tuple[int, int]:
    """(fan_in, fan_out) counted by running the layer with every weight equal to 1.

    fan_in: feed all ones; an output away from the border is the number of
    terms in its sum. fan_out: feed a single 1 (first channel, middle
    position); the outputs it reaches are the ones it feeds.

    >>> counted_fans("conv_transpose", 4, 6, (3, 3))    # torch's fans() says (54, 36)
    (36, 54)
    """
    kernel = tuple(kernel_size)
    spatial = tuple(4 * k for k in kernel)
    weight = np.ones(weight_shape(layer, in_channels, out_channels, kernel))
    fan_in = forward(layer, weight, np.ones((1, in_channels, *spatial))).max()
    one_hot = np.zeros((1, in_channels, *spatial))
    one_hot[(0, 0, *[n // 2 for n in spatial])] = 1.0
    fan_out = np.count_nonzero(forward(layer, weight, one_hot))
    return int(round(fan_in)), int(fan_out)
