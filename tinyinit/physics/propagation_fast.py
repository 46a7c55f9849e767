"""The live explorer's fast way to `tinyinit.physics.propagation.simulate`'s numbers.

`propagation.simulate` is the lesson: it draws every weight and runs every layer
anew on each call, plain float64. A slider move cannot wait for that (drawing
the unit matrices of 3 seeds x 20 layers of width 256 takes about 0.3 s), so the
explorer owns a `UnitWeights` that keeps what a move can reuse, and
`UnitWeights.simulate` gives the same DepthResult (tested equal, to float32's
rounding, in tests/physics/test_propagation_fast.py) with these tricks:

- Kept unit weights (`UnitWeights.get`): the weights of every initializer of
  `tinyinit.core.init.INITIALIZERS` are proportional to its knob (its gain, or its std),
  so each stack is drawn once per (initializer, width, seed), with the knob at 1, and a new
  gain, std or activation only multiplies. Buys the draw: about 0.3 s per move. Least
  recently used stacks go beyond `max_bytes`. A row read from a batch (LSUV) keeps its
  start the same way; each layer's factor is read from its output as the pass goes up.
- Kept input batches (`UnitWeights.batch`): drawn once per (width, batch, seed).
- float32 products (`_product`): the unit weights are float32, as the initializers
  return them, the precision a model's weights have, and multiplied in float32 on the activations
  divided by a power of 2 (exact), the scale applied after in float64. Three
  times faster than float64 on a (256, 256) layer, about 1e-7 relative per
  layer; a stack overflows or underflows where float64 does.
- Kept forward passes (`_Trace`, `forward_memo`): a deeper stack only adds
  layers, a shallower one is a slice, the depth slider costs almost nothing; a
  backward pass starts from the forward pass it needs.
- Kept backward passes (`_Backward`, `backward_memo`).
- Rescaled passes (`_Trace.rescaled`, `_Backward.rescaled`): with a homogeneous
  activation (relu, leaky_relu, linear) a pass at gain c times another is that
  pass times c**l at layer l, with no product; the arrays are scaled only when
  a histogram or a backward pass asks (a forward curve needs only the mean
  squares): a new gain costs 0.9 ms instead of 2.2. Refused where a square is
  near float64's ends (`_RESCALE_SQUARES`, `_out_of_reach`), where it would not be
  exact; the pass is run instead.
- Kept theory (`UnitWeights.theory`): mean_field's quadratures, by inputs.

The frames of the figure are kept by the plot that draws them (`transport.BlitPlot`).
"""

from __future__ import annotations

import inspect
import math
from collections import OrderedDict
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ..core.activations import Activation, as_activation
from ..core.arguments import flag, integer, number, one_of
from ..core.init import INITIALIZERS, initializer_row
from ..core.pcg32 import PCG32
from .depth_result import DepthResult, SeedPass, experiment
from .mean_field import DIRECTIONS, mean_field
from .propagation import (
    GRADIENT_STREAM,
    INPUT_STREAM,
    gain_of,
    mean_square,
    per_sample_weight_square,
    simulate,
    unit_batch,
    weight_gradient_theory,
)

__all__ = ["UnitWeights"]

SIMULATE = inspect.signature(simulate)  # UnitWeights.simulate takes simulate's arguments

# --- multiplying ----------------------------------------------------------------------------


def _product(unit: np.ndarray, h: np.ndarray, scale: float = 1.0, h_square: float | None = None):
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
    >>> _product(unit, np.array([[3.0], [1.0]]) * 2.0**1000) == 2.0**1001   # beyond float32
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


# --- passes kept, and rescaled --------------------------------------------------------


# Where a kept forward pass may be rescaled: mean squares between these, before and after.
_RESCALE_SQUARES = (1e-250, 1e250)


