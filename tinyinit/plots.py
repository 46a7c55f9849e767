"""The package's figures: pixels here, numbers in the modules they draw.

The mean square per layer (tinyinit.propagation): one live figure updated in
place, and static ones. Below them, the residual stream's two panels
(`residual_figure`, tinyinit.residual) and muP's coordinate checks and
learning-rate sweeps (`plot_coordinate_check`, `plot_lr_sweep`, tinyinit.mup).

`DepthPlot` builds its artists once; `update(result)` moves their data and
redraws: the whole figure when the axes change, else only the data over the
kept pixels of the axes (blitting). A slider never rebuilds the figure, which is
what keeps a live explorer smooth (and what lets a test hold on to the same
Line2D objects).

The y axis is logarithmic: the interesting behaviour is geometric, a factor per
layer. Values a float64 cannot hold (inf after overflow, exactly 0 after
underflow or with zero weights) have no place on a log axis; they are drawn as
triangles on the axis edge and named in a note, never silently dropped.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Sequence

import numpy as np
from matplotlib import colormaps, ticker
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .propagation import INITIALIZERS, DepthResult
from .residual import (
    ResidualStack,
    out_scale,
    residual_variance_theory,
    stream_variance,
    stream_variances,
)

OVERFLOW_COLOR = "#b2182b"
UNDERFLOW_COLOR = "#5e3c99"


def settings_title(result: DepthResult) -> str:
    """One line naming what is on the figure: initializer, activation, gain, std, shape."""
    init = INITIALIZERS[result.initializer]
    gain = "" if result.initializer == "normal" else f"gain {result.gain:.3g}, "
    return (
        f"{init} + {result.activation}: {gain}std {result.std:.3g}, "
        f"width {result.width}, {len(result.seeds)} seeds"
    )


def quantity_label(direction: str) -> str:
    # Plain text, not mathtext: it is redrawn on every slider move.
    if direction == "forward":
        return "mean square of the activations hℓ"
    return "mean square of the gradient ∂loss/∂hℓ"


def legend_labels(result: DepthResult) -> list[str]:
    """The legend's words for `result`: median, band, theory, reference level."""
    level = "input" if result.direction == "forward" else "upstream gradient"
    return [f"median of {len(result.seeds)} seeds", "min to max", "theory", f"{level}: 1"]


def _positive(values: np.ndarray) -> np.ndarray:
    """values with inf, nan and 0 (not drawable on a log axis) replaced by nan."""
    v = np.asarray(values, dtype=float)
    return np.where(np.isfinite(v) & (v > 0), v, np.nan)


# The decades a float64 spans: 1e-323 is its smallest (subnormal) power of 10.
SMALLEST_DECADE, LARGEST_DECADE = -323, 308


def log_limits(*arrays: np.ndarray) -> tuple[float, float]:
    """y limits on whole decades around every drawable value and the level 1.

    >>> log_limits(np.array([1.0, 0.5, 0.0, np.inf]))
    (0.1, 10.0)
    """
    finite = np.concatenate([_positive(a).ravel() for a in arrays] + [np.array([1.0])])
    lo = max(math.floor(math.log10(np.nanmin(finite)) - 0.1), SMALLEST_DECADE)
    hi = min(math.ceil(math.log10(np.nanmax(finite)) + 0.1), LARGEST_DECADE)
    return 10.0**lo, 10.0**hi


def decade_ticks(bottom: float, top: float, max_ticks: int = 7) -> np.ndarray:
    """At most max_ticks powers of 10 in [bottom, top], evenly strided.

    >>> decade_ticks(1e-6, 10.0)
    array([1.e-06, 1.e-05, 1.e-04, 1.e-03, 1.e-02, 1.e-01, 1.e+00, 1.e+01])
    """
    lo, hi = round(math.log10(bottom)), round(math.log10(top))
    stride = next(s for s in (1, 2, 5, 10, 20, 25, 50, 100, 200) if (hi - lo) / s <= max_ticks)
    return 10.0 ** np.arange(math.ceil(lo / stride) * stride, hi + 1, stride)


