"""The suite's explorers, restyled for a projector: the headline number, thick lines, large
fonts, the plot beside a column of the most used controls."""

from __future__ import annotations

import asyncio
import math

import ipywidgets as widgets
from matplotlib.colors import to_hex

from ..a11y import live
from ..explorer import DepthExplorer, ResidualStreamExplorer, panel_row_html
from ..live_training import SETTINGS, TrainingExplorer
from ..plots import QUANTITIES
from .look import (
    BASE_VIEWPORT,
    Look,
    projector_style,
    set_canvas_px,
    set_margins_px,
    style_figure,
)


def _power_of_two(value: float) -> str:
    """value as 2<sup>x</sup> in HTML, or the words for what a float cannot hold."""
    if math.isinf(value):
        return "inf (overflow)"
    if value <= 0:
        return "0 (underflow)"
    return f"2<sup>{math.log2(value):.1f}</sup>".replace("-", "−")


def depth_headline(result) -> str:
    """The readout that matters, as HTML in large type: where the signal ends, as a power of 2.

    >>> from tinyinit.propagation import simulate
    >>> r = simulate("relu", "xavier_uniform", n_layers=3, width=16, seeds=1)
    >>> depth_headline(r)
    'layer 3: 2<sup>−2.7</sup><br><small>of the input; theory 2<sup>−3.0</sup></small>'
    """
    end = result.end_layer
    what = "input" if end else "upstream gradient"
    return (
        f"layer {end}: {_power_of_two(result.measured_end)}<br>"
        f"<small>of the {what}; theory {_power_of_two(result.theory_end)}</small>"
    )


SHORT_QUANTITY = {d: f"mean square of {QUANTITIES[d][1]}" for d in QUANTITIES}


def plot_beside(figure_view, side: list, app_class: str) -> widgets.Widget:
    """The projector's layout: the plot's area, and beside it a column of `side` widgets."""
    column = widgets.VBox(side)
    column.add_class("tinyinit-side")
    area = widgets.Box([figure_view])
    area.add_class("tinyinit-plot-area")
    view = widgets.HBox([area, column])
    view.add_class("tinyinit-view")
    view.add_class(app_class)
    return view


class LargeDepthExplorer(DepthExplorer):
    """The depth explorer for a projector: the headline number, thick lines, large fonts."""

    def __init__(self, **settings):
        self.headline = widgets.HTML(
            tooltip="The mean square at the last layer, as a power of 2 of where it started"
        )
        live(self.headline).add_class("tinyinit-headline")
        super().__init__(**settings)
        self.plot.decades.set_color("0.7")  # the decade lines, still visible when projected
        self.fit(Look.for_page(*BASE_VIEWPORT, top=150))

    def fit(self, look: Look) -> None:
        """Size the canvas and its fonts to `look`, then redraw the whole figure."""
        set_canvas_px(self.figure, *look.canvas_px)
        # Room for the y tick labels and label, the x label and the note under it.
        s = look.scale
        set_margins_px(self.figure, left=110 * s, right=24 * s, top=14 * s, bottom=92 * s)
        self.plot.note.set_y(16 * s / look.canvas_px[1])
        style_figure(self.figure, look.figure_fonts)
        projector_style(self.figure, look.scale)
        self.plot.redraw_all()

    def update(self, change=None) -> None:
        if self._holding:
            return
        # The y label is part of the frame: drawn once per direction, not per slider move.
        # Short, to fit beside a short plot; the caption beside it says it in full.
        self.plot.ax.set_ylabel(SHORT_QUANTITY[self.direction.value])
        super().update(change)
        self.headline.value = depth_headline(self.result)

    def apply(self, settings: dict) -> None:
        """Set the controls named in `settings` (initializer, gain, depth, ...); one update."""
        order = ["initializer", "activation", "direction", "width", "seeds", "depth", "std", "gain"]
        unknown = set(settings) - set(order)
        if unknown:
            raise ValueError(f"unknown depth explorer controls {sorted(unknown)}; known: {order}")
        with self.hold():
            for name in order:  # the gain last: choosing Kaiming resets it
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
            ]
        )
        folded = widgets.Accordion(children=[more], titles=("more controls",))
        # The gain's note beside its slider: for gelu and silu it says the gain holds one layer.
        side = [self.headline, self.initializer, self.activation, self.gain, self.gain_hint,
                self.depth, folded, self.caption]  # fmt: skip
        return plot_beside(self.figure_view, side, "tinyinit-explorer")


