"""The live explorers: widgets over the numerics, one figure each, updated in place.

`DepthExplorer` (below, with `depth_explorer`) puts sliders over
`tinyinit.propagation.simulate`; `ResidualStreamExplorer` (at the end) puts a
slider and a toggle over `tinyinit.residual.stream_variances`.

    %matplotlib widget
    from tinyinit.explorer import depth_explorer
    ex = depth_explorer()
    ex

Every control changes one argument of `tinyinit.propagation.simulate`; the
explorer reruns it (unit weight matrices are cached, so a move costs matrix
products only), moves the figure's artists and rewrites the readout. A notebook
cell can drive it exactly as a hand on a slider does:

    ex.depth.value = 50
    ex.result.measured_end, ex.readout.value

With ipympl (`%matplotlib widget`) the figure is a live canvas. Under any other
backend (inline, Agg) the figure is rendered to a PNG shown in an image widget,
so the explorer still works, only less smoothly.
"""

from __future__ import annotations

import html
import math
from contextlib import contextmanager

import ipywidgets as widgets
import matplotlib
import numpy as np
from matplotlib.colors import to_hex, to_rgba

from .activations import ACTIVATIONS
from .plots import (
    DepthPlot,
    edge_note,
    legend_labels,
    png_bytes,
    quantity_label,
    settings_title,
)
from .propagation import (
    INITIALIZERS,
    DepthResult,
    UnitWeights,
    default_gain,
    simulate,
)
from .residual import (
    ResidualStack,
    out_scale,
    residual_variance_theory,
    stream_variance,
    stream_variances,
)

WIDTHS = (16, 32, 64, 128, 256, 512)
MAX_DEPTH = 100
MAX_SEEDS = 5
KAIMING = ("kaiming_fan_in", "kaiming_fan_out")

STD_FORMULAS = {
    "xavier_uniform": "gain·√(2/(n_in+n_out)), from U(-a, a) with a = √3·std",
    "xavier_normal": "gain·√(2/(n_in+n_out))",
    "kaiming_fan_in": "gain/√n_in",
    "kaiming_fan_out": "gain/√n_out",
    "normal": "as set",
}


def _number(v: float) -> str:
    return "inf" if math.isinf(v) else f"{v:.3g}"


def readout_lines(result: DepthResult) -> list[str]:
    """The readout in words: where the signal arrives, measured and in theory.

    >>> from tinyinit.propagation import simulate
    >>> r = simulate("relu", "kaiming_fan_in", gain=2**0.5, depth=3, width=16, seeds=1)
    >>> readout_lines(r)[0]
    'layer 3: measured 0.55, theory 1'
    """
    end = result.end_layer
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
        second += f", = 2^{math.log2(m):.1f} of the {'input' if end else 'upstream gradient'}"
    third = f"weights: std = {result.std:.4g} ({STD_FORMULAS[result.initializer]}), "
    third += f"width {result.width}, batch {result.batch} per seed"
    note = edge_note(result)
    return [first, second, third] + ([note] if note else [])


def caption_html(result: DepthResult) -> str:
    """The figure's title and legend as HTML, shown above the live canvas.

    Text is what costs most in a matplotlib redraw; as HTML it costs nothing.

    >>> from tinyinit.propagation import simulate
    >>> r = simulate("relu", "xavier_uniform", depth=3, width=16, seeds=2)
    >>> "median of 2 seeds" in caption_html(r)
    True
    """
    c0 = to_hex("C0")
    band = "rgba({:.0f},{:.0f},{:.0f},0.35)".format(*(255 * v for v in to_rgba("C0")[:3]))
    swatches = [
        f'<span style="color:{c0}">●━</span>',
        f'<span style="color:{band}">██</span>',
        '<span style="color:black">╍╍</span>',
        '<span style="color:#737373">┈┈</span>',
    ]
    legend = " &nbsp; ".join(
        f"{swatch} {html.escape(label)}" for swatch, label in zip(swatches, legend_labels(result))
    )
    y = html.escape(quantity_label(result.direction))
    return f"<b>{html.escape(settings_title(result))}</b><br>y: {y}, log scale &nbsp; {legend}"


