"""The suite's explorers, restyled for a projector: the headline number, thick lines, large
fonts, the plot beside a column of the most used controls, and in a comparison each curve
named where it ends."""

from __future__ import annotations

import asyncio
import contextlib
import html

import ipywidgets as widgets
import numpy as np
from matplotlib import ticker
from matplotlib.colors import to_hex

from ..core.arguments import KindError, flag, instance, integer, one_of, shown
from ..physics.depth_result import DepthResult, as_result
from ..views.a11y import live
from ..views.explorers import DepthExplorer, ResidualStreamExplorer, one_at_a_time, panel_row_html
from ..views.live_training import SETTINGS, TrainingExplorer
from ..views.naming import curve_name, end_label, gap_words, power_of_two
from ..views.plots import DepthPlot
from ..views.projector import (
    PROJECTOR_GREY,
    curve_end,
    end_label_artist,
    line_end,
    place_end_labels,
    projector_style,
    style_figure,
)
from ..views.style import PIN_COLORS, QUANTITIES, decade_ticks, initializer_color
from .look import FIRST_LOOK, LEGEND_EM, Look, room_color, set_canvas_px, set_margins_px

__all__ = [
    "LabelledDepthPlot",
    "LargeDepthExplorer",
    "LargeResidualExplorer",
    "LargeTrainingExplorer",
    "SCALING_WORDS",
    "SHORT_QUANTITY",
    "depth_headline",
    "plot_beside",
]


def depth_headline(result: DepthResult, pins: list[tuple[DepthResult, str]] = ()) -> str:
    """The readout that matters, as HTML in large type: where the signal ends, as a power of 2,
    and in a comparison how far that is from each pinned curve (`pins`: result and name).

    >>> from tinyinit.physics.propagation import simulate
    >>> r = simulate("relu", "xavier_uniform", n_layers=3, width=16, seeds=1)
    >>> depth_headline(r)
    'layer 3: 2<sup>−2.7</sup><br><small>of the input; theory 2<sup>−3.0</sup></small>'
    >>> k = simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=3, width=16, seeds=1)
    >>> depth_headline(k, [(r, "Xavier")]).split("<br>")[1]
    '<span class="tinyinit-gap">2<sup>1.8</sup> above Xavier</span>'
    """
    end = as_result(result).end_layer
    if not isinstance(pins, (list, tuple)) or not all(
        isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], DepthResult)
        and isinstance(p[1], str) for p in pins
    ):  # fmt: skip
        raise KindError(f"pins must be a list of (DepthResult, name) pairs, got {shown(pins)}")
    what = "input" if end else "upstream gradient"
    gaps = [
        f'<span class="tinyinit-gap">{gap_words(result, pinned, html.escape(name), "html")}</span>'
        for pinned, name in pins
    ]
    return "<br>".join(
        [f"layer {end}: {power_of_two(result.measured_end, markup='html')}", *gaps]
        + [f"<small>of the {what}; theory {power_of_two(result.theory_end, markup='html')}</small>"]
    )


# The controls a step may set, in the order they are set (the gain last: choosing Kaiming
# resets it).
DEPTH_STEP_CONTROLS = ("initializer", "activation", "direction", "width", "seeds", "n_layers",
                       "std", "gain")  # fmt: skip
RESIDUAL_STEP_CONTROLS = ("n_layers", "scaled", "both")


def _settings(settings, known, required=(), name: str = "settings") -> dict:
    """settings as a dict of controls among `known` that sets every control of `required`."""
    instance(name, settings, dict, f"a dict of controls among {', '.join(known)}")
    for control in settings:
        one_of(name, control, known)
    missing = [k for k in required if k not in settings]
    if missing:
        raise ValueError(f"{name} must set every one of {', '.join(required)}, "
                         f"got {shown(settings)} without {', '.join(missing)}")  # fmt: skip
    return settings


