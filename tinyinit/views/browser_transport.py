"""How a live figure reaches the browser quickly: blitting, whole pictures, and fast PNGs.

A slider move in the explorer redraws its figure and sends the picture to the
page. Three things keep that quick (`BlitPlot`):

- Blitting. The figure's frame (axes, ticks, labels) is drawn once and its
  pixels kept; a move puts them back and draws only the data on top, as
  matplotlib's animations do. The last FRAMES_KEPT frames are kept, by state.
- At once, whole. On a web canvas (matplotlib's webagg, and ipympl on top of
  it) the public `draw_idle()` is a round trip to the page and back before
  anything is drawn, and the picture then sent is the difference from the one
  before, which leaves wrong pixels behind when the page skipped a picture under
  load. Here a new frame is drawn at once and every picture goes out whole.
- A cheap PNG (`fast_png`): rows unfiltered, deflated by zlib-ng, fast.

The second needs private internals of matplotlib's web canvas and of ipympl.
Each is named once, below, and checked against the installed versions
(`web_canvas_is_known`, at import for matplotlib, on the first canvas for
ipympl): where one is missing or used otherwise, the plot takes the public path
(`draw_idle()`, the canvas's own pictures), slower but right. pyproject.toml
bounds matplotlib, ipympl and ipywidgets to the versions tested;
tests/views/test_browser_transport.py fails on a version whose internals differ.

A slider dragged in the browser sends a value per pixel; `BrowserChanges` tells
a change that came from the browser (applied through ipywidgets' public
`Widget.set_state`) from one made by code, so that the explorer can answer a drag
with one update, to its latest value, and a notebook cell at once. It also keeps
a float slider's page from sending the kernel's own values back as changes: the
page's slider holds a value through a percentage of its range
(`page_slider_value`), and answers a value the kernel sets with its image of it.
"""

from __future__ import annotations

import inspect
import io
import struct
import zlib
from base64 import b64encode
from collections import OrderedDict, deque
from contextlib import contextmanager

import numpy as np
from matplotlib.figure import Figure

from .._extras import extra
from ..core.arguments import KindError, instance, number, shown

__all__ = [
    "BrowserChanges",
    "fast_png",
    "fast_web_canvas",
    "is_web_canvas",
    "keep_picture_for_static_pages",
    "keeps_pixels",
    "page_slider_value",
    "png_rows",
    "send_whole_pictures",
    "web_canvas_is_known",
]

# --- the private internals, each named once ----------------------------------------------

# matplotlib's FigureCanvasWebAggCore: the method replaced, and what it keeps.
DIFF_IMAGE = "get_diff_image"  # makes the picture to send, None when nothing changed
PNG_IS_OLD = "_png_is_old"  # True once drawn: a picture is due
LAST_BUFF = "_last_buff"  # the last picture's pixels, for the next difference
# ipympl's Canvas: True until its page says "initialized"; meanwhile it sends the
# picture as a data URL made from LAST_BUFF, the raw pixels where a PNG belongs.
SYNCING = "syncing_data_url"
# ipympl's Canvas: the picture (a data URL) that a page shows before, or without, a kernel.
DATA_URL = "_data_url"


def _uses(function, *names: str) -> bool:
    """Whether `function`'s source reads every one of `names` (False without source)."""
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return False
    return all(name in source for name in names)


def _webagg_canvas_class():
    from matplotlib.backends.backend_webagg_core import FigureCanvasWebAggCore

    return FigureCanvasWebAggCore