def _is_widget_backend() -> bool:
    backend = matplotlib.get_backend().lower()
    return "ipympl" in backend or backend in ("widget", "ipympl")


class DepthExplorer:
    """Controls, readout and figure of the depth explorer; see the module docstring.

    Attributes a notebook may drive or read: initializer, activation, gain, std,
    depth, width, seeds, direction (widgets); readout (HTML); figure, plot
    (DepthPlot); result (the latest DepthResult); app (the whole layout).

    batch: samples per seed. cache: where unit matrices live (default: the
    explorer's own UnitWeights, kept as long as the explorer).
    png_fallback: without a live canvas, show each update as a PNG (False: leave
    the figure to the caller, e.g. a benchmark timing the canvas draw alone).

    Every change reruns result = simulate(activation, initializer, gain=..., std=...,
    depth=..., width=..., seeds=..., direction=...): the mean square m_l of each
    layer l = 0 .. depth, measured over the seeds and predicted by mean_field.

    >>> ex = DepthExplorer(depth=3, width=16, seeds=1)    # Xavier uniform + ReLU
    >>> ex.depth.value = 5                                # as a hand on the slider
    >>> ex.result.end_layer, round(ex.result.measured_end, 4), round(ex.result.theory_end, 6)
    (5, 0.0167, 0.03125)
    """

    def __init__(
        self,
        initializer: str = "xavier_uniform",
        activation: str = "relu",
        gain: float | None = None,
        std: float = 0.02,
        depth: int = 20,
        width: int = 256,
        seeds: int = 3,
        direction: str = "forward",
        batch: int = 16,
        cache: UnitWeights | None = None,
        figsize=(7.5, 4.6),
        png_fallback: bool = True,
    ):
        self.batch = batch
        self.png_fallback = png_fallback
        self.cache = UnitWeights() if cache is None else cache
        self.result: DepthResult | None = None
        self.updates = 0
        self._holding = 0  # open hold() blocks; updates wait for the last to close
        if gain is None:
            gain = default_gain(activation) if initializer in KAIMING else 1.0
        self.defaults = dict(
            initializer=initializer, activation=activation, gain=gain, std=std, depth=depth,
            width=width, seeds=seeds, direction=direction,
        )  # fmt: skip
        self._build_controls(**self.defaults)
        self._build_figure(figsize)
        self.app = widgets.VBox(
            [self._controls, self.readout, self.caption, self._view],
            layout=widgets.Layout(width="fit-content"),
        )
        self.app.add_class("tinyinit-explorer")
        self._sync_controls(follow=False)  # a gain given to the constructor is kept
        self.update()
        for control in (self.initializer, self.activation):
            control.observe(self._on_choice, names="value")
        for control in (self.gain, self.std, self.depth, self.width, self.seeds, self.direction):
            control.observe(self.update, names="value")
        self.use_default_gain.on_click(self._on_default_gain)
        self.reset_button.on_click(lambda button: self.reset())

    # --- building ------------------------------------------------------------------------

    def _build_controls(self, initializer, activation, gain, std, depth, width, seeds, direction):
        wide = {"description_width": "initial"}
        self.initializer = widgets.Dropdown(
            options=[(label, key) for key, label in INITIALIZERS.items()],
            value=initializer, description="initializer", style=wide,
            tooltip="How the weights are drawn: Xavier (Glorot 2010), Kaiming (He 2015), "
            "or a plain normal with the std you set",
        )  # fmt: skip
        self.activation = widgets.Dropdown(
            options=list(ACTIVATIONS), value=activation, description="activation",
            tooltip="The nonlinearity phi applied after every layer: h = phi(W h_prev)",
        )  # fmt: skip
        self.activation.add_class("tinyinit-activation")
        self.direction = widgets.ToggleButtons(
            options=[("forward: activations", "forward"), ("backward: gradients", "backward")],
            value=direction, style={"button_width": "150px"},
            tooltips=["mean square of the activations h_l, input to output",
                      "mean square of dloss/dh_l for a unit random upstream gradient, "
                      "output to input"],
        )  # fmt: skip
        self.gain = widgets.FloatSlider(
            # No step: a slider with one snaps in the browser and sends the snapped
            # value back, so sqrt(2) would become 1.41 and Kaiming would lose 11%.
            value=gain, min=0.0, max=3.0, step=None, readout_format=".3f", description="gain",
            continuous_update=True,
            tooltip="Multiplies the std of Xavier and Kaiming. Kaiming starts at "
            "calculate_gain(activation); Xavier at 1, as in torch",
        )  # fmt: skip
        self.gain.add_class("tinyinit-gain")
        self.gain_hint = widgets.HTML(
            tooltip="torch's gain for the chosen activation (1 for Xavier's own assumption)"
        )
        self.use_default_gain = widgets.Button(
            description="use calculate_gain", layout=widgets.Layout(width="150px"),
            tooltip="Set the gain to torch's calculate_gain for this activation",
        )  # fmt: skip
        self.reset_button = widgets.Button(
            description="reset", layout=widgets.Layout(width="80px"),
            tooltip="Back to the settings the explorer started with",
        )  # fmt: skip
        self.std = widgets.FloatLogSlider(
            value=std, base=10, min=-3, max=1, step=0.01, readout_format=".3g",
            description="std",
            tooltip="The standard deviation of every weight for 'normal with std' "
            "(GPT-2 uses 0.02; 1 is the 'standard normal weights' of the module card)",
        )  # fmt: skip
        self.depth = widgets.IntSlider(
            value=depth, min=1, max=MAX_DEPTH, description="depth",
            tooltip="Number of layers in the stack: the last one is where the readout looks",
        )  # fmt: skip
        self.depth.add_class("tinyinit-depth")
        self.width = widgets.Dropdown(
            options=WIDTHS, value=width, description="width",
            tooltip="Units per layer (n_in = n_out = width): wider layers fluctuate less",
        )  # fmt: skip
        self.seeds = widgets.IntSlider(
            value=seeds, min=1, max=MAX_SEEDS, description="seeds",
            tooltip="Independent networks (weights, inputs) drawn from PCG32 seeds 0, 1, ...: "
            "the band shows their spread",
        )  # fmt: skip
        self.readout = widgets.HTML(
            tooltip="Where the signal arrives: the last layer's mean square, measured and in theory"
        )
        self.readout.add_class("tinyinit-readout")
        self.caption = widgets.HTML(tooltip="What the figure shows: settings and legend")
        self.caption.add_class("tinyinit-caption")
        self._controls = widgets.VBox(
            [
                widgets.HBox([self.initializer, self.activation, self.direction]),
                widgets.HBox([self.gain, self.use_default_gain, self.gain_hint]),
                widgets.HBox([self.std, self.reset_button]),
                widgets.HBox([self.depth, self.width, self.seeds]),
            ]
        )

    def _build_figure(self, figsize):
        figure = None
        if _is_widget_backend():
            import matplotlib.pyplot as plt

            with plt.ioff():  # shown inside the layout, not on its own
                figure = plt.figure(figsize=figsize)
            figure.canvas.header_visible = False
            figure.canvas.footer_visible = False
            figure.canvas.toolbar_visible = False
        self.plot = DepthPlot(figure, figsize=figsize, decorated=False)
        self.figure = self.plot.figure
        self._image = None
        if isinstance(self.figure.canvas, widgets.DOMWidget):
            self._view = self.figure.canvas
        elif self.png_fallback:  # not a live canvas: a PNG, rerendered on each update
            self._image = self._view = widgets.Image(format="png")
        else:  # the caller shows or saves self.figure
            self._view = widgets.HTML()

    # --- reacting ------------------------------------------------------------------------

    @contextmanager
    def hold(self):
        """Change several controls with one update at the end (nested holds: the outermost)."""
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1
        self.update()

    def _sync_controls(self, follow: bool = True):
        """Enable the controls that apply; Kaiming's gain follows the activation if `follow`."""
        init, act = self.initializer.value, self.activation.value
        self.gain.disabled = init == "normal"
        self.std.disabled = init != "normal"
        if follow and init in KAIMING:
            self.gain.value = default_gain(act)
        self.gain_hint.value = f"calculate_gain('{act}') = {default_gain(act):.4g}"

    def _on_choice(self, change=None):
        with self.hold():
            self._sync_controls()

    def reset(self) -> None:
        """Every control back to the settings the explorer started with, one update."""
        with self.hold():
            for name, value in self.defaults.items():
                getattr(self, name).value = value

    def _on_default_gain(self, button=None):
        self.gain.value = default_gain(self.activation.value)

    def update(self, change=None) -> None:
        """Rerun the simulation for the current controls and show it."""
        if self._holding:
            return
        self.result = simulate(
            self.activation.value, self.initializer.value,
            gain=self.gain.value, std=self.std.value, depth=self.depth.value,
            width=self.width.value, seeds=self.seeds.value, batch=self.batch,
            direction=self.direction.value, cache=self.cache,
        )  # fmt: skip
        self.plot.update(self.result)
        self.readout.value = "<br>".join(html.escape(line) for line in readout_lines(self.result))
        self.caption.value = caption_html(self.result)
        if self._image is not None:
            self._image.value = png_bytes(self.figure)
        self.updates += 1

    # --- showing ---------------------------------------------------------------------------

    def snapshot(self, dpi: int = 100) -> bytes:
        """The current plot as PNG bytes, with its title and legend drawn in (a static picture).

        >>> ex = DepthExplorer(depth=3, width=16, seeds=1)
        >>> ex.snapshot()[:4]
        b'\\x89PNG'
        """
        plot = DepthPlot(figsize=tuple(self.figure.get_size_inches()), decorated=True)
        plot.update(self.result, draw=False)
        return png_bytes(plot.figure, dpi=dpi)

    @property
    def readout_text(self) -> str:
        """The readout as plain text, one line per line."""
        return "\n".join(readout_lines(self.result))

    def _repr_mimebundle_(self, **kwargs):
        return self.app._repr_mimebundle_(**kwargs)