def edge_note(result: DepthResult) -> str:
    """The words for values beyond float64, or "" when every value is drawable."""
    toward = "on" if result.direction == "forward" else "and below"
    why_zero = "all weights are 0" if result.std == 0 else "underflow: below float64's 1e-323"
    parts = []
    if (k := result.overflow_from) is not None:
        parts.append(f"▲ overflow: mean square beyond float64 (inf) from layer {k} {toward}")
    if (k := result.underflow_from) is not None:
        parts.append(f"▼ mean square exactly 0 from layer {k} {toward} ({why_zero})")
    for name, where in (("inf", np.isinf), ("0", lambda v: v == 0)):
        if (k := result.first_layer(result.theory, where)) is not None:
            parts.append(f"theory is {name} from layer {k} {toward}")
    return ";  ".join(parts)


class DepthPlot:
    """Mean square per layer, log y: measured median, min-max band over seeds, theory.

    Built once; `update(result)` changes the artists in place.

    >>> from tinyinit.propagation import simulate
    >>> plot = DepthPlot()
    >>> plot.update(simulate("relu", "xavier_uniform", depth=4, width=16, seeds=2))
    >>> plot.median_line.get_ydata()[-1] < 0.2
    np.True_
    """

    def __init__(self, figure: Figure | None = None, figsize=(7.5, 4.6), decorated: bool = True):
        if figure is None:
            figure = Figure(figsize=figsize, dpi=100)
            FigureCanvasAgg(figure)  # so that update() renders, as a live canvas would
        self.figure = figure
        # Room for the title, the legend and the note below the x label.
        top, bottom, left = (0.92, 0.27, 0.1) if decorated else (0.97, 0.2, 0.08)
        self.figure.subplots_adjust(left=left, right=0.97, top=top, bottom=bottom)
        ax = self.ax = self.figure.add_subplot()
        ax.set_yscale("log")
        # Minor ticks on a log axis cost more to draw than everything else together;
        # fixed decades, set on each update, also never overflow at 1e300.
        self.yticks = ticker.FixedLocator([1.0])
        ax.yaxis.set_major_locator(self.yticks)
        ax.yaxis.set_minor_locator(ticker.NullLocator())
        ax.xaxis.set_major_locator(ticker.MaxNLocator(nbins=6, integer=True))
        ax.set_xlabel("layer ℓ")
        # One collection of horizontal lines at the decades: a single path to draw,
        # where a grid draws one line per tick.
        self.decades = ax.hlines(
            [], 0, 1, transform=ax.get_yaxis_transform(), color="0.85", lw=0.8, zorder=0
        )

        nothing = np.array([0.0, 1.0])
        self.band = ax.fill_between(nothing, 1, 1, color="C0", alpha=0.25, lw=0)
        (self.median_line,) = ax.plot([], [], "o-", color="C0", ms=3, lw=1.5)
        (self.theory_line,) = ax.plot([], [], "--", color="black", lw=1.2)
        self.reference = ax.axhline(1.0, color="0.45", lw=0.9, ls=":")
        marks = dict(ls="none", ms=8, clip_on=False, zorder=5)
        (self.overflow_marks,) = ax.plot([], [], "^", color=OVERFLOW_COLOR, **marks)
        (self.underflow_marks,) = ax.plot([], [], "v", color=UNDERFLOW_COLOR, **marks)
        # Below the x label (and above the legend, if any): never on top of a curve.
        y = 0.105 if decorated else 0.04
        self.note = self.figure.text(0.01, y, "", va="center", fontsize=9, color=OVERFLOW_COLOR)
        # Title, legend and y label are text drawn anew on every update: most of the
        # cost of a redraw. A live explorer shows them as HTML instead (decorated=False).
        self.decorated = decorated
        self.legend = None
        if decorated:
            # A legend below the axes never covers data, and a fixed place is cheap to draw.
            self.legend = self.figure.legend(
                [self.median_line, self.band, self.theory_line, self.reference],
                ["median of seeds", "min to max", "theory", "input: 1"],
                loc="lower center", ncols=4, fontsize=9, frameon=False,
            )  # fmt: skip

        # Blitting, as matplotlib's animations do. The data artists are "animated": a
        # full draw leaves them out and `_on_draw` draws them on top, keeping the pixels
        # of the rest (axes, ticks, labels: the frame). While the frame stays the same,
        # an update puts those pixels back and draws the data alone, a sixth of the
        # cost. A saved picture (savefig) draws everything as usual.
        self._moving = [self.band, self.median_line, self.theory_line]
        self._moving += [self.overflow_marks, self.underflow_marks]
        self._frame = None  # (what the frame showed, its pixels), from the last full draw
        if self.figure.canvas.supports_blit:
            for artist in self._moving:
                artist.set_animated(True)
            self.figure.canvas.mpl_connect("draw_event", self._on_draw)

    def update(self, result: DepthResult, draw: bool = True) -> None:
        """Show `result`: new data in the same artists, new limits, one redraw."""
        ax, layers = self.ax, result.layers
        bottom, top = log_limits(result.low, result.high, result.theory)
        median = np.asarray(result.median, dtype=float)
        self.median_line.set_data(layers, _positive(median))
        self.theory_line.set_data(layers, _positive(result.theory))
        # The band keeps inf and 0 in view by clipping them to the axis edges.
        low = np.clip(np.nan_to_num(result.low, posinf=top), bottom, top)
        high = np.clip(np.nan_to_num(result.high, posinf=top), bottom, top)
        verts = np.concatenate([np.c_[layers, low], np.c_[layers[::-1], high[::-1]]])
        self.band.set_verts([verts])
        over, under = layers[np.isinf(median)], layers[median == 0]
        self.overflow_marks.set_data(over, np.full(len(over), top))
        self.underflow_marks.set_data(under, np.full(len(under), bottom))
        self.note.set_text(edge_note(result))

        ax.set_xlim(-0.02 * result.depth - 0.1, result.depth * 1.02 + 0.1)
        ax.set_ylim(bottom, top)
        self.yticks.locs = decade_ticks(bottom, top)
        self.decades.set_segments([[(0, y), (1, y)] for y in self.yticks.locs])
        if self.decorated:
            ax.set_ylabel(quantity_label(result.direction))
            for text, label in zip(self.legend.get_texts(), legend_labels(result)):
                text.set_text(label)
            ax.set_title(settings_title(result), fontsize=10)
        if draw:
            self._show()

    def _frame_state(self) -> tuple:
        """Everything the frame shows; when it changes, the frame is drawn anew."""
        texts = [self.note.get_text(), self.ax.get_ylabel(), self.ax.get_title()]
        if self.legend is not None:
            texts += [text.get_text() for text in self.legend.get_texts()]
        limits = (self.ax.get_xlim(), self.ax.get_ylim(), tuple(self.yticks.locs))
        return limits, tuple(self.figure.bbox.bounds), tuple(texts)

    def _show(self) -> None:
        if self._frame is None or self._frame[0] != self._frame_state():
            self.redraw_all()
            return
        canvas = self.figure.canvas
        canvas.restore_region(self._frame[1])
        self._draw_moving()
        canvas.blit(self.figure.bbox)

    def redraw_all(self) -> None:
        """Draw the whole figure anew; call it after changing the figure outside `update`."""
        self._frame = None
        self.figure.canvas.draw_idle()  # _on_draw then keeps the new frame and adds the data

    def _on_draw(self, event) -> None:
        """After each full draw on screen: keep the frame's pixels, then draw the data."""
        if event.canvas.is_saving():
            return  # savefig draws the animated artists itself
        self._frame = (self._frame_state(), event.canvas.copy_from_bbox(self.figure.bbox))
        self._draw_moving()

    def _draw_moving(self) -> None:
        for artist in self._moving:  # in z order: band, lines, marks
            self.ax.draw_artist(artist)


