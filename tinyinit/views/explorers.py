"""The live explorers: widgets over the numerics, one figure each, updated in place.

`DepthExplorer` (below, with `depth_explorer`) puts sliders over
`tinyinit.physics.propagation.simulate`; `ResidualStreamExplorer` (at the end) puts a
slider and a toggle over `tinyinit.physics.residual.stream_variances`.

    %matplotlib widget
    from tinyinit.views.explorers import depth_explorer
    ex = depth_explorer()
    ex

Every control changes one argument of `tinyinit.physics.propagation.simulate`; the
explorer asks its own `tinyinit.physics.propagation_fast.UnitWeights` for the same result (unit
weight matrices and passes are kept, so a move costs few matrix products), moves
the figure's artists and rewrites the readout. The controls are the rows of a
table (`DEPTH_CONTROLS`, `RESIDUAL_CONTROLS`): a new control is a new row. A notebook
cell can drive it exactly as a hand on a slider does:

    ex.n_layers.value = 50
    ex.result.measured_end, ex.readout.value

Compare: "pin" keeps the current curve on the plot, faded and named, up to
four; the readout then says how far the current curve ends from each pin
("Kaiming normal, fan_in ends 2^19.6 above Xavier uniform at layer 20").
"clear pins" removes them.

Inside the layers: the "histograms" view shows the values themselves (the
activations forward, the gradients backward) at four layers along the depth, on
shared axes, with the fraction of zero ReLU entries or saturated tanh entries; the same
sliders drive it. Backward, the curve view adds the weight gradient's mean
square per layer, what a training step would move each weight by.

With ipympl (`%matplotlib widget`) the figure is a live canvas. Under any other
backend (inline, Agg) the figure is rendered to a PNG shown in an image widget,
so the explorer still works, only less smoothly.

A slider dragged in the browser sends a change per pixel; the kernel answers
the latest only (`DepthExplorer.update` is deferred for changes that come from
the browser, told apart by `tinyinit.views.browser_transport.BrowserChanges`, and the changes
that arrive meanwhile fold into one update), so a drag never leaves a queue of
stale pictures behind it.
"""

from __future__ import annotations

import asyncio
import functools
import html
import math
import threading
from contextlib import contextmanager
from dataclasses import dataclass

import matplotlib
import numpy as np
from matplotlib.colors import to_hex, to_rgba

from .._extras import extra
from ..core.activations import ACTIVATIONS, SATURATED_SLOPE, TANH_SATURATED
from ..core.arguments import KindError, flag, instance, integer, number, one_of
from ..core.init import INITIALIZERS, initializer_row
from ..physics.depth_result import DIRECTIONS, DepthResult, as_result
from ..physics.gains import initial_gain, suggested_gain
from ..physics.mean_field import mean_field, q_map_slope
from ..physics.propagation_fast import UnitWeights
from ..physics.residual import ResidualStack, block_variances, out_scale
from ..physics.variance import root_mean_square
from .browser_transport import BrowserChanges, keep_picture_for_static_pages
from .defaults import DEPTH_START
from .figures import png_bytes
from .naming import compare_line, pin_label, power_of_two, settings_title
from .plots import DepthPlot, HistogramPlot, edge_note, histogram_layers, legend_labels
from .style import (
    MAX_PINS,
    PIN_ALPHA,
    PIN_COLORS,
    TICK_FONTSIZE,
    WEIGHT_COLOR,
    initializer_color,
    quantity_label,
    weight_labels,
)

__all__ = [
    "DepthExplorer",
    "ResidualStreamExplorer",
    "caption_html",
    "depth_explorer",
    "gain_note",
    "histogram_caption_html",
    "panel_row_html",
    "readout_lines",
]

with extra("lab", "the explorer"):  # the widgets are not in the core install
    import ipywidgets as widgets

    from .a11y import Accessible, live

WIDTHS = (16, 32, 64, 128, 256, 512)
# The sliders' ends: every move reruns seeds x layers products, so fewer than the command
# line's figure allows (tinyinit.cli's MAX_LAYERS and MAX_SEEDS).
SLIDER_MAX_LAYERS = 100
SLIDER_MAX_SEEDS = 5


def _number(v: float) -> str:
    return "inf" if math.isinf(v) else f"{v:.3g}"


def readout_lines(result: DepthResult) -> list[str]:
    """The readout in words: where the signal arrives, measured and in theory.

    >>> from tinyinit.physics.propagation import simulate
    >>> r = simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=3, width=16, seeds=1)
    >>> readout_lines(r)[0]
    'layer 3: measured 0.55, theory 1'
    """
    end = as_result(result).end_layer
    first = (
        f"layer {end}: measured {_number(result.measured_end)}, theory {_number(result.theory_end)}"
    )
    what = "activations" if result.direction == "forward" else "gradient at the input"
    lo, hi = result.low[end], result.high[end]
    second = f"mean square of the {what}; median of {len(result.seeds)} seeds"
    if len(result.seeds) > 1:
        second += f" (from {_number(lo)} to {_number(hi)})"
    m = result.measured_end
    if 0 < m < math.inf:
        second += f", = {power_of_two(m)} of the {'input' if end else 'upstream gradient'}"
    third = f"weights: std = {result.weight_std:.4g} ({INITIALIZERS[result.initializer].formula}), "
    third += f"width {result.width}, batch {result.batch} per seed"
    note = edge_note(result)
    return [first, second, third] + ([note] if note else [])


