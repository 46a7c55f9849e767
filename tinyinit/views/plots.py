"""The live plots the explorers redraw: built once, then moved in place.

`DepthPlot` (the mean square per layer, tinyinit.physics.propagation), `HistogramPlot` (the
values themselves at a few layers) and `TrainingPlot` (a run as it trains,
tinyinit.networks.training) build their artists once; `update(...)` moves their data and
redraws: the whole figure when the axes change, else only the data over the kept pixels of
the axes (blitting, `tinyinit.views.browser_transport.BlitPlot`). A slider never rebuilds the
figure, which is what keeps a live explorer smooth (and what lets a test hold on to the same
Line2D objects).

The y axis of a depth plot is logarithmic: the interesting behaviour is geometric, a factor
per layer. Values a float64 cannot hold (inf after overflow, exactly 0 after underflow or with
zero weights) have no place on a log axis; they are drawn as triangles on the axis edge and
named in a note (`edge_note`), never silently dropped.

Their colours, type, words and log axes are every figure's (`tinyinit.views.style`); the
static figures a notebook shows once are in `tinyinit.views.figures`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from matplotlib import ticker
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import is_color_like
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Polygon

from ..core.activations import TANH_SATURATED
from ..core.arguments import (
    KindError,
    flag,
    instance,
    integer,
    is_integer,
    is_number,
    one_of,
    real_array,
    shown,
)
from ..physics.depth_result import DepthResult, as_result
from .browser_transport import BlitPlot
from .naming import settings_title
from .style import (
    MAX_PINS,
    OVERFLOW_COLOR,
    PIN_ALPHA,
    PIN_COLORS,
    QUANTITIES,
    TICK_FONTSIZE,
    UNDERFLOW_COLOR,
    WEIGHT_COLOR,
    decade_ticks,
    figure_checked,
    initializer_color,
    log_drawable,
    log_limits,
    quantity_label,
    size_pair,
    weight_labels,
)

__all__ = [
    "DepthPlot",
    "HISTOGRAM_BINS",
    "HISTOGRAM_PANELS",
    "HistogramPlot",
    "LOSS_WINDOW",
    "MAX_LOSS_SHOWN",
    "RULE_OF_THUMB_RATIO",
    "TrainingCurves",
    "TrainingPlot",
    "edge_note",
    "histogram_layers",
    "layer_span",
    "layer_stats",
    "legend_labels",
    "nice_ceiling",
    "running_mean",
    "set_line",
    "step_span",
]


def legend_labels(result: DepthResult) -> list[str]:
    """The legend's words for `result`: median, band, theory, reference level.

    >>> from tinyinit.physics.propagation import simulate
    >>> legend_labels(simulate("relu", n_layers=3, width=16, seeds=2))
    ['median of 2 seeds', 'min to max', 'theory', 'input: 1']
    """
    level = "input" if as_result(result).direction == "forward" else "upstream gradient"
    return [f"median of {len(result.seeds)} seeds", "min to max", "theory", f"{level}: 1"]


def layer_span(depth: int) -> int:
    """The x axis of a live plot: depth itself up to 10, then rounded up to the next ten
    (beyond 100, the next hundred), so that the curve fills at least half the width.

    >>> [layer_span(d) for d in (3, 10, 20, 21, 100, 150)]
    [3, 10, 20, 30, 100, 200]
    """
    if integer("depth", depth, minimum=0) <= 10:
        return depth
    step = 10 if depth <= 100 else 100
    return -(-depth // step) * step


def edge_note(result: DepthResult) -> str:
    """The words for values beyond float64, or "" when every value is drawable.

    >>> from tinyinit.physics.propagation import simulate
    >>> huge = simulate("linear", "normal_init", std=1e200, n_layers=3, width=16, seeds=1)
    >>> print(edge_note(huge))
    ▲ overflow: mean square beyond float64 (inf) from layer 1 on;  theory is inf from layer 1 on
    """
    toward = "on" if as_result(result).direction == "forward" else "and below"
    why_zero = "underflow: below float64's 1e-323"
    if result.weight_std == 0:
        why_zero = "all weights are 0"
    parts = []
    if (k := result.overflow_from) is not None:
        parts.append(f"▲ overflow: mean square beyond float64 (inf) from layer {k} {toward}")
    if (k := result.underflow_from) is not None:
        parts.append(f"▼ mean square exactly 0 from layer {k} {toward} ({why_zero})")
    for name, where in (("inf", np.isinf), ("0", lambda v: v == 0)):
        if (k := result.first_layer(result.theory, where)) is not None:
            parts.append(f"theory is {name} from layer {k} {toward}")
    return ";  ".join(parts)


def set_line(line, x, y) -> None:
    """New data for `line`, hidden when there is none: an empty line still costs a draw.

    >>> (line,) = Figure().add_subplot().plot([], [])
    >>> set_line(line, [0, 1], [1.0, 0.5]); line.get_visible(), line.get_xdata().tolist()
    (True, [0.0, 1.0])
    >>> set_line(line, [], []); line.get_visible()
    False
    """
    instance("line", line, Line2D, "a matplotlib Line2D")
    x, y = real_array("x", x, ndim=1), real_array("y", y, ndim=1)
    if len(x) != len(y):
        raise ValueError(f"y must be as long as x ({len(x)}), got {shown(y)}")
    line.set_data(x, y)
    line.set_visible(len(x) > 0)


class DepthPlot(BlitPlot):
    """Mean square per layer, log y: measured median, min-max band over seeds, theory.

    Backward, the weight gradient's mean square per layer too (WEIGHT_COLOR), and
    up to MAX_PINS pinned curves, faded (`set_pins`). Built once; `update(result)`
    changes the artists in place.

    >>> from tinyinit.physics.propagation import simulate
    >>> plot = DepthPlot()
    >>> plot.update(simulate("relu", "xavier_uniform", n_layers=4, width=16, seeds=2))
    >>> plot.median_line.get_ydata()[-1] < 0.2
    np.True_
    """

    def __init__(
        self,
        figure: Figure | None = None,
        figsize=(7.5, 4.6),
        decorated: bool = True,
        steady_x: bool = False,
    ):
        figsize, decorated = size_pair("figsize", figsize), flag("decorated", decorated)
        steady_x = flag("steady_x", steady_x)
        if figure_checked("figure", figure, none=True) is None:
            figure = Figure(figsize=figsize, dpi=100)
            FigureCanvasAgg(figure)  # so that update() renders, as a live canvas would
        self.figure = figure
        # A live plot's x axis grows in steps (`layer_span`): a depth slider then
        # moves the data over a kept frame, not the whole figure, most of the time.
        self.steady_x = steady_x
        # Room for the title, the legend and the note below the x label.
        top, bottom, left = (0.92, 0.27, 0.1) if decorated else (0.97, 0.2, 0.08)
        self.figure.subplots_adjust(left=left, right=0.97, top=top, bottom=bottom)
        ax = self.ax = self.figure.add_subplot()
        ax.set_yscale("log")
        # Minor ticks on a log axis cost more to draw than everything else together;
        # fixed decades, set on each update, also never overflow at 1e300.
        self.yticks = ticker.FixedLocator([1.0])
        ax.yaxis.set_major_locator(self.yticks)
        ax.yaxis.set_minor_locator(ticker.NullLocator())
        ax.xaxis.set_major_locator(ticker.MaxNLocator(nbins=6, integer=True))
        ax.tick_params(labelsize=TICK_FONTSIZE)
        ax.set_xlabel("layer ℓ")
        # One collection of horizontal lines at the decades: a single path to draw,
        # where a grid draws one line per tick.
        self.decades = ax.hlines(
            [], 0, 1, transform=ax.get_yaxis_transform(), color="0.85", lw=0.8, zorder=0
        )

        # The band is one polygon, out along the lowest seed and back along the highest:
        # a third of the time fill_between's collection takes to draw.
        color = initializer_color("xavier_uniform")  # until update() says which initializer
        self.band = ax.add_patch(Polygon([(0.0, 1.0), (1.0, 1.0)], color=color, alpha=0.25, lw=0))
        # Pinned curves are part of the frame: they do not move while a slider does.
        self.pin_lines = [
            ax.plot([], [], "-", color=color, lw=2.2, alpha=PIN_ALPHA, zorder=1)[0]
            for color in PIN_COLORS
        ]
        self.pins: list[tuple[DepthResult, str]] = []
        # The least y range shown, (bottom, top), or None: a presentation keeps one axis for
        # all the steps of a demonstration; the axis still widens where the data leave it.
        self.ylim: tuple[float, float] | None = None
        self._pins_version = 0
        self._drawn_pins: tuple = ()
        (self.weight_line,) = ax.plot([], [], "s-", color=WEIGHT_COLOR, ms=3, lw=1.2)
        (self.weight_theory_line,) = ax.plot([], [], ":", color=WEIGHT_COLOR, lw=1.2)
        (self.median_line,) = ax.plot([], [], "o-", color=color, ms=3, lw=1.5)
        (self.theory_line,) = ax.plot([], [], "--", color="black", lw=1.2)
        self.reference = ax.axhline(1.0, color="0.45", lw=0.9, ls=":")
        marks = dict(ls="none", ms=8, clip_on=False, zorder=5)
        (self.overflow_marks,) = ax.plot([], [], "^", color=OVERFLOW_COLOR, **marks)
        (self.underflow_marks,) = ax.plot([], [], "v", color=UNDERFLOW_COLOR, **marks)
        # Below the x label (and above the legend, if any): never on top of a curve.
        y = 0.105 if decorated else 0.04
        self.note = self.figure.text(0.01, y, "", va="center", fontsize=9, color=OVERFLOW_COLOR)
        # Title, legend and y label are text drawn anew on every update: most of the
        # cost of a redraw. A live explorer shows them as HTML instead (decorated=False).
        self.decorated = decorated
        self.legend = None
        if decorated:
            # A legend below the axes never covers data, and a fixed place is cheap to draw.
            self.legend = self.figure.legend(
                [self.median_line, self.band, self.theory_line, self.reference],
                ["median of seeds", "min to max", "theory", "input: 1"],
                loc="lower center", ncols=4, fontsize=9, frameon=False,
            )  # fmt: skip

        self._moving = [self.band, self.weight_line, self.weight_theory_line, self.median_line]
        self._moving += [self.theory_line, self.overflow_marks, self.underflow_marks]
        self._start_blitting()

    def set_pins(self, pins) -> None:
        """Show `pins`, (DepthResult, label) pairs, faded, from the next update on.

        Only the pins of the direction shown are drawn; at most MAX_PINS.
        """
        accepted = f"a list of at most {MAX_PINS} (DepthResult, label) pairs"
        if not isinstance(pins, (list, tuple)) or not all(
            isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], DepthResult)
            and isinstance(p[1], str) for p in pins
        ):  # fmt: skip
            raise KindError(f"pins must be {accepted}, got {shown(pins)}")
        if len(pins) > MAX_PINS:
            raise ValueError(f"pins must be {accepted}, got {shown(pins)}")
        self.pins = list(pins)
        self._pins_version += 1

    def shown_pins(self, direction: str) -> list[tuple[int, DepthResult, str]]:
        """(slot, result, label) of the pins drawn with `direction`; the slot picks the colour."""
        one_of("direction", direction, QUANTITIES)
        return [(k, r, label) for k, (r, label) in enumerate(self.pins) if r.direction == direction]

    def update(self, result: DepthResult, draw: bool = True) -> None:
        """Show `result`: new data in the same artists, new limits, one redraw."""
        ax, layers = self.ax, as_result(result).layers
        flag("draw", draw)
        pins = self.shown_pins(result.direction)
        weights = result.weight_per_seed is not None
        extra = [p.median for _, p, _ in pins]
        if weights:
            extra += [result.weight_median[1:], result.weight_theory[1:]]
        bottom, top = log_limits(result.low, result.high, result.theory, *extra)
        if self.ylim is not None:
            bottom, top = min(bottom, self.ylim[0]), max(top, self.ylim[1])
        median = np.asarray(result.median, dtype=float)
        color = initializer_color(result.initializer)
        self.median_line.set_color(color)
        self.band.set_color(color)
        self.median_line.set_data(layers, log_drawable(median))
        self.theory_line.set_data(layers, log_drawable(result.theory))
        # The band keeps inf and 0 in view by clipping them to the axis edges.
        low = np.clip(np.nan_to_num(result.low, posinf=top), bottom, top)
        high = np.clip(np.nan_to_num(result.high, posinf=top), bottom, top)
        verts = np.concatenate([np.c_[layers, low], np.c_[layers[::-1], high[::-1]]])
        self.band.set_xy(verts)
        if weights:
            set_line(self.weight_line, layers[1:], log_drawable(result.weight_median[1:]))
            set_line(self.weight_theory_line, layers[1:], log_drawable(result.weight_theory[1:]))
        else:
            set_line(self.weight_line, [], [])
            set_line(self.weight_theory_line, [], [])
        for line in self.pin_lines:
            set_line(line, [], [])
        for slot, pinned, _ in pins:
            set_line(self.pin_lines[slot], pinned.layers, log_drawable(pinned.median))
        # Which pins, by the version of the list they came in: ids of objects are reused.
        self._drawn_pins = (self._pins_version, tuple(slot for slot, _, _ in pins))
        over, under = layers[np.isinf(median)], layers[median == 0]
        set_line(self.overflow_marks, over, np.full(len(over), top))
        set_line(self.underflow_marks, under, np.full(len(under), bottom))
        self.note.set_text(edge_note(result))

        depth = max([result.n_layers] + [p.n_layers for _, p, _ in pins])
        span = layer_span(depth) if self.steady_x else depth
        ax.set_xlim(-0.02 * span - 0.1, span * 1.02 + 0.1)
        ax.set_ylim(bottom, top)
        self.yticks.locs = decade_ticks(bottom, top)
        self.decades.set_segments([[(0, y), (1, y)] for y in self.yticks.locs])
        if self.decorated:
            ax.set_ylabel(quantity_label(result.direction))
            ax.set_title(settings_title(result), fontsize=10)
            self._rebuild_legend(result, pins)
        if draw:
            self._show()

    def _rebuild_legend(self, result: DepthResult, pins) -> None:
        """The figure legend for what `result` and the pins put on the axes."""
        handles = [self.median_line, self.band, self.theory_line, self.reference]
        labels = legend_labels(result)
        if result.weight_per_seed is not None:
            handles += [self.weight_line, self.weight_theory_line]
            labels += list(weight_labels())
        for slot, _, label in pins:
            handles.append(self.pin_lines[slot])
            labels.append(f"pinned: {label}")
        size = self.legend.get_texts()[0].get_fontsize()
        self.legend.remove()
        self.legend = self.figure.legend(
            handles, labels, loc="lower center", ncols=min(4, len(handles)) if len(handles) <= 4
            else 2, fontsize=size, frameon=False,
        )  # fmt: skip

    def _frame_state(self) -> tuple:
        """Everything the frame shows; when it changes, the frame is drawn anew."""
        texts = [self.note.get_text(), self.ax.get_ylabel(), self.ax.get_title()]
        if self.legend is not None:
            texts += [text.get_text() for text in self.legend.get_texts()]
        limits = (self.ax.get_xlim(), self.ax.get_ylim(), tuple(self.yticks.locs))
        pins = self._drawn_pins
        return limits, tuple(self.figure.bbox.bounds), tuple(texts), pins


# --- the values themselves at a few layers --------------------------------------------------

HISTOGRAM_PANELS = 4
HISTOGRAM_BINS = 41


def histogram_layers(depth: int, direction: str, panels: int = HISTOGRAM_PANELS) -> list[int]:
    """The layers a histogram view shows, spread along the depth in the direction of travel.

    Forward the activations h_1 .. h_depth; backward the gradients dloss/dh_{depth-1}
    .. dloss/dh_0 (dloss/dh_depth is the unit upstream gradient itself).

    >>> histogram_layers(20, "forward"), histogram_layers(20, "backward")
    ([1, 7, 14, 20], [19, 13, 6, 0])
    >>> histogram_layers(2, "forward")
    [1, 2]
    """
    depth, panels = integer("depth", depth, minimum=1), integer("panels", panels, minimum=1)
    first, last = (1, depth) if one_of("direction", direction, QUANTITIES) == "forward" else (
        depth - 1, 0)  # fmt: skip
    spread = np.linspace(first, last, min(panels, depth))
    return list(dict.fromkeys(int(round(v)) for v in spread))


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 5 times a power of 10 that is >= value (value > 0).

    Limits on this ladder stay put while a slider moves a little, so the frame
    is kept and only the bars are redrawn.

    >>> nice_ceiling(0.031), nice_ceiling(7.0), nice_ceiling(1.0)
    (0.05, 10.0, 1.0)
    """
    if not is_number(value):
        raise KindError(f"value must be a real number, got {shown(value)}")
    if not (math.isfinite(value) and value > 0):
        return 1.0
    decade = 10.0 ** math.floor(math.log10(value))
    return next(m * decade for m in (1.0, 2.0, 5.0, 10.0) if m * decade >= value * (1 - 1e-12))


