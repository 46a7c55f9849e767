"""Every public function of every module refuses bad input at the door, in the package's words.

For each public function (a name in its module's __all__; a class's constructor and public
methods too), the test first makes a call that works, from an example value for every argument
(EXAMPLES, by the argument's name, or CALLS, by the function's), and then calls it again with one
argument at a time replaced by each value of BAD: wrong kinds (None, a bool where a count goes,
a string where a number goes, an object, bytes), values out of every range (negative, zero,
NaN, the infinities, 1e300), empty and odd containers, arrays of the wrong shape, a callable
that returns nothing. Whatever a call does, it may only:

* return (the value was acceptable: 0 gain, a numpy integer for a count, 1e300 that overflows
  to inf, which is the package's way), or
* raise ValueError or TypeError whose message names the argument (as a word: "gain must be ..."),
  a TypeError where the value is of the wrong kind (None, an object, bytes, a bool for a number)
  and never where it is a number of numpy's for a number of Python's;

and no warning may escape (warnings are errors here). To cover a new module, add its name to
MODULES; the first test then says which of its arguments still need an example.

Two passes: a quick one, an object of no kind for every argument (`make mutation` runs it, so
a check that names the wrong argument is caught there), and the exhaustive one, every value of
BAD (marked `exhaustive`, run by `make test`). Measured on the two shared cores, with another
job running: the quick pass 27 s of CPU (41 s of wall clock; building the presentation app three
times takes a third of it), the exhaustive one 69 s of CPU (2 min 6 s of wall clock). The quick
pass's one value is the exhaustive pass's first: where both are selected, tests/conftest.py
leaves the quick one out.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import inspect
import math
import re
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tinyinit import PCG32
from tinyinit.course.quiz import NotYet, Unanswered

# The modules covered, each by its __all__: every module of the package with public functions.
# Not here: tinyinit.core.arguments, whose refusals name the argument of the function that asks (its
# `name`), tested to the letter in tests/core/test_arguments.py; tinyinit.core.libm's twin
# tinyinit._extras
# and tinyinit.__main__ (no public functions). A name a module takes from another module of
# this list is called in its own (tinyinit.present gathers its submodules' names).
MODULES = [
    "tinyinit.core.pcg32",
    "tinyinit.core.distributions",
    "tinyinit.core.init",
    "tinyinit.core.activations",
    "tinyinit.physics.mean_field",
    "tinyinit.physics.gains",
    "tinyinit.core.parallel",
    "tinyinit.core.libm",
    "tinyinit.physics.depth_result",
    "tinyinit.physics.propagation",
    "tinyinit.physics.propagation_fast",
    "tinyinit.physics.variance",
    "tinyinit.physics.residual",
    "tinyinit.networks.residual_audit",
    "tinyinit.networks.transformer",
    "tinyinit.networks.mup",
    "tinyinit.core.layouts",
    "tinyinit.networks.normalization",
    "tinyinit.networks.mlp",
    "tinyinit.networks.optimizers",
    "tinyinit.networks.training",
    "tinyinit.networks.digits",
    "tinyinit.networks.lsuv",
    "tinyinit.physics.diagnostics",
    "tinyinit.cli",
    "tinyinit.views.explorers",
    "tinyinit.views.live_training",
    "tinyinit.views.browser_transport",
    "tinyinit.views.a11y",
    "tinyinit.views.plots",
    "tinyinit.views.figures",
    "tinyinit.views.style",
    "tinyinit.views.projector",
    "tinyinit.views.naming",
    "tinyinit.course.quiz",
    "tinyinit.course.exercises",
    "tinyinit.course.pitfalls",
    "tinyinit.course.catalog",
    "tinyinit.course.student_process",
    "tinyinit.course.wire_format",
    "tinyinit.course.checker",
    "tinyinit.course.student_functions",
    "tinyinit.present",
    "tinyinit.present.look",
    "tinyinit.present.share",
    "tinyinit.present.keys",
    "tinyinit.present.demonstrations",
    "tinyinit.present.explorers",
    "tinyinit.present.app",
    "tinyinit.present.voila",
    "tinyinit.present.noise",
]


class Fresh:
    """An example made anew for every call (a generator, which a call advances)."""

    def __init__(self, make):
        self.make = make

    def __repr__(self):
        return f"Fresh({self.make.__name__})"


class Kept(Fresh):
    """An example made once for a function's calls: costly to make (a figure, a simulation),
    and nothing the calls change matters to the next (a line drawn on an axes)."""


def value_of(example):
    return example.make() if isinstance(example, Fresh) else example


def rng():
    return PCG32(0)


def small_result():
    from tinyinit.physics.propagation import simulate

    return simulate("relu", n_layers=2, width=4, seeds=1, batch=2, sample_layers=(1, 2))


def small_stack():
    from tinyinit.physics.residual import draw_residual_stack

    return draw_residual_stack(2, 8, 8, 4, PCG32(0))


def small_config():
    from tinyinit.networks.transformer import GPTConfig

    return GPTConfig(vocab_size=8, block_size=4, n_layer=1, n_head=2, n_embd=4)


def small_gpt():
    from tinyinit.networks.transformer import init_gpt_params

    return init_gpt_params(small_config(), PCG32(0))


def regression_task():
    from tinyinit.networks.mup import make_regression

    return make_regression(PCG32(0, stream=1), 64, 16, 4)


def first_weight():
    from tinyinit import xavier_uniform

    return xavier_uniform((4, 3), 1.0, PCG32(7))[0, 0]


def small_params():
    return [(np.ones((3, 2)), np.zeros(3)), (np.ones((2, 3)), np.zeros(2))]


def norm_cache():
    from tinyinit.networks.normalization import norm_forward

    return norm_forward("batch", np.array([[0.0, 1.0], [1.0, 3.0]]), np.ones(2), np.zeros(2))[1]


@functools.cache
def stub_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tinyinit-every-argument-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def stub_file() -> Path:
    """A student's file with one stub, as a notebook starts it."""
    path = stub_folder() / "my_init.py"
    path.write_text("def fans(shape):\n    raise NotImplementedError()\n", encoding="utf-8")
    return path


def unreadable_report():
    from tinyinit.course.checker import Report

    return Report("my_init.py", problem="SyntaxError at my_init.py:3")


def yours_on(report):
    from tinyinit.course.student_functions import yours

    return yours(report)


def two_results():
    from tinyinit.physics.propagation import simulate

    return [
        simulate("relu", initializer, gain=gain, n_layers=2, width=4, seeds=1)
        for initializer, gain in (("xavier_uniform", 1.0), ("kaiming_normal", 2**0.5))
    ]


def agg_axes():
    return agg_figure().add_subplot()


def end_labels():
    from tinyinit.views.projector import end_label_artist

    return [end_label_artist(agg_axes(), "black")]


def training_curves():
    from tinyinit.views.plots import TrainingCurves

    return TrainingCurves(
        np.full(3, 2.3), np.array([3]), np.array([2.2]), np.full(2, 1e-3), "xavier"
    )


def histogram_result():
    from tinyinit.physics.propagation import simulate
    from tinyinit.views.plots import histogram_layers

    return simulate(
        "relu", n_layers=2, width=4, seeds=1, sample_layers=histogram_layers(2, "forward")
    )


# A run's settings, as TrainingExplorer.settings gives them.
RUN_SETTINGS = dict(
    initializer="kaiming_normal",
    gain=2**0.5,
    std=0.02,
    activation="relu",
    optimizer="sgd",
    learning_rate=0.02,
    normalization="none",
    hidden_layers=2,
)


def small_look():
    from tinyinit.present.look import Look

    return Look.for_page(1280, 720, top=150)


# One instance for all the calls of its methods, where making one takes a second or more (an
# app of three explorers, a training explorer and its digits): what a call leaves behind (a
# demonstration shown, a step trained) is where the next one starts, as for a user.
@functools.cache
def small_presentation():
    from tinyinit.present.app import Presentation

    return Presentation(residual_blocks=12, warm=False)