@contextlib.contextmanager
def one_message_each(controls):
    """Each widget of `controls` tells the page its state once, as it is when the block ends.

    A step sets several controls, and setting one may move another (choosing Kaiming
    sets the gain for the activation still chosen): without this, the page would be told
    every value on the way, and answer them (tinyinit.views.browser_transport.BrowserChanges).
    """
    with contextlib.ExitStack() as stack:
        for control in controls:
            stack.enter_context(control.hold_sync())
        yield


SHORT_QUANTITY = {d: f"mean square of {QUANTITIES[d][1]}" for d in QUANTITIES}
SCALING_WORDS = {True: "with 1/√(2N)", False: "without 1/√(2N)"}


def plot_beside(figure_view, side: list, app_class: str) -> widgets.Widget:
    """The projector's layout: the plot's area, and beside it a column of `side` widgets."""
    instance("figure_view", figure_view, widgets.DOMWidget, "a widget showing the figure")
    if not isinstance(side, (list, tuple)) or not all(isinstance(w, widgets.Widget) for w in side):
        raise KindError(f"side must be a list of widgets, got {shown(side)}")
    instance("app_class", app_class, str, "a CSS class name")
    column = widgets.VBox(side)
    column.add_class("tinyinit-side")
    area = widgets.Box([figure_view])
    area.add_class("tinyinit-plot-area")
    view = widgets.HBox([area, column])
    view.add_class("tinyinit-view")
    view.add_class(app_class)
    return view


class LabelledDepthPlot(DepthPlot):
    """The explorer's plot, with each curve named where it ends once pins are on it.

    A pinned curve's name ("Xavier: 2⁻²⁰·⁷") is part of the frame, drawn in its pin's
    colour; the current curve's moves with it, in its initializer's colour. Alone on
    the plot, a curve is not named: the headline beside the plot says where it ends.
    """

    def __init__(self, figure=None, **kwargs):
        super().__init__(figure, **kwargs)
        self.pin_names = [end_label_artist(self.ax, color) for color in PIN_COLORS]
        self.current_name = end_label_artist(self.ax, "black", animated=True)
        for name in [*self.pin_names, self.current_name]:
            name.set_visible(False)
        self._moving.append(self.current_name)  # drawn with the data, above it

    def update(self, result: DepthResult, draw: bool = True) -> None:
        draw = flag("draw", draw)
        super().update(result, draw=False)
        shown = self.shown_pins(result.direction)
        for name in [*self.pin_names, self.current_name]:
            name.set_visible(False)
        if shown:
            names = [self.pin_names[slot] for slot, _, _ in shown] + [self.current_name]
            results = [pinned for _, pinned, _ in shown] + [result]
            for artist, pinned in zip(names, results[:-1]):
                artist.set_text(end_label(curve_name(pinned, result), pinned))
            first = shown[0][1]
            self.current_name.set_text(end_label(curve_name(result, first), result))
            place_end_labels(self.ax, names, [curve_end(r) for r in results])
        color = room_color(initializer_color(result.initializer))  # a projector's
        for artist in (self.median_line, self.band, self.current_name):
            artist.set_color(color)
        if draw:
            self._show()

    def _frame_state(self) -> tuple:
        # The pins' names are drawn with the frame: where they stand is part of it.
        names = tuple(
            (n.get_text(), n.get_position(), n.xy) for n in self.pin_names if n.get_visible()
        )
        return (*super()._frame_state(), names)


