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
(`tinyinit.physics.mean_field`, which also holds this recursion for every module that asks).

With std = gain / sqrt(n) (the module card's definition of the gain), fan_in * std**2 =
gain**2: the theory takes the gain, `gain_of(width, std)` for any std.

The weights are drawn by the initializers of `tinyinit.core.init.INITIALIZERS`, layer after
layer from one generator, as a model is initialized. Everything here is plain numpy, run anew
on every call; the live explorer's faster way to the same numbers
(kept matrices, rescaled passes, float32 products) is `tinyinit.physics.propagation_fast`, tested
equal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..core.activations import as_activation
from ..core.arguments import KindError, flag, instance, integer, number, real_array, shown
from ..core.distributions import normal
from ..core.init import initializer_row
from ..core.pcg32 import PCG32
from .depth_result import DepthResult, SeedPass, experiment
from .mean_field import DIRECTIONS, Phi, mean_field, slope_mean_square

__all__ = [
    "backward_values",
    "forward_values",
    "gain_of",
    "mean_square",
    "mean_squares_by_layer",
    "per_sample_weight_square",
    "simulate",
    "unit_batch",
    "weight_gradient_theory",
]

# --- measuring ---------------------------------------------------------------------------


def mean_square(a: np.ndarray) -> float:
    """mean(a**2) over every entry: the package's one mean square of an array.

    inf when it is beyond float64 or a holds inf or nan (an overflowed stack), without a warning.

    >>> mean_square(np.array([3.0, -1.0])), mean_square(np.array([1e300, 0.0]))
    (5.0, inf)
    """
    a = real_array("a", a)
    if not a.size:
        raise ValueError("a must hold at least one number, got an empty array")
    return _mean_square(a)


def _mean_square(a: np.ndarray) -> float:
    flat = np.ravel(a)
    with np.errstate(all="ignore"):
        m = float(np.dot(flat, flat)) / flat.size
    return math.inf if math.isnan(m) else m


def per_sample_weight_square(delta: np.ndarray, h: np.ndarray) -> float:
    """Mean square of one sample's weight gradient dloss/dW = delta h^T, averaged over samples.

    delta (n_out, batch), h (n_in, batch). For sample b the entries are delta_i h_j, so
    their mean square is mean(delta_b**2) * mean(h_b**2): no (n_out, n_in) matrix is formed.
    An empty array (no units, or no samples) has no mean: ValueError, as for `mean_square`.

    >>> per_sample_weight_square(np.array([[2.0], [0.0]]), np.array([[1.0], [1.0]]))
    2.0
    """
    delta, h = real_array("delta", delta, ndim=2), real_array("h", h, ndim=2)
    for name, array in (("delta", delta), ("h", h)):
        if not array.size:
            raise ValueError(
                f"{name} must be a real array of 2 dimensions with at least one row (a unit) "
                f"and one column (a sample), got {shown(array)}"
            )
    if delta.shape[1] != h.shape[1]:
        raise ValueError(
            f"h must have as many columns (samples) as delta, {delta.shape[1]}, "
            f"got an array of shape {h.shape}"
        )
    with np.errstate(all="ignore"):
        columns = np.einsum("ij,ij->j", delta, delta) * np.einsum("ij,ij->j", h, h)
        m = float(columns.sum()) / (delta.shape[0] * h.shape[0] * columns.size)
    return math.inf if math.isnan(m) else m


# --- the recursion, forward and backward ---------------------------------------------------


def _batch(name: str, x, width: int) -> np.ndarray:
    x = real_array(name, x, ndim=2)
    if x.shape[0] != width:
        raise ValueError(f"{name} must have {width} rows, one per unit, got shape {x.shape}")
    return x


def forward_values(weights: Iterable, activation: Phi, x: np.ndarray):
    """h_0 = x, z_l = W_l h_{l-1}, h_l = phi(z_l): the lists ([h_0 .. h_L], [z_1 .. z_L]).

    The one depth experiment of the package. weights: W_1 .. W_L in torch's layout, each
    (n_l, n_{l-1}), taken one at a time (a generator may draw each just before it is used,
    as a model is initialized); a layer may also be a function z = layer(h), such as a
    convolution or a layer with a bias. x: (n_0, batch), one column per sample (any array a
    first layer that is a function takes). Overflow is inf and underflow 0, without a warning.

    >>> hs, zs = forward_values([2 * np.eye(2)], "relu", np.array([[1.0], [-1.0]]))
    >>> hs[1].ravel().tolist(), zs[0].ravel().tolist()
    ([2.0, 0.0], [2.0, -2.0])
    """
    act = as_activation(activation, name="activation")
    x = real_array("x", x)
    if x.ndim < 2 or not x.size:
        raise ValueError(
            f"x must be a real array of 2 or more dimensions (units, samples), not empty, "
            f"got {shown(x)}"
        )
    if isinstance(weights, np.ndarray) and weights.ndim == 3:
        weights = list(weights)
    if isinstance(weights, (str, bytes, np.ndarray)) or not isinstance(weights, Iterable):
        raise KindError(
            f"weights must be an iterable of weight matrices (out, in) or layers, "
            f"got {shown(weights)}"
        )
    return _forward(map(_layer, weights), act.phi, x)


def _layer(w):
    """A layer of forward_values, checked as it is taken: a function, or a 2-D weight."""
    return w if callable(w) else real_array("weights", w, ndim=2)


def _given(layer: Callable, h: np.ndarray) -> np.ndarray:
    """layer(h) as a float64 array, if the layer gave numbers (a function of yours may not)."""
    try:
        z = np.asarray(layer(h), dtype=np.float64)
    except (TypeError, ValueError):
        z = None
    if z is None or z.ndim == 0:
        raise KindError(f"weights must give an array of numbers, got {layer!r}, which did not")
    return z


def _forward(layers: Iterable, phi: Callable, x: np.ndarray):
    """forward_values trusting its arguments: layers are 2-D arrays or functions."""
    hs, zs = [x], []
    with np.errstate(all="ignore"):  # overflow is inf, underflow 0: shown, not raised
        for layer in layers:
            if callable(layer):
                zs.append(_given(layer, hs[-1]))
            elif layer.shape[1] != len(hs[-1]):
                name = "x" if len(hs) == 1 else "weights"
                raise ValueError(
                    f"{name} must have as many rows as the weight above takes in, "
                    f"{layer.shape[1]}, got shapes {hs[-1].shape} and {layer.shape}"
                )
            else:
                zs.append(layer @ hs[-1])
            hs.append(phi(zs[-1]))
    return hs, zs


def mean_squares_by_layer(weights: Iterable, activation: Phi, x: np.ndarray) -> np.ndarray:
    """[m_0, m_1, .. m_L], m_l = mean_square(h_l), for forward_values(weights, activation, x).

    >>> mean_squares_by_layer([2 * np.eye(2), -np.eye(2)], "relu", np.ones((2, 2)))
    array([1., 4., 0.])
    """
    hs, _ = forward_values(weights, activation, x)
    return np.array([_mean_square(h) for h in hs])


def backward_values(weights: Sequence[np.ndarray], slopes, g: np.ndarray):
    """From g_L = dloss/dh_L down: ([dloss/dh_0 .. dloss/dh_L], [dloss/dz_1 .. dloss/dz_L]).

    dloss/dz_l = phi'(z_l) * dloss/dh_l,    dloss/dh_{l-1} = W_l^T dloss/dz_l;
    weights as forward_values's, a list; slopes[l - 1] = phi'(z_l), one array of z_l's shape
    per layer; g = dloss/dh_L, (n_L, batch).

    >>> gs, _ = backward_values([2 * np.eye(2)], [np.array([[1.0], [0.0]])], np.ones((2, 1)))
    >>> gs[0].ravel().tolist()
    [2.0, 0.0]
    """
    if isinstance(weights, np.ndarray) and weights.ndim == 3:
        weights = list(weights)
    instance("weights", weights, (list, tuple), "a list of weight matrices (out, in)")
    weights = [real_array("weights", w, ndim=2) for w in weights]
    if not weights or any(a.shape[0] != b.shape[1] for a, b in zip(weights, weights[1:])):
        raise ValueError(
            f"weights must be weight matrices (out, in) that chain, at least one, "
            f"got shapes {[w.shape for w in weights]}"
        )
    g = _batch("g", g, weights[-1].shape[0])
    instance("slopes", slopes, (list, tuple), "a list of arrays, phi'(z_l) for each layer")
    slopes = [real_array("slopes", slope, ndim=2) for slope in slopes]
    shapes = [(w.shape[0], g.shape[1]) for w in weights]
    if [slope.shape for slope in slopes] != shapes:
        raise ValueError(
            f"slopes must hold one array per layer of shapes {shapes}, "
            f"got shapes {[slope.shape for slope in slopes]}"
        )
    return _backward(weights, slopes, g)


def _backward(weights: list[np.ndarray], slopes: list[np.ndarray], g: np.ndarray):
    """backward_values trusting its arguments."""
    gs, deltas = [g], []
    with np.errstate(all="ignore"):
        for w, slope in zip(reversed(weights), reversed(slopes)):
            deltas.insert(0, slope * gs[0])
            gs.insert(0, w.T @ deltas[0])
    return gs, deltas


# --- theory: the mean-field recursion (tinyinit.physics.mean_field) -------------------------------


def gain_of(width: int, std: float) -> float:
    """The gain of weights of std over `width` inputs: std = gain / sqrt(width), so gain = std
    * sqrt(width), and gain**2 = width * std**2 is what Var(z) = gain**2 * E[h**2] multiplies.

    >>> gain_of(256, 2**0.5 / 16), gain_of(64, 0.02)
    (1.4142135623730951, 0.16)
    """
    width = integer("width", width, minimum=1)
    # an int beyond float64 (2**1024) has a square root within it: taken through its log
    root = math.sqrt(width) if width < 2**1000 else math.exp(math.log(width) / 2)
    return number("std", std, minimum=0) * root


def weight_gradient_theory(
    activation: Phi, *, gain: float, n_layers: int, curves=None, from_batch: bool = False
):
    """Theory for per_sample_weight_square of dloss/dW_l, l = 0 .. n_layers (nan at 0).

    dloss/dW_l = delta_l h_{l-1}^T with delta_l = phi'(z_l) * dloss/dh_l, so in
    mean field its mean square is E[phi'(z)**2] * g_l * m_{l-1}, z ~ N(0, q_l).
    curves: (m, g), mean_field's forward and backward curves, when already at hand.
    from_batch: every layer's scale read from the batch, q_l = gain**2 (as mean_field's).

    >>> weight_gradient_theory("relu", gain=2**0.5, n_layers=2)   # Kaiming + ReLU: 1/2
    array([nan, 0.5, 0.5])
    """
    act = as_activation(activation, name="activation")
    gain = number("gain", gain, minimum=0)
    n_layers = integer("n_layers", n_layers, minimum=0)
    from_batch = flag("from_batch", from_batch)
    if curves is None:
        curves = [
            mean_field(act, gain=gain, n_layers=n_layers, direction=d, from_batch=from_batch)
            for d in DIRECTIONS
        ]
    instance("curves", curves, (list, tuple), "(m, g), mean_field's two curves, or None")
    if len(curves) != 2:
        raise ValueError(f"curves must be (m, g), mean_field's two curves, got {len(curves)}")
    m, g = (real_array("curves", c, ndim=1) for c in curves)
    if not len(m) == len(g) == n_layers + 1:
        raise ValueError(f"curves must be two curves of n_layers + 1 = {n_layers + 1} values")
    out = np.full(n_layers + 1, math.nan)
    with np.errstate(all="ignore"):
        for layer in range(1, n_layers + 1):
            slope2 = slope_mean_square(act, gain * gain * (1.0 if from_batch else m[layer - 1]))
            out[layer] = slope2 * g[layer] * m[layer - 1]
    out[1:][np.isnan(out[1:])] = math.inf  # as mean_field: beyond float64
    out.setflags(write=False)
    return out


# --- one experiment: measured over seeds, and theory --------------------------------------


def simulate(
    activation: Phi = "relu",
    initializer: str = "xavier_uniform",
    *,
    gain: float = 1.0,
    std: float = 0.02,
    n_layers: int = 20,
    width: int = 256,
    seeds=3,
    batch: int = 32,
    direction: str = "forward",
    sample_layers: Sequence[int] = (),
    draw: Callable | None = None,
) -> DepthResult:
    """Push a unit batch through `n_layers` layers for each seed; measure and predict.

    seeds: a count n (seeds 0 .. n-1) or the seeds themselves, taken one at a time (a
    progress bar may wrap them, as tqdm wraps a loop). Each seed has its own weights
    (PCG32(seed), stream 54), inputs and upstream gradient (streams 1 and 2). std: the
    weights' std for initializer "normal_init" (the others compute theirs from the gain).
    "lsuv" reads each layer's scale from the batch (the gain is then the std every layer's
    pre-activation is brought to): its weights' std is measured, and its theory holds
    q_l = gain**2 at every layer (`mean_field(..., from_batch=True)`).
    sample_layers: layers whose values to keep in `samples` (for histograms); those beyond
    n_layers are left out. draw: a function draw(shape, rng) -> weights that draws the
    initializer's weights instead of tinyinit (a student's own,
    `tinyinit.course.student_functions.Yours.draw`),
    layer after layer from PCG32(seed) as a model is initialized (for "lsuv", the start it
    rescales); the theory stays the initializer's, so a mistake in draw shows as a gap
    between the two.

    >>> r = simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=5, width=64, seeds=1)
    >>> r.per_seed.shape, round(r.theory_end, 12)    # Kaiming keeps relu's signal
    ((1, 6), 1.0)
    """
    e = experiment(
        activation, initializer, gain=gain, std=std, n_layers=n_layers, width=width,
        seeds=seeds, batch=batch, direction=direction, sample_layers=sample_layers, draw=draw,
    )  # fmt: skip
    row = initializer_row(e.initializer)
    knob = e.gain if row.uses_gain else e.std
    from_batch = row.from_batch is not None
    # The initializer's weights with its knob at 1, times the knob in float64: a std of 1e-300
    # or a gain of 1e30 reaches the stack as it is, where float32 weights would be 0 or inf.
    # A row read from a batch (LSUV) takes each layer's factor from the batch instead.
    draw, scale = (row.initializer(1.0), knob) if e.draw is None else (_checked(e.draw, e.width), 1)
    passes, weight_squares = [], []
    for seed in e.seeds:
        rng = PCG32(seed)  # the stack's weights, layer after layer, as a model is initialized
        with np.errstate(all="ignore"):  # beyond float64: inf, shown as the stack's overflow
            weights = [
                np.multiply(draw((e.width, e.width), rng), 1.0 if from_batch else scale,
                            dtype=np.float64)
                for _ in range(e.n_layers)
            ]  # fmt: skip
        x = _unit_batch(e.width, e.batch, seed, INPUT_STREAM)
        layers = _read_from_batch(weights, row.batch_factor(knob)) if from_batch else weights
        hs, zs = _forward(layers, e.act.phi, x)
        if row.std is None:
            weight_squares += [_mean_square(w) for w in weights]
        if e.direction == "forward":
            passes.append(SeedPass(seed, [_mean_square(h) for h in hs], None, hs))
            continue
        with np.errstate(all="ignore"):
            slopes = [e.act.dphi(z) for z in zs]
        upstream = _unit_batch(e.width, e.batch, seed, GRADIENT_STREAM)
        gs, deltas = _backward(weights, slopes, upstream)
        weight_gradients = [math.nan, *map(per_sample_weight_square, deltas, hs)]
        passes.append(SeedPass(seed, [_mean_square(g) for g in gs], weight_gradients, gs))
    if row.std is None:  # read from the batch: the root mean square of the weights drawn
        std_w = math.sqrt(np.mean(weight_squares))  # every layer (width, width)
    else:
        std_w = row.std(e.width, e.width, knob)
    gain_w = knob if from_batch else std_w * math.sqrt(e.width)  # gain_of
    settings = dict(gain=gain_w, n_layers=e.n_layers, from_batch=from_batch)
    theory = mean_field(e.act, direction=e.direction, **settings)
    weight_theory = None
    if e.direction == "backward":
        weight_theory = weight_gradient_theory(e.act, **settings)
    return e.result(std_w, passes, theory, weight_theory)


def _read_from_batch(weights: list[np.ndarray], factor: Callable) -> list:
    """The layers of a row read from a batch (LSUV): layer l takes its factor from its output
    on the batch that reaches it, z = W_l h_{l-1}, with the layers below already final.

    Each is a function of forward_values, which rescales its weight in place as the batch
    goes up; after the pass, `weights` holds the final ones for the backward pass. With no
    bias, z is linear in W_l: the one factor brings Var(z_l) to the target, where LSUV's
    passes end (tinyinit.networks.lsuv.lsuv makes them, and is tested equal).
    """

    def read(w: np.ndarray) -> Callable:
        def layer(h: np.ndarray) -> np.ndarray:
            np.multiply(w, factor(w @ h), out=w)
            return w @ h

        return layer

    return [read(w) for w in weights]


def _checked(draw: Callable, width: int) -> Callable:
    """draw(shape, rng), whose every weight is checked: a function of yours may return anything."""

    def checked(shape: tuple[int, int], rng: PCG32) -> np.ndarray:
        w = real_array("what draw returned", draw(shape, rng), ndim=2)
        if w.shape != (width, width):
            raise ValueError(f"draw must return weights of shape {(width, width)}, got {w.shape}")
        return w

    return checked


# --- the batch that goes in, and the gradient that comes back ---------------------------------

# Streams other than the weights' 54, so inputs never share numbers with weights.
INPUT_STREAM = 1
GRADIENT_STREAM = 2


def unit_batch(width: int, batch: int, seed: int, stream: int) -> np.ndarray:
    """A (width, batch) standard normal batch scaled to mean square exactly 1.

    Drawn from PCG32(seed, stream); one column per sample. Read-only, so that a
    cache (`tinyinit.physics.propagation_fast.UnitWeights.batch`) can hand the same array out
    again.

    >>> x = unit_batch(4, 3, seed=0, stream=INPUT_STREAM)
    >>> x.shape, round(float(np.mean(x * x)), 12)
    ((4, 3), 1.0)
    """
    width, batch = integer("width", width, minimum=1), integer("batch", batch, minimum=1)
    return _unit_batch(width, batch, seed, stream)


def _unit_batch(width: int, batch: int, seed: int, stream: int) -> np.ndarray:
    x = normal(PCG32(seed, stream), width * batch).reshape(width, batch)
    x /= math.sqrt(np.mean(x * x))
    x.setflags(write=False)
    return x
