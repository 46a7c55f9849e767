"""Presentation mode: the suite's live explorers as one app for a projector.

    make present          # Voila serves apps/present.ipynb: controls and plots, no code

    %matplotlib widget    # or in a notebook
    from tinyinit.present import presentation
    presentation()

Made for a lecture hall: the whole plot in view at 1280x720 (the common
projector) and at 1920x1080, the key number in large type beside it, thick
lines and high contrast. The page reports its size (`PresenterKeys`) and the
plot takes what is left beside a column of the most used controls; the type
grows with the screen (`Look`).

A dropdown offers the classic demonstrations; choosing one sets every control
of the explorer it needs, and a demonstration told in two steps ("gain 1", then
"gain 5/3") has a button per step. A presenter clicker drives it: PageDown (or
→) goes to the next step, and after the last step to the next demonstration;
PageUp (or ←) goes back. Keys typed into a focused control (a slider, a menu)
keep their meaning there; Esc takes the focus off it. The controls stay live,
so the class can ask "and at depth 50?" and the slider answers.

With a share URL (`python -m tinyinit present --share-url URL`), a tab shows
that link and its QR code, where students open the same explorer.

The explorers are the suite's own (`tinyinit.explorer.DepthExplorer`,
`tinyinit.explorer.ResidualStreamExplorer`), restyled: what the class sees is
what the notebooks show.
"""

from __future__ import annotations

import dataclasses
import html
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
from matplotlib.colors import to_hex

from ._extras import extra

with extra("present", "the presentation app"):  # checked before the explorer asks for `lab`
    import anywidget
    import ipywidgets as widgets
    import traitlets

from .a11y import Accessible, live
from .explorer import DepthExplorer, ResidualStreamExplorer
from .pcg32 import PCG32
from .plots import QUANTITIES
from .residual import ResidualStack, draw_residual_stack

__all__ = [
    "PRESETS",
    "Look",
    "Preset",
    "Presentation",
    "PresenterKeys",
    "Step",
    "app_notebook",
    "app_path",
    "check_share_url",
    "depth_headline",
    "presentation",
    "projector_style",
    "qr_svg",
    "style_figure",
    "offline_template",
    "voila_command",
]

