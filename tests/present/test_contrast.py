"""Every line, marker and text of the app's figures stands out from the background as WCAG 2.1
asks (3:1 for graphics and large text, 1.4.11 and 1.4.3; 4.5:1 for other text), read off the
matplotlib artists of each step's figures as the step draws them, and of a slide.

A colour drawn with an alpha below 1 is taken as it shows: blended over the background."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import Collection
from matplotlib.colors import to_rgba, to_rgba_array
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text

from tinyinit.present import PRESETS, Presentation
from tinyinit.present.look import contrast_ratio
from tinyinit.views.projector import comparison_figure

GRAPHICS = 3.0  # lines, markers, bars; large text (WCAG 2.1, 1.4.11 and 1.4.3)
TEXT = 4.5  # text below 18 pt, or below 14 pt bold
LARGE_PX, LARGE_BOLD_PX = 24.0, 18.66  # 18 pt and 14 pt in CSS pixels


def blended(color, alpha, background) -> tuple[float, float, float]:
    """`color` drawn at `alpha` (its own if None) over an opaque `background`."""
    r, g, b, a = to_rgba(color, alpha)
    return tuple(a * c + (1 - a) * w for c, w in zip((r, g, b), to_rgba(background)[:3]))


def text_px(text: Text) -> float:
    figure = text.get_figure()
    ratio = getattr(figure.canvas, "device_pixel_ratio", 1) or 1
    return text.get_fontsize() * figure.dpi / ratio / 72


def drawn_colors(figure, exempt=()):
    """(what, colour as it shows, the ratio it needs) of every visible line, marker, patch edge
    or fill, collection and text of `figure`, but `exempt` (artists, by identity)."""
    figure.canvas.draw()
    for artist in figure.findobj(lambda a: a.get_visible()):
        if any(artist is e for e in exempt) or artist is figure.patch:
            continue
        axes = artist.axes if isinstance(getattr(artist, "axes", None), Axes) else None
        if axes is not None and artist is axes.patch:
            continue
        background = axes.get_facecolor() if axes is not None else figure.get_facecolor()
        alpha = artist.get_alpha()
        what = f"{type(artist).__name__} {artist.get_label() or ''}".strip()
        if isinstance(artist, Text):
            if artist.get_text().strip():
                bold = artist.get_fontweight() in ("bold", "heavy", "black", 700, 800, 900)
                large = text_px(artist) >= (LARGE_BOLD_PX if bold else LARGE_PX)
                color = blended(artist.get_color(), alpha, background)
                yield f"text {artist.get_text()[:30]!r}", color, GRAPHICS if large else TEXT
        elif isinstance(artist, Line2D):
            if len(artist.get_xdata()) == 0:
                continue
            if artist.get_linestyle() not in ("None", "", " ") and artist.get_linewidth() > 0:
                yield what, blended(artist.get_color(), alpha, background), GRAPHICS
            if artist.get_marker() not in (None, "None", "", " "):
                for part in (artist.get_markerfacecolor(), artist.get_markeredgecolor()):
                    if to_rgba(part)[3] > 0:
                        yield f"{what} marker", blended(part, alpha, background), GRAPHICS
        elif isinstance(artist, Patch):
            fill = blended(artist.get_facecolor(), None, background)
            # (a fill of the background's own colour is background: a legend's frame, a box)
            if artist.get_fill() and fill != to_rgba(background)[:3]:
                yield f"{what} fill", fill, GRAPHICS
            if artist.get_linewidth() > 0 and to_rgba(artist.get_edgecolor())[3] > 0:
                yield f"{what} edge", blended(artist.get_edgecolor(), None, background), GRAPHICS
        elif isinstance(artist, Collection):
            if len(artist.get_paths()) and np.all(artist.get_linewidths() > 0):
                for color in to_rgba_array(artist.get_edgecolor()):
                    if color[3] > 0:
                        yield f"{what} edge", blended(color, alpha, background), GRAPHICS


def too_faint(figures, exempt=()) -> list[str]:
    faint = set()
    for figure in figures:
        assert to_rgba(figure.get_facecolor()) == (1, 1, 1, 1)
        for axes in figure.axes:
            assert to_rgba(axes.get_facecolor()) == (1, 1, 1, 1)
        for what, color, needed in drawn_colors(figure, exempt):
            ratio = contrast_ratio(color, "white")
            if ratio < needed:
                faint.add(f"{what}: {ratio:.2f}:1 < {needed}:1")
    return sorted(faint)


@pytest.fixture(scope="module")
def app():
    return Presentation(warm=False)


STEPS = [(name, k) for name, preset in PRESETS.items() for k in range(len(preset.steps))]


@pytest.mark.parametrize(("name", "step"), STEPS, ids=lambda v: str(v))
def test_every_line_and_text_of_each_step_stands_out_on_a_projector(app, name, step):
    app.show(name, step)
    shown = PRESETS[name].steps[step].app
    if shown == "training":
        app.training.step(12)  # a few steps, so that every curve has its points
        app.training.frame()
        figures = [app.training.plot.figure, app.training.histogram.figure]
    else:
        figures = [app.explorer(shown).figure]
    # The seeds' range is a translucent band under the median's curve, which carries the
    # data (and passes): shading, not a graphic the reader needs to tell apart.
    exempt = [app.depth.plot.band]
    assert too_faint(figures, exempt) == [], (name, step)


def test_a_slide_of_the_comparison_stands_out_too():
    from tinyinit.physics.propagation import simulate

    runs = [
        simulate("relu", "xavier_uniform", n_layers=20, width=64, seeds=3),
        simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=20, width=64, seeds=3),
        simulate("relu", "normal_init", std=0.05, n_layers=20, width=64, seeds=3),
    ]
    figure = comparison_figure(runs, slide=True, size=(13.333, 7.5))
    bands = [p for p in figure.axes[0].patches if p.get_alpha() is not None and p.get_alpha() < 1]
    assert too_faint([figure], exempt=bands) == []


def test_the_faded_curves_the_app_had_would_be_found():
    # The pinned grey at 0.55 over white, and the residual stream's pink "with 1/sqrt(2N)".
    assert contrast_ratio(blended("#555555", 0.55, "white")) < GRAPHICS
    assert contrast_ratio("#CC79A7") < TEXT