class _Trace:
    """One seed's forward pass, kept so that the next question reuses it.

    hs[l] = h_l (l = 0 .. k), zs[l - 1] = z_l, squares[l] = mean_square(h_l), and
    slopes[l - 1] = phi'(z_l), made when a backward pass first asks for them; act
    is the activation phi. A deeper stack only adds layers (`extend`); a shallower
    one is a slice. A pass made by `rescaled` has its squares at once and its
    arrays (hs, zs) when first asked for: a forward curve needs only the squares.
    """

    def __init__(self, x: np.ndarray, act: Activation, scale: float, factor=None):
        self.act = act
        self.scale = scale
        # A row read from a batch: factor(z) of each layer's output at knob 1, kept per layer
        self.factor, self.factors = factor, []
        self._hs, self._zs, self.slopes = [x], [], []
        self.squares = [mean_square(x)]
        self._source: _Trace | None = None  # set by rescaled: the pass whose arrays to scale

    @property
    def n_layers(self) -> int:
        return len(self.squares) - 1

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays this pass keeps alive: its own, or its source's (x is the cache's).

        Its z_l, h_l and phi'(z_l) are float64 arrays of x's shape (the layers are
        square), so they are counted, not summed: `UnitWeights.trim_memo` asks every
        kept pass at every move, and summing some 60 arrays per pass there tripled the
        time of a rescaled move (0.3 ms to 1 ms). tests/physics/test_propagation_fast.py checks the
        count.
        """
        if self._source is not None:
            return self._source.nbytes
        return (2 * len(self._zs) + len(self.slopes)) * self._hs[0].size * 8

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
                if self.factor is None:
                    z = _product(unit, h, self.scale, self.squares[-1])
                else:  # the layer's factor read from its output on the batch, knob at 1
                    z = _product(unit, h, 1.0, self.squares[-1])
                    self.factors.append(self.factor(z))
                    z *= self.factors[-1]
                h = self.act.phi(z)
                self._zs.append(z)
                self._hs.append(h)
                self.squares.append(mean_square(h))

    def layer_scale(self, layer: int) -> float:
        """What layer `layer` (1-based) multiplies its unit weights by: the knob, or its factor."""
        return self.scale if self.factor is None else self.factors[layer - 1]

    def rescaled(self, scale: float) -> _Trace | None:
        """This pass with weights scale / self.scale = c times as large, without one product.

        For a homogeneous phi only (relu, leaky_relu, linear): with every weight
        times c, z_l and h_l are c**l times what they were, m_l is c**(2 l) times,
        and phi'(z_l) is the same. None (compute it) for any other phi, and unless
        every mean square, before and after, lies in _RESCALE_SQUARES: there no
        entry of h is near float64's ends, where an underflowed or overflowed
        entry would not scale, so the result is the direct pass's up to the
        rounding of c**l. The arrays are scaled when first asked for, from the
        pass that computed them (`_source`), not from a rescaled one.
        """
        if not (self.act.homogeneous and scale > 0 and self.scale > 0) or self.factor:
            return None  # a pass read from a batch: each factor depends on what reached it
        c, lo, hi = scale / self.scale, *_RESCALE_SQUARES
        if _out_of_reach(c, self.n_layers):
            return None
        squares = [_rescaled_square(m, c**layer, lo, hi) for layer, m in enumerate(self.squares)]
        if None in squares:
            return None
        source = self._source or self
        out = _Trace(self._hs[0], self.act, scale)
        out.squares, out._source = squares, source
        out.slopes = list(source.slopes)  # the same arrays: phi'(c z) = phi'(z)
        return out

    def _scale_source(self) -> None:
        """Make hs and zs of a rescaled pass: its source's, times c**l at layer l."""
        source, self._source = self._source, None
        if source is None:
            return
        c = self.scale / source.scale
        with np.errstate(all="ignore"):
            for layer in range(1, self.n_layers + 1):
                factor = c**layer
                self._zs.append(source.zs[layer - 1] * factor)
                self._hs.append(source.hs[layer] * factor)

    def slope(self, layer: int) -> np.ndarray:
        """phi'(z_layer), 1-based, computed once."""
        with np.errstate(all="ignore"):
            while len(self.slopes) < layer:
                self.slopes.append(self.act.dphi(self.zs[len(self.slopes)]))
        return self.slopes[layer - 1]


