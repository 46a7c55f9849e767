"""Figures for a room: projector type, curves named where they end, the labelled comparison.

What the presentation app (`tinyinit.present`) and `python -m tinyinit figure --compare
... --slide` share, so that a slide and the live app say the same thing the same way:

- projector type (`style_figure`, `projector_style`): large fonts, thick lines, black axes;
- a curve named where it ends, with where it ends (`curve_name`, `end_label`,
  `place_end_labels`): "Xavier 2^-20.7" beside the last point, never in a legend the
  back row cannot read;
- the gap between two curves in powers of 2 (`gap_exponent`, `gap_words`): the number a
  comparison is about, for a headline or a title;
- the labelled comparison (`comparison_figure`) and its text alternative
  (`comparison_alt`), which a saved SVG carries as its <title> and <desc>
  (`accessible_svg`).

Only matplotlib's public API; no pyplot, so nothing is shown twice and any backend works.
"""

from __future__ import annotations

import html
import math
import os
import re
from collections.abc import Sequence
from typing import NamedTuple

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import is_color_like
from matplotlib.figure import Figure
from matplotlib.text import Annotation

from ..core.arguments import (
    KindError,
    flag,
    instance,
    integer,
    is_number,
    number,
    one_of,
    real_array,
    shown,
)
from ..core.init import INITIALIZERS
from ..physics.depth_result import DepthResult
from .plots import (
    MIN_DPI,
    compare_figure,
    curve_colors,
    curve_names_checked,
    decade_ticks,
    quantity_label,
    results_checked,
    size_pair,
)


# The two kinds of argument this module's functions check, in the words plots.py uses.
def _figure(name: str, value) -> Figure:
    return instance(name, value, Figure, "a Figure")


def _result(name: str, value) -> DepthResult:
    return instance(
        name, value, DepthResult, "a DepthResult (tinyinit.physics.propagation.simulate)"
    )


# --- projector type ----------------------------------------------------------------------

# Font sizes of a projected figure in points, at 100 dpi on a canvas of 840 x 560 CSS
# pixels (the app at 1280x720): tick labels 22 px and axis labels 25 px, as large as the
# controls beside them. A larger screen or slide multiplies them (`scale`).
PROJECTOR_FONTS = {"title": 17, "label": 18, "ticks": 16, "legend": 15, "note": 14}

# Lines at least this thick and markers this large: visible from the back row
# through a washed-out projector.
PROJECTOR_LINE_WIDTH = 3.5
PROJECTOR_MARKER_SIZE = 9.0
# Grid lines: quieter than any curve, and still 3.7:1 against white (WCAG asks 3:1 of
# graphics), which a projector's washed-out grey keeps.
PROJECTOR_GREY = "#858585"

# A 16:9 slide, in inches: PowerPoint's and Keynote's widescreen page, so that the
# figure fills a slide at its own size and its type is the slide's.
SLIDE_SIZE = (13.333, 7.5)
# The app's canvas at 1280x720 is 5.6 inches high at 100 dpi; a slide is 7.5.
SLIDE_SCALE = SLIDE_SIZE[1] / 5.6


MARKUPS = ("text", "html", "unicode")
FORMATS = ("png", "svg", "pdf")


def _real(name: str, value) -> float:
    """A real number as a curve's end may be: inf at overflow, 0 at underflow, NaN too."""
    if not is_number(value):
        raise KindError(f"{name} must be a real number, got {shown(value)}")
    return float(value)


def scaled_fonts(scale: float) -> dict[str, float]:
    """PROJECTOR_FONTS times `scale`, in points.

    >>> scaled_fonts(1.5)["label"]
    27.0
    """
    scale = number("scale", scale, above=0)
    return {k: round(v * scale, 1) for k, v in PROJECTOR_FONTS.items()}


