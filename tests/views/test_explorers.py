"""The depth explorer: controls drive the simulation, the figure is updated in place,
the readout says what the figure shows, and extreme settings stay on screen, labelled."""

from __future__ import annotations

import io
import math
import subprocess
import sys
import threading
import warnings

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex, to_rgba  # noqa: E402
from PIL import Image  # noqa: E402
from web_page import PageSocket  # noqa: E402

from tinyinit import PCG32, calculate_gain  # noqa: E402
from tinyinit.physics.propagation import simulate  # noqa: E402
from tinyinit.physics.propagation_fast import UnitWeights  # noqa: E402
from tinyinit.views.explorers import DepthExplorer, caption_html, depth_explorer, readout_lines  # noqa: E402
from tinyinit.views.figures import compare_figure, png_bytes  # noqa: E402
from tinyinit.views.plots import DepthPlot  # noqa: E402
from tinyinit.views.style import PIN_ALPHA, PIN_COLORS, initializer_color  # noqa: E402

CONTROLS = ("initializer", "activation", "gain", "std", "n_layers", "width", "seeds", "direction")


@pytest.fixture
def ex():
    """A small explorer (width 64) with its own cache, so draws can be counted."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield depth_explorer(width=64, cache=UnitWeights())


def test_default_shows_the_xavier_relu_collapse():
    explorer = depth_explorer()
    r = explorer.result
    assert (r.initializer, r.activation, r.gain, r.n_layers, r.width) == (
        "xavier_uniform", "relu", 1.0, 20, 256,
    )  # fmt: skip
    assert r.measured_end < 1e-4
    assert explorer.readout_text.startswith(
        f"layer 20: measured {r.measured_end:.3g}, theory {r.theory_end:.3g}"
    )


def test_css_classes_for_the_browser_tests(ex):
    assert "tinyinit-explorer" in ex.app._dom_classes
    assert "tinyinit-depth" in ex.n_layers._dom_classes
    assert "tinyinit-activation" in ex.activation._dom_classes
    assert "tinyinit-gain" in ex.gain._dom_classes
    assert "tinyinit-readout" in ex.readout._dom_classes


def test_every_control_says_what_it_does(ex):
    for name in CONTROLS:
        control = getattr(ex, name)
        assert control.description or name == "direction", name
        if name == "direction":
            assert all(control.tooltips)
        else:
            assert control.tooltip and len(control.tooltip) > 20, name
    assert ex.use_default_gain.tooltip


def test_controls_are_in_the_layout(ex):
    def walk(w):
        yield w
        for child in getattr(w, "children", ()):
            yield from walk(child)

    inside = set(map(id, walk(ex.app)))
    for name in CONTROLS + ("readout", "use_default_gain"):
        assert id(getattr(ex, name)) in inside, name


def test_update_moves_the_same_artists_of_the_same_figure(ex):
    figure, ax = ex.figure, ex.plot.ax
    lines, band = list(ax.lines), ex.plot.band
    for control, value in [
        (ex.gain, 1.7), (ex.n_layers, 35), (ex.activation, "tanh"),
        (ex.initializer, "kaiming_normal_fan_out"), (ex.direction, "backward"), (ex.seeds, 2),
    ]:  # fmt: skip
        control.value = value
        assert ex.figure is figure and figure.axes == [ax]
        assert list(ax.lines) == lines
        assert ex.plot.band is band
        assert list(ax.patches) == [band] and list(ax.collections) == [ex.plot.decades]
    assert len(ex.plot.median_line.get_xdata()) == 36


def test_widget_changes_update_the_readout_and_the_result(ex):
    before = ex.readout.value
    ex.n_layers.value = 7
    assert ex.result.n_layers == 7
    assert "layer 7: measured" in ex.readout.value and ex.readout.value != before
    np.testing.assert_array_equal(ex.plot.median_line.get_xdata(), np.arange(8))
    np.testing.assert_allclose(ex.plot.theory_line.get_ydata(), ex.result.theory)
    ex.direction.value = "backward"
    assert "layer 0: measured" in ex.readout.value
    assert "gradient" in ex.caption.value  # the y label, beside the live canvas


def test_readout_numbers_are_the_results(ex):
    ex.activation.value = "tanh"
    ex.gain.value = 5 / 3
    r = ex.result
    first = readout_lines(r)[0]
    assert first == f"layer 20: measured {r.measured_end:.3g}, theory {r.theory_end:.3g}"
    assert 0.1 < r.measured_end < 1


def test_an_update_from_another_thread_waits_for_the_change_under_way(ex):
    """JupyterLab may deliver a widget's message on a kernel subshell, a thread of its own:
    its update waits until a change made elsewhere is whole, then shows all of it."""
    done = threading.Event()
    with ex.hold():
        ex.n_layers.value = 5
        other = threading.Thread(target=lambda: (ex.update(), done.set()))
        other.start()
        assert not done.wait(0.3), "the update did not wait for the change under way"
        ex.width.value = 32
    other.join(timeout=30)
    assert done.is_set()
    assert (ex.result.n_layers, ex.result.width) == (5, 32)


def test_kaiming_gain_follows_the_activation_xavier_keeps_it(ex):
    ex.gain.value = 2.2
    ex.activation.value = "tanh"
    assert ex.gain.value == 2.2  # Xavier: the gain is the teacher's
    ex.initializer.value = "kaiming_normal"
    assert ex.gain.value == pytest.approx(calculate_gain("tanh"))
    ex.activation.value = "relu"
    assert ex.gain.value == pytest.approx(math.sqrt(2))
    assert ex.result.gain == pytest.approx(math.sqrt(2))
    assert "calculate_gain('relu') = 1.414" in ex.gain_hint.value
    ex.initializer.value = "xavier_normal"
    ex.gain.value = 0.3
    ex.use_default_gain.click()
    assert ex.gain.value == pytest.approx(math.sqrt(2))


def test_one_choice_is_one_update(ex):
    ex.initializer.value = "kaiming_normal"
    before = ex.updates
    ex.activation.value = "selu"  # changes the gain too, under one update
    assert ex.updates == before + 1


def test_std_applies_only_to_the_plain_normal(ex):
    assert ex.std.disabled and not ex.gain.disabled
    ex.initializer.value = "normal_init"
    assert not ex.std.disabled and ex.gain.disabled
    ex.std.value = 0.02
    assert ex.result.weight_std == pytest.approx(0.02)


def test_gain_moves_draw_no_new_weights(ex):
    drawn = ex.cache.draws
    assert drawn == 3 * 20  # seeds x layers, drawn once
    for gain in np.linspace(0.5, 2.5, 9):
        ex.gain.value = float(gain)
    ex.activation.value = "tanh"
    ex.n_layers.value = 10
    assert ex.cache.draws == drawn
    ex.n_layers.value = 25
    assert ex.cache.draws == drawn + 3 * 5


@pytest.mark.parametrize(
    "settings, words",
    [
        (dict(initializer="xavier_uniform", gain=3.0, activation="linear", n_layers=100), None),
        (dict(initializer="xavier_uniform", gain=0.0), "all weights are 0"),
        (dict(initializer="normal_init", std=10.0, activation="linear", n_layers=100), "overflow"),
        (dict(initializer="normal_init", std=0.001, activation="relu", n_layers=100), "underflow"),
    ],
)
@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_extreme_settings_update_the_plot_and_are_labelled(ex, settings, words, direction):
    ex.direction.value = direction
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ex.hold():
            for name, value in settings.items():
                getattr(ex, name).value = value
    bottom, top = ex.plot.ax.get_ylim()
    assert 0 < bottom < top < math.inf
    r = ex.result
    if words is None:
        assert ex.plot.note.get_text() == ""
        return
    assert words in ex.plot.note.get_text() and words in ex.readout_text
    marks = ex.plot.overflow_marks if words == "overflow" else ex.plot.underflow_marks
    x, y = marks.get_data()
    assert len(x) > 0 and np.all(y == (top if words == "overflow" else bottom))
    first = r.overflow_from if words == "overflow" else r.underflow_from
    assert f"from layer {first}" in ex.plot.note.get_text()
    assert np.isfinite(ex.plot.median_line.get_ydata()).sum() < len(r.layers)


def test_extreme_setting_clears_its_label_when_back_to_normal(ex):
    ex.gain.value = 0.0
    assert ex.plot.note.get_text()
    ex.gain.value = 1.0
    assert ex.plot.note.get_text() == ""
    assert len(ex.plot.underflow_marks.get_xdata()) == 0


def test_png_view_follows_updates_under_a_non_interactive_backend(ex):
    assert isinstance(ex.figure_view, widgets.Image)
    first = bytes(ex.figure_view.value)
    assert first.startswith(b"\x89PNG")
    ex.activation.value = "tanh"
    assert bytes(ex.figure_view.value) != first


def test_both_explorers_fall_back_to_a_png_without_a_live_canvas():
    """Without ipympl, each explorer shows its figure as a PNG that follows its controls."""
    from tinyinit import PCG32
    from tinyinit.physics.residual import draw_residual_stack
    from tinyinit.views.explorers import ResidualStreamExplorer

    depth = DepthExplorer(n_layers=3, width=16, seeds=1)
    residual = ResidualStreamExplorer(draw_residual_stack(4, 16, 16, 16, PCG32(0)), n_layers=2)
    for explorer, view, control, value in (
        (depth, depth.figure_view, depth.activation, "tanh"),
        (residual, residual.figure_view, residual.n_layers, 4),
    ):
        assert isinstance(view, widgets.Image), type(explorer).__name__
        first = bytes(view.value)
        assert first.startswith(b"\x89PNG")
        control.value = value
        assert bytes(view.value).startswith(b"\x89PNG") and bytes(view.value) != first


def test_the_explorer_and_the_figure_draw_the_same_residual_curves():
    import matplotlib.pyplot as plt

    from tinyinit import PCG32
    from tinyinit.physics.residual import draw_residual_stack
    from tinyinit.views.explorers import ResidualStreamExplorer
    from tinyinit.views.figures import residual_figure

    stack = draw_residual_stack(4, 16, 16, 16, PCG32(0))
    explorer = ResidualStreamExplorer(stack, n_layers=3)
    figure = residual_figure(stack, 3, depths=[1, 3])
    lines = figure.axes[0].get_lines()  # measured, theory: unscaled, then scaled
    for scaled, (measured, theory) in ((False, lines[:2]), (True, lines[2:4])):
        curves = explorer.curves(3, scaled)
        np.testing.assert_array_equal(measured.get_ydata(), curves[0])
        np.testing.assert_array_equal(theory.get_ydata(), curves[1])
    plt.close(figure)


def test_displays_as_its_layout(ex):
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.app.model_id
    # The text a notebook stores beside it names no object's address, which would change
    # at every run (make notebooks would rewrite the file for nothing).
    assert " at 0x" not in bundle["text/plain"] and "Accessible()" in bundle["text/plain"]


def test_explorer_accepts_every_initializer_and_activation():
    explorer = DepthExplorer(width=16, n_layers=3, seeds=1, cache=UnitWeights())
    for init in explorer.initializer.options:
        for act in explorer.activation.options:
            explorer.initializer.value, explorer.activation.value = init[1], act
            assert np.isfinite(explorer.result.theory).all()


def test_static_figures():
    fig = compare_figure(
        [simulate("relu", init, gain=g, n_layers=5, width=16, seeds=2)
         for init, g in (("xavier_uniform", 1.0), ("kaiming_normal", math.sqrt(2)))],
        ["Xavier", "Kaiming"], title="ReLU",
    )  # fmt: skip
    assert png_bytes(fig).startswith(b"\x89PNG")
    plot = DepthPlot()
    plot.update(simulate("relu", n_layers=4, width=16, seeds=1), draw=False)
    assert plot.ax.get_title().startswith("relu, Xavier uniform (gain 1")


def canvas_pixels(plot: DepthPlot) -> np.ndarray:
    return np.asarray(plot.figure.canvas.buffer_rgba()).copy()


def test_an_update_that_keeps_the_axes_redraws_only_the_data_and_looks_the_same():
    """Blitting: the kept frame plus the data gives the very pixels of a full draw."""
    plot = DepthPlot(decorated=False)
    full_draws = []
    plot.figure.canvas.mpl_connect("draw_event", lambda event: full_draws.append(event))
    tanh = {"activation": "tanh", "n_layers": 30, "width": 32, "seeds": 2}
    plot.update(simulate(gain=1.2, **tanh))
    assert len(full_draws) == 1
    plot.update(simulate(gain=1.201, **tanh))  # same limits, ticks and note
    assert len(full_draws) == 1
    blitted = canvas_pixels(plot)
    plot.figure.canvas.draw()
    assert np.array_equal(blitted, canvas_pixels(plot))
    plot.update(simulate(gain=1.2, **{**tanh, "n_layers": 31}))  # a new x axis
    assert len(full_draws) == 3


def test_the_data_is_in_every_picture_of_a_blitting_plot():
    """Animated artists are left out of a plain draw: check the data reaches every output."""
    plot = DepthPlot(decorated=False)
    plot.update(simulate("relu", n_layers=6, width=16, seeds=2))
    saved = Image.open(io.BytesIO(png_bytes(plot.figure))).convert("RGB")
    for picture in (canvas_pixels(plot), saved):
        rgb = np.asarray(picture)[..., :3].astype(int)
        median_colour = np.abs(rgb - (0, 114, 178)).sum(axis=-1) < 40  # Xavier's blue
        assert median_colour.sum() > 50
    svg = io.BytesIO()
    plot.figure.savefig(svg, format="svg")  # a vector format draws through another canvas
    assert initializer_color("xavier_uniform").lower().encode() in svg.getvalue()


def test_the_median_and_band_take_the_initializers_colour():
    """One colour per initializer: the figure follows the initializer, not the curve's order."""
    plot = DepthPlot(decorated=False)
    for initializer in ("xavier_uniform", "kaiming_normal", "normal_init", "orthogonal_init"):
        result = simulate("relu", initializer, n_layers=3, width=16, seeds=1)
        plot.update(result)
        expected = to_rgba(initializer_color(initializer))
        assert to_rgba(plot.median_line.get_color()) == expected
        assert plot.band.get_facecolor()[:3] == expected[:3]
        assert to_hex(expected) in caption_html(result)  # the live legend's swatch


