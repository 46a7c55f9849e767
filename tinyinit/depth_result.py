"""What `tinyinit.propagation.simulate` returns: the mean square per layer, per seed and in theory.

Also what the plots and readouts ask of it (the median and range over seeds, the
layer where the signal arrives, where it overflows or underflows), each computed
once and read-only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np


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

    >>> from tinyinit.propagation import simulate
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
