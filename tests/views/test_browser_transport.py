"""The browser transport: the private internals it relies on are checked, with a public fallback.

On the installed matplotlib and ipympl the checks pass (so an upgrade whose internals
differ fails here, loudly, instead of the live figure going stale silently); on a
canvas whose internals differ, the plot takes the public draw_idle() path.
"""

from __future__ import annotations

import base64
import io
import re
from importlib.metadata import version

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.backends.backend_webagg_core import (  # noqa: E402
    FigureCanvasWebAggCore,
    FigureManagerWebAgg,
)
from matplotlib.figure import Figure  # noqa: E402
from packaging.specifiers import SpecifierSet  # noqa: E402
from PIL import Image  # noqa: E402
from scripts_loader import ROOT  # noqa: E402
from traitlets import TraitError  # noqa: E402
from web_page import PageSocket  # noqa: E402

from tinyinit.physics.propagation import simulate  # noqa: E402
from tinyinit.views import browser_transport as transport  # noqa: E402
from tinyinit.views.plots import DepthPlot  # noqa: E402

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

BOUNDED = ("matplotlib", "ipympl", "ipywidgets")


@pytest.fixture
def ipympl_canvas():
    """ipympl's Canvas class; importing ipympl's backend makes it pyplot's, so Agg comes back."""
    backend = matplotlib.get_backend()
    try:
        yield pytest.importorskip("ipympl.backend_nbagg").Canvas
    finally:
        matplotlib.use(backend)


def test_the_installed_matplotlib_and_ipympl_have_the_internals_used(ipympl_canvas):
    assert transport.WEB_CANVAS_KNOWN
    assert transport.web_canvas_is_known(FigureCanvasWebAggCore)
    assert transport.web_canvas_is_known(ipympl_canvas)


def test_the_installed_versions_are_within_the_bounds_tested():
    """pyproject.toml bounds each package whose internals transport uses; raise the bound
    when the tests pass on a new release."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = [*project["dependencies"], *project["optional-dependencies"]["lab"]]
    specs = dict(re.match(r"([A-Za-z0-9_.\-]+)(.*)", d).groups() for d in listed)
    for name in BOUNDED:
        assert "<" in specs[name], f"{name} has no upper bound: {specs[name]!r}"
        assert version(name) in SpecifierSet(specs[name]), (name, version(name), specs[name])


class OtherCanvas(FigureCanvasWebAggCore):
    """A web canvas of a matplotlib whose internals differ: its picture keeps no _last_buff."""

    def get_diff_image(self):
        self.set_image_mode("full")
        return self.print_png_bytes()

    def print_png_bytes(self):
        buffer = io.BytesIO()
        self.print_png(buffer)
        return buffer.getvalue()


def plot_on(canvas_class):
    figure = Figure(figsize=(4, 3), dpi=50)
    canvas = canvas_class(figure)
    page = PageSocket()
    FigureManagerWebAgg(canvas, 1).add_web_socket(page)
    idle = []
    canvas.draw_idle = lambda: idle.append(1)  # the public path: the page asks for a draw
    return DepthPlot(figure=figure, decorated=False), canvas, page, idle


def test_a_canvas_with_other_internals_is_left_as_it_is_and_drawn_through_draw_idle():
    assert not transport.web_canvas_is_known(OtherCanvas)
    plot, canvas, page, idle = plot_on(OtherCanvas)
    assert "get_diff_image" not in vars(canvas)  # its own method, not replaced
    tanh = {"activation": "tanh", "n_layers": 6, "width": 16, "seeds": 1}
    for gain in (1.2, 1.201):
        plot.update(simulate(gain=gain, **tanh))
    assert len(idle) == 2 and not page.pictures  # never drawn at once, never blitted
    canvas.draw()  # what the page's request leads to: a full draw, the data on top
    picture = np.asarray(canvas.buffer_rgba())
    assert (np.abs(picture[..., :3].astype(int) - (31, 119, 180)).sum(axis=-1) < 40).sum() > 5


def test_a_matplotlib_whose_web_canvas_differs_makes_every_web_canvas_take_the_public_path(
    monkeypatch,
):
    monkeypatch.setattr(transport, "WEB_CANVAS_KNOWN", False)
    plot, canvas, page, idle = plot_on(FigureCanvasWebAggCore)
    assert "get_diff_image" not in vars(canvas)
    plot.update(simulate("relu", n_layers=4, width=16, seeds=1))
    assert idle == [1] and not page.pictures


def test_a_known_web_canvas_draws_at_once_and_sends_whole_pngs():
    plot, canvas, page, idle = plot_on(FigureCanvasWebAggCore)
    assert "get_diff_image" in vars(canvas)
    plot.update(simulate("relu", n_layers=4, width=16, seeds=1))
    assert not idle and len(page.pictures) == 1 and page.pictures[0].startswith(b"\x89PNG")


def test_a_class_missing_the_method_or_not_a_web_canvas_is_not_known():
    class NoDiff(FigureCanvasWebAggCore):
        get_diff_image = None

    assert not transport.web_canvas_is_known(NoDiff)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    assert not transport.web_canvas_is_known(FigureCanvasAgg)
    assert not transport.fast_web_canvas(FigureCanvasAgg(Figure()))


def test_an_ipympl_like_canvas_that_no_longer_sends_its_last_buffer_is_not_known(ipympl_canvas):
    class Changed(ipympl_canvas):
        def send_binary(self, data):  # reads syncing_data_url, and no longer the last buffer
            if self.syncing_data_url:
                return
            super().send_binary(data)

    assert not transport.web_canvas_is_known(Changed)


def test_a_figure_sized_png_reads_back_as_the_same_pixels():
    pixels = np.random.default_rng(0).integers(0, 256, (460, 750, 4), dtype=np.uint8)
    pixels[100:200] = 255  # a flat band, as most of a figure is
    picture = Image.open(io.BytesIO(transport.fast_png(pixels)))
    assert picture.mode == "RGBA" and picture.size == (750, 460)
    np.testing.assert_array_equal(np.asarray(picture), pixels)


def test_the_lab_extra_brings_the_fast_compressor():
    assert transport.DEFLATE.__name__ == "zlib_ng.zlib_ng" and transport.DEFLATE_LEVEL == 2


@pytest.mark.parametrize("compressor, level", [("zlib_ng", 2), ("zlib", 1)])
def test_either_compressor_makes_the_same_pixels(monkeypatch, compressor, level):
    import zlib

    from zlib_ng import zlib_ng

    monkeypatch.setattr(transport, "DEFLATE", zlib_ng if compressor == "zlib_ng" else zlib)
    monkeypatch.setattr(transport, "DEFLATE_LEVEL", level)
    figure = Figure(figsize=(7.5, 4.6), dpi=100)
    figure.subplots().plot([0, 1, 2], [1, 3, 2])
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    pixels = np.asarray(canvas.buffer_rgba())
    picture = Image.open(io.BytesIO(transport.fast_png(pixels)))
    assert picture.mode == "RGBA"
    np.testing.assert_array_equal(np.asarray(picture), pixels)


def test_browser_changes_are_told_from_code_and_nested_ones_counted_once():
    changes, slider, seen = transport.BrowserChanges(), widgets.IntSlider(), []
    changes.watch(slider)
    slider.observe(lambda change: seen.append(changes.active), names="value")
    slider.set_state({"value": 5})
    slider.value = 6
    assert seen == [True, False] and not changes.active
    with pytest.raises(TraitError):
        slider.set_state({"value": "not a number"})
    assert not changes.active  # an error inside leaves it balanced


def test_a_widget_without_a_public_set_state_is_answered_at_once():
    class Plain:
        pass

    changes = transport.BrowserChanges()
    changes.watch(Plain())  # nothing to wrap: no error, never active
    assert not changes.active


def test_a_figure_run_without_a_page_keeps_its_picture_for_static_pages(ipympl_canvas):
    # nbval and `make notebooks` run notebooks with no browser: ipympl's widget state would hold
    # no picture, and the course site would show an empty frame where the explorer is.
    fig = Figure(figsize=(2, 1.5), dpi=50)
    fig.add_subplot().plot([0, 1], [1, 0])
    canvas = ipympl_canvas(fig)
    assert transport.keep_picture_for_static_pages(canvas, fig)
    url = getattr(canvas, transport.DATA_URL)
    head, data = url.split(",", 1)
    assert head == "data:image/png;base64"
    picture = Image.open(io.BytesIO(base64.b64decode(data)))
    assert picture.size == (100, 75)
    setattr(canvas, transport.SYNCING, False)  # a page said "initialized": it draws itself
    fig.axes[0].plot([0, 1], [0, 1])
    assert not transport.keep_picture_for_static_pages(canvas, fig)
    assert getattr(canvas, transport.DATA_URL) == url
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    agg = Figure()
    assert not transport.keep_picture_for_static_pages(FigureCanvasAgg(agg), agg)


class PageRecorder:
    """A widget's comm that keeps the states the kernel sends the page."""

    kernel = "a kernel"
    comm_id = "page"

    def __init__(self):
        self.sent: list[dict] = []

    def send(self, data, buffers=None):
        self.sent.append(data["state"])

    def on_msg(self, callback):
        pass