def layer_stats(values: np.ndarray, activation_name: str, direction: str) -> tuple[str, np.ndarray]:
    """(the words printed on a histogram panel, the values its bars show).

    Forward ReLU: the fraction of entries that are exactly 0 (h = 0; a unit is *dead*
    only when it is 0 for every input, notebook 11), left out of the bars so that the
    positive half keeps its shape; tanh: the fraction saturated,
    |h| > 0.97. Other activations, and gradients: no words.

    >>> layer_stats(np.array([0.0, 0.0, 1.0, 2.0]), "relu", "forward")
    ('h = 0: 50% of entries', array([1., 2.]))
    """
    values = real_array("values", values, ndim=1, float64=False)
    if not len(values):
        raise ValueError("values must be a real array of 1 dimension, not empty, got none")
    instance("activation_name", activation_name, str, "an activation's name")
    one_of("direction", direction, QUANTITIES)
    if direction == "forward" and activation_name == "relu":
        zero = values == 0
        return f"h = 0: {100 * np.mean(zero):.0f}% of entries", values[~zero]
    if direction == "forward" and activation_name == "tanh":
        saturated = np.mean(np.abs(values) > TANH_SATURATED)
        return f"|h| > {TANH_SATURATED}: {100 * saturated:.0f}%", values
    return "", values