@functools.cache
def small_training_explorer():
    from tinyinit.views.live_training import TrainingExplorer

    return TrainingExplorer(hidden_layers=2, figsize=(3.0, 2.0), png_fallback=False)


@functools.cache
def large_training_explorer():
    from tinyinit.present.explorers import LargeTrainingExplorer

    return LargeTrainingExplorer(hidden_layers=2, png_fallback=False)


def small_pass():
    from tinyinit.physics.depth_result import SeedPass

    return SeedPass(0, [1.0, 0.6, 0.2], None, {})


def small_histogram():
    from tinyinit.physics.propagation import simulate
    from tinyinit.views.plots import HistogramPlot, histogram_layers

    plot = HistogramPlot(decorated=False)
    layers = histogram_layers(2, "forward")
    plot.update(simulate("relu", n_layers=2, width=4, seeds=1, sample_layers=layers), draw=False)
    return plot


def agg_figure():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure()
    FigureCanvasAgg(figure)
    return figure


def projector():
    import tinyinit.views.projector

    return tinyinit.views.projector


def quiz():
    import tinyinit.course.quiz

    return tinyinit.course.quiz


def revealed_question():
    question = quiz().predict("Is 7 prime?", ["yes", "no"])
    question.reveal("yes", "7 = 1 x 7 only")
    return question


def mean_squares_by_hand(x, weights, phi):
    """Notebook 03's exercise 1, answered."""
    h, m = x, [np.mean(x**2)]
    for W in weights:
        h = phi(W @ h)
        m.append(np.mean(h**2))
    return np.array(m)


def training():
    import tinyinit.networks.training

    return tinyinit.networks.training


def nothing(*args, **kwargs):
    """A callable of yours that forgot its return."""


def double(z):
    return 2.0 * np.asarray(z, dtype=np.float64)


# A valid example for an argument, by its name, wherever it occurs.
EXAMPLES = {
    "shape": (4, 3),
    "rng": Fresh(rng),
    "gain": 1.0,
    "std": 0.5,
    "mean": 0.0,
    "low": -1.0,
    "high": 1.0,
    "value": 0.5,
    "n": 5,
    "seed": 0,
    "stream": 54,
    "fan_in": 3,
    "fan_out": 4,
    "fan": 3,
    "nonlinearity": "relu",
    "fan_mode": "fan_in",
    "param": None,
    "n_layers": 2,
    "base_std": 0.02,
    "groups": 1,
    "sparsity": 0.5,
    "a": -2.0,
    "b": 2.0,
    "activation": "tanh",
    "phi": "tanh",
    "q": 1.0,
    "q0": 1.0,
    "q_star": 1.0,
    "z": np.array([-1.0, 0.0, 2.0]),
    "x": np.array([0.5, 1.0, 2.0]),
    "approximate": "none",
    "slope": 0.2,
    "width": 4,
    "batch": 2,
    "seeds": 1,
    "direction": "forward",
    "initializer": "xavier_uniform",
    "sample_layers": (),
    "kind": "normal",
    "layer": 1,
    "input_mean_square": 1.0,
    "kinks": (0.0,),
    "nodes_per_panel": 8,
    "u0": np.array([0.25, 0.5]),
    "u1": np.array([0.5, 0.75]),
    "out": None,
    "bounds": None,
    "inputs": "normal",
    "weights": "normal",
    "n_samples": 4,
    "samples": np.array([1.0, 2.0, 3.0]),
    "fan_var": 1.0,
    "weight_variance": 0.5,
    "mean_square": 1.0,
    "floatfmt": ".3g",
    "headers": ["n", "v"],
    "rows": [[1, 0.5]],
    "max_layers": 2,
    "hidden": 8,
    "tokens": 4,
    "stack": Fresh(small_stack),
    "out_scale": 1.0,
    "layer_norm": "pre",
    "norm": "batch",
    "scaled": True,
    "x0_var": 1.0,
    "addition_var": 1.0,
    "per_layer": 0.9,
    "variance_factor": 1.0,
    "eps": 1e-5,
    "template": "h.{i}.mlp.c_proj.weight",
    "naming": "gpt2",
    "unscaled": (),
    "n_sigmas": 5.0,
    "var": 1.0,
    "config": Fresh(small_config),
    "role": "residual_out",
    "vocab_size": 8,
    "seq": 3,
    "logits": np.zeros((1, 2, 8)),
    "targets": np.array([[0, 3]]),
    "d_in": 3,
    "d_out": 2,
    "parametrization": "mup",
    "base_width": 4,
    "lr": 0.01,
    "optimizer": "adam",
    "steps": 2,
    "widths": (4, 8),
    "layer_kind": "linear",
    "in_channels": 2,
    "out_channels": 3,
    "kernel_size": (3,),
    "text": "5/3",
    "title": "a title",
    "theory": True,
    "math_title": False,
    "size": (4.0, 3.0),
    "dpi": 50,
    "result": Fresh(small_result),
    "report": nothing,
    "argv": ["--help"],
    "stderr": None,
    "max_bytes": 1 << 20,
    "memo_size": 8,
    "memo_bytes": 1 << 20,
    "cpu_max": "150000 100000",
    "task": str,
    "items": [-1, 2],
    "test_fraction": 0.25,
    "dtype": np.float64,
    "sizes": [3, 2],
    "init_weight": lambda shape, rng: np.ones(shape),
    "params": Fresh(small_params),
    "labels": np.array([0, 1]),
    "batch_size": 2,
    "state": None,
    "beta1": 0.9,
    "beta2": 0.999,
    "f": double,
    "vectorized": np.sqrt,
    "scalar": math.sqrt,
    "name": "relu",
    "axis": 1,
    "gamma": np.ones(2),
    "beta": np.zeros(2),
    "running_mean": np.zeros(2),
    "running_var": np.ones(2),
    "cache": Fresh(norm_cache),
    "dy": np.ones((2, 2)),
    "momentum": 0.1,
    "n_classes": 10,
    "slopes": np.array([[0.0, 1.0], [0.0, 0.5]]),
    "values": [np.array([0.5, 1.0]), np.array([-1.0])],
    "edges": np.linspace(-2.0, 2.0, 5),
    "tol": 0.1,
    "settings": RUN_SETTINGS,
    "frame_cpu": 0.01,
    "due": 10.0,
    "now": 10.01,
    "rate": 30.0,
    "accuracy": 0.09,
    "curves": Fresh(training_curves),
    "share_url": "https://example.org/",
    "look": Kept(small_look),
    "results": Kept(two_results),
    "names": ["Xavier", "Kaiming"],
    "other": Fresh(small_result),
    "other_name": "Xavier",
    "markup": "text",
    "figure": Kept(agg_figure),
    "fig": Kept(agg_figure),
    "fonts": None,
    "scale": 1.5,
    "ax": Kept(agg_axes),
    "color": "black",
    "fontsize": 12.0,
    "animated": False,
    "slide": False,
    "ylim": None,
    "alt": "a picture of two curves",
    "desc": "a picture",
    "question": "Is 7 prime?",
    "options": ["yes", "no"],
    "rel_tol": 0.1,
    "abs_tol": 0.5,
    "condition": True,
    "hint": "count again",
    "max_passes": 3,
}