# --- the demonstrations ------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One state of a demonstration: which explorer, the values of its controls, what to say.

    >>> PRESETS["tanh: gain 1 vs 5/3"].steps[1].settings["gain"]
    1.6666666666666667
    """

    label: str
    app: str  # "depth" or "residual"
    settings: dict = field(default_factory=dict)
    says: str = ""


@dataclass(frozen=True)
class Preset:
    """A classic demonstration: a name for the dropdown and one or more steps.

    >>> [step.label for step in PRESETS["Residual stream: with and without 1/sqrt(2N)"].steps]
    ['without 1/√(2N)', 'with 1/√(2N)']
    """

    name: str
    steps: tuple[Step, ...]


def _depth(label, says, **settings) -> Step:
    base = dict(
        initializer="xavier_uniform", activation="relu", gain=1.0, depth=20, width=256,
        seeds=3, direction="forward",
    )  # fmt: skip
    return Step(label, "depth", {**base, **settings}, says)


def _residual(label, says, **settings) -> Step:
    return Step(label, "residual", {"blocks": 48, "both": False, **settings}, says)


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in [
        Preset(
            "Xavier + ReLU: collapse",
            (
                _depth(
                    "Xavier, gain 1",
                    "ReLU keeps half of E[z²]; Xavier's gain 1 does not give it back: "
                    "the signal halves each layer.",
                ),
            ),
        ),
        Preset(
            "Kaiming + ReLU: kept",
            (
                _depth(
                    "Kaiming, gain √2",
                    "Kaiming's std √(2/n_in) doubles what ReLU halves: the signal stays at 1.",
                    initializer="kaiming_fan_in",
                    gain=math.sqrt(2.0),
                ),
            ),
        ),
        Preset(
            "tanh: gain 1 vs 5/3",
            (
                _depth(
                    "gain 1",
                    "tanh squashes: with gain 1 the signal drains away, layer after layer.",
                    initializer="xavier_normal",
                    activation="tanh",
                    gain=1.0,
                ),
                _depth(
                    "gain 5/3",
                    "gain 5/3, torch's calculate_gain('tanh'), makes up for the squashing: "
                    "the signal settles.",
                    initializer="xavier_normal",
                    activation="tanh",
                    gain=5.0 / 3.0,
                ),
            ),
        ),
        Preset(
            "Residual stream: with and without 1/sqrt(2N)",
            (
                _residual(
                    "without 1/√(2N)",
                    "Every block adds its variance to the stream: it grows like 1 + 2N.",
                    scaled=False,
                ),
                _residual(
                    "with 1/√(2N)",
                    "GPT-2 scales the outputs by 1/√(2N): the stream stays near 2 "
                    "(unscaled, faded).",
                    scaled=True,
                    both=True,
                ),
            ),
        ),
        Preset(
            "Xavier vs Kaiming + ReLU",
            (
                _depth(
                    "Xavier, gain 1",
                    "Xavier with gain 1: ReLU halves the signal at every layer.",
                ),
                _depth(
                    "Kaiming, gain √2",
                    "Kaiming's √2 gives back what ReLU takes: about 2^20 above Xavier's (faded) "
                    "at layer 20.",
                    initializer="kaiming_fan_in",
                    gain=math.sqrt(2.0),
                ),
            ),
        ),
    ]
}

CHOOSE = "choose a demonstration"

# --- the look: sizes for a projector -------------------------------------------------------------

# Everything below is sized for 1280x720, the common lecture-hall projector, and
# grows with the screen up to 1.5 times (a 1920x1080 projector shows the same
# room-sized picture with as many pixels again).
BASE_VIEWPORT = (1280, 720)
FONT_PX = 20  # controls and their labels
SAYS_EM = 1.2  # the demonstration's one-line caption: 24 px
HEADLINE_EM = 2.0  # the key number beside the plot: 40 px
LEGEND_EM = 0.85  # the legend and settings under the controls: 17 px
SIDE_EM = 20  # the column of controls beside the plot: 400 px
# Font sizes of the figures in points; at 100 dpi a point is 100/72 px: the tick
# labels are 22 px and the axis labels 25 px, as large as the controls beside them.
FIGURE_FONTS = {"title": 17, "label": 18, "ticks": 16, "legend": 15, "note": 14}


@dataclass(frozen=True)
class Look:
    """Sizes in CSS pixels for a page of `width` x `height`: fonts, side column, plot canvas.

    `top` is where the plot starts on the page (the menu, caption and tab bar
    above it); the canvas takes the rest of the height and the width beside the
    column of controls, at most 0.7 times as high as it is wide.

    >>> look = Look.for_page(1280, 720, top=150)
    >>> look.font_px, look.side_px, look.canvas_px
    (20, 400, (840, 560))
    >>> Look.for_page(1920, 1080, top=220).font_px
    30
    """

    scale: float
    font_px: int
    side_px: int
    canvas_px: tuple[int, int]

    @classmethod
    def for_page(cls, width: float, height: float, top: float) -> Look:
        scale = min(max(min(width / BASE_VIEWPORT[0], height / BASE_VIEWPORT[1]), 1.0), 1.5)
        font_px = round(FONT_PX * scale)
        side_px = SIDE_EM * font_px
        gap = round(2 * font_px)  # between plot and column, and the page's own margins
        canvas_w = max(480, int(width - side_px - gap))
        canvas_h = max(300, int(min(height - top - font_px / 2, 0.7 * canvas_w)))
        return cls(scale, font_px, side_px, (canvas_w, canvas_h))

    @property
    def figure_fonts(self) -> dict[str, float]:
        """FIGURE_FONTS grown with the screen, in points."""
        return {k: round(v * self.scale, 1) for k, v in FIGURE_FONTS.items()}

    def css(self) -> str:
        """The app's style sheet, every rule under .tinyinit-present (nothing else on the page)."""
        f, side = self.font_px, self.side_px
        canvas_w, canvas_h = self.canvas_px
        return f"""
.tinyinit-present {{
  --jp-widgets-font-size: {f}px;
  --jp-widgets-inline-height: {round(1.75 * f)}px;
  --jp-widgets-inline-label-width: {round(5.2 * f)}px;
  --jp-widgets-inline-width: {side}px;
  --jp-widgets-inline-width-short: {round(side / 2)}px;
  --jp-widgets-inline-width-tiny: {round(3 * f)}px;
  --jp-widgets-slider-handle-size: {f}px;
  --jp-widgets-horizontal-tab-height: {round(1.6 * f)}px;
  --jp-widgets-input-color: #000;
  --jp-ui-font-size1: {f}px;
  --jp-content-font-size1: {f}px;
  --jp-ui-font-color1: #000;
  --jp-widgets-label-color: #000;
  --jp-widgets-readout-color: #000;
  font-size: {f}px;
  color: #000;
  background: #fff;
  width: 100%;
  box-sizing: border-box;
}}
.tinyinit-present .widget-html-content,
.tinyinit-present .widget-label,
.tinyinit-present .widget-readout,
.tinyinit-present select,
.tinyinit-present button,
.tinyinit-present .lm-TabBar-tabLabel {{
  font-size: {f}px;
  line-height: 1.3;
}}
.tinyinit-present .widget-html-content {{ height: auto; }}
.tinyinit-present button {{ height: {round(1.75 * f)}px; }}
.tinyinit-present .tinyinit-bar {{ align-items: center; gap: {f // 2}px; flex-wrap: nowrap; }}
.tinyinit-present .tinyinit-bar > * {{ margin: 0; }}
.tinyinit-present .tinyinit-says {{ width: 100%; margin: {f // 4}px 0; }}
/* One line on a projector (the captions are short enough); wrapped, never cut, when narrower */
.tinyinit-present .tinyinit-says .widget-html-content {{ font-size: {round(SAYS_EM * f)}px; }}
.tinyinit-present .tinyinit-stage {{ width: 100%; }}
.tinyinit-present .tinyinit-stage > .widget-tab-contents,
.tinyinit-present .tinyinit-stage > .lm-TabPanel-stackedPanel {{
  padding: {f // 4}px 0 0 0; border: none; overflow: hidden;
}}
.tinyinit-present .lm-TabBar-tab {{
  min-height: {round(1.6 * f)}px; max-width: none !important; flex: 0 0 auto !important;
}}
.tinyinit-present .tinyinit-view {{ gap: {f}px; flex-wrap: nowrap; align-items: flex-start; }}
.tinyinit-present .tinyinit-plot-area {{
  flex: 0 0 auto; width: {canvas_w}px; height: {canvas_h}px; overflow: hidden; margin: 0;
}}
.tinyinit-present .tinyinit-plot-area .jupyter-matplotlib {{ margin: 0; }}
.tinyinit-present .tinyinit-side {{
  flex: 0 0 auto; width: {side}px; max-height: {canvas_h}px; overflow-y: auto; margin: 0;
}}
.tinyinit-present .tinyinit-side .widget-inline-hbox,
.tinyinit-present .tinyinit-side .widget-hslider,
.tinyinit-present .tinyinit-side .widget-dropdown {{ width: {side - 8}px !important; }}
.tinyinit-present .tinyinit-side .widget-hslider .slider-container {{ min-width: {4 * f}px; }}
.tinyinit-present .tinyinit-side .widget-inline-hbox > .widget-label {{
  width: {round(5.4 * f)}px !important; flex: 0 0 auto; text-align: right;
}}
.tinyinit-present .tinyinit-headline .widget-html-content {{
  font-size: {round(HEADLINE_EM * f)}px; line-height: 1.15; font-weight: bold;
}}
.tinyinit-present .tinyinit-headline small {{ font-size: 0.6em; font-weight: normal; }}
.tinyinit-present .tinyinit-side .tinyinit-caption .widget-html-content,
.tinyinit-present .tinyinit-side .tinyinit-readout .widget-html-content {{
  font-size: {round(LEGEND_EM * f)}px;
}}
/* The step on screen stands out from the others */
.tinyinit-present .tinyinit-step .mod-active {{ background: #174a9c; color: #fff; }}
/* Buttons as wide as their words, never cut to "forward: a..." */
.tinyinit-present .widget-toggle-button,
.tinyinit-present .widget-button {{ width: auto !important; padding: 0 0.6em; }}
.tinyinit-present .tinyinit-side .widget-toggle-buttons {{ flex-wrap: wrap; }}
.tinyinit-present .tinyinit-qr svg {{ width: {canvas_h}px; height: {canvas_h}px; }}
.tinyinit-present .tinyinit-share-view {{ gap: {2 * f}px; }}
.tinyinit-present .tinyinit-share {{ flex: 1 1 0; min-width: 0; }}
.tinyinit-present .tinyinit-share .widget-html-content {{
  font-size: {round(1.6 * f)}px; overflow-wrap: anywhere; white-space: normal;
}}
"""