def gain_note(activation: str, gain: float, n_layers: int) -> str:
    """The words beside the gain slider: where the suggested gain comes from, and for gelu
    and silu, which torch's table lacks, that it holds one layer and not a deep stack.

    The quadrature gain makes q = 1 a fixed point of the mean-field map, but the map's
    slope there (`tinyinit.physics.mean_field.q_map_slope`) is above 1: a deep stack leaves it. The
    note says so with the slope, and with what the theory gives at the slider's gain and
    the current n_layers (`mean_field`, the dashed curve).

    >>> gain_note("relu", 2**0.5, 20)
    "calculate_gain('relu') = 1.414"
    >>> print(gain_note("gelu", 1.5335304411955353, 20))
    gelu: not in torch's table; 1/√E[φ(z)²] by quadrature = 1.534 keeps <b>one</b> layer's \
mean square, but is unstable over depth (the q-map's slope there is 1.14 &gt; 1): at gain \
1.534 the theory gives 16 at layer 20
    """
    suggested, source = suggested_gain(activation)
    gain = number("gain", gain, minimum=0)
    n_layers = integer("n_layers", n_layers, minimum=1)
    if source == "calculate_gain":
        return f"calculate_gain('{activation}') = {suggested:.4g}"
    slope = q_map_slope(activation, suggested, 1.0)
    end = mean_field(activation, gain=gain, n_layers=n_layers)[-1]
    holds = "but is unstable over depth" if slope > 1 else "and holds over depth"
    return (
        f"{activation}: not in torch's table; 1/√E[φ(z)²] by quadrature = "
        f"{suggested:.4g} keeps <b>one</b> layer's mean square, {holds} "
        f"(the q-map's slope there is {slope:.3g} {'&gt;' if slope > 1 else '≤'} 1): "
        f"at gain {gain:.4g} the theory gives {end:.2g} at layer {n_layers}"
    )


def _pins(pins) -> list[tuple[int, str]]:
    """pins checked: (slot, label) pairs, a slot of PIN_COLORS and a label."""
    accepted = f"(slot, label) pairs, slot from 0 to {MAX_PINS - 1}"
    instance("pins", pins, (list, tuple), accepted)
    for pin in pins:
        if not (isinstance(pin, (list, tuple)) and len(pin) == 2 and isinstance(pin[1], str)):
            raise KindError(f"pins must be {accepted}, got an item {pin!r}")
        integer("pins", pin[0], minimum=0, maximum=MAX_PINS - 1)
    return list(pins)


def swatch(color: str, mark: str, alpha: float = 1.0) -> str:
    """`mark` in `color` (faded to `alpha`) as HTML: a legend's sample of a line or a band.

    >>> swatch("#000000", "━━", 0.5)
    '<span style="color:rgba(0,0,0,0.5)">━━</span>'
    """
    r, g, b = (round(255 * v) for v in to_rgba(color)[:3])
    return f'<span style="color:rgba({r},{g},{b},{alpha})">{mark}</span>'


def caption_html(result: DepthResult, pins=()) -> str:
    """The figure's title and legend as HTML, shown above the live canvas.

    Text is what costs most in a matplotlib redraw; as HTML it costs nothing.

    >>> from tinyinit.physics.propagation import simulate
    >>> r = simulate("relu", "xavier_uniform", n_layers=3, width=16, seeds=2)
    >>> "median of 2 seeds" in caption_html(r)
    True
    """
    as_result(result)
    pins = _pins(pins)
    color = initializer_color(result.initializer)
    swatches = [
        f'<span style="color:{to_hex(color)}">●━</span>',
        swatch(color, "██", 0.35),
        '<span style="color:black">╍╍</span>',
        '<span style="color:#737373">┈┈</span>',
    ]
    labels = legend_labels(result)
    if result.weight_per_seed is not None:
        swatches += [swatch(WEIGHT_COLOR, "■━"), swatch(WEIGHT_COLOR, "┈┈")]
        labels += list(weight_labels(plain=True))
    for slot, label in pins:
        swatches.append(swatch(PIN_COLORS[slot], "━━", PIN_ALPHA))
        labels.append(f"pinned: {label}")
    legend = " &nbsp; ".join(
        f'<span style="white-space:nowrap">{swatch} {html.escape(label)}</span>'
        for swatch, label in zip(swatches, labels)
    )
    y = html.escape(quantity_label(result.direction, plain=True))
    return f"<b>{html.escape(settings_title(result))}</b><br>y: {y}, log scale &nbsp; {legend}"


def histogram_caption_html(result: DepthResult) -> str:
    """The histogram view's title and key, as HTML above its canvas.

    >>> from tinyinit.physics.propagation import simulate
    >>> r = simulate("relu", "xavier_uniform", n_layers=3, width=16, seeds=2,
    ...              sample_layers=(1, 2, 3))
    >>> "h = 0" in histogram_caption_html(r)
    True
    """
    layers = histogram_layers(as_result(result).n_layers, result.direction)
    if any(layer not in (result.samples or {}) for layer in layers):
        raise ValueError(
            f"result must hold the samples of layers {layers}: simulate it with "
            f"sample_layers=histogram_layers({result.n_layers}, {result.direction!r})"
        )
    what = "activations hℓ" if result.direction == "forward" else "gradients ∂loss/∂hℓ"
    key = (
        f"the {what} at {len(histogram_layers(result.n_layers, result.direction))} layers, "
        f"{len(result.seeds)} seeds × {result.batch} samples × {result.width} units each; "
        "shared axes; bars: fraction of all values per bin"
    )
    layers = histogram_layers(result.n_layers, result.direction)
    rms = ", ".join(f"{root_mean_square(result.samples[k]):.3g}" for k in layers)
    key += f"; rms at layers {', '.join(map(str, layers))}: {rms}"
    key += zero_and_saturated_words(result.activation, result.direction)
    return f"<b>{html.escape(settings_title(result))}</b><br>{html.escape(key)}"


