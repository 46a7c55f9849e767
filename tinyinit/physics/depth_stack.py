"""What the depth stack is made of: its weights and the batches that go through it.

Every initializer of the explorer is a fixed *unit* matrix times a scale: a
standard normal matrix Z_l times std, or a centered uniform matrix C_l = 2 U_l - 1
(entries in [-1, 1)) times the bound a. `SCHEMES` is their table, one row each.
Layer l's unit matrix is drawn from PCG32(seed) in the documented order
(`unit_matrix`), as if the stack were initialized layer after layer;
`layer_weights` gives the weights exactly as the tinyinit initializer computes
them in float64 (rounded to float32 they are its output, bit for bit). The input
batch and the upstream gradient are unit normal batches from other streams of the
same seed (`unit_batch`).

`tinyinit.physics.propagation` pushes batches through these weights;
`tinyinit.physics.propagation_fast`
keeps the unit matrices for the live explorer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.activations import ACTIVATIONS
from ..core.arguments import flag, instance, integer, number, one_of
from ..core.distributions import normal, uniforms
from ..core.init import (
    NONLINEARITIES,
    calculate_gain,
    kaiming_std,
    uniform_bound,
    xavier_bound,
    xavier_std,
)
from ..core.pcg32 import PCG32
from .gains import single_layer_gain

__all__ = [
    "SCHEMES",
    "Scheme",
    "layer_weights",
    "scheme",
    "suggested_gain",
    "unit_batch",
    "unit_matrix",
    "unit_scale",
    "weight_std",
    "words_per_layer",
]

# --- activations: torch's gain where it has one ------------------------------------------


def suggested_gain(activation: str) -> tuple[float, str]:
    """(the gain Kaiming starts from, where it comes from) for the activation of that name.

    torch's calculate_gain(name) where torch has one ("calculate_gain"); for the
    others (gelu, silu) the gain that keeps a unit signal unit-sized after one
    layer, 1/sqrt(E[phi(z)**2]), z ~ N(0, 1), by quadrature ("quadrature",
    `tinyinit.physics.gains.single_layer_gain`). calculate_gain itself keeps torch's
    table and raises for gelu, as torch does.

    >>> suggested_gain("relu")
    (1.4142135623730951, 'calculate_gain')
    >>> gain, source = suggested_gain("gelu"); round(gain, 4), source
    (1.5335, 'quadrature')
    """
    act = ACTIVATIONS[one_of("activation", activation, ACTIVATIONS)]
    if activation in NONLINEARITIES:
        return calculate_gain(activation), "calculate_gain"
    return single_layer_gain(act), "quadrature"


# --- the explorer's initializers: one row each ---------------------------------------------

KINDS = ("uniform", "normal")
XAVIER_FAN = "fan_in+fan_out"
FANS = ("fan_in", "fan_out", XAVIER_FAN, None)


@dataclass(frozen=True)
class Scheme:
    """One initializer of the explorer: a unit matrix of `kind` times a scale.

    key: its name in code and on the command line; label: its name in the dropdown
    and in legends; kind: "uniform" (C = 2U - 1, times the bound a) or "normal"
    (Z, times std); fan: what its std divides by, "fan_in", "fan_out",
    "fan_in+fan_out" (Xavier's) or None (std is set directly, there is no gain);
    gain_from_activation: its gain starts from the activation's (`suggested_gain`),
    as torch's kaiming_* does, else from 1; formula: its std as the explorer's
    readout writes it; title: its name in a figure's title (the label if not given).

    >>> kaiming = SCHEMES["kaiming_fan_in"]
    >>> kaiming.std(256, 128, gain=2**0.5)                 # gain / sqrt(fan_in)
    0.08838834764831845
    >>> kaiming.initial_gain("relu"), SCHEMES["xavier_normal"].initial_gain("relu")
    (1.4142135623730951, 1.0)
    """

    key: str
    label: str
    kind: str
    fan: str | None
    gain_from_activation: bool
    formula: str
    title: str = ""

    def __post_init__(self):
        for name in ("key", "label", "formula", "title"):
            instance(name, getattr(self, name), str, "a str")
        one_of("kind", self.kind, KINDS)
        one_of("fan", self.fan, FANS)
        flag("gain_from_activation", self.gain_from_activation)
        if not self.title:
            object.__setattr__(self, "title", self.label)  # frozen: set once, here

    @property
    def uses_gain(self) -> bool:
        return self.fan is not None

    def std(self, fan_in: int, fan_out: int, gain: float = 1.0, std: float = 0.02) -> float:
        """The standard deviation of every weight, the one number that matters.

        fan_in+fan_out:  std = gain * sqrt(2 / (fan_in + fan_out))    (init.xavier_std)
        fan_in:          std = gain / sqrt(fan_in)                    (init.kaiming_std)
        fan_out:         std = gain / sqrt(fan_out)
        None:            std = std   (gain is not used)
        """
        fan_in, fan_out = (
            integer("fan_in", fan_in, minimum=1),
            integer("fan_out", fan_out, minimum=1),
        )
        gain, std = number("gain", gain, minimum=0), number("std", std, minimum=0)
        if self.fan == XAVIER_FAN:
            return xavier_std(fan_in, fan_out, gain)
        if self.fan == "fan_in":
            return kaiming_std(fan_in, gain)
        if self.fan == "fan_out":
            return kaiming_std(fan_out, gain)
        return float(std)

    def scale(self, fan_in: int, fan_out: int, gain: float = 1.0, std: float = 0.02) -> float:
        """What the unit matrix is multiplied by: std for "normal", the bound a for "uniform".

        a = sqrt(3) * std, the bound of U(-a, a), computed as the initializer of
        tinyinit computes it, so that it agrees to the last bit.
        """
        if self.kind == "normal":
            return self.std(fan_in, fan_out, gain, std)
        if self.fan == XAVIER_FAN:
            return xavier_bound(fan_in, fan_out, gain)
        return uniform_bound(self.std(fan_in, fan_out, gain, std))  # as kaiming_uniform

    def initial_gain(self, activation: str) -> float:
        """The gain this initializer starts from: the activation's for Kaiming, else 1."""
        one_of("activation", activation, ACTIVATIONS)
        return suggested_gain(activation)[0] if self.gain_from_activation else 1.0


# To add an initializer to the explorer, the command line and the figures: add a row.
SCHEMES = {
    row.key: row
    for row in (
        Scheme(
            key="xavier_uniform", label="Xavier uniform", kind="uniform", fan=XAVIER_FAN,
            gain_from_activation=False,
            formula="gain·√(2/(n_in+n_out)), from U(-a, a) with a = √3·std",
        ),
        Scheme(
            key="xavier_normal", label="Xavier normal", kind="normal", fan=XAVIER_FAN,
            gain_from_activation=False, formula="gain·√(2/(n_in+n_out))",
        ),
        Scheme(
            key="kaiming_fan_in", label="Kaiming normal, fan_in", kind="normal", fan="fan_in",
            gain_from_activation=True, formula="gain/√n_in",
        ),
        Scheme(
            key="kaiming_fan_out", label="Kaiming normal, fan_out", kind="normal", fan="fan_out",
            gain_from_activation=True, formula="gain/√n_out",
        ),
        Scheme(
            key="normal", label="normal with std", kind="normal", fan=None,
            gain_from_activation=False, formula="as set", title="normal weights",
        ),
    )
}  # fmt: skip

# key -> label, the dropdown's and the command line's choices.
INITIALIZERS = {key: row.label for key, row in SCHEMES.items()}


def scheme(initializer: str) -> Scheme:
    """The row of SCHEMES for `initializer`; an error naming the keys for any other.

    >>> scheme("kaiming_fan_in").fan, scheme("xavier_uniform").kind
    ('fan_in', 'uniform')
    """
    return SCHEMES[one_of("initializer", initializer, SCHEMES)]


def weight_std(initializer: str, fan_in: int, fan_out: int, gain: float = 1.0, std: float = 0.02):
    """The standard deviation of every weight of `initializer` (`Scheme.std`).

    >>> weight_std("kaiming_fan_in", 256, 256, gain=2**0.5)
    0.08838834764831845
    """
    return scheme(initializer).std(fan_in, fan_out, gain, std)


def unit_scale(initializer: str, fan_in: int, fan_out: int, gain: float = 1.0, std: float = 0.02):
    """(kind, scale): the weight is scale times a unit matrix of that kind.

    "uniform": W = a * (2U - 1), a = sqrt(3) * std, the bound of U(-a, a);
    "normal":  W = std * Z, Z standard normal.

    >>> unit_scale("xavier_uniform", 3, 4)       # the card's bound sqrt(6/7)
    ('uniform', 0.9258200997725514)
    """
    row = scheme(initializer)
    return row.kind, row.scale(fan_in, fan_out, gain, std)


# --- unit matrices: drawn once, in the documented order --------------------------------


def words_per_layer(kind: str, width: int) -> int:
    """PCG32 words one (width, width) layer takes: 2 per uniform.

    A uniform layer draws width**2 uniforms; a normal layer draws ceil(width**2 / 2)
    Box-Muller pairs, one uniform more when width**2 is odd.

    >>> words_per_layer("uniform", 3), words_per_layer("normal", 3)   # 9 uniforms; 5 pairs
    (18, 20)
    """
    one_of("kind", kind, KINDS)
    n = integer("width", width, minimum=1) ** 2
    return 2 * n if kind == "uniform" else 4 * ((n + 1) // 2)


def unit_matrix(kind: str, width: int, layer: int, seed: int) -> np.ndarray:
    """Layer `layer` (1-based) of seed `seed`: C = 2U - 1 or Z, float64 (width, width).

    The documented sequence: the stack is initialized layer after layer from one
    generator rng = PCG32(seed), each layer with one initializer call of shape
    (width, width), as a model would be. So layer l starts after l - 1 layers'
    worth of draws; jump-ahead gets there without drawing them. Row-major: row i
    holds the weights of output unit i (torch's (out, in) layout).

    >>> from tinyinit import normal
    >>> second = unit_matrix("normal", 2, layer=2, seed=0)     # after layer 1's two pairs
    >>> bool((second.ravel() == normal(PCG32(0), 8)[4:]).all())
    True
    """
    one_of("kind", kind, KINDS)
    width, layer = integer("width", width, minimum=1), integer("layer", layer, minimum=1)
    rng = PCG32(seed).advance((layer - 1) * words_per_layer(kind, width))
    n = width * width
    if kind == "uniform":
        # 2u - 1 is exact in float64 (u has 53 bits, a multiple of 2**-53 in [0, 1)).
        return (2.0 * uniforms(rng, n) - 1.0).reshape(width, width)
    return normal(rng, n).reshape(width, width)


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
    width = integer("width", width, minimum=1)
    kind, scale = unit_scale(initializer, width, width, gain, std)
    unit = unit_matrix(kind, width, layer, seed)
    if kind == "uniform":
        u = (unit + 1.0) / 2.0  # exact: back to the uniforms themselves
        return -scale + 2.0 * scale * u
    return scale * unit


# --- the batch that goes in, and the gradient that comes back ------------------------

# Streams other than the weights' 54, so inputs never share numbers with weights.
INPUT_STREAM = 1
GRADIENT_STREAM = 2


def unit_batch(width: int, batch: int, seed: int, stream: int) -> np.ndarray:
    """A (width, batch) standard normal batch scaled to mean square exactly 1.

    Drawn from PCG32(seed, stream); one column per sample. Read-only, so that a
    cache (fastpath.UnitWeights.batch) can hand the same array out again.

    >>> x = unit_batch(4, 3, seed=0, stream=INPUT_STREAM)
    >>> x.shape, round(float(np.mean(x * x)), 12)
    ((4, 3), 1.0)
    """
    width, batch = integer("width", width, minimum=1), integer("batch", batch, minimum=1)
    x = normal(PCG32(seed, stream), width * batch).reshape(width, batch)
    x /= math.sqrt(np.mean(x * x))
    x.setflags(write=False)
    return x