def style_figure(figure, fonts: dict | None = None) -> None:
    """Set every text of `figure` to presentation sizes: title, axis labels, ticks, legends.

    Sizes are set on the artists themselves (not through rcParams), so they
    hold when ticks are rebuilt or a title is rewritten at the next update.

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); ax = fig.add_subplot(); _ = ax.set_xlabel("layer")
    >>> style_figure(fig); ax.xaxis.label.get_fontsize()
    18.0
    """
    fonts = {**FIGURE_FONTS, **(fonts or {})}
    for ax in figure.axes:
        ax.title.set_fontsize(fonts["title"])
        ax.xaxis.label.set_fontsize(fonts["label"])
        ax.yaxis.label.set_fontsize(fonts["label"])
        ax.tick_params(labelsize=fonts["ticks"])
        if ax.get_legend() is not None:
            for text in ax.get_legend().get_texts():
                text.set_fontsize(fonts["legend"])
    for legend in figure.legends:
        for text in legend.get_texts():
            text.set_fontsize(fonts["legend"])
    for text in figure.texts:
        text.set_fontsize(fonts["note"])


# Lines at least this thick and markers this large: visible from the back row
# through a washed-out projector.
PROJECTOR_LINE_WIDTH = 3.5
PROJECTOR_MARKER_SIZE = 9.0


def projector_style(figure, scale: float = 1.0) -> None:
    """Thick lines, large markers, black axes and ticks: a figure that survives a projector.

    Solid lines get PROJECTOR_LINE_WIDTH points times `scale`, dashed and dotted
    ones two thirds of that, markers PROJECTOR_MARKER_SIZE times `scale`; spines
    and ticks are drawn black and thick, grid lines a darker grey. Setting the
    sizes (not multiplying them) makes a second call with another scale exact.

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); ax = fig.add_subplot(); (line,) = ax.plot([0, 1], "o-", lw=1, ms=3)
    >>> projector_style(fig); line.get_linewidth(), line.get_markersize()
    (3.5, 9.0)
    """
    for ax in figure.axes:
        for line in ax.get_lines():
            solid = line.get_linestyle() in ("-", "solid")
            line.set_linewidth(PROJECTOR_LINE_WIDTH * scale * (1 if solid else 2 / 3))
            if line.get_marker() not in (None, "None", "", " "):
                line.set_markersize(PROJECTOR_MARKER_SIZE * scale)
        for spine in ax.spines.values():
            spine.set_linewidth(2.0 * scale)
            spine.set_color("black")
        ax.tick_params(width=2.0 * scale, length=7 * scale, color="black", labelcolor="black")
        ax.xaxis.label.set_color("black")
        ax.yaxis.label.set_color("black")
        for gridline in ax.get_xgridlines() + ax.get_ygridlines():
            gridline.set_color("0.6")