def zero_and_saturated_words(activation_name: str, direction: str) -> str:
    """What a histogram's panel words count (`tinyinit.views.plots.layer_stats`), for its key.

    >>> zero_and_saturated_words("relu", "forward")
    '; h = 0: entries exactly zero (left out of the bars)'
    """
    if direction == "forward" and activation_name == "relu":
        return "; h = 0: entries exactly zero (left out of the bars)"
    if direction == "forward" and activation_name == "tanh":
        return f"; |h| > {TANH_SATURATED}: saturated entries, where tanh' < {SATURATED_SLOPE:.2f}"
    return ""


def panel_row_html(plot: HistogramPlot, font_px: float = 12) -> str:
    """The panels' words in a row as wide as the figure, each over its panel, in font_px type.

    >>> from tinyinit.physics.propagation import simulate
    >>> r = simulate("relu", "xavier_uniform", n_layers=2, width=16, seeds=1,
    ...              sample_layers=(1, 2))
    >>> plot = HistogramPlot(decorated=False)
    >>> plot.update(r, draw=False)
    >>> panel_row_html(plot).count("layer ")
    2
    """
    figure = instance("plot", plot, HistogramPlot, "a HistogramPlot").figure
    font_px = number("font_px", font_px, above=0)
    params = figure.subplotpars
    panels, px = len(plot.axes), figure.get_figwidth() * figure.dpi
    # The grid repeats the figure's: its margins, panel widths and gaps, in pixels.
    panel = (params.right - params.left) * px / (panels + (panels - 1) * params.wspace)
    cells = "".join(
        f"<span>{'<br>'.join(html.escape(line) for line in lines)}</span>"
        for lines in plot.panel_words()
    )
    style = (
        f"display:grid;grid-template-columns:repeat({panels},{panel:.0f}px);"
        f"column-gap:{panel * params.wspace:.0f}px;margin-left:{params.left * px:.0f}px;"
        f"font-size:{font_px:g}px;line-height:1.3"
    )
    return f'<div style="{style}">{cells}</div>'


# --- what the explorers share: the controls as a table, the figure and its fallback ----------


@dataclass(frozen=True)
class Control:
    """One row of an explorer's table of controls.

    name: the explorer's attribute for the widget, and the key of its start value;
    kind: the ipywidgets class; options: the widget's own arguments (its options or its
    range, style, layout); label: the words beside it ("" for none); tooltip: what a hover
    and a screen reader say; css: the class the page (and the browser tests) find it by.
    """

    name: str
    kind: type
    options: dict
    label: str = ""
    tooltip: str | None = None
    css: str | None = None

    def build(self, value=None, **options) -> widgets.Widget:
        """The widget, at `value` if given; `options` override the row's.

        >>> row = Control("depth", widgets.IntSlider, dict(min=1, max=100), "depth")
        >>> slider = row.build(20, max=50)
        >>> slider.value, slider.max, slider.description
        (20, 50, 'depth')
        """
        kwargs = {**self.options, **options}
        if self.label:
            kwargs["description"] = self.label
        if self.tooltip is not None:
            kwargs["tooltip"] = self.tooltip
        if value is not None:
            kwargs["value"] = value
        widget = self.kind(**kwargs)
        if self.css is not None:
            widget.add_class(self.css)
        return widget


WIDE = {"description_width": "initial"}