# Examples for one function (module.function, module.Class for its constructor, or
# module.Class.method), where the names' examples do not fit it.
CALLS = {
    "tinyinit.views.live_training.TrainingExplorer": dict(
        hidden_layers=2, figsize=(3.0, 2.0), png_fallback=False
    ),
    "tinyinit.views.live_training.TrainingExplorer.step": dict(n=1),
    "tinyinit.views.live_training.TrainingExplorer.apply": dict(settings=dict(gain=1.0)),
    "tinyinit.views.live_training.settings_line": dict(settings=RUN_SETTINGS),
    "tinyinit.present.presentation": dict(share_url=None),
    "tinyinit.present.app.Presentation": dict(residual_blocks=12, share_url=None, warm=False),
    "tinyinit.present.app.Presentation.explorer": dict(app="depth"),
    "tinyinit.present.app.Presentation.state": dict(name="Xavier + ReLU: collapse", step=0),
    "tinyinit.present.app.Presentation.axis": dict(name="Xavier + ReLU: collapse"),
    "tinyinit.present.app.Presentation.choose": dict(name="Xavier + ReLU: collapse", step=0),
    "tinyinit.present.app.Presentation.show": dict(name="Xavier + ReLU: collapse", step=0),
    "tinyinit.present.look.Look.for_page": dict(width=1280, height=720, top=150, below=None),
    "tinyinit.present.look.set_canvas_px": dict(figure=Kept(agg_figure), width=200, height=100),
    "tinyinit.present.look.set_margins_px": dict(
        figure=Kept(agg_figure), left=10.0, right=10.0, top=10.0, bottom=10.0
    ),
    "tinyinit.present.explorers.depth_headline": dict(result=Kept(small_result), pins=()),
    "tinyinit.present.explorers.plot_beside": dict(
        figure_view=Fresh(lambda: __import__("ipywidgets").HTML()),
        side=Fresh(lambda: [__import__("ipywidgets").HTML()]),
        app_class="tinyinit-depth",
    ),
    "tinyinit.present.explorers.LabelledDepthPlot": dict(figure=None),
    "tinyinit.present.explorers.LabelledDepthPlot.update": dict(
        result=Kept(small_result), draw=False
    ),
    "tinyinit.present.explorers.LargeDepthExplorer.result_for": dict(
        settings=dict(
            initializer="xavier_uniform",
            activation="relu",
            direction="forward",
            width=16,
            seeds=1,
            n_layers=2,
            std=0.02,
            gain=1.0,
        )
    ),  # fmt: skip
    "tinyinit.present.explorers.LargeDepthExplorer.apply": dict(settings=dict(n_layers=2)),
    "tinyinit.present.explorers.LargeResidualExplorer": dict(stack=Kept(small_stack), n_layers=2),
    "tinyinit.present.explorers.LargeResidualExplorer.apply": dict(settings=dict(n_layers=2)),
    "tinyinit.present.explorers.LargeResidualExplorer.result_for": dict(
        settings=dict(n_layers=2, scaled=True)
    ),
    "tinyinit.present.explorers.LargeTrainingExplorer.demonstrate": dict(
        settings=dict(gain=1.0), earlier=()
    ),
    "tinyinit.present.voila.voila_command": dict(
        notebook=Path("present.ipynb"), template="lab", cull_idle=120, cull_interval=30
    ),
    "tinyinit.present.voila.app_path": dict(folder=None),
    "tinyinit.present.voila.trust": dict(
        notebook=Fresh(lambda: importlib.import_module("tinyinit.present.voila").app_path()),
        folder=Fresh(stub_folder),
    ),
    "tinyinit.present.demonstrations.presets": dict(
        rows=Fresh(
            lambda: importlib.import_module("tinyinit.present.demonstrations").DEMONSTRATIONS
        )
    ),
    "tinyinit.views.style.initializer_color": dict(initializer="xavier_uniform"),
    "tinyinit.views.style.decade_ticks": dict(bottom=1e-6, top=10.0, max_ticks=7),
    "tinyinit.views.plots.histogram_layers": dict(depth=20, panels=4),
    "tinyinit.views.plots.layer_span": dict(depth=20),
    "tinyinit.views.plots.layer_stats": dict(
        values=np.array([0.0, 1.0, 2.0]), activation_name="relu"
    ),
    "tinyinit.views.plots.nice_ceiling": dict(value=0.031),
    "tinyinit.views.plots.running_mean": dict(values=np.array([4.0, 2.0, 0.0]), window=2),
    "tinyinit.views.plots.step_span": dict(steps=480),
    "tinyinit.views.plots.set_line": dict(
        line=Kept(lambda: agg_axes().plot([], [])[0]), x=[0.0, 1.0], y=[1.0, 0.5]
    ),
    "tinyinit.views.figures.compare_figure": dict(
        results=Kept(two_results), names=["Xavier", "Kaiming"], figsize=(4.0, 3.0)
    ),
    "tinyinit.views.figures.png_bytes": dict(fig=Fresh(agg_figure), dpi=20),
    "tinyinit.views.figures.show": dict(fig=Fresh(agg_figure), alt="an empty figure, for the test"),
    "tinyinit.views.figures.residual_figure": dict(
        stack=Fresh(small_stack), n_layers=2, depths=[1, 2]
    ),
    "tinyinit.views.figures.plot_coordinate_check": dict(
        ax=Kept(agg_axes), widths=[4, 8], sizes=np.ones((2, 3)), title=""
    ),
    "tinyinit.views.figures.plot_lr_sweep": dict(
        ax=Kept(agg_axes), widths=[4, 8], lrs=[0.01, 0.1], losses=np.ones((2, 2)), title=""
    ),
    "tinyinit.views.plots.DepthPlot": dict(figure=None, figsize=(3.0, 2.0)),
    "tinyinit.views.plots.DepthPlot.set_pins": dict(
        pins=Fresh(lambda: [(small_result(), "pinned")])
    ),
    "tinyinit.views.plots.DepthPlot.update": dict(result=Fresh(small_result), draw=False),
    "tinyinit.views.plots.HistogramPlot": dict(figure=None, figsize=(3.0, 2.0)),
    "tinyinit.views.plots.HistogramPlot.set_pins": dict(
        pins=Fresh(lambda: [(0, dict(histogram_result().samples))])
    ),
    "tinyinit.views.plots.HistogramPlot.update": dict(result=Kept(histogram_result), draw=False),
    "tinyinit.views.plots.HistogramPlot.update_samples": dict(
        samples=Kept(lambda: dict(histogram_result().samples)),
        activation_name="relu",
        color="#0072B2",
        title="",
        draw=False,
    ),
    "tinyinit.views.plots.TrainingPlot": dict(figure=None, figsize=(3.0, 2.0)),
    "tinyinit.views.plots.TrainingPlot.set_pins": dict(
        pins=Fresh(lambda: [(0, training_curves())])
    ),
    "tinyinit.views.plots.TrainingPlot.update": dict(curves=Fresh(training_curves), draw=False),
    "tinyinit.views.projector.line_end": dict(x=[0, 1, 2], y=[1.0, 1.5, 2.0]),
    "tinyinit.views.projector.fit_title": dict(fig=Fresh(lambda: agg_axes().figure)),
    "tinyinit.views.projector.place_end_labels": dict(
        ax=Kept(agg_axes),
        artists=Fresh(end_labels),
        ends=Fresh(lambda: [projector().CurveEnd(2.0, 0.25, False, True)]),
    ),
    "tinyinit.views.projector.comparison_figure": dict(
        results=Kept(two_results), names=None, size=(4.0, 3.0), dpi=30, ylim=None
    ),
    "tinyinit.views.projector.save_figure": dict(
        fig=Fresh(agg_figure), path=Fresh(lambda: stub_folder() / "figure.svg"), fmt="svg", dpi=30
    ),
    "tinyinit.views.projector.accessible_svg": dict(
        svg='<svg xmlns="http://www.w3.org/2000/svg"><g/></svg>', title="A", desc="a picture"
    ),
    # The checker runs the student's file in a process of its own (half a second each): a stub
    # file and one test of the card, so that each value its door lets through costs one run.
    "tinyinit.course.checker.check_init": dict(
        path=Fresh(stub_file), tests=["test_hand_example_linear_4x3"], timeout=30.0
    ),
    "tinyinit.course.checker.screen": dict(
        source="def fans(shape):\n    return shape[1], shape[0]\n", file="my_init.py"
    ),
    "tinyinit.course.student_functions.yours": dict(report=Fresh(unreadable_report)),
    "tinyinit.course.student_functions.Yours.is_yours": dict(name="fans"),
    "tinyinit.course.student_functions.Yours.draw": dict(initializer="xavier_uniform"),
    "tinyinit.course.pitfalls.check_initializer": dict(
        fn=lambda base_std, n_layers: base_std / (2 * n_layers) ** 0.5, kind="scaled_residual_std"
    ),
    "tinyinit.course.pitfalls.check_module": dict(api={"fans": lambda shape: (shape[1], shape[0])}),
    "tinyinit.course.pitfalls.stack_mean_squares": dict(
        init=lambda shape, rng: np.ones(shape) / shape[1], widths=[4, 4], batch=2
    ),
    "tinyinit.course.catalog.advise": dict(text="torch raises ValueError here"),
    "tinyinit.course.wire_format.shorten": dict(text="x" * 10, limit=4),
    "tinyinit.course.wire_format.Foreign": dict(type_name="MyWeights", text="MyWeights(4, 3)"),
    "tinyinit.course.student_process.StandIn": dict(module="tinyinit.core.init", name="fans"),
    "tinyinit.course.quiz.check_value": dict(
        name="var_z", value=2.0, right=2.0, tol=0.1, hint="again"
    ),
    "tinyinit.course.quiz.Check": dict(name="Exercise 1"),
    "tinyinit.course.quiz.Reveal": dict(question=Fresh(revealed_question)),
    "tinyinit.course.quiz.Prediction.label": dict(option="yes"),
    "tinyinit.course.quiz.Prediction.choose": dict(option="a"),
    "tinyinit.course.quiz.NumberPrediction.enter": dict(value=2.0),
    "tinyinit.course.exercises.variance_of_a_sum": dict(var_z=2.02, relu_ms=0.99),
    "tinyinit.course.exercises.adam_first_step": dict(answer_2=1e-3 * 4096 * (2 / math.pi) ** 0.5),
    "tinyinit.course.exercises.zero_output_layer": dict(
        after_one_step=[0.1931, 0.1723, 0.183],
        answer_3=0.1931 / 0.1723,
        x_task=Fresh(lambda: regression_task()[0]),
        t_task=Fresh(lambda: regression_task()[1]),
    ),
    "tinyinit.course.exercises.elu_gain": dict(answer_1=1.2452),
    "tinyinit.course.exercises.tanh_gain_for_half": dict(answer_2=1.891),
    "tinyinit.course.exercises.gpt_mlp_addition": dict(
        answer_3=0.001967, measured=0.0019, width=64, n_blocks=24
    ),
    "tinyinit.course.exercises.first_xavier_weight": dict(answer_w0=Fresh(lambda: first_weight())),
    "tinyinit.course.exercises.kaiming_uniform_by_hand": dict(
        my_kaiming_uniform=Fresh(lambda: __import__("tinyinit").kaiming_uniform)
    ),
    "tinyinit.course.exercises.truncation_sigma": dict(trunc_sigma=0.02274),
    "tinyinit.course.exercises.learning_rate_for_the_ratio": dict(
        lr_3=0.5, weight_norm=8.0, grad_norm=0.016
    ),
    "tinyinit.course.exercises.mean_squares_loop": dict(mean_squares=mean_squares_by_hand),
    "tinyinit.course.exercises.scale_that_holds": dict(
        scale=0.2, mean_squares=lambda scale: np.ones(50)
    ),
    "tinyinit.course.exercises.xavier_relu_gain": dict(gain_squared=Fraction(7, 3)),
    "tinyinit.course.exercises.gradient_ratio": dict(ratio_10=2**-4.5),
    "tinyinit.networks.normalization.standardize": dict(x=np.array([[1.0, 3.0], [0.0, 2.0]])),
    "tinyinit.networks.normalization.norm_forward": dict(z=np.array([[0.0, 1.0], [1.0, 3.0]])),
    "tinyinit.networks.normalization.batch_norm_eval": dict(z=np.array([[0.0, 1.0], [1.0, 3.0]])),
    "tinyinit.networks.lsuv.lsuv": dict(params=Fresh(small_params), x=np.eye(2), activation="relu"),
    "tinyinit.networks.lsuv.lsuv_init": dict(sizes=[2, 3], x=np.eye(2), activation="relu"),
    "tinyinit.core.arguments.integer": dict(name="n", value=3, minimum=None, maximum=None),
    "tinyinit.core.arguments.integers": dict(name="n", value=[1, 2], minimum=None),
    "tinyinit.core.arguments.number": dict(
        name="n", value=0.5, minimum=None, above=None, maximum=None
    ),
    "tinyinit.core.arguments.one_of": dict(name="n", value="a", choices=("a", "b")),
    "tinyinit.core.arguments.flag": dict(name="n", value=True),
    "tinyinit.core.arguments.instance": dict(name="n", value=1.5, kinds=float, what="a float"),
    "tinyinit.core.arguments.function": dict(name="n", value=abs),
    "tinyinit.core.arguments.generator": dict(name="n", value=Fresh(rng)),
    "tinyinit.core.arguments.real_array": dict(name="n", value=[1.0], ndim=None, what=""),
    "tinyinit.core.arguments.shown": dict(value=1.5),
    "tinyinit.core.arguments.is_integer": dict(value=3),
    "tinyinit.core.arguments.is_number": dict(value=3.5),
    "tinyinit.core.pcg32.PCG32.advance": dict(k=3),
    "tinyinit.core.pcg32.PCG32.words": dict(n=3),
    "tinyinit.core.pcg32.PCG32.uniforms": dict(n=3),
    "tinyinit.core.init.uniform_bound": dict(std=0.5),
    # leaky_relu, so that its slope (param) is read, not ignored as for the other names
    "tinyinit.core.init.calculate_gain": dict(nonlinearity="leaky_relu", param=0.2),
    "tinyinit.core.init.kaiming_normal": dict(nonlinearity="leaky_relu", param=0.2),
    "tinyinit.core.init.kaiming_uniform": dict(nonlinearity="leaky_relu", param=0.2),
    "tinyinit.physics.mean_field.activation_mean_square": dict(phi="leaky_relu", param=0.2),
    "tinyinit.physics.mean_field.slope_mean_square": dict(phi="leaky_relu", param=0.2),
    "tinyinit.physics.mean_field.next_q": dict(phi="leaky_relu", param=0.2),
    "tinyinit.physics.mean_field.q_map_slope": dict(phi="leaky_relu", param=0.2),
    "tinyinit.physics.mean_field.fixed_point": dict(phi="leaky_relu", param=0.2),
    "tinyinit.physics.mean_field.gradient_factor": dict(phi="leaky_relu", param=0.2),
    "tinyinit.physics.gains.single_layer_gain": dict(phi="leaky_relu", param=0.2),
    "tinyinit.physics.gains.gain_for_fixed_point": dict(phi="leaky_relu", param=0.2),
    "tinyinit.core.init.dirac_init": dict(shape=(2, 2, 3)),
    "tinyinit.core.init.eye_init": dict(shape=(2, 3)),
    "tinyinit.core.init.trunc_normal_init": dict(a=-2.0, b=2.0),
    "tinyinit.core.activations.leaky_relu": dict(slope=0.2),
    "tinyinit.core.activations.activation": dict(phi="leaky_relu", param=0.2),
    "tinyinit.core.activations.as_activation": dict(phi="leaky_relu", param=0.2, name="phi"),
    "tinyinit.core.init.Initializer": dict(
        key="k",
        label="K",
        init=lambda shape, rng, std: np.zeros(shape),
        kwargs={},
        knob="std",
        std=lambda fan_in, fan_out, std: std,
        formula="f",
        gain_from_activation=False,
        title="",
    ),
    "tinyinit.core.init.Initializer.initializer": dict(value=1.0),
    "tinyinit.core.init.initializer_row": dict(initializer="kaiming_normal"),
    "tinyinit.physics.gains.initial_gain": dict(initializer="kaiming_normal", activation="relu"),
    "tinyinit.physics.propagation.unit_batch": dict(stream=1),
    "tinyinit.physics.depth_result.DepthResult.ratio": dict(start=1),
    "tinyinit.physics.depth_result.DepthResult.first_layer": dict(
        values=np.array([1.0, 0.5, 0.0]), where=lambda v: v == 0
    ),
    "tinyinit.physics.propagation.per_sample_weight_square": dict(
        delta=np.ones((2, 3)), h=np.ones((4, 3))
    ),
    "tinyinit.physics.propagation.forward_values": dict(
        weights=[np.eye(2)], activation="relu", x=np.ones((2, 3))
    ),
    "tinyinit.physics.propagation.mean_squares_by_layer": dict(
        weights=[np.eye(2)], activation="relu", x=np.ones((2, 3))
    ),
    "tinyinit.physics.propagation.backward_values": dict(
        weights=[np.eye(2)], slopes=[np.ones((2, 3))], g=np.ones((2, 3))
    ),
    "tinyinit.physics.propagation.weight_gradient_theory": dict(curves=None),
    "tinyinit.physics.propagation_fast.UnitWeights.get": dict(
        initializer="normal_init", width=4, seed=0, n_layers=2
    ),
    "tinyinit.physics.propagation_fast.UnitWeights.batch": dict(width=4, batch=2, seed=0, stream=1),
    "tinyinit.physics.propagation_fast.UnitWeights.theory": dict(
        act="tanh", gain=1.0, n_layers=2, direction="backward"
    ),
    "tinyinit.physics.variance.draw_inputs": dict(kind="normal", shape=(2, 3)),
    "tinyinit.physics.variance.draw_weights": dict(shape=(2, 3), std=0.5, weights="uniform"),
    "tinyinit.physics.variance.input_moments": dict(kind="relu"),
    "tinyinit.physics.variance.predicted_variance": dict(fan_in=3),
    "tinyinit.physics.variance.sample_sums": dict(fan_in=3, inputs="relu", weights="normal"),
    "tinyinit.physics.propagation.mean_square": dict(a=np.array([3.0, -1.0])),
    "tinyinit.physics.variance.root_mean_square": dict(a=np.array([3.0, -1.0])),
    "tinyinit.physics.variance.stack_layers": dict(
        init=lambda rng: np.ones((2, 3)), seeds=range(2)
    ),
    "tinyinit.physics.variance.mean_square_through": dict(
        weights=np.ones((2, 3, 4)), x=np.ones((2, 5, 4)), activation=None
    ),
    "tinyinit.physics.variance.hand_example": dict(shape=(4, 3), n_layers=12, base_std=0.02),
    "tinyinit.physics.variance.Estimate.z_score": dict(expected=1.0),
    "tinyinit.physics.variance.Estimate.agrees": dict(expected=1.0, n_se=4.0),
    "tinyinit.physics.residual.normalize": dict(x=np.array([[1.0, 3.0]])),
    "tinyinit.physics.residual.stream_variance": dict(x=np.array([[1.0, 3.0]])),
    "tinyinit.physics.residual.relu_stack_mean_squares": dict(tokens=4),
    "tinyinit.networks.residual_audit.check_residual_scaling": dict(
        named_params=Fresh(lambda: dict(small_gpt())), n_layers=1
    ),
    "tinyinit.networks.residual_audit.toy_gpt2_parameters": dict(width=4),
    "tinyinit.networks.residual_audit.ResidualScalingReport.count": dict(status="ok"),
    "tinyinit.networks.transformer.layer_norm": dict(
        x=np.ones((2, 4)), weight=np.ones(4), bias=np.zeros(4)
    ),
    "tinyinit.networks.transformer.init_gpt_params": dict(config=Fresh(small_config)),
    "tinyinit.networks.transformer.gpt_forward": dict(
        params=Fresh(small_gpt), config=Fresh(small_config), idx=np.array([[1, 2]])
    ),
    "tinyinit.networks.transformer.TinyGPT": dict(config=Fresh(small_config)),
    "tinyinit.networks.transformer.random_tokens": dict(batch=2, seq=3, vocab_size=8),
    "tinyinit.networks.transformer.GPTConfig": dict(
        vocab_size=8, block_size=4, n_layer=1, n_head=2, n_embd=4, base_std=0.02, init="tinyinit"
    ),
    "tinyinit.networks.mup.init_mlp": dict(width=4, n_layers=3),
    "tinyinit.networks.mup.layer_shapes": dict(width=4, n_layers=3),
    "tinyinit.networks.mup.layer_learning_rates": dict(width=8, n_layers=3, base_width=4),
    "tinyinit.networks.mup.relu_mlp_forward": dict(
        weights=[np.eye(2), np.ones((1, 2))], x=np.ones((3, 2))
    ),
    "tinyinit.networks.mup.relu_mlp_backward": dict(
        weights=[np.eye(2), np.ones((1, 2))],
        activations=[np.ones((3, 2)), np.ones((3, 2))],
        dy=np.ones((3, 1)),
    ),
    "tinyinit.networks.mup.mse_loss": dict(y=np.ones((3, 1)), target=np.zeros((3, 1))),
    "tinyinit.networks.mup.make_regression": dict(n_samples=4, d_in=3, d_out=2),
    "tinyinit.networks.mup.train_regression": dict(
        weights=[np.eye(3), np.ones((2, 3))],
        x=np.ones((4, 3)),
        target=np.zeros((4, 2)),
        lrs=[0.01, 0.01],
        optimizer="adam",
        steps=1,
    ),  # fmt: skip
    "tinyinit.networks.mup.coordinate_check": dict(
        widths=(4, 8), steps=1, n_layers=2, d_in=3, d_out=2, batch=4, base_width=4
    ),
    "tinyinit.networks.mup.lr_sweep": dict(
        widths=(4, 8),
        lrs=[0.01, 0.1],
        steps=1,
        n_layers=2,
        d_in=3,
        d_out=2,
        batch=4,
        base_width=4,
    ),  # fmt: skip
    "tinyinit.core.layouts.weight_shape": dict(layer="conv"),
    "tinyinit.core.layouts.counted_fans": dict(layer="conv"),
    "tinyinit.core.layouts.apply_layer": dict(
        layer="conv", weight=np.ones((3, 2, 3)), x=np.ones((1, 2, 5))
    ),
    "tinyinit.networks.mlp.init_params": dict(sizes=[3, 2]),
    "tinyinit.networks.mlp.forward_layers": dict(
        params=Fresh(small_params), x=np.ones((4, 2)), act="relu", norm=None
    ),
    "tinyinit.networks.mlp.check_batch": dict(
        params=Fresh(small_params), x=np.ones((2, 2)), labels=np.array([0, 1])
    ),
    "tinyinit.networks.mlp.evaluate": dict(
        params=Fresh(small_params), x=np.ones((2, 2)), labels=np.array([0, 1]), activation="relu"
    ),
    "tinyinit.networks.training.train_step": dict(
        state=Fresh(lambda: training().start_training(small_params())),
        x=np.ones((2, 2)),
        labels=np.array([0, 1]),
        activation="relu",
        lr=0.1,
    ),  # fmt: skip
    "tinyinit.networks.training.Trainer": dict(
        params=Fresh(small_params),
        x=np.ones((4, 2)),
        labels=np.array([0, 1, 0, 1]),
        activation="relu",
        lr=0.1,
        batch_size=2,
    ),  # fmt: skip
    "tinyinit.networks.training.Trainer.recent": dict(field="grad_norm", steps=2),
    "tinyinit.networks.mlp.backward_layers": dict(
        weights=[np.ones((3, 2))], h=[np.ones((4, 2))], dz=np.ones((4, 3)), slopes=[]
    ),
    "tinyinit.networks.mlp.forward": dict(x=np.ones((4, 2)), activation="relu"),
    "tinyinit.networks.mlp.loss_and_gradients": dict(
        x=np.ones((2, 2)), labels=np.array([0, 1]), activation="relu"
    ),
    "tinyinit.networks.mlp.accuracy": dict(
        x=np.ones((2, 2)), labels=np.array([0, 1]), activation="relu"
    ),
    "tinyinit.networks.mlp.cross_entropy": dict(logits=np.zeros((2, 3)), labels=np.array([0, 2])),
    "tinyinit.networks.optimizers.sgd_step": dict(
        weights=[np.ones(2)], grads=[np.ones(2)], lrs=[0.1]
    ),
    "tinyinit.networks.optimizers.adam_init": dict(weights=[np.ones(2)]),
    "tinyinit.networks.optimizers.adam_step": dict(
        weights=[np.ones(2)],
        grads=[np.ones(2)],
        state=Fresh(
            lambda: importlib.import_module("tinyinit.networks.optimizers").adam_init([np.ones(2)])
        ),
        lrs=[0.1],
    ),  # fmt: skip
    "tinyinit.networks.training.minibatch_indices": dict(n_samples=4, batch_size=2, steps=3),
    "tinyinit.networks.training.train": dict(
        x=np.ones((4, 2)),
        labels=np.array([0, 1, 0, 1]),
        activation="relu",
        lr=0.1,
        steps=2,
        optimizer="sgd",
        batch_size=2,
        seed=0,
    ),  # fmt: skip
    "tinyinit.networks.digits.load_digits_split": dict(
        test_fraction=0.25, seed=0, dtype=np.float32
    ),
    "tinyinit.cli.depth_figure": dict(size=(4.0, 3.0), dpi=30),
    "tinyinit.cli.parse_gain": dict(gain="5/3"),
    "tinyinit.cli.resolve_gain": dict(gain=None, initializer="kaiming_normal", activation="tanh"),
    "tinyinit.cli.seeds_reported": dict(n=2),
    "tinyinit.physics.depth_result.Experiment.result": dict(
        weight_std=0.5,
        passes=Fresh(lambda: [small_pass()]),
        theory=np.array([1.0, 0.5, 0.3]),
        weight_theory=None,
    ),  # fmt: skip
    "tinyinit.views.explorers.panel_row_html": dict(plot=Kept(small_histogram)),
    "tinyinit.views.explorers.DepthExplorer": dict(
        initializer="xavier_uniform",
        activation="relu",
        gain=None,
        std=0.02,
        n_layers=2,
        width=16,
        seeds=1,
        direction="forward",
        view="curves",
        batch=2,
        cache=None,
        figsize=(3.0, 2.0),
        png_fallback=False,
    ),  # fmt: skip
    "tinyinit.views.explorers.DepthExplorer.snapshot": dict(dpi=20),
    "tinyinit.views.explorers.ResidualStreamExplorer": dict(stack=Fresh(small_stack), n_layers=2),
    "tinyinit.views.explorers.ResidualStreamExplorer.curves": dict(n_layers=2, scaled=True),
    "tinyinit.views.explorers.ResidualStreamExplorer.color": dict(scaled=True),
    "tinyinit.views.explorers.readout_lines": dict(result=Fresh(small_result)),
    "tinyinit.views.naming.compare_line": dict(
        result=Fresh(small_result), pinned=Fresh(small_result), number=1
    ),
    "tinyinit.views.explorers.gain_note": dict(activation_name="gelu", gain=1.5, n_layers=3),
    "tinyinit.views.explorers.caption_html": dict(result=Fresh(small_result), pins=()),
    "tinyinit.views.explorers.histogram_caption_html": dict(result=Fresh(small_result)),
    "tinyinit.views.explorers.depth_explorer": dict(n_layers=2, width=16, seeds=1),
    "tinyinit.views.browser_transport.png_rows": dict(pixels=np.zeros((2, 3, 4), np.uint8)),
    "tinyinit.views.browser_transport.fast_png": dict(pixels=np.zeros((2, 3, 4), np.uint8)),
    "tinyinit.views.browser_transport.keep_picture_for_static_pages": dict(
        canvas=Fresh(lambda: agg_figure().canvas), figure=Fresh(agg_figure)
    ),
    "tinyinit.views.browser_transport.web_canvas_is_known": dict(canvas_class=None),
    "tinyinit.views.browser_transport.fast_web_canvas": dict(
        canvas=Fresh(lambda: agg_figure().canvas)
    ),
    "tinyinit.views.browser_transport.is_web_canvas": dict(
        canvas=Fresh(lambda: agg_figure().canvas)
    ),
    "tinyinit.views.browser_transport.keeps_pixels": dict(
        canvas=Fresh(lambda: agg_figure().canvas)
    ),
    "tinyinit.views.browser_transport.send_whole_pictures": dict(
        canvas=Fresh(lambda: agg_figure().canvas)
    ),
    "tinyinit.views.browser_transport.BrowserChanges.watch": dict(
        widget=Fresh(lambda: __import__("ipywidgets").IntSlider())
    ),
    "tinyinit.views.a11y.live": dict(widget=Fresh(lambda: __import__("ipywidgets").HTML())),
}