class HistogramPlot(BlitPlot):
    """The distribution of h_l (forward) or dloss/dh_l (backward) at a few layers.

    One panel per layer of `histogram_layers`, on shared axes: x symmetric around
    0, to the 99.5th percentile of |value| over every panel (on the 1-2-5 ladder);
    y the fraction of all the values (every seed's batch) in each of 41 bins.
    Each panel's words (`notes`): its layer, and the fraction of zero ReLU entries
    or of saturated tanh units (`layer_stats`). A decorated figure (a saved
    picture) draws them on the panels; a live one leaves them to HTML above the
    canvas (`panel_words`), as it does its title: four texts redrawn with the
    bars on every move would cost more than the bars and the frame together.

    >>> from tinyinit.physics.propagation import simulate
    >>> r = simulate("tanh", "xavier_normal", gain=3.0, n_layers=8, width=32, seeds=1,
    ...              sample_layers=histogram_layers(8, "forward"))
    >>> plot = HistogramPlot()
    >>> plot.update(r, draw=False)
    >>> [note.get_text().splitlines()[0] for note in plot.notes]
    ['layer 1', 'layer 3', 'layer 6', 'layer 8']
    >>> plot.notes[-1].get_text().splitlines()[1]
    '|h| > 0.97: 44%'
    """

    def __init__(self, figure: Figure | None = None, figsize=(7.5, 4.6), decorated: bool = True):
        figsize, decorated = size_pair("figsize", figsize), flag("decorated", decorated)
        if figure_checked("figure", figure, none=True) is None:
            figure = Figure(figsize=figsize, dpi=100)
            FigureCanvasAgg(figure)
        self.figure = figure
        top = 0.85 if decorated else 0.97  # live: the words are HTML above the canvas
        self.figure.subplots_adjust(left=0.08, right=0.98, top=top, bottom=0.14, wspace=0.08)
        self.axes = list(self.figure.subplots(1, HISTOGRAM_PANELS, sharex=True, sharey=True))
        self.bars, self.notes = [], []
        for ax in self.axes:
            edges = np.linspace(-1.0, 1.0, HISTOGRAM_BINS + 1)
            color = initializer_color("xavier_uniform")  # until update() says which initializer
            self.bars.append(ax.stairs(np.zeros(HISTOGRAM_BINS), edges, fill=True, color=color))
            self.notes.append(
                ax.text(
                    0.04, 0.96, "", transform=ax.transAxes, va="top", fontsize=8.5, linespacing=1.3
                )  # fmt: skip
            )
            ax.xaxis.set_major_locator(ticker.MaxNLocator(nbins=3, symmetric=True))
            ax.yaxis.set_major_locator(ticker.MaxNLocator(nbins=4))
            ax.tick_params(labelsize=TICK_FONTSIZE)
        for ax in self.axes[1:]:  # shared axes: the numbers once, on the first panel
            ax.tick_params(labelbottom=False, labelleft=False)
        self.axes[0].set_ylabel("fraction of values", fontsize=9)
        self.axes[0].set_xlabel("", fontsize=9, loc="left")  # update() writes its words
        # The title's Text, made once and kept: the figure's own is a private attribute.
        self.title = self.figure.suptitle("", fontsize=10)
        self.decorated = decorated
        for note in self.notes:
            note.set_visible(decorated)
        # Pinned samples, outlined in their pin's colour: part of the frame, as in DepthPlot.
        self.pin_bars = [
            [
                ax.stairs(np.zeros(HISTOGRAM_BINS), edges, fill=False, color=color,
                          alpha=PIN_ALPHA, lw=1.6, visible=False)
                for ax in self.axes
            ]
            for color in PIN_COLORS
        ]  # fmt: skip
        self.pins: list[tuple[int, dict[int, np.ndarray]]] = []
        self._pins_version = 0
        self._moving = self.bars + (self.notes if decorated else [])
        self._start_blitting()

    def set_pins(self, pins: Sequence[tuple[int, dict[int, np.ndarray]]]) -> None:
        """Outline `pins` from the next update on: (slot, samples of the layers shown), each in
        PIN_COLORS[slot], faded, on the current samples' bins (their values widen the x range)."""
        self.pins = _slotted(pins, dict, "samples by layer")
        self._pins_version += 1

    def panel_words(self) -> list[list[str]]:
        """The lines of words of each panel shown, left to right."""
        return [n.get_text().splitlines() for n in self.notes if n.get_text()]

    def update(self, result: DepthResult, draw: bool = True) -> None:
        """Show the samples of `result` (simulate(..., sample_layers=histogram_layers(...)))."""
        layers = histogram_layers(as_result(result).n_layers, result.direction)
        missing = [layer for layer in layers if layer not in (result.samples or {})]
        if missing:
            raise ValueError(
                f"result has no samples of layers {missing}: simulate it with "
                f"sample_layers=histogram_layers({result.n_layers}, {result.direction!r})"
            )
        self.update_samples(
            {layer: result.samples[layer] for layer in layers}, result.activation,
            result.direction, initializer_color(result.initializer), settings_title(result),
            draw=draw,
        )  # fmt: skip

    def update_samples(
        self,
        samples: dict[int, np.ndarray],
        activation_name: str,
        direction: str,
        color: str,
        title: str = "",
        draw: bool = True,
    ) -> None:
        """Show samples[layer], a panel per layer in order, in `color`, and the pins (`set_pins`)
        on the same bins; a decorated figure is titled `title`."""
        accepted = "a non-empty dict of 1-D real arrays by layer"
        if not isinstance(samples, dict) or not all(
            is_integer(k) and isinstance(v, np.ndarray) and v.ndim == 1
            and v.dtype.kind in "iuf" for k, v in samples.items()
        ):  # fmt: skip
            raise KindError(f"samples must be {accepted}, got {shown(samples)}")
        if not samples:
            raise ValueError(f"samples must be {accepted}, got {{}}")
        instance("activation_name", activation_name, str, "an activation's name")
        one_of("direction", direction, QUANTITIES)
        if not is_color_like(color) or not isinstance(color, str):
            kind = ValueError if isinstance(color, str) else KindError
            raise kind(f"color must be a matplotlib colour ('#0072B2'), got {shown(color)}")
        instance("title", title, str, "a text")
        flag("draw", draw)
        layers = list(samples)[: len(self.axes)]
        for bars in self.bars:
            bars.set_color(color)
        drawn, words = [], []
        for layer in layers:
            text, values = layer_stats(samples[layer], activation_name, direction)
            drawn.append(values[np.isfinite(values)])
            words.append(text)
        pinned = [
            (slot, [layer_stats(those[layer], activation_name, direction)[1] for layer in layers])
            for slot, those in self.pins
        ]
        everything = drawn + [v[np.isfinite(v)] for _, values in pinned for v in values]
        tops = [np.percentile(np.abs(v), 99.5) for v in everything if v.size]
        reach = nice_ceiling(max(tops, default=1.0) or 1.0)
        edges = np.linspace(-reach, reach, HISTOGRAM_BINS + 1)
        total = len(samples[layers[0]])
        highest = 0.0
        for bars in (b for row in self.pin_bars for b in row):
            bars.set_visible(False)
        for (slot, values), (_, those) in zip(pinned, self.pins):
            for k, layer in enumerate(layers):
                counts, _ = np.histogram(values[k], bins=edges)
                fractions = counts / len(those[layer])
                highest = max(highest, float(fractions.max(initial=0.0)))
                self.pin_bars[slot][k].set_data(fractions, edges)
                self.pin_bars[slot][k].set_visible(True)
        for k, ax in enumerate(self.axes):
            if k < len(layers):
                counts, _ = np.histogram(drawn[k], bins=edges)
                fractions = counts / total
                highest = max(highest, float(fractions.max(initial=0.0)))
                self.bars[k].set_data(fractions, edges)
                self.notes[k].set_text(f"layer {layers[k]}\n{words[k]}".strip())
                ax.set_visible(True)
            else:  # a stack shallower than the panels
                self.bars[k].set_data(np.zeros(HISTOGRAM_BINS), edges)
                self.notes[k].set_text("")
                ax.set_visible(False)
        limits = ((-reach, reach), (0.0, nice_ceiling(highest * 1.15) if highest > 0 else 1.0))
        # Setting shared limits walks every panel's callbacks: only when they change.
        if limits != (self.axes[0].get_xlim(), self.axes[0].get_ylim()):
            self.axes[0].set_xlim(*limits[0])
            self.axes[0].set_ylim(*limits[1])
        kind = "activations" if direction == "forward" else "gradients"
        what = f"{kind} {QUANTITIES[direction][1]}"
        self.axes[0].xaxis.label.set_text(f"value of the {what}")  # its size: set once, above
        if self.decorated:
            self.title.set_text(title)
        if draw:
            self._show()

    def _frame_state(self) -> tuple:
        ax = self.axes[0]
        shown = tuple(a.get_visible() for a in self.axes)
        texts = (ax.get_xlabel(), self.title.get_text())
        limits = (ax.get_xlim(), ax.get_ylim())
        return limits, shown, texts, tuple(self.figure.bbox.bounds), self._pins_version


