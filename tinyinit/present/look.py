"""The look of the presentation app: sizes for a projector, its style sheet, its figures.

Made for a lecture hall: the whole plot in view at 1280x720 (the common projector) and at
1920x1080, the key number in large type beside it, thick lines and high contrast. The type
grows with the screen (`Look`); the style sheet is projector.css, its sizes filled in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from string import Template

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
