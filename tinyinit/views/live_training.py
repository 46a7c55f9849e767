"""Training you can watch: notebook 04's network learns the digits while its figures redraw.

    %matplotlib widget
    from tinyinit.views.live_training import training_explorer
    ex = training_explorer()
    ex

Pick the initializer and its gain, the activation, the optimizer and its learning rate,
normalization and the depth; press play. The network (20 hidden ReLU layers of 64, the
handwritten digits, SGD at 0.02, as in notebook 04, by default) trains in the kernel
while three things redraw several times a second: the loss (the minibatch's running
mean, and the test set's), the update-to-weight ratio ||ΔW_l|| / ||W_l|| of every layer
against the rule of thumb 10^-3, and histograms of the activations at four layers on
the test set. Pause, one step, reset; "pin" keeps the run on the figures, faded, to
compare the next one with (Xavier, pinned, against Kaiming). A cell drives it as a hand
does:

    ex.step(200)                        # 200 steps, then one frame
    ex.pin(); ex.initializer.value = "kaiming_normal"
    ex.play()                           # trains on the kernel's event loop; ex.pause()

The numbers are tinyinit.networks': a `Trainer` takes the steps (the training loop itself,
which `train` runs too), `evaluate` measures the test set. This
module decides when they run and shows them; the pictures are tinyinit.views.plots's
`TrainingPlot` and `HistogramPlot`.

Training never blocks the kernel. `play()` starts a task on the kernel's asyncio event
loop that takes one step and then yields (`await asyncio.sleep`), so the messages of
every control are handled between two steps: a control answers while the network trains.
A frame (the test set's forward pass, both figures, their pictures) is drawn when it is
due: at most FRAMES_PER_SECOND a second; at a speed the steps keep with time to spare, in
that time; as fast as it can, never more often than keeps the display under DISPLAY_SHARE
of the kernel's CPU time, each frame's cost measured as it goes
(benchmarks/bench_live_training.py measures steps per second live against the same steps
without display).

Controls that change the network (initializer, gain, std, activation, optimizer,
normalization, depth) start a new run from step 0 with the new settings, and it goes on
playing if it was; the learning rate applies from the next step.
"""

from __future__ import annotations

import asyncio
import html
import math
import time
from dataclasses import dataclass

import numpy as np
from threadpoolctl import ThreadpoolController

from .._extras import extra
from ..core.activations import ACTIVATIONS
from ..core.arguments import flag, instance, integer, number, one_of, shown
from ..core.init import INITIALIZERS, initializer_row
from ..core.pcg32 import PCG32
from ..networks.digits import Digits, load_digits_split
from ..networks.lsuv import lsuv
from ..networks.mlp import evaluate, init_params
from ..networks.normalization import NORMS
from ..networks.optimizers import LEARNING_RATES, OPTIMIZERS
from ..networks.training import Trainer
from ..physics.gains import initial_gain, suggested_gain
from ..physics.variance import root_mean_square
from .browser_transport import BrowserChanges, keep_picture_for_static_pages
from .explorers import (
    WIDE,
    Control,
    Explorer,
    one_at_a_time,
    panel_row_html,
    swatch,
    zero_and_saturated_words,
)
from .figures import png_bytes
from .plots import (
    LOSS_WINDOW,
    MAX_LOSS_SHOWN,
    HistogramPlot,
    TrainingCurves,
    TrainingPlot,
    histogram_layers,
    running_mean,
)
from .style import MAX_PINS, PIN_ALPHA, PIN_COLORS, initializer_color, size_pair

__all__ = [
    "APPLY_ORDER",
    "DISPLAY_SHARE",
    "FRAMES_PER_SECOND",
    "MAX_HIDDEN_LAYERS",
    "MAX_STEPS",
    "NETWORK",
    "NORMALIZATIONS",
    "OPTIMIZER_NAMES",
    "Pinned",
    "RATES",
    "SETTINGS",
    "SLIDERS",
    "SPEEDS",
    "TRAINING_CONTROLS",
    "TrainingExplorer",
    "WIDTH",
    "frame_wait",
    "run_words",
    "settings_line",
    "step_due",
    "training_explorer",
]

with extra("lab", "the training explorer"):  # the widgets are not in the core install
    import ipywidgets as widgets

    from .a11y import Accessible, live