def _slotted(pins, kind: type, what: str) -> list:
    """pins as a list of (slot, kind) pairs, at most MAX_PINS, each slot 0 .. MAX_PINS - 1."""
    accepted = f"a list of at most {MAX_PINS} (slot, {what}) pairs, slots 0 .. {MAX_PINS - 1}"
    if not isinstance(pins, (list, tuple)) or not all(
        isinstance(p, tuple) and len(p) == 2 and is_integer(p[0]) and isinstance(p[1], kind)
        for p in pins
    ):
        raise KindError(f"pins must be {accepted}, got {shown(pins)}")
    if len(pins) > MAX_PINS or any(not 0 <= slot < MAX_PINS for slot, _ in pins):
        raise ValueError(f"pins must be {accepted}, got {shown(pins)}")
    return list(pins)


# --- a run as it trains (tinyinit.networks.training.Trainer) --------------------------------------

# The minibatch loss is noisy: the figure draws its mean over this many steps (notebook 04's).
LOSS_WINDOW = 20
# The update-to-weight ratio a common rule of thumb wants (notebook 11): much less and a layer
# does not learn, much more and it is overwritten.
RULE_OF_THUMB_RATIO = 1e-3
# The loss axis reaches at most this far (4 times ln 10): a start with huge logits would
# otherwise flatten every later step against the axis. A caption says what lies above it.
MAX_LOSS_SHOWN = 10.0