def small_trainer():
    trainer = training().Trainer(
        small_params(), np.ones((4, 2)), np.array([0, 1, 0, 1]), "relu", lr=0.1, batch_size=2
    )
    trainer.step()
    return trainer


# Instances for methods: module.Class -> a callable that makes one.
INSTANCES = {
    "tinyinit.present.look.Look": small_look,
    "tinyinit.views.live_training.TrainingExplorer": small_training_explorer,
    "tinyinit.present.app.Presentation": small_presentation,
    "tinyinit.present.explorers.LabelledDepthPlot": lambda: importlib.import_module(
        "tinyinit.present.explorers"
    ).LabelledDepthPlot(),
    "tinyinit.present.explorers.LargeDepthExplorer": lambda: importlib.import_module(
        "tinyinit.present.explorers"
    ).LargeDepthExplorer(n_layers=2, width=16, seeds=1, png_fallback=False),
    "tinyinit.present.explorers.LargeResidualExplorer": lambda: importlib.import_module(
        "tinyinit.present.explorers"
    ).LargeResidualExplorer(small_stack(), 2),
    "tinyinit.present.explorers.LargeTrainingExplorer": large_training_explorer,
    "tinyinit.views.plots.DepthPlot": lambda: importlib.import_module(
        "tinyinit.views.plots"
    ).DepthPlot(figsize=(3.0, 2.0)),
    "tinyinit.views.plots.HistogramPlot": lambda: importlib.import_module(
        "tinyinit.views.plots"
    ).HistogramPlot(figsize=(3.0, 2.0)),
    "tinyinit.views.plots.TrainingPlot": lambda: importlib.import_module(
        "tinyinit.views.plots"
    ).TrainingPlot(figsize=(3.0, 2.0)),
    "tinyinit.course.student_functions.Yours": lambda: yours_on(unreadable_report()),
    "tinyinit.course.quiz.Prediction": lambda: quiz().predict("Is 7 prime?", ["yes", "no"]),
    "tinyinit.course.quiz.NumberPrediction": lambda: quiz().predict_number("2 + 2?", abs_tol=0.5),
    "tinyinit.networks.training.Trainer": small_trainer,
    "tinyinit.core.pcg32.PCG32": rng,
    "tinyinit.core.init.Initializer": lambda: importlib.import_module(
        "tinyinit.core.init"
    ).INITIALIZERS["lsuv"],  # a row read from a batch: every method of a row takes its value
    "tinyinit.physics.depth_result.DepthResult": small_result,
    "tinyinit.physics.propagation_fast.UnitWeights": lambda: importlib.import_module(
        "tinyinit.physics.propagation_fast"
    ).UnitWeights(),
    "tinyinit.physics.variance.Estimate": lambda: importlib.import_module(
        "tinyinit.physics.variance"
    ).Estimate(1, 0.1),
    "tinyinit.physics.variance.Moments": lambda: importlib.import_module(
        "tinyinit.physics.variance"
    ).Moments(0, 1),
    "tinyinit.networks.residual_audit.ResidualScalingReport": lambda: importlib.import_module(
        "tinyinit.networks.residual_audit"
    ).check_residual_scaling(small_gpt(), 1),
    "tinyinit.networks.transformer.TinyGPT": lambda: importlib.import_module(
        "tinyinit.networks.transformer"
    ).TinyGPT(small_config(), PCG32(0)),
    "tinyinit.physics.depth_result.Experiment": lambda: importlib.import_module(
        "tinyinit.physics.depth_result"
    ).experiment(
        "relu",
        "normal_init",
        gain=1.0,
        std=0.5,
        n_layers=2,
        width=4,
        seeds=1,
        batch=2,
        direction="forward",
        sample_layers=(),
    ),  # fmt: skip
    "tinyinit.views.explorers.DepthExplorer": lambda: importlib.import_module(
        "tinyinit.views.explorers"
    ).DepthExplorer(n_layers=2, width=16, seeds=1, batch=2, png_fallback=False),
    "tinyinit.views.browser_transport.BrowserChanges": lambda: importlib.import_module(
        "tinyinit.views.browser_transport"
    ).BrowserChanges(),
    "tinyinit.views.explorers.ResidualStreamExplorer": lambda: importlib.import_module(
        "tinyinit.views.explorers"
    ).ResidualStreamExplorer(small_stack(), 2),
}