def depth_explorer(**defaults) -> DepthExplorer:
    """The explorer, starting from `defaults` (any argument of DepthExplorer).

    The default is the module card's collapse: Xavier uniform (gain 1) + ReLU,
    depth 20, width 256, where the signal ends near 2**-20 of the input: Xavier's
    std sqrt(2 / (n + n)) = 1/sqrt(n) keeps the variance and ReLU halves it, so
    m_l = 2**-l. Kaiming's std gain / sqrt(n_in), gain sqrt(2), keeps m_l = 1.

    >>> ex = depth_explorer(initializer="kaiming_fan_in", depth=3, width=16, seeds=1)
    >>> round(ex.gain.value, 4)                # Kaiming starts at calculate_gain("relu")
    1.4142
    >>> print(ex.readout_text.splitlines()[0])
    layer 3: measured 1.03, theory 1
    """
    return DepthExplorer(**defaults)


# --- the residual stream explorer: a thin layer over residual.stream_variances ---------------


class ResidualStreamExplorer:
    """Stream variance after each block, measured and in theory, for N blocks, scaled or not.

    The figure, its lines and the widgets are built once; moving the slider or
    the toggle recomputes the stream from the same drawn weights (rescaled) and
    updates the lines in place (set_data + draw_idle). Results are cached per
    (N, scaled), so going back to a setting is instant.

    CSS classes: container tinyinit-residual, slider tinyinit-blocks, toggle
    tinyinit-scaling, readout tinyinit-readout.
    """

    def __init__(self, stack: ResidualStack, n_layers: int = 12, scaled: bool = True):
        import ipywidgets as widgets
        import matplotlib.pyplot as plt

        self.stack = stack
        self._cache: dict[tuple[int, bool], tuple[np.ndarray, np.ndarray]] = {}
        self.n_updates = 0

        with plt.ioff():
            self.fig, self.ax = plt.subplots(figsize=(6.4, 3.6))
        (self.theory_line,) = self.ax.plot([], [], "k--", lw=1.5, label="theory 1 + 2b s²")
        (self.measured_line,) = self.ax.plot([], [], "o-", ms=3, color="C0", label="measured")
        self.ax.set_xlabel("block b")
        self.ax.set_ylabel("Var(stream) after block b")
        self.ax.set_xlim(0, stack.max_layers)
        self.ax.legend(loc="upper left")
        self.ax.grid(alpha=0.3)
        self.fig.tight_layout()

        self.blocks = widgets.IntSlider(
            value=n_layers,
            min=1,
            max=stack.max_layers,
            description="blocks N",
            tooltip="number of Transformer blocks (2 residual additions each)",
            continuous_update=True,
        )
        self.scaling = widgets.ToggleButton(
            value=scaled,
            description="scale by 1/√(2N)",
            tooltip="multiply every output projection's std by 1/sqrt(2N), as GPT-2 does",
            icon="check",
        )
        self.readout = widgets.HTML(tooltip="final stream variance, measured and in theory")
        self.blocks.add_class("tinyinit-blocks")
        self.scaling.add_class("tinyinit-scaling")
        self.readout.add_class("tinyinit-readout")
        canvas = self.fig.canvas
        if not isinstance(canvas, widgets.DOMWidget):  # not ipympl: a static fallback
            canvas = widgets.Output()
        else:
            canvas.header_visible = False
        self.widget = widgets.VBox(
            [widgets.HBox([self.blocks, self.scaling]), self.readout, canvas]
        )
        self.widget.add_class("tinyinit-residual")

        self.blocks.observe(self._on_change, names="value")
        self.scaling.observe(self._on_change, names="value")
        self.update()

    def _on_change(self, _change) -> None:
        self.update()

    def curves(self, n_layers: int, scaled: bool) -> tuple[np.ndarray, np.ndarray]:
        """(measured, theory) stream variance after each block 0 .. N, shape (N + 1,)."""
        key = (n_layers, scaled)
        if key not in self._cache:
            measured = stream_variances(self.stack, n_layers, out_scale(n_layers, scaled))
            x0_var = stream_variance(self.stack.x0)
            theory = residual_variance_theory(n_layers, scaled=scaled, x0_var=x0_var)
            self._cache[key] = (measured[::2], theory[::2])
        return self._cache[key]

    def update(self) -> None:
        n, scaled = self.blocks.value, self.scaling.value
        measured, theory = self.curves(n, scaled)
        b = np.arange(n + 1)
        self.measured_line.set_data(b, measured)
        self.theory_line.set_data(b, theory)
        self.ax.set_ylim(0, 1.08 * max(measured.max(), theory.max()))
        self.scaling.icon = "check" if scaled else ""
        factor = out_scale(n, scaled)
        self.readout.value = (
            f"N = {n} blocks, 2N = {2 * n} additions, output std × {factor:.3f}: "
            f"final variance <b>{measured[-1]:.2f}</b> (theory {theory[-1]:.2f})"
        )
        self.fig.canvas.draw_idle()
        self.n_updates += 1

    @property
    def final_variance(self) -> float:
        return float(self.measured_line.get_ydata()[-1])

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