class LargeDepthExplorer(DepthExplorer):
    """The depth explorer for a projector: the headline number, thick lines, large fonts, and
    in a comparison each curve named where it ends (`LabelledDepthPlot`) and the headline
    saying how far apart they end."""

    plot_class = LabelledDepthPlot
    look: Look | None = None  # what `fit` last sized it for

    def __init__(self, **settings):
        self.headline = widgets.HTML(
            tooltip="The mean square at the last layer, as a power of 2 of where it started"
        )
        live(self.headline).add_class("tinyinit-headline")
        super().__init__(**settings)
        self.plot.decades.set_color(PROJECTOR_GREY)  # still visible when projected
        self.fit(FIRST_LOOK)

    def fit(self, look: Look) -> None:
        """Size the canvas and its fonts to `look`, then redraw the whole figure (nothing to
        do for the look it has)."""
        if instance("look", look, Look, "a Look (Look.for_page)") == self.look:
            return
        self.look = look
        set_canvas_px(self.figure, *look.canvas_px)
        # Room for the y tick labels and label, the x label and the note under it.
        s = look.scale
        set_margins_px(self.figure, left=110 * s, right=24 * s, top=14 * s, bottom=92 * s)
        self.plot.note.set_y(16 * s / look.canvas_px[1])
        style_figure(self.figure, look.figure_fonts)
        projector_style(self.figure, look.scale)
        if self.result is not None:  # the names' places depend on the new size
            self.plot.update(self.result, draw=False)
        self.plot.redraw_all()

    @one_at_a_time
    def update(self, change=None) -> None:
        if self._holding:
            return
        # The y label is part of the frame: drawn once per direction, not per slider move.
        # Short, to fit beside a short plot; the caption beside it says it in full.
        self.plot.ax.set_ylabel(SHORT_QUANTITY[self.direction.value])
        super().update(change)
        shown = self.plot.shown_pins(self.result.direction)
        pins = [(pinned, curve_name(pinned, self.result)) for _, pinned, _ in shown]
        self.headline.value = depth_headline(self.result, pins)

    def result_for(self, settings: dict) -> DepthResult:
        """What the plot shows once every control is set to `settings` (a step's, naming each
        control as `apply` does): simulate's result from the explorer's own fast path, so that
        showing it later costs nothing more."""
        _settings(settings, DEPTH_STEP_CONTROLS, required=DEPTH_STEP_CONTROLS)
        return self.cache.simulate(
            settings["activation"], settings["initializer"], gain=settings["gain"],
            std=settings["std"], n_layers=settings["n_layers"], width=settings["width"],
            seeds=settings["seeds"], batch=self.batch, direction=settings["direction"],
        )  # fmt: skip

    def apply(self, settings: dict) -> None:
        """Set the controls named in `settings` (initializer, gain, n_layers, ...); one update."""
        _settings(settings, DEPTH_STEP_CONTROLS)
        controls = [getattr(self, name) for name in DEPTH_STEP_CONTROLS]
        with self.hold(), one_message_each([*controls, self.gain_hint]):
            for name in DEPTH_STEP_CONTROLS:  # the gain last: choosing Kaiming resets it
                if name in settings:
                    getattr(self, name).value = settings[name]

    def projector_view(self) -> widgets.Widget:
        """The plot, and beside it the headline, the most used controls and the rest folded."""
        more = widgets.VBox(
            [
                self.direction,
                widgets.HBox([self.use_default_gain, self.reset_button]),
                self.std,
                self.width,
                self.seeds,
                self.readout,
                self.caption,
            ]
        )
        # Folded: the less used controls, the full readout, the settings and the legend (the
        # curves are named on the plot, and the headline says where they end).
        folded = widgets.Accordion(children=[more], titles=("more controls",))
        # The gain's note beside its slider: for gelu and silu it says the gain holds one layer.
        side = [self.headline, self.initializer, self.activation, self.gain, self.gain_hint,
                self.n_layers, folded]  # fmt: skip
        return plot_beside(self.figure_view, side, "tinyinit-explorer")