# Not called here, and why.
ELSEWHERE = {
    "tinyinit.physics.depth_result.as_result": "an argument check itself, as "
    "tinyinit.core.arguments' are: its refusal names the argument of the function that asks "
    "(its `name`), tested to the letter in tests/physics/test_depth_result.py",
    "tinyinit.course.wire_format.encode": "the wire format: any value is encoded, one it "
    "cannot carry as a Foreign (tests/course/test_checker.py)",
    "tinyinit.course.wire_format.decode": "the wire format: a malformed message raises "
    "WireError, the one error the checker reads from it (tests/course/test_checker.py)",
    "tinyinit.course.wire_format.decode_integer": "the wire format's integer, read by decode: "
    "a malformed one raises WireError (tests/course/test_wire_format.py)",
    "tinyinit.course.wire_format.PCG32State": "the wire format's generator, made by decode "
    "(WireError)",
    "tinyinit.views.live_training.TrainingExplorer.play": "trains on the kernel's running "
    "event loop, which a test has not: its `until` is checked first "
    "(tests/views/test_live_training.py)",
    "tinyinit.present.voila.offline_template": "writes Voila's template into a folder, by "
    "default this Python's own: any path is a place to write (tests/present/test_present.py)",
    "tinyinit.present.voila.serve_voila": "runs Voila until it is stopped "
    "(tests/present/test_present.py)",
    "tinyinit.course.student_process.serve": "the student's process itself, started by the "
    "checker with its argv (tests/course/test_checker.py)",
    "tinyinit.cli.main": "a command line: its bad input exits with status 2 (tests/test_cli.py)",
}