def set_canvas_px(figure, width: int, height: int) -> None:
    """Resize `figure` to width x height CSS pixels (a live canvas follows on the page)."""
    ratio = getattr(figure.canvas, "device_pixel_ratio", 1) or 1
    dpi = figure.dpi / ratio  # a HiDPI screen raises figure.dpi, not the CSS size
    figure.set_size_inches(width / dpi, height / dpi, forward=True)


def set_margins_px(figure, left: float, right: float, top: float, bottom: float) -> None:
    """subplots_adjust with margins in CSS pixels, so fonts keep their room at any size."""
    ratio = getattr(figure.canvas, "device_pixel_ratio", 1) or 1
    width, height = figure.get_size_inches() * figure.dpi / ratio
    figure.subplots_adjust(
        left=left / width, right=1 - right / width, top=1 - top / height, bottom=bottom / height
    )


# --- the keys of a presenter clicker, and the size of the page ------------------------------------

# The page side, as an anywidget module (shipped inside the package: nothing is
# fetched). One keydown listener on the document, in the capture phase so that
# it sees the key before the page scrolls or a canvas takes it.
KEYS_ESM = r"""
const NEXT = new Set(["PageDown", "ArrowRight"]);
const PREVIOUS = new Set(["PageUp", "ArrowLeft"]);
// Focused elements for which these keys already mean something: they keep them.
const OWN_KEYS = [
  "input:not([type=button]):not([type=checkbox]):not([type=radio]):not([type=submit])",
  "select", "textarea", "[contenteditable='']", "[contenteditable=true]",
  "[role=slider]", "[role=tab]", "[role=listbox]", "[role=combobox]", "[role=menu]",
  ".noUi-handle", ".cm-editor",
].join(", ");

function inView(element) {
  if (!element || !element.isConnected) return false;
  const box = element.getBoundingClientRect();
  return box.width > 0 && box.bottom > 0 && box.top < window.innerHeight;
}

function render({ model, el }) {
  const app = () => el.closest(".tinyinit-present");
  let lastKey = { target: null, time: 0 };

  const onKey = (event) => {
    lastKey = { target: event.target, time: Date.now() };
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const target = event.target instanceof Element ? event.target : null;
    const root = app();
    if (event.key === "Escape") {
      // Give the keys back to the clicker: the focused control lets go.
      if (target && root && root.contains(target)) target.blur();
      return;
    }
    const step = NEXT.has(event.key) ? 1 : PREVIOUS.has(event.key) ? -1 : 0;
    if (step === 0 || event.tinyinitStep !== undefined) return;  // one step per key press
    if (target && target.closest(OWN_KEYS)) return;
    if (!inView(root)) return;
    event.tinyinitStep = step;
    event.preventDefault();  // no scrolling: the app fits the page
    event.stopPropagation();
    model.send({ step });
  };

  // A demonstration picked with the mouse leaves the menu focused, where the
  // clicker's next PageDown would pick another one: the menu lets go. Picked
  // with the keyboard, it keeps the focus and its keys.
  const onChange = (event) => {
    const target = event.target;
    if (!(target instanceof HTMLSelectElement) || !target.closest(".tinyinit-preset")) return;
    const keyed = lastKey.target === target && Date.now() - lastKey.time < 1000;
    if (!keyed) target.blur();
  };

  // The page's size and where the plot starts, so the kernel can fit the plot.
  let sent = "";
  const report = () => {
    const root = app();
    if (!root) return;
    // The top of what the open tab shows: a plot, or the students' link.
    const areas = [...root.querySelectorAll(".tinyinit-plot-area, .tinyinit-share-view")];
    const area = areas.find((a) => a.offsetParent !== null);
    if (!area) return;
    const top = area.getBoundingClientRect().top + window.scrollY;
    const page = {
      width: Math.round(root.getBoundingClientRect().width),
      height: window.innerHeight,
      top: Math.round(top),
    };
    const text = JSON.stringify(page);
    if (text === sent) return;
    sent = text;
    model.set("page", page);
    model.save_changes();
  };
  let pending = null;
  const soon = () => {
    clearTimeout(pending);
    pending = setTimeout(report, 100);
  };
  const resizes = new ResizeObserver(soon);
  let alive = true;
  const start = () => {
    if (!alive) return;
    const root = app();
    if (!root) return setTimeout(start, 100);  // not yet on the page
    resizes.observe(root);
    soon();
  };

  document.addEventListener("keydown", onKey, true);
  document.addEventListener("change", onChange, true);
  window.addEventListener("resize", soon);
  start();
  return () => {
    alive = false;
    document.removeEventListener("keydown", onKey, true);
    document.removeEventListener("change", onChange, true);
    window.removeEventListener("resize", soon);
    resizes.disconnect();
    clearTimeout(pending);
  };
}
export default { render };
"""