def web_canvas_is_known(canvas_class=None) -> bool:
    """Whether a web canvas class keeps the internals `send_whole_pictures` relies on.

    matplotlib's: DIFF_IMAGE makes the picture from PNG_IS_OLD and LAST_BUFF and
    says its mode (`set_image_mode`). ipympl's Canvas, on top: it sends LAST_BUFF
    while SYNCING. Any other subclass: as matplotlib's, if it keeps DIFF_IMAGE.

    >>> web_canvas_is_known()                      # the installed matplotlib's
    True
    """
    base = _webagg_canvas_class()
    canvas_class = base if canvas_class is None else canvas_class
    instance("canvas_class", canvas_class, type, "a canvas class, or None for matplotlib's")
    if not issubclass(canvas_class, base):
        return False
    method = getattr(canvas_class, DIFF_IMAGE, None)
    if method is None or not _uses(method, PNG_IS_OLD, LAST_BUFF, "set_image_mode"):
        return False
    send_binary = getattr(canvas_class, "send_binary", None)
    if send_binary is not None and _uses(send_binary, SYNCING):  # ipympl
        return _uses(send_binary, LAST_BUFF) and _uses(canvas_class.__init__, SYNCING)
    return True


WEB_CANVAS_KNOWN = web_canvas_is_known()  # the installed matplotlib, checked at import
_known: dict[type, bool] = {}


def fast_web_canvas(canvas) -> bool:
    """Whether `canvas` is a web canvas this module can draw at once and send whole.

    >>> from matplotlib.backends.backend_agg import FigureCanvasAgg
    >>> fast_web_canvas(FigureCanvasAgg(Figure()))
    False
    """
    base = _webagg_canvas_class()
    if not (WEB_CANVAS_KNOWN and isinstance(canvas, base)):
        return False
    kind = type(canvas)
    if kind not in _known:
        _known[kind] = web_canvas_is_known(kind)
    return _known[kind]


def is_web_canvas(canvas) -> bool:
    """Whether `canvas` shows its pictures in a browser page (webagg, ipympl).

    >>> from matplotlib.backends.backend_webagg_core import FigureCanvasWebAggCore
    >>> is_web_canvas(FigureCanvasWebAggCore(Figure())), is_web_canvas(None)
    (True, False)
    """
    return isinstance(canvas, _webagg_canvas_class())


def keep_picture_for_static_pages(canvas, figure) -> bool:
    """Store the figure's picture in ipympl's widget state while no page has shown it.

    A notebook run without a browser (nbval, `make notebooks`) never draws its ipympl
    figures, so the widget state it stores has no picture and a page built from the stored
    notebook (the course site) shows an empty frame. While SYNCING says no page is there,
    the picture goes into DATA_URL, which ipympl's page shows on load; once a page is
    there, nothing is done. True when a picture was stored.

    >>> from matplotlib.backends.backend_agg import FigureCanvasAgg
    >>> figure = Figure()
    >>> keep_picture_for_static_pages(FigureCanvasAgg(figure), figure)   # not ipympl's
    False
    """
    instance("figure", figure, Figure, "a matplotlib Figure")
    if not (getattr(canvas, SYNCING, False) and DATA_URL in getattr(canvas, "keys", ())):
        return False
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi="figure")
    setattr(canvas, DATA_URL, "data:image/png;base64," + b64encode(buffer.getvalue()).decode())
    return True


# --- the picture: a PNG, fast --------------------------------------------------------------

# The compressor of the picture's rows: zlib-ng (a package of the lab and present extras)
# makes the same zlib format as the standard library's zlib, and at its level 2 a figure's
# rows take a third of the time of zlib's level 1 and come out a fifth smaller
# (benchmarks/bench_explorer.py measures both). Without it, the standard library's: the
# same pixels, about 1.5 ms more a move.
try:
    from zlib_ng import zlib_ng as DEFLATE

    DEFLATE_LEVEL = 2
except ImportError:  # a core install with a web canvas (webagg): the same pictures
    DEFLATE, DEFLATE_LEVEL = zlib, 1


def png_rows(pixels: np.ndarray) -> np.ndarray:
    """A PNG's rows for RGBA pixels (rows, columns, 4 uint8): each a filter byte, 0 for
    none, then its pixels; what the compressor reads.

    >>> png_rows(np.full((1, 2, 4), 7, np.uint8))
    array([[0, 7, 7, 7, 7, 7, 7, 7, 7]], dtype=uint8)
    """
    rows, columns, _ = _rgba(pixels).shape
    lines = np.empty((rows, 1 + 4 * columns), np.uint8)
    lines[:, 0] = 0
    lines[:, 1:] = pixels.reshape(rows, 4 * columns)
    return lines