def test_the_page_slider_holds_a_value_through_a_percentage_of_its_range():
    # noUiSlider's arithmetic, as the page does it: exact for most values, not for all.
    assert transport.page_slider_value(5 / 3, 0.0, 3.0) == 1.666666666666667 != 5 / 3
    assert transport.page_slider_value(2**0.5, 0.0, 3.0) == 2**0.5
    assert transport.page_slider_value(3.0, 0.0, 3.0) == 3.0
    assert transport.page_slider_value(-0.5, -1.0, 1.0) == -0.5


def test_the_pages_late_echo_of_an_old_value_is_dropped_and_the_kernels_sent_again():
    changes, gain, seen = transport.BrowserChanges(), widgets.FloatSlider(min=0, max=3), []
    changes.watch(gain)
    gain.observe(lambda change: seen.append(change["new"]), names="value")
    gain.comm = page = PageRecorder()
    gain.value = 5 / 3  # on the way to √2, as choosing Kaiming under tanh does
    gain.value = 2**0.5
    page.sent.clear()
    gain.set_state({"value": transport.page_slider_value(5 / 3, 0, 3)})  # the page's answer
    assert gain.value == 2**0.5 and seen == [5 / 3, 2**0.5]
    assert page.sent == [{"value": 2**0.5}]  # the page follows the kernel


def test_the_pages_echo_of_the_current_value_changes_nothing_and_a_hand_still_moves_it():
    changes, gain = transport.BrowserChanges(), widgets.FloatSlider(min=0, max=3)
    changes.watch(gain)
    gain.value = 5 / 3
    gain.comm = page = PageRecorder()
    gain.set_state({"value": transport.page_slider_value(5 / 3, 0, 3)})
    assert gain.value == 5 / 3 and page.sent == []  # no new value, and nothing to resend
    gain.set_state({"value": 2.1})  # a hand on the slider
    assert gain.value == 2.1
    gain.set_state({"value": 5 / 3})  # a hand back to exactly a value code gave: taken
    assert gain.value == 5 / 3