def running_mean(values: np.ndarray, window: int = LOSS_WINDOW) -> np.ndarray:
    """The mean of each value and the window - 1 before it (fewer at the start).

    >>> running_mean(np.array([4.0, 2.0, 0.0, 2.0]), window=2)
    array([4., 3., 1., 1.])
    """
    # Window by window, not by differences of a cumulative sum: after a huge first loss
    # those differences would lose every digit of the small ones.
    values = real_array("values", values, ndim=1)
    window = integer("window", window, minimum=1)
    if values.size == 0:
        return values
    padded = np.concatenate([np.full(window - 1, np.nan), values])
    with warnings.catch_warnings():  # a window of NaN alone (a diverged run) means NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(np.lib.stride_tricks.sliding_window_view(padded, window), axis=1)


def step_span(steps: int) -> int:
    """The x axis of a live loss: at least 100 steps, then 1, 2, 5 times a power of 10, so that
    the axis moves a few times over a run and the frame is kept in between.

    >>> [step_span(n) for n in (0, 100, 101, 480, 2001)]
    [100, 100, 200, 500, 5000]
    """
    return int(nice_ceiling(max(integer("steps", steps, minimum=0), 100)))


class TrainingCurves(NamedTuple):
    """What a training figure shows of one run: the minibatch loss of every step, the test
    loss at the steps it was measured, the latest update-to-weight ratio of each layer, and
    the initializer (its colour).

    >>> TrainingCurves(np.ones(3), np.array([3]), np.array([2.3]), np.ones(2), "xavier").steps
    3
    """

    losses: np.ndarray
    test_steps: np.ndarray
    test_losses: np.ndarray
    update_ratio: np.ndarray
    initializer: str

    @property
    def steps(self) -> int:
        return len(self.losses)