def fast_png(pixels: np.ndarray) -> bytes:
    """RGBA pixels (rows, columns, 4 uint8) as a PNG: rows unfiltered, deflated fast.

    A PNG is a signature and chunks (length, kind, data, CRC): the header (size,
    8 bits per channel, RGBA), the rows (`png_rows`) compressed by `DEFLATE`, the end.

    >>> pixels = np.zeros((2, 3, 4), np.uint8); pixels[1, 2] = (255, 0, 0, 255)
    >>> import io; from PIL import Image
    >>> np.array_equal(np.asarray(Image.open(io.BytesIO(fast_png(pixels)))), pixels)
    True
    """
    rows, columns, _ = _rgba(pixels).shape

    def chunk(kind: bytes, data: bytes) -> bytes:
        size, crc = struct.pack(">I", len(data)), struct.pack(">I", zlib.crc32(kind + data))
        return size + kind + data + crc

    header = struct.pack(">IIBBBBB", columns, rows, 8, 6, 0, 0, 0)  # 8 bits, RGBA, no interlace
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", DEFLATE.compress(png_rows(pixels), DEFLATE_LEVEL))
        + chunk(b"IEND", b"")
    )


def _rgba(pixels) -> np.ndarray:
    """pixels checked: a uint8 array of shape (rows, columns, 4), RGBA, at least one pixel."""
    accepted = "a uint8 array of RGBA pixels, shape (rows, columns, 4)"
    if not (isinstance(pixels, np.ndarray) and pixels.dtype == np.uint8):
        raise KindError(f"pixels must be {accepted}, got {shown(pixels)}")
    if pixels.ndim != 3 or pixels.shape[2] != 4 or not pixels.size:
        raise ValueError(f"pixels must be {accepted}, got {shown(pixels)}")
    return pixels


def send_whole_pictures(canvas) -> bool:
    """Make a web canvas send every picture whole, as a `fast_png`; False where it cannot.

    matplotlib's web canvas sends the difference from the picture before when it
    can. The page shows the last picture that arrived; a difference it skipped
    under load would leave wrong pixels behind, a whole picture it skipped costs
    nothing. This replaces the canvas's DIFF_IMAGE, keeping its bookkeeping: the
    mode said to the page, nothing sent when nothing was drawn, and, while ipympl
    is SYNCING, the last picture (from which it makes the copy the notebook file
    keeps). Nothing is changed on a canvas that `fast_web_canvas` does not know.

    >>> from matplotlib.backends.backend_agg import FigureCanvasAgg
    >>> send_whole_pictures(FigureCanvasAgg(Figure()))
    False
    """
    if not fast_web_canvas(canvas):
        return False

    def whole_picture() -> bytes | None:
        if not getattr(canvas, PNG_IS_OLD):
            return None
        pixels = np.asarray(canvas.get_renderer().buffer_rgba())
        canvas.set_image_mode("full")
        if getattr(canvas, SYNCING, False):
            setattr(canvas, LAST_BUFF, pixels.view(np.uint32).squeeze(2).copy())
        setattr(canvas, PNG_IS_OLD, False)
        return fast_png(pixels)

    setattr(canvas, DIFF_IMAGE, whole_picture)
    return True


# --- blitting ----------------------------------------------------------------------------

FRAMES_KEPT = 8  # about 1.4 MB each for a 7.5 x 4.6 inch figure at 100 dpi


def keeps_pixels(canvas) -> bool:
    """Whether `canvas` can keep a frame's pixels and put them back (what blitting needs).

    Not `canvas.supports_blit`: matplotlib's web canvases (webagg, and ipympl's on
    top of it) answer False there, because some of matplotlib's own widgets
    misbehave when they blit in a browser; the two methods work all the same.

    >>> from matplotlib.backends.backend_agg import FigureCanvasAgg
    >>> from matplotlib.backends.backend_svg import FigureCanvasSVG
    >>> keeps_pixels(FigureCanvasAgg(Figure())), keeps_pixels(FigureCanvasSVG(Figure()))
    (True, False)
    """
    return hasattr(canvas, "copy_from_bbox") and hasattr(canvas, "restore_region")