# Constructors that build a whole widget (a second or more each, drawing included): the
# exhaustive pass gives them every bad value but the finite Python numbers where a number (or
# None) goes. Each of those a range check of tinyinit.core.arguments refuses
# (tests/core/test_arguments.py) or
# lets build one more widget, the minute this pass would spend.
COSTLY = {
    "tinyinit.views.live_training.TrainingExplorer",
    "tinyinit.present.app.Presentation",
    "tinyinit.views.explorers.DepthExplorer",
}


def skipped(target, bad: Bad, example) -> bool:
    """Whether the exhaustive pass leaves bad out for this argument of target (COSTLY)."""
    number_goes = example is None or (
        isinstance(example, (int, float)) and not isinstance(example, bool)
    )
    finite = bad.kind in ("int", "float") and math.isfinite(bad.value)
    return target.key in COSTLY and number_goes and finite


# Arguments that take anything by design, and why.
IGNORED = {"change": "the event an observer is called with (traitlets'), unused"}

# Checks of a student's answers: whatever an answer holds, the check says "not yet"
# (tinyinit.course.quiz.NotYet; Unanswered for NotImplementedError), never anything else. By
# function
# (its answers, or "*": a verdict on every argument) or by module (every argument of each).
ANSWERS = {
    "tinyinit.course.quiz.check": ("condition",),
    "tinyinit.course.quiz.check_value": "*",  # a right value of 0 for an answer of 2: not yet
    "tinyinit.course.exercises": "*",  # each argument is what the student's cell computed
}


