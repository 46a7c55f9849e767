"""Signal propagation through a deep MLP at initialization: measured and in theory.

The network is a plain stack of `depth` square layers of `width` units, no biases:

    h_0 = x,    z_l = W_l h_{l-1},    h_l = phi(z_l),    l = 1 .. depth.

The quantity followed through the stack is the **mean square of the activations**,

    m_l = mean over units and samples of h_l**2        (m_0 = E[x**2] = 1),

because that is what the next layer's variance formula needs (module card 2.1:
Var(z) = n_in * std**2 * E[x**2], with E[x**2], not Var(x)). It is the quantity
the card's claims are about: with tanh and gain 5/3 it settles near 0.42, with
gain 1 it drains to about 0.026 after 20 layers; with ReLU, Xavier halves it per
layer (2**-20 of the input after 20 layers, 2**-19 of the first layer's).

Backward, an upstream gradient g_depth = dloss/dh_depth of mean square 1 flows down,

    dloss/dh_{l-1} = W_l^T (phi'(z_l) * dloss/dh_l),

and the mean square of dloss/dh_l is followed from l = depth down to l = 0 (the
gradient with respect to the input).

Theory (mean field): z_l is a sum of many independent terms, so treat it as
Gaussian with variance q_l:

    q_l = fan_in * std**2 * m_{l-1},        m_l = E[phi(z)**2],  z ~ N(0, q_l),
    g_{l-1} = fan_out * std**2 * E[phi'(z)**2] * g_l,            z ~ N(0, q_l).

The expectations are Gaussian integrals, computed by quadrature for any activation.

Weights. Every initializer of the explorer is a fixed *unit* matrix times a
scale: a standard normal matrix Z_l times std, or a centered uniform matrix
C_l = 2 U_l - 1 (entries in [-1, 1)) times the bound a. The unit matrices are
drawn once per (kind, width, seed) from tinyinit's PCG32 in the documented order
(`unit_matrix`), cached (`UnitWeights`), and a change of gain or std only
rescales. `layer_weights` gives the weights exactly as the tinyinit initializer
computes them in float64; rounded to float32 they are its output, bit for bit.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .activations import activation
from .distributions import normal, uniforms
from .gaussian import activation_mean_square, slope_mean_square
from .init import calculate_gain, kaiming_std, xavier_bound, xavier_std
from .pcg32 import PCG32

# --- activations: the package's table, and torch's gain where it has one ----------------


def default_gain(name: str) -> float:
    """calculate_gain(name) for activations torch knows, 1 for the others."""
    try:
        return calculate_gain(name)
    except ValueError:
        return 1.0


# --- initializers as (kind of unit matrix, scale) -------------------------------------

INITIALIZERS = {
    "xavier_uniform": "Xavier uniform",
    "xavier_normal": "Xavier normal",
    "kaiming_fan_in": "Kaiming normal, fan_in",
    "kaiming_fan_out": "Kaiming normal, fan_out",
    "normal": "normal with std",
}


def weight_std(initializer: str, fan_in: int, fan_out: int, gain: float = 1.0, std: float = 0.02):
    """The standard deviation of every weight, the one number that matters.

    xavier_*:          std = gain * sqrt(2 / (fan_in + fan_out))
    kaiming_fan_in:    std = gain / sqrt(fan_in)
    kaiming_fan_out:   std = gain / sqrt(fan_out)
    normal:            std = std   (gain is not used)

    >>> weight_std("kaiming_fan_in", 256, 256, gain=2**0.5)
    0.08838834764831845
    """
    if initializer in ("xavier_uniform", "xavier_normal"):
        return xavier_std(fan_in, fan_out, gain)
    if initializer == "kaiming_fan_in":
        return kaiming_std(fan_in, gain)
    if initializer == "kaiming_fan_out":
        return kaiming_std(fan_out, gain)
    if initializer == "normal":
        return float(std)
    raise ValueError(f"initializer must be one of {', '.join(INITIALIZERS)}; got {initializer!r}")


def unit_scale(initializer: str, fan_in: int, fan_out: int, gain: float = 1.0, std: float = 0.02):
    """(kind, scale): the weight is scale times a unit matrix of that kind.

    "uniform": W = a * (2U - 1), a = sqrt(3) * std, the bound of U(-a, a);
    "normal":  W = std * Z, Z standard normal.

    >>> unit_scale("xavier_uniform", 3, 4)       # the card's bound sqrt(6/7)
    ('uniform', 0.9258200997725514)
    """
    if initializer == "xavier_uniform":
        # As xavier_uniform computes it, so the bound agrees to the last bit.
        return "uniform", xavier_bound(fan_in, fan_out, gain)
    return "normal", weight_std(initializer, fan_in, fan_out, gain, std)


# --- unit matrices: drawn once, in the documented order --------------------------------

KINDS = ("uniform", "normal")


def words_per_layer(kind: str, width: int) -> int:
    """PCG32 words one (width, width) layer takes: 2 per uniform.

    A uniform layer draws width**2 uniforms; a normal layer draws ceil(width**2 / 2)
    Box-Muller pairs, one uniform more when width**2 is odd.
    """
    n = width * width
    return 2 * n if kind == "uniform" else 4 * ((n + 1) // 2)


def unit_matrix(kind: str, width: int, layer: int, seed: int) -> np.ndarray:
    """Layer `layer` (1-based) of seed `seed`: C = 2U - 1 or Z, float64 (width, width).

    The documented sequence: the stack is initialized layer after layer from one
    generator rng = PCG32(seed), each layer with one initializer call of shape
    (width, width), as a model would be. So layer l starts after l - 1 layers'
    worth of draws; jump-ahead gets there without drawing them. Row-major: row i
    holds the weights of output unit i (torch's (out, in) layout).
    """
    rng = PCG32(seed).advance((layer - 1) * words_per_layer(kind, width))
    n = width * width
    if kind == "uniform":
        # 2u - 1 is exact in float64 (u has 53 bits, a multiple of 2**-53 in [0, 1)).
        return (2.0 * uniforms(rng, n) - 1.0).reshape(width, width)
    if kind == "normal":
        return normal(rng, n).reshape(width, width)
    raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")


def layer_weights(
    initializer: str, width: int, layer: int, seed: int, gain: float = 1.0, std: float = 0.02
) -> np.ndarray:
    """Layer `layer`'s float64 weights, as the tinyinit initializer computes them.

    Rounded to float32 this is, bit for bit, what the initializer returns for
    that layer when the stack is built from PCG32(seed) in order, e.g. for
    xavier_uniform: -a + 2a * u (spec section 4); for the normal ones std * z.

    >>> from tinyinit import PCG32, xavier_uniform
    >>> w = layer_weights("xavier_uniform", 4, 1, seed=0)
    >>> bool((w.astype("float32") == xavier_uniform((4, 4), 1.0, PCG32(0))).all())
    True
    """
    kind, scale = unit_scale(initializer, width, width, gain, std)
    unit = unit_matrix(kind, width, layer, seed)
    if kind == "uniform":
        u = (unit + 1.0) / 2.0  # exact: back to the uniforms themselves
        return -scale + 2.0 * scale * u
    return scale * unit


class UnitWeights:
    """A cache of unit matrices, keyed by (kind, width, seed), grown layer by layer.

    Layer l's weight is W_l = scale * C_l, C_l = unit_matrix(kind, width, l, seed)
    of shape (width, width): the cache keeps C_l, so a new gain or std reuses it.
    `draws` counts the unit matrices drawn so far: a slider that only rescales
    leaves it unchanged. Least recently used entries are dropped when the cache
    holds more than `max_bytes` (the ones asked for now are always kept).

    It also keeps the unit batches (`batch`) and remembers the last forward
    passes over its matrices (`forward_mean_squares`, kept in `forward_memo`):
    a deeper stack then only adds layers, a shallower one is a slice, and the
    depth slider costs almost nothing. An explorer owns one; `simulate` without
    a cache makes a fresh one for the call.

    >>> cache = UnitWeights()
    >>> r = simulate("tanh", "xavier_normal", gain=1.0, depth=5, width=16, seeds=1, cache=cache)
    >>> cache.draws                                   # layers 1 .. 5 of seed 0
    5
    >>> r = simulate("tanh", "xavier_normal", gain=1.5, depth=5, width=16, seeds=1, cache=cache)
    >>> cache.draws                                   # another gain: rescaled, nothing drawn
    5
    >>> len(cache.get("normal", 16, seed=0, depth=8)), cache.draws   # deeper: 3 more
    (8, 8)
    """

    def __init__(self, max_bytes: int = 1 << 30, memo_size: int = 64):
        self.max_bytes = max_bytes
        self.draws = 0
        self._layers: OrderedDict[tuple[str, int, int], list[np.ndarray]] = OrderedDict()
        self.memo_size = memo_size
        self.forward_memo: OrderedDict = OrderedDict()
        self._batches: OrderedDict[tuple[int, int, int, int], np.ndarray] = OrderedDict()

    def get(self, kind: str, width: int, seed: int, depth: int) -> list[np.ndarray]:
        """Layers 1 .. depth of (kind, width, seed), drawing only the missing ones."""
        key = (kind, width, seed)
        layers = self._layers.setdefault(key, [])
        self._layers.move_to_end(key)
        while len(layers) < depth:
            layers.append(unit_matrix(kind, width, len(layers) + 1, seed))
            self.draws += 1
        self._evict(keep=key)
        return layers[:depth]

    def batch(self, width: int, batch: int, seed: int, stream: int) -> np.ndarray:
        """unit_batch(width, batch, seed, stream), drawn once (the last memo_size kept)."""
        key = (width, batch, seed, stream)
        if key not in self._batches:
            self._batches[key] = unit_batch(width, batch, seed, stream)
        self._batches.move_to_end(key)
        while len(self._batches) > self.memo_size:
            self._batches.popitem(last=False)
        return self._batches[key]

    def forward_mean_squares(self, kind, scale, activation_name, width, seed, batch, depth):
        """Forward mean squares 0 .. depth, continuing the last pass with these settings."""
        memo = self.forward_memo
        x = self.batch(width, batch, seed, INPUT_STREAM)
        key = (kind, scale, activation_name, width, seed, batch)
        squares, h = memo.pop(key, None) or ([mean_square(x)], x)
        if len(squares) <= depth:
            units = self.get(kind, width, seed, depth)[len(squares) - 1 :]
            more, h = forward_pass(units, scale, activation_name, h)
            squares = squares + more
        memo[key] = (squares, h)
        while len(memo) > self.memo_size:
            memo.popitem(last=False)
        return squares[: depth + 1]

    @property
    def nbytes(self) -> int:
        return sum(m.nbytes for layers in self._layers.values() for m in layers)

    def _evict(self, keep) -> None:
        while self.nbytes > self.max_bytes and len(self._layers) > 1:
            oldest = next(iter(self._layers))
            if oldest == keep:
                break
            del self._layers[oldest]


# --- the batch that goes in, and the gradient that comes back ------------------------

# Streams other than the weights' 54, so inputs never share numbers with weights.
INPUT_STREAM = 1
GRADIENT_STREAM = 2


def unit_batch(width: int, batch: int, seed: int, stream: int) -> np.ndarray:
    """A (width, batch) standard normal batch scaled to mean square exactly 1.

    Drawn from PCG32(seed, stream); one column per sample. Read-only, so that a
    cache (UnitWeights.batch) can hand the same array out again.
    """
    x = normal(PCG32(seed, stream), width * batch).reshape(width, batch)
    x /= math.sqrt(np.mean(x * x))
    x.setflags(write=False)
    return x


# --- measuring ---------------------------------------------------------------------------


def mean_square(a: np.ndarray) -> float:
    """mean(a**2); inf when it is beyond float64 or a holds inf or nan (overflowed)."""
    with np.errstate(all="ignore"):
        m = float(np.mean(a * a))
    return math.inf if math.isnan(m) else m


def forward_pass(units: Sequence[np.ndarray], scale: float, activation_name: str, h, slopes=None):
    """h through the layers W_l = scale * units[l-1]: ([mean_square(h_l) for l >= 1], last h).

    z_l = scale * (unit_l @ h_{l-1}), h_l = phi(z_l). Scaling the product instead
    of the matrix is the same number in exact arithmetic and costs (width, batch)
    multiplications instead of (width, width). If `slopes` is a list, phi'(z_l)
    is appended to it for the backward pass.
    """
    act = activation(activation_name)
    out = []
    with np.errstate(all="ignore"):
        for unit in units:
            z = scale * (unit @ h)
            h = act.phi(z)
            out.append(mean_square(h))
            if slopes is not None:
                slopes.append(act.dphi(z))
    return out, h


def backward_pass(units: Sequence[np.ndarray], scale: float, slopes, g) -> list[float]:
    """dloss/dh_{l-1} = W_l^T (phi'(z_l) * dloss/dh_l), from the top layer down.

    Returns the mean squares of dloss/dh_{depth-1}, ..., dloss/dh_0.
    """
    out = []
    with np.errstate(all="ignore"):
        for unit, slope in zip(reversed(units), reversed(slopes)):
            g = scale * (unit.T @ (slope * g))
            out.append(mean_square(g))
    return out


def propagate(
    units: Sequence[np.ndarray],
    scale: float,
    activation_name: str,
    x: np.ndarray,
    upstream: np.ndarray | None = None,
):
    """Mean square per layer through the stack with weights W_l = scale * units[l-1].

    Forward: [m_0, ..., m_depth], m_l = mean_square(h_l), h_0 = x. With `upstream`
    (the gradient dloss/dh_depth) returns (forward, backward), backward =
    [g_0, ..., g_depth], g_l the mean square of dloss/dh_l. Overflow gives inf,
    underflow 0; nothing raises and no warning escapes.
    """
    slopes = None if upstream is None else []
    forward, _ = forward_pass(units, scale, activation_name, x, slopes)
    forward = [mean_square(x)] + forward
    if upstream is None:
        return forward
    backward = backward_pass(units, scale, slopes, upstream)
    return forward, backward[::-1] + [mean_square(upstream)]


# --- theory: the mean-field recursion (Gaussian integrals from tinyinit.gaussian) ----------


@lru_cache(maxsize=512)
def _mean_field(activation_name: str, fan_var: float, depth: int, direction: str):
    m = [1.0]  # the input's mean square
    q = [math.nan]  # layer 0 has no pre-activation
    with np.errstate(all="ignore"):  # overflow is inf, and stays inf
        for _ in range(depth):
            q.append(fan_var * m[-1])
            m_l = activation_mean_square(activation_name, q[-1])
            # inf * 0 inside phi (gelu at -inf) is nan: the stack has overflowed
            m.append(math.inf if math.isnan(m_l) else m_l)
    if direction == "forward":
        out = np.array(m)
    else:
        g = [1.0]  # the upstream gradient's mean square at layer depth
        with np.errstate(all="ignore"):
            for layer in range(depth, 0, -1):
                g.append(fan_var * slope_mean_square(activation_name, q[layer]) * g[-1])
        out = np.array(g[::-1])
    out[np.isnan(out)] = math.inf
    out.setflags(write=False)
    return out


def mean_field(activation_name: str, fan_var: float, depth: int, direction: str = "forward"):
    """Theory for the mean square per layer, l = 0 .. depth (float64 array, read-only).

    fan_var = n * std**2 (fan_in forward, fan_out backward: equal for a square stack).
    Forward: m_0 = 1, q_l = fan_var * m_{l-1}, m_l = E[phi(z)**2], z ~ N(0, q_l).
    Backward: g_depth = 1, g_{l-1} = fan_var * E[phi'(z)**2] * g_l, z ~ N(0, q_l).
    Cached: a slider that does not change these inputs costs nothing here.

    >>> mean_field("relu", 1.0, 3)                  # Xavier + ReLU halves per layer
    array([1.   , 0.5  , 0.25 , 0.125])
    """
    activation(activation_name)
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'forward' or 'backward', got {direction!r}")
    return _mean_field(activation_name, float(fan_var), int(depth), direction)


# --- one experiment: measured over seeds, and theory --------------------------------------

DIRECTIONS = ("forward", "backward")


@dataclass(frozen=True)
class DepthResult:
    """Mean square per layer l = 0 .. depth: per seed, over seeds, and in theory.

    m_l = mean(h_l**2) over the batch and the width units, one row per seed:
    per_seed has shape (n_seeds, depth + 1), theory (depth + 1,) from mean_field;
    inf marks overflow, 0 underflow. Forward, layer 0 is the input (mean square 1);
    backward, layer depth is the upstream gradient (mean square 1) and layer 0
    the gradient at the input.

    >>> r = simulate("relu", "xavier_uniform", depth=3, width=16, seeds=2)
    >>> r.per_seed.shape, r.median.shape
    ((2, 4), (4,))
    >>> r.theory                                      # Xavier + ReLU: m_l = 2**-l
    array([1.   , 0.5  , 0.25 , 0.125])
    >>> r.end_layer, round(r.measured_end, 3), round(r.theory_end, 6)
    (3, 0.155, 0.125)
    """

    activation: str
    initializer: str
    gain: float
    std: float
    width: int
    depth: int
    seeds: tuple[int, ...]
    batch: int
    direction: str
    per_seed: np.ndarray
    theory: np.ndarray

    @property
    def layers(self) -> np.ndarray:
        return np.arange(self.depth + 1)

    @property
    def median(self) -> np.ndarray:
        return np.median(self.per_seed, axis=0)

    @property
    def low(self) -> np.ndarray:
        return self.per_seed.min(axis=0)

    @property
    def high(self) -> np.ndarray:
        return self.per_seed.max(axis=0)

    @property
    def end_layer(self) -> int:
        """The layer the signal arrives at: depth going forward, 0 going backward."""
        return self.depth if self.direction == "forward" else 0

    @property
    def measured_end(self) -> float:
        return float(self.median[self.end_layer])

    @property
    def theory_end(self) -> float:
        return float(self.theory[self.end_layer])

    def ratio(self, start: int = 1) -> float:
        """Median of the per-seed ratios m_depth / m_start (forward)."""
        with np.errstate(all="ignore"):
            return float(np.median(self.per_seed[:, -1] / self.per_seed[:, start]))

    def first_layer(self, values: np.ndarray, where: Callable[[np.ndarray], np.ndarray]):
        """The first layer, in the direction of travel, where `where(values)` holds."""
        order = self.layers if self.direction == "forward" else self.layers[::-1]
        hits = [int(k) for k in order if where(values[k])]
        return hits[0] if hits else None

    @property
    def overflow_from(self):
        """First layer whose measured median is beyond float64 (inf), or None."""
        return self.first_layer(self.median, np.isinf)

    @property
    def underflow_from(self):
        """First layer whose measured median is exactly 0 in float64, or None."""
        return self.first_layer(self.median, lambda v: v == 0)


def simulate(
    activation: str = "relu",
    initializer: str = "xavier_uniform",
    *,
    gain: float = 1.0,
    std: float = 0.02,
    depth: int = 20,
    width: int = 256,
    seeds: int | Sequence[int] = 3,
    batch: int = 32,
    direction: str = "forward",
    cache: UnitWeights | None = None,
) -> DepthResult:
    """Push a unit batch through `depth` layers for each seed; measure and predict.

    seeds: a count n (seeds 0 .. n-1) or the seeds themselves. Each seed has its
    own weights (PCG32(seed), stream 54), inputs and upstream gradient (streams
    1 and 2). cache: where unit matrices, batches and forward passes are kept
    (an explorer passes its own; default: a fresh UnitWeights for this call).

    >>> r = simulate("relu", "kaiming_fan_in", gain=2**0.5, depth=5, width=64, seeds=1)
    >>> r.per_seed.shape, round(r.theory_end, 12)    # Kaiming keeps relu's signal
    ((1, 6), 1.0)
    """
    seeds = tuple(range(seeds)) if isinstance(seeds, int) else tuple(seeds)
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'forward' or 'backward', got {direction!r}")
    cache = UnitWeights() if cache is None else cache
    kind, scale = unit_scale(initializer, width, width, gain, std)
    std_w = weight_std(initializer, width, width, gain, std)
    rows = []
    for seed in seeds:
        if direction == "forward":
            args = (kind, scale, activation, width, seed, batch, depth)
            rows.append(cache.forward_mean_squares(*args))
        else:
            units = cache.get(kind, width, seed, depth)
            x = cache.batch(width, batch, seed, INPUT_STREAM)
            upstream = cache.batch(width, batch, seed, GRADIENT_STREAM)
            rows.append(propagate(units, scale, activation, x, upstream)[1])
    theory = mean_field(activation, width * std_w**2, depth, direction)
    return DepthResult(
        activation, initializer, float(gain), std_w, width, depth, seeds, batch, direction,
        np.array(rows), theory,
    )  # fmt: skip