# The depth explorer's controls; DepthExplorer's arguments of the same names start them.
DEPTH_CONTROLS = (
    Control(
        "initializer", widgets.Dropdown,
        dict(options=[(row.label, key) for key, row in INITIALIZERS.items()], style=WIDE),
        "initializer",
        "How the weights are drawn: Xavier (Glorot 2010), Kaiming (He 2015), "
        "or a plain normal with the std you set",
    ),
    Control(
        "activation", widgets.Dropdown, dict(options=list(ACTIVATIONS)), "activation",
        "The nonlinearity phi applied after every layer: h = phi(W h_prev)",
        css="tinyinit-activation",
    ),
    Control(
        "direction", widgets.ToggleButtons,
        dict(
            options=[("forward: activations", "forward"), ("backward: gradients", "backward")],
            style={"button_width": "150px"},
            tooltips=["mean square of the activations h_l, input to output",
                      "mean square of dloss/dh_l for a unit random upstream gradient, "
                      "output to input"],
        ),
    ),
    # No step: a slider with one snaps in the browser and sends the snapped
    # value back, so sqrt(2) would become 1.41 and Kaiming would lose 11%.
    Control(
        "gain", widgets.FloatSlider,
        dict(min=0.0, max=3.0, step=None, readout_format=".3f", continuous_update=True),
        "gain",
        "Multiplies the std of Xavier and Kaiming. Kaiming starts at "
        "calculate_gain(activation) (gelu, silu: the quadrature gain); Xavier at 1, as in torch",
        css="tinyinit-gain",
    ),
    Control(
        "use_default_gain", widgets.Button, dict(layout={"width": "150px"}),
        "use calculate_gain",
        "Set the gain to torch's calculate_gain for this activation "
        "(gelu, silu: the quadrature gain shown beside it)",
    ),
    Control(
        "reset_button", widgets.Button, dict(layout={"width": "80px"}), "reset",
        "Back to the settings the explorer started with",
    ),
    Control(
        "std", widgets.FloatLogSlider,
        dict(base=10, min=-3, max=1, step=0.01, readout_format=".3g"),
        "std",
        "The standard deviation of every weight for 'normal with std' "
        "(GPT-2 uses 0.02; 1 is the 'standard normal weights' of the module card)",
    ),
    Control(
        "n_layers", widgets.IntSlider, dict(min=1, max=SLIDER_MAX_LAYERS), "depth",
        "Number of layers in the stack: the last one is where the readout looks",
        css="tinyinit-depth",
    ),
    Control(
        "width", widgets.Dropdown, dict(options=WIDTHS), "width",
        "Units per layer (n_in = n_out = width): wider layers fluctuate less",
    ),
    Control(
        "seeds", widgets.IntSlider, dict(min=1, max=SLIDER_MAX_SEEDS), "seeds",
        "Independent networks (weights, inputs) drawn from PCG32 seeds 0, 1, ...: "
        "the band shows their spread",
    ),
    Control(
        "view", widgets.ToggleButtons,
        dict(
            options=[("mean square", "curves"), ("histograms", "histograms")],
            style={"button_width": "110px"},
            tooltips=["one number per layer: the mean square, over depth, with its theory",
                      "the values themselves at four layers along the depth: their spread, "
                      "zero ReLU entries, saturated tanh entries"],
        ),
        css="tinyinit-view",
    ),
    Control(
        "pin_button", widgets.Button, dict(icon="thumb-tack", layout={"width": "80px"}), "pin",
        f"Keep the current curve on the plot, faded, to compare with what "
        f"comes next (up to {MAX_PINS}; the oldest goes first)",
        css="tinyinit-pin",
    ),
    Control(
        "clear_pins_button", widgets.Button, dict(layout={"width": "100px"}), "clear pins",
        "Remove every pinned curve", css="tinyinit-clear-pins",
    ),
)  # fmt: skip

# The residual-stream explorer's controls; n_layers' range is the stack's, set when built.
RESIDUAL_CONTROLS = (
    Control(
        "n_layers", widgets.IntSlider, dict(min=1, continuous_update=True), "blocks N",
        "number of Transformer blocks (2 residual additions each)", css="tinyinit-blocks",
    ),
    Control(
        "scaling", widgets.ToggleButton, dict(icon="check"), "scale by 1/√(2N)",
        "multiply every output projection's std by 1/sqrt(2N), as nanoGPT and Megatron-LM do",
        css="tinyinit-scaling",
    ),
    Control(
        "both", widgets.ToggleButton, {}, "show both",
        "also draw the other setting of the scaling, faded: "
        "with and without 1/sqrt(2N) on one plot",
        css="tinyinit-both",
    ),
)  # fmt: skip


def _is_widget_backend() -> bool:
    backend = matplotlib.get_backend().lower()
    return "ipympl" in backend or backend in ("widget", "ipympl")


def one_at_a_time(method):
    """`method` under its explorer's lock. JupyterLab (4.4 and later) may deliver a widget's
    messages on a kernel subshell, a thread of its own, while another thread runs a cell, the
    training loop or another widget's message: each change an explorer makes, and each
    picture it draws, is made whole before the next begins."""

    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self.lock:
            return method(self, *args, **kwargs)

    return locked


class Explorer:
    """What the explorers are: controls built from a table, one `figure`, and `app`, the
    layout a notebook displays (the explorer displays as it).

    `figure_view` is the widget that shows the figure: ipympl's live canvas, or, without
    one (an inline or Agg backend), a PNG image rendered anew at each update. `lock`: see
    `one_at_a_time`.
    """

    figure = None
    app = None

    def __init__(self) -> None:
        self.lock = threading.RLock()

    def _build(self, table, values: dict, **options) -> None:
        """Each row of `table` as the attribute of its name, at values[name] if there."""
        for control in table:
            widget = control.build(values.get(control.name), **options.get(control.name, {}))
            setattr(self, control.name, widget)

    @staticmethod
    def _new_figure(figsize):
        """An ipympl figure under %matplotlib widget, else None (the plot makes an Agg one)."""
        if not _is_widget_backend():
            return None
        import matplotlib.pyplot as plt

        with plt.ioff():  # shown inside the layout, not on its own
            figure = plt.figure(figsize=figsize)
        figure.canvas.header_visible = False
        figure.canvas.footer_visible = False
        figure.canvas.toolbar_visible = False
        return figure

    def _figure_widget(self, figure, png_fallback: bool = True) -> widgets.Widget:
        """figure's live canvas, else a PNG image (png_fallback) or an empty HTML (not)."""
        self._image = None
        if isinstance(figure.canvas, widgets.DOMWidget):
            return figure.canvas
        if png_fallback:
            self._image = widgets.Image(format="png")
            return self._image
        return widgets.HTML()

    def _show(self, figure, alt: str | None = None) -> None:
        """After an update: the PNG rendered anew (its text alternative `alt`), or the live
        canvas's picture kept for a static page."""
        if self._image is None:
            keep_picture_for_static_pages(figure.canvas, figure)
            return
        self._image.value = png_bytes(figure)
        if alt is not None:
            self._image.tooltip = alt

    def _repr_mimebundle_(self, **kwargs):
        return self.app._repr_mimebundle_(**kwargs)