class LargeResidualExplorer(ResidualStreamExplorer):
    """The residual-stream explorer for a projector: headline, thick lines, large fonts."""

    look: Look | None = None  # what `fit` last sized it for

    def __init__(self, stack, n_layers: int = 12, scaled: bool = True):
        self.headline = widgets.HTML(
            tooltip="The stream's variance after the last block, measured and in theory"
        )
        live(self.headline).add_class("tinyinit-headline")
        self._applying = False  # apply() sets several controls, then updates once
        self.names: list = []  # the two curves' names, made once the axes are
        super().__init__(stack, n_layers=n_layers, scaled=scaled)
        self.names = [end_label_artist(self.ax, "black") for _ in range(2)]
        canvas = self.figure.canvas
        if isinstance(canvas, widgets.DOMWidget):
            canvas.toolbar_visible = False
            canvas.footer_visible = False
        # Both settings' curves as strong as each other (the base class fades the other one),
        # told apart by their colours and names.
        for line in (self.other_line, self.other_theory_line):
            line.set_alpha(None)
        self.update()  # with the names, and without the legend: both said where the curves end
        # Room for the large marker at block 0, which would sit half outside on the spine.
        self.ax.set_xlim(-1, self.n_layers.max + 1)
        self.fit(FIRST_LOOK)

    @staticmethod
    def color(scaled: bool) -> str:
        """The base class's colour for the scaling, darkened for a projector (`room_color`)."""
        return room_color(ResidualStreamExplorer.color(scaled))

    def fit(self, look: Look) -> None:
        """Size the canvas and its fonts to `look`, then redraw (nothing to do for the look
        it has)."""
        if instance("look", look, Look, "a Look (Look.for_page)") == self.look:
            return
        self.look = look
        set_canvas_px(self.figure, *look.canvas_px)
        s = look.scale
        set_margins_px(self.figure, left=100 * s, right=24 * s, top=14 * s, bottom=70 * s)
        style_figure(self.figure, look.figure_fonts)
        projector_style(self.figure, look.scale)
        self.figure.canvas.draw_idle()

    @one_at_a_time
    def update(self) -> None:
        super().update()
        if self.ax.get_legend() is not None:  # the curves are named where they end instead
            self.ax.get_legend().remove()
        measured, theory = self.measured_line.get_ydata(), self.theory_line.get_ydata()
        scaled, both = self.scaling.value, self.both.value
        gap = ""
        for name in self.names:
            name.set_visible(False)
        if both:
            other = self.other_line.get_ydata()
            lines = [(self.measured_line, scaled), (self.other_line, not scaled)]
            for name, (line, with_scaling) in zip(self.names, lines):
                name.set_text(f"{SCALING_WORDS[with_scaling]}: {line.get_ydata()[-1]:.1f}")
                name.set_color(self.color(with_scaling))
            place_end_labels(self.ax, self.names, [line_end(*line.get_data()) for line, _ in lines])
            ratio = other[-1] / measured[-1]
            more = f"{ratio:.0f}× more" if ratio >= 1 else f"{1 / ratio:.0f}× less"
            gap = (
                f'<span class="tinyinit-gap">{SCALING_WORDS[not scaled]}: {other[-1]:.1f}, '
                f"{more}</span><br>"
            )
        self.headline.value = (
            f"variance {measured[-1]:.1f}<br>{gap}<small>after {len(measured) - 1} blocks; "
            f"theory {theory[-1]:.1f}</small>"
        )

    def _on_change(self, _change) -> None:
        if not self._applying:
            self.update()

    @one_at_a_time
    def apply(self, settings: dict) -> None:
        """Set n_layers (N blocks), scaled (the 1/sqrt(2N) toggle) and both from `settings`;
        one update."""
        _settings(settings, RESIDUAL_STEP_CONTROLS)
        self._applying = True
        try:
            with one_message_each([self.n_layers, self.scaling, self.both]):
                if "n_layers" in settings:
                    self.n_layers.value = min(settings["n_layers"], self.n_layers.max)
                if "scaled" in settings:
                    self.scaling.value = settings["scaled"]
                if "both" in settings:
                    self.both.value = settings["both"]
        finally:
            self._applying = False
        self.update()

    def result_for(self, settings: dict) -> tuple:
        """The curves a step's `settings` show, (measured, theory) with and without the scaling,
        computed now and kept (`curves`), so that showing them later costs nothing more."""
        _settings(settings, RESIDUAL_STEP_CONTROLS, required=RESIDUAL_STEP_CONTROLS[:2])
        n = min(integer("n_layers", settings["n_layers"], minimum=1), self.n_layers.max)
        flag("scaled", settings["scaled"])
        return self.curves(n, settings["scaled"]), self.curves(n, not settings["scaled"])

    def projector_view(self) -> widgets.Widget:
        """The plot, and beside it the headline, the two controls and the full readout."""
        without, with_ = (to_hex(self.color(scaled)) for scaled in (False, True))
        legend = widgets.HTML(
            f'<span style="color:{without}">●━</span> measured, without 1/√(2N) &nbsp; '
            f'<span style="color:{with_}">●━</span> with 1/√(2N) &nbsp; ╍╍ theory 1 + 2b·s²',
            tooltip="What the lines show",
        )
        legend.add_class("tinyinit-caption")
        side = [self.headline, self.n_layers, self.scaling, self.readout, legend]
        return plot_beside(self.figure_view, side, "tinyinit-residual")