def compare_figure(
    results: Sequence[DepthResult], labels: Sequence[str], title: str = "", figsize=(7.5, 4.2)
) -> Figure:
    """A static figure of several results on one log axis: median, band and theory each.

    Made without pyplot, so it is never shown twice and works under any backend.
    """
    fig = Figure(figsize=figsize, dpi=100)
    ax = fig.add_subplot()
    ax.set_yscale("log")
    for k, (result, label) in enumerate(zip(results, labels)):
        color = f"C{k}"
        layers = result.layers
        ax.fill_between(layers, _positive(result.low), _positive(result.high), color=color,
                        alpha=0.2, lw=0)  # fmt: skip
        ax.plot(layers, _positive(result.median), "o-", ms=3, color=color, label=label)
        ax.plot(layers, _positive(result.theory), "--", color=color, lw=1)
    ax.axhline(1.0, color="0.45", lw=0.9, ls=":")
    ax.plot([], [], "--", color="0.3", lw=1, label="theory (dashed)")
    ax.set_xlabel("layer ℓ")
    ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    ax.set_ylabel(quantity_label(results[0].direction))
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=9)
    ax.grid(True, which="major", alpha=0.25)
    fig.tight_layout()
    return fig


def png_bytes(fig: Figure, dpi: int = 100) -> bytes:
    """The figure as PNG bytes (for IPython.display.Image or an ipywidgets.Image)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


# --- the residual stream (tinyinit.residual) ---------------------------------------------


def residual_figure(stack: ResidualStack, n_layers: int, depths: Iterable[int]):
    """Two panels: the stream after each block for n_layers, and the final variance vs N.

    Measured (markers) against theory (lines), without and with the 1/sqrt(2N) scaling.
    """
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    x0_var = stream_variance(stack.x0)
    b = np.arange(n_layers + 1)
    for scaled, color in ((False, "C3"), (True, "C0")):
        label = "scaled 1/√(2N)" if scaled else "unscaled"
        measured = stream_variances(stack, n_layers, out_scale(n_layers, scaled))[::2]
        theory = residual_variance_theory(n_layers, scaled=scaled, x0_var=x0_var)[::2]
        left.plot(b, measured, "o", ms=3, color=color, label=f"{label}, measured")
        left.plot(b, theory, "-", color=color, lw=1, label=f"{label}, theory")
    left.set(xlabel="block b", ylabel="Var(stream)", yscale="log", title=f"N = {n_layers} blocks")
    depths = np.array(sorted(depths))
    for scaled, color in ((False, "C3"), (True, "C0")):
        finals = [stream_variances(stack, n, out_scale(n, scaled))[-1] for n in depths]
        theory = [residual_variance_theory(n, scaled=scaled, x0_var=x0_var)[-1] for n in depths]
        right.plot(depths, finals, "o", color=color)
        right.plot(depths, theory, "-", color=color, lw=1)
    right.set(
        xlabel="number of blocks N",
        ylabel="Var(stream) after the last block",
        xscale="log",
        yscale="log",
        title="1 + 2N unscaled, 2 scaled",
    )
    left.legend(fontsize=8)
    for ax in (left, right):
        ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


# --- muP: coordinate checks and learning-rate sweeps (tinyinit.mup) ------------------------


def plot_coordinate_check(ax, widths, sizes: np.ndarray, title: str = "") -> None:
    """One line per step t: coordinate size of one layer against width, log-log.

    sizes has shape (len(widths), steps + 1), e.g. coordinate_check(...)[:, :, -1]
    for the output. Missing points are diverged runs (NaN).
    """
    colors = colormaps["viridis"](np.linspace(0, 0.9, sizes.shape[1]))
    for t, color in enumerate(colors):
        ax.plot(widths, sizes[:, t], "o-", color=color, ms=3, label=f"t={t}")
    ax.set(xscale="log", yscale="log", xlabel="width n", ylabel="rms", title=title)
    ax.set_xticks(widths, [str(w) for w in widths])
    ax.minorticks_off()


def plot_lr_sweep(ax, widths, lrs, losses: np.ndarray, title: str = "") -> None:
    """Final training loss against global learning rate, one line per width.

    A star marks each width's best learning rate; diverged runs (NaN) are gaps.
    """
    colors = colormaps["plasma"](np.linspace(0, 0.85, len(widths)))
    for width, row, color in zip(widths, losses, colors, strict=True):
        ax.plot(lrs, row, "o-", color=color, ms=3, label=f"n={width}")
        best = np.nanargmin(row)
        ax.plot(lrs[best], row[best], "*", color=color, ms=14, mec="k")
    ax.set(xscale="log", yscale="log", xlabel="global learning rate", ylabel="loss", title=title)