def style_figure(figure, fonts: dict | None = None) -> None:
    """Set every text of `figure` to presentation sizes: title, axis labels, ticks, legends.

    Sizes are set on the artists themselves (not through rcParams), so they
    hold when ticks are rebuilt or a title is rewritten at the next update.
    Texts on the axes (`place_end_labels`'s names) take the legend's size.

    >>> fig = Figure(); ax = fig.add_subplot(); _ = ax.set_xlabel("layer")
    >>> style_figure(fig); ax.xaxis.label.get_fontsize()
    18.0
    """
    _figure("figure", figure)
    accepted = f"None or a dict of sizes > 0 for some of {', '.join(PROJECTOR_FONTS)}"
    if not isinstance(fonts, (dict, type(None))):
        raise KindError(f"fonts must be {accepted}, got {shown(fonts)}")
    for key, size in (fonts or {}).items():
        one_of("fonts", key, PROJECTOR_FONTS)
        number("fonts", size, above=0)
    fonts = {**PROJECTOR_FONTS, **(fonts or {})}
    for ax in figure.axes:
        ax.title.set_fontsize(fonts["title"])
        ax.xaxis.label.set_fontsize(fonts["label"])
        ax.yaxis.label.set_fontsize(fonts["label"])
        ax.tick_params(labelsize=fonts["ticks"])
        if ax.get_legend() is not None:
            for text in ax.get_legend().get_texts():
                text.set_fontsize(fonts["legend"])
        for text in ax.texts:
            text.set_fontsize(fonts["legend"])
    for legend in figure.legends:
        for text in legend.get_texts():
            text.set_fontsize(fonts["legend"])
    for text in figure.texts:
        text.set_fontsize(fonts["note"])


def projector_style(figure, scale: float = 1.0) -> None:
    """Thick lines, large markers, black axes and ticks: a figure that survives a projector.

    Solid lines get PROJECTOR_LINE_WIDTH points times `scale`, dashed and dotted
    ones two thirds of that, markers PROJECTOR_MARKER_SIZE times `scale`; spines
    and ticks are drawn black and thick, grid lines PROJECTOR_GREY. Setting the
    sizes (not multiplying them) makes a second call with another scale exact.

    >>> fig = Figure(); ax = fig.add_subplot(); (line,) = ax.plot([0, 1], "o-", lw=1, ms=3)
    >>> projector_style(fig); line.get_linewidth(), line.get_markersize()
    (3.5, 9.0)
    """
    _figure("figure", figure)
    scale = number("scale", scale, above=0)
    for ax in figure.axes:
        for line in ax.get_lines():
            solid = line.get_linestyle() in ("-", "solid")
            line.set_linewidth(PROJECTOR_LINE_WIDTH * scale * (1 if solid else 2 / 3))
            if line.get_marker() not in (None, "None", "", " "):
                line.set_markersize(PROJECTOR_MARKER_SIZE * scale)
        for spine in ax.spines.values():
            spine.set_linewidth(2.0 * scale)
            spine.set_color("black")
        ax.tick_params(width=2.0 * scale, length=7 * scale, color="black", labelcolor="black")
        ax.tick_params(which="both", grid_color=PROJECTOR_GREY, grid_alpha=1.0)  # ticks to come
        ax.xaxis.label.set_color("black")
        ax.yaxis.label.set_color("black")


# --- where a curve ends, in powers of 2 ----------------------------------------------------


def log2_text(value: float) -> str:
    """The exponent of 2 that `value` is, to a tenth, with a true minus sign; or the words for
    what a float cannot hold.

    >>> log2_text(2.0**-20.7), log2_text(1.0), log2_text(math.inf), log2_text(0.0)
    ('−20.7', '0.0', 'inf (overflow)', '0 (underflow)')
    """
    value = _real("value", value)
    if math.isinf(value):
        return "inf (overflow)"
    if not value > 0:
        return "0 (underflow)"
    return f"{math.log2(value):.1f}".replace("-", "−")