class FewDecades(ticker.FixedLocator):
    """The decades a plot gives it (`locs`), thinned to every second, fifth, ... of them
    (`decade_ticks`) where more than `most` + 1 would stack their labels on a short axis.

    >>> FewDecades(10.0 ** np.arange(-7, 1)).locs
    array([1.e-06, 1.e-04, 1.e-02, 1.e+00])
    """

    most = 4

    @property
    def locs(self) -> np.ndarray:
        return self._locs

    @locs.setter
    def locs(self, locs) -> None:
        locs = np.asarray(locs, dtype=float)
        if len(locs) > self.most + 1:
            locs = decade_ticks(locs.min(), locs.max(), max_ticks=self.most)
        self._locs = locs


class LargeTrainingExplorer(TrainingExplorer):
    """The training explorer for a projector: the test accuracy in large type (and each
    pinned run's, to compare), thick lines, large fonts, both figures in the plot's area
    beside the most used controls."""

    # A demonstration's run plays this many steps and stops there (10 s at 30 steps a second:
    # Xavier + ReLU + SGD is still at chance, Kaiming near 90%); a step pins the runs of the
    # steps before it, trained on to it without drawing if they had not got there, so the
    # class compares like with like. Play goes on from there.
    DEMONSTRATION_STEPS = 300
    look: Look | None = None  # what `fit` last sized it for

    def __init__(self, **settings):
        self.headline = widgets.HTML(tooltip="The test accuracy of the run, and its step")
        self.headline.add_class("tinyinit-headline")  # not a live region: it changes each frame
        super().__init__(**settings)
        self.normalization.description = "norm"  # "normalization" runs past the column's labels
        # The update ratios' axis is a short one beside the loss: a label every decade or two.
        self.plot.yticks = FewDecades(self.plot.yticks.locs)
        self.plot.ratio_ax.yaxis.set_major_locator(self.plot.yticks)
        self.fit(FIRST_LOOK)

    def fit(self, look: Look) -> None:
        """Share the plot's area between the two figures, size their fonts, redraw both
        (nothing to do for the look it has)."""
        if instance("look", look, Look, "a Look (Look.for_page)") == self.look:
            return
        self.look = look
        width, height = look.canvas_px
        s = look.scale
        self.panel_font_px = round(LEGEND_EM * look.font_px)  # as the legends beside: 17 px
        words = round(3 * 1.3 * self.panel_font_px) + 4  # the panels' words: 3 lines at most
        self.panel_row.layout.height = f"{words}px"
        loss_h = round(0.5 * height)  # and the histograms the other half, less their words
        set_canvas_px(self.plot.figure, width, loss_h)
        set_margins_px(self.plot.figure, left=100 * s, right=20 * s, top=12 * s, bottom=70 * s)
        # Room between the two panels for the ratio's tick labels and its label.
        axes_px = width - 120 * s
        gap = 140 * s
        self.plot.figure.subplots_adjust(wspace=gap / ((axes_px - gap) / 2))
        # What is left, less a few pixels of the widgets' own borders: nothing runs out of view.
        set_canvas_px(self.histogram.figure, width, height - loss_h - words - 6)
        set_margins_px(self.histogram.figure, left=100 * s, right=20 * s, top=8 * s, bottom=78 * s)
        self.histogram.axes[0].set_ylabel("fraction")  # as large as the ticks: a short word
        # Three labels (0, 0.5, 1) on the histograms' short axis, not five stacked.
        self.histogram.axes[0].yaxis.set_major_locator(ticker.MaxNLocator(nbins=2))
        for plot in (self.plot, self.histogram):
            style_figure(plot.figure, look.figure_fonts)
            projector_style(plot.figure, look.scale)
            plot.redraw_all()
        self.panel_row.value = panel_row_html(self.histogram, self.panel_font_px)

    @one_at_a_time
    def frame(self) -> None:
        super().frame()
        steps = self.trainer.steps
        pins = "".join(
            f'<br><span class="tinyinit-gap">pin {slot + 1}: {100 * pinned.accuracy:.0f}% '
            f"at step {pinned.curves.steps}</span>"
            for slot, pinned in enumerate(self.pins)
        )
        self.headline.value = (
            f"test accuracy {100 * self.accuracy:.0f}%<br>"
            f"<small>step {steps}, test loss {self.test_losses[-1]:.2g}</small>{pins}"
        )

    @one_at_a_time
    def demonstrate(self, settings: dict, earlier: list[dict] = ()) -> None:
        """A demonstration's step: the runs of the steps before it pinned (the one just
        watched, trained on to DEMONSTRATION_STEPS if it had not got there), then this
        step's run from step 0 (every time it is shown), playing to DEMONSTRATION_STEPS
        where the kernel's event loop runs (a page)."""
        _settings(settings, (*SETTINGS, "speed"))
        if not isinstance(earlier, (list, tuple)):
            raise KindError(f"earlier must be a list of the steps' settings, got {shown(earlier)}")
        for before in earlier:
            _settings(before, (*SETTINGS, "speed"), name="earlier")
        self.pause()
        self.pins = []
        for before in earlier:
            watched = all(self.run_settings[k] == v for k, v in before.items() if k in SETTINGS)
            if not watched:
                with one_message_each(self.stepped_controls()):
                    self.apply(before)
            if self.trainer.steps < self.DEMONSTRATION_STEPS:
                self.step(self.DEMONSTRATION_STEPS - self.trainer.steps)
            self.pin()
        if not earlier:
            self.clear_pins()
        runs = self.runs
        with one_message_each(self.stepped_controls()):
            self.apply(settings)
        if self.runs == runs:  # the same network as the run on screen: shown as the first time
            self._new_run()
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # a script or a test: the step is shown, at step 0
            return
        self.play(until=self.DEMONSTRATION_STEPS)

    def stepped_controls(self) -> list[widgets.Widget]:
        """The widgets a demonstration's step sets."""
        return [getattr(self, name) for name in (*SETTINGS, "speed")]

    def projector_view(self) -> widgets.Widget:
        """Both figures, and beside them the headline, the most used controls, the rest folded."""
        # Folded: the less used controls, the full caption (the key and every run's numbers)
        # and the histograms' words; the headline says the accuracy of the run and its pins.
        more = widgets.VBox(
            [self.optimizer, self.learning_rate, self.hidden_layers, self.std, self.speed,
             widgets.HBox([self.pin_button, self.clear_pins_button]), self.status,
             self.caption, self.histogram_caption]
        )  # fmt: skip
        folded = widgets.Accordion(children=[more], titles=("more controls",))
        # Never squeezed out of the column when the words below it run long.
        buttons = widgets.HBox(
            [self.play_button, self.step_button, self.reset_button],
            layout=widgets.Layout(flex="0 0 auto"),
        )
        side = [self.headline, buttons, self.initializer, self.gain, self.activation,
                self.normalization, folded]  # fmt: skip
        figures = widgets.VBox(
            [self.plot_view, self.panel_row, self.histogram_view], layout={"margin": "0px"}
        )
        for part in figures.children:  # each as tall as fit() made it: none squeezed
            part.layout.flex = "0 0 auto"
        self.panel_row.layout.margin = "0px"
        return plot_beside(figures, side, "tinyinit-training")