def is_answer(target, argument: str) -> bool:
    module = target.key.rsplit(".", 1)[0]
    judged = ANSWERS.get(module) or ANSWERS.get(target.key, ())
    return judged == "*" or argument in judged


# Records: classes that hold what a function computed (their fields are its result, checked
# where it was made); their methods are covered, their constructors not.
RECORDS = {
    "tinyinit.core.activations.Activation",
    "tinyinit.physics.depth_result.DepthResult",
    "tinyinit.physics.depth_result.Experiment",
    "tinyinit.physics.depth_result.SeedPass",
    "tinyinit.physics.variance.Moments",
    "tinyinit.physics.variance.Estimate",
    "tinyinit.physics.residual.ResidualStack",
    "tinyinit.networks.residual_audit.ProjectionCheck",
    "tinyinit.networks.residual_audit.ResidualScalingReport",
    "tinyinit.networks.transformer.GPTTrace",
    "tinyinit.networks.mlp.Forward",
    "tinyinit.networks.optimizers.AdamState",
    "tinyinit.networks.training.TrainingRun",
    "tinyinit.networks.digits.Digits",
    "tinyinit.networks.normalization.Norm",
    "tinyinit.views.projector.CurveEnd",
    "tinyinit.views.plots.TrainingCurves",
    "tinyinit.views.live_training.Pinned",
    "tinyinit.present.look.Look",
    "tinyinit.present.demonstrations.Step",
    "tinyinit.present.demonstrations.Preset",
    "tinyinit.course.checker.Result",
    "tinyinit.course.checker.Report",
    "tinyinit.course.catalog.CatalogTest",
    "tinyinit.course.pitfalls.Pitfall",
    "tinyinit.course.pitfalls.Diagnosis",
    "tinyinit.course.student_functions.Yours",
    "tinyinit.networks.normalization.NormCache",
    "tinyinit.networks.lsuv.LSUVResult",
    "tinyinit.networks.mlp.Evaluation",
    "tinyinit.networks.training.TrainingStep",
    "tinyinit.networks.training.StepStats",
    "tinyinit.networks.training.TrainState",
}


class Opaque:
    """An object of no kind any function takes."""

    def __repr__(self):
        return "Opaque()"


# The bad and edge values, and what kind of thing each is.
@dataclass(frozen=True)
class Bad:
    value: object
    kind: str  # "none", "bool", "int", "numpy int", "float", "numpy float", "str", "other"


