"""The look every figure shares: its colours, its type, its words, its log axis.

One colour per initializer, the same in every notebook, explorer, slide and command
(`INITIALIZER_COLORS`, `initializer_color`, `curve_colors`), drawn from Okabe and Ito's palette;
the colours of overflow, underflow, the weight gradient and pinned curves; the type sizes
(`TICK_FONTSIZE`, `FIGURE_FONTS`); the words for what a depth figure shows (`QUANTITIES`,
`quantity_label`, `weight_labels`); a log axis's limits and ticks on whole decades
(`log_limits`, `decade_ticks`, and `log_drawable` for what a log axis can hold); a figure's size
and resolution (`size_pair`, `MIN_DPI`).

The live plots (`tinyinit.views.plots`), the static figures (`tinyinit.views.figures`), the
projector's slides and the presentation app all read them here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from ..core.arguments import KindError, flag, instance, integer, is_number, number, one_of, shown
from ..physics.depth_result import DepthResult
from .naming import results_checked

__all__ = [
    "FIGURE_FONTS",
    "INITIALIZER_COLORS",
    "MAX_PINS",
    "OKABE_ITO",
    "OVERFLOW_COLOR",
    "PIN_ALPHA",
    "PIN_COLORS",
    "QUANTITIES",
    "TICK_FONTSIZE",
    "UNDERFLOW_COLOR",
    "WEIGHT_COLOR",
    "curve_colors",
    "decade_ticks",
    "initializer_color",
    "log_limits",
    "quantity_label",
    "weight_labels",
]

# Okabe and Ito's eight colours ("Color Universal Design", 2008): told apart by readers with
# any common colour-vision deficiency, and in greyscale by their lightness.
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
}

# One colour per initializer, in every notebook, the explorer, the app and the CLI: Xavier is
# blue and Kaiming vermillion wherever a student meets them. A family shares its colour (its
# variants differ in the distribution or the fan, not in what they do to the signal), so a
# new variant (xavier_..., kaiming_...) has its colour already and a new family is a row here.
INITIALIZER_COLORS = {
    "xavier": OKABE_ITO["blue"],
    "kaiming": OKABE_ITO["vermillion"],
    "normal": OKABE_ITO["bluish green"],  # a flat std, e.g. 0.02
    "orthogonal": OKABE_ITO["black"],  # Saxe et al.'s orthogonal rows
    "scaled_residual": OKABE_ITO["reddish purple"],  # 0.02 / sqrt(2 N) on residual outputs
    "lsuv": OKABE_ITO["reddish purple"],  # read from a batch; never in a residual's figure
    "mup": OKABE_ITO["orange"],
    "torch_default": OKABE_ITO["sky blue"],  # nn.Linear's own kaiming_uniform_(a=sqrt(5))
}


def initializer_color(initializer: str) -> str:
    """The colour of `initializer`, or of its family (the name up to its first "_").

    >>> initializer_color("xavier_uniform"), initializer_color("kaiming_normal")
    ('#0072B2', '#D55E00')
    >>> initializer_color("he")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: initializer must be one of 'xavier', 'kaiming', ... or their variants, got 'he'
    """
    if isinstance(initializer, str):
        for key in (initializer, initializer.split("_")[0]):
            if key in INITIALIZER_COLORS:
                return INITIALIZER_COLORS[key]
    choices = ", ".join(repr(key) for key in INITIALIZER_COLORS)
    kind = ValueError if isinstance(initializer, str) else KindError
    raise kind(f"initializer must be one of {choices} or their variants, got {shown(initializer)}")


def curve_colors(results: Sequence[DepthResult]) -> list[str]:
    """One colour per result: its initializer's (initializer_color); a second result of the
    same initializer (another gain, another activation) black, a third and later grey, so
    that blue still means Xavier.

    >>> from tinyinit.physics.propagation import simulate
    >>> runs = [simulate("relu", i, n_layers=2, width=8, seeds=1)
    ...         for i in ("xavier_uniform", "xavier_uniform", "kaiming_normal")]
    >>> curve_colors(runs)
    ['#0072B2', 'black', '#D55E00']
    """
    seen: dict[str, int] = {}
    colors = []
    for result in results_checked(results):
        repeat = seen[result.initializer] = seen.get(result.initializer, -1) + 1
        colors.append((initializer_color(result.initializer), "black", "0.55")[min(repeat, 2)])
    return colors


# Tick labels and legends of a stored figure, in points: readable on a projector and in print.
TICK_FONTSIZE = 11
# The same sizes for a notebook's own figures: plt.rcParams.update(FIGURE_FONTS) once, at the top.
FIGURE_FONTS = {
    "xtick.labelsize": TICK_FONTSIZE,
    "ytick.labelsize": TICK_FONTSIZE,
    "axes.labelsize": 11,
    "axes.titlesize": 12,
    "legend.fontsize": 10,
}
OVERFLOW_COLOR = "#b2182b"
UNDERFLOW_COLOR = "#5e3c99"
# The weight gradient's curve: a colour no initializer has.
WEIGHT_COLOR = OKABE_ITO["sky blue"]
# Pinned curves: colours no live artist and no initializer uses, so a pin never looks like
# the current curve (the legend names the pin's initializer). Faded, as what is no longer
# shown, yet 4.6:1 or more against white once faded, as legible as text and more than the
# 3:1 WCAG 2.1 asks of graphics (at 0.55, the grey #555555 was 2.6:1).
PIN_COLORS = ("#333333", "#5C4315", "#4A4A00", "#563A56")
MAX_PINS = len(PIN_COLORS)
PIN_ALPHA = 0.75


# What a depth figure shows, in words and symbol. Figures set the symbol with mathtext
# (matplotlib caches its layout, so a slider's redraw does not pay for it); HTML captions,
# which nothing typesets, spell it in plain Unicode.
QUANTITIES = {
    "forward": ("mean square of the activations", r"$h_\ell$", "hℓ"),
    "backward": (
        "mean square of the gradient",
        r"$\partial\,\mathrm{loss}/\partial h_\ell$",
        "∂loss/∂hℓ",
    ),
}


def quantity_label(direction: str, *, plain: bool = False) -> str:
    """The y axis's label for `direction` ("forward" or "backward"): mathtext, or plain text.

    >>> print(quantity_label("forward"))
    mean square of the activations $h_\\ell$
    >>> quantity_label("backward", plain=True)
    'mean square of the gradient ∂loss/∂hℓ'
    """
    words, math, text = QUANTITIES[one_of("direction", direction, QUANTITIES)]
    return f"{words} {text if flag('plain', plain) else math}"


def weight_labels(*, plain: bool = False) -> tuple[str, str]:
    """The legend's words for the weight gradient's curve and its theory.

    >>> weight_labels(plain=True)
    ('weight gradient ∂loss/∂Wℓ per sample', 'its theory')
    """
    symbol = "∂loss/∂Wℓ" if flag("plain", plain) else r"$\partial\,\mathrm{loss}/\partial W_\ell$"
    return (f"weight gradient {symbol} per sample", "its theory")


def log_drawable(values: np.ndarray) -> np.ndarray:
    """values with inf, nan and 0 (not drawable on a log axis) replaced by nan.

    >>> log_drawable([1.0, 0.0, np.inf])
    array([ 1., nan, nan])
    """
    v = np.asarray(values, dtype=float)
    return np.where(np.isfinite(v) & (v > 0), v, np.nan)


# The decades a float64 spans: 1e-323 is its smallest (subnormal) power of 10.
SMALLEST_DECADE, LARGEST_DECADE = -323, 308


def log_limits(*arrays: np.ndarray) -> tuple[float, float]:
    """y limits on whole decades around every drawable value and the level 1.

    >>> log_limits(np.array([1.0, 0.5, 0.0, np.inf]))
    (0.1, 10.0)
    """
    finite = np.concatenate([log_drawable(a).ravel() for a in arrays] + [np.array([1.0])])
    lo = max(math.floor(math.log10(np.nanmin(finite)) - 0.1), SMALLEST_DECADE)
    hi = min(math.ceil(math.log10(np.nanmax(finite)) + 0.1), LARGEST_DECADE)
    return 10.0**lo, 10.0**hi


def decade_ticks(bottom: float, top: float, max_ticks: int = 7) -> np.ndarray:
    """At most max_ticks powers of 10 in [bottom, top], evenly strided.

    >>> decade_ticks(1e-6, 10.0)
    array([1.e-06, 1.e-05, 1.e-04, 1.e-03, 1.e-02, 1.e-01, 1.e+00, 1.e+01])
    """
    bottom, top = number("bottom", bottom, above=0), number("top", top, above=0)
    if top < bottom:
        raise ValueError(f"top must be >= bottom ({bottom:g}), got {top!r}")
    max_ticks = integer("max_ticks", max_ticks, minimum=4)  # float64's 631 decades by 200s: 4
    lo, hi = round(math.log10(bottom)), round(math.log10(top))
    stride = next(s for s in (1, 2, 5, 10, 20, 25, 50, 100, 200) if (hi - lo) / s <= max_ticks)
    return 10.0 ** np.arange(math.ceil(lo / stride) * stride, hi + 1, stride)


# Below this a figure's type is less than a pixel high, which FreeType refuses to draw.
MIN_DPI = 10


def size_pair(name: str, value, accepted: str = "a (width, height) in inches, both > 0",
              holds=lambda a, b: a > 0 and b > 0) -> tuple[float, float]:  # fmt: skip
    """value as a pair of finite real numbers (a, b) for which holds(a, b): a figure's size by
    default, or a range (`accepted` says which).

    >>> size_pair("figsize", [4, 3.0])
    (4.0, 3.0)
    """
    if not (isinstance(value, (tuple, list)) and len(value) == 2 and all(map(is_number, value))):
        raise KindError(f"{name} must be {accepted}, got {shown(value)}")
    if not (all(map(math.isfinite, value)) and holds(*value)):
        raise ValueError(f"{name} must be {accepted}, got {shown(value)}")
    return float(value[0]), float(value[1])


def figure_checked(name: str, value, none: bool = False) -> Figure | None:
    """value, if it is a matplotlib Figure (or None, where `none` allows it); else a KindError
    naming `name`.

    >>> figure_checked("fig", None, none=True) is None
    True
    """
    if none and value is None:
        return None
    return instance(name, value, Figure, "None or a matplotlib Figure" if none else "a Figure")