class BlitPlot:
    """Blitting, as matplotlib's animations do, for a figure updated in place.

    The artists in `self._moving` are "animated": a full draw leaves them out and
    `_on_draw` draws them on top, keeping the pixels of the rest (axes, ticks,
    labels: the frame). While `_frame_state()` stays the same, an update puts those
    pixels back and draws the moving artists alone, a fraction of the cost. The
    last FRAMES_KEPT frames are kept, by state: going back to an activation, a
    depth or a width seen a moment ago (what a demonstration does) finds its frame
    without drawing it again. A saved picture (savefig) draws everything as usual.
    Subclasses set self.figure and self._moving, call `_start_blitting()`, and
    define `_frame_state`.

    On a web canvas this module knows (`fast_web_canvas`) a new frame is drawn at
    once and every picture goes out whole (`send_whole_pictures`); on any other
    web canvas, each update is the public `draw_idle()`.
    """

    figure: Figure
    _moving: list

    def _start_blitting(self) -> None:
        self._frames: OrderedDict = OrderedDict()  # frame state -> its pixels, newest last
        canvas = self.figure.canvas
        if keeps_pixels(canvas):
            for artist in self._moving:
                artist.set_animated(True)
            canvas.mpl_connect("draw_event", self._on_draw)
        self._public_path = is_web_canvas(canvas) and not send_whole_pictures(canvas)

    def _frame_state(self) -> tuple:
        raise NotImplementedError

    def _show(self) -> None:
        canvas = self.figure.canvas
        if self._public_path or getattr(canvas, SYNCING, False):
            # The page asks for the picture. (ipympl, while SYNCING, sends raw pixels
            # where a PNG belongs, and the page would show a broken image.)
            canvas.draw_idle()
            return
        state = self._frame_state()
        if state not in self._frames:
            canvas.draw()  # _on_draw then keeps the new frame and adds the data
            return
        self._frames.move_to_end(state)
        canvas.restore_region(self._frames[state])
        self._draw_moving()
        canvas.blit(self.figure.bbox)
        # What is on screen is current. Left stale, the figure would be drawn whole
        # again: in a notebook, pyplot draws every stale figure after each widget
        # message (its post_execute hook, which ipykernel runs for comm messages).
        self.figure.stale = False

    def redraw_all(self) -> None:
        """Draw the whole figure anew; call it after changing the figure outside `update`."""
        self._frames.clear()  # the change may be one no frame state records (a font, a colour)
        self.figure.canvas.draw_idle()

    def _on_draw(self, event) -> None:
        """After each full draw on screen: keep the frame's pixels, then draw the data."""
        if event.canvas.is_saving():
            return  # savefig draws the animated artists itself
        state = self._frame_state()
        self._frames[state] = event.canvas.copy_from_bbox(self.figure.bbox)
        self._frames.move_to_end(state)
        while len(self._frames) > FRAMES_KEPT:
            self._frames.popitem(last=False)
        self._draw_moving()

    def _draw_moving(self) -> None:
        for artist in self._moving:  # in z order
            (artist.axes or self.figure).draw_artist(artist)


# --- changes from the browser --------------------------------------------------------------


def page_slider_value(value: float, low: float, high: float) -> float:
    """The value ipywidgets' slider on the page holds once the kernel sets it to `value`.

    The page's slider (noUiSlider) keeps a handle's place as a percentage of [low, high]
    and turns it back into a value, in the page's double arithmetic: 100 (v - low) /
    (high - low), then p (high - low) / 100 + low. The round trip may not give `value`
    back, and a float slider that updates continuously then sends what it holds to the
    kernel as if a hand had moved it.

    >>> page_slider_value(5 / 3, 0.0, 3.0), page_slider_value(2**0.5, 0.0, 3.0) == 2**0.5
    (1.666666666666667, True)
    """
    low, high, value = number("low", low), number("high", high), number("value", value)
    if not low < high:
        raise ValueError(
            f"low must be < high (the slider's range), got low={low!r} and high={high!r}"
        )
    if value >= high:
        return high
    shift = value + abs(low) if low < 0 else value - low
    percent = max(0.0, 100 * shift / (high - low))
    return percent * (high - low) / 100 + low


