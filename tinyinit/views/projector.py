"""Figures for a room: projector type, curves named where they end, the labelled comparison.

What the presentation app (`tinyinit.present`) and `python -m tinyinit figure --compare
... --slide` share, so that a slide and the live app say the same thing the same way:

- projector type (`style_figure`, `projector_style`): large fonts, thick lines, black axes;
- a curve named where it ends, with where it ends (`place_end_labels`, with the words of
  `tinyinit.views.naming`): "Xavier: 2⁻²⁰·⁷" beside the last point, never in a legend the
  back row cannot read;
- the layer axis ending at the network's last layer (`layer_axis`);
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
from matplotlib.transforms import Bbox, TransformedBbox

from ..core.arguments import (
    KindError,
    flag,
    instance,
    integer,
    number,
    one_of,
    real_array,
    shown,
)
from ..physics.depth_result import DepthResult, as_result
from .defaults import FORMATS, SLIDE_SIZES
from .figures import compare_figure
from .naming import (
    curve_names,
    curve_names_checked,
    end_label,
    gap_words,
    point_title,
    power_of_two,
    results_checked,
    shared_layer,
)
from .style import (
    MIN_DPI,
    curve_colors,
    decade_ticks,
    figure_checked,
    quantity_label,
    size_pair,
)

# The result this module's functions check, in the words the live plots use.

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

# A slide's type (`tinyinit.views.defaults.SLIDE_SIZES`: 7.5 inches high, at either aspect):
# the app's canvas at 1280x720 is 5.6 inches high at 100 dpi.
SLIDE_SCALE = SLIDE_SIZES["16:9"][1] / 5.6


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
    figure_checked("figure", figure)
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
    figure_checked("figure", figure)
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
    layer = as_result(result).end_layer
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
        end = power_of_two(results[0].measured_end, markup=markup)
        return f"at layer {results[0].end_layer}, {names[0]} ends at {end}"
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


def layer_axis(ax, results: Sequence[DepthResult]) -> None:
    """The layer axis of a figure of `results`, from layer 0 to the last layer exactly (no
    margin past a network's end); the lines' end points are drawn whole, clipped only above
    and below the axes.

    >>> from tinyinit.physics.propagation import simulate
    >>> ax = Figure().add_subplot(); _ = ax.plot([0, 1, 2, 3], [1, 2, 3, 4], "o-")
    >>> layer_axis(ax, [simulate("relu", n_layers=3, width=16, seeds=1)])
    >>> [float(x) for x in ax.get_xlim()]
    [0.0, 3.0]
    """
    instance("ax", ax, Axes, "a matplotlib Axes")
    results = results_checked(results)
    ax.set_xlim(0, max(r.n_layers for r in results))
    # Half a marker's width past each end: the axes' box, widened to the sides only.
    wider = TransformedBbox(Bbox([[-0.03, 0.0], [1.03, 1.0]]), ax.transAxes)
    for line in ax.get_lines():
        line.set_clip_path(None)
        line.set_clip_box(wider)


def fit_title(fig: Figure) -> None:  # on an Agg canvas, which measures text
    """Keep the title of `fig`'s first axes inside the figure: its type smaller until its
    longest line, centred over the axes, fits between the figure's edges, the axes lower
    until it fits under the top edge. Call it once the axes are placed.

    >>> fig = Figure(figsize=(4, 3)); _ = FigureCanvasAgg(fig)
    >>> _ = fig.add_subplot().set_title("a title " * 20)
    >>> fit_title(fig); bool(fig.axes[0].title.get_window_extent().width <= fig.bbox.width)
    True
    """
    figure_checked("fig", fig)
    if not isinstance(fig.canvas, FigureCanvasAgg) or not fig.axes:
        raise ValueError(f"fig must be a Figure with axes on an Agg canvas, got {shown(fig)}")
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    centre = ax.get_window_extent(renderer).intervalx.mean()
    room = 2 * min(centre, fig.bbox.width - centre) - 0.02 * fig.bbox.width
    while ax.title.get_window_extent(renderer).width > room and ax.title.get_fontsize() > 4:
        ax.title.set_fontsize(0.95 * ax.title.get_fontsize())
    over = ax.title.get_window_extent(renderer).y1 - 0.99 * fig.bbox.height
    if over > 0:
        fig.subplots_adjust(top=fig.subplotpars.top - over / fig.bbox.height)


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

    Each curve is drawn as `tinyinit.views.figures.compare_figure` draws it (median, min-to-max
    band, dashed theory, in its initializer's colour); instead of a legend each carries
    its name and end value beside its last point ("Xavier: 2⁻²⁰·⁷", `place_end_labels`),
    and the title's second line says how far each ends from the first
    (`comparison_title`). names: default `curve_names(results)`; title: the first
    line, default what the numbers say (`point_title`: "Xavier collapses a 20-layer ReLU
    network; Kaiming keeps it"; "" for none), what the curves share going to the note
    under the plot; slide: projector type
    (PROJECTOR_FONTS grown to a 7.5 inch high slide, thick lines); ylim: the y axis,
    exactly (else whole decades around every curve); math_title: read the title as
    matplotlib's mathtext ($x^2$), not as text typed.

    >>> from tinyinit.physics.propagation import simulate
    >>> runs = [simulate("relu", i, gain=g, n_layers=4, width=16, seeds=2)
    ...         for i, g in (("xavier_uniform", 1.0), ("kaiming_normal", 2**0.5))]
    >>> fig = comparison_figure(runs)
    >>> [t.get_text() for t in fig.axes[0].texts]
    ['Xavier: 2⁻⁴·¹', 'Kaiming: 2⁰·⁴']
    >>> fig.axes[0].get_title().splitlines()[0], [float(x) for x in fig.axes[0].get_xlim()]
    ('Xavier shrinks a 4-layer ReLU network; Kaiming keeps it', [0.0, 4.0])
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
    heading = point_title(results, names) if title is None else title
    point = comparison_title(results, names, "unicode")
    fig = compare_figure(results, names, title="", figsize=size, theory=theory)
    FigureCanvasAgg(fig)  # sizes of texts, for the names' places and the layout
    fig.set_dpi(dpi)
    ax = fig.axes[0]
    ax.get_legend().remove()  # the names are on the curves
    ax.set_title("\n".join(line for line in (heading, point) if line), parse_math=math_title)
    note = _common_words(results) + ("; dashed: theory (mean field)" if theory else "")
    fig.text(0.01, 0.01, note, ha="left", va="bottom")
    layer_axis(ax, results)
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
    # Room under the plot for the note, which tight_layout leaves out.
    note_height = 2 * fig.texts[0].get_fontsize() / 72 / size[1]
    fig.tight_layout(rect=(0, note_height, 1, 1))
    fit_title(fig)
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

    figure_checked("fig", fig)
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
    "SLIDE_SCALE",
    "layer_axis",
    "fit_title",
    "accessible_svg",
    "comparison_alt",
    "comparison_figure",
    "comparison_title",
    "CurveEnd",
    "curve_end",
    "end_label_artist",
    "line_end",
    "place_end_labels",
    "projector_style",
    "save_figure",
    "scaled_fonts",
    "style_figure",
]