def test_a_comparison_keeps_blue_for_xavier_when_an_initializer_repeats():
    """compare_figure: Xavier at two gains is blue, then black; Kaiming stays vermillion."""
    kw = {"n_layers": 3, "width": 16, "seeds": 1}
    results = [simulate("tanh", gain=g, **kw) for g in (1.0, 5 / 3)]
    results.append(simulate("relu", "kaiming_normal", gain=2**0.5, **kw))
    fig = compare_figure(results, ["gain 1", "gain 5/3", "Kaiming"])
    colors = [to_hex(line.get_color()) for line in fig.axes[0].lines if line.get_label()[0] != "_"]
    assert colors[:3] == [
        to_hex(initializer_color("xavier")),
        "#000000",
        to_hex(initializer_color("kaiming")),
    ]


def test_a_web_canvas_blits_and_every_picture_is_whole():
    """ipympl's canvas is matplotlib's webagg one, which says supports_blit=False.

    The plot blits there all the same, draws a new frame at once (not on the page's
    request, a round trip), and sends whole pictures (image mode "full"), so the
    page shows the right one even when it skipped the one before.
    """
    from matplotlib.backends.backend_webagg_core import (
        FigureCanvasWebAggCore,
        FigureManagerWebAgg,
    )
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.5, 4.6), dpi=100)
    canvas = FigureCanvasWebAggCore(figure)
    assert not canvas.supports_blit
    page = PageSocket()
    FigureManagerWebAgg(canvas, 1).add_web_socket(page)
    plot = DepthPlot(figure=figure, decorated=False)
    full_draws = []
    canvas.mpl_connect("draw_event", lambda event: full_draws.append(event))
    tanh = {"activation": "tanh", "n_layers": 30, "width": 32, "seeds": 2}
    page.pictures.clear()
    plot.update(simulate(gain=1.2, **tanh))
    assert (len(full_draws), len(page.pictures)) == (1, 1)  # drawn and sent, unasked
    plot.update(simulate(gain=1.201, **tanh))  # same axes: the data over the kept frame
    assert (len(full_draws), len(page.pictures)) == (1, 2)
    assert {"type": "draw"} not in page.events  # never asks the page to ask for a draw
    assert not [e for e in page.events if e.get("type") == "image_mode" and e["mode"] != "full"]
    sent = np.asarray(Image.open(io.BytesIO(page.pictures[-1])))
    assert np.array_equal(sent, canvas_pixels(plot))  # the whole picture, not a difference
    plot.figure.canvas.draw()
    assert np.array_equal(sent, canvas_pixels(plot))  # the same as a full draw