class PresenterKeys(anywidget.AnyWidget):
    """The page's clicker keys and size, sent to the kernel; shows nothing itself.

    PageDown and → arrive as a message {"step": 1}, PageUp and ← as {"step": -1},
    unless a focused control (slider, menu, text field, tab) owns the key.
    `page` holds the app's width, the window's height and the top of the plot
    area, in CSS pixels, whenever they change.

    >>> keys = PresenterKeys()
    >>> keys.page
    {}
    """

    _esm = KEYS_ESM
    page = traitlets.Dict().tag(sync=True)


# --- the link for students ----------------------------------------------------------------------

SHARE_URL_VARIABLE = "TINYINIT_SHARE_URL"


def check_share_url(url: str) -> str:
    """`url` if it is an http(s) address with a host, else a ValueError that says so.

    >>> check_share_url("https://mybinder.org/v2/gh/OWNER/tinyinit/HEAD")
    'https://mybinder.org/v2/gh/OWNER/tinyinit/HEAD'
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or " " in url.strip():
        raise ValueError(
            f"share_url must be an http:// or https:// address with a host, "
            f"e.g. https://hub.example.edu/...; got {url!r}"
        )
    return url.strip()


def qr_svg(url: str) -> str:
    """The QR code of `url` as inline SVG (segno, medium error correction), sized by CSS.

    >>> svg = qr_svg("https://example.org/")
    >>> svg.startswith("<svg") and 'viewBox="0 0 29 29"' in svg
    True
    """
    with extra("present", "the QR code"):
        import segno

    code = segno.make(check_share_url(url), error="m")
    return code.svg_inline(scale=1, border=2, omitsize=True, dark="#000", light="#fff")


def share_view(url: str) -> widgets.Widget:
    """The students' link: its QR code as large as the plot, and the address in large type."""
    url = check_share_url(url)
    qr = widgets.HTML(qr_svg(url), tooltip="Scan to open the same explorer")
    qr.add_class("tinyinit-qr")
    link = widgets.HTML(
        "Open the same explorer on your own computer:<br>"
        f'<a href="{html.escape(url)}" target="_blank"><b>{html.escape(url)}</b></a>',
        tooltip="The address students open: the same demonstrations, live on their machines",
    )
    link.add_class("tinyinit-share")
    view = widgets.HBox([qr, link], layout=widgets.Layout(align_items="center"))
    view.add_class("tinyinit-share-view")
    return view


# --- the explorers, restyled for a projector --------------------------------------------------


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
        side = widgets.VBox(
            # The gain's note beside its slider: for gelu and silu it says the gain holds one layer.
            [self.headline, self.initializer, self.activation, self.gain, self.gain_hint,
             self.depth, folded, self.caption]
        )  # fmt: skip
        side.add_class("tinyinit-side")
        area = widgets.Box([self._view])
        area.add_class("tinyinit-plot-area")
        view = widgets.HBox([area, side])
        view.add_class("tinyinit-view")
        view.add_class("tinyinit-explorer")
        return view


class LargeResidualExplorer(ResidualStreamExplorer):
    """The residual-stream explorer for a projector: headline, thick lines, large fonts."""

    def __init__(self, stack, n_layers: int = 12, scaled: bool = True):
        self.headline = widgets.HTML(
            tooltip="The stream's variance after the last block, measured and in theory"
        )
        live(self.headline).add_class("tinyinit-headline")
        super().__init__(stack, n_layers=n_layers, scaled=scaled)
        canvas = self.fig.canvas
        if isinstance(canvas, widgets.DOMWidget):
            canvas.toolbar_visible = False
            canvas.footer_visible = False
        self.ax.get_legend().remove()  # said in the headline and the caption beside the plot
        # Room for the large marker at block 0, which would sit half outside on the spine.
        self.ax.set_xlim(-1, self.blocks.max + 1)
        self.fit(Look.for_page(*BASE_VIEWPORT, top=150))

    def fit(self, look: Look) -> None:
        """Size the canvas and its fonts to `look`, then redraw."""
        set_canvas_px(self.fig, *look.canvas_px)
        s = look.scale
        set_margins_px(self.fig, left=100 * s, right=24 * s, top=14 * s, bottom=70 * s)
        style_figure(self.fig, look.figure_fonts)
        projector_style(self.fig, look.scale)
        self.fig.canvas.draw_idle()

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
        side = widgets.VBox([self.headline, self.blocks, self.scaling, self.readout, legend])
        side.add_class("tinyinit-side")
        area = widgets.Box([self.widget.children[-1]])  # the canvas
        area.add_class("tinyinit-plot-area")
        view = widgets.HBox([area, side])
        view.add_class("tinyinit-view")
        view.add_class("tinyinit-residual")
        return view


