"""One depth experiment: its settings, checked, and what it returns, the mean square per layer
per seed and in theory (`DepthResult`).

`tinyinit.physics.propagation.simulate` runs the experiment plainly,
`tinyinit.physics.propagation_fast.UnitWeights`
from what it keeps; both check their arguments here (`experiment`) and hand what each seed
measured (`SeedPass`) to the one place that makes a DepthResult of it (`Experiment.result`).

A DepthResult also answers what the plots and readouts ask of it (the median and range over
seeds, the layer where the signal arrives, where it overflows or underflows), each computed
once and read-only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sized
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ..core.activations import Activation, as_activation
from ..core.arguments import (
    KindError,
    function,
    instance,
    integer,
    integers,
    is_integer,
    number,
    one_of,
    real_array,
)
from ..core.init import INITIALIZERS
from .mean_field import DIRECTIONS

__all__ = ["DIRECTIONS", "DepthResult", "Experiment", "SeedPass", "as_result", "experiment"]


def _read_only(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


class SeedPass(NamedTuple):
    """What one seed's network measured: the mean square per layer l = 0 .. n_layers
    (`squares`), backward also the weight gradient's (`weight_squares`, nan at layer 0, else
    None), and the values themselves at the layers asked for (`values`, indexed by layer).

    >>> SeedPass(0, [1.0, 0.5], None, {}).squares
    [1.0, 0.5]
    """

    seed: int
    squares: list[float]
    weight_squares: list[float] | None
    values: dict[int, np.ndarray]


class Experiment(NamedTuple):
    """The settings of one depth experiment, checked (`experiment` makes them).

    act is the activation resolved (an Activation), activation as it was given (a name, or
    your own callable); seeds yields the seeds one at a time, each an integer; draw is None
    or a function draw(shape, rng) that draws the weights instead of tinyinit.

    >>> e = experiment("tanh", "normal_init", gain=1.0, std=0.1, n_layers=2, width=8, seeds=[4, 7],
    ...                batch=2, direction="forward", sample_layers=())
    >>> e.initializer, e.std, tuple(e.seeds)
    ('normal_init', 0.1, (4, 7))
    """

    act: Activation
    activation: str | Callable
    initializer: str
    gain: float
    std: float
    n_layers: int
    width: int
    seeds: Iterable[int]
    batch: int
    direction: str
    sample_layers: tuple[int, ...]
    draw: Callable | None = None

    def result(
        self, weight_std: float, passes: list[SeedPass], theory, weight_theory=None
    ) -> DepthResult:
        """The DepthResult of these settings, from each seed's pass and the theory.

        >>> e = experiment("relu", "normal_init", gain=1.0, std=0.02, n_layers=1, width=4, seeds=1,
        ...                batch=2, direction="forward", sample_layers=(1,))
        >>> p = SeedPass(0, [1.0, 0.5], None, {1: np.array([[1.0], [0.0]])})
        >>> r = e.result(0.02, [p], np.array([1.0, 0.5]))
        >>> r.seeds, r.per_seed, r.samples
        ((0,), array([[1. , 0.5]]), {1: array([1., 0.])})
        """
        if not (isinstance(passes, list) and all(isinstance(p, SeedPass) for p in passes)):
            accepted = "a list of SeedPass, one per seed"  # the refusal, in instance's words
            instance("passes", passes, list, accepted)
            for p in passes:
                instance("passes", p, SeedPass, accepted)
        if not passes:
            raise ValueError("passes must hold one SeedPass per seed, at least one, got none")
        weights = None
        if self.direction == "backward":
            weights = np.array([p.weight_squares for p in passes])
        samples = {
            layer: np.concatenate([p.values[layer].ravel() for p in passes])
            for layer in self.sample_layers
        }
        return DepthResult(
            self.activation, self.initializer, self.gain, weight_std, self.width, self.n_layers,
            tuple(p.seed for p in passes), self.batch, self.direction,
            np.array([p.squares for p in passes]), theory, weights, weight_theory,
            samples or None,
        )  # fmt: skip


def _seeds(seeds) -> Iterable[int]:
    """The seeds to run: 0 .. n-1 for a count n; a sequence's own, checked now; an iterator's
    one at a time, each checked as it is taken (so that a progress bar wrapping them, as tqdm
    wraps a loop, moves as each seed is done)."""
    accepted = "a count >= 1 or the seeds themselves (integers)"
    if is_integer(seeds):
        return range(integer("seeds", seeds, minimum=1))
    if isinstance(seeds, (str, bytes, dict, set)) or not isinstance(seeds, Iterable):
        raise KindError(f"seeds must be {accepted}, got {seeds!r}")
    if isinstance(seeds, Sized):
        taken = integers("seeds", seeds if isinstance(seeds, np.ndarray) else list(seeds))
        if not taken:
            raise ValueError(f"seeds must be {accepted}, got {seeds!r}")
        return taken
    return (integer("seeds", seed) for seed in seeds)


def experiment(
    activation,
    initializer,
    *,
    gain,
    std,
    n_layers,
    width,
    seeds,
    batch,
    direction,
    sample_layers,
    draw=None,
) -> Experiment:
    """simulate's arguments, all of them, checked: an Experiment, or an error naming the argument.

    (The defaults are simulate's, written there once.)

    >>> settings = dict(gain=1.0, std=0.02, n_layers=2, seeds=1, batch=4, direction="forward")
    >>> experiment("relu", "normal_init", width=0, sample_layers=(), **settings)
    Traceback (most recent call last):
    ...
    ValueError: width must be an integer >= 1, got 0
    """
    return Experiment(
        as_activation(activation, name="activation"),
        activation,
        one_of("initializer", initializer, INITIALIZERS),
        number("gain", gain, minimum=0),
        number("std", std, minimum=0),
        integer("n_layers", n_layers, minimum=1),
        integer("width", width, minimum=1),
        _seeds(seeds),
        integer("batch", batch, minimum=1),
        one_of("direction", direction, DIRECTIONS),
        # layers beyond n_layers are left out: a histogram's layers may ask past a short stack
        tuple(k for k in integers("sample_layers", sample_layers, minimum=0) if k <= n_layers),
        None if draw is None else function("draw", draw),
    )


@dataclass(frozen=True)
class DepthResult:
    """Mean square per layer l = 0 .. n_layers: per seed, over seeds, and in theory.

    m_l = mean(h_l**2) over the batch and the width units, one row per seed:
    per_seed has shape (n_seeds, n_layers + 1), theory (n_layers + 1,) from mean_field;
    gain is the initializer's gain as given (unused by "normal_init"), weight_std the std every
    weight was drawn with (the std given, for "normal_init");
    inf marks overflow, 0 underflow. Forward, layer 0 is the input (mean square 1);
    backward, layer n_layers is the upstream gradient (mean square 1) and layer 0
    the gradient at the input.

    Backward only: weight_per_seed (n_seeds, n_layers + 1) and weight_theory, the
    mean square of the weight gradient dloss/dW_l per sample (nan at layer 0;
    `per_sample_weight_square`). samples: {layer: the values of h_l forward, of
    dloss/dh_l backward, every seed's batch flattened}, for the layers asked.

    >>> from tinyinit.physics.propagation import simulate
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
    weight_std: float
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
        """Median of the per-seed ratios m_L / m_start (forward).

        >>> from tinyinit.physics.propagation import simulate
        >>> round(simulate("linear", n_layers=2, width=8, seeds=1).ratio(0), 3)
        0.869
        """
        start = integer("start", start, minimum=0, maximum=self.n_layers)
        with np.errstate(all="ignore"):
            return float(np.median(self.per_seed[:, -1] / self.per_seed[:, start]))

    def first_layer(self, values: np.ndarray, where: Callable[[np.ndarray], np.ndarray]):
        """The first layer, in the direction of travel, where `where(values)` holds.

        values: one number per layer, 0 .. n_layers; where: a test of one of them.

        >>> from tinyinit.physics.propagation import simulate
        >>> r = simulate("relu", n_layers=3, width=8, seeds=1)
        >>> r.first_layer(np.array([1.0, 0.5, 0.0, 0.0]), lambda v: v == 0)
        2
        """
        values = real_array("values", values, ndim=1)
        if len(values) != self.n_layers + 1:
            raise ValueError(
                f"values must hold one number per layer, {self.n_layers + 1}, got {len(values)}"
            )
        where = function("where", where)
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


def as_result(value, name: str = "result") -> DepthResult:
    """value, if it is a DepthResult: the one check of a result handed to a figure, a readout
    or a caption, in one wording.

    >>> as_result(None, name="pinned")
    Traceback (most recent call last):
    ...
    tinyinit.core.arguments.KindError: pinned must be a DepthResult (tinyinit.physics.propagation.simulate's), got None
    """  # noqa: E501
    return instance(
        name, value, DepthResult, "a DepthResult (tinyinit.physics.propagation.simulate's)"
    )