VIEWS = ("curves", "histograms")
GAIN_RANGE, STD_RANGE = (0.0, 3.0), (1e-3, 10.0)  # the gain and std sliders' ends


def _figsize(figsize) -> tuple[float, float]:
    if not (isinstance(figsize, (tuple, list)) and len(figsize) == 2):
        raise KindError(f"figsize must be (width, height) in inches, got {figsize!r}")
    return tuple(number("figsize", size, above=0, maximum=100) for size in figsize)


def _depth_settings(
    initializer, activation, gain, std, n_layers, width, seeds, direction, view
) -> dict:
    """The depth explorer's start values, each checked against its control's range."""
    row = initializer_row(initializer)
    one_of("activation", activation, ACTIVATIONS)
    if gain is None:
        gain = initial_gain(initializer, activation)
    return dict(
        initializer=row.key,
        activation=activation,
        gain=number("gain", gain, minimum=GAIN_RANGE[0], maximum=GAIN_RANGE[1]),
        std=number("std", std, minimum=STD_RANGE[0], maximum=STD_RANGE[1]),
        n_layers=integer("n_layers", n_layers, minimum=1, maximum=SLIDER_MAX_LAYERS),
        width=one_of("width", integer("width", width, minimum=1), WIDTHS),
        seeds=integer("seeds", seeds, minimum=1, maximum=SLIDER_MAX_SEEDS),
        direction=one_of("direction", direction, DIRECTIONS),
        view=one_of("view", view, VIEWS),
    )


