"""Where torch's gain table comes from: gains computed from the activation itself.

A layer with std = gain / sqrt(n) sends a pre-activation of variance q to

    q_next = gain**2 * E[phi(z)**2],   z ~ N(0, q)        (signal propagation)

so the gain that keeps a unit signal unit-sized after one layer is

    gain = 1 / sqrt(E[phi(z)**2]),     z ~ N(0, 1),

and a deep stack settles where q* = gain**2 * E[phi(sqrt(q*) xi)**2]. Both are
one-dimensional Gaussian integrals: `tinyinit.physics.mean_field` computes them (with
the mean-field map and its fixed point) for the activations of
`tinyinit.core.activations`.

Which dimension of a weight is fan-in, for each layer layout, is
`tinyinit.core.layouts`.

>>> round(single_layer_gain("relu"), 12)
1.414213562373
>>> round(single_layer_gain("tanh"), 4)
1.5925
"""

from __future__ import annotations

import math

from ..core.arguments import number, shown
from .mean_field import Phi, activation_mean_square

__all__ = [
    "gain_for_fixed_point",
    "single_layer_gain",
]

# --- gains from the activation's Gaussian mean square (tinyinit.physics.mean_field) ---------------


def single_layer_gain(phi: Phi, *, param: float | None = None) -> float:
    """gain = 1 / sqrt(E[phi(z)**2]), z ~ N(0, 1): one layer keeps a unit signal unit-sized.

    A phi that is 0 almost everywhere (E[phi(z)**2] = 0) has no such gain: ValueError.

    >>> round(single_layer_gain("leaky_relu", param=0.2), 12)   # sqrt(2 / (1 + 0.2**2))
    1.386750490563
    >>> single_layer_gain(lambda z: 0 * z)
    Traceback (most recent call last):
    ...
    ValueError: phi must be an activation with E[phi(z)**2] > 0 for z ~ N(0, 1) (...), got <fu...>
    """
    return 1.0 / math.sqrt(_mean_square(phi, 1.0, param, "N(0, 1)"))


def gain_for_fixed_point(phi: Phi, q_star: float = 1.0, *, param: float | None = None) -> float:
    """The gain whose deep stack settles at q_star: sqrt(q_star / E[phi(z)**2]), z ~ N(0, q_star).

    For q_star = 1 this is the single-layer gain. A phi that is 0 almost everywhere
    (E[phi(z)**2] = 0) settles nowhere but at 0: ValueError.

    >>> round(gain_for_fixed_point("tanh", 1.0), 4) == round(single_layer_gain("tanh"), 4)
    True
    """
    q_star = number("q_star", q_star, above=0)
    return math.sqrt(q_star / _mean_square(phi, q_star, param, "N(0, q_star)"))


def _mean_square(phi: Phi, q: float, param: float | None, normal: str) -> float:
    """E[phi(z)**2], z ~ N(0, q), refused where it is 0: no gain makes phi's output unit-sized."""
    mean_square = activation_mean_square(phi, q, param=param)
    if mean_square == 0:
        raise ValueError(
            f"phi must be an activation with E[phi(z)**2] > 0 for z ~ {normal} (no gain scales "
            f"a zero output to a unit one), got {shown(phi)}"
        )
    return mean_square