def _backward_trace(units: Sequence[np.ndarray], trace: _Trace, n_layers: int, g, keep=()):
    """The backward pass over a _Trace's first `n_layers` layers, from dloss/dh_L = g down.

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
            g = _product(units[layer - 1].T, delta, trace.layer_scale(layer))
            gradient[layer - 1] = mean_square(g)
            if layer - 1 in keep:
                kept[layer - 1] = g
    return gradient, weight, kept


def _out_of_reach(c: float, n_layers: int) -> bool:
    """Whether a rescale by c over n_layers layers is refused before any square is looked at.

    The deepest mean square is multiplied by c**(2 n_layers): beyond hi / lo of
    _RESCALE_SQUARES, no square stays inside (and c**n_layers may be beyond
    float64, where a Python power raises). Compared in logs, since hi / lo
    itself (1e500) is beyond float64.
    """
    lo, hi = _RESCALE_SQUARES
    return abs(n_layers * math.log(c)) > 0.5 * (math.log(hi) - math.log(lo))


def _rescaled_square(m: float, factor: float, lo: float, hi: float) -> float | None:
    """m * factor**2 if m and it both lie in (lo, hi), else None (see _Backward.rescaled).

    0 < lo: a square of 0, inf or nan is never rescaled.
    """
    if not lo < m < hi:
        return None
    out = m * factor * factor  # a product beyond float64 is inf (no error), out of the range
    return out if lo < out < hi else None


class _Backward(NamedTuple):
    """One seed's backward pass, _backward_trace's three results, with weights at `scale`."""

    scale: float
    gradient: list[float]
    weight: list[float]
    kept: dict[int, np.ndarray]

    def rescaled(self, scale: float, homogeneous: bool) -> _Backward | None:
        """This pass with weights scale / self.scale = c times as large, without one product.

        For a homogeneous phi (as _Trace.rescaled): dloss/dh_L is the fixed upstream
        gradient, phi' does not change, so dloss/dh_l is c**(L - l) times what it
        was and the weight gradient delta_l h_{l-1}^T c**(L - 1) times. None unless
        every mean square, before and after, lies in _RESCALE_SQUARES.

        >>> back = _Backward(1.0, [1.0, 1.0, 1.0], [math.nan, 1.0, 1.0], {0: np.ones(2)})
        >>> twice = back.rescaled(2.0, homogeneous=True)            # L = 2, c = 2
        >>> twice.gradient, twice.weight[1:], twice.kept[0]
        ([16.0, 4.0, 1.0], [4.0, 4.0], array([4., 4.]))
        >>> back.rescaled(2.0, homogeneous=False) is None, back.rescaled(0.0, True) is None
        (True, True)
        """
        if not (homogeneous and scale > 0 and self.scale > 0):
            return None
        c, n_layers = scale / self.scale, len(self.gradient) - 1
        lo, hi = _RESCALE_SQUARES
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
        return _Backward(scale, gradient, [math.nan, *weight], kept)


def _rescaled_from_memo(cache, memo, key: tuple, rescale):
    """A pass kept in `memo` of the same stack at another scale, rescaled to key's, or None.

    Keys of the forward and the backward memo are (initializer, scale, ...settings): the
    same stack is every key equal to this one but for its scale. Newest first;
    `rescale` returns None where it cannot (see _Trace.rescaled).
    """
    same_stack = (v for k, v in reversed(memo.items()) if k[0] == key[0] and k[2:] == key[2:])
    found = next((r for v in same_stack if (r := rescale(v)) is not None), None)
    cache.rescales += found is not None
    return found


def _backward_result(cache, trace: _Trace, key, width, seed, batch, n_layers, keep) -> _Backward:
    """The cache's _Backward pass over `trace` (_forward_trace's), run, rescaled or kept."""
    memo = cache.backward_memo
    memo_key = (key, trace.scale, trace.act, width, seed, batch, n_layers, tuple(keep))
    back = memo.pop(memo_key, None)
    if back is None:
        homogeneous = trace.act.homogeneous and trace.factor is None
        back = _rescaled_from_memo(
            cache, memo, memo_key, lambda b: b.rescaled(trace.scale, homogeneous)
        )
    if back is None:
        units = cache.get(key, width, seed, n_layers)
        upstream = cache.batch(width, batch, seed, GRADIENT_STREAM)
        back = _Backward(trace.scale, *_backward_trace(units, trace, n_layers, upstream, keep))
    memo[memo_key] = back
    while len(memo) > cache.memo_size:
        memo.popitem(last=False)
    return back


def _forward_trace(
    cache, key, scale, act: Activation, width, seed, batch, n_layers, factor=None
) -> _Trace:
    """The cache's _Trace for these settings, run at least `n_layers` layers deep.

    The memo's keys are (initializer, scale, act, width, seed, batch): the Activation
    itself, the same object for the same name of ACTIVATIONS. factor: the row's
    batch_factor at this scale, for a row read from a batch.
    """
    memo = cache.forward_memo
    memo_key = (key, scale, act, width, seed, batch)
    trace = memo.pop(memo_key, None)
    if trace is None:
        trace = _rescaled_from_memo(cache, memo, memo_key, lambda t: t.rescaled(scale))
    if trace is None:
        trace = _Trace(cache.batch(width, batch, seed, INPUT_STREAM), act, scale, factor)
    if trace.n_layers < n_layers:
        trace.extend(cache.get(key, width, seed, n_layers)[trace.n_layers :])
    memo[memo_key] = trace
    cache.trim_memo()
    return trace


# --- the cache an explorer owns ---------------------------------------------------------


class UnitWeights:
    """A cache of unit weights, keyed by (initializer, width, seed), grown layer by layer.

    Layer l's weight is W_l = scale * C_l, C_l the initializer's (width, width) weights with
    its knob at 1, drawn from PCG32(seed) after layers 1 .. l - 1, as a model is initialized:
    the cache keeps C_l, so a new gain or std reuses it (scale is the knob's value).
    `draws` counts the layers drawn so far: a slider that only rescales
    leaves it unchanged. Least recently used entries are dropped when the cache
    holds more than `max_bytes` (the ones asked for now are always kept).

    It also keeps the unit batches (`batch`) and remembers the last forward
    passes over its matrices (`_forward_trace`, Traces kept in `forward_memo`): a
    deeper stack then only adds layers, a shallower one is a slice, the n_layers
    slider costs almost nothing, and the backward pass starts from the forward
    pass it needs instead of running it again; the last backward passes are kept
    too (`_backward_result`). With a homogeneous activation (relu, leaky_relu,
    linear) a new gain or std rescales a kept pass, forward or backward, instead
    of running it (`_Trace.rescaled`, `_Backward.rescaled`; `rescales` counts them).
    The last theories are kept too (`theory`). An explorer owns one, and asks its
    `simulate` what `propagation.simulate` would give.

    >>> cache = UnitWeights()
    >>> r = cache.simulate("relu", "xavier_normal", n_layers=5, width=16, seeds=1)
    >>> cache.draws                                   # layers 1 .. 5 of seed 0
    5
    >>> r = cache.simulate("relu", "xavier_normal", gain=1.5, n_layers=5, width=16, seeds=1)
    >>> cache.draws, cache.rescales                   # another gain: rescaled, nothing drawn
    (5, 1)
    >>> len(cache.get("xavier_normal", 16, seed=0, n_layers=8)), cache.draws   # deeper: 3 more
    (8, 8)
    """

    def __init__(self, max_bytes: int = 1 << 30, memo_size: int = 64, memo_bytes: int = 1 << 27):
        max_bytes = integer("max_bytes", max_bytes, minimum=0)
        memo_size = integer("memo_size", memo_size, minimum=1)
        memo_bytes = integer("memo_bytes", memo_bytes, minimum=0)
        self.max_bytes = max_bytes
        self.draws = 0
        self.rescales = 0  # passes made by rescaling a kept one (_Trace and _Backward.rescaled)
        # (initializer, width, seed) -> (the generator where the next layer starts, the layers)
        self._layers: OrderedDict[tuple[str, int, int], tuple] = OrderedDict()
        self.memo_size = memo_size
        self.memo_bytes = memo_bytes
        self.forward_memo: OrderedDict = OrderedDict()
        self.backward_memo: OrderedDict = OrderedDict()  # _Backward passes, by settings
        self._batches: OrderedDict[tuple[int, int, int, int], np.ndarray] = OrderedDict()
        self.theory_memo: OrderedDict = OrderedDict()  # theory's answers, by their inputs

    def get(self, initializer: str, width: int, seed: int, n_layers: int) -> list[np.ndarray]:
        """Layers 1 .. n_layers of (initializer, width, seed), its knob at 1, in float32,
        drawing only the missing ones."""
        initializer = one_of("initializer", initializer, INITIALIZERS)
        width, seed = integer("width", width, minimum=1), integer("seed", seed)
        n_layers = integer("n_layers", n_layers, minimum=0)
        key = (initializer, width, seed)
        if key not in self._layers:
            self._layers[key] = (PCG32(seed), [])
        self._layers.move_to_end(key)
        rng, layers = self._layers[key]
        draw = initializer_row(initializer).initializer(1.0)
        while len(layers) < n_layers:
            unit = draw((width, width), rng)
            unit.setflags(write=False)
            layers.append(unit)
            self.draws += 1
        self._evict()
        return layers[:n_layers]

    def batch(self, width: int, batch: int, seed: int, stream: int) -> np.ndarray:
        """unit_batch(width, batch, seed, stream), drawn once (the last memo_size kept)."""
        width, batch = integer("width", width, minimum=1), integer("batch", batch, minimum=1)
        key = (width, batch, integer("seed", seed), integer("stream", stream))
        if key not in self._batches:
            self._batches[key] = unit_batch(width, batch, seed, stream)
        self._batches.move_to_end(key)
        while len(self._batches) > self.memo_size:
            self._batches.popitem(last=False)
        return self._batches[key]

    @property
    def nbytes(self) -> int:
        return sum(m.nbytes for _, layers in self._layers.values() for m in layers)

    def trim_memo(self) -> None:
        """Drop the oldest forward passes beyond memo_size passes or memo_bytes bytes.

        The newest pass (the one just asked for) always stays.
        """
        memo = self.forward_memo
        kept = sum(trace.nbytes for trace in memo.values())
        while len(memo) > 1 and (len(memo) > self.memo_size or kept > self.memo_bytes):
            kept -= memo.pop(next(iter(memo))).nbytes

    def _evict(self) -> None:
        """Drop the oldest stacks of unit matrices beyond max_bytes; the newest always stays."""
        while self.nbytes > self.max_bytes and len(self._layers) > 1:
            del self._layers[next(iter(self._layers))]

    def theory(self, act: Activation, gain: float, n_layers: int, direction: str, from_batch=False):
        """(mean_field(...), weight_gradient_theory(...) backward else None), kept by inputs.

        >>> forward, weights = UnitWeights().theory(as_activation("relu"), 1.0, 2, "forward")
        >>> forward, weights
        (array([1.  , 0.5 , 0.25]), None)
        """
        act, gain = as_activation(act, name="act"), number("gain", gain, minimum=0)
        n_layers = integer("n_layers", n_layers, minimum=0)
        direction = one_of("direction", direction, DIRECTIONS)
        key = (act, gain, n_layers, direction, flag("from_batch", from_batch))
        if key not in self.theory_memo:
            settings = dict(gain=gain, n_layers=n_layers, from_batch=from_batch)
            curve = mean_field(act, direction=direction, **settings)
            weights = None
            if direction == "backward":
                forward, _ = self.theory(act, gain, n_layers, "forward", from_batch)
                weights = weight_gradient_theory(act, curves=(forward, curve), **settings)
            self.theory_memo[key] = curve, weights
        self.theory_memo.move_to_end(key)
        while len(self.theory_memo) > 8 * self.memo_size:
            self.theory_memo.popitem(last=False)
        return self.theory_memo[key]

    def simulate(self, *args, **settings) -> DepthResult:
        """`propagation.simulate`'s result for the same arguments, from what this cache keeps.

        The arguments are simulate's, bound by its signature (so its defaults are the ones
        written there) and checked the same way (`depth_result.experiment`); the numbers agree
        to float32's rounding (see the module docstring).

        >>> cache = UnitWeights()
        >>> r = cache.simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=5, width=64,
        ...                    seeds=1)
        >>> r.per_seed.shape, round(r.theory_end, 12)
        ((1, 6), 1.0)
        """
        arguments = SIMULATE.bind(*args, **settings)  # a TypeError names one it does not take
        arguments.apply_defaults()
        e = experiment(**arguments.arguments)
        if e.draw is not None:
            raise ValueError(
                "draw must be None here: the fast path draws tinyinit's weights "
                "(propagation.simulate draws with yours)"
            )
        row = initializer_row(e.initializer)
        scale = e.gain if row.uses_gain else e.std  # the knob: every weight is scale * unit
        factor = None if row.from_batch is None else row.batch_factor(scale)
        passes, weight_squares = [], []
        for seed in e.seeds:
            key = e.initializer
            trace = _forward_trace(
                self, key, scale, e.act, e.width, seed, e.batch, e.n_layers, factor
            )
            if row.std is None:  # read from the batch: each layer's unit weights times its factor
                units = self.get(key, e.width, seed, e.n_layers)
                weight_squares += [
                    mean_square(unit) * f * f for unit, f in zip(units, trace.factors)
                ]
            if e.direction == "forward":
                values = {k: trace.hs[k] for k in e.sample_layers}
                passes.append(SeedPass(seed, trace.squares[: e.n_layers + 1], None, values))
                continue
            back = _backward_result(
                self, trace, key, e.width, seed, e.batch, e.n_layers, e.sample_layers
            )
            passes.append(SeedPass(seed, back.gradient, back.weight, back.kept))
        if row.std is None:
            std_w = math.sqrt(np.mean(weight_squares))  # as simulate measures it
            gain = scale
        else:
            std_w = row.std(e.width, e.width, scale)
            gain = gain_of(e.width, std_w)
        from_batch = factor is not None
        theory, weight_theory = self.theory(e.act, gain, e.n_layers, e.direction, from_batch)
        return e.result(std_w, passes, theory, weight_theory)
