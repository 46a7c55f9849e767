"""A practitioner's diagnostics: the numbers read off a network to tell a bad init while it trains.

Three checks, each a small function on arrays a training step already has:

* the **initial loss**: a classifier that knows nothing should give every one of its C
  classes probability 1/C, so its first cross-entropy is -ln(1/C) = ln C (2.303 for ten
  digits). Much more means confident wrong answers, the mark of an output layer too large;
* **per-layer activations and gradients**: their histograms over training steps, and the
  *saturated* fraction of a layer's entries, where phi'(z) < SATURATED_SLOPE = 1 - 0.97**2
  (a tanh beyond |h| = 0.97, a ReLU at 0: no gradient passes), and the *dead* fraction of
  its units, saturated for every example of the batch (their incoming weights never learn);
* the **update-to-data ratio** ||Delta W|| / ||W|| of each layer at each step
  (`tinyinit.networks.training.TrainingRun.update_ratio`), against the usual 10^-3: far below, the
  layer is not learning; far above, its weights are being overwritten.

>>> round(chance_loss(10), 4)
2.3026
>>> slopes = np.array([[0.0, 1.0], [0.0, 0.5]])
>>> saturated_fraction(slopes), dead_fraction(slopes)
(0.5, 0.5)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..core.activations import SATURATED_SLOPE
from ..core.arguments import KindError, integer, real_array, shown

__all__ = [
    "UPDATE_RATIO",
    "chance_loss",
    "dead_fraction",
    "histograms",
    "saturated_fraction",
]

# Karpathy's rule of thumb ("makemore", part 3): log10 of the update-to-data ratio near -3.
UPDATE_RATIO = 1e-3


def chance_loss(n_classes: int) -> float:
    """-ln(1 / n_classes): the cross-entropy of a uniform guess, what an untrained
    classifier with small logits starts at.

    >>> chance_loss(2) == math.log(2)
    True
    """
    return -math.log(1.0 / integer("n_classes", n_classes, minimum=2))


def saturated_fraction(slopes: np.ndarray) -> float:
    """The fraction of entries whose slope phi'(z) is below SATURATED_SLOPE (no gradient passes).

    slopes: phi'(z) of one layer, shape (batch, units).

    >>> saturated_fraction(np.array([[0.01, 0.5, 1.0, 0.0]]))
    0.5
    """
    return _fraction(_slopes(slopes) < SATURATED_SLOPE)


def dead_fraction(slopes: np.ndarray) -> float:
    """The fraction of units (columns) saturated for every example (row) of the batch.

    >>> dead_fraction(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    0.3333333333333333
    """
    return _fraction((_slopes(slopes) < SATURATED_SLOPE).all(axis=0))


def _fraction(flags: np.ndarray) -> float:
    """The fraction of True entries: their count over the size, exactly as their mean."""
    return float(np.count_nonzero(flags) / flags.size)


def _slopes(slopes) -> np.ndarray:
    return real_array(
        "slopes", slopes, ndim=2, what="a real array of shape (batch, units)", float64=False
    )


def histograms(values: Sequence[np.ndarray], edges: np.ndarray) -> np.ndarray:
    """One histogram per array of values (a layer's activations, or gradients), on shared edges.

    Returns densities, shape (len(values), len(edges) - 1): each row integrates to the
    fraction of that array's finite entries inside the edges (1 when all are). Entries
    outside are left out, so a row that sums short says the range was too narrow.

    >>> histograms([np.array([0.1, 0.2, 0.9]), np.array([5.0])], np.array([0.0, 0.5, 1.0]))
    array([[1.33333333, 0.66666667],
           [0.        , 0.        ]])
    """
    accepted = "an increasing 1-d array of 2 or more finite numbers"
    edges = real_array("edges", edges, finite=True, what=accepted)
    if edges.ndim != 1 or len(edges) < 2 or not (np.diff(edges) > 0).all():
        raise ValueError(f"edges must be {accepted}, got {shown(edges)}")
    if not isinstance(values, (list, tuple)):
        raise KindError(f"values must be a list of arrays, got {shown(values)}")
    rows = []
    for v in values:
        v = real_array("values", v).ravel()
        v = v[np.isfinite(v)]
        counts = np.histogram(v, edges)[0]
        rows.append(counts / (max(len(v), 1) * np.diff(edges)))
    return np.array(rows)