# How many of a slider's values set by code are remembered to recognise the page's echoes:
# a step sets a control once or twice, and the page answers within a few messages.
VALUES_REMEMBERED = 16


class BrowserChanges:
    """Tells a control's change sent by the browser from one made by code, and keeps the
    page's echoes of the kernel's own values from coming back as changes.

    ipywidgets applies what the page sends through the widget's public
    `set_state` (its documented "called when a state is received from the
    front-end"), and the observers run inside it. `watch(widget)` wraps that
    method, so that `active` is true while a browser change is being applied.

    A float slider on the page answers a value the kernel sets with what its handle
    holds, `page_slider_value` (5/3 comes back as 1.666666666666667), as if a hand had
    moved it. Such an answer arriving after the kernel has moved on (a step sets the
    gain to 5/3 on the way to √2) would put the old value back. The watched float
    slider remembers the values code gave it; what the page sends that is the page's
    image of one of them, and not that value itself, is an echo: it is dropped, and the
    kernel's value sent again if the page's differs from it. The page follows the kernel.

    >>> import ipywidgets as widgets
    >>> changes, slider, seen = BrowserChanges(), widgets.IntSlider(), []
    >>> changes.watch(slider)
    >>> slider.observe(lambda change: seen.append(changes.active), names="value")
    >>> slider.value = 3                        # code
    >>> slider.set_state({"value": 4})          # what a drag in the page does
    >>> seen
    [False, True]
    >>> gain = widgets.FloatSlider(min=0.0, max=3.0, step=None)
    >>> changes.watch(gain)
    >>> gain.value = 5 / 3; gain.value = 2**0.5 # a step, on its way to √2
    >>> gain.set_state({"value": 1.666666666666667})   # the page's late answer to 5/3
    >>> gain.value == 2**0.5
    True
    """

    def __init__(self):
        self._depth = 0

    @property
    def active(self) -> bool:
        return self._depth > 0

    @contextmanager
    def _applying(self):
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    def watch(self, widget) -> None:
        """Count `widget`'s changes from the browser (none, if it has no public set_state);
        for a float slider, drop the page's echoes of values set by code."""
        apply = getattr(widget, "set_state", None)
        if not callable(apply):  # another ipywidgets: every change is answered at once
            return
        echoes = _SliderEchoes(widget, self) if _is_float_slider(widget) else None

        def set_state(sync_data):
            if echoes is not None:
                sync_data = echoes.without_echo(sync_data)
            with self._applying():
                return apply(sync_data)

        widget.set_state = set_state


def _is_float_slider(widget) -> bool:
    with extra("lab", "the live explorers"):
        import ipywidgets as widgets

    return isinstance(widget, widgets.FloatSlider)


class _SliderEchoes:
    """The values code gave one float slider, and the page's echoes of them (BrowserChanges)."""

    def __init__(self, slider, changes: BrowserChanges):
        self.slider = slider
        self.given = deque([slider.value], maxlen=VALUES_REMEMBERED)
        slider.observe(self._on_value, names="value")
        self.changes = changes

    def _on_value(self, change) -> None:
        if not self.changes.active:
            self.given.append(change["new"])

    def _on_page(self, value: float) -> float:
        return page_slider_value(value, self.slider.min, self.slider.max)

    def is_echo(self, value) -> bool:
        """Whether the page's `value` is its image of a value code gave, and not that value."""
        if not isinstance(value, (int, float)):
            return False
        return any(value != given and value == self._on_page(given) for given in self.given)

    def without_echo(self, sync_data: dict) -> dict:
        """`sync_data` without an echoed value; the kernel's value goes to the page again
        when the page holds another."""
        if "value" not in sync_data or not self.is_echo(sync_data["value"]):
            return sync_data
        held = sync_data["value"]
        if held != self._on_page(self.slider.value):
            self.slider.send_state("value")
        return {k: v for k, v in sync_data.items() if k != "value"}