def astuple_shallow(stack: ResidualStack) -> tuple:
    """The stack's arrays in field order, not copied (dataclasses.astuple would deep-copy)."""
    return tuple(getattr(stack, f.name) for f in dataclasses.fields(stack))


# --- the app ------------------------------------------------------------------------------------

APPS = {"depth": 0, "residual": 1}
TAB_TITLES = ("Signal through depth", "Residual stream")
SHARE_TITLE = "Link for students"


class Presentation:
    """Demonstration menu, step buttons, a one-line caption, and the explorers in tabs.

    next() and previous() walk the demonstrations step by step, as the
    clicker's PageDown and PageUp do. `fit(look)` sizes everything to a page;
    the page reports its size itself (`keys`).

    CSS classes: tinyinit-present (the app), tinyinit-preset (menu),
    tinyinit-step (step buttons), tinyinit-says (the caption), tinyinit-stage
    (the tabs), tinyinit-plot-area (a canvas), tinyinit-side (the column of
    controls beside it), tinyinit-headline (the large readout there).

    >>> app = Presentation()
    >>> app.choose("tanh: gain 1 vs 5/3", step=1)
    >>> app.depth.activation.value, round(app.depth.gain.value, 4), app.step.value
    ('tanh', 1.6667, 'gain 5/3')
    >>> app.next(); app.preset.value, app.tabs.selected_index
    ('Residual stream: with and without 1/sqrt(2N)', 1)
    """

    def __init__(self, residual_blocks: int = 64, share_url: str | None = None):
        self.depth = LargeDepthExplorer()
        # Notebook 06's stack (the same draws from PCG32(0), as many blocks as the slider
        # needs), kept in float64: the same numbers, and a slider move is twice as fast.
        drawn = draw_residual_stack(residual_blocks, 128, 128, 128, PCG32(0))
        stack = ResidualStack(*(np.asarray(a, dtype=np.float64) for a in astuple_shallow(drawn)))
        self.residual = LargeResidualExplorer(stack, n_layers=12, scaled=True)
        self.preset = widgets.Dropdown(
            options=[CHOOSE, *PRESETS],
            value=CHOOSE,
            description="demonstration",
            style={"description_width": "initial"},
            layout=widgets.Layout(width="auto"),
            tooltip="A classic demonstration: sets every control it needs; "
            "the sliders stay live afterwards. PageDown/PageUp step through them",
        )
        self.preset.add_class("tinyinit-preset")
        self.back = widgets.Button(description="◀", tooltip="Previous step (PageUp or ←)")
        self.forward = widgets.Button(
            description="▶", tooltip="Next step, then the next demonstration (PageDown or →)"
        )
        self.back.on_click(lambda button: self.previous())
        self.forward.on_click(lambda button: self.next())
        self.step = widgets.ToggleButtons(options=[], tooltips=[], style={"button_width": "auto"})
        self.step.tooltip = "The steps of this demonstration, one state each"
        self.step.add_class("tinyinit-step")
        self.says = widgets.HTML(
            "Pick a demonstration, or press PageDown (→) for the first one.",
            tooltip="What this demonstration shows",
        )
        self.says.add_class("tinyinit-says")
        self.share_url = None if share_url is None else check_share_url(share_url)
        views = [self.depth.projector_view(), self.residual.projector_view()]
        titles = list(TAB_TITLES)
        if self.share_url is not None:
            views.append(share_view(self.share_url))
            titles.append(SHARE_TITLE)
        self.tabs = widgets.Tab(children=views, titles=titles)
        # no tooltip on the tabs: ipywidgets 8's TabView fails to render with one
        self.tabs.add_class("tinyinit-stage")
        if self.share_url is not None:
            self.tabs.selected_index = len(views) - 1  # students first open the link
        self.style = widgets.HTML()
        self.style.layout.display = "none"  # rules only, nothing to see
        self.keys = PresenterKeys()
        self.keys.layout.display = "none"
        bar = widgets.HBox([self.preset, self.back, self.step, self.forward])
        bar.add_class("tinyinit-bar")
        # Sliders named and the headlines read out on a screen reader (tinyinit/a11y.js).
        self.app = widgets.VBox([self.style, self.keys, Accessible(), bar, self.says, self.tabs])
        self.app.add_class("tinyinit-present")
        self.look: Look | None = None
        self.fit(Look.for_page(*BASE_VIEWPORT, top=150))
        self.preset.observe(self._on_preset, names="value")
        self.step.observe(self._on_step, names="value")
        self.keys.on_msg(self._on_key)
        self.keys.observe(self._on_page, names="page")

    # --- sizing -----------------------------------------------------------------------------

    def fit(self, look: Look) -> None:
        """Lay the app out for `look`: fonts, the column of controls, both canvases."""
        if look == self.look:
            return
        self.look = look
        self.style.value = f"<style>{look.css()}</style>"
        self.depth.fit(look)
        self.residual.fit(look)

    def _on_page(self, change) -> None:
        page = change["new"]
        if {"width", "height", "top"} <= set(page):
            self.fit(Look.for_page(page["width"], page["height"], page["top"]))

    # --- walking the demonstrations ----------------------------------------------------------

    def choose(self, name: str, step: int = 0) -> None:
        """Show demonstration `name` at `step` (0-based), as the dropdown and buttons would."""
        if name not in PRESETS:
            raise ValueError(f"preset must be one of {list(PRESETS)}; got {name!r}")
        n_steps = len(PRESETS[name].steps)
        if not 0 <= step < n_steps:
            raise ValueError(f"step must be in 0..{n_steps - 1} for {name!r}; got {step!r}")
        self.preset.value = name
        self.step.index = step

    def position(self) -> tuple[int, int] | None:
        """(demonstration, step), both 0-based, or None before the first one is chosen."""
        if self.preset.value not in PRESETS:
            return None
        return list(PRESETS).index(self.preset.value), self.step.index or 0

    def next(self) -> None:
        """The next step; after a demonstration's last step, the next demonstration."""
        names = list(PRESETS)
        at = self.position()
        if at is None:
            self.choose(names[0])
        elif at[1] + 1 < len(PRESETS[names[at[0]]].steps):
            self.choose(names[at[0]], at[1] + 1)
        elif at[0] + 1 < len(names):
            self.choose(names[at[0] + 1])
        else:
            steps = PRESETS[names[at[0]]].steps  # the end: show it again
            self.show(steps[at[1]], earlier=steps[: at[1]])

    def previous(self) -> None:
        """The previous step; before a demonstration's first step, the last of the one before."""
        names = list(PRESETS)
        at = self.position()
        if at is None:
            return
        if at[1] > 0:
            self.choose(names[at[0]], at[1] - 1)
        elif at[0] > 0:
            before = names[at[0] - 1]
            self.choose(before, len(PRESETS[before].steps) - 1)
        else:
            self.show(PRESETS[names[0]].steps[0])

    def _on_key(self, widget, content, buffers) -> None:
        step = content.get("step") if isinstance(content, dict) else None
        if step == 1:
            self.next()
        elif step == -1:
            self.previous()

    def _on_preset(self, change) -> None:
        preset = PRESETS.get(change["new"])
        if preset is None:
            self.step.options = []
            return
        labels = [s.label for s in preset.steps]
        self.step.unobserve(self._on_step, names="value")
        self.step.options = labels  # selects the first step
        self.step.tooltips = [s.says for s in preset.steps]
        self.step.index = 0
        self.step.observe(self._on_step, names="value")
        self.show(preset.steps[0])

    def _on_step(self, change) -> None:
        preset = PRESETS.get(self.preset.value)
        if preset is not None and self.step.index is not None:
            k = self.step.index
            self.show(preset.steps[k], earlier=preset.steps[:k])

    def show(self, step: Step, earlier: tuple[Step, ...] = ()) -> None:
        """Bring up the step's explorer and set its controls.

        A depth step after `earlier` ones pins their curves first, so that a
        demonstration ends with all its curves on one plot.
        """
        self.says.value = html.escape(step.says)  # first: the room reads while the plot draws
        self.tabs.selected_index = APPS[step.app]
        if step.app == "depth":
            with self.depth.hold():  # one update, at the end
                self.depth.clear_pins()
                for before in earlier:
                    self.depth.apply(before.settings)
                    self.depth.pin()
                self.depth.apply(step.settings)
        else:
            self.residual.apply(step.settings)

    def _repr_mimebundle_(self, **kwargs):
        return self.app._repr_mimebundle_(**kwargs)