WIDTH = 64  # notebook 04's hidden layers; the digits have 64 pixels and 10 classes
MAX_HIDDEN_LAYERS = 40
LSUV_EXAMPLES = 256  # the batch LSUV reads: the first training examples, as notebook 13's
MAX_STEPS = 5000  # a run pauses there (about 240 epochs of the digits)
FRAMES_PER_SECOND = 10  # at most
# Of the kernel's CPU time, at most, for the display: each frame's own, and what the
# kernel's other threads did since the one before (sending its pictures), measured as it
# trains. A fifth is the most it may cost (benchmarks/bench_live_training.py).
DISPLAY_SHARE = 0.15
# steps a second while playing; 0: as fast as the kernel can
SPEEDS = {"10 steps/s": 10, "30 steps/s": 30, "100 steps/s": 100, "as fast as it can": 0}
# The learning rates offered: each optimizer's own (LEARNING_RATES) and the decades around.
RATES = (1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.02, 0.05, 0.1, 0.3, 1.0)
OPTIMIZER_NAMES = {"sgd": "SGD", "adam": "Adam"}

# The normalization after each hidden layer's affine map (tinyinit.networks.normalization.NORMS),
# in words.
NORMALIZATIONS = {"none": "none", "batch": "BatchNorm", "layer": "LayerNorm"}


def settings_line(settings: dict) -> str:
    """The settings of a run in one line, as its caption and its pin's label say them.

    >>> print(settings_line(dict(initializer="kaiming_normal", gain=2**0.5, std=0.02,
    ...     activation="relu", optimizer="sgd", learning_rate=0.02, normalization="none",
    ...     hidden_layers=20)))
    relu, Kaiming normal, fan_in (gain 1.41), SGD at 0.02, 20 hidden layers of 64
    """
    instance("settings", settings, dict, "a dict of a run's settings (TrainingExplorer.settings)")
    missing = [name for name in SETTINGS if name not in settings]
    if missing:
        raise ValueError(f"settings must hold every one of {', '.join(SETTINGS)}, "
                         f"got {shown(settings)}")  # fmt: skip
    row = initializer_row(settings["initializer"])
    scale = f"gain {settings['gain']:.3g}" if row.uses_gain else f"std {settings['std']:.3g}"
    norm = settings["normalization"]
    return (
        f"{settings['activation']}, {row.label} ({scale}), "
        f"{OPTIMIZER_NAMES[settings['optimizer']]} at {settings['learning_rate']:.3g}, "
        f"{settings['hidden_layers']} hidden layers of {WIDTH}"
        + ("" if norm == "none" else f", {NORMALIZATIONS[norm]}")
    )


def frame_wait(frame_cpu: float) -> float:
    """CPU seconds of training after a frame that cost `frame_cpu` of them, before the next:
    the display at most DISPLAY_SHARE of the kernel's CPU, D / (wait + D) <= DISPLAY_SHARE.
    (And a frame at most every 1/FRAMES_PER_SECOND s of the clock, whatever it costs.)

    >>> round(frame_wait(0.01), 4), round(frame_wait(0.03), 4)
    (0.0567, 0.17)
    """
    frame_cpu = number("frame_cpu", frame_cpu, minimum=0)
    return frame_cpu * (1 - DISPLAY_SHARE) / DISPLAY_SHARE


def step_due(due: float, now: float, rate: float) -> float:
    """When the step after the one due at `due` is due, that one taken at `now`: 1/rate
    later, or at once for rate 0 (as fast as it can). Steps that fall behind are made up for a tenth
    of a second at most: a slow moment never turns into a long burst.

    >>> step_due(10.0, 10.01, 30), step_due(10.0, 10.5, 30), step_due(10.0, 10.01, 0)
    (10.033333333333333, 10.4, 10.01)
    """
    due, now = number("due", due), number("now", now)
    if not number("rate", rate, minimum=0):
        return now
    return max(due + 1 / rate, now - 0.1)


def _percent(value: float) -> str:
    return f"{100 * value:.0f}%"


def _number(value: float) -> str:
    return f"{value:.3g}" if math.isfinite(value) else str(value)


@dataclass(frozen=True)
class Pinned:
    """A run kept for comparison: its settings, its curves, its last test evaluation and the
    activations its histograms showed (by layer).

    `TrainingExplorer.pin` makes one of the current run and keeps it in `pins`; its label is
    the run's settings in one line.

    >>> curves = TrainingCurves(np.full(40, 2.3), np.array([0, 40]), np.array([2.31, 2.30]),
    ...                         np.array([1e-7, 2e-7, 4e-7]), "xavier_normal")
    >>> pinned = Pinned(dict(initializer="xavier_normal", gain=1.0, std=0.02,
    ...     activation="relu", optimizer="sgd", learning_rate=0.02, normalization="none",
    ...     hidden_layers=20), curves, 0.09, {1: np.zeros(64)})
    >>> pinned.label
    'relu, Xavier normal (gain 1), SGD at 0.02, 20 hidden layers of 64'
    >>> pinned.curves.steps, pinned.accuracy
    (40, 0.09)
    """

    settings: dict
    curves: TrainingCurves
    accuracy: float
    samples: dict

    @property
    def label(self) -> str:
        return settings_line(self.settings)


