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

The expectations are Gaussian integrals, computed by quadrature for any activation.

Weights. Every initializer of the explorer is a fixed *unit* matrix times a
scale: a standard normal matrix Z_l times std, or a centered uniform matrix
C_l = 2 U_l - 1 (entries in [-1, 1)) times the bound a. The unit matrices are
drawn once per (kind, width, seed) from tinyinit's PCG32 in the documented order
(`unit_matrix`), cached (`UnitWeights`), and a change of gain or std only
rescales. `layer_weights` gives the weights exactly as the tinyinit initializer
computes them in float64; rounded to float32 they are its output, bit for bit.

Precision. The cache keeps its unit matrices in float32, the precision a model's
weights have in any framework, and the products with them are taken in float32
on the activations rescaled by a power of 2 (`product`): three times faster than
float64 on a (256, 256) layer, about 1e-7 relative per layer, while everything
else (the scale, phi, the mean squares) stays float64, so a stack overflows or
underflows where float64 does.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import NamedTuple

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


def suggested_gain(name: str) -> tuple[float, str]:
    """(the gain Kaiming starts from, where it comes from) for activation `name`.

    torch's calculate_gain(name) where torch has one ("calculate_gain"); for the
    others (gelu, silu) the gain that keeps a unit signal unit-sized after one
    layer, 1/sqrt(E[phi(z)**2]), z ~ N(0, 1), by quadrature ("quadrature",
    `tinyinit.gains.single_layer_gain`). calculate_gain itself keeps torch's
    table and raises for gelu, as torch does.

    >>> suggested_gain("relu")
    (1.4142135623730951, 'calculate_gain')
    >>> gain, source = suggested_gain("gelu"); round(gain, 4), source
    (1.5335, 'quadrature')
    """
    from .gains import single_layer_gain

    activation(name)
    try:
        return calculate_gain(name), "calculate_gain"
    except ValueError:
        return single_layer_gain(name), "quadrature"


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
    passes over its matrices (`forward_trace`, Traces kept in `forward_memo`): a
    deeper stack then only adds layers, a shallower one is a slice, the n_layers
    slider costs almost nothing, and the backward pass starts from the forward
    pass it needs instead of running it again; the last backward passes are kept
    too (`backward_result`). With a homogeneous activation (relu, leaky_relu,
    linear) a new gain or std rescales a kept pass, forward or backward, instead
    of running it (`Trace.rescaled`, `Backward.rescaled`; `rescales` counts them).
    An explorer owns one; `simulate` without a cache makes a fresh one for the call.

    >>> cache = UnitWeights()
    >>> r = simulate("tanh", "xavier_normal", gain=1.0, n_layers=5, width=16, seeds=1, cache=cache)
    >>> cache.draws                                   # layers 1 .. 5 of seed 0
    5
    >>> r = simulate("tanh", "xavier_normal", gain=1.5, n_layers=5, width=16, seeds=1, cache=cache)
    >>> cache.draws                                   # another gain: rescaled, nothing drawn
    5
    >>> len(cache.get("normal", 16, seed=0, n_layers=8)), cache.draws   # deeper: 3 more
    (8, 8)
    """

    def __init__(self, max_bytes: int = 1 << 30, memo_size: int = 64, memo_bytes: int = 1 << 27):
        self.max_bytes = max_bytes
        self.draws = 0
        self.rescales = 0  # passes made by rescaling a kept one (Trace and Backward.rescaled)
        self._layers: OrderedDict[tuple[str, int, int], list[np.ndarray]] = OrderedDict()
        self.memo_size = memo_size
        self.memo_bytes = memo_bytes
        self.forward_memo: OrderedDict = OrderedDict()
        self.backward_memo: OrderedDict = OrderedDict()  # Backward passes, by settings
        self._batches: OrderedDict[tuple[int, int, int, int], np.ndarray] = OrderedDict()

    def get(self, kind: str, width: int, seed: int, n_layers: int) -> list[np.ndarray]:
        """Layers 1 .. n_layers of (kind, width, seed) in float32, drawing only the missing ones."""
        key = (kind, width, seed)
        layers = self._layers.setdefault(key, [])
        self._layers.move_to_end(key)
        while len(layers) < n_layers:
            unit = unit_matrix(kind, width, len(layers) + 1, seed).astype(np.float32)
            unit.setflags(write=False)
            layers.append(unit)
            self.draws += 1
        self._evict()
        return layers[:n_layers]

    def batch(self, width: int, batch: int, seed: int, stream: int) -> np.ndarray:
        """unit_batch(width, batch, seed, stream), drawn once (the last memo_size kept)."""
        key = (width, batch, seed, stream)
        if key not in self._batches:
            self._batches[key] = unit_batch(width, batch, seed, stream)
        self._batches.move_to_end(key)
        while len(self._batches) > self.memo_size:
            self._batches.popitem(last=False)
        return self._batches[key]

    @property
    def nbytes(self) -> int:
        return sum(m.nbytes for layers in self._layers.values() for m in layers)

    def trim_memo(self) -> None:
        """Drop the oldest forward passes beyond memo_size passes or memo_bytes bytes.

        The newest pass (the one just asked for) always stays.
        """
        memo = self.forward_memo
        while len(memo) > 1 and (
            len(memo) > self.memo_size or sum(t.nbytes for t in memo.values()) > self.memo_bytes
        ):
            del memo[next(iter(memo))]

    def _evict(self) -> None:
        """Drop the oldest stacks of unit matrices beyond max_bytes; the newest always stays."""
        while self.nbytes > self.max_bytes and len(self._layers) > 1:
            del self._layers[next(iter(self._layers))]


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


# --- multiplying ----------------------------------------------------------------------------


def product(unit: np.ndarray, h: np.ndarray, scale: float = 1.0, h_square: float | None = None):
    """scale * (unit @ h) in float64; with a float32 `unit`, the product itself is in float32.

    float32 spans 1e-38 .. 3e38 only, so h is first divided by 2**k, a power of 2
    just above its size (exact: it moves the exponent alone), and the float32
    product is multiplied back by scale * 2**k in float64. Every entry keeps
    float32's 24 bits (1e-7 relative) whatever h's scale, and what overflows or
    underflows is what would in float64. h's size is its root mean square when
    the caller knows its mean square `h_square` (no entry is over sqrt(h.size)
    times it), else max|h|. An h of zeros, inf or nan (an overflowed stack), or
    whose squares are beyond float64, is multiplied in float64, as it is.

    >>> unit = np.array([[1.0, -1.0]], dtype=np.float32)
    >>> product(unit, np.array([[3.0], [1.0]]) * 2.0**1000) == 2.0**1001   # beyond float32
    array([[ True]])
    """
    if unit.dtype != np.float32:
        return scale * (unit @ h)
    if h_square is None:
        size = max(float(np.max(h)), -float(np.min(h)))
    else:
        size = math.sqrt(h_square)
    if not 0 < size < math.inf:
        return scale * (unit.astype(np.float64) @ h)
    k = math.frexp(size)[1]  # size < 2**k <= 2 * size
    factor = scale * 2.0**k if abs(k) < 1000 else math.inf
    if not 0 < abs(factor) < math.inf:  # 2**k or scale * 2**k beyond float64: exact steps
        small = np.ldexp(h, -k).astype(np.float32)
        return scale * np.ldexp((unit @ small).astype(np.float64), k)
    small = np.empty(h.shape, np.float32)
    np.multiply(h, 2.0**-k, out=small, casting="same_kind")
    return np.multiply(unit @ small, factor, dtype=np.float64)


# --- measuring ---------------------------------------------------------------------------


def mean_square(a: np.ndarray) -> float:
    """mean(a**2); inf when it is beyond float64 or a holds inf or nan (overflowed).

    As a dot product of a with itself: one pass, no temporary (width, batch) array.
    """
    flat = np.ravel(a)
    with np.errstate(all="ignore"):
        m = float(np.dot(flat, flat)) / flat.size
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
            z = product(unit, h, scale)
            h = act.phi(z)
            out.append(mean_square(h))
            if slopes is not None:
                slopes.append(act.dphi(z))
    return out, h


def backward_pass(units: Sequence[np.ndarray], scale: float, slopes, g) -> list[float]:
    """dloss/dh_{l-1} = W_l^T (phi'(z_l) * dloss/dh_l), from the top layer down.

    Returns the mean squares of dloss/dh_{L-1}, ..., dloss/dh_0.
    """
    out = []
    with np.errstate(all="ignore"):
        for unit, slope in zip(reversed(units), reversed(slopes)):
            g = product(unit.T, slope * g, scale)
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

    Forward: [m_0, ..., m_L], m_l = mean_square(h_l), h_0 = x. With `upstream`
    (the gradient dloss/dh_L) returns (forward, backward), backward =
    [g_0, ..., g_L], g_l the mean square of dloss/dh_l. Overflow gives inf,
    underflow 0; nothing raises and no warning escapes.
    """
    slopes = None if upstream is None else []
    forward, _ = forward_pass(units, scale, activation_name, x, slopes)
    forward = [mean_square(x)] + forward
    if upstream is None:
        return forward
    backward = backward_pass(units, scale, slopes, upstream)
    return forward, backward[::-1] + [mean_square(upstream)]


# Where a kept forward pass may be rescaled: mean squares between these, before and after.
RESCALE_SQUARES = (1e-250, 1e250)


class Trace:
    """One seed's forward pass, kept so that the next question reuses it.

    hs[l] = h_l (l = 0 .. k), zs[l - 1] = z_l, squares[l] = mean_square(h_l), and
    slopes[l - 1] = phi'(z_l), made when a backward pass first asks for them. A
    deeper stack only adds layers (`extend`); a shallower one is a slice. A pass
    made by `rescaled` has its squares at once and its arrays (hs, zs) when first
    asked for: a forward curve needs only the squares.
    """

    def __init__(self, x: np.ndarray, activation_name: str, scale: float):
        self.activation_name = activation_name
        self.act = activation(activation_name)
        self.scale = scale
        self._hs, self._zs, self.slopes = [x], [], []
        self.squares = [mean_square(x)]
        self.nbytes = 0  # of the arrays this pass keeps alive (x is the cache's)
        self._source: Trace | None = None  # set by rescaled: the pass whose arrays to scale

    @property
    def n_layers(self) -> int:
        return len(self.squares) - 1

    @property
    def hs(self) -> list[np.ndarray]:
        self._scale_source()
        return self._hs

    @property
    def zs(self) -> list[np.ndarray]:
        self._scale_source()
        return self._zs

    def extend(self, units: Sequence[np.ndarray]) -> None:
        """Run units (layers n_layers + 1, n_layers + 2, ...) on top of what is there."""
        h = self.hs[-1]
        with np.errstate(all="ignore"):
            for unit in units:
                z = product(unit, h, self.scale, self.squares[-1])
                h = self.act.phi(z)
                self._zs.append(z)
                self._hs.append(h)
                self.squares.append(mean_square(h))
                self.nbytes += z.nbytes + h.nbytes

    def rescaled(self, scale: float) -> Trace | None:
        """This pass with weights scale / self.scale = c times as large, without one product.

        For a homogeneous phi only (relu, leaky_relu, linear): with every weight
        times c, z_l and h_l are c**l times what they were, m_l is c**(2 l) times,
        and phi'(z_l) is the same. None (compute it) for any other phi, and unless
        every mean square, before and after, lies in RESCALE_SQUARES: there no
        entry of h is near float64's ends, where an underflowed or overflowed
        entry would not scale, so the result is the direct pass's up to the
        rounding of c**l. The arrays are scaled when first asked for, from the
        pass that computed them (`_source`), not from a rescaled one.
        """
        if not (self.act.homogeneous and scale > 0 and self.scale > 0):
            return None
        c, lo, hi = scale / self.scale, *RESCALE_SQUARES
        if _out_of_reach(c, self.n_layers):
            return None
        squares = [_rescaled_square(m, c**layer, lo, hi) for layer, m in enumerate(self.squares)]
        if None in squares:
            return None
        source = self._source or self
        out = Trace(self._hs[0], self.activation_name, scale)
        out.squares, out._source, out.nbytes = squares, source, source.nbytes
        out.slopes = list(source.slopes)  # the same arrays: phi'(c z) = phi'(z)
        return out

    def _scale_source(self) -> None:
        """Make hs and zs of a rescaled pass: its source's, times c**l at layer l."""
        source, self._source = self._source, None
        if source is None:
            return
        c = self.scale / source.scale
        self.nbytes = 0
        with np.errstate(all="ignore"):
            for layer in range(1, self.n_layers + 1):
                factor = c**layer
                self._zs.append(source.zs[layer - 1] * factor)
                self._hs.append(source.hs[layer] * factor)
                self.nbytes += self._zs[-1].nbytes + self._hs[-1].nbytes
        self.nbytes += sum(slope.nbytes for slope in self.slopes)  # shared with the source

    def slope(self, layer: int) -> np.ndarray:
        """phi'(z_layer), 1-based, computed once."""
        with np.errstate(all="ignore"):
            while len(self.slopes) < layer:
                self.slopes.append(self.act.dphi(self.zs[len(self.slopes)]))
                self.nbytes += self.slopes[-1].nbytes
        return self.slopes[layer - 1]


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


def backward_trace(units: Sequence[np.ndarray], trace: Trace, n_layers: int, g, keep=()):
    """The backward pass over a Trace's first `n_layers` layers, from dloss/dh_L = g down.

    Returns (gradient, weight, kept): gradient[l] = mean square of dloss/dh_l for
    l = 0 .. n_layers; weight[l] = per_sample_weight_square of dloss/dW_l (nan at
    l = 0, which has no weights); kept = {l: dloss/dh_l} for the layers in `keep`.
    """
    gradient = [0.0] * n_layers + [mean_square(g)]
    weight = [math.nan] * (n_layers + 1)
    kept = {n_layers: g} if n_layers in keep else {}
    with np.errstate(all="ignore"):
        for layer in range(n_layers, 0, -1):
            delta = trace.slope(layer) * g  # dloss/dz_layer
            weight[layer] = per_sample_weight_square(delta, trace.hs[layer - 1])
            g = product(units[layer - 1].T, delta, trace.scale)
            gradient[layer - 1] = mean_square(g)
            if layer - 1 in keep:
                kept[layer - 1] = g
    return gradient, weight, kept


def _out_of_reach(c: float, n_layers: int) -> bool:
    """Whether a rescale by c over n_layers layers is refused before any square is looked at.

    The deepest mean square is multiplied by c**(2 n_layers): beyond hi / lo of
    RESCALE_SQUARES, no square stays inside (and c**n_layers may be beyond
    float64, where a Python power raises). Compared in logs, since hi / lo
    itself (1e500) is beyond float64.
    """
    lo, hi = RESCALE_SQUARES
    return abs(n_layers * math.log(c)) > 0.5 * (math.log(hi) - math.log(lo))


def _rescaled_square(m: float, factor: float, lo: float, hi: float) -> float | None:
    """m * factor**2 if m and it both lie in (lo, hi), else None (see Backward.rescaled).

    0 < lo: a square of 0, inf or nan is never rescaled.
    """
    if not lo < m < hi:
        return None
    out = m * factor * factor  # a product beyond float64 is inf (no error), out of the range
    return out if lo < out < hi else None


class Backward(NamedTuple):
    """One seed's backward pass, backward_trace's three results, with weights at `scale`."""

    scale: float
    gradient: list[float]
    weight: list[float]
    kept: dict[int, np.ndarray]

    def rescaled(self, scale: float, homogeneous: bool) -> Backward | None:
        """This pass with weights scale / self.scale = c times as large, without one product.

        For a homogeneous phi (as Trace.rescaled): dloss/dh_L is the fixed upstream
        gradient, phi' does not change, so dloss/dh_l is c**(L - l) times what it
        was and the weight gradient delta_l h_{l-1}^T c**(L - 1) times. None unless
        every mean square, before and after, lies in RESCALE_SQUARES.

        >>> back = Backward(1.0, [1.0, 1.0, 1.0], [math.nan, 1.0, 1.0], {0: np.ones(2)})
        >>> twice = back.rescaled(2.0, homogeneous=True)            # L = 2, c = 2
        >>> twice.gradient, twice.weight[1:], twice.kept[0]
        ([16.0, 4.0, 1.0], [4.0, 4.0], array([4., 4.]))
        >>> back.rescaled(2.0, homogeneous=False) is None, back.rescaled(0.0, True) is None
        (True, True)
        """
        if not (homogeneous and scale > 0 and self.scale > 0):
            return None
        c, n_layers = scale / self.scale, len(self.gradient) - 1
        lo, hi = RESCALE_SQUARES
        if _out_of_reach(c, n_layers):
            return None
        gradient = [
            _rescaled_square(m, c ** (n_layers - l), lo, hi) for l, m in enumerate(self.gradient)
        ]
        weight = [_rescaled_square(m, c ** (n_layers - 1), lo, hi) for m in self.weight[1:]]
        if None in gradient or None in weight:
            return None
        with np.errstate(all="ignore"):
            kept = {layer: g * c ** (n_layers - layer) for layer, g in self.kept.items()}
        return Backward(scale, gradient, [math.nan, *weight], kept)


def _rescaled_from_memo(cache, memo, key: tuple, rescale):
    """A pass kept in `memo` of the same stack at another scale, rescaled to key's, or None.

    Keys of the forward and the backward memo are (kind, scale, ...settings): the
    same stack is every key equal to this one but for its scale. Newest first;
    `rescale` returns None where it cannot (see Trace.rescaled).
    """
    same_stack = (v for k, v in reversed(memo.items()) if k[0] == key[0] and k[2:] == key[2:])
    found = next((r for v in same_stack if (r := rescale(v)) is not None), None)
    cache.rescales += found is not None
    return found


def backward_result(cache, trace: Trace, kind, width, seed, batch, n_layers, keep) -> Backward:
    """The cache's Backward pass over `trace` (forward_trace's), run, rescaled or kept."""
    memo = cache.backward_memo
    key = (kind, trace.scale, trace.activation_name, width, seed, batch, n_layers, tuple(keep))
    back = memo.pop(key, None)
    if back is None:
        homogeneous = trace.act.homogeneous
        back = _rescaled_from_memo(cache, memo, key, lambda b: b.rescaled(trace.scale, homogeneous))
    if back is None:
        units = cache.get(kind, width, seed, n_layers)
        upstream = cache.batch(width, batch, seed, GRADIENT_STREAM)
        back = Backward(trace.scale, *backward_trace(units, trace, n_layers, upstream, keep))
    memo[key] = back
    while len(memo) > cache.memo_size:
        memo.popitem(last=False)
    return back


def forward_trace(cache, kind, scale, activation_name, width, seed, batch, n_layers) -> Trace:
    """The cache's Trace for these settings, run at least `n_layers` layers deep."""
    memo = cache.forward_memo
    key = (kind, scale, activation_name, width, seed, batch)
    trace = memo.pop(key, None)
    if trace is None:
        trace = _rescaled_from_memo(cache, memo, key, lambda t: t.rescaled(scale))
    if trace is None:
        trace = Trace(cache.batch(width, batch, seed, INPUT_STREAM), activation_name, scale)
    if trace.n_layers < n_layers:
        trace.extend(cache.get(kind, width, seed, n_layers)[trace.n_layers :])
    memo[key] = trace
    cache.trim_memo()
    return trace


# --- theory: the mean-field recursion (Gaussian integrals from tinyinit.gaussian) ----------


@lru_cache(maxsize=512)
def _mean_field(activation_name: str, fan_var: float, n_layers: int, direction: str):
    m = [1.0]  # the input's mean square
    q = [math.nan]  # layer 0 has no pre-activation
    with np.errstate(all="ignore"):  # overflow is inf, and stays inf
        for _ in range(n_layers):
            q.append(fan_var * m[-1])
            m_l = activation_mean_square(activation_name, q[-1])
            # inf * 0 inside phi (gelu at -inf) is nan: the stack has overflowed
            m.append(math.inf if math.isnan(m_l) else m_l)
    if direction == "forward":
        out = np.array(m)
    else:
        g = [1.0]  # the upstream gradient's mean square at layer n_layers
        with np.errstate(all="ignore"):
            for layer in range(n_layers, 0, -1):
                g.append(fan_var * slope_mean_square(activation_name, q[layer]) * g[-1])
        out = np.array(g[::-1])
    out[np.isnan(out)] = math.inf
    out.setflags(write=False)
    return out


@lru_cache(maxsize=512)
def _weight_gradient_theory(activation_name: str, fan_var: float, n_layers: int):
    m = _mean_field(activation_name, fan_var, n_layers, "forward")
    g = _mean_field(activation_name, fan_var, n_layers, "backward")
    out = np.full(n_layers + 1, math.nan)
    with np.errstate(all="ignore"):
        for layer in range(1, n_layers + 1):
            slope2 = slope_mean_square(activation_name, fan_var * m[layer - 1])
            out[layer] = slope2 * g[layer] * m[layer - 1]
    out[1:][np.isnan(out[1:])] = math.inf  # as mean_field: beyond float64
    out.setflags(write=False)
    return out


def weight_gradient_theory(activation_name: str, fan_var: float, n_layers: int) -> np.ndarray:
    """Theory for per_sample_weight_square of dloss/dW_l, l = 0 .. n_layers (nan at 0).

    dloss/dW_l = delta_l h_{l-1}^T with delta_l = phi'(z_l) * dloss/dh_l, so in
    mean field its mean square is E[phi'(z)**2] * g_l * m_{l-1}, z ~ N(0, q_l).

    >>> weight_gradient_theory("relu", 2.0, 2)           # Kaiming + ReLU: 1/2 everywhere
    array([nan, 0.5, 0.5])
    """
    activation(activation_name)
    return _weight_gradient_theory(activation_name, float(fan_var), int(n_layers))


def mean_field(activation_name: str, fan_var: float, n_layers: int, direction: str = "forward"):
    """Theory for the mean square per layer, l = 0 .. n_layers (float64 array, read-only).

    fan_var = n * std**2 (fan_in forward, fan_out backward: equal for a square stack).
    Forward: m_0 = 1, q_l = fan_var * m_{l-1}, m_l = E[phi(z)**2], z ~ N(0, q_l).
    Backward: g_L = 1, g_{l-1} = fan_var * E[phi'(z)**2] * g_l, z ~ N(0, q_l).
    Cached: a slider that does not change these inputs costs nothing here.

    >>> mean_field("relu", 1.0, 3)                  # Xavier + ReLU halves per layer
    array([1.   , 0.5  , 0.25 , 0.125])
    """
    activation(activation_name)
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'forward' or 'backward', got {direction!r}")
    return _mean_field(activation_name, float(fan_var), int(n_layers), direction)


# --- one experiment: measured over seeds, and theory --------------------------------------

DIRECTIONS = ("forward", "backward")


def _read_only(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class DepthResult:
    """Mean square per layer l = 0 .. n_layers: per seed, over seeds, and in theory.

    m_l = mean(h_l**2) over the batch and the width units, one row per seed:
    per_seed has shape (n_seeds, n_layers + 1), theory (n_layers + 1,) from mean_field;
    inf marks overflow, 0 underflow. Forward, layer 0 is the input (mean square 1);
    backward, layer n_layers is the upstream gradient (mean square 1) and layer 0
    the gradient at the input.

    Backward only: weight_per_seed (n_seeds, n_layers + 1) and weight_theory, the
    mean square of the weight gradient dloss/dW_l per sample (nan at layer 0;
    `per_sample_weight_square`). samples: {layer: the values of h_l forward, of
    dloss/dh_l backward, every seed's batch flattened}, for the layers asked.

    >>> r = simulate("relu", "xavier_uniform", n_layers=3, width=16, seeds=2)
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
    n_layers: int
    seeds: tuple[int, ...]
    batch: int
    direction: str
    per_seed: np.ndarray
    theory: np.ndarray
    weight_per_seed: np.ndarray | None = None
    weight_theory: np.ndarray | None = None
    samples: dict | None = None

    @property
    def layers(self) -> np.ndarray:
        return np.arange(self.n_layers + 1)

    # Over seeds, computed once (a plot, its note and the readout each ask) and read-only.
    @cached_property
    def median(self) -> np.ndarray:
        return _read_only(np.median(self.per_seed, axis=0))

    @cached_property
    def low(self) -> np.ndarray:
        return _read_only(self.per_seed.min(axis=0))

    @cached_property
    def high(self) -> np.ndarray:
        return _read_only(self.per_seed.max(axis=0))

    @property
    def end_layer(self) -> int:
        """The layer the signal arrives at: n_layers going forward, 0 going backward."""
        return self.n_layers if self.direction == "forward" else 0

    @property
    def measured_end(self) -> float:
        return float(self.median[self.end_layer])

    @property
    def theory_end(self) -> float:
        return float(self.theory[self.end_layer])

    def ratio(self, start: int = 1) -> float:
        """Median of the per-seed ratios m_L / m_start (forward)."""
        with np.errstate(all="ignore"):
            return float(np.median(self.per_seed[:, -1] / self.per_seed[:, start]))

    def first_layer(self, values: np.ndarray, where: Callable[[np.ndarray], np.ndarray]):
        """The first layer, in the direction of travel, where `where(values)` holds."""
        order = self.layers if self.direction == "forward" else self.layers[::-1]
        hits = [int(k) for k in order if where(values[k])]
        return hits[0] if hits else None

    @cached_property
    def weight_median(self) -> np.ndarray | None:
        """Median over seeds of the weight gradient's mean square per layer (backward)."""
        if self.weight_per_seed is None:
            return None
        return _read_only(np.median(self.weight_per_seed, axis=0))

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
    n_layers: int = 20,
    width: int = 256,
    seeds: int | Sequence[int] = 3,
    batch: int = 32,
    direction: str = "forward",
    cache: UnitWeights | None = None,
    sample_layers: Sequence[int] = (),
) -> DepthResult:
    """Push a unit batch through `n_layers` layers for each seed; measure and predict.

    seeds: a count n (seeds 0 .. n-1) or the seeds themselves. Each seed has its
    own weights (PCG32(seed), stream 54), inputs and upstream gradient (streams
    1 and 2). cache: where unit matrices, batches and forward passes are kept
    (an explorer passes its own; default: a fresh UnitWeights for this call).
    sample_layers: layers whose values to keep in `samples` (for histograms);
    those beyond n_layers are left out.

    >>> r = simulate("relu", "kaiming_fan_in", gain=2**0.5, n_layers=5, width=64, seeds=1)
    >>> r.per_seed.shape, round(r.theory_end, 12)    # Kaiming keeps relu's signal
    ((1, 6), 1.0)
    """
    seeds = tuple(range(seeds)) if isinstance(seeds, int) else tuple(seeds)
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'forward' or 'backward', got {direction!r}")
    activation_name = activation  # the name; the function of that name is shadowed here
    cache = UnitWeights() if cache is None else cache
    kind, scale = unit_scale(initializer, width, width, gain, std)
    std_w = weight_std(initializer, width, width, gain, std)
    sample_layers = tuple(layer for layer in sample_layers if 0 <= layer <= n_layers)
    rows, weight_rows, kept = [], [], {layer: [] for layer in sample_layers}
    for seed in seeds:
        trace = forward_trace(cache, kind, scale, activation_name, width, seed, batch, n_layers)
        if direction == "forward":
            rows.append(trace.squares[: n_layers + 1])
            for layer in sample_layers:
                kept[layer].append(trace.hs[layer])
            continue
        back = backward_result(cache, trace, kind, width, seed, batch, n_layers, sample_layers)
        rows.append(back.gradient)
        weight_rows.append(back.weight)
        for layer in sample_layers:
            kept[layer].append(back.kept[layer])
    fan_var = width * std_w**2
    theory = mean_field(activation_name, fan_var, n_layers, direction)
    weights = weight_theory = None
    if direction == "backward":
        weights = np.array(weight_rows)
        weight_theory = weight_gradient_theory(activation_name, fan_var, n_layers)
    samples = {layer: np.concatenate([a.ravel() for a in kept[layer]]) for layer in sample_layers}
    return DepthResult(
        activation_name, initializer, float(gain), std_w, width, n_layers, seeds, batch, direction,
        np.array(rows), theory, weights, weight_theory, samples or None,
    )  # fmt: skip