class TrainingPlot(BlitPlot):
    """A run as it trains: the loss over the steps, and the update-to-weight ratio per layer.

    Left, linear: the minibatch loss's running mean over LOSS_WINDOW steps (solid) and
    the test loss where it was measured (dashed, dots), with ln 10, a uniform guess over
    ten classes (dotted), up to MAX_LOSS_SHOWN. Right, log: the update-to-weight ratio
    ||ΔW_l|| / ||W_l|| of each layer l (`TrainingCurves.update_ratio`), with the rule of
    thumb 10^-3 (dotted). Pinned runs (`set_pins`) are drawn faded, in PIN_COLORS: they
    are part of the frame, which is drawn again only when an axis or the pins change
    (the step axis grows in `step_span` steps), so a frame of a run that trains redraws
    only the current run's lines. Title and legend are the caller's (HTML, as in the
    explorers).

    >>> plot = TrainingPlot()
    >>> plot.update(TrainingCurves(np.full(30, 2.3), np.array([30]), np.array([2.2]),
    ...                            np.full(21, 1e-3), "kaiming_normal"))
    >>> [float(x) for x in plot.loss_ax.get_xlim()], float(plot.ratio_line.get_ydata()[0])
    ([0.0, 100.0], 0.001)
    """

    def __init__(self, figure: Figure | None = None, figsize=(7.5, 3.0)):
        figsize = size_pair("figsize", figsize)
        if figure_checked("figure", figure, none=True) is None:
            figure = Figure(figsize=figsize, dpi=100)
            FigureCanvasAgg(figure)
        self.figure = figure
        self.figure.subplots_adjust(left=0.08, right=0.98, top=0.95, bottom=0.17, wspace=0.3)
        self.loss_ax, self.ratio_ax = self.figure.subplots(
            1, 2, gridspec_kw={"width_ratios": (3, 2)}
        )
        loss, ratio = self.loss_ax, self.ratio_ax
        loss.set_xlabel("step")
        loss.set_ylabel("loss")
        loss.axhline(math.log(10), color="0.45", lw=0.9, ls=":")
        ratio.set_yscale("log")
        ratio.set_xlabel("layer ℓ")
        ratio.set_ylabel(r"$\|\Delta W_\ell\| / \|W_\ell\|$")
        ratio.axhline(RULE_OF_THUMB_RATIO, color="0.45", lw=0.9, ls=":")
        ratio.xaxis.set_major_locator(ticker.MaxNLocator(nbins=5, integer=True))
        # Fixed decades, as in DepthPlot: minor log ticks cost more than the data.
        self.yticks = ticker.FixedLocator([RULE_OF_THUMB_RATIO])
        ratio.yaxis.set_major_locator(self.yticks)
        ratio.yaxis.set_minor_locator(ticker.NullLocator())
        for ax in (loss, ratio):
            ax.tick_params(labelsize=TICK_FONTSIZE)
        color = initializer_color("xavier")  # until update() says which initializer
        self.pin_lines = [
            (
                loss.plot([], [], "-", color=c, lw=2.0, alpha=PIN_ALPHA)[0],
                loss.plot([], [], "o--", color=c, ms=3, lw=1.2, alpha=PIN_ALPHA)[0],
                ratio.plot([], [], "o-", color=c, ms=3, lw=2.0, alpha=PIN_ALPHA)[0],
            )
            for c in PIN_COLORS
        ]
        self.pins: list[tuple[int, TrainingCurves]] = []
        self._pins_version = 0
        (self.train_line,) = loss.plot([], [], "-", color=color, lw=1.8)
        (self.test_line,) = loss.plot([], [], "o--", color=color, ms=3.5, lw=1.2)
        (self.ratio_line,) = ratio.plot([], [], "o-", color=color, ms=3.5, lw=1.5)
        self._moving = [self.train_line, self.test_line, self.ratio_line]
        self._start_blitting()

    def set_pins(self, pins: Sequence[tuple[int, TrainingCurves]]) -> None:
        """Draw `pins`, (slot, TrainingCurves), faded in PIN_COLORS[slot], from the next update."""
        self.pins = _slotted(pins, TrainingCurves, "TrainingCurves")
        self._pins_version += 1
        for lines in self.pin_lines:
            for line in lines:
                set_line(line, [], [])
        for slot, pinned in self.pins:
            self._set_curves(self.pin_lines[slot], pinned)

    @staticmethod
    def _set_curves(lines, curves: TrainingCurves) -> None:
        train, test, ratio = lines
        set_line(train, np.arange(1, curves.steps + 1), running_mean(curves.losses))
        set_line(test, curves.test_steps, curves.test_losses)
        layers = np.arange(1, len(curves.update_ratio) + 1)
        set_line(ratio, layers, log_drawable(curves.update_ratio))

    def update(self, curves: TrainingCurves, draw: bool = True) -> None:
        """Show `curves`: new data in the same lines; new limits only when the data leaves them."""
        color = initializer_color(
            instance("curves", curves, TrainingCurves, "TrainingCurves").initializer
        )
        flag("draw", draw)
        for line in self._moving:
            line.set_color(color)
        self._set_curves((self.train_line, self.test_line, self.ratio_line), curves)
        runs = [curves] + [pinned for _, pinned in self.pins]
        self.loss_ax.set_xlim(0, step_span(max(run.steps for run in runs)))
        shown = [running_mean(run.losses) for run in runs] + [run.test_losses for run in runs]
        finite = np.concatenate([v[np.isfinite(v)] for v in shown] + [[math.log(10)]])
        self.loss_ax.set_ylim(0, min(nice_ceiling(1.05 * float(finite.max())), MAX_LOSS_SHOWN))
        bottom, top = log_limits(RULE_OF_THUMB_RATIO, *(run.update_ratio for run in runs))
        layers = max(len(run.update_ratio) for run in runs)
        self.ratio_ax.set_xlim(0.5, layers + 0.5)
        self.ratio_ax.set_ylim(bottom, top)
        self.yticks.locs = decade_ticks(bottom, top)
        if draw:
            self._show()

    def _frame_state(self) -> tuple:
        limits = (self.loss_ax.get_xlim(), self.loss_ax.get_ylim(), self.ratio_ax.get_xlim())
        ratio = (self.ratio_ax.get_ylim(), tuple(self.yticks.locs))
        return limits, ratio, tuple(self.figure.bbox.bounds), self._pins_version