def presentation(share_url: str | None = None, **kwargs) -> Presentation:
    """The presentation app (display it, or let Voila serve a notebook that returns it).

    share_url: the address where students open the same explorer (a Binder or
    hub link), shown with its QR code in a tab of its own; by default the
    environment variable TINYINIT_SHARE_URL, which `python -m tinyinit present
    --share-url URL` sets for the app it serves.

    >>> app = presentation()
    >>> app.choose("Kaiming + ReLU: kept")
    >>> app.depth.initializer.value, round(app.depth.gain.value, 4), app.tabs.selected_index
    ('kaiming_fan_in', 1.4142, 0)
    """
    if share_url is None:
        share_url = os.environ.get(SHARE_URL_VARIABLE) or None
    return Presentation(share_url=share_url, **kwargs)


# --- serving it with Voila ----------------------------------------------------------------------

APP_SOURCE = """\
# The presentation app: `make present` serves this notebook with Voila (no code shown).
%matplotlib widget
from tinyinit.present import presentation

presentation()"""
# Below the app, out of the projector's view: the one rule behind every demonstration.
APP_RULE = (
    "Behind every demonstration, one rule: a layer multiplies the mean square of its input by "
    "$n_{\\text{in}}\\,\\sigma^2$, and the activation keeps its share, "
    "$\\mathbb{E}[\\phi(z)^2]$ of $z \\sim \\mathcal{N}(0, q)$."
)
REPO_APP = Path(__file__).resolve().parent.parent / "apps" / "present.ipynb"
DEFAULT_PORT = 8866