def test_ipympl_pictures_wait_for_the_page():
    """Before its page says "initialized", ipympl sends raw pixels where a PNG belongs.

    So until then the plot asks the page to ask for a draw (draw_idle); after it,
    every picture goes out at once, a PNG, and pyplot finds nothing stale to draw
    again (a blit leaves no stale figure behind).
    """
    run_under_ipympl(
        "canvas, sent = ex.figure.canvas, []\n"
        "canvas.send = lambda content, buffers=None: sent.append((content['data'], buffers))\n"
        "ex.n_layers.value = 6\n"
        "assert sent and all(buffers is None and '\"draw\"' in data for data, buffers in sent)\n"
        "canvas._handle_message(canvas, {'type': 'initialized'}, [])\n"
        "del sent[:]\n"
        "ex.n_layers.value = 7\n"  # a new frame
        "ex.gain.value = 1.001\n"  # the same axes: blitted
        "from matplotlib._pylab_helpers import Gcf\n"
        "Gcf.draw_all()\n"  # what pyplot does after each widget message in a kernel
        "pictures = [bytes(b[0]) for data, b in sent if b]\n"
        "assert len(pictures) == 2 and all(p.startswith(b'\\x89PNG') for p in pictures)\n"
        "assert not [data for data, b in sent if '\"draw\"' in data]\n"
    )