def run_words(curves: TrainingCurves, accuracy: float) -> str:
    """Where a run is, in words: its step, train and test loss, test accuracy, update ratios.

    >>> curves = TrainingCurves(np.full(40, 2.3), np.array([0, 40]), np.array([2.31, 2.30]),
    ...                         np.array([1e-7, 2e-7, 4e-7]), "xavier_normal")
    >>> print(run_words(curves, 0.09))
    step 40: train loss 2.3 (mean of the last 20 steps), test loss 2.3, test accuracy 9%; \
update ratio 2e-07 (median over 3 layers; 1e-07 to 4e-07)
    """
    instance("curves", curves, TrainingCurves, "TrainingCurves")
    accuracy = number("accuracy", accuracy, minimum=0, maximum=1)
    words = f"step {curves.steps}: "
    if curves.steps:
        train = running_mean(curves.losses)[-1]
        words += f"train loss {_number(train)} (mean of the last {LOSS_WINDOW} steps), "
    words += f"test loss {_number(curves.test_losses[-1])}, test accuracy {_percent(accuracy)}"
    ratio = curves.update_ratio[np.isfinite(curves.update_ratio)]
    if ratio.size:
        words += (
            f"; update ratio {np.median(ratio):.1g} (median over {ratio.size} layers; "
            f"{ratio.min():.1g} to {ratio.max():.1g})"
        )
    return words


# The explorer's controls; TrainingExplorer's arguments of the same names start them.
TRAINING_CONTROLS = (
    Control(
        "initializer", widgets.Dropdown,
        dict(options=[(row.label, key) for key, row in INITIALIZERS.items()], style=WIDE),
        "initializer", "How the weights are drawn: Xavier (Glorot 2010), Kaiming (He 2015), "
        "or a plain normal with the std you set",
        css="tinyinit-train-initializer",
    ),
    # No step: a slider with one snaps in the browser and sends the snapped
    # value back, so sqrt(2) would become 1.41 and Kaiming would lose 11%.
    Control(
        "gain", widgets.FloatSlider,
        dict(min=0.0, max=3.0, step=None, readout_format=".3f", continuous_update=False),
        "gain", "Multiplies the std of Xavier and Kaiming; Kaiming starts at "
        "calculate_gain(activation), Xavier at 1", css="tinyinit-train-gain",
    ),
    Control(
        "std", widgets.FloatLogSlider,
        dict(base=10, min=-3, max=1, step=0.01, readout_format=".3g", continuous_update=False),
        "std", "The standard deviation of every weight for 'normal with std'",
        css="tinyinit-train-std",
    ),
    Control(
        "activation", widgets.Dropdown, dict(options=list(ACTIVATIONS)), "activation",
        "The nonlinearity phi after every hidden layer", css="tinyinit-train-activation",
    ),
    Control(
        "optimizer", widgets.ToggleButtons,
        dict(options=[(OPTIMIZER_NAMES[o], o) for o in OPTIMIZERS],
             style={"button_width": "70px", "description_width": "initial"},
             layout={"width": "max-content"},
             tooltips=["plain SGD: every weight moves by lr times its gradient",
                       "Adam: every weight moves by about lr, whatever its gradient's size"]),
        "optimizer", "How a step moves the weights; a new run starts with the optimizer's "
        "own learning rate", css="tinyinit-train-optimizer",
    ),
    Control(
        "learning_rate", widgets.Dropdown,
        dict(options=[(f"{r:g}", r) for r in RATES], style=WIDE, layout={"width": "180px"}),
        "learning rate", "The step size; it applies from the next step, without a new run",
        css="tinyinit-train-learning-rate",
    ),
    Control(
        "normalization", widgets.Dropdown,
        dict(options=[(NORMALIZATIONS[key], key) for key in NORMS], style=WIDE),
        "normalization", "What standardizes each hidden layer's affine output before phi: "
        "BatchNorm over the minibatch (Ioffe & Szegedy 2015), LayerNorm over the units "
        "(Ba et al. 2016); gamma and beta train with the weights",
        css="tinyinit-train-normalization",
    ),
    Control(
        "hidden_layers", widgets.IntSlider,
        dict(min=1, max=MAX_HIDDEN_LAYERS, continuous_update=False, style=WIDE),
        "hidden layers", f"Hidden layers of {WIDTH} units between the 64 pixels and the "
        "10 classes", css="tinyinit-train-hidden-layers",
    ),
    Control(
        "speed", widgets.Dropdown,
        dict(options=list(SPEEDS.items()), style=WIDE, layout={"width": "230px"}), "speed",
        "How fast it trains while playing", css="tinyinit-train-speed",
    ),
    Control(
        "play_button", widgets.ToggleButton, dict(icon="play", layout={"width": "90px"}),
        "play", "Train, and redraw as it goes (press again to pause)", css="tinyinit-train-play",
    ),
    Control(
        "step_button", widgets.Button, dict(icon="step-forward", layout={"width": "80px"}),
        "step", "One training step, then the figures", css="tinyinit-train-step",
    ),
    Control(
        "reset_button", widgets.Button, dict(icon="undo", layout={"width": "80px"}), "reset",
        "Back to step 0 with the same settings: the same weights and minibatches",
        css="tinyinit-train-reset",
    ),
    Control(
        "pin_button", widgets.Button, dict(icon="thumb-tack", layout={"width": "80px"}), "pin",
        f"Keep this run on the figures, faded, to compare the next one with (up to "
        f"{MAX_PINS}; the oldest goes first)", css="tinyinit-train-pin",
    ),
    Control(
        "clear_pins_button", widgets.Button, dict(layout={"width": "100px"}), "clear pins",
        "Remove every pinned run", css="tinyinit-train-clear-pins",
    ),
)  # fmt: skip

