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

from ..core.activations import ACTIVATIONS
from ..core.arguments import number, one_of, shown
from ..core.init import NONLINEARITIES, calculate_gain, initializer_row
from .mean_field import Phi, activation_mean_square

__all__ = [
    "gain_for_fixed_point",
    "initial_gain",
    "single_layer_gain",
    "suggested_gain",
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


# --- the gain an initializer starts from -----------------------------------------------------


def suggested_gain(activation: str) -> tuple[float, str]:
    """(the gain Kaiming starts from, where it comes from) for the activation of that name.

    torch's calculate_gain(name) where torch has one ("calculate_gain"); for the
    others (gelu, silu) the gain that keeps a unit signal unit-sized after one
    layer, 1/sqrt(E[phi(z)**2]), z ~ N(0, 1), by quadrature ("quadrature",
    `single_layer_gain`). calculate_gain itself keeps torch's table and raises for gelu, as
    torch does.

    >>> suggested_gain("relu")
    (1.4142135623730951, 'calculate_gain')
    >>> gain, source = suggested_gain("gelu"); round(gain, 4), source
    (1.5335, 'quadrature')
    """
    act = ACTIVATIONS[one_of("activation", activation, ACTIVATIONS)]
    if activation in NONLINEARITIES:
        return calculate_gain(activation), "calculate_gain"
    return single_layer_gain(act), "quadrature"


def initial_gain(initializer: str, activation: str) -> float:
    """The gain an initializer of INITIALIZERS starts from: the activation's (`suggested_gain`)
    for one whose gain follows it, as torch's kaiming_* does, else 1.

    >>> initial_gain("kaiming_normal", "relu"), initial_gain("xavier_normal", "relu")
    (1.4142135623730951, 1.0)
    """
    row = initializer_row(initializer)
    one_of("activation", activation, ACTIVATIONS)
    return suggested_gain(activation)[0] if row.gain_from_activation else 1.0