class LargeResidualExplorer(ResidualStreamExplorer):
    """The residual-stream explorer for a projector: headline, thick lines, large fonts."""

    def __init__(self, stack, n_layers: int = 12, scaled: bool = True):
        self.headline = widgets.HTML(
            tooltip="The stream's variance after the last block, measured and in theory"
        )
        live(self.headline).add_class("tinyinit-headline")
        super().__init__(stack, n_layers=n_layers, scaled=scaled)
        canvas = self.figure.canvas
        if isinstance(canvas, widgets.DOMWidget):
            canvas.toolbar_visible = False
            canvas.footer_visible = False
        self.ax.get_legend().remove()  # said in the headline and the caption beside the plot
        # Room for the large marker at block 0, which would sit half outside on the spine.
        self.ax.set_xlim(-1, self.blocks.max + 1)
        self.fit(Look.for_page(*BASE_VIEWPORT, top=150))

    def fit(self, look: Look) -> None:
        """Size the canvas and its fonts to `look`, then redraw."""
        set_canvas_px(self.figure, *look.canvas_px)
        s = look.scale
        set_margins_px(self.figure, left=100 * s, right=24 * s, top=14 * s, bottom=70 * s)
        style_figure(self.figure, look.figure_fonts)
        projector_style(self.figure, look.scale)
        self.figure.canvas.draw_idle()

    def update(self) -> None:
        super().update()
        measured, theory = self.measured_line.get_ydata(), self.theory_line.get_ydata()
        self.headline.value = (
            f"variance {measured[-1]:.1f}<br><small>after {len(measured) - 1} blocks; "
            f"theory {theory[-1]:.1f}</small>"
        )

    def apply(self, settings: dict) -> None:
        """Set blocks (N), scaled (the 1/sqrt(2N) toggle) and both from `settings`."""
        unknown = set(settings) - {"blocks", "scaled", "both"}
        if unknown:
            raise ValueError(f"unknown residual explorer controls {sorted(unknown)}")
        if "blocks" in settings:
            self.blocks.value = min(settings["blocks"], self.blocks.max)
        if "scaled" in settings:
            self.scaling.value = settings["scaled"]
        if "both" in settings:
            self.both.value = settings["both"]

    def projector_view(self) -> widgets.Widget:
        """The plot, and beside it the headline, the two controls and the full readout."""
        without, with_ = (to_hex(self.color(scaled)) for scaled in (False, True))
        legend = widgets.HTML(
            f'<span style="color:{without}">●━</span> measured, without 1/√(2N) &nbsp; '
            f'<span style="color:{with_}">●━</span> with 1/√(2N) &nbsp; ╍╍ theory 1 + 2b·s²',
            tooltip="What the lines show",
        )
        legend.add_class("tinyinit-caption")
        side = [self.headline, self.blocks, self.scaling, self.readout, legend]
        return plot_beside(self.figure_view, side, "tinyinit-residual")


class LargeTrainingExplorer(TrainingExplorer):
    """The training explorer for a projector: the test accuracy in large type, thick lines,
    large fonts, both figures in the plot's area beside the most used controls."""

    # A demonstration's run plays this many steps and stops there (10 s at 30 steps a second:
    # Xavier + ReLU + SGD is still at chance, Kaiming near 90%); a step pins the runs of the
    # steps before it, trained on to it without drawing if they had not got there, so the
    # class compares like with like. Play goes on from there.
    DEMONSTRATION_STEPS = 300

    def __init__(self, **settings):
        self.headline = widgets.HTML(tooltip="The test accuracy of the run, and its step")
        self.headline.add_class("tinyinit-headline")  # not a live region: it changes each frame
        super().__init__(**settings)
        self.normalization.description = "norm"  # "normalization" runs past the column's labels
        self.fit(Look.for_page(*BASE_VIEWPORT, top=150))

    def fit(self, look: Look) -> None:
        """Share the plot's area between the two figures, size their fonts, redraw both."""
        width, height = look.canvas_px
        s = look.scale
        self.panel_font_px = round(0.7 * look.font_px)
        words = round(3 * 1.3 * self.panel_font_px) + 4  # the panels' words: 3 lines at most
        self.panel_row.layout.height = f"{words}px"
        loss_h = round(0.56 * height)
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
        for plot in (self.plot, self.histogram):
            style_figure(plot.figure, look.figure_fonts)
            projector_style(plot.figure, look.scale)
            plot.redraw_all()
        self.panel_row.value = panel_row_html(self.histogram, self.panel_font_px)

    def frame(self) -> None:
        super().frame()
        steps = self.trainer.steps
        self.headline.value = (
            f"test accuracy {100 * self.accuracy:.0f}%<br>"
            f"<small>step {steps}, test loss {self.test_losses[-1]:.2g}</small>"
        )

    def demonstrate(self, settings: dict, earlier: list[dict] = ()) -> None:
        """A demonstration's step: the runs of the steps before it pinned (the one just
        watched, trained on to DEMONSTRATION_STEPS if it had not got there), then this
        step's run from step 0, playing to DEMONSTRATION_STEPS where the kernel's event
        loop runs (a page)."""
        self.pause()
        self.pins = []
        for before in earlier:
            watched = all(self.run_settings[k] == v for k, v in before.items() if k in SETTINGS)
            if not watched:
                self.apply(before)
            if self.trainer.steps < self.DEMONSTRATION_STEPS:
                self.step(self.DEMONSTRATION_STEPS - self.trainer.steps)
            self.pin()
        if not earlier:
            self.clear_pins()
        self.apply(settings)
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # a script or a test: the step is shown, at step 0
            return
        self.play(until=self.DEMONSTRATION_STEPS)

    def projector_view(self) -> widgets.Widget:
        """Both figures, and beside them the headline, the most used controls, the rest folded."""
        more = widgets.VBox(
            [self.optimizer, self.learning_rate, self.hidden_layers, self.std, self.speed,
             widgets.HBox([self.pin_button, self.clear_pins_button]), self.status,
             self.histogram_caption]
        )  # fmt: skip
        folded = widgets.Accordion(children=[more], titles=("more controls",))
        # Never squeezed out of the column when the words below it run long.
        buttons = widgets.HBox(
            [self.play_button, self.step_button, self.reset_button],
            layout=widgets.Layout(flex="0 0 auto"),
        )
        side = [self.headline, buttons, self.initializer, self.gain, self.activation,
                self.normalization, folded, self.caption]  # fmt: skip
        figures = widgets.VBox(
            [self.plot_view, self.panel_row, self.histogram_view], layout={"margin": "0px"}
        )
        for part in figures.children:  # each as tall as fit() made it: none squeezed
            part.layout.flex = "0 0 auto"
        self.panel_row.layout.margin = "0px"
        return plot_beside(figures, side, "tinyinit-training")