# The controls whose change starts a new run (the learning rate does not).
NETWORK = ("initializer", "gain", "std", "activation", "optimizer", "normalization",
           "hidden_layers")  # fmt: skip
SETTINGS = (*NETWORK, "learning_rate")
SLIDERS = ("gain", "std", "hidden_layers")
# The gain after the activation and the learning rate after the optimizer, which reset them.
APPLY_ORDER = ("initializer", "activation", "optimizer", "std", "normalization", "hidden_layers",
               "gain", "learning_rate", "speed")  # fmt: skip


class TrainingExplorer(Explorer):
    """Controls, figures and the live training loop; see the module docstring.

    Attributes a notebook may drive or read: the controls of TRAINING_CONTROLS (initializer,
    gain, std, activation, optimizer, learning_rate, normalization, hidden_layers, speed,
    and the buttons); trainer (the run's `tinyinit.networks.training.Trainer`); playing; pins (the
    pinned runs, `Pinned`, oldest first); status (the live region that says what happened),
    caption and histogram_caption (what each figure shows, in words and numbers); plot
    (TrainingPlot), histogram (HistogramPlot); app (the whole layout).

    digits: the data (`load_digits_split()` by default); seed: the weights' PCG32 and the
    minibatches'. Every start value is an argument of the control's name.

    >>> ex = TrainingExplorer(hidden_layers=3)
    >>> ex.step(30)
    >>> ex.trainer.steps, ex.test_steps
    (30, [0, 30])
    """

    def __init__(
        self,
        initializer: str = "xavier_normal",
        gain: float | None = None,
        std: float = 0.02,
        activation: str = "relu",
        optimizer: str = "sgd",
        learning_rate: float | None = None,
        normalization: str = "none",
        hidden_layers: int = 20,
        speed: int = 30,
        digits=None,
        seed: int = 0,
        figsize=(7.5, 2.9),
        png_fallback: bool = True,
    ):
        super().__init__()
        # Checked before anything is built: a clear error naming the argument.
        initializer_row(initializer)
        one_of("activation", activation, ACTIVATIONS)
        one_of("optimizer", optimizer, OPTIMIZERS)
        one_of("normalization", normalization, NORMS)
        one_of("speed", integer("speed", speed), SPEEDS.values())
        if gain is None:
            gain = initial_gain(initializer, activation)
        if learning_rate is None:
            learning_rate = LEARNING_RATES[optimizer]
        gain, std = number("gain", gain, minimum=0), number("std", std, above=0)
        learning_rate = number("learning_rate", learning_rate, above=0)
        hidden_layers = integer("hidden_layers", hidden_layers, minimum=1)
        figsize = size_pair("figsize", figsize)
        self.defaults = dict(
            initializer=initializer, gain=gain, std=std, activation=activation,
            optimizer=optimizer, learning_rate=learning_rate, normalization=normalization,
            hidden_layers=hidden_layers, speed=speed,
        )  # fmt: skip
        if digits is not None:
            instance("digits", digits, Digits, "None or a Digits (load_digits_split)")
        self.digits = load_digits_split() if digits is None else digits
        self.seed = integer("seed", seed)
        self.png_fallback = flag("png_fallback", png_fallback)
        self.panel_font_px = 12  # the histogram panels' words
        self.pins: list[Pinned] = []
        self.playing = False
        self.until = MAX_STEPS  # where playing stops
        self.runs = 0  # started so far (a new network, or a reset)
        self.frames = 0  # drawn so far
        self.frame_cpu = 0.0  # CPU seconds of the kernel the last frame took: the budget's
        self._frame_started = 0.0  # the clock's
        self._others_cpu = 0.0  # the other threads' CPU seconds when the last frame ended
        self._task: asyncio.Task | None = None
        self._next_frame = (0.0, 0.0)  # (CPU time, clock): drawn when both have come
        self._holding = 0
        self._pending = False
        self._blas = ThreadpoolController()  # small matrices: one BLAS thread (as `train`)
        # A start value beyond a control's range widens the range: a slider would clamp it.
        self._build(
            TRAINING_CONTROLS, self.defaults,
            gain={"max": max(3.0, gain)},
            std={"min": min(-3, math.floor(math.log10(std))),
                 "max": max(1, math.ceil(math.log10(std)))},
            learning_rate={"options": [(f"{r:g}", r) for r in sorted({*RATES, learning_rate})]},
            hidden_layers={"max": max(MAX_HIDDEN_LAYERS, hidden_layers)},
        )  # fmt: skip
        self._build_views(figsize)
        self._sync_controls()
        self._new_run()
        # A slider held under an arrow key sends a value per press: those fold into one new
        # run. A menu's choice is one message, answered at once.
        self._browser = BrowserChanges()
        for name in SLIDERS:
            self._browser.watch(getattr(self, name))
        for name in SETTINGS:
            getattr(self, name).observe(self._on_setting, names="value")
        self.play_button.observe(self._on_play, names="value")
        self.step_button.on_click(lambda button: self.step())
        self.reset_button.on_click(lambda button: self.reset())
        self.pin_button.on_click(lambda button: self.pin())
        self.clear_pins_button.on_click(lambda button: self.clear_pins())

    # --- building ------------------------------------------------------------------------

    def _build_views(self, figsize) -> None:
        self.plot = TrainingPlot(self._new_figure(figsize), figsize=figsize)
        size = (figsize[0], 0.8 * figsize[1])
        self.histogram = HistogramPlot(self._new_figure(size), figsize=size, decorated=False)
        self.histogram.figure.subplots_adjust(bottom=0.2)  # a shorter figure than the explorer's
        self.status = live(widgets.HTML(tooltip="What the training did last"))
        self.status.add_class("tinyinit-train-status")
        self.caption = widgets.HTML(tooltip="What the loss and update-ratio figure shows")
        self.caption.add_class("tinyinit-caption")
        self.histogram_caption = widgets.HTML(tooltip="What the histograms show")
        self.histogram_caption.add_class("tinyinit-histogram-caption")
        self.panel_row = widgets.HTML(tooltip="The layer of each panel, and its zero entries")
        self.panel_row.add_class("tinyinit-panel-row")
        self._images: dict[int, widgets.Image] = {}  # by id(figure), without a live canvas
        self.plot_view = self._view_of(self.plot.figure)
        self.histogram_view = self._view_of(self.histogram.figure)
        buttons = [self.play_button, self.step_button, self.reset_button, self.pin_button]
        self.controls = widgets.VBox(
            [
                widgets.HBox([self.initializer, self.gain, self.std]),
                widgets.HBox([self.activation, self.normalization, self.hidden_layers]),
                widgets.HBox([self.optimizer, self.learning_rate, self.speed]),
                widgets.HBox([*buttons, self.clear_pins_button]),
            ]
        )
        self.app = widgets.VBox(
            [
                Accessible(), self.controls, self.status, self.caption, self.plot_view,
                self.histogram_caption, self.panel_row, self.histogram_view,
            ],
            layout=widgets.Layout(width="fit-content"),
        )  # fmt: skip
        self.app.add_class("tinyinit-training")

    def _view_of(self, figure) -> widgets.Widget:
        """figure's live canvas, else an image of it redrawn at each frame (png_fallback)."""
        if isinstance(figure.canvas, widgets.DOMWidget):
            return figure.canvas
        if not self.png_fallback:
            return widgets.HTML()
        self._images[id(figure)] = widgets.Image(format="png")
        return self._images[id(figure)]

    # --- the run -------------------------------------------------------------------------

    @property
    def settings(self) -> dict:
        """The controls' values that make a run, by name."""
        return {name: getattr(self, name).value for name in SETTINGS}

    @one_at_a_time
    def _new_run(self) -> None:
        """A new Trainer for the controls as they are; evaluated at step 0, and drawn."""
        s = self.settings
        sizes = [self.digits.x_train.shape[1]] + [WIDTH] * s["hidden_layers"] + [10]
        row = initializer_row(s["initializer"])
        knob = s["gain"] if row.uses_gain else s["std"]
        if row.from_batch is None:
            params = init_params(sizes, row.initializer(knob), PCG32(self.seed))
        else:  # LSUV: each layer's scale read from a batch of the training set
            start = init_params(sizes, row.initializer(1.0), PCG32(self.seed))
            seen = self.digits.x_train[:LSUV_EXAMPLES]
            params = lsuv(start, seen, s["activation"], gain=knob).params
        self.trainer = Trainer(
            params, self.digits.x_train, self.digits.labels_train, s["activation"],
            optimizer=s["optimizer"], lr=s["learning_rate"], seed=self.seed,
            norm=s["normalization"],
        )  # fmt: skip
        self.run_settings = s
        self.runs += 1
        self.test_steps: list[int] = []
        self.test_losses: list[float] = []
        self.accuracy = math.nan
        self.layers = histogram_layers(s["hidden_layers"], "forward")
        self._pin_histograms()
        self._evaluate()  # step 0, which a frame drawn after the first step would miss
        self._redraw()

    def _redraw(self) -> None:
        """A frame now; while playing, after the loop's next step, so that a control answers
        at once and a burst of changes keeps to the display's budget."""
        if self.playing:
            self._next_frame = (0.0, 0.0)
        else:
            self.frame()

    def _evaluate(self) -> None:
        """The test set at the current step (once a step): its loss, accuracy, activations."""
        if self.test_steps and self.test_steps[-1] == self.trainer.steps:
            return
        digits = self.digits
        # One BLAS thread, as the steps: a number does not depend on when it was measured.
        with np.errstate(all="ignore"), self._blas.limit(limits=1, user_api="blas"):
            result = evaluate(
                self.trainer.params, digits.x_test, digits.labels_test, self.trainer.activation,
                norm=self.trainer.norm,
            )  # fmt: skip
        self.test_steps.append(self.trainer.steps)
        self.test_losses.append(result.loss)
        self.accuracy = result.accuracy
        self.samples = {layer: result.forward.h[layer].ravel() for layer in self.layers}

    def curves(self) -> TrainingCurves:
        """The current run as the figures show it."""
        recent = self.trainer.recent("update_ratio", LOSS_WINDOW)
        if len(recent):
            with np.errstate(all="ignore"):
                ratio = np.median(recent, axis=0)
        else:
            ratio = np.full(self.run_settings["hidden_layers"] + 1, np.nan)
        return TrainingCurves(
            self.trainer.losses, np.array(self.test_steps), np.array(self.test_losses), ratio,
            self.run_settings["initializer"],
        )  # fmt: skip

    # --- showing -------------------------------------------------------------------------

    @one_at_a_time
    def frame(self) -> None:
        """Measure the test set (if a step was taken since) and redraw both figures and words."""
        self._frame_started, own = time.perf_counter(), time.thread_time()
        self._evaluate()
        curves = self.curves()
        color = initializer_color(self.run_settings["initializer"])
        self.plot.update(curves)
        activation = self.run_settings["activation"]
        self.histogram.update_samples(self.samples, activation, "forward", color)
        self.caption.value = self._caption_html(curves)
        self.histogram_caption.value = self._histogram_caption_html()
        self.panel_row.value = panel_row_html(self.histogram, self.panel_font_px)
        self._show_pictures(curves)
        self.frames += 1
        # Its cost: this thread's work, and the kernel's other threads' since the frame before
        # (the IO thread that sends the pictures; nothing else works while it trains).
        others = time.process_time() - time.thread_time()
        self.frame_cpu = time.thread_time() - own + max(others - self._others_cpu, 0.0)
        self._others_cpu = others

    def _show_pictures(self, curves: TrainingCurves) -> None:
        """Without a live canvas, each figure as a PNG with its text alternative; with one,
        its picture kept for a page built from the stored notebook."""
        for figure, alt in (
            (self.plot.figure, "Loss over the steps and update ratio per layer: "),
            (self.histogram.figure, "Histograms of the activations at four layers: "),
        ):
            image = self._images.get(id(figure))
            if image is None:
                keep_picture_for_static_pages(figure.canvas, figure)
                continue
            image.value = png_bytes(figure)
            image.tooltip = alt + run_words(curves, self.accuracy)

    def _pin_histograms(self) -> None:
        """Outline the pinned runs whose histograms are of the layers shown now."""
        same = [(k, p.samples) for k, p in enumerate(self.pins) if list(p.samples) == self.layers]
        self.histogram.set_pins(same)

    def _caption_html(self, curves: TrainingCurves) -> str:
        """The loss figure's title, key and numbers (the run's, then each pin's), as HTML."""
        color = initializer_color(self.run_settings["initializer"])
        key = [
            f"{swatch(color, '━━')} train loss, mean of {LOSS_WINDOW} steps",
            f"{swatch(color, '╍●╍')} test loss",
            "┈┈ ln 10, a uniform guess; right: ‖ΔWℓ‖/‖Wℓ‖ per layer, ┈┈ 10⁻³",
        ]
        lines = [html.escape(run_words(curves, self.accuracy))]
        shown = np.concatenate([running_mean(curves.losses), curves.test_losses])
        if np.any(shown[np.isfinite(shown)] > MAX_LOSS_SHOWN):
            lines.append(f"the loss goes above {MAX_LOSS_SHOWN:g}, beyond the axis")
        for slot, pinned in enumerate(self.pins):
            key.append(
                f"{swatch(PIN_COLORS[slot], '━━', PIN_ALPHA)} pin {slot + 1}: "
                f"{html.escape(pinned.label)}"
            )
            lines.append(
                f"pin {slot + 1}: " + html.escape(run_words(pinned.curves, pinned.accuracy))
            )
        title = html.escape(settings_line(self.run_settings))
        return f"<b>{title}</b><br>{' &nbsp; '.join(key)}<br>" + "<br>".join(lines)

    def _histogram_caption_html(self) -> str:
        rms = ", ".join(f"{root_mean_square(self.samples[k]):.3g}" for k in self.layers)
        words = (
            f"the activations h at layers {', '.join(map(str, self.layers))} on the "
            f"{len(self.digits.x_test)} test digits, step {self.trainer.steps}: shared axes, "
            f"bars: fraction of all values per bin; rms {rms}"
        )
        words += zero_and_saturated_words(self.run_settings["activation"], "forward")
        if self.run_settings["normalization"] == "batch":
            words += "; BatchNorm with its running statistics, as the test set is evaluated"
        if self.histogram.pins:
            words += "; outlines: the pinned runs' activations at their last step"
        return html.escape(words)

    def _say(self, words: str) -> None:
        """Tell what happened in the live region (a screen reader reads it out)."""
        self.status.value = html.escape(words)

    # --- acting --------------------------------------------------------------------------

    @one_at_a_time
    def step(self, n: int = 1) -> None:
        """Train n steps now (paused; fewer if the run diverges), then draw one frame."""
        n = integer("n", n, minimum=1, maximum=MAX_STEPS)
        self.pause()
        with self._blas.limit(limits=1, user_api="blas"):
            for _ in range(n):
                if self.trainer.step() is None:
                    self._stop(diverged=True)
                    return
        self.frame()
        self._say_where("took " + ("a step" if n == 1 else f"{n} steps"))

    @one_at_a_time
    def play(self, until: int = MAX_STEPS) -> None:
        """Train on the kernel's event loop until paused, diverged, or at step `until` (at most
        MAX_STEPS: a run forgotten in a corner does not train forever)."""
        until = min(integer("until", until, minimum=1), MAX_STEPS)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "play() trains on a running asyncio event loop, which a Jupyter kernel has; "
                "here there is none: use step(n)"
            ) from None
        self.playing, self.until = True, until
        if not self.play_button.value:
            self.play_button.value = True  # its observer comes back here, playing already
        self._say(f"training: {settings_line(self.run_settings)}")
        # A task that still runs on this loop goes on. One of another loop may never run
        # again (a kernel restarted under the explorer, a loop that stopped, one that only
        # turns when its thread asks it to); and JupyterLab may deliver the play button's
        # messages on a kernel subshell, a thread with a loop of its own. The loop started
        # here is the explorer's from now on: another one ends at its next turn.
        task = self._task
        if task is None or task.done() or task.get_loop() is not loop:
            self._task = loop.create_task(self._train())

    @one_at_a_time
    def pause(self) -> None:
        """Stop after the current step; the figures show where it stopped."""
        if not self.playing:
            return
        self.playing = False
        self.play_button.value = False
        self.frame()
        self._say_where("paused")

    @one_at_a_time
    def reset(self) -> None:
        """The same settings from step 0: the same weights, the same minibatches."""
        self._new_run()
        self._say_where("reset")

    @one_at_a_time
    def pin(self) -> None:
        """Keep the current run on the figures, faded; beyond MAX_PINS the oldest goes."""
        self._evaluate()
        pinned = Pinned(dict(self.run_settings), self.curves(), self.accuracy, self.samples)
        self.pins = [*self.pins, pinned][-MAX_PINS:]
        self.plot.set_pins(list(enumerate(p.curves for p in self.pins)))
        self._pin_histograms()
        self._redraw()
        self._say(f"pinned run {len(self.pins)}: {pinned.label}, at step {self.trainer.steps}")

    @one_at_a_time
    def clear_pins(self) -> None:
        """Remove every pinned run."""
        self.pins = []
        self.plot.set_pins([])
        self._pin_histograms()
        self._redraw()
        self._say("no pinned runs")

    def _say_where(self, what: str) -> None:
        self._say(f"{what}: " + run_words(self.curves(), self.accuracy))

    async def _train(self) -> None:
        """The live loop: a step, then the kernel's messages, a frame when one is due.

        A step and its frame are taken under the explorer's lock, and only while this loop is
        the explorer's: a pause that comes in on another thread waits for the step under way
        and then shows the step where it stopped."""
        me = asyncio.current_task()
        due = time.perf_counter()
        try:
            while True:
                with self.lock:
                    if not self.playing or self._task is not me:
                        if self._task is me:  # a play from now on starts a loop of its own
                            self._task = None
                        return
                    with self._blas.limit(limits=1, user_api="blas"):
                        stepped = self.trainer.step()
                    if stepped is None or self.trainer.steps >= self.until:
                        self._task = None
                        self._stop(stepped is None)
                        return
                    now = time.perf_counter()
                    due = step_due(due, now, self.speed.value)
                    # A frame at most FRAMES_PER_SECOND a second; while the steps keep the
                    # speed with time to spare, in that time, else when its budget of CPU
                    # has come.
                    cpu_due, clock_due = self._next_frame
                    if now >= clock_due and (due > now or time.process_time() >= cpu_due):
                        self.frame()
                        self._next_frame = (
                            time.process_time() + frame_wait(self.frame_cpu),
                            self._frame_started + 1 / FRAMES_PER_SECOND,
                        )
                        now = time.perf_counter()
                await asyncio.sleep(max(due - now, 0.0))  # the kernel's messages, here
        except Exception as error:  # nobody else would see it: say it where one looks
            with self.lock:
                if self._task is me:
                    self._task = None
                self.playing = False
                self.play_button.value = False
                self._say(f"training stopped: {error!r}")
            raise

    def _stop(self, diverged: bool) -> None:
        self.playing = False
        self.play_button.value = False
        self.frame()
        if diverged:
            self._say_where(
                f"the loss of step {self.trainer.diverged_at + 1} is not finite: the run "
                "diverged and stops before it"
            )
        else:
            self._say_where(f"stopped at step {self.trainer.steps}")

    # --- reacting ------------------------------------------------------------------------

    @one_at_a_time
    def _on_play(self, change) -> None:
        if change["new"] and not self.playing:
            self.play()
        elif not change["new"] and self.playing:
            self.pause()
        self.play_button.description = "pause" if change["new"] else "play"
        self.play_button.icon = "pause" if change["new"] else "play"

    def _sync_controls(self, changed: str | None = None) -> None:
        """Enable the controls that apply; the gain follows Kaiming's activation and the
        learning rate the optimizer when those change."""
        row = INITIALIZERS[self.initializer.value]
        self.gain.disabled = not row.uses_gain
        self.std.disabled = row.uses_gain
        if changed in ("initializer", "activation") and row.gain_from_activation:
            self.gain.value = suggested_gain(self.activation.value)[0]
        if changed == "initializer" and not row.gain_from_activation:
            self.gain.value = 1.0
        if changed == "optimizer":
            self.learning_rate.value = LEARNING_RATES[self.optimizer.value]

    @one_at_a_time
    def _on_setting(self, change) -> None:
        """A setting changed. A slider, from the browser: applied once the changes already sent
        are in."""
        if self._holding:
            return
        self._holding += 1  # what _sync_controls changes in turn is part of this change
        try:
            self._sync_controls(self._name_of(change["owner"]))
        finally:
            self._holding -= 1
        if not self._browser.active:
            self._apply()
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._apply()
            return
        if not self._pending:
            self._pending = True
            loop.call_soon(self._deferred_apply)

    def _name_of(self, widget) -> str | None:
        return next((name for name in SETTINGS if getattr(self, name) is widget), None)

    @one_at_a_time
    def _deferred_apply(self) -> None:
        self._pending = False
        self._apply()

    def _apply(self) -> None:
        """The settings as they are now: a new run if the network changed, else the new rate."""
        settings = self.settings
        if any(settings[name] != self.run_settings[name] for name in NETWORK):
            self._say(f"new run: {settings_line(settings)}")
            self._new_run()
            return
        self.trainer.lr = settings["learning_rate"]
        self.run_settings = settings
        self._say(f"learning rate {settings['learning_rate']:.3g} from step {self.trainer.steps}")
        self._redraw()

    @one_at_a_time
    def apply(self, settings: dict) -> None:
        """Set the controls named in `settings` at once: one new run (a demonstration's step)."""
        instance("settings", settings, dict, "a dict of the explorer's controls")
        for name in settings:
            one_of("settings", name, (*SETTINGS, "speed"))
        self._holding += 1
        try:
            for name in APPLY_ORDER:
                if name in settings:
                    getattr(self, name).value = settings[name]
                    self._sync_controls(name)
        finally:
            self._holding -= 1
        self._apply()


def training_explorer(**defaults) -> TrainingExplorer:
    """The training explorer, starting from `defaults` (any argument of TrainingExplorer).

    The default is notebook 04's network as Xavier draws it: 20 hidden ReLU layers of 64,
    Xavier normal (gain 1), SGD at 0.02, whose test accuracy stays near chance for its
    first hundreds of steps; Kaiming's gain √2 learns the digits in as many.

    >>> ex = training_explorer(hidden_layers=2)
    >>> ex.step(10)
    >>> print(ex.status.value)  # doctest: +ELLIPSIS
    took 10 steps: step 10: train loss ...
    """
    return TrainingExplorer(**defaults)
