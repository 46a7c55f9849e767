"""Signal propagation through a deep MLP at initialization: measured and in theory.

The network is a plain stack of L = `n_layers` square layers of `width` units, no
biases:

    h_0 = x,    z_l = W_l h_{l-1},    h_l = phi(z_l),    l = 1 .. L.

The quantity followed through the stack is the **mean square of the activations**,

    m_l = mean over units and samples of h_l**2        (m_0 = E[x**2] = 1),

because that is what the next layer's variance formula needs (module card 2.1:
Var(z) = n_in * std**2 * E[x**2], with E[x**2], not Var(x)). It is the quantity
the card's claims are about: with tanh and gain 5/3 it settles near 0.42, with
gain 1 it drains to about 0.026 after 20 layers; with ReLU, Xavier halves it per
layer (2**-20 of the input after 20 layers, 2**-19 of the first layer's).

Backward, an upstream gradient g_L = dloss/dh_L of mean square 1 flows down,

    dloss/dh_{l-1} = W_l^T (phi'(z_l) * dloss/dh_l),

and the mean square of dloss/dh_l is followed from l = L down to l = 0 (the
gradient with respect to the input).

Theory (mean field): z_l is a sum of many independent terms, so treat it as
Gaussian with variance q_l:

    q_l = fan_in * std**2 * m_{l-1},        m_l = E[phi(z)**2],  z ~ N(0, q_l),
    g_{l-1} = fan_out * std**2 * E[phi'(z)**2] * g_l,            z ~ N(0, q_l).

The expectations are Gaussian integrals, computed by quadrature for any activation
(`tinyinit.gaussian`, which also holds this recursion for every module that asks).

The weights and batches come from `tinyinit.stack`. Everything here is plain float64
numpy, run anew on every call; the live explorer's faster way to the same numbers
(kept matrices, rescaled passes, float32 products) is `tinyinit.fastpath`, tested equal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .activations import Activation, as_activation
from .depth_result import DepthResult, _read_only
from .gaussian import (
    Phi,
    mean_field_backward,
    mean_field_forward,
    slope_mean_square,
)
from .stack import GRADIENT_STREAM, INPUT_STREAM, layer_weights, unit_batch, weight_std
from .variance import mean_square

# --- measuring ---------------------------------------------------------------------------


def per_sample_weight_square(delta: np.ndarray, h: np.ndarray) -> float:
    """Mean square of one sample's weight gradient dloss/dW = delta h^T, averaged over samples.

    For sample b the entries are delta_i h_j, so their mean square is
    mean(delta_b**2) * mean(h_b**2): no (width, width) matrix is formed.

    >>> per_sample_weight_square(np.array([[2.0], [0.0]]), np.array([[1.0], [1.0]]))
    2.0
    """
    with np.errstate(all="ignore"):
        columns = np.einsum("ij,ij->j", delta, delta) * np.einsum("ij,ij->j", h, h)
        m = float(columns.sum()) / (delta.shape[0] * h.shape[0] * columns.size)
    return math.inf if math.isnan(m) else m


# --- the recursion, forward and backward ---------------------------------------------------


def forward_values(weights: Sequence[np.ndarray], act: Activation, x: np.ndarray):
    """h_0 = x, z_l = W_l h_{l-1}, h_l = phi(z_l): the lists ([h_0 .. h_L], [z_1 .. z_L])."""
    hs, zs = [x], []
    with np.errstate(all="ignore"):  # overflow is inf, underflow 0: shown, not raised
        for w in weights:
            zs.append(w @ hs[-1])
            hs.append(act.phi(zs[-1]))
    return hs, zs


def backward_values(weights: Sequence[np.ndarray], slopes, g: np.ndarray):
    """From g_L = dloss/dh_L down: ([dloss/dh_0 .. dloss/dh_L], [dloss/dz_1 .. dloss/dz_L]).

    dloss/dz_l = phi'(z_l) * dloss/dh_l,    dloss/dh_{l-1} = W_l^T dloss/dz_l;
    slopes[l - 1] = phi'(z_l).
    """
    gs, deltas = [g], []
    with np.errstate(all="ignore"):
        for w, slope in zip(reversed(weights), reversed(slopes)):
            deltas.insert(0, slope * gs[0])
            gs.insert(0, w.T @ deltas[0])
    return gs, deltas


# --- theory: the mean-field recursion (tinyinit.gaussian) -----------------------------------

DIRECTIONS = ("forward", "backward")


def fan_var_of(width: int, std: float) -> float:
    """fan_var = n * std**2 for a square layer of n = width inputs: Var(z) = fan_var * E[h**2].

    inf where it is beyond float64 (std**2 would raise OverflowError).

    >>> fan_var_of(256, 2**0.5 / 16), fan_var_of(8, 1e300)
    (2.0000000000000004, inf)
    """
    return width * std * std


def mean_field(activation: Phi, fan_var: float, n_layers: int, direction: str = "forward"):
    """Theory for the mean square per layer, l = 0 .. n_layers (float64 array, read-only).

    fan_var = n * std**2 (fan_in forward, fan_out backward: equal for a square stack).
    Forward: m_0 = 1, q_l = fan_var * m_{l-1}, m_l = E[phi(z)**2], z ~ N(0, q_l).
    Backward: g_L = 1, g_{l-1} = fan_var * E[phi'(z)**2] * g_l, z ~ N(0, q_l).
    Beyond float64 is inf. activation: a name of ACTIVATIONS (or an Activation).

    >>> mean_field("relu", 1.0, 3)                  # Xavier + ReLU halves per layer
    array([1.   , 0.5  , 0.25 , 0.125])
    """
    act = as_activation(activation)
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'forward' or 'backward', got {direction!r}")
    q, m = mean_field_forward(act, fan_var, n_layers)
    out = np.array(m if direction == "forward" else mean_field_backward(act, fan_var, q))
    out[np.isnan(out)] = math.inf  # inf * 0 on the way down: the stack has overflowed
    return _read_only(out)


def weight_gradient_theory(activation: Phi, fan_var: float, n_layers: int, curves=None):
    """Theory for per_sample_weight_square of dloss/dW_l, l = 0 .. n_layers (nan at 0).

    dloss/dW_l = delta_l h_{l-1}^T with delta_l = phi'(z_l) * dloss/dh_l, so in
    mean field its mean square is E[phi'(z)**2] * g_l * m_{l-1}, z ~ N(0, q_l).
    curves: (m, g), mean_field's forward and backward curves, when already at hand.

    >>> weight_gradient_theory("relu", 2.0, 2)           # Kaiming + ReLU: 1/2 everywhere
    array([nan, 0.5, 0.5])
    """
    act, fan_var, n_layers = as_activation(activation), float(fan_var), int(n_layers)
    m, g = curves or [mean_field(act, fan_var, n_layers, d) for d in DIRECTIONS]
    out = np.full(n_layers + 1, math.nan)
    with np.errstate(all="ignore"):
        for layer in range(1, n_layers + 1):
            slope2 = slope_mean_square(act, fan_var * m[layer - 1])
            out[layer] = slope2 * g[layer] * m[layer - 1]
    out[1:][np.isnan(out[1:])] = math.inf  # as mean_field: beyond float64
    return _read_only(out)


# --- one experiment: measured over seeds, and theory --------------------------------------


def simulate(
    activation: str = "relu",
    initializer: str = "xavier_uniform",
    *,
    gain: float = 1.0,
    std: float = 0.02,
    n_layers: int = 20,
    width: int = 256,
    seeds: int | Sequence[int] = 3,
    batch: int = 32,
    direction: str = "forward",
    cache=None,
    sample_layers: Sequence[int] = (),
) -> DepthResult:
    """Push a unit batch through `n_layers` layers for each seed; measure and predict.

    seeds: a count n (seeds 0 .. n-1) or the seeds themselves. Each seed has its
    own weights (PCG32(seed), stream 54), inputs and upstream gradient (streams
    1 and 2). sample_layers: layers whose values to keep in `samples` (for
    histograms); those beyond n_layers are left out. cache: a
    `tinyinit.fastpath.UnitWeights` that keeps what it computed for the next call
    (the explorer's); the numbers are these, to float32's rounding.

    >>> r = simulate("relu", "kaiming_fan_in", gain=2**0.5, n_layers=5, width=64, seeds=1)
    >>> r.per_seed.shape, round(r.theory_end, 12)    # Kaiming keeps relu's signal
    ((1, 6), 1.0)
    """
    seeds = tuple(range(seeds)) if isinstance(seeds, int) else tuple(seeds)
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'forward' or 'backward', got {direction!r}")
    if cache is not None:
        return cache.simulate(
            activation, initializer, gain=gain, std=std, n_layers=n_layers, width=width,
            seeds=seeds, batch=batch, direction=direction, sample_layers=sample_layers,
        )  # fmt: skip
    act = as_activation(activation)
    std_w = weight_std(initializer, width, width, gain, std)
    sample_layers = tuple(layer for layer in sample_layers if 0 <= layer <= n_layers)
    rows, weight_rows, kept = [], [], {layer: [] for layer in sample_layers}
    for seed in seeds:
        layers = range(1, n_layers + 1)
        weights = [layer_weights(initializer, width, k, seed, gain, std) for k in layers]
        hs, zs = forward_values(weights, act, unit_batch(width, batch, seed, INPUT_STREAM))
        values = hs
        if direction == "backward":
            with np.errstate(all="ignore"):
                slopes = [act.dphi(z) for z in zs]
            upstream = unit_batch(width, batch, seed, GRADIENT_STREAM)
            values, deltas = backward_values(weights, slopes, upstream)
            weight_rows.append([math.nan, *map(per_sample_weight_square, deltas, hs)])
        rows.append([mean_square(v) for v in values])
        for layer in sample_layers:
            kept[layer].append(values[layer])
    fan_var = fan_var_of(width, std_w)
    theory = mean_field(act, fan_var, n_layers, direction)
    weights = weight_theory = None
    if direction == "backward":
        weights = np.array(weight_rows)
        weight_theory = weight_gradient_theory(act, fan_var, n_layers)
    samples = {layer: np.concatenate([a.ravel() for a in kept[layer]]) for layer in sample_layers}
    return DepthResult(
        activation, initializer, float(gain), std_w, width, n_layers, seeds, batch, direction,
        np.array(rows), theory, weights, weight_theory, samples or None,
    )  # fmt: skip
