"""The mean square per layer through given unit matrices, by the plain recursion: a reference
for the tests of `tinyinit.physics.propagation` and `tinyinit.physics.propagation_fast`, built from
the package's own
steps (forward_values, backward_values, mean_square) and nothing else."""

from __future__ import annotations

import numpy as np

from tinyinit.core.activations import as_activation
from tinyinit.physics.propagation import backward_values, forward_values
from tinyinit.physics.variance import mean_square


def propagate(units, scale, activation, x, upstream=None):
    """Mean square per layer with weights W_l = scale * units[l-1] (float64), h_0 = x.

    Forward: [m_0, ..., m_L]. With `upstream` (dloss/dh_L): (forward, backward), backward =
    [g_0, ..., g_L], the mean squares of dloss/dh_l. Overflow is inf, underflow 0.
    """
    act = as_activation(activation)
    with np.errstate(all="ignore"):
        weights = [scale * np.asarray(unit, np.float64) for unit in units]
    hs, zs = forward_values(weights, act, x)
    if upstream is None:
        return [mean_square(h) for h in hs]
    with np.errstate(all="ignore"):
        gs, _ = backward_values(weights, [act.dphi(z) for z in zs], upstream)
    return [mean_square(h) for h in hs], [mean_square(g) for g in gs]
