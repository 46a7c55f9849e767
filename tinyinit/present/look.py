"""The look of the presentation app: sizes for a projector and its style sheet.

Made for a lecture hall: the whole plot in view at 1280x720 (the common projector) and at
1920x1080, the key number in large type beside it, thick lines and high contrast. The type
grows with the screen (`Look`); the style sheet is projector.css, its sizes filled in. The
figures' projector type is tinyinit.views.projector's, which slides made with `python -m tinyinit
figure --slide` share.
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass
from pathlib import Path
from string import Template

from matplotlib.colors import is_color_like, to_hex, to_rgb
from matplotlib.figure import Figure

from ..core.arguments import instance, integer, number
from ..views.projector import scaled_fonts

__all__ = [
    "BASE_VIEWPORT",
    "FIRST_LOOK",
    "FONT_PX",
    "HEADLINE_EM",
    "LEGEND_EM",
    "Look",
    "PROJECTOR_CSS",
    "ROOM_CONTRAST",
    "SAYS_EM",
    "SIDE_EM",
    "contrast_ratio",
    "room_color",
    "set_canvas_px",
    "set_margins_px",
]

PROJECTOR_CSS = Template(Path(__file__).with_name("projector.css").read_text(encoding="utf-8"))

# Everything below is sized for 1280x720, the common lecture-hall projector, and
# grows with the screen up to 1.5 times (a 1920x1080 projector shows the same
# room-sized picture with as many pixels again).
BASE_VIEWPORT = (1280, 720)
FONT_PX = 20  # controls and their labels
SAYS_EM = 1.2  # the demonstration's one-line caption: 24 px
HEADLINE_EM = 2.0  # the key number beside the plot: 40 px
LEGEND_EM = 0.85  # the legend and settings under the controls: 17 px
SIDE_EM = 20  # the column of controls beside the plot: 400 px


@dataclass(frozen=True)
class Look:
    """Sizes in CSS pixels for a page of `width` x `height`: fonts, side column, plot canvas.

    `top` is where the plot starts on the page (the menu, caption and tab bar
    above it), `below` the room the app takes under the plot (the line of the
    rule, its margins; by default that line at the caption's size); the canvas
    takes the rest of the height and the width beside the column of controls,
    at most 0.7 times as high as it is wide.

    >>> look = Look.for_page(1280, 720, top=150)
    >>> look.font_px, look.side_px, look.canvas_px
    (20, 400, (840, 506))
    >>> Look.for_page(1920, 1080, top=220).font_px
    30
    """

    scale: float
    font_px: int
    side_px: int
    canvas_px: tuple[int, int]

    @classmethod
    def for_page(cls, width: float, height: float, top: float, below: float | None = None) -> Look:
        width, height = number("width", width, above=0), number("height", height, above=0)
        top = number("top", top, minimum=0)
        if below is not None:
            below = number("below", below, minimum=0)
        scale = min(max(min(width / BASE_VIEWPORT[0], height / BASE_VIEWPORT[1]), 1.0), 1.5)
        font_px = round(FONT_PX * scale)
        side_px = SIDE_EM * font_px
        gap = round(2 * font_px)  # between plot and column, and the page's own margins
        if below is None:  # one line at the caption's size, and its margins
            below = round(1.4 * SAYS_EM * font_px + font_px / 2)
        canvas_w = max(480, int(width - side_px - gap))
        # A line's height to spare: the tab's own padding and the page's margin under the app.
        canvas_h = max(300, int(min(height - top - below - font_px, 0.7 * canvas_w)))
        return cls(scale, font_px, side_px, (canvas_w, canvas_h))

    @property
    def figure_fonts(self) -> dict[str, float]:
        """The projector's figure fonts (tinyinit.views.projector.PROJECTOR_FONTS) grown with the
        screen, in points."""
        return scaled_fonts(self.scale)

    def sizes(self) -> dict[str, int]:
        """The style sheet's sizes in CSS pixels, by the names projector.css gives them.

        >>> Look.for_page(1280, 720, top=150).sizes()["headline_font"]
        40
        """
        f, side = self.font_px, self.side_px
        canvas_w, canvas_h = self.canvas_px
        return dict(
            font=f,
            control_height=round(1.75 * f),  # an inline widget's line, a button
            menu_arrow=round(1.6 * f),  # the dropdown's arrow (as wide as the font) and a gap
            label_width=round(5.2 * f),
            side=side,
            side_half=round(side / 2),
            tiny_width=round(3 * f),
            tab_height=round(1.6 * f),
            bar_gap=f // 2,
            small_gap=f // 4,
            says_font=round(SAYS_EM * f),
            canvas_w=canvas_w,
            canvas_h=canvas_h,
            control_width=side - 8,
            slider_min=4 * f,
            side_label_width=round(5.4 * f),
            headline_font=round(HEADLINE_EM * f),
            legend_font=round(LEGEND_EM * f),
            share_gap=2 * f,
            link_font=round(1.6 * f),
        )

    def css(self) -> str:
        """The app's style sheet, every rule under .tinyinit-present (nothing else on the page):
        projector.css with this look's sizes."""
        return PROJECTOR_CSS.substitute(self.sizes())


# How the app is laid out before its page has said how large it is: the base projector,
# with the menu, caption and tab bar above the plot.
FIRST_LOOK = Look.for_page(*BASE_VIEWPORT, top=150)


def set_canvas_px(figure, width: int, height: int) -> None:
    """Resize `figure` to width x height CSS pixels (a live canvas follows on the page)."""
    instance("figure", figure, Figure, "a matplotlib Figure")
    width, height = integer("width", width, minimum=1), integer("height", height, minimum=1)
    ratio = getattr(figure.canvas, "device_pixel_ratio", 1) or 1
    dpi = figure.dpi / ratio  # a HiDPI screen raises figure.dpi, not the CSS size
    figure.set_size_inches(width / dpi, height / dpi, forward=True)


def set_margins_px(figure, left: float, right: float, top: float, bottom: float) -> None:
    """subplots_adjust with margins in CSS pixels, so fonts keep their room at any size."""
    instance("figure", figure, Figure, "a matplotlib Figure")
    left, right = number("left", left, minimum=0), number("right", right, minimum=0)
    top, bottom = number("top", top, minimum=0), number("bottom", bottom, minimum=0)
    ratio = getattr(figure.canvas, "device_pixel_ratio", 1) or 1
    width, height = figure.get_size_inches() * figure.dpi / ratio
    figure.subplots_adjust(
        left=left / width, right=1 - right / width, top=1 - top / height, bottom=bottom / height
    )


# --- colours that a projector keeps --------------------------------------------------------

# A projector washes colours out: what WCAG 2.1 asks of small text (4.5:1 against the
# background, success criterion 1.4.3) is what the app asks of every curve and its name, well
# above the 3:1 it asks of graphics and large text (1.4.11), which a faded curve misses.
ROOM_CONTRAST = 4.5


def _color(name: str, value) -> tuple[float, float, float]:
    if not is_color_like(value) or isinstance(value, (bool, int, float)):
        kind = ValueError if isinstance(value, str) else TypeError
        raise kind(f"{name} must be a matplotlib colour ('#0072B2', 'black'), got {value!r}")
    return to_rgb(value)


def _luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG 2.1's relative luminance of an sRGB colour (channels in 0..1)."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(color, background="white") -> float:
    """WCAG 2.1's contrast ratio of two opaque colours, (L1 + 0.05) / (L2 + 0.05), L1 the
    lighter's relative luminance: from 1 (the same) to 21 (black on white).

    >>> round(contrast_ratio("black"), 1), round(contrast_ratio("#767676"), 2)
    (21.0, 4.54)
    >>> round(contrast_ratio("#a1a1a1"), 2)  # a grey pin, 0.55 opaque, as the app had it
    2.58
    """
    lighter, darker = sorted(
        (_luminance(_color("color", color)), _luminance(_color("background", background))),
        reverse=True,
    )
    return (lighter + 0.05) / (darker + 0.05)


def room_color(color, contrast: float = ROOM_CONTRAST) -> str:
    """`color` as the app draws it: its hue and saturation kept, darkened until it has
    `contrast` or more against white (unchanged if it has already).

    >>> room_color("#CC79A7"), room_color("#0072B2")  # the residual pink; Xavier's blue
    ('#bc4f8b', '#0072b2')
    >>> round(contrast_ratio(room_color("#CC79A7")), 2)
    4.54
    """
    rgb = _color("color", color)
    contrast = number("contrast", contrast, minimum=1, maximum=21)
    hue, lightness, saturation = colorsys.rgb_to_hls(*rgb)
    while contrast_ratio(rgb) < contrast and lightness > 0:
        lightness = max(0.0, lightness - 0.005)
        rgb = colorsys.hls_to_rgb(hue, lightness, saturation)
    return to_hex(rgb)