class DepthExplorer(Explorer):
    """Controls, readout and figure of the depth explorer; see the module docstring.

    Attributes a notebook may drive or read: initializer, activation, gain, std,
    n_layers, width, seeds, direction, view (widgets, DEPTH_CONTROLS); pin_button,
    clear_pins_button; pins (the pinned DepthResults, oldest first); readout (HTML);
    figure, plot (DepthPlot); histogram (HistogramPlot); result (the latest
    DepthResult); app (the whole layout), figure_view (the current view's figure in it).

    batch: samples per seed. cache: where unit matrices live (default: the
    explorer's own UnitWeights, kept as long as the explorer).
    png_fallback: without a live canvas, show each update as a PNG (False: leave
    the figure to the caller, e.g. a benchmark timing the canvas draw alone).

    Every change reruns result = simulate(activation, initializer, gain=..., std=...,
    n_layers=..., width=..., seeds=..., direction=...) (from the cache's fast path): the mean
    square m_l of each layer l = 0 .. n_layers, measured over the seeds and predicted by
    mean_field. The n_layers slider is labelled "depth", the word a class says.

    Each argument starts its control, and must be one of the control's values: an
    initializer of INITIALIZERS, an activation of ACTIVATIONS, a gain from 0 to 3 (None: the
    initializer's own, as in torch), a std from 0.001 to 10, n_layers from 1 to
    SLIDER_MAX_LAYERS, a width of WIDTHS, seeds from 1 to SLIDER_MAX_SEEDS.

    >>> ex = DepthExplorer(n_layers=3, width=16, seeds=1)    # Xavier uniform + ReLU
    >>> ex.n_layers.value = 5                                # as a hand on the slider
    >>> ex.result.end_layer, round(ex.result.measured_end, 4), round(ex.result.theory_end, 6)
    (5, 0.0167, 0.03125)
    """

    plot_class = DepthPlot  # the curves' figure; a subclass may draw more on it

    def __init__(
        self,
        initializer: str = DEPTH_START["initializer"],
        activation: str = DEPTH_START["activation"],
        gain: float | None = None,
        std: float = DEPTH_START["std"],
        n_layers: int = DEPTH_START["n_layers"],
        width: int = DEPTH_START["width"],
        seeds: int = DEPTH_START["seeds"],
        direction: str = DEPTH_START["direction"],
        view: str = "curves",
        batch: int = DEPTH_START["batch"],
        cache: UnitWeights | None = None,
        figsize=(7.5, 4.6),
        png_fallback: bool = True,
    ):
        super().__init__()
        self.defaults = _depth_settings(
            initializer, activation, gain, std, n_layers, width, seeds, direction, view
        )
        self.batch = integer("batch", batch, minimum=1)
        self.png_fallback = flag("png_fallback", png_fallback)
        figsize = _figsize(figsize)
        if cache is not None:
            instance(
                "cache",
                cache,
                UnitWeights,
                "a tinyinit.physics.propagation_fast.UnitWeights or None",
            )
        self.cache = UnitWeights() if cache is None else cache
        self.result: DepthResult | None = None
        self.pins: list[DepthResult] = []
        self.updates = 0
        self._holding = 0  # open hold() blocks; updates wait for the last to close
        self._pending = False  # an update is scheduled on the kernel's event loop
        self._build_controls(self.defaults)
        self._build_figure(figsize)
        self.app = widgets.VBox(
            [Accessible(), self._controls, self.readout, self.caption, self.figure_view],
            layout=widgets.Layout(width="fit-content"),
        )
        self.app.add_class("tinyinit-explorer")
        self._sync_controls(follow=False)  # a gain given to the constructor is kept
        self.update()
        for control in (self.initializer, self.activation):
            control.observe(self._on_choice, names="value")
        self._browser = BrowserChanges()
        for control in (self.gain, self.std, self.n_layers, self.width, self.seeds, self.direction):
            self._browser.watch(control)
            control.observe(self._on_value, names="value")
        self.view.observe(self._on_view, names="value")
        self.use_default_gain.on_click(self._on_default_gain)
        self.reset_button.on_click(lambda button: self.reset())
        self.pin_button.on_click(lambda button: self.pin())
        self.clear_pins_button.on_click(lambda button: self.clear_pins())

    # --- building ------------------------------------------------------------------------

    def _build_controls(self, values: dict) -> None:
        self._build(DEPTH_CONTROLS, values)
        self.gain_hint = widgets.HTML(
            tooltip="torch's gain for the chosen activation; for gelu and silu, which torch's "
            "table lacks, 1/sqrt(E[phi(z)^2]) computed by quadrature, which keeps one layer's "
            "mean square and no deep stack's"
        )
        # A live region: a screen reader reads the new end value out after a move.
        self.readout = live(
            widgets.HTML(
                tooltip="Where the signal arrives: the last layer's mean square, measured and "
                "in theory"
            )
        )
        self.readout.add_class("tinyinit-readout")
        self.caption = widgets.HTML(tooltip="What the figure shows: settings and legend")
        self.caption.add_class("tinyinit-caption")
        self._controls = widgets.VBox(
            [
                widgets.HBox([self.initializer, self.activation, self.direction]),
                widgets.HBox([self.gain, self.use_default_gain, self.gain_hint]),
                widgets.HBox([self.std, self.reset_button]),
                widgets.HBox([self.n_layers, self.width, self.seeds]),
                widgets.HBox([self.view, self.pin_button, self.clear_pins_button]),
            ]
        )

    def _build_figure(self, figsize):
        figure = self._new_figure(figsize)
        self.plot = self.plot_class(figure, figsize=figsize, decorated=False, steady_x=True)
        self.histogram = HistogramPlot(self._new_figure(figsize), figsize=figsize, decorated=False)
        self.figure = self.plot.figure
        shown = self._figure_widget(self.figure, self.png_fallback)
        if shown is self.figure.canvas:
            self._views = {"curves": shown, "histograms": self.histogram.figure.canvas}
        else:  # one PNG for either view, or nothing: the caller shows or saves the figures
            self._views = dict.fromkeys(("curves", "histograms"), shown)
        # Each histogram panel's words, in HTML over its panel (see HistogramPlot).
        self.panel_row = widgets.HTML(
            tooltip="The layer of each panel, and its zero or saturated entries"
        )
        self.panel_row.add_class("tinyinit-panel-row")
        self._views["histograms"] = widgets.VBox([self.panel_row, self._views["histograms"]])

    @property
    def figure_view(self) -> widgets.Widget:
        """The widget showing the current view's figure (with the histograms' panel words)."""
        return self._views[self.view.value]

    # --- reacting ------------------------------------------------------------------------

    @contextmanager
    def hold(self):
        """Change several controls with one update at the end (nested holds: the outermost)."""
        with self.lock:
            self._holding += 1
            try:
                yield
            finally:
                self._holding -= 1
            self.update()

    def _sync_controls(self, follow: bool = True):
        """Enable the controls that apply; Kaiming's gain follows the activation if `follow`."""
        init, act = self.initializer.value, self.activation.value
        self.gain.disabled = not INITIALIZERS[init].uses_gain
        self.std.disabled = INITIALIZERS[init].uses_gain
        gain, _ = suggested_gain(act)
        if follow and INITIALIZERS[init].gain_from_activation:
            self.gain.value = gain
        self.gain_hint.value = gain_note(act, self.gain.value, self.n_layers.value)

    def _on_choice(self, change=None):
        with self.hold():
            self._sync_controls()

    def reset(self) -> None:
        """Every control back to the settings the explorer started with, one update."""
        with self.hold():
            for name, value in self.defaults.items():
                getattr(self, name).value = value

    def _on_default_gain(self, button=None):
        self.gain.value = suggested_gain(self.activation.value)[0]

    @one_at_a_time
    def _on_value(self, change=None) -> None:
        """A control moved. From the browser: update once the changes already sent are in."""
        if not self._browser.active or self._holding:
            self.update()
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a plain script, a test): at once
            self.update()
            return
        if not self._pending:
            self._pending = True
            loop.call_soon(self._deferred_update)

    def _deferred_update(self) -> None:
        # Runs when the kernel has handled the messages that were waiting: a drag
        # that sent twenty values is one update, to the latest.
        self._pending = False
        try:
            self.update()
        except Exception as error:  # nobody else would see it: say it where one looks
            self.readout.value = f"<b>update failed:</b> {html.escape(repr(error))}"
            raise

    def _on_view(self, change=None) -> None:
        self.app.children = (*self.app.children[:-1], self.figure_view)
        self.update()

    def _simulate(self, histograms: bool = False) -> DepthResult:
        """simulate(...) for the current controls (with the histogram view's layers)."""
        layers = histogram_layers(self.n_layers.value, self.direction.value) if histograms else ()
        return self.cache.simulate(
            self.activation.value, self.initializer.value,
            gain=self.gain.value, std=self.std.value, n_layers=self.n_layers.value,
            width=self.width.value, seeds=self.seeds.value, batch=self.batch,
            direction=self.direction.value, sample_layers=layers,
        )  # fmt: skip

    @one_at_a_time
    def update(self, change=None) -> None:
        """Rerun the simulation for the current controls and show it."""
        if self._holding:
            return
        histograms = self.view.value == "histograms"
        self.result = self._simulate(histograms)
        shown = self.plot.shown_pins(self.result.direction)
        if histograms:
            self.histogram.update(self.result)
            self.caption.value = histogram_caption_html(self.result)
            self.panel_row.value = panel_row_html(self.histogram)
            figure = self.histogram.figure
        else:
            self.plot.update(self.result)
            pins = [(slot, label) for slot, _, label in shown]
            self.caption.value = caption_html(self.result, pins)
            figure = self.figure
        lines = self._readout_lines()
        self.readout.value = "<br>".join(html.escape(line) for line in lines)
        self.gain_hint.value = gain_note(
            self.activation.value, self.gain.value, self.n_layers.value
        )
        # The picture's text alternative (the <img>'s title): what it plots, as the readout
        # says it in words.
        what = "histograms of the values at four layers" if histograms else "mean square per layer"
        self._show(figure, alt=f"Plot of the {what}: " + "; ".join(lines))
        self.updates += 1

    # --- comparing -------------------------------------------------------------------------

    @one_at_a_time
    def pin(self) -> None:
        """Keep the current curve on the plot (faded, named); beyond MAX_PINS the oldest goes.

        Inside hold(), the curve of the controls as they are now (not yet shown).
        """
        current = self._simulate() if self._holding else self.result
        self.pins = [*self.pins, current][-MAX_PINS:]
        self.plot.set_pins([(r, pin_label(r)) for r in self.pins])
        self.update()

    @one_at_a_time
    def clear_pins(self) -> None:
        """Remove every pinned curve."""
        self.pins = []
        self.plot.set_pins([])
        self.update()

    # --- showing ---------------------------------------------------------------------------

    def snapshot(self, dpi: int = 100) -> bytes:
        """The current plot as PNG bytes, with its title and legend drawn in (a static picture).

        >>> ex = DepthExplorer(n_layers=3, width=16, seeds=1)
        >>> ex.snapshot()[:4]
        b'\\x89PNG'
        """
        dpi = integer("dpi", dpi, minimum=10, maximum=600)
        size = tuple(self.figure.get_size_inches())
        if self.view.value == "histograms":
            plot = HistogramPlot(figsize=size, decorated=True)
        else:
            plot = DepthPlot(figsize=size, decorated=True)
            plot.set_pins(self.plot.pins)
        plot.update(self.result, draw=False)
        return png_bytes(plot.figure, dpi=dpi)

    def _readout_lines(self) -> list[str]:
        """readout_lines, then one compare_line per pin drawn."""
        shown = self.plot.shown_pins(self.result.direction)
        compared = [compare_line(self.result, pinned, slot + 1) for slot, pinned, _ in shown]
        return readout_lines(self.result) + compared

    @property
    def readout_text(self) -> str:
        """The readout as plain text, one line per line."""
        return "\n".join(self._readout_lines())