BAD = [
    Bad(None, "none"),
    Bad(True, "bool"),
    Bad(False, "bool"),
    Bad(np.True_, "bool"),
    Bad(0, "int"),
    Bad(-1, "int"),
    Bad(1, "int"),
    Bad(3, "int"),
    Bad(np.int64(2), "numpy int"),
    Bad(0.0, "float"),
    Bad(-0.0, "float"),
    Bad(0.5, "float"),
    Bad(-1.5, "float"),
    Bad(2.5, "float"),
    Bad(1e300, "float"),
    Bad(-1e300, "float"),
    Bad(1e-300, "float"),
    Bad(math.nan, "float"),
    Bad(math.inf, "float"),
    Bad(-math.inf, "float"),
    Bad(np.float32(0.25), "numpy float"),
    Bad(np.float64(-2.0), "numpy float"),
    Bad("", "str"),
    Bad("bogus", "str"),
    Bad("1.5", "str"),
    Bad(b"relu", "other"),
    Bad([], "other"),
    Bad((), "other"),
    Bad([1.0, -2.0], "other"),
    Bad((2, 3), "other"),
    Bad({"a": 1}, "other"),
    Bad(np.array([]), "other"),
    Bad(np.array([np.nan, 1.0]), "other"),
    Bad(np.zeros((2, 3)), "other"),
    Bad(np.array(["a", "b"]), "other"),
    Bad(Opaque(), "opaque"),
    Bad(nothing, "other"),
]


# --- the callables ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    key: str  # module.function, module.Class (constructor) or module.Class.method
    owner: str | None  # module.Class for a method


def targets() -> list[Target]:
    found = []
    for name in MODULES:
        module = importlib.import_module(name)
        for public in module.__all__:
            obj = getattr(module, public)
            key = f"{name}.{public}"
            home = getattr(obj, "__module__", name)
            if key in ELSEWHERE or (home != name and home in MODULES):
                continue
            if inspect.isfunction(obj):
                found.append(Target(key, None))
            elif inspect.isclass(obj):
                if key not in RECORDS:
                    found.append(Target(key, None))
                for attr, member in vars(obj).items():
                    if attr.startswith("_") or "ǁ" in attr:  # ǁ: mutmut's copies of a method
                        continue
                    if isinstance(member, (staticmethod, classmethod)):
                        member = member.__func__
                    method = f"{key}.{attr}"
                    if method in ELSEWHERE:
                        continue
                    if inspect.isfunction(member) and _arguments(member, method=True):
                        found.append(Target(method, key))
    return found


def _arguments(function, method: bool = False) -> list[inspect.Parameter]:
    parameters = list(inspect.signature(function).parameters.values())
    if method and parameters and parameters[0].name in ("self", "cls"):
        parameters = parameters[1:]
    skipped = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [p for p in parameters if p.kind not in skipped]


def resolve(key: str):
    parts = key.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ModuleNotFoundError:
            continue
        for attr in parts[split:]:
            obj = getattr(obj, attr)
        return obj
    raise LookupError(key)


def example_call(target: Target):
    """(callable, parameters, {argument: example}) for target; a KeyError names what lacks one."""
    if target.owner is None:
        function = resolve(target.key)
        parameters = _arguments(function.__init__ if inspect.isclass(function) else function)
        if inspect.isclass(function):
            parameters = [p for p in parameters if p.name != "self"]
    else:
        make = INSTANCES.get(target.owner)
        if make is None:
            raise KeyError(f"INSTANCES has no maker for {target.owner}")
        function = getattr(make(), target.key.rsplit(".", 1)[1])
        parameters = _arguments(function)
    given = CALLS.get(target.key, {})
    examples = {}
    for p in parameters:
        if p.name in given:
            examples[p.name] = given[p.name]
        elif p.name in EXAMPLES:
            examples[p.name] = EXAMPLES[p.name]
        elif p.default is not inspect.Parameter.empty:
            examples[p.name] = p.default
        else:
            raise KeyError(f"{target.key}: no example for argument {p.name!r}")
        if isinstance(examples[p.name], Kept):
            examples[p.name] = examples[p.name].make()
    return function, parameters, examples


def call(function, parameters, examples, replaced: str | None = None, value=None):
    args, kwargs = [], {}
    for p in parameters:
        v = value if p.name == replaced else value_of(examples[p.name])
        if p.kind == inspect.Parameter.POSITIONAL_ONLY:
            args.append(v)
        else:
            kwargs[p.name] = v
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return function(*args, **kwargs)


TARGETS = targets()


@pytest.fixture(autouse=True)
def _in_a_folder_of_its_own(tmp_path, monkeypatch):
    """A path is a bad value that a function may accept ("bogus" is a file name save_figure
    writes): whatever a call writes lands in a folder of the test's own."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(autouse=True)
def _close_figures():
    """The explorers make pyplot figures; close them, as a notebook closes its cells'."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def test_every_module_says_its_public_names():
    for name in MODULES:
        module = importlib.import_module(name)
        assert hasattr(module, "__all__"), f"{name} has no __all__: its public names are unsaid"
    assert len(TARGETS) > 150


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.key)
def test_the_examples_make_a_call_that_works(target):
    function, parameters, examples = example_call(target)
    call(function, parameters, examples)


def names(message: str, argument: str) -> bool:
    """Whether the message names the argument as a word ("std must be", "shape (5,) has")."""
    return re.search(rf"(?<![\w.]){re.escape(argument)}(?!\w)", message) is not None


def verdict(
    error: BaseException | None, argument: str, bad: Bad, example, answer: bool = False
) -> str | None:
    """What is wrong with how a call with `bad` for `argument` ended, or None if nothing.

    answer: the argument is a student's answer, which a check may also judge "not yet"."""
    if error is None:
        return None
    if answer and isinstance(error, (NotYet, Unanswered)):
        return None
    if not isinstance(error, (ValueError, TypeError)):
        return f"raised {type(error).__name__}: {error}"
    message = str(error)
    if not names(message, argument):
        return f"{type(error).__name__} that does not name {argument!r}: {message}"
    if bad.kind in ("none", "opaque") and not isinstance(error, TypeError):
        return f"ValueError for a value of the wrong kind (want TypeError): {message}"
    example = value_of(example) if not isinstance(example, Fresh) else None
    is_int = isinstance(example, int) and not isinstance(example, bool)
    is_float = isinstance(example, float)
    if bad.kind == "bool" and (is_int or is_float) and not isinstance(error, TypeError):
        return f"ValueError for a bool where a number goes (want TypeError): {message}"
    numpy_number = (bad.kind == "numpy int" and is_int) or (
        bad.kind in ("numpy float", "numpy int") and is_float
    )
    if isinstance(error, TypeError) and numpy_number:
        return f"TypeError for a numpy number where a number goes: {message}"
    return None


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.key)
def test_an_object_of_no_kind_is_refused_naming_each_argument(target):
    """The quick pass (one value an argument), which `make mutation` also runs."""
    function, parameters, examples = example_call(target)
    problems = []
    for p in parameters:
        if p.name in IGNORED:
            continue
        try:
            call(function, parameters, examples, p.name, Opaque())
            error = None
        except Exception as caught:
            error = caught
        answer = is_answer(target, p.name)
        why = verdict(error, p.name, Bad(Opaque(), "opaque"), examples[p.name], answer)
        if why:
            problems.append(f"{p.name}=Opaque(): {why}"[:300])
    assert not problems, f"{target.key}:\n  " + "\n  ".join(problems)


@pytest.mark.exhaustive
@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.key)
def test_every_bad_argument_is_refused_in_the_packages_words_and_nothing_else(target):
    function, parameters, examples = example_call(target)
    problems = []
    for p in parameters:
        if p.name in IGNORED:
            continue
        for bad in BAD:
            if skipped(target, bad, examples[p.name]):
                continue
            try:
                call(function, parameters, examples, p.name, bad.value)
                error = None
            except Exception as caught:  # anything else is what this test is for
                error = caught
            if error is None and target.owner is not None:
                # A call that went through may have changed its instance; one refused at the
                # door has not: the next bad value gets a fresh one only after a success.
                function, _, _ = example_call(target)
            why = verdict(error, p.name, bad, examples[p.name], is_answer(target, p.name))
            if why:
                problems.append(f"{p.name}={bad.value!r}: {why}"[:300])
    assert not problems, f"{target.key}:\n  " + "\n  ".join(problems)