def app_notebook():
    """The notebook Voila serves: `presentation()` with nothing above it, the rule below.

    >>> [cell.cell_type for cell in app_notebook().cells]
    ['code', 'markdown']
    """
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(APP_SOURCE), nbformat.v4.new_markdown_cell(APP_RULE)]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def app_path(folder: Path | None = None) -> Path:
    """apps/present.ipynb of a source checkout, or a copy written into `folder` (a temp dir).

    >>> app_path().name
    'present.ipynb'
    """
    if REPO_APP.exists():
        return REPO_APP
    import tempfile

    import nbformat

    folder = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="tinyinit-"))
    path = folder / "present.ipynb"
    nbformat.write(app_notebook(), path)
    return path


# Voila's lab template links Font Awesome from a CDN, and its MathJax comes from one: a
# classroom behind a firewall would get neither. This template serves both from installed
# packages (fontawesomefree, jupyter-server-mathjax) and is otherwise Voila's own.
OFFLINE_INDEX = """\
{%- extends 'voila/templates/lab/index.html.j2' -%}
{% import "spinner.macro.html.j2" as spinner %}
{%- block notebook_css -%}
  {% if frontend == "voila" %}
    {{ resources.include_js("static/voila-style.js") }}
  {% endif %}
  {{ spinner.css() }}
  <style>
    .jp-mod-noOutputs.jp-mod-noInput { display: none; }
  </style>
  {%- set fontawesome = resources.base_url ~ "voila/static/fontawesome/css/" %}
  <link rel="stylesheet" href="{{ fontawesome }}all.min.css">
  <link rel="stylesheet" href="{{ fontawesome }}v4-shims.min.css">
  {{ super.super() }}
{%- endblock notebook_css -%}
"""
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"
OFFLINE_TEMPLATE = "tinyinit-offline"


def offline_template(folder: Path | None = None) -> Path:
    """Write the Voila template that serves Font Awesome and MathJax itself; return its folder.

    Voila finds templates by name in the Jupyter data folders, so by default it goes into this
    Python's own, share/jupyter/voila/templates/tinyinit-offline. Its static/ holds copies of
    the installed files, served at /voila/static/.

    >>> sorted(p.name for p in offline_template().iterdir())
    ['conf.json', 'index.html.j2', 'static']
    """
    import json
    import shutil

    with extra("present", "the offline Voila template"):
        import fontawesomefree
        import jupyter_server_mathjax

    if folder is None:
        folder = Path(sys.prefix) / "share" / "jupyter" / "voila" / "templates" / OFFLINE_TEMPLATE
    static = Path(folder) / "static"
    static.mkdir(parents=True, exist_ok=True)
    (Path(folder) / "conf.json").write_text(json.dumps({"base_template": "lab"}))
    (Path(folder) / "index.html.j2").write_text(OFFLINE_INDEX)
    # Copies, not links: Voila's static handler refuses files that resolve outside its folders.
    fontawesome = Path(fontawesomefree.__file__).parent / "static" / "fontawesomefree"
    sources = {
        "mathjax": Path(jupyter_server_mathjax.__file__).parent / "static",
        "fontawesome/css": fontawesome / "css",
        "fontawesome/webfonts": fontawesome / "webfonts",
    }
    for name, source in sources.items():
        target = static / name
        if target.is_symlink():
            target.unlink()
        shutil.copytree(source, target, dirs_exist_ok=True)
    return Path(folder)


# Front-end extensions that fail to load inside Voila (a console error, since they ask for
# JupyterLab's file browser or Notebook 7's shell) and have nothing to offer an app: left out
# where installed, as on a teacher's hub with nbgrader.
FOREIGN_EXTENSIONS = ("@jupyter-notebook/lab-extension", "@jupyter/nbgrader")


def voila_command(
    notebook: Path,
    *,
    port: int = DEFAULT_PORT,
    ip: str = "127.0.0.1",
    browser: bool = True,
    template: str = OFFLINE_TEMPLATE,
) -> list[str]:
    """The command that serves `notebook` as an app: no code shown, no tracebacks sent, and
    nothing asked of another host (Voila's template `template`, written by
    `offline_template()` when it is the default).

    Voila's defaults already strip the code cells (strip_sources) and keep
    tracebacks in the server log; they are spelled out so that a config file
    elsewhere cannot turn them off for a class.

    >>> voila_command(Path("present.ipynb"), port=9000, browser=False)[3:6]
    ['--port=9000', '--Voila.port_retries=0', '--Voila.ip=127.0.0.1']
    """
    if template == OFFLINE_TEMPLATE:
        offline_template()
    command = [
        sys.executable, "-m", "voila", f"--port={port}", "--Voila.port_retries=0",
        f"--Voila.ip={ip}", "--VoilaConfiguration.strip_sources=True",
        "--VoilaConfiguration.show_tracebacks=False", "--theme=light",
        f"--template={template}",
        "--Voila.mathjax_url=/voila/static/mathjax/MathJax.js",
        f"--Voila.mathjax_config={MATHJAX_CONFIG}",
        *(f"--VoilaConfiguration.extension_denylist={name}" for name in FOREIGN_EXTENSIONS),
    ]  # fmt: skip
    if not browser:
        command.append("--no-browser")
    return command + [str(notebook)]