def depth_explorer(**defaults) -> DepthExplorer:
    """The explorer, starting from `defaults` (any argument of DepthExplorer).

    The default is the module card's collapse: Xavier uniform (gain 1) + ReLU,
    n_layers 20, width 256, where the signal ends near 2**-20 of the input: Xavier's
    std sqrt(2 / (n + n)) = 1/sqrt(n) keeps the variance and ReLU halves it, so
    m_l = 2**-l. Kaiming's std gain / sqrt(n_in), gain sqrt(2), keeps m_l = 1.

    >>> ex = depth_explorer(initializer="kaiming_normal", n_layers=3, width=16, seeds=1)
    >>> round(ex.gain.value, 4)                # Kaiming starts at calculate_gain("relu")
    1.4142
    >>> print(ex.readout_text.splitlines()[0])
    layer 3: measured 1.03, theory 1
    """
    return DepthExplorer(**defaults)


# --- the residual stream explorer: a thin layer over residual.stream_variances ---------------


class ResidualStreamExplorer(Explorer):
    """Stream variance after each block, measured and in theory, for N blocks, scaled or not.

    The figure, its lines and the widgets are built once; moving the slider or
    the toggle recomputes the stream from the same drawn weights (rescaled) and
    updates the lines in place (set_data + draw_idle). Results are cached per
    (N, scaled), so going back to a setting is instant. Without a live canvas
    (no ipympl) each update is shown as a PNG, as in DepthExplorer.

    The y axis is the same for both settings of the toggle (it reaches the
    higher of the two curves for this N), so flipping it changes the curve and
    nothing else: what 1/sqrt(2N) does is what moves on screen. "show both"
    draws the other setting too, faded, with its theory.

    Attributes: n_layers (the "blocks N" slider), scaling, both (widgets, RESIDUAL_CONTROLS);
    readout (HTML); figure, ax; app (the whole layout), figure_view (the canvas or its PNG in
    it).

    CSS classes: container tinyinit-residual, slider tinyinit-blocks, toggles
    tinyinit-scaling and tinyinit-both, readout tinyinit-readout.

    >>> from tinyinit import PCG32
    >>> from tinyinit.physics.residual import draw_residual_stack
    >>> explorer = ResidualStreamExplorer(draw_residual_stack(4, 32, 32, 16, PCG32(0)), 4)
    >>> explorer.n_layers.value = 2                   # as a hand on the slider
    >>> len(explorer.measured_line.get_ydata())       # blocks 0, 1, 2
    3
    >>> import matplotlib.pyplot as plt; plt.close(explorer.figure)
    """

    def __init__(
        self, stack: ResidualStack, n_layers: int = 12, scaled: bool = True, both: bool = False
    ):
        import matplotlib.pyplot as plt

        super().__init__()
        instance("stack", stack, ResidualStack, "a ResidualStack (residual.draw_residual_stack)")
        n_layers = integer("n_layers", n_layers, minimum=1, maximum=stack.max_layers)
        scaled, both = flag("scaled", scaled), flag("both", both)
        self.stack = stack
        self._cache: dict[tuple[int, bool], tuple[np.ndarray, np.ndarray]] = {}
        self.n_updates = 0

        with plt.ioff():
            self.figure, self.ax = plt.subplots(figsize=(6.4, 3.6))
        (self.other_theory_line,) = self.ax.plot([], [], "--", lw=1.2, alpha=0.5)
        (self.other_line,) = self.ax.plot([], [], "o-", ms=2.5, alpha=0.5)
        (self.theory_line,) = self.ax.plot([], [], "k--", lw=1.5, label="theory 1 + 2b s²")
        (self.measured_line,) = self.ax.plot([], [], "o-", ms=3, label="measured")
        self.ax.tick_params(labelsize=TICK_FONTSIZE)
        self.ax.set_xlabel("block b")
        self.ax.set_ylabel("Var(stream) after block b")
        self.ax.set_xlim(0, stack.max_layers)
        self.ax.grid(alpha=0.3)
        self.figure.tight_layout()

        values = {"n_layers": n_layers, "scaling": scaled, "both": both}
        self._build(RESIDUAL_CONTROLS, values, n_layers={"max": stack.max_layers})
        self.readout = live(widgets.HTML(tooltip="final stream variance, measured and in theory"))
        self.readout.add_class("tinyinit-readout")
        self.figure_view = self._figure_widget(self.figure)
        if self._image is None:
            self.figure.canvas.header_visible = False
        self.app = widgets.VBox(
            [
                Accessible(),
                widgets.HBox([self.n_layers, self.scaling, self.both]),
                self.readout,
                self.figure_view,
            ]
        )
        self.app.add_class("tinyinit-residual")

        for control in (self.n_layers, self.scaling, self.both):
            control.observe(self._on_change, names="value")
        self.update()

    # The names notebook 06 and its readers know: the figure as `fig`, the layout as `widget`.
    @property
    def fig(self):
        return self.figure

    @property
    def widget(self) -> widgets.Widget:
        return self.app

    def _on_change(self, _change) -> None:
        self.update()

    def curves(self, n_layers: int, scaled: bool) -> tuple[np.ndarray, np.ndarray]:
        """(measured, theory) stream variance after each block 0 .. N, shape (N + 1,)
        (`tinyinit.physics.residual.block_variances`, kept per setting)."""
        n_layers = integer("n_layers", n_layers, minimum=1, maximum=self.stack.max_layers)
        key = (n_layers, flag("scaled", scaled))
        if key not in self._cache:
            self._cache[key] = block_variances(self.stack, n_layers, scaled)
        return self._cache[key]

    @staticmethod
    def color(scaled: bool) -> str:
        """GPT-2's scaled outputs in its colour; unscaled ones are Kaiming's sublayers."""
        return initializer_color("scaled_residual" if flag("scaled", scaled) else "kaiming")

    @one_at_a_time
    def update(self) -> None:
        n, scaled, both = self.n_layers.value, self.scaling.value, self.both.value
        measured, theory = self.curves(n, scaled)
        other, other_theory = self.curves(n, not scaled)
        b = np.arange(n + 1)
        self.measured_line.set_color(self.color(scaled))
        self.other_line.set_color(self.color(not scaled))
        self.other_theory_line.set_color(self.color(not scaled))
        self.measured_line.set_data(b, measured)
        self.theory_line.set_data(b, theory)
        shown = b if both else []
        self.other_line.set_data(shown, other if both else [])
        self.other_theory_line.set_data(shown, other_theory if both else [])
        # One y axis for both settings: the toggle moves the curve, not the axis.
        top = max(measured.max(), theory.max(), other.max(), other_theory.max())
        self.ax.set_ylim(0, 1.08 * top)
        name = "with 1/√(2N)" if scaled else "without 1/√(2N)"
        other_name = "without 1/√(2N)" if scaled else "with 1/√(2N)"
        self.measured_line.set_label(f"measured, {name}" if both else "measured")
        self.other_line.set_label(f"measured, {other_name}" if both else "_other")
        self.ax.legend(loc="upper left")
        self.scaling.icon = "check" if scaled else ""
        self.both.icon = "check" if both else ""
        factor = out_scale(n, scaled)
        self.readout.value = (
            f"N = {n} blocks, 2N = {2 * n} additions, output std × {factor:.3f}: "
            f"final variance <b>{measured[-1]:.2f}</b> (theory {theory[-1]:.2f})"
        )
        if both:
            self.readout.value += f"; {other_name}: {other[-1]:.2f} (theory {other_theory[-1]:.2f})"
        if self._image is None:
            self.figure.canvas.draw_idle()
        self._show(self.figure)
        self.n_updates += 1

    @property
    def final_variance(self) -> float:
        return float(self.measured_line.get_ydata()[-1])