def test_live_canvas_under_ipympl():
    """With %matplotlib widget the figure is ipympl's canvas widget, inside the layout."""
    run_under_ipympl(
        "import ipywidgets as w\n"
        "assert isinstance(ex.figure.canvas, w.DOMWidget)\n"
        "assert ex.figure.canvas in ex.app.children\n"
        "ex.n_layers.value = 9\n"
        "assert 'layer 9: measured' in ex.readout.value\n"
    )


def run_under_ipympl(code: str) -> None:
    """Run `code` in a fresh Python under %matplotlib widget, with `ex` a small explorer."""
    start = (
        "import matplotlib; matplotlib.use('module://ipympl.backend_nbagg')\n"
        "from tinyinit.views.explorers import depth_explorer\n"
        "ex = depth_explorer(width=16, n_layers=5)\n"
    )
    # ipympl itself trips a traitlets DeprecationWarning; ours would be RuntimeWarnings.
    command = [sys.executable, "-W", "error::RuntimeWarning", "-c", start + code + "print('ok')"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr


def test_nested_holds_update_once(ex):
    before = ex.updates
    with ex.hold():
        ex.initializer.value = "kaiming_normal"  # its own hold inside
        ex.activation.value = "tanh"
        ex.n_layers.value = 12
    assert ex.updates == before + 1
    assert (ex.result.n_layers, ex.result.activation) == (12, "tanh")


def test_reset_restores_the_starting_settings(ex):
    start = ex.readout.value
    with ex.hold():
        ex.initializer.value, ex.activation.value = "kaiming_normal", "tanh"
        ex.n_layers.value, ex.direction.value, ex.seeds.value = 60, "backward", 2
    ex.reset_button.click()
    assert (ex.initializer.value, ex.activation.value, ex.gain.value) == (
        "xavier_uniform",
        "relu",
        1.0,
    )
    assert (ex.n_layers.value, ex.direction.value, ex.seeds.value) == (20, "forward", 3)
    assert ex.readout.value == start


def test_a_gain_given_at_start_is_kept():
    explorer = depth_explorer(initializer="kaiming_normal", gain=2.0, width=16, n_layers=4)
    assert explorer.gain.value == 2.0 and explorer.result.gain == 2.0
    default = depth_explorer(initializer="kaiming_normal", activation="tanh", width=16, n_layers=4)
    assert default.gain.value == pytest.approx(5 / 3)


# --- compare: pins ----------------------------------------------------------------------------


def test_a_pin_keeps_the_curve_faded_and_named_and_the_readout_compares(ex):
    xavier = ex.result
    ex.pin_button.click()
    with ex.hold():
        ex.initializer.value = "kaiming_normal"  # the gain follows: sqrt(2)
    line = ex.plot.pin_lines[0]
    np.testing.assert_array_equal(line.get_ydata(), xavier.median)
    assert line.get_alpha() < 1 and line.get_color() != ex.plot.median_line.get_color()
    assert "pinned: relu, Xavier uniform, gain 1, depth 20" in ex.caption.value
    gap = math.log2(ex.result.measured_end / xavier.measured_end)
    assert 18 < gap < 22  # ReLU halves per layer under Xavier, not under Kaiming
    assert f"Kaiming ends 2^{gap:.1f} above Xavier (pin 1) at layer 20" in ex.readout.value
    bottom, top = ex.plot.ax.get_ylim()
    assert bottom < xavier.measured_end and top > ex.result.measured_end  # both in view


def test_at_most_four_pins_oldest_first_out_and_clear_removes_them(ex):
    for gain in (1.0, 1.1, 1.2, 1.3, 1.4):
        ex.gain.value = gain
        ex.pin()
    assert [p.gain for p in ex.pins] == [1.1, 1.2, 1.3, 1.4]
    assert all(len(line.get_xdata()) == 21 for line in ex.plot.pin_lines)
    ex.clear_pins_button.click()
    assert ex.pins == [] and all(len(line.get_xdata()) == 0 for line in ex.plot.pin_lines)
    assert "pin" not in ex.readout.value


def test_pins_of_the_other_direction_are_kept_but_not_drawn(ex):
    ex.pin()
    ex.direction.value = "backward"
    assert len(ex.pins) == 1 and len(ex.plot.pin_lines[0].get_xdata()) == 0
    ex.direction.value = "forward"
    assert len(ex.plot.pin_lines[0].get_xdata()) == 21


def test_snapshot_draws_the_pins_in_its_legend(ex):
    ex.pin()
    ex.gain.value = 1.5
    picture = Image.open(io.BytesIO(ex.snapshot())).convert("RGB")
    pin = 255 * np.array(to_rgba(PIN_COLORS[0])[:3])
    faded = PIN_ALPHA * pin + (1 - PIN_ALPHA) * 255  # the first pin's colour over white
    pinned = np.abs(np.asarray(picture, dtype=int) - faded).sum(axis=-1) < 30
    assert pinned.sum() > 50


# --- inside the layers ---------------------------------------------------------------------------


def test_backward_view_shows_the_weight_gradient_beside_dloss_dh(ex):
    ex.initializer.value = "kaiming_normal"
    ex.direction.value = "backward"
    r = ex.result
    measured, theory = r.weight_median[1:], r.weight_theory[1:]
    np.testing.assert_array_equal(ex.plot.weight_line.get_ydata(), measured)
    # Width 64, 3 seeds x 16 samples: each layer within a factor 2, on average within 20%.
    assert np.all(np.abs(np.log2(measured / theory)) < 1)
    assert abs(np.mean(np.log(measured / theory))) < 0.2
    assert "weight gradient" in ex.caption.value
    ex.direction.value = "forward"
    assert len(ex.plot.weight_line.get_xdata()) == 0 and "weight gradient" not in ex.caption.value


def test_weight_gradient_is_delta_times_h_per_sample():
    """Against the weight gradient formed entry by entry, for one sample at a time.

    In float64 here; the simulation's products are float32 (1e-7 relative per layer).
    """
    from tinyinit.core.init import INITIALIZERS
    from tinyinit.physics.propagation import GRADIENT_STREAM, INPUT_STREAM, unit_batch

    width, depth, seed = 16, 3, 1
    r = UnitWeights().simulate("tanh", "xavier_normal", gain=1.3, n_layers=depth, width=width,
                               seeds=[seed], batch=4, direction="backward")  # fmt: skip
    draw, rng = INITIALIZERS["xavier_normal"].initializer(1.3), PCG32(seed)
    weights = [draw((width, width), rng).astype(np.float64) for _ in (1, 2, 3)]
    hs, zs = [unit_batch(width, 4, seed, INPUT_STREAM)], []
    for w in weights:
        zs.append(w @ hs[-1])
        hs.append(np.tanh(zs[-1]))
    g = unit_batch(width, 4, seed, GRADIENT_STREAM)
    expected = {}
    for layer in (3, 2, 1):
        delta = (1 - np.tanh(zs[layer - 1]) ** 2) * g
        per_sample = [np.outer(delta[:, b], hs[layer - 1][:, b]) for b in range(4)]
        expected[layer] = np.mean([np.mean(d**2) for d in per_sample])
        g = weights[layer - 1].T @ delta
    for layer, value in expected.items():
        assert r.weight_per_seed[0, layer] == pytest.approx(value, rel=1e-6)
    assert r.per_seed[0, 0] == pytest.approx(np.mean(g**2), rel=1e-6)


def test_histogram_view_shows_four_layers_on_shared_axes(ex):
    ex.view.value = "histograms"
    assert ex.figure_view is not None and ex.app.children[-1] is ex.figure_view
    r = ex.result
    assert sorted(r.samples) == [1, 7, 14, 20]
    assert len(r.samples[20]) == 3 * 16 * 64  # seeds x batch x width
    axes = ex.histogram.axes
    assert all(ax.get_xlim() == axes[0].get_xlim() for ax in axes)
    notes = [note.get_text() for note in ex.histogram.notes]
    assert [n.splitlines()[0] for n in notes] == ["layer 1", "layer 7", "layer 14", "layer 20"]
    for note, layer in zip(notes, (1, 7, 14, 20)):  # ReLU: half the units are off
        zero = 100 * np.mean(r.samples[layer] == 0)
        assert 40 < zero < 60 and f"h = 0: {zero:.0f}% of entries" in note
    assert "rms at layers 1, 7, 14, 20" in ex.caption.value
    ex.n_layers.value = 40  # live with the same sliders
    assert [n.get_text().splitlines()[0] for n in ex.histogram.notes][-1] == "layer 40"


def test_histogram_view_counts_saturated_tanh_units(ex):
    with ex.hold():
        ex.view.value = "histograms"
        ex.activation.value = "tanh"
        ex.gain.value = 3.0
    r = ex.result
    saturated = 100 * np.mean(np.abs(r.samples[20]) > 0.97)
    assert saturated > 30
    assert f"|h| > 0.97: {saturated:.0f}%" in ex.histogram.notes[-1].get_text()
    assert ex.histogram.axes[0].get_xlim() == (-1.0, 1.0)  # tanh stays in (-1, 1)


def test_histogram_view_backward_shows_gradients(ex):
    with ex.hold():
        ex.view.value = "histograms"
        ex.direction.value = "backward"
    assert sorted(ex.result.samples) == [0, 6, 13, 19]
    assert "gradients" in ex.caption.value
    assert ex.histogram.notes[0].get_text() == "layer 19"


def test_histogram_update_blits_when_the_axes_stay():
    from tinyinit.views.plots import HistogramPlot, histogram_layers

    plot = HistogramPlot(decorated=False)
    full_draws = []
    plot.figure.canvas.mpl_connect("draw_event", lambda event: full_draws.append(event))
    tanh = dict(activation="tanh", n_layers=9, width=32, seeds=1,
                sample_layers=histogram_layers(9, "forward"))  # fmt: skip
    plot.update(simulate(gain=1.2, **tanh))
    plot.update(simulate(gain=1.21, **tanh))
    assert len(full_draws) == 1
    blitted = np.asarray(plot.figure.canvas.buffer_rgba()).copy()
    plot.figure.canvas.draw()
    assert np.array_equal(blitted, np.asarray(plot.figure.canvas.buffer_rgba()))


# --- fast in the browser: a drag is one update ---------------------------------------------------


def test_changes_from_the_browser_fold_into_one_update(ex):
    import asyncio

    from event_loop import in_event_loop

    async def drag():
        before = ex.updates
        for depth in range(21, 41):  # what a fast drag sends: one message per value
            ex.n_layers.set_state({"value": depth})
        assert ex.updates == before  # deferred while messages are still coming
        await asyncio.sleep(0)
        assert ex.updates == before + 1 and ex.result.n_layers == 40

    in_event_loop(drag)  # a loop of its own, as a kernel's
    before = ex.updates
    ex.n_layers.value = 12  # from the kernel (a notebook cell): at once
    assert ex.updates == before + 1 and ex.result.n_layers == 12


# --- GELU and SiLU -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gelu", "silu"])
def test_gelu_and_silu_start_kaiming_at_the_quadrature_gain_labelled_so(ex, name):
    from tinyinit.physics.gains import single_layer_gain

    assert name in ex.activation.options
    with pytest.raises(ValueError):
        calculate_gain(name)  # torch's table, and its error, are kept
    with ex.hold():
        ex.initializer.value = "kaiming_normal"
        ex.activation.value = name
    assert ex.gain.value == pytest.approx(single_layer_gain(name), rel=1e-12)
    assert "quadrature" in ex.gain_hint.value and "not in torch's table" in ex.gain_hint.value
    # The mean-field theory covers them: measured and predicted agree 20 layers down.
    r = ex.result
    assert np.isfinite(r.theory).all()
    assert abs(math.log2(r.measured_end / r.theory_end)) < 0.5


@pytest.mark.parametrize("name", ["gelu", "silu"])
def test_the_gain_note_says_the_single_layer_gain_is_unstable_with_computed_numbers(ex, name):
    from tinyinit.physics.mean_field import q_map_slope
    from tinyinit.physics.propagation import mean_field

    with ex.hold():
        ex.initializer.value = "kaiming_normal"
        ex.activation.value = name
    note = ex.gain_hint.value
    slope = q_map_slope(name, ex.gain.value, 1.0)
    assert "unstable over depth" in note and f"{slope:.3g} &gt; 1" in note
    ex.n_layers.value = 30
    ex.gain.value = 1.5
    end = mean_field(name, gain=1.5, n_layers=30)[-1]
    assert ex.gain_hint.value.endswith(f"at gain 1.5 the theory gives {end:.2g} at layer 30")
    assert ex.result.theory[-1] == pytest.approx(end)  # the note and the dashed curve agree