SUPERSCRIPT = str.maketrans("0123456789−.", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻·")


def power_of_two(value: float, *, markup: str = "text") -> str:
    """`value` as a power of 2 in `markup`: "text" (2^−20.7), "html" (2<sup>−20.7</sup>) or
    "unicode" (2⁻²⁰·⁷, superscript characters: text that stays text in a saved SVG and
    costs a live plot no typesetting); the words where it is inf or 0.

    >>> power_of_two(2.0**-3), power_of_two(0.5, markup="html")
    ('2^−3.0', '2<sup>−1.0</sup>')
    >>> power_of_two(2.0**-20.7, markup="unicode")
    '2⁻²⁰·⁷'
    """
    one_of("markup", markup, MARKUPS)
    exponent = log2_text(value)
    if not (0 < value < math.inf):
        return exponent
    return {
        "text": f"2^{exponent}",
        "html": f"2<sup>{exponent}</sup>",
        "unicode": "2" + exponent.translate(SUPERSCRIPT),
    }[markup]


def shared_layer(result: DepthResult, other: DepthResult) -> int:
    """The layer where two curves are compared: the last both reach going forward, the
    input (0) going backward."""
    _result("result", result), _result("other", other)
    return min(result.n_layers, other.n_layers) if result.direction == "forward" else 0


def gap_exponent(result: DepthResult, other: DepthResult) -> float | None:
    """log2 of how far `result`'s median ends above `other`'s at the layer both reach; None
    where either is inf or 0.

    >>> from tinyinit.physics.propagation import simulate
    >>> x = simulate("relu", "xavier_uniform", n_layers=20, width=64, seeds=1)
    >>> k = simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=20, width=64, seeds=1)
    >>> round(gap_exponent(k, x), 1)
    20.9
    """
    layer = shared_layer(result, other)
    a, b = float(result.median[layer]), float(other.median[layer])
    if not (0 < a < math.inf and 0 < b < math.inf):
        return None
    return math.log2(a / b)


def _family(initializer: str) -> str:
    """The first word of the initializer's name: Xavier, Kaiming, normal."""
    return INITIALIZERS[initializer].label.split()[0].rstrip(",")


# What can tell two curves apart, in the order a name says it.
ASPECTS = ("family", "variant", "activation", "gain", "std", "width", "depth", "seeds", "direction")


def _aspect(result: DepthResult, aspect: str):
    """The value of one aspect of a curve; None where it does not apply (no gain for 'normal')."""
    uses_gain = INITIALIZERS[result.initializer].uses_gain
    return {
        "family": _family(result.initializer),
        "variant": INITIALIZERS[result.initializer].label,
        "activation": result.activation,
        "gain": result.gain if uses_gain else None,
        "std": None if uses_gain else result.weight_std,
        "width": result.width,
        "depth": result.n_layers,
        "seeds": len(result.seeds),
        "direction": result.direction,
    }[aspect]


def _differences(a: DepthResult, b: DepthResult) -> set[str]:
    """The aspects that tell a from b. A gain (or std) counts only within one family, where
    it is what differs: Kaiming's √2 against Xavier's 1 is the family's doing."""
    differ = {x for x in ASPECTS if _aspect(a, x) != _aspect(b, x)}
    if "family" in differ:
        differ -= {"variant", "gain", "std"}
    return differ


def _words(result: DepthResult, aspects: set[str]) -> str:
    spelled = {
        "family": lambda r: _family(r.initializer),
        "variant": lambda r: INITIALIZERS[r.initializer].label,
        "activation": lambda r: r.activation,
        "gain": lambda r: f"gain {r.gain:.3g}",
        "std": lambda r: f"std {r.weight_std:.3g}",
        "width": lambda r: f"width {r.width}",
        "depth": lambda r: f"depth {r.n_layers}",
        "seeds": lambda r: f"{len(r.seeds)} seed{'s' * (len(r.seeds) != 1)}",
        "direction": lambda r: r.direction,
    }
    if "variant" in aspects:
        aspects = aspects - {"family"}
    words = [spelled[a](result) for a in ASPECTS if a in aspects and _aspect(result, a) is not None]
    return ", ".join(words) or _family(result.initializer)


def curve_name(result: DepthResult, other: DepthResult | None = None) -> str:
    """The fewest words that tell `result` from `other` (its initializer's family, else its
    variant, then its activation, gain or std, width, depth, seeds, direction); without
    `other`, its initializer's family.

    >>> from tinyinit.physics.propagation import simulate
    >>> x = simulate("tanh", "xavier_normal", n_layers=3, width=16, seeds=1)
    >>> k = simulate("tanh", "kaiming_normal", gain=5 / 3, n_layers=3, width=16, seeds=1)
    >>> x53 = simulate("tanh", "xavier_normal", gain=5 / 3, n_layers=3, width=16, seeds=1)
    >>> curve_name(x, k), curve_name(x53, x), curve_name(x)
    ('Xavier', 'gain 1.67', 'Xavier')
    """
    _result("result", result)
    return _words(result, set() if other is None else _differences(result, _result("other", other)))


def curve_names(results: Sequence[DepthResult]) -> list[str]:
    """A name for each curve of a comparison, all told apart along the same aspects.

    >>> from tinyinit.physics.propagation import simulate
    >>> runs = [simulate("tanh", "xavier_normal", gain=g, n_layers=3, width=16, seeds=1)
    ...         for g in (1.0, 5 / 3)]
    >>> runs.append(simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=3, width=16, seeds=1))
    >>> curve_names(runs)
    ['Xavier, tanh, gain 1', 'Xavier, tanh, gain 1.67', 'Kaiming, relu, gain 1.41']
    """
    results = results_checked(results)
    aspects = set().union(*(_differences(a, b) for a in results for b in results))
    return [_words(result, aspects) for result in results]


def end_label(name: str, result: DepthResult, markup: str = "unicode") -> str:
    """A curve's name and where its median ends: "Xavier 2⁻²⁰·⁷".

    >>> from tinyinit.physics.propagation import simulate
    >>> end_label("Xavier", simulate("relu", n_layers=3, width=16, seeds=1), markup="text")
    'Xavier 2^−2.7'
    """
    instance("name", name, str, "a curve's name")
    return f"{name} {power_of_two(_result('result', result).measured_end, markup=markup)}"


def gap_words(
    result: DepthResult, other: DepthResult, other_name: str, markup: str = "text"
) -> str:
    """How far `result` ends from `other`, for a headline: "2^20.8 above Xavier" (the power
    of 2 in `power_of_two`'s `markup`).

    >>> from tinyinit.physics.propagation import simulate
    >>> x = simulate("relu", "xavier_uniform", n_layers=20, width=64, seeds=1)
    >>> k = simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=20, width=64, seeds=1)
    >>> gap_words(k, x, "Xavier"), gap_words(k, x, "Xavier", "unicode"), gap_words(x, x, "it")
    ('2^20.9 above Xavier', '2²⁰·⁹ above Xavier', 'level with it')
    """
    instance("other_name", other_name, str, "a curve's name")
    one_of("markup", markup, MARKUPS)
    gap = gap_exponent(result, other)
    if gap is None:
        where = other.median[shared_layer(result, other)]
        return f"{other_name} ends at {power_of_two(where, markup=markup)}"
    if abs(gap) < 0.05:
        return f"level with {other_name}"
    where = "above" if gap > 0 else "below"
    return f"{power_of_two(2.0 ** abs(gap), markup=markup)} {where} {other_name}"


# --- names on the plot, at the ends of the curves --------------------------------------------


class CurveEnd(NamedTuple):
    """Where a curve arrives: its last point (x, y), whether it climbs into it (else it falls or
    stays), and whether it travels left to right (forward) or back (a backward pass).

    >>> CurveEnd(20, 2.0**-20, climbs=False).rightward
    True
    """

    x: float
    y: float
    climbs: bool
    rightward: bool = True


def curve_end(result: DepthResult) -> CurveEnd:
    """Where the median of `result` arrives: layer n_layers going forward, 0 going backward.

    >>> from tinyinit.physics.propagation import simulate
    >>> curve_end(simulate("relu", n_layers=3, width=16, seeds=1))
    CurveEnd(x=3, y=0.15..., climbs=False, rightward=True)
    """
    layer = _result("result", result).end_layer
    forward = result.direction == "forward"
    before = layer - 1 if forward else layer + 1
    median = result.median
    climbs = 0 <= before <= result.n_layers and bool(median[before] < median[layer])
    return CurveEnd(layer, float(median[layer]), climbs, forward)


def line_end(x, y) -> CurveEnd:
    """Where a line drawn through the points (x, y) arrives, going right.

    >>> line_end([0, 1, 2], [1.0, 1.5, 2.0])
    CurveEnd(x=2.0, y=2.0, climbs=True, rightward=True)
    """
    x = real_array("x", x, ndim=1, what="a non-empty real array of 1 dimension")
    y = real_array("y", y, ndim=1, what=f"a real array of 1 dimension, as long as x ({len(x)})")
    if len(y) != len(x) or not len(x):
        raise ValueError(f"y must be a real array as long as a non-empty x, got {shown(y)}")
    return CurveEnd(float(x[-1]), float(y[-1]), len(y) > 1 and bool(y[-2] < y[-1]))


def place_end_labels(ax, artists, ends: Sequence[CurveEnd]) -> None:
    """Put each text of `artists` (`end_label_artist`'s) beside the end of its curve (`ends`),
    inside the axes.

    A label sits just before the end (to its left going right, to its right going
    back), on the side the curve did not come from: below a curve that falls into
    its end, above one that climbs or stays. Labels that would overlap move apart, and
    none leaves the axes. Call it after the axes' limits are set; a label whose end
    cannot be drawn (inf, or not above 0 on a log axis) is hidden.

    >>> ax = Figure().add_subplot(); _ = ax.plot([0, 1, 2], [1.0, 0.5, 0.25])
    >>> name = end_label_artist(ax, "black"); name.set_text("falls")
    >>> place_end_labels(ax, [name], [line_end([0, 1, 2], [1.0, 0.5, 0.25])])
    >>> name.xy, name.get_horizontalalignment(), name.get_position()[1] < 0  # left of, below
    ((2.0, 0.25), 'right', True)
    """
    instance("ax", ax, Axes, "a matplotlib Axes")
    accepted = "a list of annotations (end_label_artist)"
    if not isinstance(artists, (list, tuple)) or not all(
        isinstance(a, Annotation) for a in artists
    ):
        raise KindError(f"artists must be {accepted}, got {shown(artists)}")
    if not isinstance(ends, (list, tuple)) or not all(isinstance(e, CurveEnd) for e in ends):
        raise KindError(f"ends must be a list of CurveEnds, one per artist, got {shown(ends)}")
    if len(ends) != len(artists):
        raise ValueError(f"ends must be a list of CurveEnds as long as artists ({len(artists)}), "
                         f"got {shown(ends)}")  # fmt: skip
    if not artists:
        return
    px_per_point = ax.figure.dpi / 72
    box = ax.get_window_extent()
    log = ax.get_yscale() == "log"
    placed = []
    for label, end in zip(artists, ends):
        if not (math.isfinite(end.y) and (end.y > 0 or not log)):
            label.set_visible(False)
            continue
        label.set_visible(True)
        height = 1.25 * label.get_fontsize() * px_per_point
        y = ax.transData.transform((end.x, end.y))[1]
        want = y + (1 if end.climbs else -1) * (0.5 * height + 6 * px_per_point)
        placed.append([want, height, label, end, y])
    if not placed:
        return
    placed.sort(key=lambda p: p[0])
    for k in range(1, len(placed)):  # upwards, apart
        lowest = placed[k - 1][0] + 0.5 * (placed[k - 1][1] + placed[k][1])
        placed[k][0] = max(placed[k][0], lowest)
    top = box.y1 - 0.5 * placed[-1][1]
    for k in range(len(placed) - 1, -1, -1):  # back down inside the axes, still apart
        placed[k][0] = min(placed[k][0], top)
        top = placed[k][0] - 0.5 * placed[k][1] - 0.5 * placed[max(k - 1, 0)][1]
    for centre, height, label, end, y in placed:
        centre = max(centre, box.y0 + 0.5 * height)
        label.xy = (end.x, end.y)
        label.set_position((-4 if end.rightward else 4, float((centre - y) / px_per_point)))
        label.set_horizontalalignment("right" if end.rightward else "left")
        label.set_verticalalignment("center")


def end_label_artist(ax, color, fontsize: float = 12, *, animated: bool = False):
    """An empty annotation for `place_end_labels`, in `color`, bold, above the lines.

    >>> end_label_artist(Figure().add_subplot(), "black", 15).get_fontsize()
    15.0
    """
    instance("ax", ax, Axes, "a matplotlib Axes")
    if not is_color_like(color) or isinstance(color, (bool, int, float)):
        kind = ValueError if isinstance(color, str) else KindError
        raise kind(f"color must be a matplotlib colour ('black', '#0072B2'), got {shown(color)}")
    fontsize, animated = number("fontsize", fontsize, above=0), flag("animated", animated)
    label = ax.annotate(
        "", xy=(0, 1), xytext=(0, 0), textcoords="offset points", color=color,
        fontsize=fontsize, fontweight="bold", zorder=6, annotation_clip=False, animated=animated,
    )  # fmt: skip
    # Not in the layout: place_end_labels keeps it inside the axes, and where it waits, at
    # (0, 1), may lie far outside them (a y axis from 2 to 3), which no margin can hold.
    label.set_in_layout(False)
    return label


# --- the labelled comparison, and what it says in words ------------------------------------


def _common_words(results: Sequence[DepthResult]) -> str:
    """What every curve shares, as a title's first line: activation, width, depth, seeds."""
    first = results[0]
    words = []
    if len({r.activation for r in results}) == 1:
        words.append(first.activation)
    if len({r.width for r in results}) == 1:
        words.append(f"width {first.width}")
    if len({r.n_layers for r in results}) == 1:
        words.append(f"{first.n_layers} layers")
    if len({len(r.seeds) for r in results}) == 1:
        words.append(f"median of {len(first.seeds)} seeds")
    return ", ".join(words)


def comparison_title(
    results: Sequence[DepthResult], names: Sequence[str], markup: str = "text"
) -> str:
    """The comparison's point in one line: how far each curve ends from the first's (powers
    of 2 in `power_of_two`'s `markup`).

    >>> from tinyinit.physics.propagation import simulate
    >>> x = simulate("relu", "xavier_uniform", n_layers=20, width=64, seeds=1)
    >>> k = simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=20, width=64, seeds=1)
    >>> comparison_title([x, k], ["Xavier", "Kaiming"])
    'at layer 20, Kaiming ends 2^20.9 above Xavier'
    """
    results = results_checked(results)
    names = curve_names_checked(names, len(results))
    if len(results) == 1:
        return f"at layer {results[0].end_layer}: {end_label(names[0], results[0], markup)}"
    first, name = results[0], names[0]
    layer = shared_layer(results[1], first)
    gaps = [f"{n} ends {gap_words(r, first, name, markup)}" for r, n in zip(results[1:], names[1:])]
    return f"at layer {layer}, " + "; ".join(gaps)


def comparison_alt(results: Sequence[DepthResult], names: Sequence[str]) -> str:
    """The comparison's text alternative: what is plotted, where each curve ends, the gap.

    >>> from tinyinit.physics.propagation import simulate
    >>> x = simulate("relu", "xavier_uniform", n_layers=3, width=16, seeds=2)
    >>> print(comparison_alt([x], ["Xavier"]))
    Plot of the mean square of the activations per layer, log scale (relu, width 16, 3 layers, \
median of 2 seeds): Xavier ends at 2^−2.7 of the input (theory 2^−3.0).
    """
    results = results_checked(results)
    names = curve_names_checked(names, len(results))
    what = quantity_label(results[0].direction, plain=True).rsplit(" ", 1)[0]
    level = "input" if results[0].direction == "forward" else "upstream gradient"
    ends = [
        f"{name} ends at {power_of_two(r.measured_end)}"
        + (f" of the {level}" if k == 0 else "")
        + f" (theory {power_of_two(r.theory_end)})"
        for k, (r, name) in enumerate(zip(results, names))
    ]
    alt = f"Plot of the {what} per layer, log scale ({_common_words(results)}): "
    alt += ", ".join(ends) + "."
    if len(results) > 1:
        title = comparison_title(results, names)
        alt += " " + title[0].upper() + title[1:] + "."
    return alt


def fix_ylim(ax, ylim: tuple[float, float]) -> None:
    """Set a log axis to exactly `ylim`, with its decades as ticks (as the explorer draws them)."""
    ax.set_ylim(*ylim)
    ticks = decade_ticks(*ylim)
    inside = ticks[(ticks >= ylim[0]) & (ticks <= ylim[1])]
    if len(inside):  # a range within one decade keeps matplotlib's own ticks: no axis is bare
        ax.set_yticks(inside)
        ax.minorticks_off()


def comparison_figure(
    results: Sequence[DepthResult],
    names: Sequence[str] | None = None,
    *,
    title: str | None = None,
    theory: bool = True,
    size: tuple[float, float] = (8.0, 5.0),
    dpi: int = 100,
    slide: bool = False,
    ylim: tuple[float, float] | None = None,
    math_title: bool = False,
) -> Figure:
    """Several curves on one log axis, each named where it ends, the gap in the title.

    Each curve is drawn as `tinyinit.views.plots.compare_figure` draws it (median, min-to-max
    band, dashed theory, in its initializer's colour); instead of a legend each carries
    its name and end value beside its last point ("Xavier 2^-20.7", `place_end_labels`),
    and the title's second line says how far each ends from the first
    (`comparison_title`). names: default `curve_names(results)`; title: the first
    line, default what the curves share ("" for none); slide: projector type
    (PROJECTOR_FONTS grown to a 7.5 inch high slide, thick lines); ylim: the y axis,
    exactly (else whole decades around every curve); math_title: read the title as
    matplotlib's mathtext ($x^2$), not as text typed.

    >>> from tinyinit.physics.propagation import simulate
    >>> runs = [simulate("relu", i, gain=g, n_layers=4, width=16, seeds=2)
    ...         for i, g in (("xavier_uniform", 1.0), ("kaiming_normal", 2**0.5))]
    >>> fig = comparison_figure(runs)
    >>> [t.get_text() for t in fig.axes[0].texts]
    ['Xavier 2⁻⁴·¹', 'Kaiming 2⁰·⁴']
    """
    results = results_checked(results)
    names = curve_names_checked(curve_names(results) if names is None else names, len(results))
    if title is not None:
        instance("title", title, str, "None or a text")
    theory, slide = flag("theory", theory), flag("slide", slide)
    math_title, dpi = flag("math_title", math_title), integer("dpi", dpi, minimum=MIN_DPI)
    size = size_pair("size", size)
    if ylim is not None:
        ylim = size_pair(
            "ylim", ylim, "None or (bottom, top), 0 < bottom < top", lambda b, t: 0 < b < t
        )
    heading = _common_words(results) if title is None else title
    point = comparison_title(results, names, "unicode")
    fig = compare_figure(results, names, title="", figsize=size, theory=theory)
    FigureCanvasAgg(fig)  # sizes of texts, for the names' places and the layout
    fig.set_dpi(dpi)
    ax = fig.axes[0]
    ax.get_legend().remove()  # the names are on the curves
    ax.set_title("\n".join(line for line in (heading, point) if line), parse_math=math_title)
    if theory:
        fig.text(0.01, 0.01, "dashed: theory (mean field)", ha="left", va="bottom")
    if ylim is not None:
        fix_ylim(ax, ylim)
    colors = curve_colors(results)
    labels = [end_label_artist(ax, color) for color in colors]
    for label, name, result in zip(labels, names, results):
        label.set_text(end_label(name, result))
    scale = SLIDE_SCALE if slide else min(size[0] / 8.4, size[1] / 5.6)
    style_figure(fig, scaled_fonts(scale if slide else min(scale, 1.0) * 0.75))
    if slide:
        projector_style(fig, scale)
        ax.title.set_fontsize(PROJECTOR_FONTS["title"] * scale)
    fig.tight_layout()
    place_end_labels(ax, labels, [curve_end(r) for r in results])
    return fig


# --- saving with the text alternative --------------------------------------------------------


def accessible_svg(svg: str, title: str, desc: str) -> str:
    """`svg` with `title` and `desc` as the <title> and <desc> a screen reader reads, and
    role="img" naming them (the pattern of the W3C's SVG accessibility guidance).

    >>> print(accessible_svg('<svg xmlns="http://www.w3.org/2000/svg">\\n<g/></svg>', "A & B", "d"))
    <svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="figure-title figure-desc">
    <title id="figure-title">A &amp; B</title>
    <desc id="figure-desc">d</desc>
    <g/></svg>
    """
    for name, text in (("svg", svg), ("title", title), ("desc", desc)):
        instance(name, text, str, "a text")
    opening = re.search(r"<svg\b[^>]*?(/?)>", svg)
    if opening is None:
        raise ValueError(f"svg must be an SVG document's text (an <svg> element), got {shown(svg)}")
    empty = opening.group(1) == "/"  # <svg .../>: it gets a body, and its end tag
    tag = opening.group(0)[: -2 if empty else -1].rstrip()
    named = tag + ' role="img" aria-labelledby="figure-title figure-desc">'
    text = (
        f'\n<title id="figure-title">{html.escape(title, quote=False)}</title>'
        f'\n<desc id="figure-desc">{html.escape(desc, quote=False)}</desc>'
    )
    return (
        svg[: opening.start()] + named + text + ("</svg>" if empty else "") + svg[opening.end() :]
    )


def save_figure(fig: Figure, path, fmt: str, *, dpi: int, title: str, alt: str) -> None:
    """Write `fig` as png, svg or pdf with its text alternative: in an SVG the <title> and
    <desc> (`accessible_svg`), in a PNG its Title and Description, in a PDF its Title and
    Subject. SVG text stays text (not outlines), so a title can be edited on the slide.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "f.svg"
    >>> save_figure(Figure(), path, "svg", dpi=72, title="T", alt="a picture of nothing")
    >>> '<desc id="figure-desc">a picture of nothing</desc>' in path.read_text()
    True
    """
    import io

    import matplotlib

    _figure("fig", fig)
    if not str(instance("path", path, (str, os.PathLike), "a file's path")):
        raise ValueError("path must be a file's path, got ''")
    one_of("fmt", fmt, FORMATS)
    dpi = integer("dpi", dpi, minimum=MIN_DPI)
    instance("title", title, str, "a text")
    instance("alt", alt, str, "a text: what the figure shows")
    if fmt == "svg":
        buffer = io.StringIO()
        with matplotlib.rc_context({"svg.fonttype": "none"}):
            # No metadata of matplotlib's: the <title> is ours, and no date changes the file.
            fig.savefig(buffer, format="svg", dpi=dpi, metadata={"Date": None})
        with open(path, "w", encoding="utf-8") as file:
            file.write(accessible_svg(buffer.getvalue(), title, alt))
        return
    metadata = {"Title": title, "Description": alt} if fmt == "png" else {}
    if fmt == "pdf":
        metadata = {"Title": title, "Subject": alt}
    fig.savefig(path, format=fmt, dpi=dpi, metadata=metadata)


__all__ = [
    "PROJECTOR_FONTS",
    "PROJECTOR_GREY",
    "PROJECTOR_LINE_WIDTH",
    "PROJECTOR_MARKER_SIZE",
    "SLIDE_SIZE",
    "accessible_svg",
    "comparison_alt",
    "comparison_figure",
    "comparison_title",
    "CurveEnd",
    "curve_end",
    "curve_name",
    "curve_names",
    "end_label",
    "end_label_artist",
    "gap_exponent",
    "gap_words",
    "line_end",
    "log2_text",
    "place_end_labels",
    "power_of_two",
    "projector_style",
    "save_figure",
    "scaled_fonts",
    "style_figure",
]
